//! What SOLARIA's hook entries run, as the installers write them into an agent's
//! configuration: the small client beside `solaria` when it is there, else
//! `solaria hook` itself.

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
