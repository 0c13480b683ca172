//! What `solaria doctor` asks of the memory itself: whether the daemon answers,
//! when each agent last captured something on this machine, and which search it
//! has. (The installs are the installers' to check: `claude_code::state`,
//! `opencode::state`, `codex::state`, `gemini::state`.)

use super::{OpResult, daemon_client};
use crate::app::App;
use crate::semantic;
use crate::store::views;
use serde::Serialize;
use solaria_shared::UnixMillis;

/// The memory's side of a health check.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryHealth {
    /// The daemon's address when a daemon of this version answers for this data dir.
    pub daemon: Option<String>,
    /// The hooks' socket (the edge's `relay`) when a daemon takes events on it.
    pub hooks_socket: Option<String>,
    /// Hook events waiting in the spool (`solaria_hook::spool`): acknowledged by a
    /// daemon stopped before it captured them, or left by hook processes that found
    /// the store held by another process.
    pub spooled: usize,
    /// Where they wait.
    pub spool_dir: Option<String>,
    /// Per agent name (`claude-code`, `opencode`, …): its last capture here.
    pub last_capture: Vec<(String, UnixMillis)>,
    /// Which search this machine has: by words only, or by meaning too.
    pub search: semantic::Status,
}

/// Checks the daemon and reads the last capture per agent.
pub fn memory_health(app: &App) -> OpResult<MemoryHealth> {
    let store = app.store()?;
    let last_capture = views::last_capture_by_agent(store.conn(), store.machine_id())?;
    let daemon = daemon_client::running(&app.paths).map(|a| a.to_string());
    let socket = solaria_hook::protocol::socket_path(&app.paths.data_dir);
    let hooks_socket = std::os::unix::net::UnixStream::connect(&socket)
        .is_ok()
        .then(|| socket.display().to_string());
    Ok(MemoryHealth {
        daemon,
        hooks_socket,
        spooled: solaria_hook::spool::Spool::waiting(
            &app.paths.data_dir,
            app.runtime_dir.as_deref(),
        ),
        spool_dir: solaria_hook::spool::location(&app.paths.data_dir, app.runtime_dir.as_deref())
            .map(|d| d.display().to_string()),
        last_capture,
        search: semantic::status(&app.config, &app.paths, &store)?,
    })
}
