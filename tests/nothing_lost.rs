//! "Nothing lost, nothing stuck", through the real `solaria` binary: every way
//! of naming a project (CLI and local API) and the error for one that is not
//! there; SOLARIA not capturing itself; retention that never deletes the only
//! copy, and a search that reaches into what retention removed (on a real
//! PostgreSQL behind the central service). Build the binary first
//! (`cargo build --workspace --all-targets`).

use reqwest::StatusCode;
use serde_json::{Value, json};
use solaria_tests::daemon::serve_with;
use solaria_tests::edge::Edge;
use std::path::{Path, PathBuf};

/// A second project of the same machine, `billing-api` at
/// `github.com/acme/billing-api`, with one prompt.
fn billing_project(edge: &Edge) -> PathBuf {
    let dir = edge.root.path().join("billing-api");
    std::fs::create_dir_all(dir.join(".git")).expect("repo");
    std::fs::write(
        dir.join(".git/config"),
        "[remote \"origin\"]\n\turl = https://github.com/acme/billing-api.git\n",
    )
    .expect("git config");
    prompt_in(edge, &dir, "b-1", "invoice rounding in the zeppelin ledger");
    dir
}

fn prompt_in(edge: &Edge, cwd: &Path, session: &str, text: &str) {
    edge.hook(
        "user-prompt-submit",
        json!({"session_id": session, "cwd": cwd.display().to_string(),
               "hook_event_name": "UserPromptSubmit", "prompt": text}),
    );
}

fn tool_call(edge: &Edge, session: &str, tool: &str, input: Value) {
    edge.hook(
        "post-tool-use",
        json!({"session_id": session, "cwd": edge.project.display().to_string(),
               "hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": input,
               "tool_response": {"stdout": "ok"}}),
    );
}

/// The projects of `solaria search --json Q --project P`.
fn projects_found(edge: &Edge, q: &str, project: &str) -> Vec<String> {
    let out = edge.ok(&["search", "--json", q, "--project", project]);
    serde_json::from_str::<Vec<Value>>(&out)
        .expect("json")
        .iter()
        .map(|h| h["project"].as_str().expect("project").to_string())
        .collect()
}

#[test]
fn a_project_is_named_by_its_name_key_slug_or_a_path_and_an_unknown_one_is_an_error() {
    let edge = Edge::new("laptop");
    edge.prompt("a-1", "flaky zeppelin checkout test");
    let billing = billing_project(&edge);
    std::fs::create_dir_all(billing.join("src/ledger")).expect("subdir");
    let api_key = "github.com/acme/api";
    let inside_api = edge.project.join("src");
    std::fs::create_dir_all(&inside_api).expect("src");

    for form in [
        "api",
        api_key,
        "acme/api",
        edge.project.to_str().expect("path"),
        inside_api.to_str().expect("path"),
        ".",
    ] {
        assert_eq!(projects_found(&edge, "zeppelin", form), [api_key], "{form}");
    }
    let billing_inside = billing.join("src/ledger");
    for form in [
        "billing-api",
        "acme/billing-api",
        billing_inside.to_str().expect("path"),
    ] {
        assert_eq!(
            projects_found(&edge, "zeppelin", form),
            ["github.com/acme/billing-api"],
            "{form}"
        );
        let context = edge.ok(&["context", "--project", form]);
        assert!(
            context.contains("project billing-api (github.com/acme/billing-api)")
                && context.contains("invoice rounding"),
            "{form}: {context}"
        );
    }

    for args in [
        &["search", "zeppelin", "--project", "biling-api"][..],
        &["context", "--project", "biling-api"][..],
    ] {
        let out = edge.run(args);
        assert!(
            !out.status.success(),
            "{args:?} is an error, not an empty answer"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no project named \"biling-api\" in the memory")
                && err.contains("closest: billing-api (github.com/acme/billing-api)"),
            "{args:?}: {err}"
        );
    }

    let api = serve_with(&edge, "");
    for form in [
        "api",
        api_key,
        "acme/api",
        inside_api.to_str().expect("path"),
    ] {
        let (status, body) = api.get_with("/api/search", &[("q", "zeppelin"), ("project", form)]);
        assert_eq!(status, StatusCode::OK, "{form}: {body}");
        let hits = body["hits"].as_array().expect("hits");
        assert_eq!(hits.len(), 1, "{form}: {body}");
        assert_eq!(hits[0]["project"], api_key, "{form}");
    }
    let (status, body) = api.get_with("/api/context", &[("project", "acme/billing-api")]);
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["project"]["key"], "github.com/acme/billing-api");
    for (path, query) in [
        (
            "/api/search",
            &[("q", "zeppelin"), ("project", "biling-api")][..],
        ),
        ("/api/context", &[("project", "acme/biling-api")][..]),
    ] {
        let (status, body) = api.get_with(path, query);
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        let error = body["error"].as_str().expect("error");
        assert!(
            error.contains("in the memory; closest: billing-api (github.com/acme/billing-api)"),
            "{path}: {error}"
        );
    }
}

#[test]
fn solaria_does_not_capture_itself_and_an_empty_session_is_not_in_the_context() {
    let edge = Edge::new("laptop");
    edge.prompt("s-1", "why does the zeppelin build fail?");
    tool_call(
        &edge,
        "s-1",
        "mcp__solaria__memory_search",
        json!({"query": "zeppelin"}),
    );
    tool_call(
        &edge,
        "s-1",
        "ToolSearch",
        json!({"query": "select:mcp__solaria__memory_search"}),
    );
    for command in [
        "solaria search zeppelin",
        "/home/me/.local/bin/solaria status",
        "SOLARIA_HOME=/tmp/x solaria stats --json",
    ] {
        tool_call(&edge, "s-1", "Bash", json!({"command": command}));
    }
    tool_call(
        &edge,
        "s-1",
        "Bash",
        json!({"command": "cargo build -p zeppelin"}),
    );
    tool_call(
        &edge,
        "s-1",
        "mcp__github__get_issue",
        json!({"issue_number": 7}),
    );
    let titles: Vec<String> =
        edge.strings("SELECT title FROM observations ORDER BY created_at, rowid");
    assert_eq!(
        titles.len(),
        3,
        "the prompt and two foreign tools: {titles:?}"
    );
    assert!(titles[1].contains("cargo build -p zeppelin"), "{titles:?}");
    assert!(titles[2].contains("get_issue"), "{titles:?}");

    // A session in which nothing was captured (only SOLARIA's own calls).
    let cwd = edge.project.display().to_string();
    let event = |name: &str| json!({"session_id": "s-2", "cwd": cwd, "hook_event_name": name});
    edge.hook("session-start", event("SessionStart"));
    tool_call(&edge, "s-2", "mcp__solaria__memory_stats", json!({}));
    edge.hook("stop", event("Stop"));
    edge.hook(
        "stop",
        json!({"session_id": "s-1", "cwd": cwd, "hook_event_name": "Stop"}),
    );
    let context = edge.ok(&["context"]);
    assert!(!context.contains("nothing captured"), "{context}");
    let empty: String = edge
        .db()
        .query_row(
            "SELECT id FROM sessions WHERE agent_session_id = 's-2'",
            [],
            |r| r.get(0),
        )
        .expect("the empty session");
    assert!(!context.contains(&empty), "{context}");
    assert!(
        context.contains("zeppelin"),
        "the other session is: {context}"
    );
}

fn count(edge: &Edge, sql: &str) -> i64 {
    edge.db().query_row(sql, [], |r| r.get(0)).expect("count")
}

#[test]
fn without_a_server_retention_is_off_unless_asked_and_a_dry_run_removes_nothing() {
    let edge = Edge::new("laptop");
    edge.old_prompts(&[
        (10, "ten days zeppelin"),
        (45, "forty-five days zeppelin"),
        (90, "ninety days zeppelin"),
        (120, "a hundred and twenty days zeppelin"),
    ]);
    let all = "SELECT count(*) FROM observations";
    assert_eq!(count(&edge, all), 4);

    let out = edge.ok(&["serve", "--once"]);
    let log = std::fs::read_to_string(edge.data().join("logs/serve.log")).expect("serve log");
    assert!(
        log.contains("retention off: no central server"),
        "{out}{log}"
    );
    assert_eq!(
        count(&edge, all),
        4,
        "the daemon's first prune keeps the only copy"
    );
    let out = edge.ok(&["prune"]);
    assert!(
        out.contains("Retention is off") && out.contains("Nothing was removed"),
        "{out}"
    );
    assert_eq!(count(&edge, all), 4, "so does `solaria prune`");
    let status = edge.ok(&["status"]);
    assert!(
        status.contains("retention:  off: no central server"),
        "{status}"
    );
    let stats: Value = serde_json::from_str(&edge.ok(&["stats", "--json"])).expect("json");
    assert_eq!(stats["sync"]["retention"]["mode"], "off", "{stats}");

    std::fs::write(
        edge.data().join("config.toml"),
        "machine_name = \"laptop\"\n[retention]\nlocal = true\n",
    )
    .expect("config");
    let out = edge.ok(&["prune", "--dry-run"]);
    assert!(out.contains("Retention is on (local"), "{out}");
    assert!(
        out.contains("Would remove 3 observation(s) (3 prompt), 0 summar(y/ies), 0 empty session(s), created "),
        "{out}"
    );
    assert!(out.contains("Nothing was removed (dry run)"), "{out}");
    assert_eq!(count(&edge, all), 4, "a dry run removes nothing");
    let status = edge.ok(&["status"]);
    assert!(status.contains("retention:  on (local"), "{status}");

    let out = edge.ok(&["prune"]);
    assert!(out.contains("Removed 3 observation(s)"), "{out}");
    assert_eq!(count(&edge, all), 1, "the ten-day-old prompt stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_finds_what_retention_removed_on_the_server_and_says_when_it_cannot() {
    use solaria_tests::central::Central;
    let c = Central::start_tls().await;
    let acct = c.account("acme").await;
    let edge = Edge::new("laptop");
    edge.enroll(&c, acct).await;
    edge.old_prompts(&[
        (60, "the zeppelin hangar lease from last winter"),
        (2, "zeppelin mooring mast this week"),
    ]);
    let out = edge.ok(&["sync"]);
    assert!(out.contains("pushed"), "{out}");
    let out = edge.ok(&["prune"]);
    assert!(out.contains("Removed 1 observation(s)"), "{out}");
    assert_eq!(count(&edge, "SELECT count(*) FROM observations"), 1);

    let hits = edge.search("zeppelin");
    assert_eq!(hits.len(), 2, "{hits:?}");
    let old = hits
        .iter()
        .find(|h| h["title"].as_str().is_some_and(|t| t.contains("hangar")))
        .expect("the pruned prompt, found on the server");
    assert_eq!(old["remote"], true, "{old}");
    let recent = hits
        .iter()
        .find(|h| h["title"].as_str().is_some_and(|t| t.contains("mooring")))
        .expect("the local prompt");
    assert_eq!(recent["remote"], false, "{recent}");
    let index = edge.ok(&["search", "zeppelin"]);
    let line = index
        .lines()
        .find(|l| l.contains("hangar"))
        .expect("listed");
    assert!(line.ends_with("(remote)"), "{index}");
    // A query that starts after what was removed does not ask the server.
    let recent_only = edge.ok(&["search", "--json", "zeppelin", "--since", "7d"]);
    assert!(!recent_only.contains("hangar"), "{recent_only}");

    c.stop().await;
    let out = edge.run(&["search", "zeppelin"]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("mooring") && !stdout.contains("hangar"),
        "{stdout}"
    );
    assert!(
        stderr.contains("was pruned here and the central service did not answer"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
}
