//! Hook capture through the real binary: every event type stored as a user would
//! expect, bad payloads dropped without breaking the agent, context injected.

use serde_json::{Value, json};
use solaria_tests::edge::Edge;
use solaria_tests::payloads::*;

#[test]
fn every_event_type_is_stored_as_expected() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", Some("git@github.com:acme/api.git"));
    let s = "5b1c2f0e-0000-4000-8000-000000000001";
    let out = m.hook("session-start", session_start(s, &p));
    assert!(
        out.stdout.is_empty(),
        "a first session has no context to inject"
    );
    m.hook(
        "user-prompt-submit",
        prompt(s, &p, "Fix the JWT refresh: renew_jwt fails after expiry"),
    );
    let file = p.join("src/auth/refresh.rs").display().to_string();
    m.hook(
        "post-tool-use",
        tool(s, &p, "Read", json!({"file_path": file}), json!({
            "type": "text",
            "file": {"filePath": file, "content": "pub fn renew_jwt() {}\n", "numLines": 1, "startLine": 1, "totalLines": 1}
        })),
    );
    m.hook(
        "post-tool-use",
        tool(s, &p, "Edit", json!({"file_path": file, "old_string": "fn renew_jwt() {}", "new_string": "fn renew_jwt(t: &Token) -> Result<Token> { refresh(t) }", "replace_all": false}),
            json!({"filePath": file, "oldString": "fn renew_jwt() {}", "newString": "…", "structuredPatch": [{"oldStart": 1, "lines": ["-a", "+b"]}], "userModified": false})),
    );
    m.hook(
        "post-tool-use",
        tool(s, &p, "Bash", json!({"command": "cargo test auth::refresh", "description": "Run the refresh tests"}),
            json!({"stdout": "error[E0308]: mismatched types\n  --> src/auth/refresh.rs:3:5", "stderr": "", "interrupted": false, "isImage": false})),
    );
    m.hook(
        "post-tool-use",
        tool(s, &p, "mcp__github__get_issue", json!({"owner": "acme", "repo": "api", "issue_number": 42}),
            json!([{"type": "text", "text": "{\"title\": \"Refresh token expires too early\", \"labels\": [{\"name\": \"bug\"}]}"}])),
    );
    let big = format!(
        "   Compiling api v0.1.0\n{}warning: unused import `Token`\nFinished in 42s",
        "   Compiling dep v1.0.0\n".repeat(20_000)
    );
    m.hook(
        "post-tool-use",
        tool(
            s,
            &p,
            "Bash",
            json!({"command": "cargo build --release"}),
            json!({"stdout": big, "stderr": "", "interrupted": false}),
        ),
    );
    m.hook(
        "post-tool-use",
        tool(s, &p, "TodoWrite", json!({"todos": [{"content": "fix refresh", "status": "completed", "activeForm": "Fixing"}, {"content": "add test", "status": "pending", "activeForm": "Adding"}]}), json!({"oldTodos": [], "newTodos": []})),
    );
    m.hook("stop", stop(s, &p));
    m.hook("session-end", session_end(s, &p));

    let db = m.db();
    let (key, name, ended): (String, String, Option<i64>) = db
        .query_row(
            "SELECT project_key, project_name, ended_at FROM sessions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("one session");
    assert_eq!(
        (key.as_str(), name.as_str()),
        ("github.com/acme/api", "api")
    );
    assert!(ended.is_some(), "SessionEnd closes the session");

    let titles: Vec<(String, String)> = db
        .prepare("SELECT kind, title FROM observations ORDER BY created_at, rowid")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let expected = [
        (
            "prompt",
            "Fix the JWT refresh: renew_jwt fails after expiry",
        ),
        ("tool_use", "Read src/auth/refresh.rs"),
        ("tool_use", "Edit src/auth/refresh.rs"),
        (
            "tool_use",
            "Bash: cargo test auth::refresh — Run the refresh tests",
        ),
        (
            "tool_use",
            "github.get_issue issue_number=42 owner=acme repo=api",
        ),
        ("tool_use", "Bash: cargo build --release"),
        ("tool_use", "TodoWrite: 2 items, 1 open"),
    ];
    let got: Vec<(&str, &str)> = titles
        .iter()
        .map(|(k, t)| (k.as_str(), t.as_str()))
        .collect();
    assert_eq!(got, expected);

    // The failing test run is flagged; the big build output is bounded, keeping its end.
    let (meta, response): (String, String) = db
        .query_row(
            "SELECT metadata, response FROM observations WHERE title LIKE 'Bash: cargo build%'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("build row");
    let meta: Value = serde_json::from_str(&meta).expect("metadata json");
    assert!(
        meta["response_truncated_bytes"]
            .as_u64()
            .expect("truncated")
            > 400_000
    );
    assert!(response.len() < 30_000, "bounded: {}", response.len());
    assert!(response.contains("Finished in 42s"), "the tail survives");
    let failing: i64 = db
        .query_row(
            "SELECT count(*) FROM observations WHERE json_extract(metadata, '$.error') = 1",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(failing, 1);

    // Nested MCP responses stay searchable.
    let hits = m.json(&p, &["search", "expires too early", "--json"]);
    assert_eq!(
        hits[0]["title"],
        "github.get_issue issue_number=42 owner=acme repo=api"
    );

    // One summary, stating the request, the change, the command and the error.
    let text: String = db
        .query_row("SELECT text FROM summaries", [], |r| r.get(0))
        .expect("summary");
    for part in [
        "Request: Fix the JWT refresh",
        "Changed: auth/refresh.rs",
        "`cargo test auth::refresh`",
        "Errors (1)",
    ] {
        assert!(text.contains(part), "summary lacks {part:?}: {text}");
    }
    assert!(
        m.hook_log().is_empty(),
        "no failures logged: {}",
        m.hook_log()
    );
}

#[test]
fn bad_payloads_are_logged_and_dropped_without_output() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "web", None);
    let bad: [&[u8]; 7] = [
        b"",
        b"   \n",
        b"{not json",
        b"[1, 2, 3]",
        b"{\"cwd\": \"/tmp\"}",
        b"{\"session_id\": 42}",
        b"\xff\xfe\x00garbage",
    ];
    for (i, payload) in bad.iter().enumerate() {
        for event in [
            "session-start",
            "user-prompt-submit",
            "post-tool-use",
            "post-tool-use-failure",
            "stop",
            "session-end",
        ] {
            let out = m.hook_raw(event, payload);
            assert!(out.stdout.is_empty(), "case {i} {event}: nothing printed");
        }
    }
    let log = m.hook_log();
    assert_eq!(
        log.lines().count(),
        bad.len() * 6,
        "every drop is logged:\n{log}"
    );
    assert!(
        log.contains("not valid JSON")
            && log.contains("no session_id")
            && log.contains("empty payload")
    );
    // A good payload after all that still lands.
    m.hook("user-prompt-submit", prompt("s-ok", &p, "still working"));
    assert_eq!(m.count("SELECT count(*) FROM observations"), 1);
}

#[test]
fn codex_and_gemini_events_that_cannot_be_used_are_logged_and_dropped_without_output() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "web", None);
    let client = solaria_tests::binary("solaria-hook");
    let data = m.data().display().to_string();
    let bad: [(&str, &str, &[u8]); 7] = [
        ("codex", "session-start", b"{not json"),
        ("codex", "user-prompt-submit", b"{\"cwd\": \"/tmp\"}"),
        // Events the agents do not send under these names.
        ("codex", "post-tool-use-failure", b"{\"session_id\": \"s\"}"),
        ("codex", "BeforeAgent", b"{\"session_id\": \"s\"}"),
        ("gemini", "before-agent", b"[1, 2]"),
        ("gemini", "after-tool", b""),
        ("gemini", "user-prompt-submit", b"{\"session_id\": \"s\"}"),
    ];
    for (agent, event, payload) in bad {
        let out = m.hook_args(&["hook", agent, event], payload);
        assert!(out.stdout.is_empty(), "{agent} {event}: nothing printed");
        // And through the small client the installers write into the agents' hooks.
        let out = m.hook_program(&client, &["--data-dir", &data, agent, event], payload);
        assert!(out.stdout.is_empty(), "{agent} {event}: nothing printed");
    }
    let log = m.hook_log();
    assert_eq!(
        log.lines().count(),
        bad.len() * 2,
        "every drop is logged:\n{log}"
    );
    for part in [
        "not valid JSON",
        "no session_id",
        "empty payload",
        "unknown Codex hook event \"BeforeAgent\"",
        "unknown Gemini CLI hook event \"user-prompt-submit\"",
    ] {
        assert!(log.contains(part), "{part}: {log}");
    }
    // Good ones land, recorded as each agent's.
    let good = |agent: &str, event: &str, session: &str| {
        m.hook_args(
            &["hook", agent, event],
            prompt(session, &p, "still working").to_string().as_bytes(),
        )
    };
    good("codex", "user-prompt-submit", "s-codex");
    good("gemini", "before-agent", "s-gemini");
    assert_eq!(
        m.strings("SELECT agent FROM sessions ORDER BY agent"),
        ["codex", "gemini"]
    );
}

#[test]
fn unknown_fields_and_missing_session_start_are_tolerated() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "web", None);
    let mut payload = tool(
        "no-start",
        &p,
        "Glob",
        json!({"pattern": "**/*.rs"}),
        json!({"filenames": ["a.rs"], "numFiles": 1}),
    );
    payload["a_field_from_the_future"] = json!({"nested": [1, 2]});
    payload
        .as_object_mut()
        .expect("object")
        .remove("transcript_path");
    m.hook("post-tool-use", &payload);
    assert_eq!(
        m.count("SELECT count(*) FROM sessions WHERE agent_session_id = 'no-start'"),
        1
    );
    assert_eq!(m.count("SELECT count(*) FROM observations"), 1);
}

/// Claude Code ends its `claude plugin …` commands with SessionEnd and nothing
/// before: the end of a session nothing was seen of, with nothing said, leaves no
/// session and no summary; one whose agent said something is kept.
#[test]
fn an_end_with_nothing_before_it_and_nothing_said_is_no_session() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "web", None);
    for (event, payload) in [
        ("session-end", session_end("empty", &p)),
        ("stop", stop("empty", &p)),
    ] {
        let out = m.hook(event, &payload);
        assert!(out.status.success() && out.stdout.is_empty());
    }
    assert_eq!(m.count("SELECT count(*) FROM sessions"), 0);
    assert_eq!(m.count("SELECT count(*) FROM summaries"), 0);

    let mut said = stop("late", &p);
    said["last_assistant_message"] = json!("The flaky upload test is fixed.");
    m.hook("stop", &said);
    assert_eq!(
        m.strings("SELECT agent_session_id FROM sessions"),
        ["late"],
        "a session whose end says something is kept, though its start was missed"
    );
}

#[test]
fn session_start_injects_knowledge_first_then_sessions_then_notable_events() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", Some("https://github.com/acme/api"));
    for n in 0..6 {
        let s = format!("earlier-{n}");
        m.hook("session-start", session_start(&s, &p));
        m.hook(
            "user-prompt-submit",
            prompt(
                &s,
                &p,
                &format!("Task {n}: {}", "make the refresh flow robust ".repeat(20)),
            ),
        );
        m.hook(
            "post-tool-use",
            tool(
                &s,
                &p,
                "Read",
                json!({"file_path": format!("/src/read_{n}.rs")}),
                json!({}),
            ),
        );
        let mut failure = base("PostToolUseFailure", &s, &p);
        failure["tool_name"] = json!("Bash");
        failure["tool_input"] = json!({"command": format!("cargo test case_{n}_fail")});
        failure["error"] = json!("Exit code 101\nerror[E0425]: cannot find function");
        m.hook("post-tool-use-failure", &failure);
        for k in 0..30 {
            m.hook(
                "post-tool-use",
                tool(
                    &s,
                    &p,
                    "Bash",
                    json!({"command": format!("cargo test case_{n}_{k}")}),
                    json!({"stdout": "ok", "stderr": ""}),
                ),
            );
        }
        m.hook("stop", stop(&s, &p));
    }
    // An empty session says nothing.
    m.hook("session-start", session_start("empty", &p));
    m.hook("stop", stop("empty", &p));
    // Knowledge of the project: a decision that stands, one superseded, a preference,
    // an open question.
    let old = m.json(
        &p,
        &[
            "decide",
            "--json",
            "--title",
            "Token store",
            "--chosen",
            "cookies",
        ],
    );
    let old = old["record"]["id"].as_str().expect("id").to_string();
    m.ok_in(
        &p,
        &[
            "supersede",
            &old,
            "--title",
            "Token store",
            "--chosen",
            "an encrypted keyring",
            "--rationale",
            "cookies leaked refresh tokens to subdomains. More text follows here.",
        ],
    );
    m.ok_in(
        &p,
        &[
            "remember",
            "-t",
            "preference",
            "run cargo test before every commit",
        ],
    );
    m.ok_in(
        &p,
        &[
            "remember",
            "-c",
            "0.3",
            "the refresh flow may move to a worker",
        ],
    );
    // Another project's memory never leaks into this one's context.
    let other = project(
        m.root.path(),
        "other",
        Some("https://github.com/acme/other"),
    );
    m.hook(
        "user-prompt-submit",
        prompt("x", &other, "unrelated secret project work"),
    );

    let out = m.hook("session-start", session_start("now", &p));
    let v: Value = serde_json::from_slice(&out.stdout).expect("SessionStart prints JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context text");
    let tokens = ctx.chars().count().div_ceil(4);
    assert!(
        tokens <= 2_000,
        "within the default budget: ~{tokens} tokens"
    );
    assert!(!ctx.contains("unrelated secret project"));
    // Knowledge first, then sessions, then notable events.
    let knowledge = ctx.find("## Decisions and knowledge").expect(ctx);
    let sessions = ctx.find("## Recent sessions").expect(ctx);
    let events = ctx.find("## Notable events").expect(ctx);
    assert!(knowledge < sessions && sessions < events, "{ctx}");
    assert!(
        ctx.contains(
            "decision: Token store — chose an encrypted keyring (why: cookies leaked refresh tokens to subdomains."
        ),
        "the decision that stands, with a one-line rationale: {ctx}"
    );
    assert!(
        !ctx.contains("chose cookies"),
        "the superseded one is left out: {ctx}"
    );
    assert!(
        ctx.contains("preference: run cargo test before every commit"),
        "{ctx}"
    );
    assert!(
        ctx.contains("the refresh flow may move to a worker (open question)"),
        "{ctx}"
    );
    // Errors and what came after them; no file reads, no routine calls.
    assert!(
        ctx.contains("[error]") && ctx.contains("case_5_fail"),
        "{ctx}"
    );
    assert!(ctx.contains("→ then [O#"), "what followed the error: {ctx}");
    assert!(
        !ctx.contains("read_5.rs"),
        "file reads are not notable: {ctx}"
    );
    assert!(
        !ctx.contains("case_5_29"),
        "routine calls are not notable: {ctx}"
    );
    assert!(
        ctx.find("case_5_fail") < ctx.find("case_4_fail"),
        "newest first"
    );
    // Every cited id resolves.
    let ids: Vec<&str> = ctx
        .split("[O#")
        .skip(1)
        .chain(ctx.split("[S#").skip(1))
        .chain(ctx.split("[D#").skip(1))
        .chain(ctx.split("[M#").skip(1))
        .map(|rest| &rest[..36])
        .collect();
    assert!(ids.len() >= 6 + 6 + 3, "{ids:?}");
    let shown = m.json(&p, &[&["show", "--json"][..], &ids[..]].concat());
    assert_eq!(shown.as_array().expect("array").len(), ids.len());
    // `--explain` says what was left out and why.
    let explained = m.ok_in(&p, &["context", "--explain"]);
    assert!(
        explained.contains("1 superseded, retracted or expired left out")
            && explained.contains("file reads, searches and routine tool calls are left out"),
        "{explained}"
    );

    // A smaller configured budget is honoured; a huge one stays under Claude Code's cap.
    m.write_config("[context]\ntoken_budget = 300\n");
    let out = m.hook("session-start", session_start("later", &p));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text");
    assert!(ctx.chars().count().div_ceil(4) <= 300);
    assert!(
        ctx.contains("## Decisions and knowledge"),
        "knowledge keeps its place: {ctx}"
    );
    let long = "x".repeat(130);
    for n in 0..40 {
        m.ok_in(
            &p,
            &[
                "decide",
                "--title",
                &format!("Decision {n} {long}"),
                "--chosen",
                &long,
                "--rationale",
                &long,
            ],
        );
    }
    m.write_config(
        "[context]\ntoken_budget = 32000\nmax_sessions = 500\nmax_observations = 5000\n",
    );
    let out = m.hook("session-start", session_start("huge", &p));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text");
    // The documented bound (under Claude Code's 10,000), the data block included.
    assert!(ctx.chars().count() <= 9_000, "{}", ctx.chars().count());
}

#[test]
fn a_broken_config_file_never_stops_capture() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "web", None);
    m.write_config("this is = = not toml [[[");
    m.hook("user-prompt-submit", prompt("s", &p, "keep capturing"));
    assert_eq!(m.count("SELECT count(*) FROM observations"), 1);
    assert!(m.hook_log().contains("config ignored"));
    let out = m.run_in(&p, &["stats"]);
    assert!(!out.status.success(), "the CLI reports the broken config");
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));
}

#[test]
fn skipped_tools_and_projects_are_not_captured() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "web", None);
    let secret = project(m.root.path(), "client-nda", None);
    m.write_config("[capture]\nskip_tools = [\"TodoWrite\"]\nskip_projects = [\"client-nda\"]\n");
    m.hook(
        "post-tool-use",
        tool("s", &p, "TodoWrite", json!({"todos": []}), json!({})),
    );
    m.hook(
        "post-tool-use",
        tool("s", &p, "Glob", json!({"pattern": "*"}), json!({})),
    );
    m.hook("user-prompt-submit", prompt("t", &secret, "confidential"));
    assert_eq!(m.count("SELECT count(*) FROM observations"), 1);
    assert_eq!(
        m.count("SELECT count(*) FROM sessions WHERE project_name = 'client-nda'"),
        0
    );
}

#[test]
fn failed_tool_calls_are_captured_as_errors() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    let mut payload = base("PostToolUseFailure", "s", &p);
    payload["tool_name"] = json!("Bash");
    payload["tool_input"] = json!({"command": "cargo test auth"});
    payload["tool_use_id"] = json!("toolu_fail");
    payload["error"] = json!("Exit code 101\nerror[E0425]: cannot find function `renew_jwt`");
    payload["is_interrupt"] = json!(false);
    m.hook("post-tool-use-failure", &payload);
    m.hook("stop", stop("s", &p));
    let (title, meta, response): (String, String, String) = m
        .db()
        .query_row(
            "SELECT title, metadata, response FROM observations",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("stored");
    assert_eq!(title, "Bash: cargo test auth");
    assert!(meta.contains("\"error\":true"), "{meta}");
    assert!(response.contains("cannot find function"));
    let summary: String = m
        .db()
        .query_row("SELECT text FROM summaries", [], |r| r.get(0))
        .expect("summary");
    assert!(
        summary.contains("Errors (1): Bash: cargo test auth"),
        "{summary}"
    );
    let found = m.json(&p, &["search", "--json", "renew_jwt"]);
    assert_eq!(found[0]["title"], "Bash: cargo test auth");
}

#[test]
fn a_stdin_that_never_closes_does_not_hang_the_agent() {
    let m = Edge::new("test-machine");
    m.write_config("[capture]\nhook_timeout_ms = 300\n");
    let mut child = std::process::Command::new(solaria())
        .args(["hook", "post-tool-use"])
        .env("SOLARIA_HOME", m.data_dir())
        .env("HOME", m.home())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Held open and never written until the hook has returned: returning at all is
    // giving up on it. The bound only turns a hook that waits for ever into a
    // failure: two hundred times its 300 ms.
    let stdin = child.stdin.take();
    let out = solaria_tests::output_within(
        child,
        std::time::Duration::from_secs(60),
        "a hook whose stdin never closes",
    );
    drop(stdin);
    assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty());
    assert!(
        m.hook_log().contains("gave up after 300 ms"),
        "{}",
        m.hook_log()
    );
}

/// Words of a `<private>` span, repeated to `bytes`.
fn words(text: &str, bytes: usize) -> String {
    text.repeat(bytes / text.len() + 1)[..bytes].to_string()
}

#[test]
fn a_private_span_cut_by_the_size_bound_never_leaves_the_machine() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    const PRIVATE_WORDS: [&str; 3] = ["heliotrope", "osprey", "kestrel4417"];
    // The span opens in the middle the bound drops and closes in the tail it keeps.
    let text = format!(
        "{} <private>{} kestrel4417</private> {}",
        words("public notes about the build ", 12_000),
        words("heliotrope osprey ", 10_400),
        words("closing remarks ", 1_600),
    );
    assert!(text.len() >= 24_000, "{}", text.len());
    m.hook("user-prompt-submit", prompt("s1", &p, &text));
    let stdout = format!(
        "{}\n<private>{}\n</private>\nbuild finished",
        words("compiling crate ", 10_000),
        words("osprey heliotrope ", 20_000),
    );
    m.hook(
        "post-tool-use",
        tool(
            "s1",
            &p,
            "Bash",
            json!({"command": "cargo build"}),
            json!({"stdout": stdout, "stderr": ""}),
        ),
    );

    let rows: Vec<(String, String, String)> = {
        let db = m.db();
        let mut stmt = db
            .prepare("SELECT title, input, response FROM observations ORDER BY created_at")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    assert_eq!(rows.len(), 2);
    let (_, input, _) = &rows[0];
    assert!(input.len() < text.len(), "the prompt was bounded");
    assert!(
        input.contains("osprey"),
        "the kept tail holds private text locally"
    );
    assert!(
        rows[1].2.contains("osprey"),
        "so does the kept tail of the output"
    );
    for (title, input, response) in &rows {
        for stored in [title, input, response] {
            let sent = solaria_shared::private::strip_private(stored);
            for word in PRIVATE_WORDS {
                assert!(!sent.contains(word), "{word} would be pushed: {sent}");
            }
        }
    }
    let sent = solaria_shared::private::strip_private(input);
    assert!(
        sent.starts_with("public notes") && sent.trim_end().ends_with("closing remarks"),
        "the public text around the span is kept: {sent}"
    );
    let sent = solaria_shared::private::strip_private(&rows[1].2);
    assert!(sent.contains("build finished"), "{sent}");
}

#[test]
fn a_hook_that_only_logs_leaves_a_private_data_dir() {
    use std::os::unix::fs::PermissionsExt;
    let m = Edge::new("test-machine");
    // A fresh SOLARIA_HOME: nothing exists until the hook's first contact.
    std::fs::remove_dir_all(m.data_dir()).expect("fresh home");
    m.hook_raw("user-prompt-submit", b"{not json");
    assert!(m.hook_log().contains("not valid JSON"), "{}", m.hook_log());
    assert!(!m.db_path().exists(), "only the logger wrote");
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
    assert_eq!(mode(&m.data_dir()), 0o700, "the data dir");
    assert_eq!(mode(&m.data_dir().join("logs")), 0o700, "its logs/");
    assert_eq!(mode(&m.data_dir().join("logs/hooks.log")), 0o600, "the log");

    // A data dir an older version left wide is narrowed on the next contact.
    std::fs::set_permissions(m.data_dir(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    m.hook_raw("stop", b"[1, 2]");
    assert_eq!(mode(&m.data_dir()), 0o700);
}
