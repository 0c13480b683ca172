//! The `/memory` slash command: the markdown file Claude Code reads, and the
//! arguments it hands to `solaria slash`.

use super::COMMAND_MARKER;
use crate::quote;

/// What `/memory …` asked for, as parsed from the arguments of `solaria slash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashRequest {
    /// `/memory` or `/memory status`.
    Status,
    /// `/memory sync`.
    Sync,
    /// `/memory search <query>` (the query may be empty).
    Search(String),
    /// Anything else, trimmed; the caller should print the usage.
    Unknown(String),
}

/// Parses the arguments the slash command passes to `solaria slash`.
///
/// The command file runs `solaria slash "$ARGUMENTS"`, and Claude Code splices the
/// typed text in without escaping, so the words may arrive as one argument or as
/// several (a typed `"` splits them). They are joined with spaces; the first word is
/// the sub-command and the rest the query.
pub fn parse_slash_args<S: AsRef<str>>(args: &[S]) -> SlashRequest {
    let joined = args.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(" ");
    let text = joined.trim();
    let (head, rest) = match text.split_once(char::is_whitespace) {
        Some((head, rest)) => (head, rest.trim()),
        None => (text, ""),
    };
    match head.to_ascii_lowercase().as_str() {
        "" | "status" => SlashRequest::Status,
        "sync" => SlashRequest::Sync,
        "search" => SlashRequest::Search(rest.to_owned()),
        _ => SlashRequest::Unknown(text.to_owned()),
    }
}

/// The content of `memory.md` for `exe`.
///
/// The arguments go to bash inside double quotes: Claude Code splices them in without
/// escaping, and double quotes keep the most common case (an apostrophe in a query)
/// working; a lone `"` in the typed text still breaks the line.
pub fn slash_command_file(exe: &str) -> String {
    let program = quote::shell(exe);
    let body = crate::memory_command_body(COMMAND_MARKER, "claude-code", &program);
    command_file(&program, &body)
}

/// A `/memory` command file: the front matter that lets it run `program slash`
/// (already quoted for the shell), then `body`.
pub(super) fn command_file(program: &str, body: &str) -> String {
    let allowed = yaml_scalar(&format!("Bash({program} slash:*)"));
    format!(
        "---\n\
         description: SOLARIA Memory - sync, status or search past coding sessions\n\
         argument-hint: sync | status | search <query>\n\
         allowed-tools: {allowed}\n\
         disable-model-invocation: true\n\
         ---\n\
         {body}"
    )
}

/// `s` as a YAML scalar: plain when that is unambiguous, double-quoted otherwise.
pub(super) fn yaml_scalar(s: &str) -> String {
    if s.contains(": ") || s.contains(" #") || s.contains(['\t', '"']) {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        s.to_owned()
    }
}
