//! OpenCode through the real `solaria` binary: `install`/`uninstall opencode` are
//! exact and reversible on a user's JSONC config, OpenCode's events become the
//! same records as Claude Code's (one project, one memory), bad events are logged
//! and dropped, `doctor` tells what is missing, and the plugin itself runs under
//! node against the real binary without ever throwing or holding OpenCode.

use serde_json::{Value, json};
use solaria_tests::edge::Edge;
use solaria_tests::opencode::{self as oc, hook};
use solaria_tests::payloads::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A user config with comments, a trailing comma and keys of its own.
const USER_CONFIG: &str = r#"// My OpenCode setup
{
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5", // pinned for the team
  /* servers I use at work */
  "mcp": {
    "github": { "type": "remote", "url": "https://mcp.example.com/github" },
  },
  "permission": { "bash": "ask" },
}
"#;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The JSONC text as a value (comments and trailing commas set aside the way
/// OpenCode reads them).
fn jsonc(text: &str) -> Value {
    solaria_edge::install::jsonc::Doc::parse(text)
        .expect("OpenCode can still read it")
        .value
}

/// Every path under `dir`, relative and sorted (what a user would see with `find`).
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            out.push(
                p.strip_prefix(base)
                    .expect("under base")
                    .display()
                    .to_string(),
            );
            if p.is_dir() {
                walk(base, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn install_and_uninstall_keep_a_jsonc_config_byte_for_byte() {
    let m = Edge::new("test-machine");
    // XDG_CONFIG_HOME is honoured: the install goes there, not to ~/.config.
    let xdg = m.root.path().join("xdg");
    let base = xdg.join("opencode");
    std::fs::create_dir_all(base.join("plugins")).expect("mkdir");
    std::fs::write(base.join("opencode.json"), USER_CONFIG).expect("config");
    let other_plugin = "export const Mine = async () => ({})\n";
    std::fs::write(base.join("plugins/mine.js"), other_plugin).expect("plugin");
    let before = tree(&xdg);
    let run = |args: &[&str]| {
        let out = m
            .cmd_in(m.root.path())
            .env("XDG_CONFIG_HOME", &xdg)
            .args(args)
            .output()
            .expect("run solaria");
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    let out = run(&["install", "opencode", "--no-service"]);
    assert!(out.contains("Installed SOLARIA into OpenCode"), "{out}");
    assert!(!m.home().join(".config").exists());
    let exe = solaria();
    let config = read(&base.join("opencode.json"));
    for kept in [
        "// My OpenCode setup",
        "// pinned for the team",
        "/* servers I use at work */",
    ] {
        assert!(config.contains(kept), "comment {kept:?} kept:\n{config}");
    }
    let value = jsonc(&config);
    assert_eq!(
        value["mcp"]["solaria"],
        json!({"type": "local", "command": [exe, "mcp"], "enabled": true})
    );
    assert_eq!(
        value["mcp"]["github"]["url"],
        "https://mcp.example.com/github"
    );
    assert_eq!(value["model"], "anthropic/claude-sonnet-4-5");
    assert_eq!(value["permission"], json!({"bash": "ask"}));
    let plugin = read(&base.join("plugins/solaria.js"));
    // The small client beside `solaria` runs the events, told the data dir.
    let client = solaria_tests::binary("solaria-hook").display().to_string();
    let data = m.data().display().to_string();
    assert!(
        plugin.contains(&format!(
            "const HOOK = {};",
            json!([client, "--data-dir", data])
        )),
        "{plugin}"
    );
    assert!(plugin.contains("\"tool.execute.after\""));
    let command = read(&base.join("commands/memory.md"));
    assert!(
        command.contains(&format!("{exe} slash \"$ARGUMENTS\"")),
        "{command}"
    );

    let installed = tree(&xdg);
    let bytes = read(&base.join("opencode.json"));
    let again = run(&["install", "opencode", "--no-service"]);
    assert!(again.contains("already installed"), "{again}");
    assert_eq!(read(&base.join("opencode.json")), bytes, "twice = once");
    assert_eq!(tree(&xdg), installed);

    let out = run(&["uninstall", "opencode"]);
    assert!(out.contains("Removed SOLARIA's OpenCode plugin"), "{out}");
    assert_eq!(
        read(&base.join("opencode.json")),
        USER_CONFIG,
        "byte for byte"
    );
    assert_eq!(read(&base.join("plugins/mine.js")), other_plugin);
    assert_eq!(tree(&xdg), before, "only what install added is gone");
    let noop = run(&["uninstall", "opencode"]);
    assert!(noop.contains("nothing changed"), "{noop}");
}

#[test]
fn a_project_install_made_from_nothing_leaves_nothing_behind() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", Some("git@github.com:acme/api.git"));
    let before = tree(&p);
    m.ok_in(&p, &["install", "opencode", "--scope", "project"]);
    assert!(p.join(".opencode/plugins/solaria.js").is_file());
    assert!(p.join(".opencode/commands/memory.md").is_file());
    let config = jsonc(&read(&p.join("opencode.json")));
    assert_eq!(config["mcp"]["solaria"]["command"][1], "mcp");
    assert!(
        m.systemctl_calls().is_empty(),
        "a project install registers no service"
    );
    m.ok_in(&p, &["uninstall", "opencode", "--scope", "project"]);
    assert_eq!(tree(&p), before, "created files and directories removed");
}

#[test]
fn a_config_that_is_not_json_is_refused_and_nothing_is_written() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    let broken = "{\n  \"model\": \"anthropic/x\",\n  \"mcp\": {\n}\n";
    std::fs::write(p.join("opencode.json"), broken).expect("config");
    let out = m.run_in(&p, &["install", "opencode", "--scope", "project"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("opencode.json is not valid JSON/JSONC")
            && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(read(&p.join("opencode.json")), broken);
    assert!(!p.join(".opencode").exists(), "no plugin, no command");
}

#[test]
fn opencode_events_become_the_same_records_as_claude_codes() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", Some("git@github.com:acme/api.git"));
    // Claude Code worked in this repository first.
    let cc = "5b1c2f0e-0000-4000-8000-0000000000cc";
    m.hook("session-start", session_start(cc, &p));
    m.hook(
        "user-prompt-submit",
        prompt(cc, &p, "Why does renew_jwt fail after expiry?"),
    );
    m.hook("stop", stop(cc, &p));

    let s = "ses_5f3a9c1e2ffeXq7Y3bZ1vK9d";
    let file = |rel: &str| p.join(rel).display().to_string();
    hook(&m, "session.created", &oc::session_created(s, &p));
    hook(
        &m,
        "chat.message",
        &oc::chat_message(s, &p, "Fix the JWT refresh in src/auth/refresh.rs"),
    );
    hook(
        &m,
        "tool.execute.after",
        &oc::tool_after(
            s,
            &p,
            "read",
            json!({"filePath": file("src/auth/refresh.rs")}),
            "<path>src/auth/refresh.rs</path>\n<type>file</type>\n<content>\n1: pub fn renew_jwt() {}\n</content>",
            json!({"preview": "pub fn renew_jwt() {}", "truncated": false, "loaded": []}),
        ),
    );
    hook(
        &m,
        "tool.execute.after",
        &oc::tool_after(
            s,
            &p,
            "edit",
            json!({"filePath": file("src/auth/refresh.rs"), "oldString": "fn renew_jwt() {}", "newString": "fn renew_jwt(t: &Token) -> Result<Token> { refresh(t) }"}),
            "Edit applied successfully.",
            json!({"diagnostics": {}, "diff": "-pub fn renew_jwt() {}\n+pub fn renew_jwt(t: &Token) -> Result<Token> { refresh(t) }",
               "filediff": {"file": file("src/auth/refresh.rs"), "before": "pub fn renew_jwt() {}\n", "after": "…", "additions": 1, "deletions": 1}}),
        ),
    );
    hook(
        &m,
        "tool.execute.after",
        &oc::tool_after(
            s,
            &p,
            "write",
            json!({"filePath": file("src/auth/token.rs"), "content": "pub struct Token;\n"}),
            "Wrote file successfully.",
            json!({"diagnostics": {}, "filepath": file("src/auth/token.rs"), "exists": false}),
        ),
    );
    hook(
        &m,
        "tool.execute.after",
        &oc::tool_after(
            s,
            &p,
            "bash",
            json!({"command": "cargo test auth::refresh", "description": "Run the refresh tests"}),
            "error[E0308]: mismatched types\n  --> src/auth/refresh.rs:3:5",
            json!({"output": "error[E0308]: mismatched types", "exit": 101, "description": "Run the refresh tests", "truncated": false}),
        ),
    );
    hook(
        &m,
        "message.part.updated",
        &oc::tool_error(
            s,
            &p,
            "read",
            json!({"filePath": file("src/auth/missing.rs")}),
            "File not found: src/auth/missing.rs",
        ),
    );
    // Looking at the memory is not captured as memory.
    hook(
        &m,
        "tool.execute.after",
        &oc::tool_after(
            s,
            &p,
            "solaria_memory_search",
            json!({"query": "jwt"}),
            "[O#…] Read src/auth/refresh.rs",
            json!({}),
        ),
    );
    hook(&m, "session.error", &oc::session_error(s, &p, "Overloaded"));
    hook(
        &m,
        "session.idle",
        &oc::session_idle(s, &p, "Renewal now refreshes expired tokens."),
    );

    let db = m.db();
    let sessions: Vec<(String, String, String, Option<i64>)> = db
        .prepare("SELECT agent, agent_session_id, project_key, ended_at FROM sessions ORDER BY started_at")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert_eq!(
        (sessions[0].0.as_str(), sessions[1].0.as_str()),
        ("claude-code", "opencode")
    );
    assert_eq!(sessions[1].1, s);
    assert_eq!(sessions[0].2, "github.com/acme/api");
    assert_eq!(sessions[1].2, sessions[0].2, "one project for both agents");
    assert!(
        sessions[1].3.is_some(),
        "idle closes the turn, as Stop does"
    );

    let rows = m.strings(
        "SELECT o.kind || ' | ' || o.title || ' | ' || COALESCE(json_extract(o.metadata, '$.error'), 0)
           FROM observations o JOIN sessions s ON s.id = o.session_id
          WHERE s.agent = 'opencode' ORDER BY o.created_at, o.rowid",
    );
    assert_eq!(
        rows,
        [
            "prompt | Fix the JWT refresh in src/auth/refresh.rs | 0",
            "tool_use | Read src/auth/refresh.rs | 0",
            "tool_use | Edit src/auth/refresh.rs | 0",
            "tool_use | Write src/auth/token.rs | 0",
            "tool_use | Bash: cargo test auth::refresh — Run the refresh tests | 1",
            "tool_use | Read src/auth/missing.rs | 1",
            "tool_use | Session error: APIError Overloaded | 1",
        ]
    );
    let files =
        m.strings("SELECT DISTINCT j.value FROM observations o, json_each(o.files) j ORDER BY 1");
    assert_eq!(
        files,
        [
            file("src/auth/missing.rs"),
            file("src/auth/refresh.rs"),
            file("src/auth/token.rs")
        ]
    );
    let summary = m.strings(
        "SELECT su.text FROM summaries su JOIN sessions s ON s.id = su.session_id WHERE s.agent = 'opencode'",
    );
    assert_eq!(summary.len(), 1);
    assert!(
        summary[0].contains("Renewal now refreshes expired tokens."),
        "{}",
        summary[0]
    );

    // One memory: a search finds both agents' work, and OpenCode's context shows it.
    let hits = m.search("renew_jwt");
    assert!(hits.len() >= 2, "{hits:?}");
    let context = hook(&m, "context", &oc::context_request("ses_next", &p));
    let text = String::from_utf8_lossy(&context.stdout);
    assert!(
        text.starts_with("# SOLARIA memory: project api (github.com/acme/api)"),
        "{text}"
    );
    assert!(
        text.contains("auth/refresh.rs") && text.contains("Why does renew_jwt fail"),
        "{text}"
    );
    assert!(m.hook_log().is_empty(), "{}", m.hook_log());
}

#[test]
fn the_memory_command_output_is_not_captured_as_a_prompt() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    let expanded = solaria_edge::install::opencode::command_file("/usr/bin/solaria")
        .replace("$ARGUMENTS", "search jwt");
    let body = expanded
        .split("---\n")
        .nth(2)
        .expect("after the front matter");
    hook(&m, "chat.message", &oc::chat_message("ses_1", &p, body));
    assert!(!m.db_path().exists() || m.count("SELECT count(*) FROM observations") == 0);
    assert!(m.hook_log().is_empty(), "ignored on purpose, not an error");
}

#[test]
fn bad_opencode_events_are_logged_and_dropped() {
    let m = Edge::new("test-machine");
    let cases: [(&str, &[u8], &str); 5] = [
        ("tool.execute.after", b"{\"input\": ", "not a JSON object"),
        ("session.idle", b"", "empty payload"),
        (
            "message.updated",
            b"{\"properties\": {}}",
            "unexpected OpenCode event \"message.updated\"",
        ),
        (
            "session.idle",
            b"{\"properties\": {}}",
            "session.idle payload names no session",
        ),
        (
            "tool.execute.after",
            b"{\"input\": {\"sessionID\": \"s\"}, \"output\": 7}",
            "no tool name",
        ),
    ];
    for (event, stdin, _) in cases {
        let out = m.hook_args(&["hook", "opencode", event], stdin);
        assert!(out.stdout.is_empty(), "{event}: {out:?}");
    }
    let no_event = m.hook_args(&["hook", "opencode"], b"{}");
    assert!(no_event.stdout.is_empty());
    let log = m.hook_log();
    for (event, _, reason) in cases {
        assert!(
            log.lines()
                .any(|l| l.contains(&format!("opencode {event} ")) && l.contains(reason)),
            "{event}: {reason} in\n{log}"
        );
    }
    assert!(log.contains("(no event)"), "{log}");
    assert!(!m.db_path().exists() || m.count("SELECT count(*) FROM observations") == 0);
}

fn doctor(m: &Edge) -> Vec<(String, String, Option<String>)> {
    let report = m.json(m.root.path(), &["doctor", "--json"]);
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["check"].as_str().expect("check").to_owned(),
                c["status"].as_str().expect("status").to_owned(),
                c["fix"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn status_of(checks: &[(String, String, Option<String>)], name: &str) -> (String, Option<String>) {
    checks
        .iter()
        .find(|c| c.0 == name)
        .map(|c| (c.1.clone(), c.2.clone()))
        .unwrap_or_else(|| panic!("no check {name}: {checks:?}"))
}

#[test]
fn doctor_says_what_is_missing_then_that_all_is_ok() {
    let m = Edge::new("test-machine");
    let before = doctor(&m);
    for name in [
        "claude-code hooks",
        "claude-code mcp",
        "opencode plugin",
        "opencode mcp",
        "opencode /memory",
        "codex hooks",
        "codex $solaria-memory",
        "gemini hooks",
        "gemini /solaria",
    ] {
        let (status, fix) = status_of(&before, name);
        assert_eq!(status, "missing", "{name}");
        let agent = name.split(' ').next().expect("agent");
        assert_eq!(
            fix.as_deref(),
            Some(format!("solaria install {agent}").as_str())
        );
    }
    for agent in ["opencode", "codex", "gemini"] {
        assert_eq!(status_of(&before, &format!("{agent} capture")).0, "missing");
    }
    let text = m.ok_in(m.root.path(), &["doctor"]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("missing  opencode plugin")
                && l.ends_with("fix: solaria install opencode")),
        "{text}"
    );

    m.ok_in(m.root.path(), &["install", "claude-code", "--no-service"]);
    m.ok_in(m.root.path(), &["install", "opencode", "--no-service"]);
    m.ok_in(m.root.path(), &["install", "codex", "--no-service"]);
    m.ok_in(m.root.path(), &["install", "gemini", "--no-service"]);
    let p = project(m.root.path(), "api", None);
    hook(&m, "chat.message", &oc::chat_message("ses_1", &p, "hello"));
    let typed = solaria_tests::payloads::prompt("s-agent", &p, "hello").to_string();
    m.hook_args(&["hook", "codex", "user-prompt-submit"], typed.as_bytes());
    m.hook_args(&["hook", "gemini", "before-agent"], typed.as_bytes());
    let after = doctor(&m);
    for name in [
        "claude-code hooks",
        "claude-code mcp",
        "claude-code /memory",
        "opencode plugin",
        "opencode mcp",
        "opencode /memory",
        "opencode capture",
        "codex hooks",
        "codex mcp",
        "codex $solaria-memory",
        "codex capture",
        "gemini hooks",
        "gemini mcp",
        "gemini /solaria",
        "gemini capture",
    ] {
        assert_eq!(status_of(&after, name).0, "ok", "{name}: {after:?}");
    }
    assert_eq!(
        status_of(&after, "daemon").0,
        "missing",
        "no daemon in this test"
    );

    // A plugin left by another solaria build is stale, and says how to refresh it.
    let plugin = m.home().join(".config/opencode/plugins/solaria.js");
    let old = read(&plugin).replace(&solaria(), "/old/bin/solaria");
    std::fs::write(&plugin, old).expect("write");
    let (status, fix) = status_of(&doctor(&m), "opencode plugin");
    assert_eq!(
        (status.as_str(), fix.as_deref()),
        ("stale", Some("solaria install opencode"))
    );
}

#[test]
fn uninstalling_one_agent_keeps_the_service_the_other_still_uses() {
    let m = Edge::new("test-machine");
    m.ok_in(m.root.path(), &["install", "claude-code"]);
    m.ok_in(m.root.path(), &["install", "opencode"]);
    let unit = m.home().join(".config/systemd/user/solaria.service");
    assert!(unit.exists());
    m.ok_in(m.root.path(), &["uninstall", "opencode"]);
    assert!(unit.exists(), "Claude Code still captures through it");
    m.ok_in(m.root.path(), &["uninstall", "claude-code"]);
    assert!(!unit.exists(), "the last agent takes the service with it");
}

/// `Some` when this machine has `node`; else the test is skipped, or fails in CI
/// (`solaria_tests::require`).
fn node() -> Option<()> {
    let found = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if found {
        Some(())
    } else {
        solaria_tests::require::skip(
            "node is not installed (the plugin's JavaScript runs under it)",
            "install Node.js 18 or later (https://nodejs.org) so that `node` is on PATH",
        )
    }
}

/// `node driver.mjs` in `dir` with `m`'s HOME and data dir (the plugin at
/// `plugin.mjs` beside the driver).
fn node_command(m: &Edge, dir: &Path, driver: &str) -> Command {
    std::fs::write(dir.join("driver.mjs"), driver).expect("driver");
    let mut command = Command::new("node");
    command
        .arg("driver.mjs")
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", m.home())
        .env("SOLARIA_HOME", m.data());
    command
}

/// Runs `driver` (an ES module) with node in `dir`, the plugin at `plugin.mjs`
/// beside it; its stdout.
fn run_node(m: &Edge, dir: &Path, driver: &str) -> String {
    let out = node_command(m, dir, driver).output().expect("run node");
    assert!(out.status.success(), "node: {out:?}");
    assert!(
        out.stderr.is_empty(),
        "nothing thrown: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A driver running under node that the test talks to: it reads the driver's
/// stdout line by line and answers on its stdin, so that the driver (OpenCode,
/// still running) waits for what the test waits for instead of for a while.
struct Conversation {
    node: std::process::Child,
    said: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    stderr: PathBuf,
}

impl Conversation {
    fn start(m: &Edge, dir: &Path, driver: &str) -> Conversation {
        let stderr = dir.join("node.stderr");
        let mut node = node_command(m, dir, driver)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("run node");
        let stdout = node.stdout.take().expect("node's stdout");
        let said = std::io::BufRead::lines(std::io::BufReader::new(stdout));
        Conversation { node, said, stderr }
    }

    /// The driver's next line.
    fn hear(&mut self) -> String {
        match self.said.next() {
            Some(line) => line.expect("node's stdout"),
            None => panic!(
                "node ended early ({:?}): {}",
                self.node.wait(),
                read(&self.stderr)
            ),
        }
    }

    /// Sends the driver a line.
    fn say(&mut self, line: &str) {
        let stdin = self.node.stdin.as_mut().expect("node's stdin");
        std::io::Write::write_all(stdin, format!("{line}\n").as_bytes()).expect("tell node");
    }

    /// Waits for node to end: it must end well and have thrown nothing.
    fn end(mut self) {
        drop(self.node.stdin.take());
        let status = self.node.wait().expect("node ends");
        assert!(status.success(), "node: {status}: {}", read(&self.stderr));
        let stderr = read(&self.stderr);
        assert!(stderr.is_empty(), "nothing thrown: {stderr}");
    }
}

/// Waits for `sql` to count `n` in `m`'s store (fire-and-forget forwards land
/// after the hooks returned).
fn wait_for(m: &Edge, sql: &str, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = if m.db_path().exists() {
            m.count(sql)
        } else {
            0
        };
        if found >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{sql}: {found} < {n}\n{}",
            m.hook_log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_installed_plugin_forwards_opencode_events_to_the_real_binary() {
    let Some(()) = node() else { return };
    let m = Edge::new("test-machine");
    let setup = oc::install_for_opencode(&m);
    let dir = m.root.path().join("node");
    std::fs::create_dir_all(&dir).expect("mkdir");
    // Node reads `.js` as CommonJS; OpenCode (Bun) loads the same bytes as a module.
    std::fs::copy(&setup.plugin, dir.join("plugin.mjs")).expect("copy plugin");
    let p = m.project.display().to_string();
    // The session's events, then (once the test saw them stored: bus events are
    // fire-and-forget, and the store is what OpenCode's next request reads) that
    // request's messages. The plugin waits at most 3 s a request for the
    // context and keeps the answer for the session's next requests, so a slow
    // machine may see it from a later request on: a few requests are sent.
    let driver = format!(
        r#"import {{ createInterface }} from "node:readline";
import {{ SolariaMemory }} from "./plugin.mjs";
const test = createInterface({{ input: process.stdin }})[Symbol.asyncIterator]();
const dir = {p:?};
const hooks = await SolariaMemory({{ directory: dir, worktree: dir }});
const s = "ses_node1";
await hooks.event({{ event: {{ id: "e1", type: "session.created", properties: {{ sessionID: s, info: {{ id: s, directory: dir, title: "t" }} }} }} }});
await hooks["chat.message"]({{ sessionID: s, agent: "build" }}, {{ message: {{ id: "m1", role: "user" }}, parts: [{{ type: "text", text: "Wire the node plugin" }}, {{ type: "file", url: "data:image/png;base64,AAAA" }}] }});
await hooks["tool.execute.after"]({{ tool: "read", sessionID: s, callID: "c1", args: {{ filePath: dir + "/src/lib.rs" }} }}, {{ title: "src/lib.rs", output: "1: fn main() {{}}", metadata: {{ truncated: false }} }});
await hooks.event({{ event: {{ type: "message.part.updated", properties: {{ part: {{ type: "text", text: "streaming…" }} }} }} }});
await hooks["experimental.text.complete"]({{ sessionID: s, messageID: "m2", partID: "p1" }}, {{ text: "All wired." }});
// Garbage of every kind: nothing may throw into OpenCode.
const loop = {{}}; loop.self = loop;
await hooks.event(undefined);
await hooks.event({{ event: 42 }});
await hooks.event({{ event: {{ type: "session.idle" }} }});
await hooks["chat.message"](undefined, undefined);
await hooks["chat.message"]({{ sessionID: s }}, {{ parts: "not a list" }});
await hooks["tool.execute.after"](null, null);
await hooks["tool.execute.after"]({{ tool: "bash", sessionID: s, args: loop }}, {{ output: "x" }});
await hooks["experimental.chat.messages.transform"](null, null);
await hooks["experimental.chat.messages.transform"]({{}}, {{ messages: "not a list" }});
await hooks["experimental.chat.messages.transform"]({{}}, {{ messages: [null, {{ info: {{ role: "user" }} }}, 42] }});
await hooks.event({{ event: {{ type: "session.idle", properties: {{ sessionID: s }} }} }});
console.log("sent");
await test.next();
let sent = [];
for (let request = 0; request < 5 && sent.length < 2; request++) {{
  const output = {{ messages: [{{ info: {{ id: "m1", sessionID: s, role: "user" }}, parts: [{{ type: "text", text: "Wire the node plugin" }}] }}] }};
  await hooks["experimental.chat.messages.transform"]({{}}, output);
  sent = output.messages.map((m) => ({{ id: m.info.id, role: m.info.role, text: m.parts.map((p) => p.text).join(""), synthetic: m.parts.every((p) => p.synthetic === true) }}));
}}
console.log(JSON.stringify(sent));
process.exit(0);
"#
    );
    let mut node = Conversation::start(&m, &dir, &driver);
    assert_eq!(node.hear(), "sent");
    // The idle event, forwarded last, is the summary: everything before it is in.
    wait_for(&m, "SELECT count(*) FROM summaries", 1);
    node.say("stored");
    let sent: Vec<Value> = serde_json::from_str(&node.hear()).expect("the messages sent");
    node.end();
    assert_eq!(sent.len(), 2, "{sent:?}");
    let context = sent[0]["text"].as_str().unwrap_or_default();
    assert!(
        context.starts_with("# SOLARIA memory") && context.contains("Wire the node plugin"),
        "the session's context comes first, as a message of its own: {sent:?}"
    );
    assert_eq!(sent[0]["synthetic"], true, "{sent:?}");
    assert_ne!(sent[0]["id"], "m1", "not the user's own message: {sent:?}");
    assert_eq!(
        (&sent[1]["id"], &sent[1]["text"]),
        (&json!("m1"), &json!("Wire the node plugin")),
        "the user's message goes on as they wrote it"
    );
    let rows = m.strings(
        "SELECT s.agent || ' | ' || o.kind || ' | ' || o.title FROM observations o
           JOIN sessions s ON s.id = o.session_id ORDER BY o.created_at, o.rowid",
    );
    assert_eq!(
        rows,
        [
            "opencode | prompt | Wire the node plugin",
            "opencode | tool_use | Read src/lib.rs",
        ]
    );
    let summary = m.strings("SELECT text FROM summaries");
    assert!(summary[0].contains("All wired."), "{summary:?}");
    // Only real events were forwarded: the garbage with no session never reached
    // solaria, the rest was logged and dropped.
    let log = m.hook_log();
    assert!(!log.contains("panic"), "{log}");
}

/// The processes whose working directory is `dir`, by id (read from `/proc`).
fn processes_in(dir: &Path) -> Vec<u32> {
    let dir = dir.canonicalize().expect("the directory exists");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        // Other users' processes cannot be read, and a process may end meanwhile.
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == dir) {
            found.push(pid);
        }
    }
    found
}

/// A `solaria` that never answers, run in `dir`: each process records its call
/// (its arguments, then its stdin) in a file of its own, then waits on a FIFO this
/// holds open, so it hangs as long as the test runs. Dropping this lets them end
/// and kills any left (also when the test fails); were the test killed, the kernel
/// would close the FIFO. Shell builtins only, so each process in `dir` is one
/// `solaria` started there.
struct Unanswering {
    dir: PathBuf,
    program: PathBuf,
    hold: Option<std::fs::File>,
}

impl Unanswering {
    fn new(dir: &Path) -> Unanswering {
        let fifo = dir.join("hold");
        let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(made.success(), "mkfifo {}", fifo.display());
        // Read and write: opening a FIFO so does not wait for a reader (Linux).
        let hold = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .expect("open the FIFO");
        let program = dir.join("unanswering-solaria");
        std::fs::write(
            &program,
            format!(
                "#!/bin/sh\nexec 3<'{fifo}'\n{{\n  echo \"$*\"\n  while IFS= read -r line || [ -n \"$line\" ]; do printf '%s\\n' \"$line\"; done\n}} > '{dir}/call.'$$\nread -r released <&3\n",
                fifo = fifo.display(),
                dir = dir.display(),
            ),
        )
        .expect("stand-in");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        Unanswering {
            dir: dir.to_path_buf(),
            program,
            hold: Some(hold),
        }
    }

    /// The calls made, as (arguments, payload), once `n` have been recorded.
    fn calls(&self, n: usize) -> Vec<(String, Value)> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let calls: Vec<(String, Value)> = std::fs::read_dir(&self.dir)
                .expect("dir")
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("call."))
                .filter_map(|e| {
                    let text = std::fs::read_to_string(e.path()).ok()?;
                    let (args, payload) = text.split_once('\n')?;
                    let payload = serde_json::from_str(payload.strip_suffix('\n')?).ok()?;
                    Some((args.to_string(), payload))
                })
                .collect();
            if calls.len() >= n {
                return calls;
            }
            assert!(Instant::now() < deadline, "calls recorded: {calls:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Unanswering {
    fn drop(&mut self) {
        drop(self.hold.take());
        for pid in processes_in(&self.dir) {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

#[test]
fn the_plugin_never_holds_opencode_for_long() {
    let Some(()) = node() else { return };
    let m = Edge::new("test-machine");
    let dir = m.root.path().join("node");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let solaria = Unanswering::new(&dir);
    let plugin = solaria_edge::install::opencode::plugin_file(
        &solaria_hook::program::HookProgram::Solaria(solaria.program.display().to_string()),
    );
    std::fs::write(dir.join("plugin.mjs"), plugin).expect("plugin");
    // The directory OpenCode runs in must exist: solaria is started there.
    let cwd = dir.display().to_string();
    // Whether each awaited hook settles before a timer armed just after the call, of
    // 6 s: longer than the plugin's own waits (1.5 s for a prompt, 3 s for the
    // context), shorter than its cap on one solaria process (10 s). Node fires due
    // timers in the order they fall due and settles what one resolves before it
    // fires the next, so this is the order of two timers in one event loop, which no
    // load on the machine changes; no clock is read.
    let driver = format!(
        r#"import {{ SolariaMemory }} from "./plugin.mjs";
const hooks = await SolariaMemory({{ directory: {cwd:?}, worktree: {cwd:?} }});
const settles = async (call) => {{
  let timer;
  const later = new Promise((resolve) => {{ timer = setTimeout(() => resolve("held"), 6000); }});
  const outcome = await Promise.race([call.then(() => "settled"), later]);
  clearTimeout(timer);
  return outcome;
}};
const prompt = await settles(hooks["chat.message"]({{ sessionID: "s1" }}, {{ message: {{ id: "m1", role: "user" }}, parts: [{{ type: "text", text: "hi" }}] }}));
const request = () => ({{ messages: [{{ info: {{ id: "m1", role: "user", sessionID: "s1" }}, parts: [{{ type: "text", text: "hi" }}] }}] }});
const first = request();
const context = await settles(hooks["experimental.chat.messages.transform"]({{}}, first));
const second = request();
const again = await settles(hooks["experimental.chat.messages.transform"]({{}}, second));
console.log(JSON.stringify({{ prompt, context, again, messages: [first.messages.length, second.messages.length], parts: second.messages[0].parts.length }}));
process.exit(0);
"#
    );
    let out = run_node(&m, &dir, &driver);
    let seen: Value = serde_json::from_str(out.trim()).expect("what the driver saw");
    assert_eq!(
        seen,
        json!({"prompt": "settled", "context": "settled", "again": "settled", "messages": [1, 1], "parts": 1}),
        "every hook returned within the plugin's own waits, and OpenCode's request went \
         on untouched: no context, no recall"
    );
    // OpenCode is done, and every solaria it started is still there, unanswered:
    // the plugin gave up on them. One for the prompt, one for the context (asked
    // once per session, however many requests wait for it).
    let running = processes_in(&dir);
    assert_eq!(
        running.len(),
        2,
        "one solaria for the prompt, one for the context: {running:?}"
    );
    let mut calls = solaria.calls(2);
    calls.sort_by(|a, b| a.0.cmp(&b.0));
    let [(prompt_args, prompt), (context_args, context)] = &calls[..] else {
        panic!("two calls: {calls:?}");
    };
    assert_eq!(prompt_args, "hook opencode chat.message");
    assert_eq!(prompt["cwd"], cwd.as_str());
    assert_eq!(prompt["input"]["sessionID"], "s1");
    assert_eq!(prompt["output"]["parts"][0]["text"], "hi");
    assert_eq!(context_args, "hook opencode context");
    assert_eq!(context, &json!({"cwd": cwd, "session_id": "s1"}));
}
