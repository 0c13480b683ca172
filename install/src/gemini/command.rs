//! The `/solaria` command for Gemini CLI: `commands/solaria.toml`, whose prompt
//! runs `solaria slash` and hands its output to the model to relay. Gemini's own
//! `/memory` (its GEMINI.md memory) always wins over a user command of that name,
//! so SOLARIA's is `/solaria status | sync | search <query>`.
//!
//! Gemini replaces `{{args}}` with the text typed after the command; inside `!{…}`
//! it quotes that text for the shell itself, then runs the command and splices its
//! output in before the prompt reaches the model.

use crate::quote;

/// File name of the command inside the commands directory (`/solaria`).
pub const COMMAND_FILE_NAME: &str = "solaria.toml";

/// Text that marks the command file as written by SOLARIA; also in the prompt it
/// expands to, which the capture then knows for SOLARIA's own, not the person's.
pub use solaria_hook::protocol::GEMINI_COMMAND_MARKER as COMMAND_MARKER;

/// The content of `solaria.toml` for `exe`.
pub fn command_file(exe: &str) -> String {
    let program = quote::shell(exe);
    let prompt = format!(
        "<!-- {COMMAND_MARKER} -->\n\
         SOLARIA Memory answered \"/solaria {{{{args}}}}\" with:\n\
         \n\
         !{{{program} slash {{{{args}}}}}}\n\
         \n\
         {}\n\
         \n\
         {}\n",
        crate::RELAY,
        crate::memory_usage("/solaria")
    );
    format!(
        "# {COMMAND_MARKER}. Written by \"solaria install gemini\" and removed by \
         \"solaria uninstall gemini\"; a reinstall overwrites edits. Delete this line to \
         keep the file as your own.\n\
         description = \"SOLARIA Memory - sync, status or search past coding sessions\"\n\
         prompt = {}\n",
        quote::toml_string(&prompt)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_runs_solaria_slash_with_what_was_typed() {
        let text = command_file("/opt/my tools/solaria");
        let table: toml::Table = toml::from_str(&text).expect("TOML");
        let prompt = table["prompt"].as_str().expect("prompt");
        assert!(
            prompt.contains("!{'/opt/my tools/solaria' slash {{args}}}"),
            "{prompt}"
        );
        assert!(prompt.contains(COMMAND_MARKER));
        assert!(text.starts_with(&format!("# {COMMAND_MARKER}")));
    }
}
