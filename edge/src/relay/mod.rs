//! Hooks handed to the running daemon over a private Unix socket, so that a hook
//! costs a small process and a socket round trip instead of the `solaria` binary's
//! start and a store open (docs/ARCHITECTURE.md, "Hooks through the daemon").
//!
//! `solaria-hook` (`client.rs`, a binary that links none of the model, HTTP or
//! async code) reads the agent's payload and sends it to `<data dir>/hooks.sock`,
//! where the daemon (`server.rs`) captures it through the same code a `solaria hook`
//! process runs (`crate::capture::handle`) into a store it keeps open, and answers
//! what the hook prints. When no daemon listens, the client hands the payload to
//! `solaria hook` beside it: the event is captured either way.
//!
//! The socket lives in the data dir (0700) and is itself 0600: only the user who
//! owns the memory can connect, which a loopback port could not promise.
//!
//! The exchange, one event a connection: the client writes the line
//! `solaria-relay 1 <agent> <event>\n` and the payload, then closes its writing
//! half; the daemon answers the bytes to print (often none) and closes, or answers
//! [`REFUSED`] to a request it does not take (a client newer than the daemon), which
//! the client then runs in a `solaria hook` process itself.

mod capturer;
pub mod client;
pub mod server;
pub mod spool;

use std::path::{Path, PathBuf};

/// The small hook client's file name, beside `solaria`.
pub const RELAY_CLIENT: &str = "solaria-hook";

/// The socket's file name in the data dir.
pub const SOCKET_FILE: &str = "hooks.sock";

/// The first word of a request's header line, and the protocol's version.
const MAGIC: &str = "solaria-relay 1";

/// The daemon's answer to a request it does not take (another protocol version, an
/// event it does not know): the client then runs the event in a `solaria hook`
/// process of its own version. It starts with a NUL byte, which no hook output does.
const REFUSED: &[u8] = b"\0solaria-relay refused\n";

/// What a hook sends, and closes, after writing its event into the spool itself:
/// the daemon then captures what the spool holds.
const SPOOLED_NOTE: &str = "solaria-relay 1 spooled\n";

/// The longest header line the daemon reads.
const MAX_HEADER_BYTES: usize = 256;

/// The largest payload relayed: what a hook process takes.
use crate::capture::MAX_PAYLOAD_BYTES;

/// Where the daemon of `data_dir` listens for hooks.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SOCKET_FILE)
}

/// Whose event a request carries, and the name the hook gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A Claude Code hook, by its `solaria hook` argument (`post-tool-use`, …).
    ClaudeCode(String),
    /// An OpenCode plugin event, by OpenCode's name (`tool.execute.after`, …).
    OpenCode(String),
}

impl Event {
    /// The header line that opens a request for this event.
    fn header(&self) -> String {
        match self {
            Event::ClaudeCode(name) => format!("{MAGIC} claude-code {name}\n"),
            Event::OpenCode(name) => format!("{MAGIC} opencode {name}\n"),
        }
    }

    /// The event a header line names; `None` for anything else.
    fn parse_header(line: &str) -> Option<Event> {
        let rest = line.strip_suffix('\n')?.strip_prefix(MAGIC)?;
        let mut words = rest.split(' ').skip(1);
        let (agent, name) = (words.next()?, words.next()?);
        if words.next().is_some() || name.is_empty() {
            return None;
        }
        match agent {
            "claude-code" => Some(Event::ClaudeCode(name.to_owned())),
            "opencode" => Some(Event::OpenCode(name.to_owned())),
            _ => None,
        }
    }

    /// Whether the agent reads what this event's hook prints (a context, a
    /// recall): such an event is captured before it is answered; the others are
    /// answered once spooled (`spool.rs`).
    pub fn prints(&self) -> bool {
        match self {
            Event::ClaudeCode(name) => crate::capture::payload::HookEvent::from_arg(name)
                .is_some_and(crate::capture::payload::HookEvent::prints),
            Event::OpenCode(name) => crate::capture::opencode::prints(name),
        }
    }

    /// The `solaria hook …` arguments that capture this event in a process.
    fn hook_args(&self) -> Vec<&str> {
        match self {
            Event::ClaudeCode(name) => vec!["hook", name],
            Event::OpenCode(name) => vec!["hook", "opencode", name],
        }
    }
}

/// What SOLARIA's hook entries run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookProgram {
    /// `<solaria> hook <arg>`: a `solaria` process captures the event.
    Solaria(String),
    /// `<solaria-hook> --data-dir <dir> <arg>`: the small client hands the event to
    /// the daemon of `data_dir` (`crate::relay`), or to `solaria hook` when none runs.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_read_back_as_the_event_they_name() {
        for event in [
            Event::ClaudeCode("post-tool-use".into()),
            Event::OpenCode("tool.execute.after".into()),
        ] {
            assert_eq!(Event::parse_header(&event.header()), Some(event));
        }
    }

    #[test]
    fn anything_but_a_header_is_refused() {
        for line in [
            "",
            "solaria-relay 1 claude-code post-tool-use",
            "solaria-relay 2 claude-code post-tool-use\n",
            "solaria-relay 1 cursor stop\n",
            "solaria-relay 1 claude-code \n",
            "solaria-relay 1 claude-code stop extra\n",
            "GET / HTTP/1.1\n",
        ] {
            assert_eq!(Event::parse_header(line), None, "{line:?}");
        }
    }
}
