//! engram's memory brought in through the real binary, from its export and from
//! the chunks its git sync commits, in the shapes engram's Go types give them
//! (`internal/store/store.go`, `internal/sync/sync.go`): decisions become
//! decisions, preferences and facts memories (an agent's, so proposals where they
//! say how to work), the rest notes of their sessions; a topic revised in engram
//! updates its record; a secret and a private span never reach the store; a
//! foreign or damaged file is refused with nothing touched.

use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::{Value, json};
use solaria_tests::edge::Edge;
use std::io::Write;
use std::path::Path;

const SECRET: &str = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";

/// engram's lists: two sessions (one in the edge's project directory, one in a
/// project this machine never saw), their prompts and observations.
fn lists(m: &Edge, auth_decision: &str) -> Value {
    json!({
        "sessions": [
            {"id": "s-1", "project": "api", "directory": m.project.display().to_string(),
             "started_at": "2026-11-20 09:00:00", "ended_at": "2026-11-20 10:00:00",
             "summary": "Moved sessions to rotating refresh tokens"},
            {"id": "s-2", "project": "website", "directory": "/nowhere/website",
             "started_at": "2026-11-21 09:00:00"}
        ],
        "observations": [
            {"id": 1, "session_id": "s-1", "type": "decision", "title": "Rotate refresh tokens",
             "content": auth_decision, "project": "api", "scope": "project",
             "topic_key": "decision/auth-model", "revision_count": 1, "duplicate_count": 0,
             "created_at": "2026-11-20 09:10:00", "updated_at": "2026-11-20 09:10:00"},
            {"id": 2, "session_id": "s-1", "type": "preference", "title": "Small commits",
             "content": "The user wants one change per commit", "project": "api", "scope": "personal",
             "revision_count": 1, "duplicate_count": 0,
             "created_at": "2026-11-20 09:20:00", "updated_at": "2026-11-20 09:20:00"},
            {"id": 3, "session_id": "s-1", "type": "learning", "title": "Token table",
             "content": format!("Tokens live in auth_tokens; test key {SECRET} <private>vault 7731</private>"),
             "project": "api", "scope": "project", "revision_count": 1, "duplicate_count": 0,
             "created_at": "2026-11-20 09:30:00", "updated_at": "2026-11-20 09:30:00"},
            {"id": 4, "session_id": "s-1", "type": "bugfix", "title": "Expiry off by one",
             "content": "renew_jwt compared with <= instead of <", "tool_name": null, "project": "api",
             "scope": "project", "revision_count": 1, "duplicate_count": 0,
             "created_at": "2026-11-20 09:40:00", "updated_at": "2026-11-20 09:40:00"},
            {"id": 5, "session_id": "s-2", "type": "discovery", "title": "Old pages",
             "content": "The blog is gone", "project": "website", "scope": "project",
             "revision_count": 1, "duplicate_count": 0, "created_at": "2026-11-21 09:10:00",
             "updated_at": "2026-11-21 09:10:00", "deleted_at": "2026-11-21 09:30:00"}
        ],
        "prompts": [
            {"id": 1, "session_id": "s-1", "content": "why do refresh tokens expire early?",
             "project": "api", "created_at": "2026-11-20 09:01:00"}
        ]
    })
}

fn export_file(m: &Edge, name: &str, auth_decision: &str) -> std::path::PathBuf {
    let mut export = lists(m, auth_decision);
    export["version"] = json!("0.1.0");
    export["exported_at"] = json!("2026-11-22 10:00:00");
    let path = m.root.path().join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(&export).expect("json")).expect("write");
    path
}

fn import(m: &Edge, path: &Path) -> Value {
    let path = path.to_str().expect("utf-8 path");
    m.json(&m.project, &["import", "engram", path, "--json"])
}

#[test]
fn an_engram_export_becomes_decisions_memories_and_notes_of_this_machine() {
    let m = Edge::new("laptop");
    let file = export_file(
        &m,
        "engram-export.json",
        "Refresh tokens rotate on every renewal",
    );
    let report = import(&m, &file);
    assert_eq!(
        report["stored"],
        json!({"decision": 1, "memory": 2, "observation": 2, "session": 2, "summary": 1}),
        "{report}"
    );
    assert!(
        report["skipped"].to_string().contains("deleted in engram"),
        "{report}"
    );

    let decisions = m.json(&m.project, &["decisions", "--json"]).to_string();
    assert!(
        decisions.contains("Rotate refresh tokens")
            && decisions.contains("topic:decision/auth-model"),
        "{decisions}"
    );
    let memories = m.json(&m.project, &["memories", "--json", "--all"]);
    let fact = memories
        .as_array()
        .expect("memories")
        .iter()
        .find(|k| k["body"]["memory_type"] == "fact")
        .expect("the learning, a fact");
    assert_eq!(
        fact["body"]["confidence"], 0.79,
        "an agent's memory: {fact}"
    );
    assert!(
        memories
            .to_string()
            .contains("Small commits: The user wants one change per commit")
    );
    let hits = m.json(&m.project, &["search", "renew_jwt", "--json"]);
    assert_eq!(hits[0]["title"], "bugfix: Expiry off by one", "{hits}");
    assert_eq!(
        hits[0]["project"], "github.com/acme/api",
        "the session's directory says the project"
    );
    assert_eq!(
        m.strings("SELECT project_key FROM sessions ORDER BY started_at"),
        ["github.com/acme/api", "website"]
    );
    assert!(
        !m.stores(SECRET) && !m.stores("7731"),
        "no secret or private span stored"
    );

    let again = import(&m, &file);
    assert_eq!(again["stored"], json!({}), "{again}");
    assert_eq!(again["updated"], json!({}), "{again}");

    // engram rewrote the topic in place: the decision here follows.
    let revised = export_file(
        &m,
        "revised.json",
        "Refresh tokens rotate, and reuse locks the account",
    );
    let third = import(&m, &revised);
    assert_eq!(third["updated"], json!({"decision": 1}), "{third}");
    assert_eq!(third["stored"], json!({}), "{third}");
    let why = m.ok_in(&m.project, &["why", "refresh tokens"]);
    assert!(why.contains("reuse locks the account"), "{why}");
}

#[test]
fn engrams_sync_chunks_are_read_in_their_manifests_order() {
    let m = Edge::new("laptop");
    let repo = m.root.path().join("repo");
    let chunks = repo.join(".engram/chunks");
    std::fs::create_dir_all(&chunks).expect("chunks dir");
    let mut first = lists(&m, "Refresh tokens rotate on every renewal");
    first["observations"] = json!([first["observations"][0].clone()]);
    let mut second = lists(&m, "Refresh tokens rotate; the old one is revoked");
    second["observations"] = json!([second["observations"][0].clone()]);
    second["sessions"] = Value::Null;
    second["prompts"] = Value::Null;
    second["mutations"] = json!([{"seq": 1, "entity": "observation", "op": "delete"}]);
    for (id, chunk) in [("a1b2c3d4", &first), ("e5f6a7b8", &second)] {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(&serde_json::to_vec(chunk).expect("json"))
            .expect("gzip");
        std::fs::write(
            chunks.join(format!("{id}.jsonl.gz")),
            gz.finish().expect("gzip"),
        )
        .expect("chunk");
    }
    std::fs::write(
        repo.join(".engram/manifest.json"),
        serde_json::to_vec_pretty(&json!({"version": 1, "chunks": [
            {"id": "a1b2c3d4", "created_by": "ana", "created_at": "2026-11-20T10:00:00Z", "sessions": 2, "memories": 1, "prompts": 1},
            {"id": "e5f6a7b8", "created_by": "ana", "created_at": "2026-11-21T10:00:00Z", "sessions": 0, "memories": 1, "prompts": 0}
        ]}))
        .expect("json"),
    )
    .expect("manifest");
    let report = import(&m, &repo);
    assert_eq!(report["stored"]["decision"], 1, "{report}");
    assert!(
        report["skipped"].to_string().contains("1 sync mutations"),
        "{report}"
    );
    let why = m.ok_in(&m.project, &["why", "refresh tokens"]);
    assert!(
        why.contains("the old one is revoked"),
        "the later chunk's version: {why}"
    );
}

#[test]
fn a_foreign_or_damaged_engram_file_is_refused_and_nothing_is_touched() {
    let m = Edge::new("laptop");
    m.decide_no_orm();
    let before = m.store_bytes();
    let refused = |path: &Path| m.refused(&["import", "engram", path.to_str().expect("path")]);
    let text = m.root.path().join("notes.md");
    std::fs::write(&text, "# notes\n").expect("write");
    assert!(refused(&text).contains("not an engram export"));
    let newer = m.root.path().join("newer.json");
    std::fs::write(&newer, r#"{"version": "1.0.0", "sessions": []}"#).expect("write");
    assert!(
        refused(&newer).contains("version 1.0.0"),
        "{}",
        refused(&newer)
    );
    assert!(refused(m.root.path()).contains("no manifest.json"));
    let mut damaged = lists(&m, "x");
    damaged["version"] = json!("0.1.0");
    damaged["observations"][2]["created_at"] = json!("yesterday");
    let bad = m.root.path().join("bad.json");
    std::fs::write(&bad, serde_json::to_vec(&damaged).expect("json")).expect("write");
    let said = refused(&bad);
    assert!(
        said.contains("observation 3: created_at \"yesterday\" is not a time"),
        "{said}"
    );
    assert_eq!(m.store_bytes(), before, "nothing stored was touched");
}
