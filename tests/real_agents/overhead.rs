//! What SOLARIA's hooks and plugin cost inside the real agents: benchmarks, run by
//! hand (`--ignored --nocapture`), figures in docs/BENCHMARKS.md ("Hook cost inside …" rows).

use super::*;
use super::{codex, gemini};

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
///     --nocapture real_agents::overhead::hook_overhead
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn hook_overhead_in_claude_code() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let exe = bench_exe();
    let solaria = installed(&exe);
    let hooks_only = installed(&exe);
    without_mcp_server(&hooks_only);
    let relayed = installed(&exe);
    without_mcp_server(&relayed);
    let _relaying = serve_with(&relayed, &exe);
    let with_daemon = installed(&exe);
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
        coding_session(&claude),
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

/// Where a whole Claude Code session's time goes with SOLARIA (a benchmark, run by
/// hand; docs/BENCHMARKS.md, "A whole session inside Claude Code"): the 5-tool
/// session alone, with SOLARIA as installed (without and with its daemon, which a
/// service install keeps running), with its hooks alone, with its MCP
/// server alone, and with an MCP server that answers at once and lists no tools
/// (what any MCP server costs the agent, apart from ours), interleaved, `SOLARIA_BENCH_RUNS` times.
///
/// ```sh
/// cargo build --release -p solaria-edge --bins && bash deploy/static-hook.sh release
/// eval "$(bash deploy/agents.sh)"
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::overhead::session_cost_in_claude_code
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn session_cost_in_claude_code() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let exe = bench_exe();
    let alone = Edge::new("alone");
    let solaria = installed(&exe);
    let hooks_only = installed(&exe);
    without_mcp_server(&hooks_only);
    let server_only = installed(&exe);
    without_hooks(&server_only);
    let empty_server = installed(&exe);
    without_hooks(&empty_server);
    with_an_instant_mcp_server(&empty_server, r#"{"tools":[]}"#);
    let with_daemon = installed(&exe);
    let _daemon = serve_with(&with_daemon, &exe);
    let setups = [
        ("the agent alone", &alone),
        ("SOLARIA installed (hooks + MCP)", &solaria),
        ("SOLARIA installed, daemon running", &with_daemon),
        ("SOLARIA hooks, no MCP server", &hooks_only),
        ("SOLARIA MCP server, no hooks", &server_only),
        ("an MCP server of no tools, no hooks", &empty_server),
    ];
    time_setups(
        "`claude -p` (5 tools, 6 requests)",
        &setups,
        coding_session(&claude),
    );
}

/// What an MCP server costs Claude Code by what it is (a benchmark, run by hand):
/// SOLARIA's own; a server that starts at once (a bash loop) listing no tools; the
/// same loop listing SOLARIA's tools word for word; and SOLARIA's with Claude Code
/// told not to wait for MCP servers before its first request
/// (`MCP_CONNECTION_NONBLOCKING` in its settings' `env`). No hooks anywhere.
///
/// ```sh
/// cargo build --release -p solaria-edge --bins && eval "$(bash deploy/agents.sh)"
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::overhead::mcp_server_cost_in_claude_code
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn mcp_server_cost_in_claude_code() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let exe = bench_exe();
    let alone = Edge::new("alone");
    let ours = installed(&exe);
    without_hooks(&ours);
    let tools = our_tool_list(&ours);
    let instant_empty = installed(&exe);
    without_hooks(&instant_empty);
    with_an_instant_mcp_server(&instant_empty, r#"{"tools":[]}"#);
    let instant_ours = installed(&exe);
    without_hooks(&instant_ours);
    with_an_instant_mcp_server(&instant_ours, &tools);
    let not_waited = installed(&exe);
    without_hooks(&not_waited);
    edit_json(
        &not_waited.home().join(".claude/settings.json"),
        |settings| {
            settings["env"] = json!({"MCP_CONNECTION_NONBLOCKING": "true"});
        },
    );
    let setups = [
        ("the agent alone", &alone),
        ("SOLARIA's MCP server", &ours),
        ("an instant server, no tools", &instant_empty),
        ("an instant server, SOLARIA's tools", &instant_ours),
        ("SOLARIA's MCP server, not waited for", &not_waited),
    ];
    time_setups(
        "`claude -p` (5 tools, 6 requests)",
        &setups,
        coding_session(&claude),
    );
}

/// SOLARIA's MCP server's answer to `tools/list` on `edge`, as JSON text (this
/// build's server: the tools are the release's).
fn our_tool_list(edge: &Edge) -> String {
    let mut server = solaria_tests::mcp::McpStdio::start(edge);
    server.initialize("bench");
    let answer = server.request("tools/list", json!({}));
    server.close();
    answer["result"].to_string()
}

/// Points `edge`'s `solaria` MCP server at a bash loop that answers at once and
/// lists `tools` (a `tools/list` result, as JSON text).
fn with_an_instant_mcp_server(edge: &Edge, tools: &str) {
    let list = edge.home().join("tools.json");
    std::fs::write(&list, tools).expect("write the tool list");
    let script = edge.home().join("instant_mcp.sh");
    std::fs::write(&script, INSTANT_MCP).expect("write the server");
    edit_json(&edge.home().join(".claude.json"), |config| {
        config["mcpServers"]["solaria"] = json!({
            "type": "stdio",
            "command": "bash",
            "args": [script, list],
        });
    });
}

/// An MCP server over stdio in bash (no interpreter to load): answers
/// `initialize`, lists the tools of the file it is given, answers anything else
/// with an empty result. Claude Code 2.1.330 first probes with `server/discover`
/// (a string id), which this server does not know (SOLARIA's answers it): it says
/// so at once, and Claude Code goes on with `initialize`.
const INSTANT_MCP: &str = r#"tools=$(<"$1")
while IFS= read -r line; do
    [[ $line =~ \"id\":[[:space:]]*(\"[^\"]*\"|[0-9]+) ]] || continue
    id=${BASH_REMATCH[1]}
    if [[ $line == *'"server/discover"'* ]]; then
        printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id"
    elif [[ $line == *'"initialize"'* ]]; then
        [[ $line =~ \"protocolVersion\":[[:space:]]*\"([^\"]+)\" ]]
        printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"instant","version":"0"}}}\n' "$id" "${BASH_REMATCH[1]}"
    elif [[ $line == *'"tools/list"'* ]]; then
        printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$tools"
    else
        printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
    fi
done
"#;

/// A machine with SOLARIA installed for Claude Code, its hooks and MCP server
/// running `exe`.
fn installed(exe: &Path) -> Edge {
    let edge = Edge::new("laptop");
    install_with(&edge, exe);
    edge
}

/// The benchmarks' Claude Code session: the 5-tool coding script against a fresh
/// scripted endpoint.
fn coding_session(claude: &Path) -> impl Fn(&Edge) -> AgentRun + '_ {
    move |edge| {
        let model = ModelServer::start(coding_script(&edge.project));
        run_claude(
            claude,
            edge,
            &model,
            "Write a note about the deploy key",
            "bench",
        )
    }
}

/// Leaves `edge`'s Claude Code without SOLARIA's hooks (its MCP server stays).
fn without_hooks(edge: &Edge) {
    edit_json(&edge.home().join(".claude/settings.json"), |settings| {
        settings["hooks"] = json!({});
    });
}

/// The same for OpenCode: the 5-tool session through the plugin. The no-op plugin is
/// SOLARIA's with `true` as its hook command (the same events forwarded to a
/// process that does nothing), so the ratio is what SOLARIA's work costs over the
/// forwarding itself.
///
/// ```sh
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::overhead::plugin_overhead
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
/// docs/BENCHMARKS.md, "Hook cost inside Claude Code"): each hook command of the setup
/// is wrapped in a shell script that logs when it started and ended, so the agent's and
/// the model's time drop out of the figure. Setups: `/bin/true` as every hook (the
/// no-op as a process), SOLARIA's hooks with the daemon running, and a stand-in that
/// only sleeps 2 ms (a hook as slow as ours that does nothing else, to tell a hook's
/// duration from its side effects). `SOLARIA_BENCH_RUNS` sessions each (default 12),
/// interleaved.
///
/// ```sh
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::overhead::hook_time
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn hook_time_in_claude_code() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    hook_times(&HookBench {
        agent: "Claude Code",
        calls: &[
            "SessionStart",
            "UserPromptSubmit",
            "Write",
            "Read",
            "Edit",
            "Bash",
            "Bash (fails)",
            "Stop",
            "SessionEnd",
        ],
        install: &|edge: &Edge, exe: &Path| {
            install_with(edge, exe);
            without_mcp_server(edge);
        },
        rewrite: &rewrite_hook_commands,
        session: &|edge: &Edge, name: &str| {
            let model = ModelServer::start(coding_script(&edge.project));
            run_claude(
                &claude,
                edge,
                &model,
                "Write a note about the deploy key",
                name,
            )
        },
    });
}

/// The same inside Codex CLI (its coding session: two commands, one failing, and a
/// patch). Rewriting the hooks' commands undoes the trust the install recorded, so
/// every setup runs with Codex's trust check bypassed alike.
///
/// ```sh
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::overhead::hook_time_in_codex
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn hook_time_in_codex() {
    let Some(codex) = agents::agent_binary(agents::CODEX_VAR) else {
        return;
    };
    hook_times(&HookBench {
        agent: "Codex CLI",
        calls: &[
            "SessionStart",
            "UserPromptSubmit",
            "Bash",
            "Bash (fails)",
            "apply_patch",
            "Stop",
            "SessionEnd",
        ],
        install: &|edge: &Edge, exe: &Path| install_agent_with(edge, exe, "codex"),
        rewrite: &rewrite_codex_hook_commands,
        session: &|edge: &Edge, name: &str| {
            let model = ModelServer::start(codex::coding_script());
            codex::run_codex(
                &codex,
                edge,
                &model,
                "Write a note about the deploy key",
                name,
                &["--dangerously-bypass-hook-trust"],
            )
        },
    });
}

/// The same inside Gemini CLI (two commands, one failing, and a file written).
///
/// ```sh
/// SOLARIA_BENCH_SOLARIA=target/release/solaria cargo test -p solaria-tests -- --ignored \
///     --nocapture real_agents::overhead::hook_time_in_gemini
/// ```
#[test]
#[ignore = "a benchmark: run it by hand with --ignored --nocapture"]
fn hook_time_in_gemini() {
    let Some(gemini) = agents::agent_binary(agents::GEMINI_VAR) else {
        return;
    };
    hook_times(&HookBench {
        agent: "Gemini CLI",
        calls: &[
            "SessionStart",
            "BeforeAgent",
            "Bash",
            "Bash (fails)",
            "Write",
            "AfterAgent",
            "SessionEnd",
        ],
        install: &|edge: &Edge, exe: &Path| {
            let settings = edge.home().join(".gemini/settings.json");
            std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
            std::fs::write(&settings, agents::GEMINI_USER_SETTINGS).expect("settings");
            install_agent_with(edge, exe, "gemini");
        },
        rewrite: &rewrite_gemini_hook_commands,
        session: &|edge: &Edge, name: &str| {
            let model = ModelServer::start(gemini::coding_script(&edge.project));
            gemini::run_gemini(
                &gemini,
                edge,
                &model,
                "Write a note about the deploy key",
                name,
            )
        },
    });
}

/// What a hook command becomes, from SOLARIA's.
type Rewrite<'r> = dyn Fn(&str) -> String + 'r;

/// One agent's hook-time benchmark: how SOLARIA is installed into it and its hook
/// commands rewritten, its scripted session, and the hook calls a session makes.
struct HookBench<'a> {
    agent: &'a str,
    /// The hook calls of one session, in order.
    calls: &'a [&'a str],
    install: &'a dyn Fn(&Edge, &Path),
    rewrite: &'a dyn Fn(&Edge, &Rewrite<'_>),
    session: &'a dyn Fn(&Edge, &str) -> AgentRun,
}

/// Times every hook call of `bench`'s session (through a wrapper that logs each
/// call's start and end) with four hook commands: `/bin/true`, `dd` reading the
/// payload, SOLARIA's with its daemon running, and a 2 ms sleep; `SOLARIA_BENCH_RUNS`
/// sessions each (default 12) after a warm-up, interleaved. Prints the hooks' time a
/// session against `/bin/true`'s, and each call's median.
fn hook_times(bench: &HookBench<'_>) {
    let exe = bench_exe();
    let runs: usize = std::env::var("SOLARIA_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(12);
    let mut daemons = Vec::new();
    let setups: Vec<(&str, Edge)> = [
        ("`/bin/true`", Some("/bin/true")),
        // A no-op that reads the payload the agent writes to it, as any hook
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
        (bench.install)(&edge, &exe);
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
        (bench.rewrite)(&edge, &|ours| {
            format!("{} {}", wrapper.display(), command.unwrap_or(ours))
        });
        (name, edge)
    })
    .collect();
    for round in 0..=runs {
        for (_, edge) in &setups {
            (bench.session)(edge, &format!("t{round}")).assert_success();
        }
    }
    let n = bench.calls.len();
    println!(
        "{}: {runs} sessions each after one warm-up, interleaved; {n} hook calls a session",
        bench.agent
    );
    println!(
        "| setup | hooks' time a session (median / p95) | a call (median) | SessionStart | ratio to `/bin/true` (median / p95) |"
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
        assert_eq!(calls.len(), n * (runs + 1), "{name}: every hook timed");
        let sessions: Vec<&[f64]> = calls.chunks(n).skip(1).collect();
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let mut totals: Vec<f64> = sessions.iter().map(|s| s.iter().sum()).collect();
        totals.sort_by(f64::total_cmp);
        let p95 = totals[((totals.len() * 95).div_ceil(100)).saturating_sub(1)];
        let per_session = median(totals);
        let per_call = median(sessions.iter().flat_map(|s| s.iter().copied()).collect());
        let start = median(sessions.iter().map(|s| s[0]).collect());
        let (base, base_p95) = *first.get_or_insert((per_session, p95));
        println!(
            "| {name} | {per_session:.1} / {p95:.1} ms | {per_call:.1} ms | {start:.1} ms | {:.2} / {:.2} |",
            per_session / base,
            p95 / base_p95
        );
        let by_place: Vec<String> = (0..n)
            .map(|i| format!("{:.1}", median(sessions.iter().map(|s| s[i]).collect())))
            .collect();
        breakdown.push(format!("| {name} | {} |", by_place.join(" | ")));
    }
    println!("\nEach call's median, in the order of a session:");
    println!("| setup | {} |", bench.calls.join(" | "));
    println!("|---|{}", "---|".repeat(n));
    for line in breakdown {
        println!("{line}");
    }
}

/// Rewrites each of SOLARIA's hook commands in `edge`'s Codex `config.toml` to
/// `to(command)` (the hooks' lines in SOLARIA's block).
fn rewrite_codex_hook_commands(edge: &Edge, to: &Rewrite<'_>) {
    let path = edge.home().join(".codex/config.toml");
    let text = std::fs::read_to_string(&path).expect("config.toml");
    let rewritten: Vec<String> = text
        .lines()
        .map(|line| {
            let Some(value) = line.strip_prefix("command = ") else {
                return line.to_owned();
            };
            let table: toml::Table =
                toml::from_str(&format!("v = {value}")).expect("a TOML string");
            let ours = table["v"].as_str().expect("a string");
            if !ours.contains(" codex ") {
                return line.to_owned();
            }
            // A JSON string is a TOML basic string.
            format!("command = {}", Value::from(to(ours)))
        })
        .collect();
    std::fs::write(&path, rewritten.join("\n") + "\n").expect("write config.toml");
}

/// Rewrites each of SOLARIA's hook commands in `edge`'s Gemini `settings.json`.
fn rewrite_gemini_hook_commands(edge: &Edge, to: &Rewrite<'_>) {
    rewrite_json_hook_commands(&edge.home().join(".gemini/settings.json"), to);
}

/// `EXE install AGENT --no-service --no-model` on `edge`.
fn install_agent_with(edge: &Edge, exe: &Path, agent: &str) {
    let out = std::process::Command::new(exe)
        .current_dir(&edge.project)
        .env_clear()
        .env("HOME", edge.home())
        .env("SOLARIA_HOME", edge.data())
        .args(["install", agent, "--no-service", "--no-model"])
        .output()
        .expect("run solaria install");
    assert!(out.status.success(), "install: {out:?}");
}

/// Rewrites every hook command in `edge`'s Claude Code settings.json to `to(command)`.
fn rewrite_hook_commands(edge: &Edge, to: &Rewrite<'_>) {
    rewrite_json_hook_commands(&edge.home().join(".claude/settings.json"), to);
}

/// Rewrites every hook command of the JSON settings at `path` (Claude Code's and
/// Gemini's share the shape: `hooks` → event → groups → `hooks` → `command`).
fn rewrite_json_hook_commands(path: &Path, to: &Rewrite<'_>) {
    edit_json(path, |settings| {
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
    });
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
    println!(
        "| setup | median | p95 | median over the first | × the first, median / p95 | ratio to the no-op |"
    );
    println!("|---|---|---|---|---|---|");
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
        println!(
            "| {name} | {median:.0} ms | {p95:.0} ms | {cost:+.0} ms | {:.2} / {:.2} | {ratio} |",
            median / stats[0].0,
            p95 / stats[0].1
        );
    }
    runs
}

/// `EXE install claude-code --no-service --no-model` on `edge`: the hooks and the MCP server run EXE.
fn install_with(edge: &Edge, exe: &Path) {
    install_agent_with(edge, exe, "claude-code");
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
    rewrite_hook_commands(to, &|_| "true".to_owned());
}
