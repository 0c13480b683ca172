//! `solaria install claude-code` / `uninstall` round-trip a real settings.json.

mod common;

use common::*;
use serde_json::{Value, json};

#[test]
fn install_and_uninstall_round_trip_a_settings_file_with_other_hooks() {
    let m = Machine::new();
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

    let out = m.ok(m.root.path(), &["install", "claude-code"]);
    assert!(out.contains("Installed"), "{out}");
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
    for key in ["model", "permissions", "env", "statusLine"] {
        assert_eq!(installed[key], original[key], "{key} kept");
    }
    let exe = solaria();
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
            text.contains(&format!("{exe} hook {arg}")),
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

    let again = m.ok(m.root.path(), &["install", "claude-code"]);
    assert!(again.contains("already installed"), "{again}");
    let twice: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
    assert_eq!(twice, installed, "idempotent");

    // The installed command really works as Claude Code would run it.
    let p = project(m.root.path(), "api", None);
    m.hook("user-prompt-submit", &prompt("s", &p, "wired up"));
    let status = m.ok(m.root.path(), &["slash", "status"]);
    assert!(status.contains("observations:  1"), "{status}");
    let found = m.ok(m.root.path(), &["slash", "search wired"]);
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

    let out = m.ok(m.root.path(), &["uninstall", "claude-code"]);
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
    let noop = m.ok(m.root.path(), &["uninstall", "claude-code"]);
    assert!(noop.contains("nothing changed"));
}

#[test]
fn a_settings_file_that_is_not_json_is_left_alone() {
    let m = Machine::new();
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
    let m = Machine::new();
    let p = project(m.root.path(), "api", None);
    m.ok(&p, &["install", "claude-code", "--scope", "project"]);
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
    m.ok(&p, &["uninstall", "claude-code", "--scope", "project"]);
    assert!(!p.join(".claude/commands/memory.md").exists());
}
