//! `solaria install claude-code` / `uninstall` round-trip a real settings.json, and
//! register / remove `solaria serve` as a systemd user service.

use serde_json::{Value, json};
use solaria_tests::edge::Edge;
use solaria_tests::payloads::*;

#[test]
fn install_and_uninstall_round_trip_a_settings_file_with_other_hooks() {
    let m = Edge::new("test-machine");
    let claude = m.home().join(".claude");
    std::fs::create_dir_all(&claude).expect("mkdir");
    let original = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(git status)"], "deny": []},
        "env": {"FOO": "bar"},
        "statusLine": {"type": "command", "command": "~/bin/status"},
        "hooks": {
            "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier --write"}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "echo hello"}]}]
        }
    });
    let settings = claude.join("settings.json");
    std::fs::write(
        &settings,
        serde_json::to_string_pretty(&original).expect("json"),
    )
    .expect("write");
    std::fs::write(
        m.home().join(".claude.json"),
        json!({"numStartups": 42, "mcpServers": {"github": {"command": "gh-mcp", "args": []}}})
            .to_string(),
    )
    .expect("claude.json");

    let out = m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert!(out.contains("Installed"), "{out}");
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
    for key in ["model", "permissions", "env", "statusLine"] {
        assert_eq!(installed[key], original[key], "{key} kept");
    }
    let exe = solaria();
    // The small client beside `solaria` runs the hooks, told the data dir.
    let client = solaria_tests::binary("solaria-hook").display().to_string();
    let data = m.data().display().to_string();
    for (event, arg) in [
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("PostToolUse", "post-tool-use"),
        ("PostToolUseFailure", "post-tool-use-failure"),
        ("Stop", "stop"),
        ("SessionEnd", "session-end"),
    ] {
        let text = installed["hooks"][event].to_string();
        assert!(
            text.contains(&format!("{client} --data-dir {data} {arg}")),
            "{event}: {text}"
        );
    }
    assert!(
        installed["hooks"]["PostToolUse"]
            .to_string()
            .contains("prettier --write")
    );
    assert!(
        installed["hooks"]["SessionStart"]
            .to_string()
            .contains("echo hello")
    );
    let command = claude.join("commands/memory.md");
    let slash = std::fs::read_to_string(&command).expect("slash command written");
    assert!(slash.contains(&format!("{exe} slash")));
    let librarian = claude.join("agents/librarian.md");
    let agent = std::fs::read_to_string(&librarian).expect("the Librarian subagent written");
    assert!(
        agent.starts_with("---\nname: librarian\ndescription: ")
            && agent.contains("memory_why")
            && agent.contains("holds nothing")
            && agent.contains("top 3"),
        "{agent}"
    );

    let again = m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert!(again.contains("already installed"), "{again}");
    let twice: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
    assert_eq!(twice, installed, "idempotent");

    // The installed command really works as Claude Code would run it (through a
    // shell, no daemon running).
    let p = project(m.root.path(), "api", None);
    let prompt_hook = installed["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .expect("command");
    m.hook_with(
        m.program_in(std::path::Path::new("/bin/sh"), m.root.path()),
        &["-c", prompt_hook],
        prompt("s", &p, "wired up").to_string().as_bytes(),
    );
    let status = m.ok_in(m.root.path(), &["slash", "status"]);
    assert!(status.contains("observations:  1"), "{status}");
    let found = m.ok_in(m.root.path(), &["slash", "search wired"]);
    assert!(found.contains("wired up"), "{found}");

    // The MCP server is registered beside the user's other MCP servers.
    let claude_json = m.home().join(".claude.json");
    let read = |p: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
    };
    let registered = read(&claude_json);
    assert_eq!(registered["mcpServers"]["solaria"]["command"], exe);
    assert_eq!(registered["mcpServers"]["solaria"]["args"], json!(["mcp"]));
    assert_eq!(
        registered["mcpServers"]["github"]["command"], "gh-mcp",
        "others kept"
    );
    assert_eq!(
        registered["numStartups"], 42,
        "Claude Code's own state kept"
    );

    let out = m.ok_in(m.root.path(), &["uninstall", "claude-code"]);
    assert!(out.contains("Removed"), "{out}");
    assert_eq!(
        read(&claude_json),
        json!({"numStartups": 42, "mcpServers": {"github": {"command": "gh-mcp", "args": []}}})
    );
    let after: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
    assert_eq!(
        after, original,
        "uninstall restores exactly what the user had"
    );
    assert!(!command.exists());
    assert!(
        !librarian.exists(),
        "uninstall removes exactly the Librarian"
    );
    let noop = m.ok_in(m.root.path(), &["uninstall", "claude-code"]);
    assert!(noop.contains("nothing changed"));

    // A librarian.md of the user's own is never overwritten nor removed.
    std::fs::write(&librarian, "---\nname: librarian\n---\nmine\n").expect("user file");
    let out = m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert!(out.contains("your own file: kept"), "{out}");
    m.ok_in(m.root.path(), &["uninstall", "claude-code"]);
    assert_eq!(
        std::fs::read_to_string(&librarian).expect("kept"),
        "---\nname: librarian\n---\nmine\n"
    );
}

#[test]
fn a_settings_file_that_is_not_json_is_left_alone() {
    let m = Edge::new("test-machine");
    let claude = m.home().join(".claude");
    std::fs::create_dir_all(&claude).expect("mkdir");
    std::fs::write(claude.join("settings.json"), "{ \"model\": \"opus\", }").expect("write");
    let out = m.run_in(m.root.path(), &["install", "claude-code"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("settings.json"));
    assert_eq!(
        std::fs::read_to_string(claude.join("settings.json")).expect("read"),
        "{ \"model\": \"opus\", }"
    );
}

#[test]
fn project_scope_writes_into_the_project() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    m.ok_in(&p, &["install", "claude-code", "--scope", "project"]);
    assert!(p.join(".claude/settings.json").exists());
    assert!(p.join(".claude/commands/memory.md").exists());
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(p.join(".mcp.json")).expect("mcp.json"))
            .expect("json");
    assert_eq!(mcp["mcpServers"]["solaria"]["args"], json!(["mcp"]));
    assert!(
        !m.home().join(".claude.json").exists(),
        "project scope leaves the user's config alone"
    );
    assert!(!m.home().join(".claude/settings.json").exists());
    assert!(p.join(".claude/agents/librarian.md").exists());
    m.ok_in(&p, &["uninstall", "claude-code", "--scope", "project"]);
    assert!(!p.join(".claude/commands/memory.md").exists());
    assert!(!p.join(".claude/agents/librarian.md").exists());
    // The files the install created are gone, not left behind empty.
    assert!(!p.join(".claude/settings.json").exists());
    assert!(!p.join(".mcp.json").exists());
}

#[test]
fn a_project_whose_name_writes_toml_is_refused_and_the_users_codex_config_is_untouched() {
    let m = Edge::new("test-machine");
    let name = "proj\nmcp_servers.pwn.command = \"sh\"\nmcp_servers.pwn.args = [\"-c\", \"id\"]\n#";
    let p = m.root.path().join(name);
    std::fs::create_dir_all(&p).expect("mkdir");
    let user_config = m.home().join(".codex/config.toml");
    std::fs::create_dir_all(user_config.parent().expect("dir")).expect("mkdir");
    std::fs::write(&user_config, "model = \"gpt-5.5\"\n").expect("write");
    let out = m.run_in(&p, &["install", "codex", "--scope", "project"]);
    assert!(!out.status.success(), "refused");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("control character") && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&user_config).expect("read"),
        "model = \"gpt-5.5\"\n"
    );
    assert!(!p.join(".codex").exists());
}

#[test]
fn install_registers_the_daemon_as_a_user_service_and_uninstall_removes_it() {
    let m = Edge::new("test-machine");
    let unit = m.home().join(".config/systemd/user/solaria.service");
    let out = m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert!(out.contains("enabled and running"), "{out}");
    let text = std::fs::read_to_string(&unit).expect("the unit is written");
    assert!(
        text.contains(&format!("ExecStart=\"{}\" serve", solaria())),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Environment=\"SOLARIA_HOME={}\"",
            m.data_dir().display()
        )),
        "the daemon uses the same data dir: {text}"
    );
    assert_eq!(
        m.systemctl_calls(),
        [
            "--user daemon-reload",
            "--user enable --now solaria.service"
        ]
    );

    // Again: nothing rewritten, systemd only asked to make sure it runs.
    m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert_eq!(m.systemctl_calls().len(), 3);
    assert_eq!(std::fs::read_to_string(&unit).expect("unit"), text);

    let out = m.ok_in(m.root.path(), &["uninstall", "claude-code"]);
    assert!(out.contains("Stopped the background service"), "{out}");
    assert!(!unit.exists());
    assert_eq!(
        m.systemctl_calls()[3..],
        [
            "--user disable --now solaria.service",
            "--user daemon-reload"
        ]
    );
}

/// The hooks' spool holds events never captured, as the agents sent them: it goes
/// with the last agent's uninstall, when no hook writes there any more and the
/// daemon that captured from it is stopped; not before, while the other agent's
/// hooks still spool there.
#[test]
fn the_last_agents_uninstall_removes_the_hooks_spool() {
    use solaria_hook::protocol::Event;
    use solaria_hook::spool::Spool;
    let m = Edge::new("test-machine");
    m.ok_in(m.root.path(), &["install", "claude-code"]);
    m.ok_in(m.root.path(), &["install", "opencode", "--no-service"]);
    // An event a hook left while the store was held, never captured since.
    let spool = Spool::for_process(&m.data(), Some(&m.runtime_dir())).expect("spool");
    let payload = prompt("s-1", &m.project, "the vault code is 7731");
    let file = spool
        .put(
            &Event::ClaudeCode("user-prompt-submit".into()),
            1_795_500_000_000,
            payload.to_string().as_bytes(),
        )
        .expect("spooled");
    let dir = spool.dir().to_path_buf();
    drop(spool);

    let out = m.ok_in(m.root.path(), &["uninstall", "claude-code"]);
    assert!(file.exists(), "OpenCode's hooks still spool there: {out}");
    let out = m.ok_in(m.root.path(), &["uninstall", "opencode"]);
    assert!(!file.exists() && !dir.exists(), "the spool is gone: {out}");
    assert!(out.contains("1 event(s) that were never captured"), "{out}");
}

#[test]
fn without_a_user_manager_the_install_still_succeeds_and_says_how_to_start_the_daemon() {
    let m = Edge::new("test-machine");
    std::fs::write(m.root.path().join("systemctl.fail"), "").expect("fail");
    let out = m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert!(
        out.contains("could not start it")
            && out.contains("Failed to connect to bus")
            && out.contains("systemctl --user enable --now solaria"),
        "{out}"
    );
    assert!(
        m.home().join(".claude/settings.json").exists(),
        "hooks installed"
    );
    assert!(
        m.home()
            .join(".config/systemd/user/solaria.service")
            .exists()
    );
}

#[test]
fn a_users_own_unit_and_no_service_are_respected() {
    let m = Edge::new("test-machine");
    let unit = m.home().join(".config/systemd/user/solaria.service");
    std::fs::create_dir_all(unit.parent().expect("dir")).expect("mkdir");
    std::fs::write(&unit, "[Service]\nExecStart=/usr/local/bin/solaria serve\n").expect("own unit");
    let out = m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert!(out.contains("your own unit"), "{out}");
    m.ok_in(m.root.path(), &["uninstall", "claude-code"]);
    assert_eq!(
        std::fs::read_to_string(&unit).expect("kept"),
        "[Service]\nExecStart=/usr/local/bin/solaria serve\n"
    );
    assert!(m.systemctl_calls().is_empty(), "systemd left alone");

    let other = Edge::new("test-machine");
    let out = other.ok_in(
        other.root.path(),
        &["install", "claude-code", "--no-service"],
    );
    assert!(!out.contains("Background service"), "{out}");
    assert!(
        !other
            .home()
            .join(".config/systemd/user/solaria.service")
            .exists()
    );
    assert!(other.systemctl_calls().is_empty());
}

#[test]
fn files_the_install_creates_are_private_and_existing_ones_keep_their_mode() {
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
    // ~/.claude.json can hold the user's API key: a new one is this user's only.
    let m = Edge::new("test-machine");
    m.ok_in(m.root.path(), &["install", "claude-code", "--no-service"]);
    assert_eq!(mode(&m.home().join(".claude.json")), 0o600);
    let leftovers: Vec<String> = std::fs::read_dir(m.home())
        .expect("home")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // A user's own file keeps the mode they gave it.
    let other = Edge::new("test-machine");
    let claude_json = other.home().join(".claude.json");
    std::fs::write(&claude_json, "{}").expect("write");
    std::fs::set_permissions(&claude_json, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    other.ok_in(
        other.root.path(),
        &["install", "claude-code", "--no-service"],
    );
    assert_eq!(mode(&claude_json), 0o640);
}

#[test]
fn the_help_names_the_four_agents_it_installs_checks_and_captures() {
    let m = Edge::new("test-machine");
    let help = m.ok(&["--help"]);
    for command in ["hook", "install", "doctor"] {
        let line: String = help
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(command))
            .take(3)
            .collect();
        for agent in ["Claude Code", "OpenCode", "Codex", "Gemini"] {
            assert!(line.contains(agent), "`{command}` names {agent}: {line}");
        }
    }
}

/// A recorder standing in for `launchctl`: each call's arguments, a line each, in
/// `launchctl.log` beside it.
fn launchctl_recorder(m: &mut Edge) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let recorder = m.root.path().join("launchctl");
    std::fs::write(
        &recorder,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}/launchctl.log'\n",
            m.root.path().display()
        ),
    )
    .expect("recorder");
    std::fs::set_permissions(&recorder, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    m.env
        .push(("SOLARIA_SERVICE_MANAGER".into(), "launchd".into()));
    m.env
        .push(("SOLARIA_LAUNCHCTL".into(), recorder.display().to_string()));
    m.root.path().join("launchctl.log")
}

#[test]
fn under_launchd_install_writes_a_launchagent_and_loads_it_and_uninstall_boots_it_out() {
    use std::os::unix::fs::MetadataExt;
    let mut m = Edge::new("test-machine");
    let log = launchctl_recorder(&mut m);
    let calls = || -> Vec<String> {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let out = m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert!(out.contains("enabled and running"), "{out}");
    let plist = m
        .home()
        .join("Library/LaunchAgents/dev.solaria.memory.plist");
    let uid = std::fs::metadata(&plist)
        .expect("the LaunchAgent is written")
        .uid();
    // What launchd reads: Apple's property-list format, checked by Python's reader.
    let read = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))",
        ])
        .arg(&plist)
        .output()
        .expect("python3");
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let agent: serde_json::Value = serde_json::from_slice(&read.stdout).expect("json");
    assert_eq!(agent["Label"], "dev.solaria.memory");
    assert_eq!(agent["ProgramArguments"], json!([solaria(), "serve"]));
    assert_eq!(
        agent["EnvironmentVariables"]["SOLARIA_HOME"],
        m.data_dir().display().to_string(),
        "the daemon uses the same data dir"
    );
    assert_eq!(agent["RunAtLoad"], true);
    assert_eq!(agent["KeepAlive"], json!({"SuccessfulExit": false}));
    let domain = format!("gui/{uid}");
    assert_eq!(
        calls(),
        [
            format!("bootout {domain}/dev.solaria.memory"),
            format!("bootstrap {domain} {}", plist.display()),
        ]
    );
    assert!(m.systemctl_calls().is_empty(), "systemd left alone");

    // Again, unchanged: launchd is only asked to make sure it runs.
    m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert_eq!(
        calls()[2..],
        [format!("kickstart {domain}/dev.solaria.memory")]
    );

    let out = m.ok_in(m.root.path(), &["uninstall", "claude-code"]);
    assert!(out.contains("Stopped the background service"), "{out}");
    assert!(!plist.exists());
    assert_eq!(
        calls()[3..],
        [format!("bootout {domain}/dev.solaria.memory")]
    );
}

#[test]
fn with_no_service_manager_install_says_how_to_run_the_daemon_and_writes_none() {
    let mut m = Edge::new("test-machine");
    m.env
        .push(("SOLARIA_SERVICE_MANAGER".into(), "none".into()));
    let out = m.ok_in(m.root.path(), &["install", "claude-code"]);
    assert!(
        out.contains("no service manager here") && out.contains("run `solaria serve`"),
        "{out}"
    );
    assert!(
        m.home().join(".claude/settings.json").exists(),
        "hooks installed"
    );
    assert!(!m.home().join(".config/systemd").exists());
    assert!(!m.home().join("Library").exists());
    assert!(m.systemctl_calls().is_empty());
    m.env
        .push(("SOLARIA_SERVICE_MANAGER".into(), "upstart".into()));
    let refused = m.run_in(m.root.path(), &["install", "opencode"]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("say systemd, launchd or none"));
    assert!(
        !m.home().join(".config/opencode").exists(),
        "refused before anything is written"
    );
}
