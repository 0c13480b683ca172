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
