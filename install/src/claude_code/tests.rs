//! Install and uninstall against real files in a temporary directory.

use super::hooks::*;
use super::slash::*;
use super::*;
use serde_json::Value;
use serde_json::json;
use solaria_hook::program::is_our_command;
use solaria_hook::protocol::RELAY_CLIENT;
use std::fs;

const EXE: &str = "/opt/solaria/bin/solaria";

fn original_settings() -> Value {
    json!({
        "model": "opus",
        "permissions": { "allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"] },
        "env": { "FOO": "bar" },
        "statusLine": { "type": "command", "command": "~/.claude/statusline.sh" },
        "hooks": {
            "PostToolUse": [
                { "matcher": "Bash",
                  "hooks": [ { "type": "command", "command": "other-tool log-bash", "timeout": 5 } ] },
                { "matcher": "Edit|Write",
                  "hooks": [ { "type": "command", "command": "prettier --write" } ] }
            ],
            "SessionStart": [
                { "hooks": [ { "type": "command", "command": "other-tool greet" } ] }
            ],
            "PreToolUse": [
                { "matcher": "Bash", "hooks": [ { "type": "command", "command": "guard.sh" } ] }
            ]
        }
    })
}

fn setup(settings: Option<&str>) -> (tempfile::TempDir, Target) {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = Target::for_scope(Scope::User, dir.path(), Path::new("/nonexistent"));
    if let Some(text) = settings {
        fs::create_dir_all(target.settings_path.parent().expect("parent")).expect("mkdir");
        fs::write(&target.settings_path, text).expect("write settings");
    }
    (dir, target)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).expect("read")).expect("json")
}

/// All hook commands of `event` that SOLARIA recognises as its own.
fn ours(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
        .filter_map(|h| h["command"].as_str())
        .filter(|c| is_our_command(c, None))
        .map(str::to_owned)
        .collect()
}

#[test]
fn install_preserves_everything_and_is_idempotent() {
    let text = serde_json::to_string_pretty(&original_settings()).expect("ser");
    let (_dir, target) = setup(Some(&text));

    let report = install(&target, Path::new(EXE)).expect("install");
    assert!(report.changed && report.settings_changed && report.command_changed);
    let after = read_json(&target.settings_path);
    for key in ["model", "permissions", "env", "statusLine"] {
        assert_eq!(after[key], original_settings()[key], "{key}");
    }
    assert_eq!(
        after["hooks"]["PreToolUse"],
        original_settings()["hooks"]["PreToolUse"]
    );
    let post = after["hooks"]["PostToolUse"].as_array().expect("array");
    assert_eq!(post[0], original_settings()["hooks"]["PostToolUse"][0]);
    assert_eq!(post[1], original_settings()["hooks"]["PostToolUse"][1]);
    assert_eq!(
        post[2],
        json!({ "matcher": "*", "hooks": [ { "type": "command",
            "command": "/opt/solaria/bin/solaria hook post-tool-use", "timeout": 10 } ] })
    );
    let start = after["hooks"]["SessionStart"].as_array().expect("array");
    assert_eq!(start[0], original_settings()["hooks"]["SessionStart"][0]);
    assert_eq!(
        start[1],
        json!({ "hooks": [ { "type": "command",
            "command": "/opt/solaria/bin/solaria hook session-start", "timeout": 10 } ] })
    );
    for event in HOOK_EVENTS {
        assert_eq!(
            ours(&after, event.name),
            vec![format!("{EXE} hook {}", event.arg)],
            "{}",
            event.name
        );
    }
    let bytes = fs::read(&target.settings_path).expect("read");
    assert!(bytes.ends_with(b"}\n"));

    let again = install(&target, Path::new(EXE)).expect("install again");
    assert!(!again.changed && !again.settings_changed && !again.command_changed);
    assert_eq!(fs::read(&target.settings_path).expect("read"), bytes);
}

#[test]
fn reinstall_with_new_exe_replaces_entries() {
    let text = serde_json::to_string(&original_settings()).expect("ser");
    let (_dir, target) = setup(Some(&text));
    install(&target, Path::new("/old/place/solaria")).expect("install old");
    let report = install(&target, Path::new(EXE)).expect("install new");
    assert!(report.changed);
    let after = read_json(&target.settings_path);
    for event in HOOK_EVENTS {
        assert_eq!(
            ours(&after, event.name),
            vec![format!("{EXE} hook {}", event.arg)]
        );
    }
    assert!(
        !fs::read_to_string(&target.settings_path)
            .expect("read")
            .contains("/old/place")
    );
    let command = fs::read_to_string(target.command_path()).expect("command");
    assert!(command.contains(EXE) && !command.contains("/old/place"));
}

#[test]
fn uninstall_restores_the_original_value() {
    let text = serde_json::to_string_pretty(&original_settings()).expect("ser");
    let (_dir, target) = setup(Some(&text));
    install(&target, Path::new(EXE)).expect("install");
    let report = uninstall(&target).expect("uninstall");
    assert!(report.changed && report.settings_changed && report.command_changed);
    assert_eq!(read_json(&target.settings_path), original_settings());
    assert!(!target.command_path().exists());

    let again = uninstall(&target).expect("uninstall again");
    assert!(!again.changed);
    assert_eq!(read_json(&target.settings_path), original_settings());
}

#[test]
fn files_the_install_created_are_removed_by_the_uninstall_and_a_users_are_kept() {
    let (_dir, target) = setup(None);
    install(&target, Path::new(EXE)).expect("install");
    assert!(target.settings_path.exists() && target.mcp_path.exists());
    uninstall(&target).expect("uninstall");
    assert!(!target.settings_path.exists(), "not left behind as {{}}");
    assert!(!target.mcp_path.exists());

    // A file holding anything of the user's stays, with exactly that.
    fs::write(&target.mcp_path, r#"{"theme": "dark"}"#).expect("write");
    install(&target, Path::new(EXE)).expect("install");
    uninstall(&target).expect("uninstall");
    assert_eq!(read_json(&target.mcp_path), json!({"theme": "dark"}));
}

#[test]
fn a_foreign_mcp_server_named_solaria_is_never_replaced() {
    let (_dir, target) = setup(None);
    let theirs = json!({"mcpServers": {"solaria": {"command": "docker", "args": ["run", "x"]}}});
    fs::write(&target.mcp_path, theirs.to_string()).expect("write");
    let err = install(&target, Path::new(EXE)).expect_err("refused");
    assert!(
        matches!(err, InstallError::ForeignMcpServer { .. }),
        "{err}"
    );
    assert!(!target.settings_path.exists(), "nothing was changed");
    assert_eq!(read_json(&target.mcp_path), theirs);
    uninstall(&target).expect("uninstall");
    assert_eq!(
        read_json(&target.mcp_path),
        theirs,
        "uninstall leaves it too"
    );
}

/// `solaria` and `solaria-hook` side by side in a directory of `dir`.
fn both_binaries(dir: &Path) -> std::path::PathBuf {
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).expect("mkdir");
    for name in ["solaria", RELAY_CLIENT] {
        fs::write(bin.join(name), "").expect("binary");
    }
    bin.join("solaria")
}

#[test]
fn with_solaria_hook_beside_it_the_hooks_run_the_relay_client() {
    let (dir, target) = setup(Some(
        &serde_json::to_string(&original_settings()).expect("ser"),
    ));
    let exe = both_binaries(dir.path());
    let data = dir.path().join("my data");
    // Without a data dir the installer cannot tell the client where to hand events.
    install(&target, &exe).expect("install");
    let client = exe.with_file_name(RELAY_CLIENT);
    let relayed = Target {
        data_dir: Some(data.clone()),
        ..target.clone()
    };
    let report = install(&relayed, &exe).expect("install with the data dir");
    assert!(report.settings_changed, "the old form is replaced");
    let after = read_json(&target.settings_path);
    for event in HOOK_EVENTS {
        assert_eq!(
            ours(&after, event.name),
            vec![format!(
                "{} --data-dir '{}' {}",
                client.display(),
                data.display(),
                event.arg
            )],
            "one entry of ours per event, the relay's: {}",
            event.name
        );
    }
    assert_eq!(
        after["hooks"]["PostToolUse"][0],
        original_settings()["hooks"]["PostToolUse"][0],
        "the user's entries stay"
    );
    assert!(state(&relayed, &exe).expect("state").hooks == Presence::Current);
    assert!(state(&target, &exe).expect("state").hooks == Presence::Stale);
    // And back: uninstall knows the relay's entries as ours.
    uninstall(&relayed).expect("uninstall");
    assert_eq!(read_json(&target.settings_path), original_settings());
}

#[test]
fn a_data_dir_that_cannot_go_into_a_command_keeps_solaria_hook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = both_binaries(dir.path());
    let exe = exe.to_str().expect("utf-8");
    for data in ["relative/dir", "/data/with\nnewline", "/data/`cmd`"] {
        assert_eq!(
            HookProgram::choose(exe, Some(Path::new(data))),
            HookProgram::Solaria(exe.to_owned()),
            "{data:?}"
        );
    }
    assert_eq!(
        HookProgram::choose("/nowhere/solaria", Some(Path::new("/data"))),
        HookProgram::Solaria("/nowhere/solaria".to_owned()),
        "no client beside solaria"
    );
}

#[test]
fn exe_path_matching_is_exact_or_by_basename() {
    // An exe not named solaria is recognised at install by its exact path.
    let (_dir, target) = setup(None);
    install(&target, Path::new("/usr/local/bin/solaria-dev")).expect("install");
    install(&target, Path::new("/usr/local/bin/solaria-dev")).expect("install again");
    let after = read_json(&target.settings_path);
    assert_eq!(after["hooks"]["Stop"].as_array().expect("array").len(), 1);
}

#[test]
fn shared_group_keeps_the_other_command() {
    let shared = json!({
        "hooks": {
            "Stop": [ { "hooks": [
                { "type": "command", "command": "notify-send done" },
                { "type": "command", "command": "/home/me/.cargo/bin/solaria hook stop" }
            ] } ]
        }
    });
    let (_dir, target) = setup(Some(&shared.to_string()));
    install(&target, Path::new(EXE)).expect("install");
    let after = read_json(&target.settings_path);
    assert_eq!(ours(&after, "Stop"), vec![format!("{EXE} hook stop")]);
    assert_eq!(
        after["hooks"]["Stop"][0]["hooks"],
        json!([{ "type": "command", "command": "notify-send done" }])
    );

    uninstall(&target).expect("uninstall");
    assert_eq!(
        read_json(&target.settings_path),
        json!({ "hooks": { "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ] } })
    );
}

#[test]
fn invalid_settings_are_never_touched() {
    for bad in [
        "{ \"model\": ",
        "[1, 2]",
        "{\"hooks\": []}",
        "{\"hooks\": {\"Stop\": {}}}",
    ] {
        let (_dir, target) = setup(Some(bad));
        let err = install(&target, Path::new(EXE)).expect_err("must fail");
        let message = err.to_string();
        assert!(message.contains("settings.json"), "{message}");
        assert!(message.contains("nothing was changed"), "{message}");
        assert_eq!(
            fs::read_to_string(&target.settings_path).expect("read"),
            bad
        );
        assert!(!target.command_path().exists());
        if bad != "{\"hooks\": {\"Stop\": {}}}" {
            uninstall(&target).expect_err("uninstall must fail too");
            assert_eq!(
                fs::read_to_string(&target.settings_path).expect("read"),
                bad
            );
        }
    }
    let (_dir, target) = setup(Some("not json"));
    assert!(matches!(
        install(&target, Path::new(EXE)),
        Err(InstallError::InvalidConfig { .. })
    ));
}

#[test]
fn missing_and_empty_files() {
    let (_dir, target) = setup(None);
    let report = uninstall(&target).expect("uninstall nothing");
    assert!(!report.changed);
    assert!(!target.settings_path.exists());

    install(&target, Path::new(EXE)).expect("install");
    let after = read_json(&target.settings_path);
    assert_eq!(after.as_object().expect("object").len(), 1);
    assert_eq!(
        after["hooks"].as_object().expect("hooks").len(),
        HOOK_EVENTS.len()
    );
    assert!(target.command_path().exists());
    uninstall(&target).expect("uninstall");
    assert!(
        !target.settings_path.exists(),
        "created by the install, removed"
    );
    assert!(!target.command_path().exists());

    let (_dir, target) = setup(Some("  \n"));
    assert!(!uninstall(&target).expect("uninstall blank").changed);
    assert_eq!(
        fs::read_to_string(&target.settings_path).expect("read"),
        "  \n"
    );
    install(&target, Path::new(EXE)).expect("install into blank");
    assert_eq!(
        ours(&read_json(&target.settings_path), "SessionEnd").len(),
        1
    );
}

#[test]
fn user_command_file_is_never_overwritten_nor_deleted() {
    let (_dir, target) = setup(None);
    fs::create_dir_all(&target.commands_dir).expect("mkdir");
    let mine = "---\ndescription: my notes\n---\nShow my notes\n";
    fs::write(target.command_path(), mine).expect("write");

    let err = install(&target, Path::new(EXE)).expect_err("must refuse");
    assert!(matches!(err, InstallError::ForeignFile { .. }));
    assert!(err.to_string().contains("memory.md"));
    assert!(!target.settings_path.exists(), "nothing may change");
    assert_eq!(
        fs::read_to_string(target.command_path()).expect("read"),
        mine
    );

    assert!(!uninstall(&target).expect("uninstall").changed);
    assert_eq!(
        fs::read_to_string(target.command_path()).expect("read"),
        mine
    );
}

#[test]
fn command_file_content() {
    let (_dir, target) = setup(None);
    install(&target, Path::new(EXE)).expect("install");
    let text = fs::read_to_string(target.command_path()).expect("read");
    assert!(text.starts_with("---\n"));
    assert!(text.contains(COMMAND_MARKER));
    assert!(text.contains("allowed-tools: Bash(/opt/solaria/bin/solaria slash:*)\n"));
    assert!(text.contains("\n!`/opt/solaria/bin/solaria slash \"$ARGUMENTS\"`\n"));
    assert_eq!(text.matches("!`").count(), 1, "exactly one bash line");
}

#[test]
fn exe_with_spaces_is_quoted_and_recognised() {
    let exe = "/Users/Jo Doe/My Tools/solaria";
    let (_dir, target) = setup(None);
    install(&target, Path::new(exe)).expect("install");
    let after = read_json(&target.settings_path);
    assert_eq!(ours(&after, "Stop"), vec![format!("'{exe}' hook stop")]);
    install(&target, Path::new(exe)).expect("install again");
    assert!(!install(&target, Path::new(exe)).expect("third").changed);
    let text = fs::read_to_string(target.command_path()).expect("read");
    assert!(text.contains(&format!("!`'{exe}' slash \"$ARGUMENTS\"`")));
    assert!(text.contains(&format!("allowed-tools: Bash('{exe}' slash:*)\n")));
    uninstall(&target).expect("uninstall");
    assert!(!target.settings_path.exists());

    assert!(matches!(
        install(&target, Path::new("relative/solaria")),
        Err(InstallError::UnusablePath { .. })
    ));
}

#[test]
fn scope_paths() {
    let home = Path::new("/home/jo");
    let project = Path::new("/src/app");
    let user = Target::for_scope(Scope::User, home, project);
    assert_eq!(
        user.settings_path,
        Path::new("/home/jo/.claude/settings.json")
    );
    assert_eq!(user.commands_dir, Path::new("/home/jo/.claude/commands"));
    assert_eq!(
        user.command_path(),
        Path::new("/home/jo/.claude/commands/memory.md")
    );
    let proj = Target::for_scope(Scope::Project, home, project);
    assert_eq!(
        proj.settings_path,
        Path::new("/src/app/.claude/settings.json")
    );
    assert_eq!(
        proj.command_path(),
        Path::new("/src/app/.claude/commands/memory.md")
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let target = Target::for_scope(Scope::Project, Path::new("/nonexistent"), dir.path());
    let report = install(&target, Path::new(EXE)).expect("install");
    assert_eq!(
        report.settings_path,
        dir.path().join(".claude/settings.json")
    );
    assert!(dir.path().join(".claude/commands/memory.md").exists());
    assert!(dir.path().join(".claude/settings.json").exists());
}

#[test]
fn scope_value_names() {
    use clap::ValueEnum as _;
    assert!(matches!(Scope::from_str("user", false), Ok(Scope::User)));
    assert!(matches!(
        Scope::from_str("project", false),
        Ok(Scope::Project)
    ));
}

#[cfg(unix)]
#[test]
fn keeps_permissions_and_symlinks() {
    use std::os::unix::fs::PermissionsExt as _;
    let (dir, target) = setup(None);
    let real = dir.path().join("dotfiles-settings.json");
    fs::write(&real, "{\"model\": \"opus\"}\n").expect("write");
    fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).expect("chmod");
    fs::create_dir_all(target.settings_path.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(&real, &target.settings_path).expect("symlink");

    install(&target, Path::new(EXE)).expect("install");
    let link = fs::symlink_metadata(&target.settings_path).expect("meta");
    assert!(link.file_type().is_symlink(), "the symlink must survive");
    let mode = fs::metadata(&real).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(ours(&read_json(&real), "Stop").len(), 1);
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .expect("ls")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn slash_args() {
    assert_eq!(parse_slash_args::<&str>(&[]), SlashRequest::Status);
    assert_eq!(parse_slash_args(&[""]), SlashRequest::Status);
    assert_eq!(parse_slash_args(&["  status "]), SlashRequest::Status);
    assert_eq!(parse_slash_args(&["SYNC"]), SlashRequest::Sync);
    assert_eq!(
        parse_slash_args(&["search don't  panic "]),
        SlashRequest::Search("don't  panic".into())
    );
    assert_eq!(
        parse_slash_args(&["search", "auth", "bug"]),
        SlashRequest::Search("auth bug".into())
    );
    assert_eq!(
        parse_slash_args(&["search"]),
        SlashRequest::Search(String::new())
    );
    assert_eq!(
        parse_slash_args(&["frobnicate x"]),
        SlashRequest::Unknown("frobnicate x".into())
    );
}
