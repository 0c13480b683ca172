//! The hook log: what a hook could not do is written here, never shown to the agent.
//! A hook process, `solaria-hook` and the daemon's capture all append to it.

use crate::dirs;
use crate::files::private_dir;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Past this size the log is moved aside (`hooks.log.1`) and a new one begun.
const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024;

/// Appends `<UTC time> <label> <message>` to the hook log of `data_dir`, made
/// private (0600, in 0700 directories) before anything is written. Never fails: a
/// log that cannot be written is not worth breaking a hook for.
pub fn line(data_dir: &Path, label: &str, message: &str) {
    let logs = dirs::logs_dir(data_dir);
    // Made private before anything is written; if that fails, the open below says so.
    let _ = private_dir(data_dir).and_then(|()| private_dir(&logs));
    let path = dirs::hook_log(data_dir);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
        let _ = std::fs::rename(&path, path.with_extension("log.1"));
    }
    let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
    else {
        return;
    };
    let when = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
    let _ = writeln!(file, "{when} {label} {message}");
}
