//! Whether Claude Code's settings files already run SOLARIA's hooks: the plugin's
//! hooks then stand aside, so that an event is never captured twice when a person
//! has both `solaria install claude-code` and the plugin.
//!
//! A hook process cannot afford a JSON library, and needs none: it only looks for
//! the string values of `"command"` keys, which is where Claude Code keeps a hook's
//! command line, and asks [`is_our_command`] of each.

use crate::program::is_our_command;
use std::path::{Path, PathBuf};

/// The settings files Claude Code reads hooks from for a session in `project`:
/// the user's, the project's shared one and the project's local one.
pub fn settings_files(home: Option<&Path>, project: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = home
        .map(|home| home.join(".claude").join("settings.json"))
        .into_iter()
        .collect();
    let project = project.join(".claude");
    files.push(project.join("settings.json"));
    files.push(project.join("settings.local.json"));
    files
}

/// Whether any of `files` holds a hook command of SOLARIA's. A file that cannot be
/// read holds none.
pub fn run_our_hooks(files: &[PathBuf]) -> bool {
    files.iter().any(|file| {
        std::fs::read_to_string(file).is_ok_and(|text| {
            command_values(&text)
                .iter()
                .any(|command| is_our_command(command, None))
        })
    })
}

/// The string values of every `"command"` key in the JSON text `json`, at any
/// depth. Text that is not JSON yields what could be read before it went wrong.
pub fn command_values(json: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut chars = json.chars();
    // Where the scan stands: after the key "command", then after its colon.
    let mut after_key = false;
    let mut after_colon = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let Some(text) = string_body(&mut chars) else {
                    break;
                };
                if after_colon {
                    found.push(text);
                    after_colon = false;
                } else {
                    after_key = text == "command";
                }
            }
            ':' if after_key => {
                after_key = false;
                after_colon = true;
            }
            c if c.is_whitespace() => {}
            _ => {
                after_key = false;
                after_colon = false;
            }
        }
    }
    found
}

/// The rest of a JSON string whose opening quote was just read, unescaped; `None`
/// when the text ends inside it.
fn string_body(chars: &mut std::str::Chars<'_>) -> Option<String> {
    let mut text = String::new();
    loop {
        match chars.next()? {
            '"' => return Some(text),
            '\\' => match chars.next()? {
                'n' => text.push('\n'),
                't' => text.push('\t'),
                'r' => text.push('\r'),
                'b' => text.push('\u{8}'),
                'f' => text.push('\u{c}'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let unit = u32::from_str_radix(&hex, 16).ok()?;
                    // A surrogate half stands for a character no command of ours has.
                    text.push(char::from_u32(unit).unwrap_or('\u{fffd}'));
                }
                other => text.push(other),
            },
            c => text.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_values_are_found_at_any_depth_and_unescaped() {
        let json = r#"{"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command" : "\"/a b/solaria-hook\" --data-dir /d stop"},
            {"type": "command", "command": "other \u0041\\n"}]}]},
            "note": "command", "x": {"command": 3}, "commandx": "no"}"#;
        assert_eq!(
            command_values(json),
            ["\"/a b/solaria-hook\" --data-dir /d stop", "other A\\n"]
        );
        assert_eq!(command_values(r#"{"command": "cut"#), Vec::<String>::new());
        assert_eq!(command_values("not json"), Vec::<String>::new());
    }

    #[test]
    fn only_a_settings_file_with_our_hook_counts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("p");
        let files = settings_files(Some(dir.path()), &project);
        assert!(!run_our_hooks(&files), "no files");
        std::fs::create_dir_all(project.join(".claude")).expect("mkdir");
        let local = project.join(".claude").join("settings.local.json");
        std::fs::write(&local, r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"prettier --write"}]}]},"permissions":{"allow":["Bash(solaria hook stop)"]}}"#).expect("write");
        assert!(!run_our_hooks(&files), "someone else's hook");
        std::fs::write(
            &local,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/opt/bin/solaria-hook --data-dir /d stop"}]}]}}"#,
        )
        .expect("write");
        assert!(run_our_hooks(&files));
    }
}
