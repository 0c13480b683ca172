//! Every read path, as each person of the simulation reads it, held against the
//! oracle: the change feed and restore, search by words, by meaning and hybrid
//! with their filters, the contexts of every project, session timelines,
//! decisions and iterations, the central MCP tools; and each honest edge's store
//! after its sync (its bytes, its rows, its context, its timelines). Each read
//! adds what it found wrong to `failures`.

use super::honest::{MODEL, unit};
use super::hostile::feed;
use super::oracle::{Oracle, markers_in, markers_in_bytes, text_of};
use super::world::{HonestEdge, Person, SHARED, World, may_see};
use crate::bench::Rng;
use crate::central_mcp::Client;
use serde_json::{Value, json};
use solaria_shared::wire::{RestorePage, SearchResponse, WireRecord};
use std::collections::HashSet;

/// `GET path` as `reader`'s API machine: the status and body.
async fn get(world: &World, reader: Person, path: &str) -> Result<(u16, Value), String> {
    let r = world
        .c
        .client
        .get(world.c.at(path))
        .bearer_auth(&world.api[&reader].jwt)
        .send()
        .await
        .map_err(|e| format!("GET {path}: {e}"))?;
    let status = r.status().as_u16();
    let body = r.json().await.map_err(|e| format!("GET {path}: {e}"))?;
    if status >= 500 {
        return Err(format!("GET {path} as {reader:?}: {status} {body}"));
    }
    Ok((status, body))
}

fn encoded(key: &str) -> String {
    key.replace('/', "%2F")
}

/// The projects every read asks about.
fn projects() -> Vec<String> {
    let mut all = vec![SHARED.to_string()];
    all.extend(Person::ALL.iter().map(|p| p.personal()));
    all
}

/// Everything `reader` reads through the central service; how many reads.
pub async fn central(
    world: &World,
    oracle: &Oracle,
    rng: &mut Rng,
    reader: Person,
    failures: &mut Vec<String>,
) -> Result<usize, String> {
    let mut reads = 0;
    // The feed, and the honest records that must stand in it.
    let records = feed(world, reader).await?;
    reads += 1;
    let mut held = String::new();
    for r in &records {
        oracle.check_record(world, reader, "feed", r, failures);
        held.push_str(&text_of(r));
    }
    for marker in &oracle.standing {
        if oracle.visible(reader, marker) && !held.contains(marker.as_str()) {
            let f = oracle.fact(marker).map(|f| (f.author, f.record));
            failures.push(format!(
                "feed: {reader:?} lost {marker} ({f:?}), which they may see"
            ));
        }
    }
    // Restore.
    let mut since = 0;
    loop {
        let (_, body) = get(
            world,
            reader,
            &format!("/memory/restore?since={since}&limit=200&types=knowledge"),
        )
        .await?;
        reads += 1;
        let page: RestorePage =
            serde_json::from_value(body).map_err(|e| format!("restore: {e}"))?;
        for r in &page.records {
            oracle.check_record(world, reader, "restore", r, failures);
        }
        since = page.next;
        if !page.more {
            break;
        }
    }
    // Search by words, with each filter; by meaning and hybrid.
    let mut queries = vec!["/memory/search?q=ledger&limit=100".to_string()];
    for key in projects() {
        queries.push(format!(
            "/memory/search?q=ledger&limit=50&project={}",
            encoded(&key)
        ));
    }
    for kind in ["decision", "summary", "prompt", "memory"] {
        queries.push(format!("/memory/search?q=ledger&limit=50&type={kind}"));
    }
    for (name, _) in &world.names {
        queries.push(format!(
            "/memory/search?q=curl+evil&limit=50&machine={name}"
        ));
    }
    for path in queries {
        let (status, body) = get(world, reader, &path).await?;
        reads += 1;
        if status == 200 {
            check_hits(world, oracle, reader, &path, body, failures)?;
        }
    }
    for mode in ["semantic", "hybrid"] {
        let body = json!({"q": "ledger", "mode": mode, "limit": 50,
                          "vector": {"model": MODEL, "values": unit(rng)}});
        let r = world
            .c
            .client
            .post(world.c.at("/memory/search"))
            .bearer_auth(&world.api[&reader].jwt)
            .json(&body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        reads += 1;
        let answer: Value = r.json().await.map_err(|e| e.to_string())?;
        check_hits(world, oracle, reader, mode, answer, failures)?;
    }
    // The context of every project.
    for key in projects() {
        let (status, body) = get(
            world,
            reader,
            &format!("/memory/context/{}?budget=8000", encoded(&key)),
        )
        .await?;
        reads += 1;
        if status == 200 {
            let text = body["text"].as_str().unwrap_or_default();
            oracle.check_text(world, reader, &format!("context of {key}"), text, failures);
        }
    }
    // Sessions' timelines: only what each session's own person wrote.
    let mut sessions: Vec<uuid::Uuid> = oracle.sessions.keys().copied().collect();
    sessions.sort();
    for _ in 0..6.min(sessions.len()) {
        let id = sessions[(rng.draw() % sessions.len() as u64) as usize];
        let (status, body) = get(world, reader, &format!("/memory/timeline/{id}")).await?;
        reads += 1;
        if status != 200 {
            continue;
        }
        let session = tagged("session", &body["session"])?;
        let owner = world.owner(session.machine_id());
        let mut parts: Vec<WireRecord> = Vec::new();
        for o in body["observations"].as_array().into_iter().flatten() {
            parts.push(tagged("observation", o)?);
        }
        if !body["summary"].is_null() {
            parts.push(tagged("summary", &body["summary"])?);
        }
        for part in parts.iter().chain(std::iter::once(&session)) {
            oracle.check_record(world, reader, "timeline", part, failures);
            if world.owner(part.machine_id()) != owner {
                failures.push(format!(
                    "timeline of {id} ({owner:?}'s) shows {} {} written by {:?}",
                    part.type_name(),
                    part.id(),
                    world.owner(part.machine_id())
                ));
            }
        }
    }
    // Decisions, and the honest person's personal ones still standing.
    let (_, body) = get(world, reader, "/memory/decisions?all=true&limit=100").await?;
    reads += 1;
    for d in body["decisions"].as_array().into_iter().flatten() {
        let r = tagged("knowledge", d)?;
        oracle.check_record(world, reader, "decisions", &r, failures);
        if let WireRecord::Knowledge(k) = &r
            && k.status() != "active"
            && oracle
                .personal_decisions
                .iter()
                .any(|(id, p)| id == k.id.as_uuid() && *p == reader)
        {
            failures.push(format!(
                "decisions: {reader:?}'s personal decision {} is {} ({:?})",
                k.id,
                k.status(),
                k.body.fields()["superseded_by"]
            ));
        }
    }
    // Iterations by id (a leaked one included).
    for (id, _, _) in oracle.knowledge.iter().rev().take(3) {
        let (status, body) = get(world, reader, &format!("/memory/iteration?id={id}")).await?;
        reads += 1;
        if status == 200 {
            for part in ["decisions", "commits", "events"] {
                for k in body[part].as_array().into_iter().flatten() {
                    let r = tagged("knowledge", k)?;
                    oracle.check_record(world, reader, "iteration", &r, failures);
                }
            }
        }
    }
    // The central MCP tools.
    let mut mcp = Client::new(&world.c, Some(&world.api[&reader]));
    mcp.initialize().await;
    let ids: Vec<String> = oracle
        .honest_ids
        .iter()
        .rev()
        .take(20)
        .map(|(id, _)| id.to_string())
        .collect();
    let mut calls = vec![
        (
            "memory_search_remote",
            json!({"query": "ledger", "limit": 50}),
        ),
        ("memory_get_context", json!({"project": SHARED})),
        ("memory_decisions", json!({"all": true})),
        ("memory_get_observations", json!({"ids": ids})),
    ];
    if let Some(s) = sessions.first() {
        calls.push(("memory_timeline", json!({"id": s.to_string()})));
    }
    for (tool, args) in calls {
        let (_, text) = mcp.call(tool, args).await;
        reads += 1;
        oracle.check_text(world, reader, tool, &text, failures);
    }
    Ok(reads)
}

/// A record of the wire from a record's JSON without its type tag.
fn tagged(kind: &str, value: &Value) -> Result<WireRecord, String> {
    let mut v = value.clone();
    if let Some(map) = v.as_object_mut() {
        map.insert("type".into(), json!(kind));
    }
    serde_json::from_value(v).map_err(|e| format!("a {kind} read back: {e}: {value}"))
}

fn check_hits(
    world: &World,
    oracle: &Oracle,
    reader: Person,
    path: &str,
    body: Value,
    failures: &mut Vec<String>,
) -> Result<(), String> {
    let found: SearchResponse =
        serde_json::from_value(body.clone()).map_err(|e| format!("{path}: {e}: {body}"))?;
    for hit in &found.hits {
        for m in markers_in(&hit.title) {
            let Some(f) = oracle.fact(m) else { continue };
            if !may_see(reader, f.author, &f.project) {
                failures.push(format!(
                    "{path}: {reader:?} found {m}, {:?}'s in {}",
                    f.author, f.project
                ));
            }
            if world.owner(hit.machine_id) != Some(f.author) {
                failures.push(format!(
                    "{path}: {:?}'s {m} found as {:?}'s",
                    f.author,
                    world.owner(hit.machine_id)
                ));
            }
        }
    }
    Ok(())
}

/// What an honest edge holds after its sync.
pub fn edge(
    world: &World,
    oracle: &Oracle,
    e: &HonestEdge,
    failures: &mut Vec<String>,
) -> Result<usize, String> {
    let who = e.person;
    let path = format!("{:?}'s edge", who);
    // Its files, byte for byte (the WAL and the full-text index included).
    let bytes = String::from_utf8_lossy(&e.edge.store_bytes()).into_owned();
    let held: HashSet<&str> = markers_in_bytes(&bytes).into_iter().collect();
    for m in &held {
        if !oracle.visible(who, m) && oracle.fact(m).is_some() {
            let f = oracle.fact(m).map(|f| (f.author, f.project.clone()));
            failures.push(format!(
                "{path}: its files hold {m} ({f:?}), in {:?}",
                where_held(&e.edge, m)
            ));
        }
    }
    for marker in &oracle.standing {
        if oracle.visible(who, marker) && !held.contains(marker.as_str()) {
            let f = oracle.fact(marker).map(|f| (f.author, f.record));
            failures.push(format!("{path}: lost {marker} ({f:?}), which it may hold"));
        }
    }
    // Its rows: every text in the name of the machine that wrote it.
    let db = e.edge.db();
    for (table, text) in [
        ("observations", "title || ' ' || input || ' ' || response"),
        ("summaries", "text || ' ' || key_points"),
        ("knowledge", "body"),
        ("sessions", "cwd"),
    ] {
        let mut stmt = db
            .prepare(&format!("SELECT machine_id, {text} FROM {table}"))
            .map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| e.to_string())?;
        for row in rows {
            let (machine, text) = row.map_err(|e| e.to_string())?;
            let owner = machine.parse().ok().and_then(|m| world.owner(m));
            for m in markers_in(&text) {
                if let Some(f) = oracle.fact(m)
                    && owner != Some(f.author)
                {
                    failures.push(format!(
                        "{path}: {:?}'s {m} kept in {table} as {owner:?}'s",
                        f.author
                    ));
                }
            }
        }
    }
    let mut reads = 1;
    // Its contexts, as an agent gets them.
    for dir in [&e.edge.project, &e.notes] {
        let out = e.edge.run_in(dir, &["context"]);
        reads += 1;
        oracle.check_text(
            world,
            who,
            &format!("{path}'s context"),
            &String::from_utf8_lossy(&out.stdout),
            failures,
        );
    }
    // Its person's sessions: only what they wrote, their summary standing.
    for (id, owner) in &oracle.sessions {
        if *owner != who {
            continue;
        }
        let out = e.edge.run(&["timeline", &id.to_string(), "--json"]);
        reads += 1;
        if !out.status.success() {
            continue;
        }
        let page: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        let mut parts: Vec<WireRecord> = Vec::new();
        for o in page["entries"].as_array().into_iter().flatten() {
            parts.push(tagged("observation", o)?);
        }
        if !page["summary"].is_null() {
            parts.push(tagged("summary", &page["summary"])?);
        }
        for k in page["knowledge"].as_array().into_iter().flatten() {
            parts.push(tagged("knowledge", k)?);
        }
        for part in &parts {
            if world.owner(part.machine_id()) != Some(who) {
                failures.push(format!(
                    "{path}: {who:?}'s session {id} shows {} {} written by {:?}",
                    part.type_name(),
                    part.id(),
                    world.owner(part.machine_id())
                ));
            }
        }
    }
    // Its person's personal decisions still stand.
    for (id, owner) in &oracle.personal_decisions {
        if *owner != who {
            continue;
        }
        let status: Vec<String> = e
            .edge
            .strings(&format!("SELECT status FROM knowledge WHERE id = '{id}'"));
        if status.first().is_some_and(|s| s != "active") {
            failures.push(format!(
                "{path}: {who:?}'s personal decision {id} is {status:?}"
            ));
        }
    }
    Ok(reads)
}

/// The tables of an edge's store whose rows hold `marker` (for a failure's message).
fn where_held(edge: &crate::edge::Edge, marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (table, row, text) in [
        (
            "observations",
            "id || ' ' || machine_id",
            "title || input || response",
        ),
        ("summaries", "id || ' ' || machine_id", "text || key_points"),
        ("knowledge", "id || ' ' || machine_id", "body"),
        ("sessions", "id || ' ' || machine_id", "cwd"),
        (
            "conflicts",
            "record_id || ' won by ' || winner_machine",
            "local_version || winner_version",
        ),
    ] {
        for found_row in edge.strings(&format!(
            "SELECT '{table} ' || {row} FROM {table} WHERE {text} LIKE '%{marker}%'"
        )) {
            found.push(found_row);
        }
    }
    for fts in ["observations_fts", "summaries_fts", "knowledge_fts"] {
        let n = edge.count(&format!(
            "SELECT count(*) FROM {fts} WHERE {fts} MATCH '\"{marker}\"'"
        ));
        if n > 0 {
            found.push(format!("{fts}: {n} row(s)"));
        }
    }
    for suffix in ["", "-wal"] {
        let path = format!("{}{suffix}", edge.db_path().display());
        if std::fs::read(&path)
            .is_ok_and(|b| b.windows(marker.len()).any(|w| w == marker.as_bytes()))
        {
            found.push(format!("the bytes of memory.db{suffix}"));
        }
    }
    found
}
