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
    let secret = FAKE_SECRET.as_bytes();
    assert!(
        !edge
            .store_bytes()
            .windows(secret.len())
            .any(|w| w == secret),
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

/// What the hooks cost inside the real agent (a benchmark, run by hand; figures in
/// docs/BENCHMARKS.md, "Hooks inside the real agent"): the 5-tool coding session,
/// `SOLARIA_BENCH_RUNS` times (default 20) in each setup, the setups interleaved so
/// that the machine's noise falls on all of them alike. The hooks run this build's
/// `solaria`, or the one `SOLARIA_BENCH_SOLARIA` names (a release build: what users run).
///
/// ```sh
/// cargo build --workspace --bins && eval "$(bash deploy/agents.sh)"
/// cargo build --release -p solaria-edge --bins
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::hook_overhead
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn hook_overhead_in_claude_code() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let exe = bench_exe();
    let solaria = Edge::new("laptop");
    install_with(&solaria, &exe);
    let hooks_only = Edge::new("laptop");
    install_with(&hooks_only, &exe);
    without_mcp_server(&hooks_only);
    let relayed = Edge::new("laptop");
    install_with(&relayed, &exe);
    without_mcp_server(&relayed);
    let _relaying = serve_with(&relayed, &exe);
    let with_daemon = Edge::new("laptop");
    install_with(&with_daemon, &exe);
    let _daemon = serve_with(&with_daemon, &exe);
    let noop = Edge::new("noop");
    noop_hooks_like(&solaria, &noop);
    let baseline = Edge::new("baseline");
    let setups = [
        ("no hooks", &baseline),
        ("no-op hooks (`true`)", &noop),
        ("SOLARIA hooks, no MCP server", &hooks_only),
        ("SOLARIA hooks, daemon running, no MCP server", &relayed),
        ("SOLARIA installed (hooks + MCP)", &solaria),
        ("SOLARIA installed, daemon running", &with_daemon),
    ];
    let runs = time_setups(
        "`claude -p` (5 tools, 6 requests, 9 hook calls)",
        &setups,
        |edge| {
            let model = ModelServer::start(coding_script(&edge.project));
            run_claude(
                &claude,
                edge,
                &model,
                "Write a note about the deploy key",
                "bench",
            )
        },
    );
    for edge in [&solaria, &relayed, &with_daemon] {
        edge.settled();
        assert_eq!(
            edge.count("SELECT count(*) FROM sessions WHERE ended_at IS NOT NULL"),
            runs as i64 + 1,
            "SOLARIA captured every session it was timed on"
        );
    }
}

/// The same for OpenCode: the 5-tool session through the plugin. The no-op plugin is
/// SOLARIA's with `true` as its hook command (the same events forwarded to a
/// process that does nothing), so the ratio is what SOLARIA's work costs over the
/// forwarding itself.
///
/// ```sh
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::plugin_overhead
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn plugin_overhead_in_opencode() {
    let Some(opencode) = agents::agent_binary(agents::OPENCODE_VAR) else {
        return;
    };
    let exe = bench_exe();
    let installed = |name: &str, mcp: bool, run_with: &Path| {
        let edge = Edge::new(name);
        let setup = solaria_tests::opencode::install_for_opencode(&edge);
        let debug = solaria_tests::binary("solaria").display().to_string();
        let runs = run_with.display().to_string();
        for file in [&setup.plugin, &setup.config] {
            let text = std::fs::read_to_string(file).expect("installed file");
            std::fs::write(file, text.replace(&debug, &runs)).expect("rewrite");
        }
        if !run_with.ends_with("solaria") {
            // The no-op: the same events forwarded to a process that does nothing.
            let text = std::fs::read_to_string(&setup.plugin).expect("plugin");
            let start = text.find("const HOOK = ").expect("the HOOK line");
            let end = start + text[start..].find('\n').expect("line end");
            let line = format!("const HOOK = {};", json!([runs]));
            std::fs::write(
                &setup.plugin,
                format!("{}{line}{}", &text[..start], &text[end..]),
            )
            .expect("rewrite plugin");
        }
        if !mcp {
            let mut config: Value =
                serde_json::from_str(&std::fs::read_to_string(&setup.config).expect("config"))
                    .expect("json");
            config["mcp"]
                .as_object_mut()
                .expect("mcp")
                .remove("solaria");
            std::fs::write(&setup.config, config.to_string()).expect("write config");
        }
        edge
    };
    let baseline = Edge::new("baseline");
    let noop = installed("noop", false, Path::new("/bin/true"));
    let plugin_only = installed("laptop", false, &exe);
    let relayed = installed("laptop", false, &exe);
    let _relaying = serve_with(&relayed, &exe);
    let solaria = installed("laptop", true, &exe);
    let with_daemon = installed("laptop", true, &exe);
    let _daemon = serve_with(&with_daemon, &exe);
    let setups = [
        ("no plugin", &baseline),
        ("no-op plugin (`true`)", &noop),
        ("SOLARIA plugin, no MCP server", &plugin_only),
        ("SOLARIA plugin, daemon running, no MCP server", &relayed),
        ("SOLARIA installed (plugin + MCP)", &solaria),
        ("SOLARIA installed, daemon running", &with_daemon),
    ];
    let runs = time_setups("`opencode run` (5 tools)", &setups, |edge| {
        let file = edge.project.join("notes.txt");
        let model = ModelServer::start(opencode_coding_script(&file));
        let cmd = agents::opencode(&opencode, edge, &model, "Write a note about the deploy key");
        agents::run_timeboxed(cmd, &edge.root.path().join("runs/bench"), SESSION_TIMEOUT)
    });
    for edge in [&relayed, &with_daemon] {
        assert!(
            edge.count("SELECT count(*) FROM sessions") >= runs as i64,
            "SOLARIA captured the sessions it was timed on"
        );
    }
}

/// The hooks' own time inside Claude Code (a benchmark, run by hand; figures in
/// docs/BENCHMARKS.md, (f)): each hook command of the setup is wrapped in a shell
/// script that logs when it started and ended, so the agent's and the model's time
/// drop out of the figure. Setups: `/bin/true` as every hook (the no-op as a process),
/// SOLARIA's hooks with the daemon running, and a stand-in that only sleeps 2 ms (a
/// hook as slow as ours that does nothing else, to tell a hook's duration from its
/// side effects). `SOLARIA_BENCH_RUNS` sessions each (default 12), interleaved.
///
/// ```sh
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::hook_time
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn hook_time_in_claude_code() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let exe = bench_exe();
    let runs: usize = std::env::var("SOLARIA_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(12);
    let mut daemons = Vec::new();
    let setups: Vec<(&str, Edge)> = [
        ("`/bin/true`", Some("/bin/true")),
        // A no-op that reads the payload Claude Code writes to it, as any hook
        // that does something with its event must, and discards it.
        (
            "`dd of=/dev/null` (reads the payload)",
            Some("/bin/dd of=/dev/null status=none"),
        ),
        ("SOLARIA hooks, daemon running", None),
        ("`/bin/sleep 0.002`", Some("/bin/sleep 0.002")),
    ]
    .into_iter()
    .map(|(name, command)| {
        let edge = Edge::new("laptop");
        install_with(&edge, &exe);
        without_mcp_server(&edge);
        if command.is_none() {
            daemons.push(serve_with(&edge, &exe));
        }
        let log = edge.root.path().join("hook-times.log");
        let wrapper = edge.root.path().join("timed.sh");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nstart=$(date +%s%N)\n\"$@\"\nend=$(date +%s%N)\necho \"$start $end\" >> '{}'\n",
                log.display()
            ),
        )
        .expect("wrapper");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        rewrite_hook_commands(&edge, |ours| {
            format!("{} {}", wrapper.display(), command.unwrap_or(ours))
        });
        (name, edge)
    })
    .collect();
    for round in 0..=runs {
        for (_, edge) in &setups {
            let model = ModelServer::start(coding_script(&edge.project));
            let run = run_claude(
                &claude,
                edge,
                &model,
                "Write a note about the deploy key",
                &format!("t{round}"),
            );
            run.assert_success();
        }
    }
    println!("{runs} sessions each after one warm-up, interleaved; 9 hook calls a session");
    println!(
        "| setup | hooks' time a session (median) | a call (median) | SessionStart | ratio to `/bin/true` |"
    );
    println!("|---|---|---|---|---|");
    let mut first = None;
    let mut breakdown = Vec::new();
    for (name, edge) in &setups {
        let text = std::fs::read_to_string(edge.root.path().join("hook-times.log")).expect("log");
        let calls: Vec<f64> = text
            .lines()
            .filter_map(|l| {
                let (start, end) = l.split_once(' ')?;
                Some((end.parse::<f64>().ok()? - start.parse::<f64>().ok()?) / 1e6)
            })
            .collect();
        assert_eq!(calls.len(), 9 * (runs + 1), "{name}: every hook timed");
        let sessions: Vec<&[f64]> = calls.chunks(9).skip(1).collect();
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let per_session = median(sessions.iter().map(|s| s.iter().sum()).collect());
        let per_call = median(sessions.iter().flat_map(|s| s.iter().copied()).collect());
        let start = median(sessions.iter().map(|s| s[0]).collect());
        let base = *first.get_or_insert(per_session);
        println!(
            "| {name} | {per_session:.1} ms | {per_call:.1} ms | {start:.1} ms | {:.2} |",
            per_session / base
        );
        let by_place: Vec<String> = (0..9)
            .map(|i| format!("{:.1}", median(sessions.iter().map(|s| s[i]).collect())))
            .collect();
        breakdown.push(format!("| {name} | {} |", by_place.join(" | ")));
    }
    println!("\nEach call's median, in the order of a session:");
    println!(
        "| setup | SessionStart | UserPromptSubmit | Write | Read | Edit | Bash | Bash (fails) | Stop | SessionEnd |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for line in breakdown {
        println!("{line}");
    }
}

/// Rewrites every hook command in `edge`'s settings.json to `to(command)`.
fn rewrite_hook_commands(edge: &Edge, to: impl Fn(&str) -> String) {
    let path = edge.home().join(".claude/settings.json");
    let text = std::fs::read_to_string(&path).expect("settings.json");
    let mut settings: Value = serde_json::from_str(&text).expect("json");
    for groups in settings["hooks"]
        .as_object_mut()
        .expect("hooks")
        .values_mut()
    {
        for group in groups.as_array_mut().expect("groups") {
            for hook in group["hooks"].as_array_mut().expect("hooks") {
                let ours = hook["command"].as_str().expect("command").to_owned();
                hook["command"] = json!(to(&ours));
            }
        }
    }
    std::fs::write(&path, settings.to_string()).expect("write settings.json");
}

/// The `solaria` the benchmarks' hooks run: `SOLARIA_BENCH_SOLARIA` or this build's.
fn bench_exe() -> std::path::PathBuf {
    let exe = std::env::var_os("SOLARIA_BENCH_SOLARIA")
        .map(|p| {
            std::fs::canonicalize(solaria_tests::workspace().join(p))
                .expect("SOLARIA_BENCH_SOLARIA")
        })
        .unwrap_or_else(|| solaria_tests::binary("solaria"));
    println!("hooks run {}", exe.display());
    exe
}

/// Runs `session` on each setup's edge, `SOLARIA_BENCH_RUNS` (default 20) timed rounds
/// after one warm-up, the setups interleaved; prints median and p95 per setup and,
/// for each setup after the second, the ratio (setup − first) ÷ (second − first) on
/// medians: what it costs over the bare agent, in units of what the no-op costs.
/// Returns the number of timed rounds.
fn time_setups(what: &str, setups: &[(&str, &Edge)], session: impl Fn(&Edge) -> AgentRun) -> usize {
    let runs: usize = std::env::var("SOLARIA_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); setups.len()];
    for i in 0..=runs {
        for (n, (_, edge)) in setups.iter().enumerate() {
            let run = session(edge);
            run.assert_success();
            // The first round warms the page cache and the stores: not counted.
            if i > 0 {
                times[n].push(run.elapsed);
            }
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let stats: Vec<(f64, f64)> = times
        .iter_mut()
        .map(|t| {
            t.sort();
            let p95 = t[((t.len() * 95).div_ceil(100)).saturating_sub(1)];
            (ms(t[t.len() / 2]), ms(p95))
        })
        .collect();
    println!("{runs} runs each, interleaved; wall time of {what}");
    println!("| setup | median | p95 | median over the first | ratio to the no-op |");
    println!("|---|---|---|---|---|");
    let noop_cost = stats[1].0 - stats[0].0;
    for (n, ((name, _), (median, p95))) in setups.iter().zip(&stats).enumerate() {
        let cost = median - stats[0].0;
        let ratio = if n < 2 {
            "".to_string()
        } else if noop_cost > 0.0 {
            format!("{:.2}", cost / noop_cost)
        } else {
            "n/a (the no-op costs nothing measurable)".to_string()
        };
        println!("| {name} | {median:.0} ms | {p95:.0} ms | {cost:+.0} ms | {ratio} |");
    }
    runs
}

/// `EXE install claude-code --no-service` on `edge`: the hooks and the MCP server run EXE.
fn install_with(edge: &Edge, exe: &Path) {
    let out = std::process::Command::new(exe)
        .current_dir(&edge.project)
        .env_clear()
        .env("HOME", edge.home())
        .env("SOLARIA_HOME", edge.data())
        .args(["install", "claude-code", "--no-service"])
        .output()
        .expect("run solaria install");
    assert!(out.status.success(), "install: {out:?}");
}

/// Starts `exe serve` (the bench's build, as the hooks run) on `edge` with its local
/// API on a free port, once its hooks' socket listens.
fn serve_with(edge: &Edge, exe: &Path) -> solaria_tests::daemon::Daemon {
    solaria_tests::daemon::configure_port(edge, solaria_tests::free_port());
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
    let path = edge.home().join(".claude.json");
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("~/.claude.json"))
            .expect("json");
    config["mcpServers"]
        .as_object_mut()
        .expect("mcpServers")
        .remove("solaria");
    std::fs::write(&path, config.to_string()).expect("write ~/.claude.json");
}

/// Gives `to` the hooks SOLARIA installed on `from` (same events, same matchers), each
/// running `true` instead.
fn noop_hooks_like(from: &Edge, to: &Edge) {
    std::fs::create_dir_all(to.home().join(".claude")).expect(".claude");
    std::fs::copy(
        from.home().join(".claude/settings.json"),
        to.home().join(".claude/settings.json"),
    )
    .expect("copy settings.json");
    rewrite_hook_commands(to, |_| "true".to_owned());
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
        .find("SOLARIA memory related to this prompt")
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
        !text.contains("SOLARIA memory related to this prompt"),
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
    // The plugin forwards idle/end detached: give it a moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
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

    // And the reverse: what Claude Code did reaches OpenCode's system prompt.
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
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
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
    let marker = "SOLARIA memory related to this prompt";
    for turn in &turns {
        let text = turn.text();
        assert!(
            text.contains("## Decisions and knowledge")
                && text.contains("No ORM for the billing tables"),
            "the standing decision is in the system prompt: {text}"
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
