//! Interrupted syncs lose nothing and duplicate nothing (docs/DESIGN.md, Sync): the real
//! `solaria` binary killed with SIGKILL in the middle of a push and of a pull, the
//! central service restarted in the middle of a push, and a batch replayed end to end.
//! Each test compares both sides by ids and by content.

use serde_json::{Value, json};
use solaria_shared::Hlc;
use solaria_store::rusqlite;
use solaria_tests::central::{Central, Options};
use solaria_tests::edge::{Edge, enroll_token, write_ca};
use std::collections::BTreeMap;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Observations seeded on the pushing machine: several batches of 1000.
const BIG: usize = 5000;
/// A word in every seeded (live) observation.
const COMMON: &str = "zebrafish";
/// Every this many seeded observations is a tombstone.
const TOMBSTONE_EVERY: usize = 50;
/// How long a sync may take to reach the middle of its work before a test gives up
/// (a deadline for a hung sync: generous on a loaded machine).
const CATCH_WITHIN: Duration = Duration::from_secs(60);

/// One version of an observation, as either side stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    title: String,
    input: String,
    updated: i64,
    machine: String,
    deleted: bool,
}

fn tls() -> Options {
    Options {
        tls: true,
        ..Options::default()
    }
}

/// A machine logged in to `c` in `account`.
async fn machine(c: &Central, account: solaria_central::storage::AccountId, name: &str) -> Edge {
    let e = Edge::new(name);
    let ca = write_ca(c, e.root.path());
    e.login(c, &enroll_token(c, account).await, &ca);
    e
}

/// The unique word of seeded observation `i`.
fn item(i: usize) -> String {
    format!("item{i:05}")
}

/// Captures one real prompt (so the store holds a real session), then writes `n` more
/// observations of that session straight into the store, the way `Store::write` would:
/// each with its own increasing HLC stamp, `meta.hlc_last` moved past the last one, and
/// the real row's `scope` tokens (same project, kind and machine). Every
/// [`TOMBSTONE_EVERY`]th is a tombstone (content erased). Returns the seeded ids.
fn seed(e: &Edge, n: usize) -> Vec<String> {
    e.prompt(
        "big",
        &format!("the first prompt of a long {COMMON} session"),
    );
    let mut db = e.db();
    db.busy_timeout(Duration::from_secs(5))
        .expect("busy timeout");
    let tx = db.transaction().expect("tx");
    let (session, key, name, machine, scope): (String, String, String, String, String) = tx
        .query_row(
            "SELECT session_id, project_key, project_name, machine_id, scope FROM observations
             WHERE kind = 'prompt' AND deleted = 0 LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .expect("the captured prompt");
    assert!(!scope.is_empty(), "the store computed scope tokens");
    let last: i64 = tx
        .query_row("SELECT value FROM meta WHERE key = 'hlc_last'", [], |r| {
            r.get::<_, String>(0)
        })
        .expect("hlc_last")
        .parse()
        .expect("a packed stamp");
    let now = solaria_shared::UnixMillis::now().0.max(0) as u64;
    let mut stamp = last.max(Hlc::new(now, 0).as_i64());
    let mut ids = Vec::with_capacity(n);
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO observations (id, machine_id, updated, deleted, session_id, project_key,
                     project_name, kind, tool_name, title, input, response, files, metadata, tags,
                     created_at, scope)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'prompt', NULL, ?8, ?9, '', '[]', '{}', '[]', ?10, ?11)",
            )
            .expect("prepare");
        for i in 0..n {
            stamp += 1;
            let id = uuid::Uuid::now_v7().to_string();
            let deleted = i % TOMBSTONE_EVERY == 0;
            let (title, input) = if deleted {
                (String::new(), String::new())
            } else {
                (
                    format!("step {} of the {COMMON} migration", item(i)),
                    format!(
                        "move the {COMMON} tables to the new layout, part {}: {}",
                        item(i),
                        "check the indexes, keep the old columns until the readers moved, \
                         then drop them in a later release. "
                            .repeat(3)
                    ),
                )
            };
            insert
                .execute(rusqlite::params![
                    id,
                    machine,
                    stamp,
                    deleted as i64,
                    session,
                    key,
                    name,
                    title,
                    input,
                    (now as i64) + i as i64,
                    scope,
                ])
                .expect("insert");
            ids.push(id);
        }
    }
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'hlc_last'",
        [stamp.to_string()],
    )
    .expect("hlc_last");
    tx.commit().expect("commit");
    ids
}

/// Every observation of an edge store, by id.
fn local(e: &Edge) -> BTreeMap<String, Version> {
    let db = e.db();
    let mut stmt = db
        .prepare("SELECT id, title, input, updated, machine_id, deleted FROM observations")
        .expect("prepare");
    stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Version {
                title: r.get(1)?,
                input: r.get(2)?,
                updated: r.get(3)?,
                machine: r.get(4)?,
                deleted: r.get::<_, i64>(5)? != 0,
            },
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

/// Every observation the server holds, by id.
async fn server(c: &Central) -> BTreeMap<String, Version> {
    let rows: Vec<(String, String, String, i64, String, bool)> = sqlx::query_as(
        "SELECT id::text, title, input, updated, machine_id::text, deleted
         FROM memory_observations_remote",
    )
    .fetch_all(c.storage.pool())
    .await
    .expect("server rows");
    rows.into_iter()
        .map(|(id, title, input, updated, machine, deleted)| {
            (
                id,
                Version {
                    title,
                    input,
                    updated,
                    machine,
                    deleted,
                },
            )
        })
        .collect()
}

/// Session ids with their versions, on an edge (a placeholder left for a pulled
/// record whose session never arrived would show as version 0).
fn local_sessions(e: &Edge) -> BTreeMap<String, (i64, String)> {
    let db = e.db();
    let mut stmt = db
        .prepare("SELECT id, updated, machine_id FROM sessions")
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

async fn server_sessions(c: &Central) -> BTreeMap<String, (i64, String)> {
    let rows: Vec<(String, i64, String)> =
        sqlx::query_as("SELECT id::text, updated, machine_id::text FROM memory_sessions")
            .fetch_all(c.storage.pool())
            .await
            .expect("server sessions");
    rows.into_iter().map(|(id, u, m)| (id, (u, m))).collect()
}

/// Every row of the server's three record tables: `(table, id)` → (seq, whole row as JSON).
async fn server_rows(c: &Central) -> BTreeMap<(String, String), (i64, String)> {
    let mut all = BTreeMap::new();
    for table in [
        "memory_sessions",
        "memory_observations_remote",
        "memory_summaries_remote",
    ] {
        let rows: Vec<(String, i64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT id::text, seq, row_to_json(t)::text FROM {table} t"
        )))
        .fetch_all(c.storage.pool())
        .await
        .expect("rows");
        for (id, seq, row) in rows {
            all.insert((table.to_string(), id), (seq, row));
        }
    }
    all
}

/// No two rows of the change feed share a seq (each change is fed once).
async fn assert_feed_seqs_unique(c: &Central) {
    let (rows, distinct): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(DISTINCT seq) FROM (
             SELECT seq FROM memory_sessions
             UNION ALL SELECT seq FROM memory_observations_remote
             UNION ALL SELECT seq FROM memory_summaries_remote) f",
    )
    .fetch_one(c.storage.pool())
    .await
    .expect("seqs");
    assert_eq!(rows, distinct, "every change has a seq of its own");
}

fn status(e: &Edge) -> Value {
    serde_json::from_str(&e.ok(&["status", "--json"])).expect("status json")
}

/// `solaria sync` as a child process, its output discarded.
fn spawn_sync(e: &Edge) -> Child {
    e.cmd()
        .arg("sync")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn solaria sync")
}

/// Polls `progress` until it is strictly between 0 and `total`; panics if the sync
/// ends or finishes first (the test could then prove nothing). Returns the value seen.
async fn wait_for_middle<F, Fut>(child: &mut Child, total: i64, what: &str, mut progress: F) -> i64
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = i64>,
{
    let started = Instant::now();
    loop {
        let done = progress().await;
        if done > 0 && done < total {
            // A little later still, by a random amount: over runs, the interruption
            // lands in every phase (request in flight, server commit, edge commit).
            let jitter = Duration::from_millis(u64::from(uuid::Uuid::new_v4().as_bytes()[0]));
            tokio::time::sleep(jitter).await;
            eprintln!(
                "{what} interrupted at {done}+ of {total}, {:?} in (jitter {jitter:?})",
                started.elapsed()
            );
            return done;
        }
        assert!(
            done < total,
            "the {what} finished ({done} of {total}) before it could be interrupted"
        );
        if let Some(status) = child.try_wait().expect("try_wait") {
            panic!("solaria sync ended ({status}) before the {what} got going");
        }
        assert!(
            started.elapsed() < CATCH_WITHIN,
            "the {what} made no progress in {CATCH_WITHIN:?}"
        );
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
}

/// SIGKILL, then reap.
fn kill_9(mut child: Child) {
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("reap");
    assert!(!status.success(), "killed, not finished: {status}");
}

fn count_local(db: &rusqlite::Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0)).expect("count")
}

/// After a complete sync, the server holds exactly what `a` holds: the same ids, the
/// same versions and content, nothing twice; `a` has nothing left to push.
async fn assert_server_mirrors(c: &Central, a: &Edge) {
    let here = local(a);
    let there = server(c).await;
    let missing: Vec<&String> = here.keys().filter(|k| !there.contains_key(*k)).collect();
    assert!(
        missing.is_empty(),
        "{} observation(s) never reached the server, e.g. {:?}",
        missing.len(),
        missing.first()
    );
    let extra: Vec<&String> = there.keys().filter(|k| !here.contains_key(*k)).collect();
    assert!(
        extra.is_empty(),
        "the server holds ids the edge never had: {extra:?}"
    );
    assert_eq!(
        here.len(),
        there.len(),
        "as many observations on both sides"
    );
    assert!(here == there, "same versions and content on both sides");
    assert_eq!(local_sessions(a), server_sessions(c).await);
    assert_feed_seqs_unique(c).await;
    let s = status(a);
    assert_eq!(s["pending"], 0, "{s}");
    assert_eq!(s["last_sync_status"], "success", "{s}");
    assert_eq!(s["conflicts"], 0, "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_a_push_loses_and_duplicates_nothing() {
    let c = Central::start_with(tls()).await;
    let acct = c.account("acme").await;
    let a = machine(&c, acct, "a").await;
    let seeded = seed(&a, BIG);
    let before = local(&a);
    let total = before.len() as i64;
    assert_eq!(total, BIG as i64 + 1);
    assert_eq!(
        status(&a)["pending"],
        BIG + 2,
        "a session and its observations"
    );

    let mut child = spawn_sync(&a);
    let mid = wait_for_middle(&mut child, total, "push", || {
        c.count("memory_observations_remote")
    })
    .await;
    kill_9(child);
    let stored = c.count("memory_observations_remote").await;
    assert!(stored >= mid && stored < total, "{stored} of {total}");
    assert!(
        status(&a)["pending"].as_i64().expect("pending") > 0,
        "what the server may not have acknowledged is still pending"
    );
    assert_eq!(
        status(&a)["last_sync_status"],
        "interrupted",
        "a killed sync never reads as a success"
    );

    let out = a.ok(&["sync"]);
    assert!(out.contains("conflicts 0"), "{out}");
    assert_eq!(local(&a), before, "the edge's own rows are untouched");
    assert_server_mirrors(&c, &a).await;
    let there = server(&c).await;
    for (i, id) in seeded.iter().enumerate().step_by(997) {
        let v = &there[id];
        assert_eq!(v.deleted, i % TOMBSTONE_EVERY == 0, "{id}");
        assert!(v.deleted || v.title.contains(&item(i)), "{v:?}");
    }
    let again = a.ok(&["sync"]);
    assert!(
        again.contains("pushed 0"),
        "nothing left, nothing re-sent: {again}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_a_pull_loses_and_duplicates_nothing() {
    let c = Central::start_with(tls()).await;
    let acct = c.account("acme").await;
    let a = machine(&c, acct, "a").await;
    let seeded = seed(&a, BIG);
    a.ok(&["sync"]);
    let there = server(&c).await;
    let total = there.len() as i64;
    assert_eq!(total, BIG as i64 + 1);
    let live = there.values().filter(|v| !v.deleted).count() as i64;

    let b = machine(&c, acct, "b").await;
    let watch = b.db();
    watch
        .busy_timeout(Duration::from_secs(5))
        .expect("busy timeout");
    let mut child = spawn_sync(&b);
    let mid = wait_for_middle(&mut child, total, "pull", || {
        let n = count_local(&watch, "SELECT count(*) FROM observations");
        async move { n }
    })
    .await;
    kill_9(child);
    let kept = count_local(&watch, "SELECT count(*) FROM observations");
    assert!(kept >= mid && kept < total, "{kept} of {total}");
    drop(watch);

    let out = b.ok(&["sync"]);
    assert!(out.contains("conflicts 0"), "{out}");
    // Exactly the server's records, versions and content; tombstones as tombstones.
    let pulled = local(&b);
    assert_eq!(pulled.len(), there.len());
    assert!(pulled == there, "b holds exactly the server's versions");
    assert_eq!(local_sessions(&b), server_sessions(&c).await);
    let db = b.db();
    assert_eq!(
        count_local(&db, "SELECT count(DISTINCT id) FROM observations"),
        total,
        "nothing twice"
    );
    // The full-text index holds each live record once, and no tombstone.
    assert_eq!(
        count_local(&db, "SELECT count(*) FROM observations_fts"),
        live
    );
    assert_eq!(
        count_local(
            &db,
            &format!(
                "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH '{COMMON}'"
            )
        ),
        live
    );
    let hits = b.search(&item(7));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["id"], seeded[7].as_str());
    assert!(
        b.search(&item(TOMBSTONE_EVERY)).is_empty(),
        "a tombstone is not found"
    );
    let s = status(&b);
    assert_eq!(
        (s["pending"].clone(), s["conflicts"].clone()),
        (json!(0), json!(0)),
        "{s}"
    );
    let again = b.ok(&["sync"]);
    assert!(again.contains("pulled 0"), "nothing pulled twice: {again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_in_the_middle_of_a_push_loses_and_duplicates_nothing() {
    let c = Central::start_with(tls()).await;
    let acct = c.account("acme").await;
    let a = machine(&c, acct, "a").await;
    seed(&a, BIG);
    let before = local(&a);
    let total = before.len() as i64;

    let mut child = spawn_sync(&a);
    wait_for_middle(&mut child, total, "push", || {
        c.count("memory_observations_remote")
    })
    .await;
    // The service goes down as a crashed process would: its database sessions end
    // (a batch in flight rolls back), then it stops listening.
    let storage = c.storage.clone();
    sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .execute(storage.pool())
    .await
    .expect("terminate the server's database sessions");
    let port: u16 = c
        .url
        .rsplit(':')
        .next()
        .expect("port")
        .parse()
        .expect("port");
    c.stop().await;
    // Back on the same port and database, with a new certificate: the running sync
    // (which trusts the old CA) cannot finish and must say it failed.
    let c = Central::serve_on(storage, tls(), port).await;
    let stored = c.count("memory_observations_remote").await;
    assert!(stored > 0 && stored < total, "{stored} of {total}");
    let status_code = child.wait().expect("the interrupted sync ends");
    assert!(
        !status_code.success(),
        "an interrupted sync is not a success"
    );
    let s = status(&a);
    assert_eq!(s["last_sync_status"], "failed", "{s}");
    assert!(s["pending"].as_i64().expect("pending") > 0, "{s}");

    std::fs::write(
        a.data().join("server-ca.pem"),
        c.ca_pem.as_deref().expect("ca"),
    )
    .expect("new ca");
    let out = a.ok(&["sync"]);
    assert!(out.contains("conflicts 0"), "{out}");
    assert_eq!(local(&a), before, "the edge's own rows are untouched");
    assert_server_mirrors(&c, &a).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_batch_is_harmless_end_to_end() {
    let c = Central::start_with(tls()).await;
    let acct = c.account("acme").await;
    let a = machine(&c, acct, "a").await;
    let b = machine(&c, acct, "b").await;
    a.prompt("s", "cache the zebrafish lookups");
    let cwd = a.project.display().to_string();
    a.hook(
        "post-tool-use",
        json!({"session_id": "s", "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "cargo test cache"}, "tool_response": {"stdout": "test result: ok"}}),
    );
    a.hook(
        "stop",
        json!({"session_id": "s", "cwd": cwd, "hook_event_name": "Stop"}),
    );
    let out = a.ok(&["sync"]);
    assert!(
        out.contains("pushed 4"),
        "session, two observations, summary: {out}"
    );
    b.ok(&["sync"]);

    let rows = server_rows(&c).await;
    assert_eq!(rows.len(), 4);
    let a_rows = local(&a);
    let log = || c.count("memory_sync_log");
    let logged = log().await;

    // Nothing changed: nothing is sent again.
    let out = a.ok(&["sync"]);
    assert!(
        out.contains("pushed 0") && out.contains("pulled 0"),
        "{out}"
    );
    assert_eq!(log().await, logged);

    // The same batch again, twice: what a kill -9 between the server's commit and the
    // edge's cursor commit leads to. The server takes it (and logs it), changes nothing.
    for replay in 1..=2 {
        a.db()
            .execute(
                "UPDATE sync_state SET value = '0' WHERE key = 'push_cursor'",
                [],
            )
            .expect("rewind the push cursor");
        assert_eq!(status(&a)["pending"], 4);
        let out = a.ok(&["sync"]);
        assert!(
            out.contains("pushed 4") && out.contains("pulled 0") && out.contains("conflicts 0"),
            "a replay is acknowledged, not pulled back, not a conflict: {out}"
        );
        assert_eq!(log().await, logged + replay, "each replay is logged");
        assert!(server_rows(&c).await == rows, "records and seqs unchanged");
        assert_eq!(local(&a), a_rows);
        assert_eq!(status(&a)["pending"], 0);
    }
    let out = b.ok(&["sync"]);
    assert!(
        out.contains("pulled 0"),
        "the feed did not repeat anything: {out}"
    );
    assert_eq!(local(&b), a_rows);
    assert_feed_seqs_unique(&c).await;
}
