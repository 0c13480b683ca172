//! The `/memory` command for OpenCode: `commands/memory.md`, whose template runs
//! `solaria slash` (the same entry point as Claude Code's `/memory`).
//!
//! OpenCode replaces `$ARGUMENTS` in the template with the text typed after the
//! command, then runs each `` !`…` `` through the shell and splices its output in,
//! before the prompt reaches the model.

use super::COMMAND_MARKER;
use crate::install::claude_code::shell_quote;

/// File name of the command inside the commands directory (`/memory`).
pub const COMMAND_FILE_NAME: &str = "memory.md";

/// The content of `memory.md` for `exe`. The arguments go to the shell inside
/// double quotes, so an apostrophe in a query works; a lone `"` still breaks it.
pub fn command_file(exe: &str) -> String {
    let program = shell_quote(exe);
    format!(
        "---\n\
         description: SOLARIA Memory - sync, status or search past coding sessions\n\
         ---\n\
         <!-- {COMMAND_MARKER}. Written by \"solaria install opencode\" and removed by \
         \"solaria uninstall opencode\"; a reinstall overwrites edits. Delete this comment \
         to keep the file as your own. -->\n\
         \n\
         SOLARIA Memory answered \"/memory $ARGUMENTS\" with:\n\
         \n\
         !`{program} slash \"$ARGUMENTS\"`\n\
         \n\
         Show that output to the user as it is, keeping every id, time and title so that \
         results can be cited and opened later; use a code block if it is a table. Do not \
         run any other command for this request. If it reports an error or a usage \
         message, relay it in one or two sentences.\n\
         \n\
         Usage: \"/memory status\" shows the local store and sync state, \"/memory sync\" \
         pushes and pulls with the central service now, \"/memory search <query>\" \
         searches past sessions (the solaria MCP tools can then show the timeline around \
         a result or full records by id).\n"
    )
}
