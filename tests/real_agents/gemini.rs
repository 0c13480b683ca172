//! The real Gemini CLI (pinned in `deploy/agents.sh`) driven offline against the
//! scripted endpoint's Gemini API, with SOLARIA installed by `solaria install
//! gemini`: a session's commands (one failing) and file write are captured and
//! redacted, the prompt kept as the person typed it (without the context Gemini
//! feeds back into it), the next session starts with the memory, the MCP tools are
//! offered, and uninstall gives the user's `settings.json` back byte for byte.

use super::{FAKE_SECRET, billing_decision};
use serde_json::json;
use solaria_tests::agents::{self, AgentRun, GEMINI_USER_SETTINGS, GEMINI_VAR, SESSION_TIMEOUT};
use solaria_tests::edge::Edge;
use solaria_tests::model::{ModelServer, Step};
use std::path::{Path, PathBuf};

/// An edge whose user had Gemini set up, with SOLARIA installed into it.
fn installed_edge() -> (Edge, PathBuf) {
    let edge = Edge::new("laptop");
    let settings = edge.home().join(".gemini").join("settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    std::fs::write(&settings, GEMINI_USER_SETTINGS).expect("the user's settings");
    edge.ok(&["install", "gemini", "--no-service", "--no-model"]);
    (edge, settings)
}

pub(super) fn run_gemini(
    bin: &Path,
    edge: &Edge,
    model: &ModelServer,
    prompt: &str,
    name: &str,
) -> AgentRun {
    let cmd = agents::gemini(bin, edge, model, prompt, &[]);
    let run = agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs").join(name),
        SESSION_TIMEOUT,
    );
    run.assert_success();
    run
}

/// The session that runs a command that works and one that fails, then writes
/// `notes.txt` (holding a secret).
pub(super) fn coding_script(project: &Path) -> Vec<Step> {
    let file = project.join("notes.txt").display().to_string();
    vec![
        Step::tool("run_shell_command", json!({"command": "echo hi"})),
        Step::tool(
            "run_shell_command",
            json!({"command": "ls /nonexistent-solaria-dir"}),
        ),
        Step::tool(
            "write_file",
            json!({"file_path": file, "content": format!("rotate the deploy key\ntoken = {FAKE_SECRET}\n")}),
        ),
        Step::text("The deploy key note is written."),
    ]
}

#[test]
fn a_gemini_session_is_captured_and_the_next_starts_with_its_memory() {
    let Some(gemini) = agents::agent_binary(GEMINI_VAR) else {
        return;
    };
    let (edge, settings) = installed_edge();
    let model = ModelServer::start(coding_script(&edge.project));
    run_gemini(
        &gemini,
        &edge,
        &model,
        "Write a note about the deploy key",
        "coding",
    );
    let note = std::fs::read_to_string(edge.project.join("notes.txt")).expect("the note");
    assert!(note.contains(FAKE_SECRET), "the write ran: {note}");

    assert_eq!(
        edge.strings("SELECT agent FROM sessions"),
        ["gemini"],
        "one Gemini session"
    );
    let tools = edge.tool_calls();
    assert_eq!(
        tools,
        [
            "Bash Bash: echo hi 0",
            // The exit code is in the text Gemini gives the model.
            "Bash Bash: ls /nonexistent-solaria-dir 1",
            "Write Write notes.txt 0",
        ]
    );
    assert!(
        !edge.stores(FAKE_SECRET),
        "the token never reaches the store's files"
    );
    let first = model.turns();
    assert!(
        first[0].body["tools"]
            .to_string()
            .contains("mcp_solaria_memory_search"),
        "SOLARIA's MCP tools are offered"
    );

    let next = ModelServer::start(vec![Step::text("Nothing left to do.")]);
    run_gemini(&gemini, &edge, &next, "What did we do last time?", "second");
    let turns = next.turns();
    let text = turns.first().expect("the session asked the model").text();
    assert!(
        text.contains("# SOLARIA memory") && text.contains("notes.txt"),
        "the context of the last session is in the first request: {text}"
    );
    assert!(!text.contains(FAKE_SECRET));
    assert_eq!(
        edge.strings("SELECT title FROM observations WHERE kind = 'prompt' ORDER BY updated"),
        [
            "Write a note about the deploy key",
            "What did we do last time?"
        ],
        "the person's words, never SOLARIA's context fed back"
    );
    assert!(edge.hook_log().is_empty(), "{}", edge.hook_log());

    edge.ok(&["uninstall", "gemini"]);
    assert_eq!(
        std::fs::read_to_string(&settings).expect("settings"),
        GEMINI_USER_SETTINGS,
        "the user's settings come back byte for byte"
    );
    assert!(!edge.home().join(".gemini/commands/solaria.toml").exists());
}

#[test]
fn a_decision_logged_through_geminis_mcp_tools_is_recalled_into_a_later_prompt() {
    let Some(gemini) = agents::agent_binary(GEMINI_VAR) else {
        return;
    };
    let (edge, _) = installed_edge();
    let model = ModelServer::start(vec![
        Step::tool("mcp_solaria_memory_log_decision", billing_decision()),
        Step::text("Logged."),
    ]);
    run_gemini(
        &gemini,
        &edge,
        &model,
        "We settled billing on plain SQL through sqlx; log that decision",
        "decide",
    );
    let answered = model.turns().last().expect("requests").text();
    assert!(
        answered.contains("[D#"),
        "the MCP tool answered: {answered}"
    );
    assert_eq!(
        edge.strings("SELECT title FROM knowledge WHERE kind = 'decision'"),
        ["No ORM for billing"]
    );

    let model = ModelServer::start(vec![Step::text("Understood.")]);
    run_gemini(
        &gemini,
        &edge,
        &model,
        "let's add diesel as an ORM for the invoice tables",
        "proposal",
    );
    let text = model.turns().first().expect("asked the model").text();
    assert!(
        text.contains("SOLARIA recalled these records as related to this prompt")
            && text.contains("an option the decision set aside"),
        "the prompt recalls the decision: {text}"
    );
    assert!(edge.hook_log().is_empty(), "{}", edge.hook_log());
}

/// Gemini runs no SessionStart after it compresses a conversation, and an
/// interactive session's context (given at its start) is summarised away with the
/// rest. Here the start's context is left out (SOLARIA's SessionStart hook taken
/// off, as in the turns of an interactive session after its first), Gemini
/// compresses at every turn (a tiny threshold, answers reporting 5,000 tokens), and
/// each run resumes the session: the first prompt after a compression gets the
/// context again.
#[test]
fn the_first_prompt_after_gemini_compresses_gets_the_memory_again() {
    let Some(gemini) = agents::agent_binary(GEMINI_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    let settings = edge.home().join(".gemini").join("settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    let mut users: serde_json::Value =
        serde_json::from_str(GEMINI_USER_SETTINGS).expect("settings");
    users["model"] = json!({"compressionThreshold": 0.00001});
    std::fs::write(&settings, users.to_string()).expect("the user's settings");
    edge.ok(&["install", "gemini", "--no-service", "--no-model"]);
    let mut installed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
    installed["hooks"]
        .as_object_mut()
        .expect("hooks")
        .remove("SessionStart");
    std::fs::write(&settings, installed.to_string()).expect("without SessionStart");
    // Something to remember, from another session.
    edge.prompt("earlier", "rotate the deploy key before Friday");

    // Each turn runs a command first: a compression keeps the newest part of the
    // history and needs turns enough to split it.
    let turn = |prompt: &str, name: &str, resume: bool| {
        let script = vec![
            Step::tool("run_shell_command", json!({"command": "echo checking"})),
            Step::text("Noted."),
        ];
        let model = ModelServer::start_reporting(script, 5_000);
        let args: &[&str] = if resume { &["--resume", "latest"] } else { &[] };
        let cmd = agents::gemini(&gemini, &edge, &model, prompt, args);
        agents::run_timeboxed(
            cmd,
            &edge.root.path().join("runs").join(name),
            SESSION_TIMEOUT,
        )
        .assert_success();
        model
    };
    let first = turn("What is on the list?", "first", false);
    assert!(
        !first.turns()[0].text().contains("# SOLARIA memory"),
        "no context at the start here"
    );
    // The second turn's history is compressed; the third prompt is the first after.
    let second = turn("And the deploy key?", "second", true);
    assert!(
        second.requests().iter().any(|r| r
            .text()
            .contains("Got it. Thanks for the additional context!")),
        "Gemini compressed the conversation"
    );
    let third = turn("Anything else?", "third", true);
    let text = third.turns().last().expect("asked the model").text();
    assert!(
        text.contains("# SOLARIA memory") && text.contains("rotate the deploy key"),
        "the memory is given again after the compression: {text}"
    );
    assert!(edge.hook_log().is_empty(), "{}", edge.hook_log());
}
