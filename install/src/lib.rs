//! The installers: what `solaria install <agent>` writes into an agent's own
//! configuration and `solaria uninstall <agent>` removes exactly. One module per agent
//! (`claude_code`, `opencode`, `codex`, `gemini`) on one core (`managed`: the error
//! type, the files SOLARIA owns, the executable-path check; `jsonc` and `quote` for the
//! files and command lines they write). None of them captures anything, and capture
//! (the edge's `capture` module) names none of them: the names both sides share (hook
//! events, the MCP server's name, the command marker) are in `solaria_hook::protocol`.
//! The daemon's user service is the edge's `service` module.

pub mod claude_code;
pub mod codex;
pub mod gemini;
pub mod jsonc;
pub mod managed;
pub mod opencode;
pub mod quote;

pub use managed::{InstallError, Presence, missing_programs};

/// What both agents' `/memory` command files say after their front matter: the
/// agent's `marker`, which makes the file ours, the `solaria slash` call (`program` already
/// quoted for the shell; the typed arguments go inside double quotes, so an
/// apostrophe in a query works and a lone `"` still breaks the line), and how the
/// model is to relay its output.
pub(crate) fn memory_command_body(marker: &str, agent: &str, program: &str) -> String {
    memory_command_text(
        &format!(
            "{marker}. Written by \"solaria install {agent}\" and removed by \
             \"solaria uninstall {agent}\"; a reinstall overwrites edits. Delete this \
             comment to keep the file as your own."
        ),
        program,
    )
}

/// A memory command's body under the HTML comment `comment`, running `program`.
pub(crate) fn memory_command_text(comment: &str, program: &str) -> String {
    format!(
        "<!-- {comment} -->\n\
         \n\
         SOLARIA Memory answered \"/memory $ARGUMENTS\" with:\n\
         \n\
         !`{program} slash \"$ARGUMENTS\"`\n\
         \n\
         {RELAY}\n\
         \n\
         {}\n",
        memory_usage("/memory")
    )
}

/// How every agent's memory command has the model relay `solaria slash`'s output.
pub(crate) const RELAY: &str = "Show that output to the user as it is, keeping every id, \
    time and title so that results can be cited and opened later; use a code block if it \
    is a table. Do not run any other command for this request. If it reports an error or \
    a usage message, relay it in one or two sentences.";

/// The usage of the memory command an agent calls `name` (`/memory`, `/solaria`,
/// `$solaria-memory`).
pub(crate) fn memory_usage(name: &str) -> String {
    format!(
        "Usage: \"{name} status\" shows the local store and sync state, \"{name} sync\" \
         pushes and pulls with the central service now, \"{name} search <query>\" \
         searches past sessions (the SOLARIA MCP tools can then show the timeline around \
         a result or full records by id)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const AGENTS: [&str; 4] = ["claude-code", "opencode", "codex", "gemini"];

    /// Installs into every agent under `home` with `exe`; uninstalls when it worked.
    fn every(home: &Path, exe: &str) -> [Result<(), InstallError>; 4] {
        let claude = claude_code::Target::for_scope(claude_code::Scope::User, home, home);
        let open = opencode::Target::for_scope(opencode::Scope::User, home, None, home);
        let codex = codex::Target::for_user(home, None);
        let gemini = gemini::Target::for_scope(gemini::Scope::User, home, home);
        [
            claude_code::install(&claude, Path::new(exe)).and_then(|_| {
                claude_code::uninstall(&claude)?;
                Ok(())
            }),
            opencode::install(&open, Path::new(exe)).and_then(|_| {
                opencode::uninstall(&open)?;
                Ok(())
            }),
            codex::install(&codex, Path::new(exe)).and_then(|_| {
                codex::uninstall(&codex)?;
                Ok(())
            }),
            gemini::install(&gemini, Path::new(exe)).and_then(|_| {
                gemini::uninstall(&gemini)?;
                Ok(())
            }),
        ]
    }

    #[test]
    fn every_agent_takes_and_refuses_the_same_executable_paths() {
        let home = tempfile::tempdir().expect("tempdir");
        for exe in ["/opt/my \"tools\"/solaria", "/Users/Jo O'Doe/bin/solaria"] {
            for (agent, result) in AGENTS.iter().zip(every(home.path(), exe)) {
                assert!(result.is_ok(), "{agent} refused {exe}: {result:?}");
            }
        }
        for exe in [
            "relative/solaria",
            "/opt/new\nline/solaria",
            "/opt/`x`/solaria",
        ] {
            for (agent, result) in AGENTS.iter().zip(every(home.path(), exe)) {
                assert!(
                    matches!(result, Err(InstallError::UnusablePath { .. })),
                    "{agent} took {exe:?}: {result:?}"
                );
            }
        }
        // Claude Code's settings files stay, emptied back to `{}`.
        let left: Vec<_> = walk(home.path())
            .into_iter()
            .filter(|p| std::fs::read_to_string(p).map_or(true, |t| t.trim() != "{}"))
            .collect();
        assert!(left.is_empty(), "uninstall left {left:?}");
    }

    #[test]
    fn every_agent_refuses_a_path_with_a_control_character_before_any_write() {
        // A project directory whose name ends the marker comment of a TOML file
        // and writes a table of its own (an MCP server Codex would start).
        let injected =
            "proj\nmcp_servers.pwn.command = \"sh\"\nmcp_servers.pwn.args = [\"-c\", \"id\"]\n#";
        let exe = Path::new("/opt/solaria/bin/solaria");
        for bad in [injected, "tab\there", "bell\u{7}"] {
            let home = tempfile::tempdir().expect("tempdir");
            let project = home.path().join(bad);
            std::fs::create_dir_all(&project).expect("mkdir");
            let data = Some(home.path().join("data"));
            let results = [
                claude_code::install(
                    &claude_code::Target {
                        data_dir: data.clone(),
                        ..claude_code::Target::for_scope(
                            claude_code::Scope::Project,
                            home.path(),
                            &project,
                        )
                    },
                    exe,
                )
                .map(|_| ()),
                opencode::install(
                    &opencode::Target {
                        data_dir: data.clone(),
                        ..opencode::Target::for_scope(
                            opencode::Scope::Project,
                            home.path(),
                            None,
                            &project,
                        )
                    },
                    exe,
                )
                .map(|_| ()),
                codex::install(
                    &codex::Target {
                        data_dir: data.clone(),
                        ..codex::Target::for_project(home.path(), None, &project)
                    },
                    exe,
                )
                .map(|_| ()),
                gemini::install(
                    &gemini::Target {
                        data_dir: data.clone(),
                        ..gemini::Target::for_scope(gemini::Scope::Project, home.path(), &project)
                    },
                    exe,
                )
                .map(|_| ()),
            ];
            for (agent, result) in AGENTS.iter().zip(results) {
                let refused = result.expect_err(agent);
                assert!(
                    refused.to_string().contains("control character"),
                    "{agent}: {refused}"
                );
            }
            assert_eq!(
                walk(home.path()),
                Vec::<std::path::PathBuf>::new(),
                "{bad:?}"
            );
        }
        // A data directory (written into every hook command) likewise.
        let home = tempfile::tempdir().expect("tempdir");
        let codex = codex::Target {
            data_dir: Some(home.path().join("data\nx")),
            ..codex::Target::for_user(home.path(), None)
        };
        let refused = codex::install(&codex, exe).expect_err("a data dir with a newline");
        assert!(
            refused.to_string().contains("control character"),
            "{refused}"
        );
        assert!(walk(home.path()).is_empty());
    }

    /// The files under `dir`, recursively.
    fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|e| {
                let path = e.path();
                if path.is_dir() {
                    walk(&path)
                } else {
                    vec![path]
                }
            })
            .collect()
    }
}
