use super::*;
use serde_json::{Value, json};

const EXE: &str = "/opt/solaria/bin/solaria";

/// The settings' value (comments allowed, as Gemini allows them).
fn read_json(path: &Path) -> Value {
    crate::jsonc::Doc::parse(&fs::read_to_string(path).expect("settings"))
        .expect("JSONC")
        .value
}

#[test]
fn a_fresh_install_hooks_every_event_and_leaves_no_trace() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = Target::for_scope(Scope::User, home.path(), home.path());
    assert!(install(&t, Path::new(EXE)).expect("install").changed());
    let settings = read_json(&t.settings_path());
    for (arg, event) in [
        ("session-start", "SessionStart"),
        ("before-agent", "BeforeAgent"),
        ("after-tool", "AfterTool"),
        ("after-agent", "AfterAgent"),
        ("session-end", "SessionEnd"),
    ] {
        let hook = &settings["hooks"][event][0]["hooks"][0];
        assert_eq!(
            hook["command"],
            format!("{EXE} hook gemini {arg} || true"),
            "{settings}"
        );
        assert_eq!(hook["timeout"], HOOK_TIMEOUT_MS);
    }
    assert_eq!(settings["hooks"]["AfterTool"][0]["matcher"], "*");
    assert_eq!(
        settings["mcpServers"]["solaria"],
        json!({"command": EXE, "args": ["mcp"]})
    );
    assert!(
        fs::read_to_string(t.command_path())
            .expect("command")
            .contains(EXE)
    );
    let now = state(&t, Path::new(EXE)).expect("state");
    assert_eq!(
        (now.settings, now.command),
        (Presence::Current, Presence::Current)
    );
    assert!(!install(&t, Path::new(EXE)).expect("again").changed());

    assert!(uninstall(&t).expect("uninstall").changed());
    assert!(!home.path().join(".gemini").exists(), "nothing left");
}

#[test]
fn a_users_settings_come_back_byte_for_byte() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = Target::for_scope(Scope::Project, home.path(), home.path());
    // Comments, the user's own SessionStart hook and MCP server, odd spacing.
    let own = "{\n  // mine\n  \"general\": {\"vimMode\": true},\n  \"hooks\": {\"SessionStart\": [ {\"matcher\": \"\", \"hooks\": [{\"name\": \"greet\", \"type\": \"command\", \"command\": \"echo hi\"}]} ]},\n  \"mcpServers\": { \"gh\": {\"command\": \"gh-mcp\"} }\n}\n";
    fs::create_dir_all(&t.dir).expect("mkdir");
    fs::write(t.settings_path(), own).expect("write");
    install(&t, Path::new(EXE)).expect("install");
    let settings = read_json(&t.settings_path());
    assert_eq!(settings["general"]["vimMode"], true);
    let starts = settings["hooks"]["SessionStart"]
        .as_array()
        .expect("groups");
    assert_eq!(starts.len(), 2, "ours beside the user's: {settings}");
    assert_eq!(settings["mcpServers"]["gh"]["command"], "gh-mcp");

    install(&t, Path::new("/usr/local/bin/solaria")).expect("reinstall");
    let text = fs::read_to_string(t.settings_path()).expect("read");
    assert_eq!(
        text.matches("hook gemini session-start").count(),
        1,
        "{text}"
    );
    assert!(!text.contains(EXE));
    assert_eq!(
        state(&t, Path::new(EXE)).expect("state").settings,
        Presence::Stale
    );

    uninstall(&t).expect("uninstall");
    assert_eq!(fs::read_to_string(t.settings_path()).expect("read"), own);
}

#[test]
fn what_is_not_ours_stops_the_install_before_any_write() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = Target::for_scope(Scope::User, home.path(), home.path());
    fs::create_dir_all(&t.dir).expect("mkdir");
    for (text, want) in [
        (
            "{\"mcpServers\": {\"solaria\": {\"command\": \"/usr/bin/other\"}}}",
            "already configures an MCP server named \"solaria\"",
        ),
        ("{\"hooks\": ", "is not valid JSON"),
        (
            "{\"hooks\": {\"AfterTool\": {}}}",
            "\"hooks\".\"AfterTool\" must be an array",
        ),
    ] {
        fs::write(t.settings_path(), text).expect("write");
        let e = install(&t, Path::new(EXE)).expect_err(text);
        assert!(e.to_string().contains(want), "{e}");
        assert_eq!(fs::read_to_string(t.settings_path()).expect("read"), text);
        assert!(!t.command_path().exists());
    }
}
