//! claude-mem's memory brought in through the real binary, from a database made
//! with claude-mem 13.15.3's own DDL: its sessions, prompts, observations and
//! summaries become this machine's, in the right projects, with their times; a
//! second import adds nothing and a row changed at the source is updated in
//! place; a secret and a private span never reach the store; a foreign, newer
//! or damaged database is refused by name with nothing touched.

use serde_json::{Value, json};
use solaria_tests::claude_mem::{self, Observed};
use solaria_tests::edge::Edge;
use std::path::Path;

const SECRET: &str = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";
/// 2026-11-20, when the sessions below happened.
const THEN: i64 = 1_795_600_000_000;

/// Two sessions of `api` (the edge's project) and one of `website`, which this
/// memory has never seen.
fn a_claude_mem_database(path: &Path) {
    let db = claude_mem::create(path);
    let first = claude_mem::session(&db, "cc-1", "mem-1", "api", THEN);
    claude_mem::prompt(
        &db,
        first,
        "cc-1",
        1,
        &format!("Refresh keeps failing; my token is {SECRET} <private>client Initech</private>"),
        THEN + 1_000,
    );
    claude_mem::observation(
        &db,
        &Observed {
            memory: "mem-1",
            project: "api",
            kind: "bugfix",
            title: "Refresh tokens rotated on every renewal",
            narrative: "renew_jwt now issues a new refresh token and revokes the old one",
            facts: &[
                "the old token is revoked at once",
                "rotation runs in one transaction",
            ],
            concepts: &["how-it-works", "problem-solution"],
            files_modified: &["src/auth/refresh.rs"],
            at: THEN + 60_000,
        },
    );
    claude_mem::summary(
        &db,
        "mem-1",
        "api",
        [
            "Fix the token refresh",
            "stale tokens were reused",
            "rotation on renewal",
            "add a reuse alarm",
        ],
        THEN + 120_000,
    );
    claude_mem::summary(
        &db,
        "mem-1",
        "api",
        ["Add the reuse test", "", "reuse test added", ""],
        THEN + 180_000,
    );
    claude_mem::session(&db, "cc-2", "mem-2", "website", THEN + 3_600_000);
    claude_mem::observation(
        &db,
        &Observed {
            memory: "mem-2",
            project: "website",
            kind: "decision",
            title: "Static pages built with Zola",
            narrative: "Zola over Hugo: one binary, no theme lock-in",
            facts: &[],
            concepts: &["trade-off"],
            files_modified: &[],
            at: THEN + 3_660_000,
        },
    );
}

fn import(m: &Edge, db: &Path) -> Value {
    let path = db.to_str().expect("utf-8 path");
    m.json(&m.project, &["import", "claude-mem", path, "--json"])
}

#[test]
fn a_claude_mem_database_becomes_this_machines_memory_in_the_right_projects() {
    let m = Edge::new("laptop");
    let db = m.root.path().join("claude-mem.db");
    a_claude_mem_database(&db);

    let report = import(&m, &db);
    assert_eq!(
        report["stored"],
        json!({"observation": 3, "session": 2, "summary": 1}),
        "{report}"
    );
    assert_eq!(report["skipped"], json!([]), "{report}");

    let hits = m.json(&m.project, &["search", "renew_jwt", "--json"]);
    let hit = &hits[0];
    assert_eq!(
        hit["title"], "bugfix: Refresh tokens rotated on every renewal",
        "{hits}"
    );
    assert_eq!(
        hit["project"], "github.com/acme/api",
        "the edge's own project: {hits}"
    );
    assert_eq!(
        hit["created_at"],
        THEN + 60_000,
        "claude-mem's time is kept"
    );
    assert_eq!(hit["this_machine"], true, "attributed to this machine");

    let id = hit["id"].as_str().expect("id");
    let shown = m.json(&m.project, &["show", id, "--json"]);
    let record = shown.to_string();
    for part in [
        "rotation runs in one transaction",
        "src/auth/refresh.rs",
        "imported_from",
        "claude-mem",
    ] {
        assert!(record.contains(part), "{part} in {shown}");
    }

    let db_rows = m.strings(
        "SELECT agent || ' ' || source || ' ' || project_key FROM sessions ORDER BY started_at",
    );
    assert_eq!(
        db_rows,
        [
            "claude-code claude-mem github.com/acme/api",
            "claude-code claude-mem website"
        ]
    );
    let summary = m.strings("SELECT text || ' | ' || key_points FROM summaries");
    assert_eq!(summary.len(), 1, "one summary a session: {summary:?}");
    assert!(
        summary[0].contains("Fix the token refresh / Add the reuse test")
            && summary[0].contains("Next steps: add a reuse alarm"),
        "{summary:?}"
    );
    let context = m.ok_in(&m.project, &["context"]);
    assert!(context.contains("Fix the token refresh"), "{context}");

    let website = m.json(
        &m.project,
        &["search", "Zola", "--project", "website", "--json"],
    );
    assert_eq!(
        website[0]["title"], "decision: Static pages built with Zola",
        "{website}"
    );

    assert!(!m.stores(SECRET), "no secret reaches the store");
    assert!(!m.stores("Initech"), "no private span reaches the store");
}

#[test]
fn importing_again_adds_nothing_and_a_row_changed_at_the_source_is_updated_in_place() {
    let m = Edge::new("laptop");
    let db = m.root.path().join("claude-mem.db");
    a_claude_mem_database(&db);
    let first = import(&m, &db);
    let second = import(&m, &db);
    assert_eq!(second["stored"], json!({}), "{second}");
    assert_eq!(second["updated"], json!({}), "{second}");
    assert_eq!(second["unchanged"], first["stored"], "{second}");
    let count = |m: &Edge| m.count("SELECT count(*) FROM observations");

    let source = solaria_tests::claude_mem::open(&db);
    source
        .execute(
            "UPDATE observations SET narrative = 'renew_jwt rotates; reuse of an old token now locks the account' WHERE type = 'bugfix'",
            [],
        )
        .expect("edit");
    drop(source);
    let before = count(&m);
    let third = import(&m, &db);
    assert_eq!(third["updated"], json!({"observation": 1}), "{third}");
    assert_eq!(count(&m), before, "updated in place, not duplicated");
    let hits = m.json(&m.project, &["search", "locks the account", "--json"]);
    let bugfixes: Vec<&Value> = hits
        .as_array()
        .expect("hits")
        .iter()
        .filter(|h| h["title"] == "bugfix: Refresh tokens rotated on every renewal")
        .collect();
    assert_eq!(bugfixes.len(), 1, "{hits}");
    assert!(
        bugfixes[0]["snippet"].to_string().contains("**locks**"),
        "{hits}"
    );
}

#[test]
fn the_default_database_is_claude_mems_own() {
    let m = Edge::new("laptop");
    let dir = m.root.path().join("claude-mem-data");
    std::fs::create_dir_all(&dir).expect("dir");
    a_claude_mem_database(&dir.join("claude-mem.db"));
    let out = m
        .cmd_in(&m.project)
        .args(["import", "claude-mem"])
        .env("CLAUDE_MEM_DATA_DIR", &dir)
        .output()
        .expect("run");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("Imported from claude-mem") && said.contains("6 record(s) stored"),
        "{said}"
    );
}

#[test]
fn a_foreign_newer_or_damaged_database_is_refused_by_name_and_nothing_is_touched() {
    let m = Edge::new("laptop");
    m.decide_no_orm();
    let before = m.store_bytes();
    let refused = |db: &Path| m.refused(&["import", "claude-mem", db.to_str().expect("path")]);

    let text = m.root.path().join("notes.txt");
    std::fs::write(&text, "not a database at all, just words").expect("write");
    let said = refused(&text);
    assert!(
        said.contains("not a claude-mem database: not an SQLite database"),
        "{said}"
    );
    let said = refused(&m.db_path());
    assert!(
        said.contains("no schema_versions table"),
        "a SOLARIA store is not claude-mem's: {said}"
    );
    assert!(refused(&m.root.path().join("missing.db")).contains("is not a file"));

    let newer = m.root.path().join("newer.db");
    a_claude_mem_database(&newer);
    let db = solaria_tests::claude_mem::open(&newer);
    db.execute(
        "INSERT INTO schema_versions (version, applied_at) VALUES (50, 'x')",
        [],
    )
    .expect("v50");
    drop(db);
    let said = refused(&newer);
    assert!(
        said.contains("schema version 50") && said.contains("upgrade solaria"),
        "{said}"
    );

    let damaged = m.root.path().join("damaged.db");
    a_claude_mem_database(&damaged);
    let db = solaria_tests::claude_mem::open(&damaged);
    db.execute(
        "UPDATE observations SET created_at_epoch = 'yesterday' WHERE type = 'decision'",
        [],
    )
    .expect("damage");
    let row: i64 = db
        .query_row(
            "SELECT id FROM observations WHERE type = 'decision'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    drop(db);
    let said = refused(&damaged);
    assert!(
        said.contains(&format!("observations row {row} cannot be read")),
        "{said}"
    );
    assert!(said.contains("nothing was imported"), "{said}");

    assert_eq!(m.store_bytes(), before, "nothing stored was touched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imported_records_sync_like_captured_ones() {
    use solaria_tests::central::Central;
    let (c, account) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    laptop.enroll(&c, account).await;
    desktop.enroll(&c, account).await;
    let db = laptop.root.path().join("claude-mem.db");
    a_claude_mem_database(&db);
    import(&laptop, &db);
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);
    let hits = desktop.json(&desktop.project, &["search", "renew_jwt", "--json"]);
    assert_eq!(
        hits[0]["title"], "bugfix: Refresh tokens rotated on every renewal",
        "{hits}"
    );
    assert_eq!(hits[0]["machine_name"], "laptop", "{hits}");
    assert!(!desktop.stores("Initech") && !desktop.stores(SECRET));
}
