//! Restore with vectors: how long until a fresh machine answers a search by
//! meaning, and what the vectors cost on the wire. The real `solaria` binary
//! against the real central service over TLS on loopback, a throwaway PostgreSQL.
//!
//! A laptop holds `SOLARIA_BENCH_VECTORS_N` observations (default 100,000) with a
//! vector each: one made by the real model from a real text (the record a
//! paraphrase must find), the others unit vectors made up here (embedding 100k
//! texts takes ~1.5 h on this machine, which is what the feature saves). It syncs;
//! a fresh desktop with the same model restores and searches by meaning.
//!
//! ```sh
//! cargo build --release -p solaria-edge --bin solaria -p solaria-central && \
//!   SOLARIA_BENCH_MODEL=~/.cache/solaria/models/all-minilm-l6-v2 \
//!   cargo bench -p solaria-tests --bench vectors_restore
//! ```

use flate2::Compression;
use flate2::write::GzEncoder;
use solaria_edge::store::{Store, vectors};
use solaria_shared::{
    Observation, ObservationId, ObservationKind, Project, RecordMeta, Session, SessionId,
    UnixMillis,
};
use solaria_tests::central::{Central, Options};
use solaria_tests::edge::Edge;
use solaria_tests::semantic::configure_model;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const CAMERA: &str = "the mobile app crashes when the camera permission is denied";
const CAMERA_PARAPHRASE: &str = "the phone application dies if the user refuses photo access";

/// A tiny deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self, dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim)
            .map(|_| (self.next() % 2001) as f32 / 1000.0 - 1.0)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}

/// `n` observations of 60 words each, through the store API.
fn fill(edge: &Edge, n: usize, rng: &mut Rng) {
    const WORDS: &[&str] = &[
        "error",
        "src",
        "test",
        "cargo",
        "refresh",
        "token",
        "migration",
        "database",
        "handler",
        "config",
        "deploy",
        "cache",
        "retry",
        "timeout",
        "schema",
        "index",
        "query",
    ];
    let mut store = Store::open(&edge.db_path(), "bench").expect("store");
    let me = store.machine_id();
    let project = Project {
        key: "github.com/acme/api".into(),
        name: "api".into(),
    };
    for chunk in 0..n.div_ceil(1000) {
        store
            .write(|w| {
                let meta = |updated| RecordMeta {
                    machine_id: me,
                    updated,
                    deleted: false,
                };
                let s = Session {
                    id: SessionId::new(),
                    meta: meta(w.tick()),
                    project: project.clone(),
                    agent_session_id: format!("bench-{chunk}"),
                    cwd: "/work/api".into(),
                    agent: "claude-code".into(),
                    source: "startup".into(),
                    started_at: UnixMillis::now(),
                    ended_at: None,
                };
                w.insert_session(&s)?;
                for _ in 0..1000.min(n - chunk * 1000) {
                    let mut word = || WORDS[(rng.next() % WORDS.len() as u64) as usize];
                    let text: Vec<&str> = (0..60).map(|_| word()).collect();
                    let updated = w.tick();
                    w.insert_observation(&Observation {
                        id: ObservationId::new(),
                        meta: meta(updated),
                        session_id: s.id,
                        project: project.clone(),
                        kind: ObservationKind::ToolUse,
                        tool_name: Some("Bash".into()),
                        title: format!("Bash: cargo test {}", word()),
                        input: format!("{{\"command\": \"cargo test {}\"}}", word()),
                        response: format!("{{\"stdout\": \"{}\"}}", text.join(" ")),
                        files: vec![],
                        metadata: serde_json::json!({}),
                        tags: vec![],
                        created_at: UnixMillis::now(),
                    })?;
                }
                Ok(())
            })
            .expect("fill");
    }
}

/// Gives every queued record a made-up unit vector, as the embedding pass would.
fn made_up_vectors(edge: &Edge, rng: &mut Rng) {
    let mut store = Store::open(&edge.db_path(), "bench").expect("store");
    let dim = vectors::index_model(store.conn())
        .expect("index")
        .expect("the model's index")
        .dimension;
    loop {
        let work = vectors::next_work(store.conn(), 1000, UnixMillis(0)).expect("work");
        if work.is_empty() {
            break;
        }
        let made: Vec<Vec<f32>> = work
            .iter()
            .filter(|w| w.text.is_some())
            .map(|_| rng.unit(dim))
            .collect();
        vectors::complete(&mut store, &work, &made).expect("complete");
    }
}

fn timed(edge: &Edge, args: &[&str]) -> (Duration, String) {
    let t = Instant::now();
    let out = edge.ok(args);
    (t.elapsed(), out)
}

fn gzip(bytes: &[u8]) -> usize {
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(bytes).expect("gzip");
    gz.finish().expect("gzip").len()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(model) = std::env::var_os("SOLARIA_BENCH_MODEL").map(PathBuf::from) else {
        eprintln!("set SOLARIA_BENCH_MODEL to a model directory (all-minilm-l6-v2)");
        return;
    };
    let n: usize = std::env::var("SOLARIA_BENCH_VECTORS_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let c = Central::start_with(Options::bench()).await;
    let acct = c.account("bench").await;
    let laptop = Edge::new("laptop");
    laptop.enroll(&c, acct).await;
    configure_model(&laptop, &model);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);

    eprintln!("filling the laptop with {n} observations and their vectors…");
    tokio::task::block_in_place(|| {
        laptop.ok(&["embed"]); // the index, for the model
        fill(&laptop, n - 1, &mut rng);
        made_up_vectors(&laptop, &mut rng);
        laptop.prompt("s1", CAMERA);
        laptop.ok(&["embed"]);
    });
    let (push, out) = tokio::task::block_in_place(|| timed(&laptop, &["sync"]));
    eprintln!("{out}");

    // The feed as a restoring machine reads it, with and without the vectors.
    let probe = c.machine(acct, "probe").await;
    let fingerprint: String = sqlx::query_scalar("SELECT model FROM memory_vectors LIMIT 1")
        .fetch_one(c.storage.pool())
        .await
        .expect("a vector");
    // Records only; with vectors in f32 (what an edge that does not ask gets); with
    // vectors in int8 (what an edge of this version asks for).
    let mut bytes = [(0usize, 0usize); 3];
    for (k, with) in [None, Some("f32"), Some("i8")].into_iter().enumerate() {
        let mut since = 0i64;
        loop {
            let mut req = c
                .client
                .get(c.at("/memory/changes"))
                .query(&[("since", since.to_string()), ("limit", "1000".into())])
                .query(&[("types", "knowledge")])
                .bearer_auth(&probe.jwt);
            if let Some(encoding) = with {
                req = req.query(&[
                    ("embeddings", fingerprint.as_str()),
                    ("embedding_encoding", encoding),
                ]);
            }
            let body = req.send().await.expect("feed").bytes().await.expect("body");
            bytes[k].0 += body.len();
            bytes[k].1 += gzip(&body);
            let page: serde_json::Value = serde_json::from_slice(&body).expect("page");
            since = page["next"].as_i64().expect("next");
            if page["more"] != true {
                break;
            }
        }
    }

    // The same restore into a machine without the model: records only.
    let bare = Edge::new("bare");
    bare.enroll(&c, acct).await;
    let (bare_restore, _) = tokio::task::block_in_place(|| timed(&bare, &["restore"]));

    let desktop = Edge::new("desktop");
    desktop.enroll(&c, acct).await;
    configure_model(&desktop, &model);
    let (restore, out) = tokio::task::block_in_place(|| timed(&desktop, &["restore"]));
    eprintln!("{out}");
    let (search, out) = tokio::task::block_in_place(|| {
        timed(
            &desktop,
            &["search", "--json", "--mode", "semantic", CAMERA_PARAPHRASE],
        )
    });
    let hits: Vec<serde_json::Value> = serde_json::from_str(&out).expect("hits");
    assert_eq!(hits[0]["title"].as_str(), Some(CAMERA), "{hits:?}");
    let queued = desktop.count("SELECT count(*) FROM vector_queue");

    let mb = |b: usize| b as f64 / 1_000_000.0;
    println!("\nrestore with vectors, {n} observations, the real `solaria` binary over TLS\n");
    println!("| case | seconds |");
    println!("|---|---|");
    println!(
        "| first sync (push) of the records and their vectors | {:.1} |",
        push.as_secs_f64()
    );
    println!(
        "| restore (pull) into a fresh machine, vectors stored | {:.1} |",
        restore.as_secs_f64()
    );
    println!(
        "| then the first `search --mode semantic` (model load included) | {:.1} |",
        search.as_secs_f64()
    );
    println!(
        "| **until semantic search answers** | **{:.1}** |",
        (restore + search).as_secs_f64()
    );
    println!(
        "| restore into a machine without the model (records only) | {:.1} |",
        bare_restore.as_secs_f64()
    );
    println!("\nrecords still waiting for an embedding pass after the restore: {queued}\n");
    println!("| change feed read by a restore | bytes | gzip (fast) |");
    println!("|---|---|---|");
    println!(
        "| records only | {:.1} MB | {:.1} MB |",
        mb(bytes[0].0),
        mb(bytes[0].1)
    );
    for (k, label) in [(1, "f32"), (2, "int8")] {
        println!(
            "| records and vectors ({label}) | {:.1} MB | {:.1} MB |",
            mb(bytes[k].0),
            mb(bytes[k].1)
        );
        println!(
            "| the vectors alone ({label}) | {:.1} MB ({} bytes a record) | {:.1} MB |",
            mb(bytes[k].0 - bytes[0].0),
            (bytes[k].0 - bytes[0].0) / n,
            mb(bytes[k].1.saturating_sub(bytes[0].1))
        );
    }
}
