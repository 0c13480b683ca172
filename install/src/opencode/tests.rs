//! Install and uninstall on throwaway directories: exact, idempotent, reversible.

use super::*;

const EXE: &str = "/opt/bin/solaria";

fn target(dir: &Path) -> Target {
    Target::for_scope(Scope::User, &dir.join("home"), None, &dir.join("proj"))
}

#[test]
fn user_scope_honours_xdg_config_home() {
    let t = Target::for_scope(
        Scope::User,
        Path::new("/h"),
        Some(Path::new("/x/cfg")),
        Path::new("/p"),
    );
    assert_eq!(t.config_path, Path::new("/x/cfg/opencode/opencode.json"));
    assert_eq!(
        t.plugin_path(),
        Path::new("/x/cfg/opencode/plugins/solaria.js")
    );
    let relative = Target::for_scope(
        Scope::User,
        Path::new("/h"),
        Some(Path::new("rel")),
        Path::new("/p"),
    );
    assert_eq!(
        relative.config_dir,
        Path::new("/h/.config/opencode"),
        "XDG paths must be absolute"
    );
    let p = Target::for_scope(Scope::Project, Path::new("/h"), None, Path::new("/p"));
    assert_eq!(p.config_path, Path::new("/p/opencode.json"));
    assert_eq!(
        p.command_path(),
        Path::new("/p/.opencode/commands/memory.md")
    );
}

#[test]
fn a_fresh_install_is_removed_without_a_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = target(dir.path());
    let report = install(&t, Path::new(EXE)).expect("install");
    assert!(report.plugin_changed && report.command_changed && report.config_changed);
    let config: Value =
        serde_json::from_str(&fs::read_to_string(&t.config_path).expect("config")).expect("json");
    assert_eq!(
        config["mcp"]["solaria"]["command"],
        serde_json::json!([EXE, "mcp"])
    );
    assert_eq!(config["mcp"]["solaria"]["type"], "local");
    assert_eq!(
        state(&t, Path::new(EXE)).expect("state"),
        InstallState {
            plugin: Presence::Current,
            command: Presence::Current,
            mcp: Presence::Current
        }
    );
    assert!(!install(&t, Path::new(EXE)).expect("again").changed());
    assert_eq!(
        state(&t, Path::new("/usr/local/bin/solaria"))
            .expect("state")
            .plugin,
        Presence::Stale
    );
    assert!(uninstall(&t).expect("uninstall").changed());
    assert!(!t.config_dir.exists(), "nothing left: {:?}", t.config_dir);
}

use serde_json::Value;

#[test]
fn a_jsonc_config_gets_its_bytes_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = target(dir.path());
    let original = "// mine\n{\n  \"model\": \"anthropic/claude\", // pinned\n  \"mcp\": {\n    /* work */ \"gh\": {\"type\": \"remote\", \"url\": \"https://gh\"},\n  },\n}\n";
    fs::create_dir_all(&t.config_dir).expect("mkdir");
    fs::write(&t.config_path, original).expect("write");
    fs::create_dir_all(t.config_dir.join("plugins")).expect("mkdir");
    fs::write(
        t.config_dir.join("plugins/other.js"),
        "export const X = async () => ({})\n",
    )
    .expect("write");
    install(&t, Path::new(EXE)).expect("install");
    let text = fs::read_to_string(&t.config_path).expect("read");
    assert!(
        text.contains("// pinned") && text.contains("/* work */"),
        "{text}"
    );
    let doc = crate::jsonc::Doc::parse(&text).expect("still JSONC");
    assert_eq!(doc.value["mcp"]["gh"]["url"], "https://gh");
    assert_eq!(doc.value["mcp"]["solaria"]["enabled"], true);
    // Another executable replaces our entry in place.
    install(&t, Path::new("/usr/bin/solaria")).expect("reinstall");
    uninstall(&t).expect("uninstall");
    assert_eq!(fs::read_to_string(&t.config_path).expect("read"), original);
    assert!(t.config_dir.join("plugins/other.js").exists());
    assert!(!t.plugin_path().exists());
}

#[test]
fn what_is_not_ours_stops_the_install_before_any_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = target(dir.path());
    fs::create_dir_all(&t.config_dir).expect("mkdir");
    fs::write(&t.config_path, "{ \"model\": ").expect("write");
    let e = install(&t, Path::new(EXE)).expect_err("invalid");
    assert!(e.to_string().contains("is not valid JSON/JSONC"), "{e}");
    assert!(!t.plugin_path().exists() && !t.command_path().exists());

    fs::write(
        &t.config_path,
        "{\"mcp\": {\"solaria\": {\"type\": \"remote\", \"url\": \"https://x\"}}}",
    )
    .expect("write");
    assert!(matches!(
        install(&t, Path::new(EXE)),
        Err(InstallError::ForeignMcpServer { .. })
    ));
    fs::write(&t.config_path, "{\"mcp\": []}").expect("write");
    assert!(matches!(
        install(&t, Path::new(EXE)),
        Err(InstallError::UnexpectedShape { .. })
    ));
    fs::write(&t.config_path, "{}").expect("write");
    fs::create_dir_all(t.command_path().parent().expect("dir")).expect("mkdir");
    fs::write(t.command_path(), "my own memory command").expect("write");
    assert!(matches!(
        install(&t, Path::new(EXE)),
        Err(InstallError::ForeignFile { .. })
    ));
    assert_eq!(fs::read_to_string(&t.config_path).expect("read"), "{}");
    assert!(!t.plugin_path().exists());
    uninstall(&t).expect("uninstall");
    assert_eq!(
        fs::read_to_string(t.command_path()).expect("kept"),
        "my own memory command"
    );
}
