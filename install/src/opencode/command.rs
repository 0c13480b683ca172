//! The `/memory` command for OpenCode: `commands/memory.md`, whose template runs
//! `solaria slash` (the same entry point as Claude Code's `/memory`).
//!
//! OpenCode replaces `$ARGUMENTS` in the template with the text typed after the
//! command, then runs each `` !`…` `` through the shell and splices its output in,
//! before the prompt reaches the model.

use super::COMMAND_MARKER;
use crate::quote;

/// File name of the command inside the commands directory (`/memory`).
pub const COMMAND_FILE_NAME: &str = "memory.md";

/// The content of `memory.md` for `exe`. The arguments go to the shell inside
/// double quotes, so an apostrophe in a query works; a lone `"` still breaks it.
pub fn command_file(exe: &str) -> String {
    let program = quote::shell(exe);
    format!(
        "---\n\
         description: SOLARIA Memory - sync, status or search past coding sessions\n\
         ---\n\
         {body}",
        body = crate::memory_command_body(COMMAND_MARKER, "opencode", &program)
    )
}
