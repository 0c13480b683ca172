//! Knowledge records on the central service, over real HTTP on a fresh PostgreSQL
//! database per test: pushed with `/memory/sync`, read back from the change feed and
//! restore only by a reader that asks for them (`types=knowledge`; an edge of the
//! first release gets pages it can parse), last-write-wins and final erasure,
//! cleaning on ingest, search in English and Spanish, the decision list and the
//! iteration view over REST and MCP, and account isolation for all of it.

use serde::Deserialize;
use serde_json::{Value, json};
use solaria_shared::knowledge::{Commit, Event, EventKind, Iteration, Link, Memory, Standing};
use solaria_shared::wire::{ChangesPage, RecordOutcome, RestorePage, SearchResponse, WireRecord};
use solaria_shared::{
    Hlc, Knowledge, KnowledgeBody, KnowledgeId, Observation, RecordType, Session, SessionId,
    Summary,
};
use solaria_tests::central::{Central, Machine, delete, get, get_ok};
use solaria_tests::central_mcp::Client;
use solaria_tests::records::{decision, observation, project, session, stamp, wire};
use uuid::Uuid;

/// A live knowledge record of `body` written by `m` at `at`, in the test project.
fn knowledge(m: &Machine, at: Hlc, body: KnowledgeBody) -> Knowledge {
    Knowledge::new(KnowledgeId::new(), m.id, at, project(), None, body)
}

fn memory(content: &str) -> KnowledgeBody {
    KnowledgeBody::Memory(Memory {
        content: content.into(),
        ..Memory::default()
    })
}

fn commit(sha: &str, message: &str) -> KnowledgeBody {
    KnowledgeBody::Commit(Commit {
        sha: sha.into(),
        message: message.into(),
        author: "Ana".into(),
        branch: "feat/keyset".into(),
        ..Commit::default()
    })
}

/// Another version of `k` written by `m` at `at`.
fn version(k: &Knowledge, m: &Machine, at: Hlc) -> Knowledge {
    let mut v = k.clone();
    v.meta.machine_id = m.id;
    v.meta.updated = at;
    v
}

async fn search(c: &Central, m: &Machine, query: &str) -> SearchResponse {
    get_ok(c, m, &format!("/memory/search?{query}")).await
}

/// The knowledge records of `records`, by id.
fn knowledge_of(records: impl IntoIterator<Item = WireRecord>) -> Vec<Knowledge> {
    records
        .into_iter()
        .filter_map(|r| match r {
            WireRecord::Knowledge(k) => Some(k),
            _ => None,
        })
        .collect()
}

/// The stored row of `id` in `account`: (deleted, machine, title, search_text, body).
async fn row(
    c: &Central,
    account: solaria_central::storage::AccountId,
    id: KnowledgeId,
) -> (bool, Uuid, String, String, Value) {
    let r: (bool, Uuid, String, String, Value) = sqlx::query_as(
        "SELECT deleted, machine_id, title, search_text, body FROM memory_knowledge
         WHERE account_id = $1 AND id = $2",
    )
    .bind(account.0)
    .bind(id.as_uuid())
    .fetch_one(c.storage.pool())
    .await
    .expect("stored row");
    r
}

/// The first release's parser of the feed: it knows three types and nothing else.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(dead_code)]
enum FirstRelease {
    Session(Session),
    Observation(Observation),
    Summary(Summary),
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct FirstReleaseChange {
    seq: i64,
    record: FirstRelease,
}

/// Reads every page of `path` (a feed or restore URL without `since`), checking that
/// each record is of a type the first release parses, and returns their ids.
async fn first_release_pages(c: &Central, m: &Machine, path: &str, list: &str) -> Vec<Uuid> {
    let mut since = 0;
    let mut ids = Vec::new();
    loop {
        let (status, page) = get(c, m, &format!("{path}&since={since}")).await;
        assert_eq!(status, 200, "{page}");
        let records: Vec<&Value> = page[list]
            .as_array()
            .expect("records")
            .iter()
            .map(|r| if list == "changes" { &r["record"] } else { r })
            .collect();
        for r in &records {
            let t = r["type"].as_str().expect("type");
            assert!(
                ["session", "observation", "summary"].contains(&t),
                "{path}: a first-release edge cannot parse a {t} record: {r}"
            );
            ids.push(Uuid::parse_str(r["id"].as_str().expect("id")).expect("uuid"));
        }
        // And the first release's own types parse the page whole.
        if list == "changes" {
            let _: Vec<FirstReleaseChange> =
                serde_json::from_value(page["changes"].clone()).expect("first-release changes");
        } else {
            let _: Vec<FirstRelease> =
                serde_json::from_value(page["records"].clone()).expect("first-release records");
        }
        let next = page["next"].as_i64().expect("next");
        if page["more"] != json!(true) {
            return ids;
        }
        assert!(next > since, "the cursor moves on");
        since = next;
    }
}

#[tokio::test]
async fn knowledge_reaches_only_readers_that_ask_for_it() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;

    // The server says it stores knowledge (and records' vectors).
    let token: Value = c
        .client
        .post(c.at("/memory/token"))
        .json(&json!({"machine_id": laptop.id, "credential": laptop.credential}))
        .send()
        .await
        .expect("token request")
        .json()
        .await
        .expect("token json");
    assert_eq!(
        token["types"],
        json!(["knowledge", "embeddings", "embeddings-i8"])
    );

    let s = session(laptop.id, stamp(0));
    let o1 = observation(laptop.id, s.id, stamp(1), "cargo test");
    let mut d = knowledge(
        &laptop,
        stamp(2),
        decision(
            "Keyset pagination",
            "keyset",
            "offsets degrade on big tables",
        ),
    );
    d.session_id = Some(s.id);
    let m = knowledge(&laptop, stamp(3), memory("Ana reviews every migration"));
    let k = knowledge(
        &laptop,
        stamp(4),
        commit(
            "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
            "Add keyset pagination",
        ),
    );
    let outcomes = c
        .push_ok(
            &laptop,
            &[
                wire(s.clone()),
                wire(o1.clone()),
                d.clone().into(),
                m.clone().into(),
                k.clone().into(),
            ],
        )
        .await;
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, RecordOutcome::Applied { .. })),
        "{outcomes:?}"
    );
    // Pushed after the knowledge: the feed's next page of the first release's types
    // lies beyond it.
    let o2 = observation(laptop.id, s.id, stamp(5), "cargo clippy");
    c.push_ok(&laptop, &[wire(o2.clone())]).await;

    // Asked for: every knowledge record comes back as pushed.
    let page: ChangesPage = get_ok(
        &c,
        &laptop,
        "/memory/changes?since=0&limit=1000&types=knowledge",
    )
    .await;
    assert_eq!(page.changes.len(), 6);
    let got = knowledge_of(page.changes.into_iter().map(|c| c.record));
    assert_eq!(got, vec![d.clone(), m.clone(), k.clone()]);
    let restored: RestorePage =
        get_ok(&c, &laptop, "/memory/restore?since=0&types=knowledge").await;
    assert_eq!(restored.records.len(), 6);
    assert_eq!(
        knowledge_of(restored.records),
        vec![d.clone(), m.clone(), k.clone()]
    );

    // Not asked for (an edge of the first release): pages it can parse, whole or
    // one record at a time, and everything else still arrives.
    let want = vec![*s.id.as_uuid(), *o1.id.as_uuid(), *o2.id.as_uuid()];
    for (path, list) in [
        ("/memory/changes?limit=1000", "changes"),
        ("/memory/changes?limit=1", "changes"),
        ("/memory/changes?limit=2&types=", "changes"),
        ("/memory/restore?limit=1000", "records"),
        ("/memory/restore?limit=1", "records"),
    ] {
        assert_eq!(
            first_release_pages(&c, &laptop, path, list).await,
            want,
            "{path}"
        );
    }
}

#[tokio::test]
async fn the_later_version_wins_and_a_tombstone_beats_any_live_one() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;

    let v1 = knowledge(
        &laptop,
        stamp(-10_000),
        decision("Queue", "PostgreSQL", "one database to run"),
    );
    c.push_ok(&laptop, &[v1.clone().into()]).await;
    let mut v2 = version(&v1, &desktop, stamp(-5_000));
    if let KnowledgeBody::Decision(d) = &mut v2.body {
        d.rationale = "one database to run, and SKIP LOCKED is enough".into();
    }
    let r = c.push_ok(&desktop, &[v2.clone().into()]).await;
    assert_eq!(
        r,
        vec![RecordOutcome::Applied {
            id: *v1.id.as_uuid()
        }]
    );

    // An older edit from the laptop loses to the desktop's, and is told so.
    let late = version(&v1, &laptop, stamp(-7_000));
    let r = c.push_ok(&laptop, &[late.into()]).await;
    assert_eq!(
        r,
        vec![RecordOutcome::Stale {
            id: *v1.id.as_uuid(),
            winner: Box::new(v2.clone().into()),
        }]
    );
    let (deleted, machine, _, search_text, _) = row(&c, acct, v1.id).await;
    assert!(!deleted);
    assert_eq!(machine, *desktop.id.as_uuid());
    assert!(search_text.contains("SKIP LOCKED"), "{search_text}");

    // A tombstone stamped before the desktop's edit still wins; the text it carried
    // is not kept.
    let mut tomb = version(&v1, &laptop, stamp(-8_000));
    tomb.meta.deleted = true;
    if let KnowledgeBody::Decision(d) = &mut tomb.body {
        d.rationale = "leftover text".into();
    }
    let r = c.push_ok(&laptop, &[tomb.clone().into()]).await;
    assert_eq!(
        r,
        vec![RecordOutcome::Applied {
            id: *v1.id.as_uuid()
        }]
    );
    let (deleted, machine, title, search_text, body) = row(&c, acct, v1.id).await;
    assert!(deleted);
    assert_eq!(machine, *laptop.id.as_uuid());
    assert_eq!((title.as_str(), search_text.as_str()), ("", ""));
    assert_eq!(body, json!({}));

    // A later live version cannot bring it back: stale, with the tombstone.
    let revived = version(&v2, &desktop, stamp(0));
    let r = c.push_ok(&desktop, &[revived.into()]).await;
    let [RecordOutcome::Stale { winner, .. }] = r.as_slice() else {
        panic!("a live version after a tombstone is stale: {r:?}");
    };
    let WireRecord::Knowledge(winner) = winner.as_ref() else {
        panic!("{winner:?}");
    };
    assert!(winner.meta.deleted);
    assert_eq!(winner.body, KnowledgeBody::erased(v1.kind()));
    assert!(row(&c, acct, v1.id).await.0, "still erased");
}

#[tokio::test]
async fn an_erased_decision_is_gone_everywhere_and_outlives_no_push() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;

    let s = session(laptop.id, stamp(-3_000));
    let mut d = knowledge(
        &laptop,
        stamp(-2_000),
        decision("Caching", "Redis", "latency budget of ten milliseconds"),
    );
    d.session_id = Some(s.id);
    let mut m = knowledge(
        &laptop,
        stamp(-1_000),
        memory("Latency budgets are per endpoint"),
    );
    m.session_id = Some(s.id);
    c.push_ok(
        &laptop,
        &[wire(s.clone()), d.clone().into(), m.clone().into()],
    )
    .await;

    // Knowledge outlives the session it was recorded in.
    let (status, body) = delete(&c, &desktop, &format!("/memory/sessions/{}", s.id)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["knowledge"], 0, "{body}");
    assert!(!row(&c, acct, d.id).await.0 && !row(&c, acct, m.id).await.0);

    let before = c.changes(&desktop, 0).await.next;
    let (status, body) = delete(&c, &desktop, &format!("/memory/records/{}", d.id)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"sessions": 0, "observations": 0, "summaries": 0, "knowledge": 1})
    );
    let (deleted, machine, title, search_text, stored) = row(&c, acct, d.id).await;
    assert!(deleted);
    assert_eq!(
        machine,
        *desktop.id.as_uuid(),
        "written as the erasing machine"
    );
    assert_eq!((title.as_str(), search_text.as_str()), ("", ""));
    assert_eq!(stored, json!({}));

    // The tombstone is a new change that a reader of knowledge receives.
    let page: ChangesPage = get_ok(
        &c,
        &laptop,
        &format!("/memory/changes?since={before}&types=knowledge"),
    )
    .await;
    let [change] = page.changes.as_slice() else {
        panic!("one change: {page:?}");
    };
    assert!(change.seq > before);
    let WireRecord::Knowledge(tomb) = &change.record else {
        panic!("{change:?}");
    };
    assert_eq!(tomb.id, d.id);
    assert!(tomb.meta.deleted && tomb.meta.updated > d.meta.updated);
    assert_eq!(tomb.body, KnowledgeBody::erased(d.kind()));
    // Gone from search, lists and restore.
    assert!(
        search(&c, &laptop, "q=latency")
            .await
            .hits
            .iter()
            .all(|h| h.id != *d.id.as_uuid())
    );
    let (_, list) = get(&c, &laptop, "/memory/decisions?all=true").await;
    assert_eq!(list["decisions"], json!([]));
    let restored: RestorePage =
        get_ok(&c, &laptop, "/memory/restore?since=0&types=knowledge").await;
    assert_eq!(knowledge_of(restored.records), vec![m.clone()]);

    // The laptop had not pulled the erasure and edits the decision: stale, with the
    // tombstone, and nothing comes back.
    let edit = version(&d, &laptop, stamp(0));
    let r = c.push_ok(&laptop, &[edit.into()]).await;
    let [RecordOutcome::Stale { winner, .. }] = r.as_slice() else {
        panic!("{r:?}");
    };
    assert!(winner.meta().deleted, "{winner:?}");
    assert_eq!(row(&c, acct, d.id).await.4, json!({}));

    // A project's erasure takes its knowledge; the account's removes every row.
    let key = "github.com%2Facme%2Fapi";
    let (status, body) = delete(&c, &laptop, &format!("/memory/projects/{key}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["knowledge"], 1, "{body}");
    assert!(row(&c, acct, m.id).await.0);
    let (status, body) = delete(&c, &laptop, "/memory/account").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["knowledge"], 2, "{body}");
    assert_eq!(c.count("memory_knowledge").await, 0);
}

#[tokio::test]
async fn secrets_and_private_spans_never_reach_postgres() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let secret = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";

    let mut d = knowledge(
        &laptop,
        stamp(0),
        decision(
            "Deploy key",
            "a bot token",
            &format!("the bot uses {secret} until we move to OIDC"),
        ),
    );
    if let KnowledgeBody::Decision(body) = &mut d.body {
        body.context = "public part <private>codename bluebird</private> public tail".into();
        body.alternatives = vec![format!("<private>bluebird {secret}</private>")];
    }
    let m = knowledge(
        &laptop,
        stamp(1),
        memory(&format!(
            "Staging token {secret} <private>bluebird</private>"
        )),
    );
    c.push_ok(&laptop, &[d.clone().into(), m.clone().into()])
        .await;

    let raw: Vec<String> = sqlx::query_scalar(
        "SELECT concat_ws(' ', project_key, project_name, title, search_text, body::text)
         FROM memory_knowledge",
    )
    .fetch_all(c.storage.pool())
    .await
    .expect("raw rows");
    assert_eq!(raw.len(), 2);
    let all = raw.join("\n");
    for leaked in [secret, "bluebird", "<private>", "</private>"] {
        assert!(
            !all.contains(leaked),
            "`{leaked}` reached PostgreSQL: {all}"
        );
    }
    assert!(all.contains("[REDACTED:GITHUB_TOKEN]"), "{all}");
    assert!(
        all.contains("public part") && all.contains("public tail"),
        "{all}"
    );
    // What the feed sends is what was stored.
    let (_, page) = get(&c, &laptop, "/memory/changes?since=0&types=knowledge").await;
    let text = page.to_string();
    assert!(
        !text.contains(secret) && !text.contains("bluebird"),
        "{text}"
    );
}

#[tokio::test]
async fn search_finds_knowledge_in_english_and_spanish_and_cites_it() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;

    let d = knowledge(
        &laptop,
        stamp(-5_000),
        decision(
            "Pagination strategy",
            "keyset pagination",
            "offsets degrade when scanning millions of rows",
        ),
    );
    let es = knowledge(
        &laptop,
        stamp(-4_000),
        memory("Las migraciones de la base de datos se revisan en parejas"),
    );
    let sha = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
    let k = knowledge(
        &laptop,
        stamp(-3_000),
        commit(sha, "Add keyset pagination to orders"),
    );
    let link = knowledge(
        &laptop,
        stamp(-2_000),
        KnowledgeBody::Link(Link {
            from: Some(k.id),
            to: Some(d.id),
            note: "keyset implements the pagination decision".into(),
            ..Link::default()
        }),
    );
    // Two decisions alike but for their standing: the one set aside is newer, yet
    // ranks below the one that stands.
    let standing = knowledge(
        &laptop,
        stamp(-1_000),
        decision("Queues", "PostgreSQL queues", "no broker to run"),
    );
    let mut superseded = knowledge(
        &laptop,
        stamp(0),
        decision("Queues", "PostgreSQL queues", "no broker to run"),
    );
    if let KnowledgeBody::Decision(body) = &mut superseded.body {
        body.status = Standing::Superseded;
    }
    c.push_ok(
        &laptop,
        &[
            d.clone().into(),
            es.clone().into(),
            k.clone().into(),
            link.clone().into(),
            standing.clone().into(),
            superseded.clone().into(),
        ],
    )
    .await;

    // English: another inflection of a word of the rationale.
    let r = search(&c, &laptop, "q=scanned").await;
    let [hit] = r.hits.as_slice() else {
        panic!("{r:?}");
    };
    assert_eq!(hit.id, *d.id.as_uuid());
    assert_eq!(hit.hit_type, RecordType::Decision);
    assert_eq!(hit.cite.to_string(), format!("[D#{}]", d.id));
    assert_eq!(hit.title, "Pagination strategy");
    assert_eq!(
        (hit.project.as_str(), hit.project_name.as_str()),
        ("github.com/acme/api", "api")
    );
    assert_eq!(
        (hit.machine_id, hit.machine_name.as_str()),
        (laptop.id, "laptop")
    );
    assert_eq!(
        hit.session_id,
        SessionId::from_uuid(Uuid::nil()),
        "no session: the nil id"
    );
    assert_eq!(hit.created_at, d.created_at);
    assert!(hit.tokens > 0 && hit.score > 0.0, "{hit:?}");

    // Spanish: another inflection of a Spanish word.
    let r = search(&c, &laptop, "q=migraci%C3%B3n").await;
    let hit = r
        .hits
        .iter()
        .find(|h| h.id == *es.id.as_uuid())
        .expect("Spanish stemming finds it");
    assert_eq!(hit.hit_type, RecordType::Memory);
    assert_eq!(hit.cite.to_string(), format!("[M#{}]", es.id));
    let snippet = hit.snippet.as_deref().unwrap_or_default();
    assert_eq!(
        snippet.matches("**migraciones**").count(),
        1,
        "a memory said once, its first line not again: {snippet}"
    );

    // A commit is cited by its sha; a link is never a hit; `type` keeps one kind.
    let r = search(&c, &laptop, "q=keyset").await;
    assert!(r.hits.iter().all(|h| h.id != *link.id.as_uuid()), "{r:?}");
    let r = search(&c, &laptop, "q=keyset&type=commit").await;
    let [hit] = r.hits.as_slice() else {
        panic!("{r:?}");
    };
    assert_eq!(
        (hit.hit_type, hit.cite.to_string()),
        (RecordType::Commit, "[C#a1b2c3d]".to_string())
    );
    let r = search(&c, &laptop, "q=keyset&type=decision").await;
    assert_eq!(
        r.hits.iter().map(|h| h.id).collect::<Vec<_>>(),
        vec![*d.id.as_uuid()]
    );
    let (status, body) = get(&c, &laptop, "/memory/search?q=keyset&type=link").await;
    assert_eq!(status, 400, "{body}");

    let r = search(&c, &laptop, "q=broker").await;
    let order: Vec<Uuid> = r.hits.iter().map(|h| h.id).collect();
    assert_eq!(
        order,
        vec![*standing.id.as_uuid(), *superseded.id.as_uuid()]
    );
    assert!(r.hits[0].score > r.hits[1].score, "{r:?}");
}

/// An iteration with a decision, a commit and an event in it, a decision outside it
/// that was superseded, all written by `m`.
struct Work {
    iteration: Knowledge,
    active: Knowledge,
    superseded: Knowledge,
    commit: Knowledge,
    event: Knowledge,
}

async fn record_work(c: &Central, m: &Machine) -> Work {
    let iteration = knowledge(
        m,
        stamp(-5_000),
        KnowledgeBody::Iteration(Iteration {
            title: "Keyset pagination".into(),
            description: "Replace offsets on every list endpoint".into(),
            branch: "feat/keyset".into(),
            ..Iteration::default()
        }),
    );
    let mut active = knowledge(
        m,
        stamp(-4_000),
        decision(
            "Cursor format",
            "opaque base64 cursors",
            "clients must not build them",
        ),
    );
    if let KnowledgeBody::Decision(d) = &mut active.body {
        d.iteration = Some(iteration.id);
    }
    let mut superseded = knowledge(
        m,
        stamp(-3_000),
        decision("Page size", "fifty rows", "what the old UI showed"),
    );
    if let KnowledgeBody::Decision(d) = &mut superseded.body {
        d.status = Standing::Superseded;
    }
    let mut commit = knowledge(
        m,
        stamp(-2_000),
        commit("0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c", "Opaque cursors"),
    );
    if let KnowledgeBody::Commit(k) = &mut commit.body {
        k.iteration = Some(iteration.id);
        k.decisions = vec![active.id];
    }
    let event = knowledge(
        m,
        stamp(-1_000),
        KnowledgeBody::Event(Event {
            iteration: Some(iteration.id),
            event: EventKind::Started,
            detail: "from branch feat/keyset".into(),
            ..Event::default()
        }),
    );
    c.push_ok(
        m,
        &[
            iteration.clone().into(),
            active.clone().into(),
            superseded.clone().into(),
            commit.clone().into(),
            event.clone().into(),
        ],
    )
    .await;
    Work {
        iteration,
        active,
        superseded,
        commit,
        event,
    }
}

#[tokio::test]
async fn decisions_and_iterations_read_over_rest_and_mcp() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let w = record_work(&c, &laptop).await;
    let ids = |v: &Value, list: &str| -> Vec<String> {
        v[list]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|k| k["id"].as_str().expect("id").to_string())
            .collect()
    };

    // REST: active decisions by default, all on request, by words, by project.
    let (_, v) = get(&c, &laptop, "/memory/decisions").await;
    assert_eq!(ids(&v, "decisions"), vec![w.active.id.to_string()]);
    assert_eq!(v["machines"], json!([{"id": laptop.id, "name": "laptop"}]));
    assert_eq!(
        v["decisions"][0]["author"],
        json!({"machine": "laptop"}),
        "{v}"
    );
    let (_, v) = get(&c, &laptop, "/memory/decisions?all=true").await;
    assert_eq!(
        ids(&v, "decisions"),
        vec![w.superseded.id.to_string(), w.active.id.to_string()]
    );
    let (_, v) = get(&c, &laptop, "/memory/decisions?all=true&q=rows&project=api").await;
    assert_eq!(ids(&v, "decisions"), vec![w.superseded.id.to_string()]);
    let (status, v) = get(&c, &laptop, "/memory/decisions?project=nowhere").await;
    assert_eq!(status, 404, "{v}");
    let (_, v) = get(
        &c,
        &laptop,
        "/memory/iteration?project=github.com%2Facme%2Fapi",
    )
    .await;
    assert_eq!(v["iteration"]["id"], json!(w.iteration.id));
    assert_eq!(ids(&v, "decisions"), vec![w.active.id.to_string()]);
    assert_eq!(ids(&v, "commits"), vec![w.commit.id.to_string()]);
    assert_eq!(ids(&v, "events"), vec![w.event.id.to_string()]);
    for record in [
        &v["iteration"],
        &v["decisions"][0],
        &v["commits"][0],
        &v["events"][0],
    ] {
        assert_eq!(record["author"], json!({"machine": "laptop"}), "{v}");
    }
    let (status, v) = get(&c, &laptop, "/memory/iteration").await;
    assert_eq!(status, 400, "{v}");

    // MCP: the same answers as cited text.
    let mut mcp = Client::new(&c, Some(&laptop));
    mcp.initialize().await;
    let text = mcp.call_ok("memory_decisions", json!({})).await;
    assert!(text.contains(&format!("[D#{}]", w.active.id)), "{text}");
    assert!(text.contains("chosen: opaque base64 cursors"), "{text}");
    assert!(
        text.contains("rationale: clients must not build them"),
        "{text}"
    );
    assert!(
        text.contains("alternatives: do nothing; ask again later"),
        "{text}"
    );
    assert!(text.contains("@laptop"), "{text}");
    assert!(!text.contains(&w.superseded.id.to_string()), "{text}");
    let text = mcp
        .call_ok(
            "memory_decisions",
            json!({"all": true, "project": "api", "query": "rows"}),
        )
        .await;
    assert!(
        text.contains(&format!("[D#{}]", w.superseded.id)) && text.contains("— superseded"),
        "{text}"
    );
    assert!(!text.contains(&w.active.id.to_string()), "{text}");

    for args in [
        json!({"project": "api"}),
        json!({"id": format!("[I#{}]", w.iteration.id)}),
    ] {
        let text = mcp.call_ok("memory_get_iteration", args).await;
        for cite in [
            format!("[I#{}]", w.iteration.id),
            format!("[D#{}]", w.active.id),
            "[C#0f1e2d3]".to_string(),
            format!("[E#{}]", w.event.id),
        ] {
            assert!(text.contains(&cite), "{cite} in {text}");
        }
        assert!(!text.contains(&w.superseded.id.to_string()), "{text}");
    }
    let (error, text) = mcp.call("memory_get_iteration", json!({})).await;
    assert!(error, "{text}");
    let text = mcp
        .call_ok(
            "memory_search_remote",
            json!({"query": "cursors", "type": "decision"}),
        )
        .await;
    assert!(text.contains(&format!("[D#{}]", w.active.id)), "{text}");
    assert!(!text.contains("[C#"), "{text}");
}

#[tokio::test]
async fn another_account_never_reads_or_touches_knowledge() {
    let c = Central::start().await;
    let acme = c.account("acme").await;
    let laptop = c.machine(acme, "laptop").await;
    let other = c.account("other").await;
    let mallory = c.machine(other, "mallory").await;
    let w = record_work(&c, &laptop).await;
    let a_id = w.active.id;
    let mine = |text: &str| {
        [
            w.iteration.id,
            w.active.id,
            w.superseded.id,
            w.commit.id,
            w.event.id,
        ]
        .iter()
        .any(|id| text.contains(&id.to_string()))
            || text.contains("0f1e2d3")
    };

    // Reads: nothing, or not found, never A's records.
    let r = search(&c, &mallory, "q=cursors").await;
    assert!(r.hits.is_empty(), "{r:?}");
    for path in [
        "/memory/decisions?all=true",
        "/memory/changes?since=0&types=knowledge",
        "/memory/restore?since=0&types=knowledge",
    ] {
        let (status, v) = get(&c, &mallory, path).await;
        assert_eq!(status, 200, "{path}: {v}");
        assert!(!mine(&v.to_string()), "{path}: {v}");
    }
    for path in [
        "/memory/decisions?project=github.com%2Facme%2Fapi".to_string(),
        format!("/memory/iteration?id={}", w.iteration.id),
        "/memory/iteration?project=api".to_string(),
    ] {
        let (status, v) = get(&c, &mallory, &path).await;
        assert_eq!(status, 404, "{path}: {v}");
        // The answer names what was asked for, and nothing A holds.
        let text = v.to_string();
        for held in ["Keyset", "cursors", "0f1e2d3", "laptop"] {
            assert!(!text.contains(held), "{path}: {v}");
        }
    }
    let mut mcp = Client::new(&c, Some(&mallory));
    mcp.initialize().await;
    let text = mcp.call_ok("memory_decisions", json!({"all": true})).await;
    assert!(!mine(&text), "{text}");
    let text = mcp
        .call_ok("memory_search_remote", json!({"query": "cursors"}))
        .await;
    assert!(!mine(&text), "{text}");
    let (error, text) = mcp
        .call(
            "memory_get_iteration",
            json!({"id": w.iteration.id.to_string()}),
        )
        .await;
    assert!(error && text.contains("not found"), "{text}");

    // Writes: no erasure of A's decision, and a push of its id is B's own record.
    let before = row(&c, acme, a_id).await;
    let (status, v) = delete(&c, &mallory, &format!("/memory/records/{a_id}")).await;
    assert_eq!(status, 404, "{v}");
    let mut forged = w.active.clone();
    forged.meta.machine_id = mallory.id;
    forged.meta.updated = stamp(0);
    if let KnowledgeBody::Decision(d) = &mut forged.body {
        d.rationale = "overwritten by mallory".into();
    }
    let r = c.push_ok(&mallory, &[forged.clone().into()]).await;
    assert_eq!(
        r,
        vec![RecordOutcome::Applied {
            id: *a_id.as_uuid()
        }]
    );
    let mut tomb = forged.clone();
    tomb.meta.deleted = true;
    tomb.meta.updated = stamp(1);
    c.push_ok(&mallory, &[tomb.into()]).await;
    assert_eq!(row(&c, acme, a_id).await, before, "A's row is untouched");
    let (_, v) = get(&c, &laptop, "/memory/decisions").await;
    let text = v.to_string();
    assert!(
        text.contains("clients must not build them") && !text.contains("mallory"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remote_context_starts_with_the_projects_standing_knowledge() {
    use solaria_shared::knowledge::{Confidence, MemoryType};
    use solaria_shared::wire::ContextResponse;
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let s = session(laptop.id, stamp(0));
    let o = observation(laptop.id, s.id, stamp(1), "cargo test billing");
    let standing = knowledge(
        &laptop,
        stamp(2),
        decision(
            "No ORM for the billing tables",
            "plain SQL through sqlx",
            "billing reports need window functions an ORM hides",
        ),
    );
    let mut old = knowledge(
        &laptop,
        stamp(3),
        decision("Offset pagination", "offsets", "simple"),
    );
    if let KnowledgeBody::Decision(d) = &mut old.body {
        d.status = Standing::Superseded;
    }
    let preference = knowledge(
        &laptop,
        stamp(4),
        KnowledgeBody::Memory(Memory {
            memory_type: MemoryType::Preference,
            content: "deploy staging only from the release branch".into(),
            ..Memory::default()
        }),
    );
    let inferred = knowledge(
        &laptop,
        stamp(5),
        KnowledgeBody::Memory(Memory {
            content: "the team might drop Redis".into(),
            confidence: Confidence::new(0.6).expect("confidence"),
            ..Memory::default()
        }),
    );
    let records: Vec<WireRecord> = vec![
        wire(s.clone()),
        wire(o),
        WireRecord::Knowledge(standing.clone()),
        WireRecord::Knowledge(old.clone()),
        WireRecord::Knowledge(preference.clone()),
        WireRecord::Knowledge(inferred),
    ];
    c.push_ok(&laptop, &records).await;

    let ctx: ContextResponse = get_ok(&c, &laptop, "/memory/context/api").await;
    let text = &ctx.text;
    let knowledge_at = text
        .find("## Decisions and knowledge")
        .unwrap_or_else(|| panic!("knowledge first: {text}"));
    let activity_at = text
        .find("## Recent sessions")
        .unwrap_or_else(|| panic!("then the sessions: {text}"));
    assert!(knowledge_at < activity_at, "{text}");
    let section = &text[knowledge_at..activity_at];
    assert!(
        section.contains(&format!("[D#{}]", standing.id))
            && section.contains("decision: No ORM for the billing tables — chose plain SQL through sqlx (why: billing reports need window functions an ORM hides)"),
        "{section}"
    );
    assert!(
        section.contains(&format!("[M#{}]", preference.id))
            && section.contains("preference: deploy staging only from the release branch"),
        "{section}"
    );
    assert!(
        !text.contains("Offset pagination") && !text.contains("might drop Redis"),
        "superseded and inferred ones are left out: {text}"
    );
    assert_eq!(
        ctx.sessions,
        vec![s.id],
        "the session of `cargo test billing`: {text}"
    );
}
