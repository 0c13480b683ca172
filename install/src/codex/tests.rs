use super::*;
use solaria_hook::protocol::HookEvent;
use std::path::Path;

const EXE: &str = "/opt/solaria/bin/solaria";

fn target(home: &Path) -> Target {
    Target::for_user(home, None)
}

fn parsed(path: &Path) -> toml::Table {
    toml::from_str(&fs::read_to_string(path).expect("config")).expect("config parses")
}

/// The command and trust key of our hook for `event` in `config`.
fn our_hook(config: &toml::Table, event: &str) -> String {
    let groups = config["hooks"][event].as_array().expect("groups");
    let last = groups.last().expect("our group");
    last["hooks"][0]["command"]
        .as_str()
        .expect("command")
        .to_owned()
}

#[test]
fn a_fresh_install_is_trusted_runs_the_capture_and_goes_without_a_trace() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = target(home.path());
    let report = install(&t, Path::new(EXE)).expect("install");
    assert!(report.config_changed && report.skill_changed);
    let config = parsed(&t.config_path);
    assert_eq!(
        config["mcp_servers"]["solaria"]["command"].as_str(),
        Some(EXE)
    );
    assert_eq!(
        config["mcp_servers"]["solaria"]["args"],
        toml::Value::Array(vec!["mcp".into()])
    );
    let forwarded = config["mcp_servers"]["solaria"]["env_vars"]
        .as_array()
        .expect("env_vars");
    assert!(forwarded.contains(&"SOLARIA_HOME".into()));
    for (event, timeout) in HOOKS {
        let command = our_hook(&config, event.claude_name());
        assert_eq!(command, format!("{EXE} hook codex {}", event.arg()));
        let key = trust::state_key(&t.config_path, event, 0, 0);
        assert_eq!(
            config["hooks"]["state"][&key]["trusted_hash"].as_str(),
            Some(trust::trusted_hash(event, &command, timeout).as_str()),
            "{key}"
        );
    }
    let skill = fs::read_to_string(t.skill_path.as_ref().expect("a skill")).expect("skill");
    assert!(skill.contains(&format!("{EXE} slash \"<what they typed>\"")));
    assert_eq!(
        state(&t, Path::new(EXE)).expect("state"),
        InstallState {
            config: Presence::Current,
            skill: Presence::Current
        }
    );
    assert!(!install(&t, Path::new(EXE)).expect("again").changed());

    assert!(uninstall(&t).expect("uninstall").changed());
    assert!(
        !home.path().join(".codex").exists(),
        "nothing left of what the install made"
    );
    assert!(!uninstall(&t).expect("again").changed());
}

#[test]
fn a_users_config_gets_its_bytes_back_and_its_own_hooks_keep_their_places() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = target(home.path());
    // The user's own inline SessionStart hook, trusted, and no final newline.
    let own = "model = \"gpt-5.5\"  # mine\n\n[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = \"command\"\ncommand = \"echo hi\"\n\n[hooks.state.\"/x/config.toml:session_start:0:0\"]\ntrusted_hash = \"sha256:00\"\n\n[projects.\"/work/app\"]\ntrust_level = \"trusted\"";
    fs::create_dir_all(t.config_path.parent().expect("dir")).expect("mkdir");
    fs::write(&t.config_path, own).expect("write");

    install(&t, Path::new(EXE)).expect("install");
    let config = parsed(&t.config_path);
    assert_eq!(config["model"].as_str(), Some("gpt-5.5"));
    let groups = config["hooks"]["SessionStart"].as_array().expect("groups");
    assert_eq!(groups.len(), 2, "the user's group stays first");
    // Our trust names our group by its place after the user's.
    let key = trust::state_key(&t.config_path, HookEvent::SessionStart, 1, 0);
    assert!(config["hooks"]["state"].get(&key).is_some(), "{key}");
    assert_eq!(
        config["projects"]["/work/app"]["trust_level"].as_str(),
        Some("trusted")
    );

    // A reinstall for another executable replaces the block, never adds one.
    install(&t, Path::new("/usr/local/bin/solaria")).expect("reinstall");
    let text = fs::read_to_string(&t.config_path).expect("read");
    assert_eq!(text.matches(BLOCK_START).count(), 1);
    assert!(!text.contains(EXE));

    uninstall(&t).expect("uninstall");
    assert_eq!(fs::read_to_string(&t.config_path).expect("read"), own);
}

#[test]
fn what_is_not_ours_stops_the_install_before_any_write() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = target(home.path());
    fs::create_dir_all(t.config_path.parent().expect("dir")).expect("mkdir");
    for (text, want) in [
        (
            "[mcp_servers.solaria]\ncommand = \"/usr/bin/other\"\n",
            "already configures an MCP server named \"solaria\"",
        ),
        ("model = \n", "is not valid TOML"),
        (
            "hooks = { SessionStart = 1 }\n",
            "hooks.SessionStart must be an array of tables",
        ),
    ] {
        fs::write(&t.config_path, text).expect("write");
        let e = install(&t, Path::new(EXE)).expect_err(text);
        assert!(e.to_string().contains(want), "{e}");
        assert_eq!(fs::read_to_string(&t.config_path).expect("read"), text);
        assert!(!t.skill_path.as_ref().expect("a skill").exists());
    }
}

#[test]
fn state_tells_missing_from_stale() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = target(home.path());
    assert_eq!(
        state(&t, Path::new(EXE)).expect("state").config,
        Presence::Missing
    );
    install(&t, Path::new("/elsewhere/solaria")).expect("install");
    let stale = state(&t, Path::new(EXE)).expect("state");
    assert_eq!(stale.config, Presence::Stale);
    assert_eq!(stale.skill, Presence::Stale);
}

#[test]
fn a_project_install_puts_its_hooks_in_the_project_and_their_trust_in_the_users_file() {
    let home = tempfile::tempdir().expect("tempdir");
    let project = home.path().join("app");
    fs::create_dir_all(&project).expect("mkdir");
    let user = Target::for_user(home.path(), None);
    // The user's own settings, one of them trusting the project.
    let users_own = format!(
        "model = \"gpt-5.5\"\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        project.display()
    );
    fs::create_dir_all(user.config_path.parent().expect("dir")).expect("mkdir");
    fs::write(&user.config_path, &users_own).expect("write");
    // And a user install already there: the two live side by side.
    install(&user, Path::new(EXE)).expect("user install");
    let with_user_install = fs::read_to_string(&user.config_path).expect("read");

    let t = Target::for_project(home.path(), None, &project);
    let report = install(&t, Path::new(EXE)).expect("project install");
    assert_eq!(report.project_trusted, Some(true));
    let in_project = parsed(&t.config_path);
    assert_eq!(
        our_hook(&in_project, "SessionStart"),
        format!("{EXE} hook codex session-start")
    );
    assert!(
        in_project["hooks"].get("state").is_none(),
        "a project cannot trust its own hooks"
    );
    let trusting = parsed(&user.config_path);
    let key = trust::state_key(&t.config_path, HookEvent::Stop, 0, 0);
    assert!(trusting["hooks"]["state"].get(&key).is_some(), "{key}");
    assert_eq!(
        state(&t, Path::new(EXE)).expect("state").config,
        Presence::Current
    );
    assert!(!install(&t, Path::new(EXE)).expect("again").changed());

    uninstall(&t).expect("project uninstall");
    assert!(
        !project.join(".codex").exists(),
        "nothing left in the project"
    );
    assert_eq!(
        fs::read_to_string(&user.config_path).expect("read"),
        with_user_install,
        "the user's file as the project install found it"
    );
    uninstall(&user).expect("user uninstall");
    assert_eq!(
        fs::read_to_string(&user.config_path).expect("read"),
        users_own
    );
}

#[test]
fn a_project_not_trusted_by_the_user_is_said_so() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = Target::for_project(home.path(), None, &home.path().join("app"));
    let report = install(&t, Path::new(EXE)).expect("install");
    assert_eq!(report.project_trusted, Some(false));
    uninstall(&t).expect("uninstall");
    assert!(!home.path().join(".codex/config.toml").exists());
}

#[test]
fn a_project_install_whose_user_config_does_not_parse_writes_nothing() {
    let home = tempfile::tempdir().expect("tempdir");
    let project = home.path().join("app");
    let user = Target::for_user(home.path(), None);
    fs::create_dir_all(user.config_path.parent().expect("dir")).expect("mkdir");
    fs::write(&user.config_path, "model = \n").expect("write");
    let t = Target::for_project(home.path(), None, &project);
    let e = install(&t, Path::new(EXE)).expect_err("a broken user config");
    assert!(e.to_string().contains("is not valid TOML"), "{e}");
    assert!(
        !project.join(".codex").exists(),
        "nothing written in the project"
    );
    assert_eq!(
        fs::read_to_string(&user.config_path).expect("read"),
        "model = \n"
    );
}
