//! The real Codex CLI (pinned in `deploy/agents.sh`) driven offline against the
//! scripted endpoint's Responses API, with SOLARIA installed by `solaria install
//! codex`: its hooks run from the first session (the install records Codex's
//! trust), a session's commands (one failing) and patch are captured and
//! redacted, the next session and a compacted one start with the memory, the MCP
//! tools are offered, and uninstall gives the user's `config.toml` back byte for
//! byte. One memory with Claude Code: a decision taken in one is recalled in the
//! other.

use super::{FAKE_SECRET, billing_decision, log_decision_in_claude, run_claude};
use serde_json::{Value, json};
use solaria_tests::agents::{self, AgentRun, CLAUDE_VAR, CODEX_VAR, SESSION_TIMEOUT};
use solaria_tests::edge::Edge;
use solaria_tests::model::{ModelServer, Step};
use std::path::{Path, PathBuf};

/// What the user had in `~/.codex/config.toml` before SOLARIA: comments, a
/// project's trust and no final newline.
const USERS_CONFIG: &str = "# my Codex settings\nmodel_reasoning_effort = \"low\"\n\n[projects.\"/srv/app\"]\ntrust_level = \"trusted\"";

/// An edge whose user had a Codex configuration, with SOLARIA installed into it.
fn installed_edge() -> (Edge, PathBuf) {
    let edge = Edge::new("laptop");
    let config = edge.home().join(".codex").join("config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
    std::fs::write(&config, USERS_CONFIG).expect("the user's config");
    edge.ok(&["install", "codex", "--no-service", "--no-model"]);
    (edge, config)
}

/// Runs one `codex exec` session on `edge` against `model`, time-boxed.
pub(super) fn run_codex(
    bin: &Path,
    edge: &Edge,
    model: &ModelServer,
    prompt: &str,
    name: &str,
    args: &[&str],
) -> AgentRun {
    let cmd = agents::codex(bin, edge, model, prompt, args);
    let run = agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs").join(name),
        SESSION_TIMEOUT,
    );
    run.assert_success();
    run
}

/// The end of `text`, for a failure message (Codex's own instructions are long).
fn tail(text: &str) -> &str {
    let cut = text.len().saturating_sub(3_000);
    let start = (cut..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    &text[start..]
}

/// The developer messages of a Responses request: where Codex puts what hooks add.
fn developer_text(request: &solaria_tests::model::Request) -> String {
    request.body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["role"] == "developer")
        .map(|i| i["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The session that runs a command that works and one that fails, then writes
/// `notes.txt` (holding a secret) with a patch.
pub(super) fn coding_script() -> Vec<Step> {
    let patch = format!(
        "*** Begin Patch\n*** Add File: notes.txt\n+rotate the deploy key\n+token = {FAKE_SECRET}\n*** End Patch\n"
    );
    vec![
        Step::tool("exec_command", json!({"cmd": "echo hi"})),
        Step::tool(
            "exec_command",
            json!({"cmd": "ls /nonexistent-solaria-dir"}),
        ),
        Step::tool("apply_patch", Value::String(patch)),
        Step::text("The deploy key note is written."),
    ]
}

#[test]
fn a_codex_session_is_captured_and_the_next_starts_with_its_memory() {
    let Some(codex) = agents::agent_binary(CODEX_VAR) else {
        return;
    };
    let (edge, config) = installed_edge();
    let model = ModelServer::start(coding_script());
    run_codex(
        &codex,
        &edge,
        &model,
        "Write a note about the deploy key",
        "coding",
        &[],
    );
    let note = std::fs::read_to_string(edge.project.join("notes.txt")).expect("the note");
    assert!(note.contains(FAKE_SECRET), "the patch ran: {note}");

    assert_eq!(
        edge.strings("SELECT agent FROM sessions WHERE ended_at IS NOT NULL"),
        ["codex"],
        "one Codex session, ended: the hooks ran without asking for trust"
    );
    assert_eq!(
        edge.strings("SELECT title FROM observations WHERE kind = 'prompt'"),
        ["Write a note about the deploy key"]
    );
    let tools = edge.tool_calls();
    assert_eq!(
        tools,
        [
            "Bash Bash: echo hi 0",
            // Codex reports no exit code: the rollout's says it failed.
            "Bash Bash: ls /nonexistent-solaria-dir 1",
            "apply_patch apply_patch notes.txt 0",
        ]
    );
    assert!(
        !edge.stores(FAKE_SECRET),
        "the token never reaches the store's files"
    );
    // The MCP server is offered (Codex defers its tools behind its search).
    let first = model.turns();
    assert!(
        first[0].text().contains("mcp__solaria"),
        "SOLARIA's MCP tools are offered: {}",
        tail(&first[0].text())
    );

    let next = ModelServer::start(vec![Step::text("Nothing left to do.")]);
    run_codex(
        &codex,
        &edge,
        &next,
        "What did we do last time?",
        "second",
        &[],
    );
    let turns = next.turns();
    let told = developer_text(turns.first().expect("the session asked the model"));
    assert!(
        told.contains("# SOLARIA memory") && told.contains("notes.txt"),
        "the context of the last session is in the first request: {}",
        tail(&told)
    );
    assert!(!told.contains(FAKE_SECRET));
    assert!(edge.hook_log().is_empty(), "{}", edge.hook_log());

    // Calling SOLARIA's own skill is a request to SOLARIA, not a prompt to keep.
    let skill = ModelServer::start(vec![Step::text("Here is the status.")]);
    run_codex(
        &codex,
        &edge,
        &skill,
        "$solaria-memory status",
        "skill",
        &[],
    );
    assert_eq!(
        edge.strings("SELECT title FROM observations WHERE kind = 'prompt'"),
        [
            "Write a note about the deploy key",
            "What did we do last time?"
        ],
        "the skill's call is not captured"
    );

    edge.ok(&["uninstall", "codex"]);
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        USERS_CONFIG,
        "the user's config comes back byte for byte"
    );
    assert!(!edge.home().join(".codex/skills/solaria-memory").exists());
}

#[test]
fn a_compaction_in_codex_gives_the_memory_back() {
    let Some(codex) = agents::agent_binary(CODEX_VAR) else {
        return;
    };
    let (edge, _) = installed_edge();
    let model = ModelServer::start(coding_script());
    run_codex(
        &codex,
        &edge,
        &model,
        "Write a note about the deploy key",
        "coding",
        &[],
    );

    // Every answer reports more tokens than the compaction limit: Codex compacts
    // the conversation after the first command.
    let long = ModelServer::start_reporting(
        vec![
            Step::tool("exec_command", json!({"cmd": "echo still working"})),
            Step::text("Done after the compaction."),
        ],
        5_000,
    );
    run_codex(
        &codex,
        &edge,
        &long,
        "Keep working on the deploy key",
        "compacted",
        &["-c", "model_auto_compact_token_limit=1000"],
    );
    let turns = long.turns();
    let after = turns
        .iter()
        .position(|r| {
            r.text()
                .contains("Another language model started to solve this problem")
        })
        .unwrap_or_else(|| panic!("Codex compacted: {} requests", turns.len()));
    let told = developer_text(&turns[after]);
    assert!(
        told.contains("# SOLARIA memory") && told.contains("notes.txt"),
        "the conversation after the compaction has the memory again: {}",
        tail(&told)
    );
    assert!(edge.hook_log().is_empty(), "{}", edge.hook_log());
}

#[test]
fn a_decision_taken_in_codex_is_recalled_in_claude_code_and_the_reverse() {
    let (Some(codex), Some(claude)) = (
        agents::agent_binary(CODEX_VAR),
        agents::agent_binary(CLAUDE_VAR),
    ) else {
        return;
    };
    let (edge, _) = installed_edge();
    edge.ok(&["install", "claude-code", "--no-service", "--no-model"]);

    // In Codex: found through its tool search, then called in its namespace.
    let model = ModelServer::start(vec![
        Step::tool(
            "tool_search",
            json!({"query": "log a decision", "limit": 5}),
        ),
        Step::tool("mcp__solaria__memory_log_decision", billing_decision()),
        Step::text("Logged."),
    ]);
    run_codex(
        &codex,
        &edge,
        &model,
        "We settled billing on plain SQL through sqlx; log that decision",
        "decide-in-codex",
        &[],
    );
    let decided = edge.strings("SELECT title FROM knowledge WHERE kind = 'decision'");
    assert_eq!(
        decided,
        ["No ORM for billing"],
        "logged through Codex's MCP call"
    );

    let model = ModelServer::start(vec![Step::text("Understood.")]);
    run_claude(
        &claude,
        &edge,
        &model,
        "let's add diesel as an ORM for the invoice tables",
        "proposal-in-claude",
    )
    .assert_success();
    let text = model.turns().first().expect("asked the model").text();
    assert!(
        text.contains("SOLARIA recalled these records as related to this prompt")
            && text.contains("an option the decision set aside"),
        "Claude Code recalls Codex's decision: {text}"
    );

    // The reverse: a decision logged in Claude Code, recalled in Codex.
    log_decision_in_claude(
        &claude,
        &edge,
        json!({
            "title": "Queue uploads through Redis streams",
            "chosen": "Redis streams",
            "alternatives": ["kafka"],
            "rationale": "one small broker is enough for our volume",
        }),
        "We queue uploads through Redis streams; log that decision",
    );
    let model = ModelServer::start(vec![Step::text("Understood.")]);
    run_codex(
        &codex,
        &edge,
        &model,
        "should we move the upload queue to kafka?",
        "proposal-in-codex",
        &[],
    );
    let turns = model.turns();
    let told = developer_text(turns.first().expect("asked the model"));
    assert!(
        told.contains("SOLARIA recalled these records as related to this prompt")
            && told.contains("Queue uploads through Redis streams"),
        "Codex recalls Claude Code's decision: {}",
        tail(&told)
    );
    assert!(
        told.contains(" in Claude Code ") && told.contains(" in Codex CLI "),
        "the context says which agent worked in each session: {}",
        tail(&told)
    );
}

#[test]
fn a_project_install_captures_in_a_project_the_user_trusts_and_leaves_no_trace() {
    let Some(codex) = agents::agent_binary(CODEX_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    let config = edge.home().join(".codex").join("config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
    // The user trusted the project in Codex (its own question, or `codex exec --trust`).
    let users = format!(
        "{USERS_CONFIG}\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        edge.project.display()
    );
    std::fs::write(&config, &users).expect("the user's config");
    let said = edge.ok_in(
        &edge.project,
        &[
            "install",
            "codex",
            "--scope",
            "project",
            "--no-service",
            "--no-model",
        ],
    );
    assert!(!said.contains("only once you trust the project"), "{said}");
    assert!(edge.project.join(".codex/config.toml").exists());

    let model = ModelServer::start(coding_script());
    run_codex(
        &codex,
        &edge,
        &model,
        "Write a note about the deploy key",
        "coding",
        &[],
    );
    assert_eq!(
        edge.strings("SELECT agent FROM sessions WHERE ended_at IS NOT NULL"),
        ["codex"],
        "the project's hooks ran, trusted from the user's config"
    );
    assert_eq!(
        edge.count("SELECT count(*) FROM observations WHERE kind = 'tool_use'"),
        3
    );

    edge.ok_in(&edge.project, &["uninstall", "codex", "--scope", "project"]);
    assert!(
        !edge.project.join(".codex").exists(),
        "nothing left in the project"
    );
    assert_eq!(std::fs::read_to_string(&config).expect("config"), users);
}
