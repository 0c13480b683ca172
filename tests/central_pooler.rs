//! The central service behind PgBouncer in transaction mode (Debian's 1.18, which keeps
//! no prepared statements): every endpoint answers, with clients of the service
//! sharing four PostgreSQL server connections, and the operator's commands work too.

use futures_util::future::join_all;
use serde_json::{Value, json};
use solaria_central::storage::{Databases, Storage};
use solaria_shared::embedding::WireEmbedding;
use solaria_shared::knowledge::{Iteration, Knowledge, KnowledgeBody, KnowledgeId};
use solaria_shared::wire::WireRecord;
use solaria_tests::central::{Central, Machine, Options, delete, get};
use solaria_tests::central_mcp::Client;
use solaria_tests::pg::Server;
use solaria_tests::records::{decision, observation, project, session, stamp, wire};
use sqlx::{Connection, PgConnection};

/// The tests' made-up model of 8 dimensions.
const MODEL: &str = "test-model/8d";

/// A machine's pushed work: a session, a note with its vector, a decision, an
/// iteration.
async fn push_work(c: &Central, m: &Machine, word: &str) -> (String, String) {
    let s = session(m.id, stamp(0));
    let o = observation(m.id, s.id, stamp(1), &format!("{word} hangar inspection"));
    let d = Knowledge::new(
        KnowledgeId::new(),
        m.id,
        stamp(2),
        project(),
        None,
        decision(
            &format!("{word} moorings"),
            "steel cables",
            "they hold in wind",
        ),
    );
    let mut vector = vec![0.0f32; 8];
    vector[0] = 1.0;
    let i = Knowledge::new(
        KnowledgeId::new(),
        m.id,
        stamp(3),
        project(),
        None,
        KnowledgeBody::Iteration(Iteration {
            title: format!("{word} fleet"),
            description: "Inspect every hangar".into(),
            branch: "feat/fleet".into(),
            ..Iteration::default()
        }),
    );
    let records: Vec<WireRecord> = vec![wire(s.clone()), wire(o.clone()), wire(d), wire(i)];
    let embeddings = vec![WireEmbedding::encode(
        *o.id.as_uuid(),
        o.meta.updated,
        MODEL,
        &vector,
    )];
    let r = c
        .client
        .post(c.at("/memory/sync"))
        .bearer_auth(&m.jwt)
        .json(&json!({"records": records, "embeddings": embeddings}))
        .send()
        .await
        .expect("push");
    assert_eq!(r.status(), 200, "push through the pooler");
    let answer: Value = r.json().await.expect("sync answer");
    assert!(answer.get("embeddings_refused").is_none(), "{answer}");
    (s.id.to_string(), o.id.to_string())
}

async fn ok(c: &Central, m: &Machine, path: &str) -> Value {
    let (status, body) = get(c, m, path).await;
    assert_eq!(status, 200, "GET {path} through the pooler: {body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_answers_through_pgbouncer_in_transaction_mode() {
    let primary = Server::primary();
    let pooler = primary.pooler();
    let mut admin = PgConnection::connect(&primary.url).await.expect("admin");
    sqlx::raw_sql("CREATE DATABASE solaria")
        .execute(&mut admin)
        .await
        .expect("create database");
    let direct = primary.database("solaria");
    let pooled = pooler.database("solaria");

    let storage = Storage::connect_to(Databases {
        primary: &direct,
        pooled: Some(&pooled),
        standby: None,
        max_connections: 16,
    })
    .await
    .expect("connect");
    storage
        .migrate()
        .await
        .expect("migrations, on the direct connection");
    assert!(storage.meaning().is_on(), "{}", storage.meaning().line());
    let c = Central::serve(storage.clone(), Options::default()).await;

    // Sign-up and sign-in, for six machines at once.
    let account = c.account("acme").await;
    let names = ["a", "b", "c", "d", "e", "f"];
    let machines = join_all(names.iter().map(|n| c.machine(account, n))).await;

    // Pushes and reads of all six at once: 16 clients of the service on the pooler's
    // 4 server connections, so that a statement prepared by one would be met by
    // another's.
    let words = [
        "zeppelin",
        "airship",
        "dirigible",
        "balloon",
        "blimp",
        "glider",
    ];
    let pushed = join_all(machines.iter().zip(words).map(|(m, w)| push_work(&c, m, w))).await;
    let served = &c;
    let reads = join_all(machines.iter().zip(words).map(|(m, w)| async move {
        let c = served;
        let hits = ok(c, m, &format!("/memory/search?q={w}")).await;
        assert!(
            hits["hits"].as_array().is_some_and(|h| !h.is_empty()),
            "{w}: {hits}"
        );
        ok(c, m, "/memory/changes?since=0&embeddings=test-model%2F8d").await;
        ok(c, m, "/memory/context/github.com%2Facme%2Fapi").await;
        ok(c, m, "/memory/decisions?all=true").await
    }))
    .await;
    assert!(reads.iter().all(|d| d.to_string().contains("moorings")));

    let m = &machines[0];
    let (session_id, note_id) = &pushed[0];
    for path in [
        "/memory/machines".to_string(),
        "/memory/shared".to_string(),
        format!("/memory/timeline/{session_id}"),
        "/memory/restore?since=0".to_string(),
        "/memory/iteration?project=github.com%2Facme%2Fapi".to_string(),
    ] {
        ok(&c, m, &path).await;
    }
    let by_meaning = c
        .client
        .post(c.at("/memory/search"))
        .bearer_auth(&m.jwt)
        .json(&json!({"q": "hangar", "mode": "semantic",
            "vector": {"model": MODEL, "values": [1.0, 0, 0, 0, 0, 0, 0, 0]}}))
        .send()
        .await
        .expect("search by meaning");
    assert_eq!(by_meaning.status(), 200);
    let found: Value = by_meaning.json().await.expect("answer");
    assert!(found.to_string().contains(note_id.as_str()), "{found}");
    for path in ["/healthz", "/readyz"] {
        let r = c.client.get(c.at(path)).send().await.expect("health");
        assert_eq!(r.status(), 200, "{path}");
    }

    let mut mcp = Client::new(&c, Some(m));
    mcp.initialize().await;
    let text = mcp
        .call_ok("memory_search_remote", json!({"query": "zeppelin"}))
        .await;
    assert!(text.contains("zeppelin"), "{text}");

    // Erasures, each through the pooler.
    for (who, path) in [
        (0, format!("/memory/records/{note_id}")),
        (0, format!("/memory/sessions/{session_id}")),
        (2, format!("/memory/machines/{}/data", machines[2].id)),
        (1, "/memory/projects/github.com%2Facme%2Fapi".to_string()),
        (3, "/memory/account".to_string()),
    ] {
        let (status, body) = delete(&c, &machines[who], &path).await;
        assert_eq!(status, 200, "DELETE {path}: {body}");
    }
    c.stop().await;
}
