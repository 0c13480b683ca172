//! Semantic search when things go wrong, through the real `solaria` binary: an
//! embedding pass killed with SIGKILL halfway, and a model whose weights are
//! corrupt. Neither may lose a record, and search by words must keep working.
//!
//! Needs `SOLARIA_TEST_MODEL_DIR` (all-MiniLM-L6-v2), set by `deploy/test.sh`.

use serde_json::Value;
use solaria_tests::edge::Edge;
use solaria_tests::semantic::{
    configure_model, copy_model, corrupt_weights, minilm, queued, records, search, stats,
    vector_rows,
};
use std::time::{Duration, Instant};

/// A prompt long enough to be cut at the model's 128 tokens, different for each `i`,
/// so that an embedding pass over a few hundred of them takes seconds.
fn long_prompt(i: usize) -> String {
    let topics = [
        "the payment webhook retries",
        "the nightly database backup",
        "the websocket reconnect logic",
        "the feature flag rollout",
        "the image thumbnail worker",
    ];
    let topic = topics[i % topics.len()];
    format!(
        "note {i}: while reviewing {topic} we found that request number {i} was handled twice \
         because the idempotency key was computed after the body was parsed; the fix moves the \
         key computation before parsing, adds a unique index on (tenant, key), logs the \
         duplicate with its trace id, and keeps a metric of how often it happens per tenant so \
         that support can see whether customer {} is affected before they report it. We also \
         wrote down that the staging environment needs the same index, that the migration must \
         run before the deploy, and that the old rows with duplicated keys must be merged first.",
        i * 7 + 3
    )
}

/// `PRAGMA integrity_check` of the machine's store.
fn integrity(edge: &Edge) -> String {
    edge.db()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity check")
}

/// Every record has exactly one of: a vector, a place in the queue; and the two
/// tables of the vector index agree.
fn assert_vectors_consistent(edge: &Edge) {
    let observations = vector_rows(edge, "observation_vectors");
    assert_eq!(
        observations,
        vector_rows(edge, "observation_embeddings"),
        "first-pass keys and float vectors agree"
    );
    let vectors = observations + vector_rows(edge, "summary_vectors");
    assert_eq!(
        vectors + queued(edge),
        records(edge),
        "each record has a vector or waits for one ({vectors} vectors, {} waiting)",
        queued(edge)
    );
}

#[test]
fn an_embedding_pass_killed_halfway_loses_nothing_and_the_next_one_finishes() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    // Small batches: many commits, so the kill lands between two of them or inside one.
    let path = edge.data().join("config.toml");
    let config = std::fs::read_to_string(&path).expect("config");
    std::fs::write(
        &path,
        config.replace("[search]\n", "[search]\nembed_batch = 4\n"),
    )
    .expect("config");
    let n = 240;
    for i in 0..n {
        edge.prompt("s1", &long_prompt(i));
    }
    let total = records(&edge);
    assert!(total >= n as i64, "{total} records");
    assert_eq!(queued(&edge), total);

    let mut child = edge
        .cmd()
        .args(["embed"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn solaria embed");
    let started = Instant::now();
    let made = loop {
        // vec0 is only readable with sqlite-vec; the float twin is a plain table.
        let made = edge
            .db()
            .query_row("SELECT count(*) FROM observation_embeddings", [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap_or(0);
        if made >= 8 {
            break made;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no vector after two minutes"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    assert!(
        made < total,
        "the pass was killed before it finished ({made} of {total})"
    );

    assert_eq!(integrity(&edge), "ok");
    assert_eq!(records(&edge), total, "no record lost");
    assert!(queued(&edge) > 0, "the rest still waits");
    assert_vectors_consistent(&edge);

    let out = edge.ok(&["embed"]);
    assert!(out.contains("0 record(s) still waiting"), "{out}");
    assert_eq!(queued(&edge), 0);
    assert_vectors_consistent(&edge);
    // And the vectors work: a question in other words finds the thumbnail notes.
    let hits = search(&edge, "semantic", "resizing pictures in a background job");
    let top = hits[0]["title"].as_str().expect("title");
    assert!(top.contains("image thumbnail worker"), "{hits:?}");
}

#[test]
fn corrupt_weights_leave_search_by_words_working_and_say_what_to_do() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    let installed = tempfile::tempdir().expect("tempdir");
    copy_model(&model, installed.path());
    configure_model(&edge, installed.path());
    edge.prompt(
        "s1",
        "renew_jwt refreshes the access token before each request",
    );
    edge.prompt("s1", "the camera permission dialog crashes the android app");
    edge.ok(&["embed"]);
    assert_eq!(stats(&edge)["search"]["live_mode"], "hybrid");

    corrupt_weights(installed.path());

    // A search without --mode falls back to words and says why on stderr.
    let out = edge.run(&["search", "--json", "renew_jwt"]);
    assert!(out.status.success(), "{out:?}");
    let hits: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        hits[0]["title"]
            .as_str()
            .is_some_and(|t| t.contains("renew_jwt")),
        "{hits:?}"
    );
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(
        warning.contains("searched by words only") && warning.contains("solaria model install"),
        "{warning}"
    );
    let text = edge.ok(&["search", "renew_jwt"]);
    assert!(text.contains("lexical search"), "{text}");

    // Asking for meaning explicitly is an error that names the model and the way out,
    // once (not the same cause three times over).
    let out = edge.run(&["search", "--mode", "hybrid", "token refresh"]);
    assert!(!out.status.success());
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.contains(&installed.path().display().to_string())
            && error.contains("solaria model install")
            && error.contains("--mode lexical"),
        "{error}"
    );
    assert_eq!(error.trim().lines().count(), 1, "{error}");
    let status = edge.ok(&["model", "status"]);
    assert!(status.contains("does not load"), "{status}");

    // The daemon: a new record waits, the failed load is logged, nothing is lost.
    edge.prompt(
        "s1",
        "the release notes generator skips merged pull requests",
    );
    let before = records(&edge);
    let out = edge.run(&["serve", "--once"]);
    assert!(out.status.success(), "{out:?}");
    let log = std::fs::read_to_string(edge.data().join("logs/serve.log")).expect("serve.log");
    assert!(log.contains("embedding failed"), "{log}");
    assert_eq!(records(&edge), before);
    assert_eq!(
        queued(&edge),
        1,
        "the new record still waits for its vector"
    );
    let hits = search(&edge, "lexical", "release notes");
    assert_eq!(hits.len(), 1, "{hits:?}");

    // A good model again: the waiting record gets its vector, meaning works again.
    copy_model(&model, installed.path());
    edge.ok(&["embed"]);
    assert_eq!(queued(&edge), 0);
    let hits = search(&edge, "hybrid", "token refresh");
    assert!(
        hits[0]["title"]
            .as_str()
            .is_some_and(|t| t.contains("renew_jwt")),
        "{hits:?}"
    );
}
