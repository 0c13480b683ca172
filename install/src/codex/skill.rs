//! The `solaria-memory` skill: Codex's way to what `/memory` is in Claude Code and
//! OpenCode. Codex lists the skills in `skills/<name>/SKILL.md` to its model, and
//! a person calls one by name (`$solaria-memory search flaky upload`); the skill
//! has the model run `solaria slash` and relay its answer.

use crate::quote;

/// The skill's directory under `skills/`.
pub use solaria_hook::protocol::CODEX_SKILL_NAME as SKILL_DIR;

/// Text that marks the skill file as written by SOLARIA.
pub const SKILL_MARKER: &str = "solaria-managed: codex skill";

/// The content of `SKILL.md` for `exe`.
pub fn skill_file(exe: &str) -> String {
    let program = quote::shell(exe);
    format!(
        "---\n\
         name: {SKILL_DIR}\n\
         description: SOLARIA Memory - the status of the memory, a sync with the central service, or a search of past coding sessions. Use it when the person calls ${SKILL_DIR}.\n\
         ---\n\
         \n\
         <!-- {SKILL_MARKER}. Written by \"solaria install codex\" and removed by \
         \"solaria uninstall codex\"; a reinstall overwrites edits. Delete this comment \
         to keep the file as your own. -->\n\
         \n\
         When the person calls this skill, run exactly one command, with what they typed \
         after the skill's name inside the double quotes (\"status\" when they typed \
         nothing):\n\
         \n\
         {program} slash \"<what they typed>\"\n\
         \n\
         {}\n\
         \n\
         {}\n",
        crate::RELAY,
        crate::memory_usage(&format!("${SKILL_DIR}"))
    )
}
