//! The hook's side of SOLARIA Memory: what a hook process (`solaria-hook`, the small
//! command every agent runs at each event) shares with the daemon that captures its
//! events, and nothing else. Its `Cargo.toml` is the proof that a hook links no
//! model, HTTP or async runtime: the standard library, `libc` (which process answers
//! on the socket), a digest (where the spool lives) and a clock formatter (the hook
//! log).
//!
//! - `protocol`: the socket exchange and the names both ends agree on (the agents'
//!   events, which of them print, the MCP server's name).
//! - `spool`: events waiting in memory between a hook's answer and the store.
//! - `dirs`: the environment a hook reads and where the data dir comes from.
//! - `files`: files and directories only their user may read, written whole.
//! - `log`: the hook log.
//! - `program`: what the installers write into an agent's hook entries.
//! - `claude_settings`: whether Claude Code's settings run SOLARIA's hooks (the
//!   plugin's then stand aside).
//! - `client`: the `solaria-hook` command itself.

pub mod claude_settings;
pub mod client;
pub mod dirs;
pub mod files;
pub mod log;
pub mod program;
pub mod protocol;
pub mod spool;
