//! SOLARIA's Claude Code plugin (`deploy/claude-plugin/`, listed by the repository's
//! `.claude-plugin/marketplace.json`) as the real Claude Code takes it, offline: its
//! own validator passes it, `claude plugin marketplace add` + `claude plugin install`
//! install it, and a session is captured through it. With `solaria install
//! claude-code` as well, an event is captured once and the installer gives way to the
//! plugin; without the binaries, and with hooks whose binary was removed, the agent
//! runs on.

use super::{coding_session, installed_edge, one_coding_session_captured, run_claude};
use serde_json::Value;
use solaria_tests::agents::{self, CLAUDE_VAR};
use solaria_tests::edge::Edge;
use solaria_tests::model::{ModelServer, Step};
use std::path::Path;
use std::process::Output;

/// The plugin's id once installed from the repository's marketplace.
const PLUGIN: &str = "solaria-memory@solaria";

/// A PATH with the system's tools and none of SOLARIA's binaries.
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// `claude ARGS` on `edge`, as the tests run the agent (its HOME, offline).
fn claude(bin: &Path, edge: &Edge, args: &[&str]) -> Output {
    std::process::Command::new(bin)
        .current_dir(&edge.project)
        .env_clear()
        .envs(agents::agent_env(edge))
        .args(args)
        .output()
        .expect("run claude")
}

fn succeeded(out: &Output, what: &str) -> String {
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what}: {said}");
    said
}

/// Adds the repository's marketplace and installs the plugin from it, as a user would.
fn install_plugin(bin: &Path, edge: &Edge) {
    let repo = solaria_tests::workspace().display().to_string();
    succeeded(
        &claude(bin, edge, &["plugin", "marketplace", "add", &repo]),
        "claude plugin marketplace add",
    );
    succeeded(
        &claude(bin, edge, &["plugin", "install", PLUGIN]),
        "claude plugin install",
    );
}

/// `solaria doctor --json`'s check named `name`, run with the PATH the agent has.
fn doctor_check(edge: &Edge, name: &str) -> Value {
    let path = agents::agent_env(edge)
        .into_iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v)
        .unwrap_or_default();
    let out = edge
        .cmd_in(&edge.project)
        .env("PATH", path)
        .args(["doctor", "--json"])
        .output()
        .expect("solaria doctor");
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["check"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no check {name}: {report}"))
}

/// Claude Code's SOLARIA hooks in the user's settings.json.
fn settings_hooks(edge: &Edge) -> usize {
    hooks_in(&edge.home().join(".claude/settings.json"))
}

/// SOLARIA's hooks in the Claude Code settings file at `path`.
fn hooks_in(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    solaria_hook::claude_settings::command_values(&text)
        .iter()
        .filter(|c| solaria_hook::program::is_our_command(c, None))
        .count()
}

#[test]
fn claude_codes_own_validator_passes_the_marketplace_and_the_plugin() {
    let Some(bin) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    let repo = solaria_tests::workspace();
    for path in [repo.clone(), repo.join("deploy/claude-plugin")] {
        let out = claude(
            &bin,
            &edge,
            &[
                "plugin",
                "validate",
                "--strict",
                &path.display().to_string(),
            ],
        );
        let said = succeeded(&out, "claude plugin validate --strict");
        assert!(said.contains("Validation passed"), "{said}");
    }
}

#[test]
fn a_session_is_captured_through_the_plugin_installed_by_claude_code_itself() {
    let Some(bin) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    install_plugin(&bin, &edge);
    let inventory = succeeded(
        &claude(&bin, &edge, &["plugin", "details", PLUGIN]),
        "claude plugin details",
    );
    for part in [
        "Agents (1)  librarian",
        "Hooks (6)",
        "MCP servers (1)  solaria",
        "memory",
    ] {
        assert!(inventory.contains(part), "{part}: {inventory}");
    }
    coding_session(&bin, &edge);
    one_coding_session_captured(&edge);
    assert_eq!(edge.tool_calls().len(), 5, "{:?}", edge.tool_calls());
    assert!(
        !edge.stores(super::FAKE_SECRET),
        "redaction holds through the plugin"
    );

    // The MCP server the plugin registers answers in the next session.
    let model = ModelServer::start(vec![
        Step::tool(
            "ToolSearch",
            serde_json::json!({"query": "select:mcp__plugin_solaria-memory_solaria__memory_search", "max_results": 5}),
        ),
        Step::tool(
            "mcp__plugin_solaria-memory_solaria__memory_search",
            serde_json::json!({"query": "deploy key"}),
        ),
        Step::text("Found it."),
    ]);
    let mut cmd = agents::claude(&bin, &edge, &model, "What did we do with the deploy key?");
    cmd.args(["--allowedTools", "mcp__plugin_solaria-memory_solaria"]);
    let run = agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs/plugin-mcp"),
        agents::SESSION_TIMEOUT,
    );
    run.assert_success();
    let turns = model.turns();
    let results = turns.last().expect("requests").tool_result_blocks();
    let answer = results
        .last()
        .map(|r| r["content"].to_string())
        .unwrap_or_default();
    assert!(
        answer.contains("notes.txt") && answer.contains("[O#"),
        "the plugin's MCP server searched the memory: {answer}"
    );
    assert_eq!(
        edge.count("SELECT count(*) FROM observations WHERE tool_name LIKE 'mcp__plugin_solaria%'"),
        0,
        "the plugin's tool calls are SOLARIA's own, not captured"
    );

    // Its /memory command runs `solaria slash` and hands the model the answer.
    let model = ModelServer::start(vec![Step::text("Here is the status.")]);
    run_claude(
        &bin,
        &edge,
        &model,
        "/solaria-memory:memory status",
        "plugin-slash",
    )
    .assert_success();
    let asked = model.turns().first().map(|t| t.text()).unwrap_or_default();
    assert!(
        asked.contains("SOLARIA Memory answered") && asked.contains("(5 tool_use"),
        "the command's output reached the model: {asked}"
    );
    edge.settled();
    assert_eq!(
        edge.count("SELECT count(*) FROM observations WHERE kind = 'prompt' AND (title LIKE '%memory status%' OR input LIKE '%memory status%' OR input LIKE '%SOLARIA Memory answered%')"),
        0,
        "a /memory command is SOLARIA's own, not captured as the person's prompt: {:?}",
        edge.strings("SELECT title || ' | ' || substr(input, 1, 300) FROM observations WHERE kind = 'prompt'")
    );

    let hooks = doctor_check(&edge, "claude-code hooks");
    assert_eq!(hooks["status"], "ok", "{hooks}");
    assert!(
        hooks["detail"].as_str().unwrap_or("").contains(PLUGIN),
        "{hooks}"
    );
    assert_eq!(doctor_check(&edge, "claude-code plugin")["status"], "ok");
}

#[test]
fn with_the_installer_and_the_plugin_an_event_is_captured_once_and_the_installer_gives_way() {
    let Some(bin) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    // Installed into settings.json first, then the plugin on top.
    let edge = installed_edge();
    assert_eq!(settings_hooks(&edge), 6);
    install_plugin(&bin, &edge);
    let twice = doctor_check(&edge, "claude-code hooks");
    assert_eq!(twice["status"], "stale", "{twice}");
    assert!(
        twice["detail"].as_str().unwrap_or("").contains("twice"),
        "{twice}"
    );

    coding_session(&bin, &edge);
    // Once, though two routes registered hooks.
    one_coding_session_captured(&edge);
    assert_eq!(edge.tool_calls().len(), 5, "{:?}", edge.tool_calls());

    // Installing again with the plugin enabled removes the installer's own entries.
    let said = edge.ok(&["install", "claude-code", "--no-service", "--no-model"]);
    assert!(
        said.contains(PLUGIN) && said.contains("only one of the two"),
        "{said}"
    );
    assert_eq!(settings_hooks(&edge), 0);
    assert_eq!(doctor_check(&edge, "claude-code hooks")["status"], "ok");
    let said = edge.ok(&["uninstall", "claude-code"]);
    assert!(
        said.contains(&format!("{PLUGIN}) is still enabled")),
        "an uninstall says what still captures: {said}"
    );

    // The plugin alone captures the next session.
    let model = ModelServer::start(vec![Step::text("Nothing to do.")]);
    run_claude(
        &bin,
        &edge,
        &model,
        "Is the deploy key rotated?",
        "plugin-alone",
    )
    .assert_success();
    assert_eq!(
        edge.count("SELECT count(*) FROM observations WHERE kind = 'prompt'"),
        2
    );
}

/// The same with the installer's hooks in the project's `settings.json` (a team's
/// checked-in setup) and the plugin enabled for the user: the plugin's hooks stand
/// aside for the project's, so the session is captured once.
#[test]
fn with_the_projects_hooks_and_the_users_plugin_an_event_is_captured_once() {
    let Some(bin) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    edge.ok(&[
        "install",
        "claude-code",
        "--scope",
        "project",
        "--no-service",
        "--no-model",
    ]);
    assert_eq!(hooks_in(&edge.project.join(".claude/settings.json")), 6);
    assert_eq!(settings_hooks(&edge), 0, "nothing in the user's settings");
    install_plugin(&bin, &edge);

    coding_session(&bin, &edge);
    // Once, though two routes registered hooks.
    one_coding_session_captured(&edge);
    assert_eq!(edge.tool_calls().len(), 5, "{:?}", edge.tool_calls());
}

/// A session on `edge` with none of SOLARIA's binaries on PATH: it runs to its
/// answer, never blocked by a hook.
fn says_hello_without_solaria_on_path(bin: &Path, edge: &Edge, name: &str) {
    let model = ModelServer::start(vec![Step::text("Hello.")]);
    let mut cmd = agents::claude(bin, edge, &model, "Say hello");
    cmd.env("PATH", SYSTEM_PATH);
    let run = agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs").join(name),
        agents::SESSION_TIMEOUT,
    );
    run.assert_success();
    let out: Value = serde_json::from_str(&run.stdout).expect("claude -p prints JSON");
    assert_eq!(out["result"], "Hello.", "the agent is never blocked: {out}");
}

#[test]
fn without_solarias_binaries_a_session_runs_as_if_no_memory_were_installed() {
    let Some(bin) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    // The plugin, with nothing it could run.
    let edge = Edge::new("laptop");
    install_plugin(&bin, &edge);
    says_hello_without_solaria_on_path(&bin, &edge, "no-binaries");
    assert!(
        !edge.db_path().exists(),
        "nothing ran, so no store was made"
    );

    // settings.json hooks whose binary was removed after the install.
    let edge = Edge::new("desktop");
    let moved = edge.root.path().join("old-bin");
    std::fs::create_dir_all(&moved).expect("mkdir");
    for name in ["solaria", "solaria-hook"] {
        std::fs::copy(solaria_tests::binary(name), moved.join(name)).expect("copy");
    }
    let installed = edge
        .program_in(&moved.join("solaria"), &edge.project)
        .args(["install", "claude-code", "--no-service", "--no-model"])
        .output()
        .expect("install");
    succeeded(&installed, "solaria install claude-code");
    std::fs::remove_dir_all(&moved).expect("remove the binaries");
    says_hello_without_solaria_on_path(&bin, &edge, "removed-binary");
    let hooks = doctor_check(&edge, "claude-code hooks");
    assert_eq!(hooks["status"], "stale", "{hooks}");
    let detail = hooks["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("no longer exists") && detail.contains("old-bin/solaria"),
        "{hooks}"
    );
}
