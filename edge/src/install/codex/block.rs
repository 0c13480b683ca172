//! The one block SOLARIA keeps at the end of Codex's `config.toml`, between two
//! marker lines: its MCP server, its hooks (inline, as Codex reads them there) and
//! the trust Codex records for them. The user's text around it is never parsed
//! for rewriting, only read (to count the hook groups before ours, whose indexes
//! the trust keys name) and given back byte for byte when the block goes.

use super::trust;
use crate::install::InstallError;
use crate::install::quote::{self, toml_string};
use solaria_hook::program::HookProgram;
use solaria_hook::protocol::{HookEvent, MCP_SERVER_NAME};
use std::path::Path;

/// The block's first line starts so.
pub const BLOCK_START: &str = "# >>> solaria-managed: codex";
/// The block's last line.
pub const BLOCK_END: &str = "# <<< solaria-managed: codex";

/// What follows [`BLOCK_START`] on the first line.
const START_REST: &str =
    " (written by \"solaria install codex\", removed by \"solaria uninstall codex\")";
/// Added to the first line when the user's text did not end with a newline and
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

/// `text` without SOLARIA's block (and the separation added with it).
pub fn without_block(text: &str) -> String {
    let Some(start) = line_start(text, BLOCK_START, 0) else {
        return text.to_owned();
    };
    let Some(end_line) = line_start(text, BLOCK_END, start) else {
        // An unterminated block is not ours to guess at.
        return text.to_owned();
    };
    let end = text[end_line..]
        .find('\n')
        .map_or(text.len(), |n| end_line + n + 1);
    let first_line = text[start..].lines().next().unwrap_or("");
    let mut before = &text[..start];
    // The blank line put before the block, and the newline the user's text
    // lacked, when one was added.
    if !before.is_empty() {
        before = before.strip_suffix('\n').unwrap_or(before);
        if first_line.ends_with(NEWLINE_ADDED) {
            before = before.strip_suffix('\n').unwrap_or(before);
        }
    }
    format!("{before}{}", &text[end..])
}

/// The byte offset of the first line at or after `from` that starts with `prefix`.
fn line_start(text: &str, prefix: &str, from: usize) -> Option<usize> {
    let mut at = from;
    for line in text[from..].split_inclusive('\n') {
        if line.starts_with(prefix) && (at == 0 || text.as_bytes()[at - 1] == b'\n') {
            return Some(at);
        }
        at += line.len();
    }
    None
}

/// `text` (Codex's `config.toml` at `path`) with SOLARIA's block for `exe`,
/// whose hooks run `program`: the earlier block taken out, the new one at the end.
pub fn with_block(
    text: &str,
    path: &Path,
    exe: &str,
    program: &HookProgram,
) -> Result<String, InstallError> {
    let user = without_block(text);
    let parsed = parse(path, &user)?;
    if parsed
        .get("mcp_servers")
        .and_then(|s| s.get(MCP_SERVER_NAME))
        .is_some()
    {
        return Err(InstallError::ForeignMcpServer {
            path: path.to_owned(),
        });
    }
    let hooks = parsed.get("hooks");
    let trusted = hooks
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    let mut body = format!(
        "[mcp_servers.{MCP_SERVER_NAME}]\ncommand = {}\nargs = [\"mcp\"]\nenv_vars = [{}]\n",
        toml_string(exe),
        MCP_ENV_VARS.map(toml_string).join(", ")
    );
    let mut trust_tables = String::new();
    for (event, timeout) in HOOKS {
        let name = event.claude_name();
        let groups_before = match hooks.and_then(|h| h.get(name)) {
            None => 0,
            Some(toml::Value::Array(groups)) => groups.len(),
            Some(other) => {
                return Err(InstallError::UnexpectedShape {
                    path: path.to_owned(),
                    what: format!("hooks.{name}"),
                    expected: "an array of tables",
                    found: other.type_str(),
                });
            }
        };
        let words: Vec<String> = program.command().iter().map(|w| quote::shell(w)).collect();
        let command = format!("{} codex {}", words.join(" "), event.arg());
        body.push_str(&format!(
            "\n[[hooks.{name}]]\n\n[[hooks.{name}.hooks]]\ntype = \"command\"\ncommand = {}\ntimeout = {timeout}\n",
            toml_string(&command)
        ));
        let key = trust::state_key(path, event, groups_before, 0);
        let hash = trust::trusted_hash(event, &command, timeout);
        match trusted.and_then(|t| t.get(&key)) {
            None => trust_tables.push_str(&format!(
                "\n[hooks.state.{}]\ntrusted_hash = {}\n",
                toml_string(&key),
                toml_string(&hash)
            )),
            // Codex recorded this trust itself (the user trusted the hook there).
            Some(state)
                if state.get("trusted_hash").and_then(toml::Value::as_str) == Some(&hash) => {}
            Some(_) => {
                return Err(InstallError::UnexpectedShape {
                    path: path.to_owned(),
                    what: format!("[hooks.state.{}]", toml_string(&key)),
                    expected: "absent or this hook's trust (SOLARIA records its hooks' trust)",
                    found: "a decision about another hook",
                });
            }
        }
    }
    body.push_str(&trust_tables);
    let (glue, note) = match user.as_str() {
        "" => ("", ""),
        u if u.ends_with('\n') => ("\n", ""),
        _ => ("\n\n", NEWLINE_ADDED),
    };
    let joined = format!("{user}{glue}{BLOCK_START}{START_REST}{note}\n{body}{BLOCK_END}\n");
    // What Codex will read must parse: a user's `hooks = {…}` written inline, say,
    // cannot take tables added after it.
    if let Err(e) = toml::from_str::<toml::Table>(&joined) {
        return Err(InstallError::InvalidConfig {
            path: path.to_owned(),
            format: "TOML that SOLARIA's hooks can be added to",
            reason: one_line(&e.to_string()),
        });
    }
    Ok(joined)
}

/// The user's configuration, parsed (empty when blank).
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
