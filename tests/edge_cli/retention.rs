//! Forgetting and pruning through the real binary.

use serde_json::json;
use solaria_tests::edge::Edge;
use solaria_tests::payloads::*;

fn age_everything(m: &Edge, days: i64) {
    let db = m.db();
    for table in ["observations", "summaries"] {
        db.execute(
            &format!("UPDATE {table} SET created_at = created_at - ?1 * 86400000"),
            [days],
        )
        .expect("age");
    }
    db.execute(
        "UPDATE sessions SET started_at = started_at - ?1 * 86400000",
        [days],
    )
    .expect("age");
}

#[test]
fn prune_applies_retention_without_a_server() {
    let m = Edge::new("test-machine");
    m.write_config("[retention]\nlocal = true\n");
    let p = project(m.root.path(), "api", None);
    m.hook("user-prompt-submit", prompt("old", &p, "ancient history"));
    m.hook("stop", stop("old", &p));
    age_everything(&m, 40);
    m.hook("user-prompt-submit", prompt("new", &p, "fresh work"));
    let out = m.ok_in(&p, &["prune"]);
    assert!(out.contains("Removed 1 observation"), "{out}");
    assert_eq!(m.count("SELECT count(*) FROM observations"), 1);
    assert_eq!(
        m.count("SELECT count(*) FROM summaries"),
        1,
        "summaries live 365 days"
    );
    assert!(
        m.ok_in(&p, &["search", "--type", "prompt", "ancient"])
            .contains("No matches")
    );
}

#[test]
fn retention_never_deletes_what_is_not_yet_pushed_once_a_server_is_configured() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    m.write_config("[sync]\nserver = \"https://memory.example.com\"\n");
    for n in 0..4 {
        m.hook(
            "user-prompt-submit",
            prompt("s", &p, &format!("old work {n}")),
        );
    }
    age_everything(&m, 400);
    // The server acknowledged the first two changes only.
    let db = m.db();
    let cursor: i64 = db
        .query_row(
            "SELECT updated FROM observations WHERE title = 'old work 1'",
            [],
            |r| r.get(0),
        )
        .expect("stamp");
    db.execute(
        "INSERT INTO sync_state (key, value) VALUES ('push_cursor', ?1)",
        [cursor.to_string()],
    )
    .expect("cursor");
    // A record pulled from another machine is on the server by definition.
    db.execute(
        "UPDATE observations SET machine_id = '01900000-0000-7000-8000-000000000001' WHERE title = 'old work 3'",
        [],
    )
    .expect("foreign");
    drop(db);
    m.ok_in(&p, &["prune"]);
    let left: Vec<String> = m.strings("SELECT title FROM observations ORDER BY title");
    assert_eq!(
        left,
        vec!["old work 2"],
        "only the unpushed local change survives"
    );
    assert_eq!(
        m.count("SELECT count(*) FROM sessions"),
        1,
        "its session stays with it"
    );

    // Without the server, with local retention asked for, the same record goes.
    m.write_config("[retention]\nlocal = true\n");
    m.ok_in(&p, &["prune"]);
    assert_eq!(m.count("SELECT count(*) FROM observations"), 0);
}

#[test]
fn forget_erases_content_and_leaves_a_newer_tombstone() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", Some("git@github.com:acme/api.git"));
    m.hook(
        "user-prompt-submit",
        prompt("s1", &p, "remember the launch codes"),
    );
    m.hook(
        "post-tool-use",
        tool(
            "s1",
            &p,
            "Bash",
            json!({"command": "echo launch"}),
            json!({"stdout": "launch"}),
        ),
    );
    m.hook("stop", stop("s1", &p));
    m.hook(
        "user-prompt-submit",
        prompt("s2", &p, "other launch session"),
    );

    let hit = m.json(&p, &["search", "--json", "codes"]);
    let id = hit[0]["id"].as_str().expect("id").to_string();
    let before: i64 = m
        .db()
        .query_row(
            "SELECT updated FROM observations WHERE id = ?1",
            [&id],
            |r| r.get(0),
        )
        .expect("row");
    m.ok_in(&p, &["forget", &id]);
    let (deleted, title, input, after): (i64, String, String, i64) = m
        .db()
        .query_row(
            "SELECT deleted, title, input, updated FROM observations WHERE id = ?1",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("tombstone kept");
    assert_eq!((deleted, title.as_str(), input.as_str()), (1, "", ""));
    assert!(after > before, "the tombstone is a newer version");
    assert!(
        m.ok_in(&p, &["search", "codes"]).contains("No matches"),
        "the session's summary is rewritten without the forgotten prompt"
    );
    let summary: String = m
        .db()
        .query_row("SELECT text FROM summaries", [], |r| r.get(0))
        .expect("summary");
    assert!(
        !summary.contains("launch codes") && summary.contains("echo launch"),
        "{summary}"
    );

    // A whole session: its observations, summary and the session itself.
    let session: String = m
        .db()
        .query_row(
            "SELECT session_id FROM observations WHERE title = 'Bash: echo launch'",
            [],
            |r| r.get(0),
        )
        .expect("s");
    let out = m.ok_in(&p, &["forget", "--session", &session]);
    assert!(
        out.contains("1 observation(s), 1 summar(y/ies), 1 session(s)"),
        "{out}"
    );
    assert_eq!(
        m.count("SELECT count(*) FROM observations WHERE deleted = 0"),
        1
    );

    // A project by name.
    m.ok_in(&p, &["forget", "--project", "api"]);
    assert_eq!(
        m.count("SELECT count(*) FROM observations WHERE deleted = 0"),
        0
    );
    assert_eq!(
        m.count("SELECT count(*) FROM sessions WHERE deleted = 0"),
        0
    );
    let missing = m.run_in(&p, &["forget", "--project", "nope"]);
    assert!(!missing.status.success());
}

/// Checkpoints the WAL into the main file and empties it.
fn checkpoint(m: &Edge) {
    m.db()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .expect("checkpoint");
}

#[test]
fn forget_leaves_no_copy_of_the_text_in_the_file() {
    const WORD: &str = "quokkaxylograph";
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    m.hook(
        "user-prompt-submit",
        prompt("s1", &p, &format!("the vault phrase is {WORD} remember it")),
    );
    m.hook(
        "post-tool-use",
        tool(
            "s1",
            &p,
            "Bash",
            json!({"command": format!("echo {WORD}")}),
            json!({"stdout": WORD}),
        ),
    );
    m.hook(
        "user-prompt-submit",
        prompt("s1", &p, "unrelated later work"),
    );
    checkpoint(&m);
    assert!(m.stores(WORD), "the word is in the file before forget");

    for hit in m
        .json(&p, &["search", "--json", WORD])
        .as_array()
        .expect("hits")
    {
        let id = hit["id"].as_str().expect("id");
        m.ok_in(&p, &["forget", id]);
    }
    assert!(
        m.ok_in(&p, &["search", WORD]).contains("No matches"),
        "forgotten"
    );
    assert!(
        !m.stores(WORD),
        "forget left the text in the database file or its WAL"
    );
    checkpoint(&m);
    assert!(!m.stores(WORD), "nor after a checkpoint");
}

/// Events a hook left in the spool (the store was held past its wait) and nothing
/// captured since are payloads as the agent sent them, not yet redacted:
/// forgetting their session removes them too, and no other session's, nor another
/// agent's session of the same id.
#[test]
fn forgetting_a_session_removes_its_events_still_waiting_in_the_spool() {
    use solaria_hook::protocol::Event;
    use solaria_hook::spool::Spool;
    let m = Edge::new("test-machine");
    let p = m.project.clone();
    m.hook("session-start", session_start("s-gone", &p));
    m.hook("session-start", session_start("s-kept", &p));
    let spool = Spool::for_process(&m.data(), Some(&m.runtime_dir())).expect("spool");
    let at = 1_795_500_000_000;
    let waiting = |event: Event, payload: serde_json::Value| {
        spool
            .put(&event, at, payload.to_string().as_bytes())
            .expect("spooled")
    };
    let gone = [
        waiting(
            Event::ClaudeCode("user-prompt-submit".into()),
            prompt("s-gone", &p, "the vault code is 7731-waiting"),
        ),
        waiting(Event::ClaudeCode("stop".into()), stop("s-gone", &p)),
    ];
    let kept = [
        waiting(
            Event::ClaudeCode("user-prompt-submit".into()),
            prompt("s-kept", &p, "another session's prompt"),
        ),
        waiting(
            Event::OpenCode("chat.message".into()),
            solaria_tests::opencode::chat_message("s-gone", &p, "OpenCode's own session"),
        ),
    ];
    let session = m
        .strings("SELECT id FROM sessions WHERE agent_session_id = 's-gone'")
        .pop()
        .expect("the session is stored");

    let out = m.ok(&["forget", "--session", &session]);
    assert!(
        gone.iter().all(|f| !f.exists()),
        "the session's events are gone: {out}"
    );
    assert!(kept.iter().all(|f| f.exists()), "the others wait on");
    assert_eq!(m.spooled(), 2);
    assert!(
        out.contains("Removed 2 event(s) of the session that were waiting to be captured"),
        "{out}"
    );
}
