//! The installers: what `solaria install <agent>` writes into an agent's own
//! configuration and `solaria uninstall <agent>` removes exactly, and the user
//! service that keeps the daemon running. One module per agent (`claude_code`,
//! `opencode`) and `service`; none of them captures anything (capture is
//! `crate::capture`) and capture names none of them: the names both sides share
//! (hook events, the MCP server's name, the command marker) are in
//! `solaria_hook::protocol`.

pub mod claude_code;
pub mod opencode;
pub mod service;

/// What both agents' `/memory` command files say after their front matter: the
/// agent's `marker`, which makes the file ours, the `solaria slash` call (`program` already
/// quoted for the shell; the typed arguments go inside double quotes, so an
/// apostrophe in a query works and a lone `"` still breaks the line), and how the
/// model is to relay its output.
pub(crate) fn memory_command_body(marker: &str, agent: &str, program: &str) -> String {
    format!(
        "<!-- {marker}. Written by \"solaria install {agent}\" and removed by \
         \"solaria uninstall {agent}\"; a reinstall overwrites edits. Delete this \
         comment to keep the file as your own. -->\n\
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
         searches past sessions (the SOLARIA MCP tools can then show the timeline around \
         a result or full records by id).\n"
    )
}
