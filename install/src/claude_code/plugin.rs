//! SOLARIA's Claude Code plugin: the files of `deploy/claude-plugin/` that say what
//! it registers (the same hooks, MCP server, `/memory` command and Librarian
//! subagent as [`install`]),
//! rendered here so that the plugin and the installer cannot drift apart, and
//! whether a person has it enabled.
//!
//! A plugin cannot know where SOLARIA was installed, so everything it registers runs
//! its launcher, `scripts/run-solaria`, which finds the binaries on `PATH`, in
//! `~/.local/bin` or in `~/.cargo/bin`, and does nothing (exit 0, one line on
//! stderr) when they are nowhere: a missing binary never stops a session. Its hooks
//! run `solaria-hook --plugin`, which stands aside when Claude Code's settings run
//! SOLARIA's hooks too (`solaria_hook::claude_settings`), so an event is never
//! captured twice.
//!
//! [`install`]: super::install

use super::HOOK_TIMEOUT_SECS;
use super::hooks::HOOK_EVENTS;
use super::mcp_entry::MCP_SERVER_NAME;
use super::slash;
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// The plugin's name (`solaria-memory@<marketplace>` once installed).
pub use solaria_hook::protocol::CLAUDE_PLUGIN_NAME as PLUGIN_NAME;

/// The marketplace the repository's `.claude-plugin/marketplace.json` declares.
pub const MARKETPLACE_NAME: &str = "solaria";

/// The plugin's `/memory` command, relative to its root.
const COMMAND_PATH: &str = "commands/memory.md";

/// The plugin's launcher, relative to its root.
pub const LAUNCHER: &str = "scripts/run-solaria";

/// Where the launcher looks for a binary after `PATH`, under the home directory, in
/// order: where `deploy/install-release.sh` puts it, then where `cargo install` does.
/// The launcher's text and `solaria doctor`'s check are both written from this list.
pub const LAUNCHER_HOME_DIRS: [&str; 2] = [".local/bin", ".cargo/bin"];

/// Where the launcher finds `name`: the first of `PATH`'s directories, then
/// [`LAUNCHER_HOME_DIRS`] under `home`, that holds it.
pub fn launcher_finds(
    name: &str,
    path_var: Option<&std::ffi::OsStr>,
    home: Option<&std::path::Path>,
) -> Option<PathBuf> {
    let on_path = path_var.map(std::env::split_paths).into_iter().flatten();
    let under_home = home
        .into_iter()
        .flat_map(|home| LAUNCHER_HOME_DIRS.iter().map(move |dir| home.join(dir)));
    on_path
        .chain(under_home)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The places the launcher looks, as a person reads them.
pub fn launcher_places() -> String {
    let dirs: Vec<String> = LAUNCHER_HOME_DIRS
        .iter()
        .map(|d| format!("~/{d}"))
        .collect();
    format!("PATH, {}", dirs.join(", "))
}

/// The launcher as Claude Code runs it: the plugin's root comes from the variable
/// Claude Code sets for every part of a plugin.
fn launcher() -> String {
    format!("\"${{CLAUDE_PLUGIN_ROOT}}/{LAUNCHER}\"")
}

/// The generated files of the plugin (path under its root, content), for `version`.
pub fn generated_files(version: &str) -> Vec<(&'static str, String)> {
    vec![
        (".claude-plugin/plugin.json", manifest(version)),
        ("hooks/hooks.json", hooks_file()),
        (".mcp.json", mcp_file()),
        (COMMAND_PATH, command_file()),
        ("agents/librarian.md", librarian_file()),
        (LAUNCHER, launcher_file()),
    ]
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

fn manifest(version: &str) -> String {
    pretty(&json!({
        "name": PLUGIN_NAME,
        "version": version,
        "description": "SOLARIA Memory: a persistent memory for Claude Code that follows you across sessions, agents, machines and teammates. Captures sessions through hooks, brings back context and decisions, and serves search through MCP tools. Needs the solaria binaries installed.",
        "author": {"name": "SOLARIA Memory"},
        "license": "Apache-2.0",
        "keywords": ["memory", "context", "decisions", "mcp", "hooks"],
    }))
}

fn hooks_file() -> String {
    let mut events = Map::new();
    for event in HOOK_EVENTS {
        let mut group = Map::new();
        if let Some(matcher) = event.matcher {
            group.insert("matcher".into(), Value::from(matcher));
        }
        group.insert(
            "hooks".into(),
            json!([{
                "type": "command",
                "command": format!("{} hook {}", launcher(), event.arg),
                "timeout": HOOK_TIMEOUT_SECS,
            }]),
        );
        events.insert(event.name.into(), json!([group]));
    }
    pretty(&json!({
        "description": "SOLARIA Memory captures each event and brings memory back at session start and with each prompt.",
        "hooks": events,
    }))
}

fn mcp_file() -> String {
    pretty(&json!({
        "mcpServers": {
            MCP_SERVER_NAME: {"command": format!("${{CLAUDE_PLUGIN_ROOT}}/{LAUNCHER}"), "args": ["mcp"]}
        }
    }))
}

fn command_file() -> String {
    let program = launcher();
    let body = crate::memory_command_text(
        "SOLARIA's Claude Code plugin. Generated from install/src/claude_code/plugin.rs: edit it there.",
        &program,
    );
    slash::command_file(&program, &body)
}

/// The launcher: a POSIX shell script, since it must run before anything of
/// SOLARIA's is known to be installed.
fn launcher_file() -> String {
    let under_home: Vec<String> = LAUNCHER_HOME_DIRS
        .iter()
        .map(|dir| format!("\"$HOME/{dir}/$name\""))
        .collect();
    format!(
        r#"#!/bin/sh
# The launcher of SOLARIA's Claude Code plugin: every hook, the MCP server and
# /memory run through it. A plugin cannot know where SOLARIA was installed, so this
# looks where the installers put it: PATH (npm, a package manager), then ~/{first}
# (deploy/install-release.sh), then ~/{second} (cargo install).
# Generated from install/src/claude_code/plugin.rs: edit it there.
#
#   run-solaria hook EVENT     solaria-hook --plugin EVENT (stands aside when
#                              settings.json runs SOLARIA's hooks too)
#   run-solaria ARGS...        solaria ARGS... (mcp, slash ...)
#
# When the binary is nowhere it says so on stderr and exits 0: a hook must never
# stop or stall a session.
if [ "$1" = hook ]; then
    name=solaria-hook
    shift
    set -- --plugin "$@"
else
    name=solaria
fi
for exe in "$(command -v "$name" 2>/dev/null)" {under_home}; do
    if [ -n "$exe" ] && [ -x "$exe" ]; then
        exec "$exe" "$@"
    fi
done
echo "SOLARIA Memory: $name is in none of {places}, so nothing was captured; install SOLARIA (docs/guide/install.md) or remove the plugin." >&2
exit 0
"#,
        first = LAUNCHER_HOME_DIRS[0],
        second = LAUNCHER_HOME_DIRS[1],
        under_home = under_home.join(" "),
        places = launcher_places(),
    )
}

/// The Librarian subagent, naming the tools as Claude Code names a plugin's.
fn librarian_file() -> String {
    super::librarian::librarian_text(
        "SOLARIA's Claude Code plugin. Generated from install/src/claude_code/plugin.rs: edit it there.",
        &format!("mcp__plugin_{PLUGIN_NAME}_{MCP_SERVER_NAME}__"),
    )
}

/// The plugin's id (`solaria-memory@<marketplace>`) when Claude Code would load it
/// for a session in `project`: enabled in the user's settings, the project's or the
/// project's local ones, the later overriding the earlier as in Claude Code. Files
/// that cannot be read or parsed say nothing.
pub fn enabled(home: &std::path::Path, project: &std::path::Path) -> Option<String> {
    let files: [PathBuf; 3] = [
        home.join(".claude").join("settings.json"),
        project.join(".claude").join("settings.json"),
        project.join(".claude").join("settings.local.json"),
    ];
    let mut state: Vec<(String, bool)> = Vec::new();
    for file in files {
        let Some(settings) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        else {
            continue;
        };
        let Some(Value::Object(plugins)) = settings.get("enabledPlugins") else {
            continue;
        };
        for (id, on) in plugins {
            if id.split('@').next() != Some(PLUGIN_NAME) {
                continue;
            }
            let on = on.as_bool().unwrap_or(false);
            state.retain(|(known, _)| known != id);
            state.push((id.clone(), on));
        }
    }
    state.into_iter().find(|(_, on)| *on).map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The plugin's folder in the repository.
    fn plugin_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/claude-plugin")
    }

    /// The committed plugin is what this module renders; `SOLARIA_WRITE_PLUGIN=1`
    /// writes it after a change here.
    #[test]
    fn the_committed_plugin_registers_what_the_installer_does() {
        let dir = plugin_dir();
        let rewrite = std::env::var_os("SOLARIA_WRITE_PLUGIN").is_some();
        for (path, content) in generated_files(env!("CARGO_PKG_VERSION")) {
            let file = dir.join(path);
            if rewrite {
                std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
                std::fs::write(&file, &content).expect("write");
            }
            let committed = std::fs::read_to_string(&file).unwrap_or_default();
            assert_eq!(
                committed,
                content,
                "{} differs from install/src/claude_code/plugin.rs; run \
                 `SOLARIA_WRITE_PLUGIN=1 cargo test -p solaria-install plugin` to write it",
                file.display()
            );
        }
        let hooks: Value = serde_json::from_str(&hooks_file()).expect("hooks.json is JSON");
        for event in HOOK_EVENTS {
            let command = hooks["hooks"][event.name][0]["hooks"][0]["command"]
                .as_str()
                .expect("a command");
            assert!(
                command.ends_with(&format!(" hook {}", event.arg)),
                "{command}"
            );
            assert!(
                !solaria_hook::program::is_our_command(command, None),
                "the plugin's hooks are never taken for settings.json's"
            );
        }
        // Both routes' commands are named as capture knows them (not captured).
        let command = format!("{}.md", solaria_hook::protocol::CLAUDE_COMMAND_NAME);
        assert_eq!(super::super::COMMAND_FILE_NAME, command);
        assert_eq!(COMMAND_PATH, format!("commands/{command}"));
        let launcher = dir.join(LAUNCHER);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&launcher)
                .expect("the launcher")
                .permissions(),
        );
        assert_eq!(mode & 0o111, 0o111, "{} is executable", launcher.display());
    }

    /// The launcher script and [`launcher_finds`] (what `solaria doctor` reports)
    /// pick the same binary, wherever it is installed, and the script does nothing
    /// when it is nowhere.
    #[test]
    fn the_launcher_runs_what_launcher_finds_names() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().expect("tempdir");
        let home = root.path().join("home");
        let on_path = root.path().join("bin");
        let launcher = root.path().join("run-solaria");
        std::fs::write(&launcher, launcher_file()).expect("write the launcher");
        let place = |dir: &Path| {
            std::fs::create_dir_all(dir).expect("mkdir");
            let exe = dir.join("solaria-hook");
            std::fs::write(&exe, "#!/bin/sh\necho \"$0 $*\"\n").expect("write");
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        };
        let run = || {
            let out = std::process::Command::new("sh")
                .arg(&launcher)
                .args(["hook", "stop"])
                .env("HOME", &home)
                .env("PATH", format!("{}:/usr/bin:/bin", on_path.display()))
                .output()
                .expect("run the launcher");
            assert!(out.status.success(), "the launcher always exits 0");
            (
                String::from_utf8_lossy(&out.stdout).trim().to_owned(),
                String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            )
        };
        let finds = || {
            let path_var = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", on_path.display()));
            launcher_finds("solaria-hook", Some(&path_var), Some(&home))
        };

        let (ran, said) = run();
        assert_eq!((ran.as_str(), finds()), ("", None));
        assert!(
            said.contains("in none of PATH, ~/.local/bin, ~/.cargo/bin"),
            "{said}"
        );

        // Each place in turn, the later ones first, so that each newly placed one
        // must win over those placed before it.
        let mut places: Vec<PathBuf> = LAUNCHER_HOME_DIRS.iter().map(|d| home.join(d)).collect();
        places.insert(0, on_path.clone());
        for dir in places.iter().rev() {
            place(dir);
            let expected = dir.join("solaria-hook");
            assert_eq!(finds(), Some(expected.clone()));
            let (ran, _) = run();
            assert_eq!(ran, format!("{} --plugin stop", expected.display()));
        }
    }

    #[test]
    fn enabled_follows_claude_codes_precedence() {
        let home = tempfile::tempdir().expect("tempdir");
        let project = home.path().join("p");
        let write = |path: PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        assert_eq!(enabled(home.path(), &project), None);
        write(
            home.path().join(".claude/settings.json"),
            r#"{"enabledPlugins": {"solaria-memory@solaria": true, "other@x": true}}"#,
        );
        assert_eq!(
            enabled(home.path(), &project).as_deref(),
            Some("solaria-memory@solaria")
        );
        write(
            project.join(".claude/settings.local.json"),
            r#"{"enabledPlugins": {"solaria-memory@solaria": false}}"#,
        );
        assert_eq!(
            enabled(home.path(), &project),
            None,
            "the project turned it off"
        );
        write(project.join(".claude/settings.json"), "{not json");
        assert_eq!(enabled(home.path(), &project), None);
    }
}
