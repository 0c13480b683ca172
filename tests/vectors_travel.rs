//! Vectors travel with their records: a vector made on one machine is pushed beside
//! its record, kept by the central service for that record version and model, and
//! pulled by the machines with the same model, which then search by meaning at
//! once, without an embedding pass. Another model's vectors are never mixed in; a
//! malformed vector is refused with its reason while its record syncs.
//!
//! The model tests need `SOLARIA_TEST_MODEL_DIR` (all-MiniLM-L6-v2) and
//! `SOLARIA_TEST_MULTILINGUAL_MODEL_DIR` (multilingual-e5-small); see
//! `tests/support/semantic.rs`.

use serde_json::{Value, json};
use solaria_central::storage::ErasureTarget;
use solaria_shared::embedding::{
    EMBEDDINGS_CAPABILITY, EMBEDDINGS_I8_CAPABILITY, VectorEncoding, WireEmbedding,
};
use solaria_shared::wire::{RecordOutcome, SyncResponse, WireRecord};
use solaria_tests::central::Central;
use solaria_tests::edge::Edge;
use solaria_tests::records::{observation, session, stamp};
use solaria_tests::semantic::{
    configure_model, laptop_and_desktop, minilm, multilingual, queued, search, stats,
};

/// The record a paraphrase must find.
const CAMERA: &str = "the mobile app crashes when the camera permission is denied";
/// The same problem in other words: not one word in common with [`CAMERA`].
const CAMERA_PARAPHRASE: &str = "the phone application dies if the user refuses photo access";

/// A few prompts on unrelated topics, [`CAMERA`] among them, and a decision.
fn some_work(edge: &Edge) {
    for p in [
        "upgrade tokio to 1.40 and fix the deprecation warnings",
        "add rate limiting to the login endpoint to stop brute force password guessing",
        "the CSS grid layout breaks on narrow screens, switch the sidebar to flexbox",
        CAMERA,
        "add an index on orders.created_at, the monthly report query does a full table scan",
        "the image upload fails for files over 10 MB, raise the nginx body limit",
        "cache the exchange rates for an hour instead of fetching them per request",
        "translate the onboarding screens to Spanish and German",
    ] {
        edge.prompt("s1", p);
    }
    edge.decide_no_orm();
}

/// Vectors stored in the machine's index.
fn vectors(edge: &Edge) -> i64 {
    stats(edge)["search"]["vectors"].as_i64().expect("vectors")
}

/// Vectors waiting to be pushed.
fn outbox(edge: &Edge) -> i64 {
    edge.count("SELECT count(*) FROM vector_outbox")
}

fn titles(hits: &[Value]) -> Vec<&str> {
    hits.iter()
        .map(|h| h["title"].as_str().expect("title"))
        .collect()
}

/// Vectors central keeps, per model.
async fn central_vectors(c: &Central) -> Vec<(String, i64)> {
    sqlx::query_as("SELECT model, count(*) FROM memory_vectors GROUP BY model ORDER BY model")
        .fetch_all(c.storage.pool())
        .await
        .expect("count vectors")
}

/// A store upgraded from before version 8 holds vectors that never went into the
/// outbox; version 9 flags them, and the next sync pushes every one of them once, so
/// the account's other machines need not embed those records again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_made_before_they_travelled_are_pushed_by_the_next_sync() {
    let Some(model) = minilm() else { return };
    let c = Central::start_tls().await;
    let (laptop, desktop) = laptop_and_desktop(&c, &model).await;
    some_work(&laptop);
    laptop.ok(&["embed"]);
    let made = vectors(&laptop);
    assert!(made >= 9, "{made}");
    // The state an upgraded store is in: its vectors were made when nothing pushed
    // them (no outbox rows), and migration 0009 has just set its flag.
    laptop
        .db()
        .execute_batch(
            "DELETE FROM vector_outbox;
             UPDATE meta SET value = 'pending' WHERE key = 'vector_outbox_backfill';",
        )
        .expect("an upgraded store");

    let out = laptop.ok(&["sync"]);
    assert!(out.contains(&format!("Vectors: pushed {made}")), "{out}");
    assert_eq!(
        central_vectors(&c)
            .await
            .iter()
            .map(|(_, n)| n)
            .sum::<i64>(),
        made
    );
    let again = laptop.ok(&["sync"]);
    assert!(
        !again.contains("Vectors: pushed"),
        "pushed once, not at every sync: {again}"
    );

    let out = desktop.ok(&["restore"]);
    assert!(out.contains(&format!("pulled {made} (records")), "{out}");
    assert_eq!(queued(&desktop), 0, "every record came with its vector");
    let hits = search(&desktop, "semantic", CAMERA_PARAPHRASE);
    assert_eq!(titles(&hits).first(), Some(&CAMERA), "{hits:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_machine_answers_by_meaning_without_an_embedding_pass() {
    let Some(model) = minilm() else { return };
    let c = Central::start_tls().await;
    let (laptop, desktop) = laptop_and_desktop(&c, &model).await;

    some_work(&laptop);
    laptop.ok(&["embed"]);
    let made = vectors(&laptop);
    assert!(made >= 9, "observations and the decision: {made}");
    assert_eq!(outbox(&laptop), made);
    let out = laptop.ok(&["sync"]);
    assert!(out.contains(&format!("Vectors: pushed {made}")), "{out}");
    assert_eq!(outbox(&laptop), 0);
    assert_eq!(central_vectors(&c).await.len(), 1);

    // The desktop never runs `solaria embed` nor a daemon.
    let out = desktop.ok(&["restore"]);
    assert!(out.contains(&format!("pulled {made} (records")), "{out}");
    assert_eq!(queued(&desktop), 0, "every record came with its vector");
    assert_eq!(vectors(&desktop), made);
    let knowledge: i64 = {
        solaria_edge::store::vectors::register_extension();
        desktop.count("SELECT count(*) FROM knowledge_embeddings")
    };
    assert_eq!(knowledge, 1, "the decision's vector travelled too");
    let hits = search(&desktop, "semantic", CAMERA_PARAPHRASE);
    assert_eq!(titles(&hits).first(), Some(&CAMERA), "{hits:?}");
    // What was pulled is not pushed back.
    assert_eq!(outbox(&desktop), 0);

    // A new version of a record: its old vector no longer travels, here or there.
    let id: String = laptop
        .db()
        .query_row(
            "SELECT id FROM observations WHERE title = ?1",
            [CAMERA],
            |r| r.get(0),
        )
        .expect("stored");
    laptop.ok(&["forget", &id]);
    laptop.ok(&["sync"]);
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM memory_vectors WHERE record_id = $1")
        .bind(uuid::Uuid::parse_str(&id).expect("uuid"))
        .fetch_one(c.storage.pool())
        .await
        .expect("count");
    assert_eq!(left, 0, "an erased record's vector is gone from central");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_of_another_model_are_ignored_not_mixed() {
    let (Some(english), Some(multi)) = (minilm(), multilingual()) else {
        return;
    };
    let c = Central::start_tls().await;
    let acct = c.account("acme").await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    let third = Edge::new("third");
    for (edge, model) in [(&laptop, &english), (&desktop, &multi), (&third, &english)] {
        edge.enroll(&c, acct).await;
        configure_model(edge, model);
    }

    some_work(&laptop);
    laptop.ok(&["embed"]);
    let made = vectors(&laptop);
    laptop.ok(&["sync"]);

    // The desktop's model is another: it stores none of the laptop's vectors and
    // waits to embed every record itself.
    desktop.ok(&["sync"]);
    assert_eq!(vectors(&desktop), 0);
    assert_eq!(queued(&desktop), made);
    let out = desktop.ok(&["embed"]);
    assert!(out.contains(&format!("{made} vector(s) made")), "{out}");
    let out = desktop.ok(&["sync"]);
    assert!(out.contains(&format!("Vectors: pushed {made}")), "{out}");
    let kept = central_vectors(&c).await;
    assert_eq!(kept.len(), 2, "one set per model: {kept:?}");
    assert!(kept.iter().all(|(_, n)| *n == made), "{kept:?}");

    // A third machine with the laptop's model gets the laptop's vectors only: its
    // index keeps one model, and search by meaning works at once.
    third.ok(&["sync"]);
    assert_eq!(queued(&third), 0);
    assert_eq!(vectors(&third), made);
    let hits = search(&third, "semantic", CAMERA_PARAPHRASE);
    assert_eq!(titles(&hits).first(), Some(&CAMERA), "{hits:?}");
    // And the laptop, whose model is the same, pulls no vector of the desktop's.
    laptop.ok(&["sync"]);
    assert_eq!(vectors(&laptop), made);
}

/// A unit vector of `dim` values.
fn unit(seed: f32, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim).map(|i| ((i as f32 + 1.0) * seed).sin()).collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_vector_on_the_wire_is_refused_with_its_reason_and_its_record_syncs() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let s = session(m.id, stamp(-3000));
    let good = observation(m.id, s.id, stamp(-2000), "cargo test");
    let bad = observation(m.id, s.id, stamp(-1000), "cargo build");
    let model = "test-model/8d/abc";
    let mut truncated =
        WireEmbedding::encode(*bad.id.as_uuid(), bad.meta.updated, model, &unit(2.0, 8));
    truncated.data.truncate(20);
    let records: Vec<WireRecord> = vec![s.into(), good.clone().into(), bad.clone().into()];
    let body = json!({
        "records": records,
        "embeddings": [
            WireEmbedding::encode(*good.id.as_uuid(), good.meta.updated, model, &unit(1.0, 8)),
            truncated,
        ],
    });
    let r = c
        .client
        .post(c.at("/memory/sync"))
        .bearer_auth(&m.jwt)
        .json(&body)
        .send()
        .await
        .expect("push");
    assert_eq!(r.status(), 200);
    let answer: SyncResponse = r.json().await.expect("sync response");
    assert!(
        answer
            .results
            .iter()
            .all(|o| matches!(o, RecordOutcome::Applied { .. })),
        "every record is applied: {:?}",
        answer.results
    );
    assert_eq!(answer.embeddings_refused.len(), 1, "{answer:?}");
    let refusal = &answer.embeddings_refused[0];
    assert_eq!(refusal.id, *bad.id.as_uuid());
    assert!(
        refusal.reason.contains("truncated or corrupt"),
        "{}",
        refusal.reason
    );
    assert_eq!(central_vectors(&c).await, vec![(model.to_string(), 1)]);

    // A vector of a version the server does not hold is refused too.
    let stale = WireEmbedding::encode(*bad.id.as_uuid(), stamp(-5000), model, &unit(3.0, 8));
    let r = c
        .client
        .post(c.at("/memory/sync"))
        .bearer_auth(&m.jwt)
        .json(&json!({"records": [], "embeddings": [stale]}))
        .send()
        .await
        .expect("push");
    let answer: SyncResponse = r.json().await.expect("sync response");
    assert!(
        answer.embeddings_refused[0]
            .reason
            .contains("not its current live version"),
        "{answer:?}"
    );

    // Another account never sees the vectors; a reader that does not ask gets no
    // field it could not parse; the model named is the only one served.
    let other = c.machine(c.account("globex").await, "intruder").await;
    let feed = |m: &solaria_tests::central::Machine, q: &'static str| {
        let req = c
            .client
            .get(c.at(&format!("/memory/changes?since=0{q}")))
            .bearer_auth(&m.jwt);
        async move {
            req.send()
                .await
                .expect("feed")
                .json::<Value>()
                .await
                .expect("json")
        }
    };
    let desktop = c.machine(acct, "desktop").await;
    let plain = feed(&desktop, "").await;
    assert!(plain.get("embeddings").is_none(), "{plain}");
    let asked = feed(&desktop, "&embeddings=test-model/8d/abc").await;
    assert_eq!(asked["embeddings"].as_array().map(Vec::len), Some(1));
    assert!(
        asked["embeddings"][0].get("encoding").is_none(),
        "f32 unless asked: {asked}"
    );
    // Asked as int8: the same vector in a quarter of the bytes, pointing the same way.
    let small = feed(
        &desktop,
        "&embeddings=test-model/8d/abc&embedding_encoding=i8",
    )
    .await;
    let small: WireEmbedding =
        serde_json::from_value(small["embeddings"][0].clone()).expect("an embedding");
    let full: WireEmbedding =
        serde_json::from_value(asked["embeddings"][0].clone()).expect("an embedding");
    assert_eq!(small.encoding, VectorEncoding::I8);
    assert!(small.data.len() < full.data.len(), "{small:?}");
    let (a, b) = (
        small.decode().expect("valid"),
        full.decode().expect("valid"),
    );
    let cosine: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    assert!(cosine > 0.999, "{cosine}");
    let refused = c
        .client
        .get(c.at("/memory/changes?since=0&embeddings=test-model/8d/abc&embedding_encoding=f16"))
        .bearer_auth(&desktop.jwt)
        .send()
        .await
        .expect("feed");
    assert_eq!(
        refused.status(),
        400,
        "an encoding the server does not know"
    );
    assert!(
        feed(&desktop, "&embeddings=other/8d/x")
            .await
            .get("embeddings")
            .is_none()
    );
    // The machine that pushed a vector is not sent it back.
    assert!(
        feed(&m, "&embeddings=test-model/8d/abc")
            .await
            .get("embeddings")
            .is_none()
    );
    assert!(
        feed(&other, "&embeddings=test-model/8d/abc")
            .await
            .get("embeddings")
            .is_none()
    );

    // The server says it keeps vectors.
    let token: Value = c
        .client
        .post(c.at("/memory/token"))
        .json(&json!({"machine_id": m.id, "credential": m.credential}))
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("json");
    assert!(
        token["types"]
            .as_array()
            .is_some_and(|t| t.iter().any(|x| x == EMBEDDINGS_CAPABILITY)
                && t.iter().any(|x| x == EMBEDDINGS_I8_CAPABILITY)),
        "{token}"
    );

    // Erasing the record takes its vector.
    c.storage
        .erase(
            acct,
            m.id,
            &ErasureTarget::Record(*good.id.as_uuid()),
            solaria_central::storage::Reach::Operator,
        )
        .await
        .expect("erase")
        .expect("found");
    assert!(central_vectors(&c).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_vector_pulled_by_an_edge_is_refused_and_the_record_kept() {
    let Some(model) = minilm() else { return };
    let c = Central::start_tls().await;
    let (laptop, desktop) = laptop_and_desktop(&c, &model).await;
    laptop.prompt("s1", CAMERA);
    laptop.ok(&["embed"]);
    laptop.ok(&["sync"]);
    // Damage every stored vector in place (NaN values, the right length): what an
    // edge must never trust a server, or a network, about. (pgvector holds no NaN:
    // the damage goes in the bytes the feed reads when the indexed column is empty.)
    sqlx::query(
        "UPDATE memory_vectors SET embedding = NULL, data = decode(repeat('0000c07f', dimension), 'hex')",
    )
        .execute(c.storage.pool())
        .await
        .expect("damage");

    let out = desktop.ok(&["sync"]);
    assert!(
        out.contains("vector not kept") && out.contains("not a finite number"),
        "{out}"
    );
    let stored: i64 = desktop.count(&format!(
        "SELECT count(*) FROM observations WHERE title = '{CAMERA}'"
    ));
    assert_eq!(stored, 1, "the record synced");
    assert_eq!(vectors(&desktop), 0);
    assert_eq!(
        queued(&desktop),
        1,
        "it waits for this machine's own vector"
    );
    let out = desktop.ok(&["embed"]);
    assert!(out.contains("1 vector(s) made"), "{out}");
}
