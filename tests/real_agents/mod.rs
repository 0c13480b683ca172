//! The real Claude Code (installed by `deploy/agents.sh`, pinned there) driven offline
//! against a scripted model endpoint, with SOLARIA installed as a user would: what a
//! session does is captured, the memory reaches the next session, and the MCP tools
//! answer through Claude Code's deferred-tool search. OpenCode the same way, through
//! its plugin, and one memory for both. Codex CLI and Gemini CLI: `codex.rs`,
//! `gemini.rs`; compaction in Claude Code and OpenCode: `compaction.rs`. What the
//! hooks cost: `overhead.rs`.

use serde_json::{Value, json};
use solaria_tests::agents::{self, AgentRun, CLAUDE_VAR, SESSION_TIMEOUT};
use solaria_tests::edge::Edge;
use solaria_tests::model::{ModelServer, Step};
use std::path::Path;
use std::time::Duration;

mod codex;
mod compaction;
mod gemini;
mod overhead;
mod plugin;
mod removed_binary;

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

/// The decision the tests log: billing on plain SQL, diesel and sea-orm set aside.
fn billing_decision() -> Value {
    json!({
        "title": "No ORM for billing",
        "chosen": "plain SQL through sqlx",
        "alternatives": ["diesel", "sea-orm"],
        "rationale": "billing reports need window functions an ORM hides",
    })
}

/// Has Claude Code log `decision` through SOLARIA's MCP tool, found through its
/// deferred-tool search, in a session started by `prompt`; the endpoint it ran
/// against.
fn log_decision_in_claude(
    claude: &Path,
    edge: &Edge,
    decision: Value,
    prompt: &str,
) -> ModelServer {
    let model = ModelServer::start(vec![
        Step::tool(
            "ToolSearch",
            json!({"query": "select:mcp__solaria__memory_log_decision", "max_results": 5}),
        ),
        Step::tool("mcp__solaria__memory_log_decision", decision),
        Step::text("Logged."),
    ]);
    run_claude(claude, edge, &model, prompt, "decide-in-claude").assert_success();
    model
}

/// The endpoint itself, without an agent: the next step follows the tool results a
/// request carries, side requests get a short text, unknown paths a 404 (so a broken
/// harness fails here, not as a puzzling agent run).
#[test]
fn the_scripted_endpoint_answers_like_the_messages_api() {
    let model = ModelServer::start(vec![
        Step::tool("Bash", json!({"command": "echo hi"})),
        Step::text("All done."),
    ]);
    // Straight to loopback, whatever proxy the environment names.
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let post = |path: &str, body: Value| {
        let res = http.post(format!("{}{path}", model.url)).json(&body).send();
        let res = res.expect("the endpoint answers");
        (res.status().as_u16(), res.text().expect("body"))
    };
    let tools = json!([{"name": "Bash", "input_schema": {"type": "object"}}]);
    let (status, first) = post(
        "/v1/messages",
        json!({"stream": true, "tools": tools, "messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_eq!(status, 200);
    assert!(
        first.contains("event: message_start") && first.contains("\"stop_reason\":\"tool_use\""),
        "{first}"
    );
    assert!(
        first.contains(r#"{\"command\":\"echo hi\"}"#),
        "the input streams as JSON: {first}"
    );
    let answered = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "hi"}]},
    ]);
    let (_, second) = post(
        "/v1/messages",
        json!({"stream": true, "tools": tools, "messages": answered}),
    );
    assert!(
        second.contains("All done.") && second.contains("end_turn"),
        "{second}"
    );
    let (_, side) = post(
        "/v1/messages",
        json!({"messages": [{"role": "user", "content": "title?"}]}),
    );
    let side: Value = serde_json::from_str(&side).expect("a side request is answered as JSON");
    assert_eq!(side["stop_reason"], "end_turn");
    assert_eq!(post("/v1/unknown", json!({})).0, 404);
    assert_eq!(model.unknown_paths(), ["/v1/unknown"]);
    assert_eq!(model.turns().len(), 2, "two agent-loop requests recorded");
    assert_eq!(model.requests().len(), 4, "every request recorded");
}

/// Checks that `edge` holds the coding session, once: one session, ended, and its
/// prompt.
fn one_coding_session_captured(edge: &Edge) {
    assert_eq!(
        edge.strings("SELECT agent FROM sessions WHERE ended_at IS NOT NULL"),
        ["claude-code"],
        "one session, ended"
    );
    assert_eq!(
        edge.strings("SELECT title FROM observations WHERE kind = 'prompt'"),
        ["Write a note about the deploy key"]
    );
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

    one_coding_session_captured(&edge);
    let tools = edge.tool_calls();
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
    assert!(
        !edge.stores(FAKE_SECRET),
        "the token never reaches the store's files"
    );
    assert!(
        edge.hook_log().is_empty(),
        "no hook failed: {}",
        edge.hook_log()
    );
}

/// With the daemon running, Claude Code's hooks (`solaria-hook`) hand every event to
/// it through its socket: here no `solaria` is left beside the client to fall back
/// on, so what is captured, the daemon captured.
#[test]
fn with_the_daemon_running_the_hooks_go_through_its_socket() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    let bin = edge.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    for name in ["solaria", "solaria-hook"] {
        std::fs::copy(solaria_tests::binary(name), bin.join(name)).expect("copy");
    }
    let solaria = bin.join("solaria");
    let install = edge
        .program_in(&solaria, &edge.project)
        .args(["install", "claude-code", "--no-service"])
        .output()
        .expect("install");
    assert!(install.status.success(), "{install:?}");
    without_mcp_server(&edge);
    let _daemon = serve_with(&edge, &solaria);
    std::fs::remove_file(&solaria).expect("rm solaria");

    let model = ModelServer::start(coding_script(&edge.project));
    let run = run_claude(
        &claude,
        &edge,
        &model,
        "Write a note about the deploy key",
        "relayed",
    );
    run.assert_success();
    // The daemon acknowledges a tool call's hook before it writes the event.
    edge.settled();
    assert_eq!(
        edge.strings("SELECT title FROM observations ORDER BY updated"),
        [
            "Write a note about the deploy key",
            "Write notes.txt",
            "Read notes.txt",
            "Edit notes.txt",
            "Bash: echo hi — Say hi",
            "Bash: ls /nonexistent-solaria-dir — List a missing directory",
        ]
    );
    assert_eq!(
        edge.count("SELECT count(*) FROM sessions WHERE ended_at IS NOT NULL"),
        1
    );
    assert!(
        !edge.stores(FAKE_SECRET),
        "the daemon redacts as the hook would"
    );
    assert!(edge.hook_log().is_empty(), "{}", edge.hook_log());
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
    // Ended by itself, not by the time box (SESSION_TIMEOUT, forty times its 3 s
    // request timeout): how long it took is the machine's business.
    assert!(
        run.status.is_some(),
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

/// Starts `exe serve` (the bench's build, as the hooks run) on `edge` with its local
/// API on a free port, once its hooks' socket listens.
fn serve_with(edge: &Edge, exe: &Path) -> solaria_tests::daemon::Daemon {
    solaria_tests::daemon::configure_any_port(edge, "");
    let child = std::process::Command::new(exe)
        .current_dir(&edge.project)
        .env_clear()
        .env("HOME", edge.home())
        .env("SOLARIA_HOME", edge.data())
        .env("XDG_RUNTIME_DIR", edge.runtime_dir())
        .args(["serve", "--every", "86400", "--embed-every", "3600"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start solaria serve");
    let mut daemon = solaria_tests::daemon::Daemon(child);
    let socket = edge.data().join("hooks.sock");
    solaria_tests::daemon::wait_for(edge, &mut daemon, "the hooks' socket", || {
        socket.exists().then_some(())
    });
    daemon
}

/// Drops the MCP server entry `solaria install` wrote into `edge`'s `~/.claude.json`.
fn without_mcp_server(edge: &Edge) {
    edit_json(&edge.home().join(".claude.json"), |config| {
        config["mcpServers"]
            .as_object_mut()
            .expect("mcpServers")
            .remove("solaria");
    });
}

/// Reads the JSON file at `path`, lets `change` edit it, writes it back.
fn edit_json(path: &Path, change: impl FnOnce(&mut Value)) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut value: Value = serde_json::from_str(&text).expect("json");
    change(&mut value);
    std::fs::write(path, value.to_string()).expect("write the JSON back");
}

/// The harness drives OpenCode too (the OpenCode memory tests build on this): its
/// scripted session writes a file and runs a command against the same endpoint.
#[test]
fn opencode_runs_offline_against_the_scripted_endpoint() {
    let Some(opencode) = agents::agent_binary(agents::OPENCODE_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    let file = edge.project.join("hello.txt");
    let model = ModelServer::start(vec![
        Step::tool("write", json!({"filePath": file, "content": "hello\n"})),
        Step::tool(
            "bash",
            json!({"command": "echo hi", "description": "Say hi"}),
        ),
        Step::text("OpenCode is done."),
    ]);
    let cmd = agents::opencode(&opencode, &edge, &model, "Write hello.txt");
    let run = agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs/opencode"),
        SESSION_TIMEOUT,
    );
    run.assert_success();
    assert!(run.stdout.contains("OpenCode is done."), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(&file).ok().as_deref(),
        Some("hello\n")
    );
    let turns = model.turns();
    assert_eq!(
        turns.len(),
        3,
        "one request per step: {:?}",
        model.requests()
    );
    assert_eq!(turns[2].tool_results(), 2);
}

/// OpenCode's side of [`coding_script`]: write `file` (a note holding a secret),
/// read it, edit it, run a command that works and one that fails, then answer.
fn opencode_coding_script(file: &Path) -> Vec<Step> {
    vec![
        Step::tool(
            "write",
            json!({"filePath": file, "content": format!("rotate the deploy key\ntoken = {FAKE_SECRET}\n")}),
        ),
        Step::tool("read", json!({"filePath": file})),
        Step::tool(
            "edit",
            json!({"filePath": file, "oldString": "rotate the deploy key", "newString": "rotated the deploy key"}),
        ),
        Step::tool(
            "bash",
            json!({"command": "echo hi", "description": "Say hi"}),
        ),
        Step::tool(
            "bash",
            json!({"command": "ls /nonexistent-solaria-dir", "description": "List a missing directory"}),
        ),
        Step::text("The deploy key note is written and edited."),
    ]
}

/// What a request offers the model as tools (their names and descriptions), as text.
fn offered_tools(request: &solaria_tests::model::Request) -> String {
    request.body["tools"].to_string()
}

#[test]
fn a_decision_reaches_the_next_session_and_a_related_prompt_recalls_it() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = installed_edge();
    let id = edge.decide_no_orm();

    let model = ModelServer::start(vec![Step::text("Understood.")]);
    run_claude(
        &claude,
        &edge,
        &model,
        "let's add an ORM for the billing tables",
        "related",
    )
    .assert_success();
    let turns = model.turns();
    let first = turns.first().expect("the session asked the model");
    let text = first.text();
    let context = text
        .find("SessionStart hook additional context")
        .expect("the context reached the model");
    assert!(
        text[context..].contains("## Decisions and knowledge")
            && text[context..].contains("No ORM for the billing tables"),
        "the standing decision is in the session's context: {text}"
    );
    let recalled = text
        .find("SOLARIA recalled these records as related to this prompt")
        .unwrap_or_else(|| panic!("the prompt recalled the decision: {text}"));
    assert!(
        text[recalled..].contains(&format!("[D#{id}]"))
            && text[recalled..].contains("why: billing reports need window functions"),
        "{text}"
    );
    // The Librarian is one of the agent types offered to the model (Claude Code
    // 2.1 lists them in a system message; earlier ones in the Agent tool).
    let offered = format!("{text}\n{}", offered_tools(first));
    assert!(
        offered.contains("librarian: Answers questions about this project's past"),
        "the Librarian subagent is discovered: {offered}"
    );

    let model = ModelServer::start(vec![Step::text("Done.")]);
    run_claude(
        &claude,
        &edge,
        &model,
        "rename the README heading to Getting started",
        "unrelated",
    )
    .assert_success();
    let turns = model.turns();
    let text = turns.first().expect("asked the model").text();
    assert!(
        !text.contains("SOLARIA recalled these records as related to this prompt"),
        "an unrelated prompt recalls nothing: {text}"
    );
}

/// The Alfred notes' case: a decision logged through the MCP tool in one session
/// (with the options it set aside) comes back into a later prompt that proposes
/// one of them, though the prompt shares little else with it; an unrelated prompt
/// is told nothing.
#[test]
fn a_decision_logged_through_mcp_is_recalled_when_a_prompt_proposes_an_option_it_set_aside() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = installed_edge();
    let model = log_decision_in_claude(
        &claude,
        &edge,
        billing_decision(),
        "We settled billing on plain SQL through sqlx; log that decision",
    );
    let turns = model.turns();
    let results = turns.last().expect("requests").tool_result_blocks();
    let logged = results
        .last()
        .map(|r| r["content"].to_string())
        .unwrap_or_default();
    assert!(logged.contains("[D#"), "the tool logged it: {logged}");
    let id: String = edge
        .db()
        .query_row(
            "SELECT id FROM knowledge WHERE kind = 'decision'",
            [],
            |r| r.get(0),
        )
        .expect("one decision stored");

    let model = ModelServer::start(vec![Step::text("Understood.")]);
    run_claude(
        &claude,
        &edge,
        &model,
        "let's add diesel as an ORM for the invoice tables",
        "proposal",
    )
    .assert_success();
    let turns = model.turns();
    let text = turns.first().expect("asked the model").text();
    let recalled = text
        .find("SOLARIA recalled these records as related to this prompt")
        .unwrap_or_else(|| panic!("the prompt recalled the decision: {text}"));
    assert!(
        text[recalled..].contains(&format!("[D#{id}]"))
            && text[recalled..]
                .contains("this prompt names \"diesel\", an option the decision set aside")
            && text[recalled..].contains("why: billing reports need window functions"),
        "{text}"
    );

    let model = ModelServer::start(vec![Step::text("Done.")]);
    run_claude(
        &claude,
        &edge,
        &model,
        "write a limerick about a cat who loves the rain",
        "unrelated",
    )
    .assert_success();
    let text = model.turns().first().expect("asked the model").text();
    assert!(
        !text.contains("SOLARIA recalled these records as related to this prompt"),
        "an unrelated prompt recalls nothing: {text}"
    );
}

#[test]
fn opencode_and_claude_code_share_one_memory() {
    let (Some(claude), Some(opencode)) = (
        agents::agent_binary(CLAUDE_VAR),
        agents::agent_binary(agents::OPENCODE_VAR),
    ) else {
        return;
    };
    let edge = installed_edge();
    let setup = solaria_tests::opencode::install_for_opencode(&edge);
    assert!(setup.plugin.exists());

    // OpenCode works first, through SOLARIA's plugin.
    let file = edge.project.join("billing_export.txt");
    let model = ModelServer::start(vec![
        Step::tool(
            "write",
            json!({"filePath": file, "content": "export the billing ledger as CSV\n"}),
        ),
        Step::tool(
            "bash",
            json!({"command": "wc -l billing_export.txt", "description": "Count the lines"}),
        ),
        Step::text("The billing export is written."),
    ]);
    let cmd = agents::opencode(&opencode, &edge, &model, "Write the billing export note");
    agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs/opencode-first"),
        SESSION_TIMEOUT,
    )
    .assert_success();
    // The plugin forwards idle/end detached: wait until they are in.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while edge.count("SELECT count(*) FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.agent = 'opencode' AND o.title LIKE '%billing_export%'") < 2
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    let opencode_titles = edge.strings(
        "SELECT o.title FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE s.agent = 'opencode' ORDER BY o.created_at, o.rowid",
    );
    assert!(
        opencode_titles
            .iter()
            .any(|t| t.contains("Write") && t.contains("billing_export.txt"))
            && opencode_titles
                .iter()
                .any(|t| t.contains("Bash") && t.contains("wc -l")),
        "OpenCode's work is captured with Claude Code's tool names: {opencode_titles:?}"
    );
    let keys = edge.strings("SELECT DISTINCT project_key FROM sessions");
    assert_eq!(keys.len(), 1, "one project for both agents: {keys:?}");

    // Claude Code, next: its first request knows what OpenCode did.
    let model = ModelServer::start(vec![Step::text("Noted.")]);
    run_claude(
        &claude,
        &edge,
        &model,
        "What is the state of the billing export?",
        "claude-after-opencode",
    )
    .assert_success();
    let turns = model.turns();
    let text = turns.first().expect("asked the model").text();
    assert!(
        text.contains("billing_export") || text.contains("billing export"),
        "Claude Code is told what OpenCode did: {text}"
    );

    // And the reverse: what Claude Code did reaches OpenCode's model.
    coding_session(&claude, &edge);
    let model = ModelServer::start(vec![Step::text("All clear.")]);
    let cmd = agents::opencode(&opencode, &edge, &model, "What changed recently?");
    agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs/opencode-second"),
        SESSION_TIMEOUT,
    )
    .assert_success();
    let turns = model.turns();
    let text = turns.first().expect("asked the model").text();
    assert!(
        text.contains("# SOLARIA memory") && text.contains("notes.txt"),
        "OpenCode is told what Claude Code did: {text}"
    );
}

#[test]
fn an_opencode_session_is_captured_like_a_claude_code_one() {
    let Some(opencode) = agents::agent_binary(agents::OPENCODE_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    solaria_tests::opencode::install_for_opencode(&edge);
    let file = edge.project.join("notes.txt");
    let model = ModelServer::start(opencode_coding_script(&file));
    let cmd = agents::opencode(
        &opencode,
        &edge,
        &model,
        "Write a note about the deploy key",
    );
    agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs/opencode-tools"),
        SESSION_TIMEOUT,
    )
    .assert_success();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while edge.count("SELECT count(*) FROM summaries") < 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let rows = edge.strings(
        "SELECT o.title || ' | ' || coalesce(json_extract(o.metadata, '$.error'), 0)
         FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE s.agent = 'opencode' AND o.kind = 'tool_use' ORDER BY o.created_at, o.rowid",
    );
    for (tool, error) in [
        ("Write", "0"),
        ("Read", "0"),
        ("Edit", "0"),
        ("Bash: echo hi", "0"),
        ("Bash: ls /nonexistent-solaria-dir", "1"),
    ] {
        assert!(
            rows.iter()
                .any(|r| r.starts_with(tool) && r.ends_with(&format!("| {error}"))),
            "{tool} (error {error}) in {rows:?}"
        );
    }
    assert_eq!(
        edge.count("SELECT count(*) FROM summaries"),
        1,
        "the session is summed up"
    );
    let bytes = String::from_utf8_lossy(&edge.store_bytes()).into_owned();
    assert!(!bytes.contains(FAKE_SECRET), "the secret was redacted");
}

#[test]
fn opencode_is_told_the_decision_and_a_related_prompt_recalls_it() {
    let Some(opencode) = agents::agent_binary(agents::OPENCODE_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    solaria_tests::opencode::install_for_opencode(&edge);
    let id = edge.decide_no_orm();

    // Two requests in the turn: the recall goes with the prompt in both, once.
    let model = ModelServer::start(vec![
        Step::tool(
            "bash",
            json!({"command": "echo checked", "description": "Check"}),
        ),
        Step::text("Understood."),
    ]);
    let cmd = agents::opencode(
        &opencode,
        &edge,
        &model,
        "let's add an ORM for the billing tables",
    );
    agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs/opencode-related"),
        SESSION_TIMEOUT,
    )
    .assert_success();
    let turns = model.turns();
    assert_eq!(turns.len(), 2, "{:?}", model.requests());
    let marker = "SOLARIA recalled these records as related to this prompt";
    for turn in &turns {
        let text = turn.text();
        assert!(
            text.contains("## Decisions and knowledge")
                && text.contains("No ORM for the billing tables"),
            "the standing decision reaches the model: {text}"
        );
        let system = turn.system_text();
        assert!(
            !system.contains("# SOLARIA memory") && !system.contains(marker),
            "the memory is a message of its own, never the system prompt: {system}"
        );
        assert_eq!(
            text.matches(marker).count(),
            1,
            "the prompt's recall is in each request of the turn, once: {text}"
        );
        let recalled = &text[text.find(marker).unwrap_or(0)..];
        assert!(
            recalled.contains(&format!("[D#{id}]"))
                && recalled.contains("why: billing reports need window functions"),
            "{text}"
        );
    }
    // The recall reached the model, not the user's saved message.
    let prompts = edge.strings(
        "SELECT o.title FROM observations o JOIN sessions s ON s.id = o.session_id
         WHERE s.agent = 'opencode' AND o.kind = 'prompt'",
    );
    assert!(prompts.iter().all(|p| !p.contains(marker)), "{prompts:?}");
    // Side requests (the session's title) carry neither the context nor the recall.
    let side: Vec<_> = model
        .requests()
        .into_iter()
        .filter(|r| !r.offers_tools())
        .collect();
    assert!(!side.is_empty(), "OpenCode asked for a title");
    for request in side {
        let text = request.text();
        assert!(
            !text.contains("# SOLARIA memory") && !text.contains(marker),
            "a title request gets no memory: {text}"
        );
    }

    let model = ModelServer::start(vec![Step::text("Done.")]);
    let cmd = agents::opencode(
        &opencode,
        &edge,
        &model,
        "rename the README heading to Getting started",
    );
    agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs/opencode-unrelated"),
        SESSION_TIMEOUT,
    )
    .assert_success();
    let text = model.turns().first().expect("asked the model").text();
    assert!(
        !text.contains(marker),
        "an unrelated prompt recalls nothing: {text}"
    );
}
