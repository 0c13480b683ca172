//! The daemon's end of the hooks' socket: one thread accepts, each connection is
//! read on a thread of its own (a client that stalls holds up no one), and the
//! events are captured one at a time into one store kept open for the daemon's life,
//! whose WAL a checkpointer thread copies into the database apart from the hooks.

use super::{Event, MAX_HEADER_BYTES, MAX_PAYLOAD_BYTES, REFUSED, socket_path};
use crate::app::App;
use crate::capture::{self, StoreSlot, payload::HookEvent};
use crate::config;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A client sends its whole request at once (it read the payload before
/// connecting): one that has not within this long is dropped.
const REQUEST_WAIT: Duration = Duration::from_secs(2);

/// Why the socket is not served.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// Another daemon of this data dir answers on it.
    #[error("another daemon already takes the hooks of this data dir at {0}")]
    Taken(PathBuf),
    #[error("cannot listen at {path}: {source}")]
    Listen {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Listens on `<data dir>/hooks.sock` (0600) and captures what hooks send, on
/// threads of its own, for the process's life. A socket left by a daemon that
/// died is replaced; one a running daemon answers on is left to it.
pub fn start(app: &App) -> Result<PathBuf, RelayError> {
    let path = socket_path(&app.paths.data_dir);
    if UnixStream::connect(&path).is_ok() {
        return Err(RelayError::Taken(path));
    }
    let listen_error = |source| RelayError::Listen {
        path: path.clone(),
        source,
    };
    // The data dir is private (0700); the socket is made so too, at once.
    crate::fsutil::private_dir(&app.paths.data_dir).map_err(listen_error)?;
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(listen_error(e)),
    }
    let listener = UnixListener::bind(&path).map_err(listen_error)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(listen_error)?;
    }
    let slot = Arc::new(Mutex::new(StoreSlot::in_daemon(app)));
    start_checkpointer(app);
    let app = app.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (app, slot) = (app.clone(), Arc::clone(&slot));
            std::thread::spawn(move || serve(&app, &slot, stream));
        }
    });
    Ok(path)
}

/// How often the checkpointer looks at the WAL.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(2);

/// Copies the relayed writes from the WAL into the database on a thread and a
/// connection of its own, every [`CHECKPOINT_EVERY`]: the hooks' connection defers
/// its checkpoints, so no hook waits for one (a checkpoint of a large store syncs
/// the file: 20–200 ms). A failure is logged once and tried again.
fn start_checkpointer(app: &App) {
    let app = app.clone();
    std::thread::spawn(move || {
        let mut store = None;
        let mut failing = false;
        loop {
            std::thread::sleep(CHECKPOINT_EVERY);
            let outcome = match &store {
                Some(open) => crate::store::Store::checkpoint(open),
                None => app.store().and_then(|open| {
                    let copied = open.checkpoint();
                    store = Some(open);
                    copied
                }),
            };
            match outcome {
                Ok(_) => failing = false,
                Err(e) => {
                    // Opened afresh next time rather than trusted.
                    store = None;
                    if !failing {
                        failing = true;
                        capture::log_line(
                            &app.paths,
                            "relay",
                            &format!("checkpoint failed: {e}; tried again"),
                        );
                    }
                }
            }
        }
    });
}

/// One connection: the request read, the event captured, the answer written.
fn serve(app: &App, slot: &Mutex<StoreSlot>, mut stream: UnixStream) {
    let (event, payload) = match read_request(&mut stream) {
        Ok(request) => request,
        Err(Unread::Refused(message)) => {
            capture::log_line(
                &app.paths,
                "relay",
                &format!("{message}; refused (a client of another version runs it itself)"),
            );
            let _ = stream.write_all(REFUSED);
            return;
        }
        Err(Unread::Dropped(message)) => {
            capture::log_line(&app.paths, "relay", &format!("{message}; event dropped"));
            return;
        }
    };
    let answer = capture_event(app, slot, &event, &payload);
    // A client that gave up waiting is not our failure.
    let _ = stream.write_all(answer.as_bytes());
}

/// Why a request was not taken.
enum Unread {
    /// Not a request this daemon takes: answered [`REFUSED`], so that the client
    /// runs the event itself.
    Refused(String),
    /// Cut short or too large: nothing to hand back.
    Dropped(String),
}

/// The header and the payload, or why they cannot be read.
fn read_request(stream: &mut UnixStream) -> Result<(Event, Vec<u8>), Unread> {
    let cut = |e: std::io::Error| Unread::Dropped(format!("cannot read a request: {e}"));
    stream.set_read_timeout(Some(REQUEST_WAIT)).map_err(cut)?;
    let mut reader = BufReader::new(stream);
    let mut header = Vec::new();
    (&mut reader)
        .take(MAX_HEADER_BYTES as u64)
        .read_until(b'\n', &mut header)
        .map_err(cut)?;
    let shown = || String::from_utf8_lossy(&header[..header.len().min(60)]).into_owned();
    let event = std::str::from_utf8(&header)
        .ok()
        .and_then(Event::parse_header)
        .ok_or_else(|| Unread::Refused(format!("not a hook request: {:?}", shown())))?;
    if let Event::ClaudeCode(name) = &event
        && HookEvent::from_arg(name).is_none()
    {
        return Err(Unread::Refused(format!(
            "unknown Claude Code hook event {name:?}"
        )));
    }
    let mut payload = Vec::new();
    reader
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut payload)
        .map_err(cut)?;
    if payload.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(Unread::Dropped(format!(
            "payload larger than {MAX_PAYLOAD_BYTES} bytes"
        )));
    }
    Ok((event, payload))
}

/// Captures `payload` as `event` would in a `solaria hook` process; what that
/// process would print. Failures are logged as the hook's, under its name.
fn capture_event(app: &App, slot: &Mutex<StoreSlot>, event: &Event, payload: &[u8]) -> String {
    // Read again for each event: a skipped project or a changed bound holds at once,
    // as it does for hook processes; a config that does not parse keeps the daemon's.
    let config = config::read_config(&app.paths.config_file).unwrap_or_else(|_| app.config.clone());
    let mut slot = match slot.lock() {
        Ok(slot) => slot,
        // A panic while capturing left the slot: its store may be mid-way, reopen it.
        Err(poisoned) => {
            let mut slot = poisoned.into_inner();
            slot.close();
            slot
        }
    };
    let (label, outcome) = match event {
        // `read_request` refused the names it does not know.
        // `read_request` refused the names it does not know.
        Event::ClaudeCode(name) => match HookEvent::from_arg(name) {
            Some(hook) => (
                hook.claude_name().to_owned(),
                catch(|| capture::handle(hook, payload, &config, &app.paths, &mut slot)),
            ),
            None => return String::new(),
        },
        Event::OpenCode(name) => (
            format!("opencode {}", name.escape_debug()),
            catch(|| capture::opencode::handle(name, payload, &config, &app.paths, &mut slot)),
        ),
    };
    match outcome {
        Ok(answer) => answer.unwrap_or_default(),
        Err(message) => {
            // The next event opens the store afresh rather than trust this connection.
            slot.close();
            capture::log_line(&app.paths, &label, &message);
            String::new()
        }
    }
}

/// Runs `f`, a panic turned into a message like any failure.
fn catch(
    f: impl FnOnce() -> Result<Option<String>, capture::HookError>,
) -> Result<Option<String>, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("internal error (panic) while capturing; event dropped".to_owned()),
    }
}
