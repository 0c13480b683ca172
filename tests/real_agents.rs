//! The real Claude Code (installed by `deploy/agents.sh`, pinned there) driven offline
//! against a scripted model endpoint, with SOLARIA installed as a user would: what a
//! session does is captured, the memory reaches the next session, and the MCP tools
//! answer through Claude Code's deferred-tool search.

use serde_json::{Value, json};
use solaria_tests::agents::{self, AgentRun, CLAUDE_VAR, SESSION_TIMEOUT};
use solaria_tests::edge::Edge;
use solaria_tests::model::{ModelServer, Step};
use std::path::Path;
use std::time::Duration;

/// A token shaped like a GitHub personal access token: redaction must keep it out of
/// the store.
const FAKE_SECRET: &str = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";

/// An edge with SOLARIA installed into Claude Code at user scope (hooks in
/// `~/.claude/settings.json`, the MCP server in `~/.claude.json`), no daemon.
fn installed_edge() -> Edge {
    let edge = Edge::new("laptop");
    edge.ok(&["install", "claude-code", "--no-service"]);
    edge
}

/// Runs one `claude -p` session on `edge` against `model`, time-boxed.
fn run_claude(bin: &Path, edge: &Edge, model: &ModelServer, prompt: &str, name: &str) -> AgentRun {
    let cmd = agents::claude(bin, edge, model, prompt);
    agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs").join(name),
        SESSION_TIMEOUT,
    )
}

/// The session that writes, reads and edits `notes.txt`, runs a command that works and
/// one that fails, then answers.
fn coding_script(project: &Path) -> Vec<Step> {
    let file = project.join("notes.txt").display().to_string();
    vec![
        Step::tool(
            "Write",
            json!({"file_path": file, "content": format!("rotate the deploy key\ntoken = {FAKE_SECRET}\n")}),
        ),
        Step::tool("Read", json!({"file_path": file})),
        Step::tool(
            "Edit",
            json!({"file_path": file, "old_string": "rotate the deploy key", "new_string": "rotated the deploy key"}),
        ),
        Step::tool(
            "Bash",
            json!({"command": "echo hi", "description": "Say hi"}),
        ),
        Step::tool(
            "Bash",
            json!({"command": "ls /nonexistent-solaria-dir", "description": "List a missing directory"}),
        ),
        Step::text("The deploy key note is written and edited."),
    ]
}

/// Runs the coding session on `edge` and checks that Claude Code completed it.
fn coding_session(claude: &Path, edge: &Edge) {
    let model = ModelServer::start(coding_script(&edge.project));
    let run = run_claude(
        claude,
        edge,
        &model,
        "Write a note about the deploy key",
        "coding",
    );
    run.assert_success();
    let out: Value = serde_json::from_str(&run.stdout).expect("claude -p prints JSON");
    assert_eq!(
        out["result"], "The deploy key note is written and edited.",
        "the scripted session ran to its end: {out}"
    );
}

#[test]
fn a_claude_code_session_is_captured_with_its_tools_and_summary() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = installed_edge();
    coding_session(&claude, &edge);

    // The agent really did the work (so the secret really went through the hooks).
    let note = std::fs::read_to_string(edge.project.join("notes.txt")).expect("the note");
    assert!(note.starts_with("rotated the deploy key"), "{note}");
    assert!(note.contains(FAKE_SECRET), "{note}");

    assert_eq!(
        edge.strings("SELECT agent FROM sessions WHERE ended_at IS NOT NULL"),
        ["claude-code"],
        "one session, ended"
    );
    assert_eq!(
        edge.strings("SELECT title FROM observations WHERE kind = 'prompt'"),
        ["Write a note about the deploy key"]
    );
    let tools = edge.strings(
        "SELECT tool_name || ' ' || title || ' ' || coalesce(json_extract(metadata, '$.error'), 0) \
         FROM observations WHERE kind = 'tool_use' ORDER BY updated",
    );
    assert_eq!(
        tools,
        [
            "Write Write notes.txt 0",
            "Read Read notes.txt 0",
            "Edit Edit notes.txt 0",
            "Bash Bash: echo hi — Say hi 0",
            // PostToolUseFailure: the failing command is captured, marked as an error.
            "Bash Bash: ls /nonexistent-solaria-dir — List a missing directory 1",
        ]
    );
    let summary = edge.strings("SELECT text FROM summaries");
    assert_eq!(summary.len(), 1, "one summary: {summary:?}");
    for part in [
        "Request: Write a note about the deploy key",
        "notes.txt",
        "`echo hi`",
        "Errors (1)",
        "Outcome: The deploy key note is written and edited.",
    ] {
        assert!(
            summary[0].contains(part),
            "summary lacks {part:?}: {summary:?}"
        );
    }

    // Found by search as a user would look for it.
    let hits = edge.search("nonexistent");
    assert!(
        hits.iter().any(|h| h["title"]
            .as_str()
            .is_some_and(|t| t.contains("ls /nonexistent"))),
        "the failed command is searchable: {hits:?}"
    );
    let bytes = edge.store_bytes();
    let secret = FAKE_SECRET.as_bytes();
    assert!(
        !bytes.windows(secret.len()).any(|w| w == secret),
        "the token never reaches the store's files"
    );
    assert!(
        edge.hook_log().is_empty(),
        "no hook failed: {}",
        edge.hook_log()
    );
}

#[test]
fn the_next_session_starts_with_the_memory_of_the_last() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = installed_edge();
    let fresh = ModelServer::start(coding_script(&edge.project));
    run_claude(
        &claude,
        &edge,
        &fresh,
        "Write a note about the deploy key",
        "first",
    )
    .assert_success();
    let first = fresh.turns();
    assert!(
        !first[0].text().contains("notes.txt"),
        "a first session has nothing to remember"
    );

    let model = ModelServer::start(vec![Step::text("Nothing left to do.")]);
    run_claude(
        &claude,
        &edge,
        &model,
        "What did we do last time?",
        "second",
    )
    .assert_success();
    let turns = model.turns();
    let request = turns.first().expect("the session asked the model");
    let text = request.text();
    assert!(
        text.contains("SessionStart hook additional context"),
        "SOLARIA's context reaches the model in the first request: {text}"
    );
    assert!(
        text.contains("notes.txt") && text.contains("deploy key"),
        "it tells what the last session did: {text}"
    );
    assert!(!text.contains(FAKE_SECRET), "nor does the secret come back");
}

#[test]
fn the_memory_tools_answer_through_claude_codes_tool_search() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = installed_edge();
    coding_session(&claude, &edge);

    let model = ModelServer::start(vec![
        Step::tool(
            "ToolSearch",
            json!({"query": "select:mcp__solaria__memory_search", "max_results": 5}),
        ),
        Step::tool("mcp__solaria__memory_search", json!({"query": "deploy"})),
        Step::text("Found it."),
    ]);
    run_claude(
        &claude,
        &edge,
        &model,
        "Search the memory for the deploy key",
        "mcp",
    )
    .assert_success();
    let turns = model.turns();
    let last = turns.last().expect("requests");
    let results = last.tool_result_blocks();
    assert_eq!(
        results.len(),
        2,
        "both tool calls answered: {:?}",
        last.body
    );
    let answer = results[1]["content"].to_string();
    assert!(
        results[1]["is_error"] != true && (answer.contains("[O#") || answer.contains("[S#")),
        "memory_search answers with citations: {answer}"
    );
    assert!(
        answer.contains("notes.txt"),
        "and finds the first session: {answer}"
    );
    assert_eq!(
        edge.count("SELECT count(*) FROM observations WHERE tool_name LIKE 'mcp__solaria%'"),
        0,
        "SOLARIA's own tool calls are not captured as memories"
    );
}

#[test]
fn a_model_endpoint_that_hangs_ends_the_session_with_its_work_kept() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = installed_edge();
    let file = edge.project.join("draft.txt").display().to_string();
    let model = ModelServer::start(vec![
        Step::tool(
            "Write",
            json!({"file_path": file, "content": "half done\n"}),
        ),
        Step::Hang,
    ]);
    let mut cmd = agents::claude(&claude, &edge, &model, "Draft the release notes");
    // Claude Code's own request timeout, short, and no retries: its default is ten
    // minutes with retries.
    cmd.env("API_TIMEOUT_MS", "3000")
        .env("CLAUDE_CODE_MAX_RETRIES", "0");
    let run = agents::run_timeboxed(cmd, &edge.root.path().join("runs/hang"), SESSION_TIMEOUT);
    assert!(
        run.status.is_some() && run.elapsed < Duration::from_secs(60),
        "Claude Code gives up on the model by itself, hooks and all: {run:?}"
    );
    let out: Value = serde_json::from_str(&run.stdout).expect("claude -p prints JSON");
    assert_eq!(out["is_error"], true, "the session says it failed: {out}");
    assert_eq!(
        edge.strings("SELECT title FROM observations WHERE kind = 'tool_use'"),
        ["Write draft.txt"],
        "the work done before the model hung is kept"
    );
    assert_eq!(
        edge.count("SELECT count(*) FROM sessions WHERE ended_at IS NOT NULL"),
        1,
        "and the session is closed"
    );
    let summary = edge.strings("SELECT text FROM summaries").join("\n");
    assert!(summary.contains("Changed: api/draft.txt"), "{summary}");
}
