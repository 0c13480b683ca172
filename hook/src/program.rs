//! What SOLARIA's hook entries run, as the installers write them into an agent's
//! configuration: the small client beside `solaria` when it is there, else
//! `solaria hook` itself; and how such an entry is told from everyone else's.

use crate::protocol::RELAY_CLIENT;
use std::path::Path;

/// What SOLARIA's hook entries run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookProgram {
    /// `<solaria> hook <arg>`: a `solaria` process captures the event.
    Solaria(String),
    /// `<solaria-hook> --data-dir <dir> <arg>`: the small client hands the event to
    /// the daemon of `data_dir`, or to `solaria hook` when none runs.
    Relay {
        /// The `solaria-hook` executable.
        client: String,
        /// The data dir resolved at install time.
        data_dir: String,
    },
}

impl HookProgram {
    /// The command's words before the event: `[solaria, "hook"]` or
    /// `[solaria-hook, "--data-dir", dir]`.
    pub fn command(&self) -> Vec<&str> {
        match self {
            HookProgram::Solaria(exe) => vec![exe, "hook"],
            HookProgram::Relay { client, data_dir } => vec![client, "--data-dir", data_dir],
        }
    }

    /// The relay when `solaria-hook` sits beside `solaria_exe` and the data dir is
    /// known and can be written into a command; `solaria hook` otherwise.
    pub fn choose(solaria_exe: &str, data_dir: Option<&Path>) -> HookProgram {
        let client = Path::new(solaria_exe).with_file_name(RELAY_CLIENT);
        let usable = |s: &str| !s.contains(['\n', '\r', '`', '\0']);
        match (data_dir.and_then(Path::to_str), client.to_str()) {
            (Some(dir), Some(client_str))
                if client.is_file() && Path::new(dir).is_absolute() && usable(dir) =>
            {
                HookProgram::Relay {
                    client: client_str.to_owned(),
                    data_dir: dir.to_owned(),
                }
            }
            _ => HookProgram::Solaria(solaria_exe.to_owned()),
        }
    }
}

/// A command is ours when its program is `solaria` (any directory) or exactly `exe`,
/// and its first argument is `hook`; or when its program is `solaria-hook`.
pub fn is_our_command(command: &str, exe: Option<&str>) -> bool {
    let Some((program, rest)) = split_program(command) else {
        return false;
    };
    if program.is_empty() {
        return false;
    }
    let base = program.rsplit(['/', '\\']).next().unwrap_or(&program);
    if base == RELAY_CLIENT {
        return true;
    }
    let is_hook = rest
        .trim_start()
        .strip_prefix("hook")
        .is_some_and(|r| r.is_empty() || r.starts_with(char::is_whitespace));
    if !is_hook {
        return false;
    }
    exe == Some(program.as_str()) || base == "solaria" || base == "solaria.exe"
}

/// Splits the first shell word (unquoted) off `command`; `None` if a quote is open.
pub fn split_program(command: &str) -> Option<(String, &str)> {
    let s = command.trim_start();
    let mut word = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => return Some((word, &s[i..])),
            '\'' => loop {
                match chars.next()?.1 {
                    '\'' => break,
                    ch => word.push(ch),
                }
            },
            '"' => loop {
                match chars.next()?.1 {
                    '"' => break,
                    '\\' => {
                        let next = chars.next()?.1;
                        if !matches!(next, '"' | '\\' | '$' | '`') {
                            word.push('\\');
                        }
                        word.push(next);
                    }
                    ch => word.push(ch),
                }
            },
            '\\' => word.push(chars.next()?.1),
            ch => word.push(ch),
        }
    }
    Some((word, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_our_commands_only() {
        assert!(is_our_command("/a/b/solaria hook stop", None));
        assert!(is_our_command("solaria hook session-start", None));
        assert!(is_our_command("'/a b/solaria' hook stop", None));
        assert!(is_our_command("\"/a b/solaria\" hook stop", None));
        assert!(is_our_command("'C:\\bin\\solaria.exe' hook stop", None));
        assert!(is_our_command("/x/sol hook stop", Some("/x/sol")));
        assert!(!is_our_command("/x/sol hook stop", None));
        assert!(!is_our_command("solaria serve", None));
        assert!(!is_our_command("solaria hooks", None));
        assert!(!is_our_command("other-tool hook solaria", None));
        assert!(!is_our_command("/a/not-solaria hook stop", None));
        assert!(!is_our_command("'unterminated hook stop", None));
        assert!(!is_our_command("", None));
    }
}
