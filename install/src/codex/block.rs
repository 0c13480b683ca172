//! The blocks SOLARIA keeps at the end of Codex's `config.toml` files, each between
//! two marker lines: in the file an install targets, its MCP server and its hooks
//! (inline, as Codex reads them there); in the user's own file, the trust Codex
//! records for those hooks (in the same block for a user install, in a block of its
//! own for a project's). The text around a block is never parsed for rewriting,
//! only read (to count the hook groups before ours, whose indexes the trust keys
//! name) and given back byte for byte when the block goes.

use super::trust;
use crate::InstallError;
use crate::quote::{self, toml_string};
use solaria_hook::program::HookProgram;
use solaria_hook::protocol::{HookEvent, MCP_SERVER_NAME};
use std::path::Path;

/// How every block's first line starts.
pub const BLOCK_START: &str = "# >>> solaria-managed: codex";
/// How every block's last line starts.
pub const BLOCK_END: &str = "# <<< solaria-managed: codex";

/// Added to the first line when the text before did not end with a newline and
/// one was added before the block: uninstall then takes it away again.
const NEWLINE_ADDED: &str = " [newline added above]";

/// The Codex hooks SOLARIA installs, with their timeouts in seconds. Codex cuts a
/// SessionEnd hook's to 3 s (and says so on every run when it is longer).
/// SessionStart has no matcher: it also fires on resume, `/clear` and compaction,
/// when the context must be given again.
pub const HOOKS: [(HookEvent, u64); 5] = [
    (HookEvent::SessionStart, 10),
    (HookEvent::UserPromptSubmit, 10),
    (HookEvent::PostToolUse, 10),
    (HookEvent::Stop, 10),
    (HookEvent::SessionEnd, 3),
];

/// The variables `solaria mcp` reads that Codex does not pass on by itself.
const MCP_ENV_VARS: [&str; 5] = [
    "SOLARIA_HOME",
    "SOLARIA_CONFIG",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
];

/// The two marker lines of one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marks {
    start: String,
    end: String,
}

impl Marks {
    /// The block of an install: its hooks and MCP server (and, for a user
    /// install, their trust).
    pub fn install() -> Marks {
        Marks {
            start: format!(
                "{BLOCK_START} (written by \"solaria install codex\", removed by \"solaria uninstall codex\")"
            ),
            end: BLOCK_END.to_owned(),
        }
    }

    /// The block in the user's configuration that trusts the hooks a project
    /// install wrote into `project_config`.
    pub fn trust_of(project_config: &Path) -> Marks {
        let what = format!("trust of the hooks in {}", project_config.display());
        Marks {
            start: format!(
                "{BLOCK_START}, {what} (written by \"solaria install codex --scope project\", removed by its uninstall)"
            ),
            end: format!("{BLOCK_END}, {what}"),
        }
    }
}

/// `text` without the block marked by `marks` (and the separation added with it).
pub fn without(text: &str, marks: &Marks) -> String {
    let is_start = |line: &str| {
        line == marks.start || line.strip_suffix(NEWLINE_ADDED) == Some(marks.start.as_str())
    };
    let Some((start, first_line)) = find_line(text, 0, is_start) else {
        return text.to_owned();
    };
    let Some((end_line, _)) = find_line(text, start, |line| line == marks.end) else {
        // An unterminated block is not ours to guess at.
        return text.to_owned();
    };
    let end = text[end_line..]
        .find('\n')
        .map_or(text.len(), |n| end_line + n + 1);
    let mut before = &text[..start];
    // The blank line put before the block, and the newline the text before
    // lacked, when one was added.
    if !before.is_empty() {
        before = before.strip_suffix('\n').unwrap_or(before);
        if first_line.ends_with(NEWLINE_ADDED) {
            before = before.strip_suffix('\n').unwrap_or(before);
        }
    }
    format!("{before}{}", &text[end..])
}

/// The offset and text (without its line break) of the first line at or after
/// `from` that `matches`.
fn find_line(text: &str, from: usize, matches: impl Fn(&str) -> bool) -> Option<(usize, &str)> {
    let mut at = from;
    for line in text[from..].split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if matches(bare) {
            return Some((at, bare));
        }
        at += line.len();
    }
    None
}

/// `text` (the configuration at `path`) with `body` as the block marked by
/// `marks`: an earlier one taken out, the new one at the end; refused when what
/// Codex would read does not parse.
pub fn with(text: &str, path: &Path, marks: &Marks, body: &str) -> Result<String, InstallError> {
    let rest = without(text, marks);
    let (glue, note) = match rest.as_str() {
        "" => ("", ""),
        r if r.ends_with('\n') => ("\n", ""),
        _ => ("\n\n", NEWLINE_ADDED),
    };
    let joined = format!("{rest}{glue}{}{note}\n{body}{}\n", marks.start, marks.end);
    // A user's `hooks = {…}` written inline, say, cannot take tables added after it.
    if let Err(e) = toml::from_str::<toml::Table>(&joined) {
        return Err(InstallError::InvalidConfig {
            path: path.to_owned(),
            format: "TOML that SOLARIA's hooks can be added to",
            reason: one_line(&e.to_string()),
        });
    }
    Ok(joined)
}

/// What an install's block and the trust of its hooks hold.
pub struct Bodies {
    /// The MCP server and the hooks, for the file the install targets.
    pub hooks: String,
    /// The trust tables, for the user's file.
    pub trust: String,
}

/// The bodies for `exe`, whose hooks run `program`, going into `target_text` (the
/// configuration at `target`, without our block), trusted from `trust_text` (the
/// user's configuration, without the block the trust goes in).
pub fn bodies(
    target: &Path,
    target_text: &str,
    trust_path: &Path,
    trust_text: &str,
    exe: &str,
    program: &HookProgram,
) -> Result<Bodies, InstallError> {
    let parsed = parse(target, target_text)?;
    if parsed
        .get("mcp_servers")
        .and_then(|s| s.get(MCP_SERVER_NAME))
        .is_some()
    {
        return Err(InstallError::ForeignMcpServer {
            path: target.to_owned(),
        });
    }
    let trusting = parse(trust_path, trust_text)?;
    let trusted = trusting
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    let hooks = parsed.get("hooks");
    let mut out = Bodies {
        hooks: format!(
            "[mcp_servers.{MCP_SERVER_NAME}]\ncommand = {}\nargs = [\"mcp\"]\nenv_vars = [{}]\n",
            toml_string(exe),
            MCP_ENV_VARS.map(toml_string).join(", ")
        ),
        trust: String::new(),
    };
    for (event, timeout) in HOOKS {
        let name = event.claude_name();
        let groups_before = match hooks.and_then(|h| h.get(name)) {
            None => 0,
            Some(toml::Value::Array(groups)) => groups.len(),
            Some(other) => {
                return Err(InstallError::UnexpectedShape {
                    path: target.to_owned(),
                    what: format!("hooks.{name}"),
                    expected: "an array of tables",
                    found: other.type_str(),
                });
            }
        };
        let command =
            quote::command_line(&[program.command(), vec!["codex", event.arg()]].concat());
        out.hooks.push_str(&format!(
            "\n[[hooks.{name}]]\n\n[[hooks.{name}.hooks]]\ntype = \"command\"\ncommand = {}\ntimeout = {timeout}\n",
            toml_string(&command)
        ));
        let key = trust::state_key(target, event, groups_before, 0);
        let hash = trust::trusted_hash(event, &command, timeout);
        match trusted.and_then(|t| t.get(&key)) {
            None => out.trust.push_str(&format!(
                "\n[hooks.state.{}]\ntrusted_hash = {}\n",
                toml_string(&key),
                toml_string(&hash)
            )),
            // Codex recorded this trust itself (the user trusted the hook there).
            Some(state)
                if state.get("trusted_hash").and_then(toml::Value::as_str) == Some(&hash) => {}
            Some(_) => {
                return Err(InstallError::UnexpectedShape {
                    path: trust_path.to_owned(),
                    what: format!("[hooks.state.{}]", toml_string(&key)),
                    expected: "absent or this hook's trust (SOLARIA records its hooks' trust)",
                    found: "a decision about another hook",
                });
            }
        }
    }
    Ok(out)
}

/// A configuration, parsed (empty when blank).
fn parse(path: &Path, text: &str) -> Result<toml::Table, InstallError> {
    toml::from_str::<toml::Table>(text).map_err(|e| InstallError::InvalidConfig {
        path: path.to_owned(),
        format: "TOML",
        reason: one_line(&e.to_string()),
    })
}

/// A parser's message on one line (`toml`'s spans several, with the source).
fn one_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_owned()
}
