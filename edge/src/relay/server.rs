//! The daemon's end of the hooks' socket: a few threads take connections (a client
//! that stalls holds up one of them, for a bounded time) and hand the events to the
//! one capture thread (`capturer.rs`), which writes them, in the order they came,
//! into one store kept open for the daemon's life, whose WAL a checkpointer thread
//! copies into the database apart from the hooks.
//!
//! An event whose hook prints nothing (a tool call, a stop, a session's end) is
//! spooled (`spool.rs`) by the hook itself, which only leaves a note, or by the
//! daemon, which then answers at once; the capture follows once the notes pause
//! (`settle`), so that it does not take the CPU from the agent. One whose hook prints
//! (SessionStart's context, a prompt's recall) is captured after every event that
//! came before it, and answered as soon as its answer is read, before its own
//! writes; when the capture thread is held up (a write another process's lock
//! blocks), the hook is answered within a second from a read of the store instead.
//! An answered event is held in the spool until it is in the store: one the store
//! refuses, or one a killed daemon held, is then captured like the rest.

use super::capturer::{self, Job};
use crate::app::App;
use crate::capture::{self, StoreSlot};
use solaria_hook::protocol::{
    Event, HookEvent, MAX_HEADER_BYTES, MAX_PAYLOAD_BYTES, REFUSED, SPOOLED_NOTE, is_relay_line,
    socket_path,
};
use solaria_hook::spool::Spool;
use solaria_shared::UnixMillis;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::time::Duration;

/// A client sends its whole request at once (it read the payload before
/// connecting): one that has not within this long is dropped.
const REQUEST_WAIT: Duration = Duration::from_secs(2);

/// Why the socket is not served.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// Another daemon already answers on it.
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
/// died is replaced; one a running daemon answers on is left to it. Events a
/// daemon spooled and did not capture before it died are captured first.
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
    solaria_hook::files::private_dir(&app.paths.data_dir).map_err(listen_error)?;
    // Without a spool every event is answered once captured, as it was before.
    let spool = match Spool::open(&app.paths.data_dir, app.runtime_dir.as_deref()) {
        Ok(spool) => Some(Arc::new(spool)),
        Err(e) => {
            capture::log_line(
                &app.paths,
                "relay",
                &format!("cannot open the spool ({e}); every hook waits for its capture"),
            );
            None
        }
    };
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
    let (jobs, queue) = channel();
    // What a daemon killed after answering left goes first.
    let _ = jobs.send(Job::Scan);
    capturer::start(app, spool.clone(), queue);
    start_checkpointer(app);
    for _ in 0..SERVERS {
        let listener = listener.try_clone().map_err(listen_error)?;
        let (app, spool, jobs) = (app.clone(), spool.clone(), jobs.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                serve(&app, spool.as_deref(), &jobs, stream);
            }
        });
    }
    Ok(path)
}

/// Threads that take connections, each serving one at a time: kept for the
/// daemon's life, since starting a thread per hook costs it a little; a client that
/// stalls holds one of them for at most [`REQUEST_WAIT`].
const SERVERS: usize = 4;

/// How often the checkpointer looks at the WAL.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(2);

/// Copies the relayed writes from the WAL into the database on a thread and a
/// connection of its own, every [`CHECKPOINT_EVERY`] when something was written,
/// and starts the next WAL itself (`Store::checkpoint_ahead`): the hooks'
/// connection defers its checkpoints, so no hook waits for one (a checkpoint of a
/// large store syncs the file: 20–200 ms) nor for the sync of a new WAL's header.
/// A failure is logged once and tried again.
fn start_checkpointer(app: &App) {
    let app = app.clone();
    std::thread::spawn(move || {
        let mut store = None;
        let mut seen = None;
        let mut failing = false;
        loop {
            std::thread::sleep(CHECKPOINT_EVERY);
            let outcome = match &store {
                Some(open) => crate::store::Store::checkpoint_ahead(open, &mut seen),
                None => app.store().and_then(|open| {
                    let copied = open.checkpoint_ahead(&mut seen);
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

/// One connection: the request read, then either spooled and answered at once, or
/// captured and answered with what the hook prints.
fn serve(app: &App, spool: Option<&Spool>, jobs: &Sender<Job>, mut stream: UnixStream) {
    let (event, payload) = match read_request(&mut stream) {
        Ok(Request::Event(event, payload)) => (event, payload),
        Ok(Request::Spooled) => {
            let _ = jobs.send(Job::Scan);
            return;
        }
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
    let at = UnixMillis::now();
    if let Some(spool) = spool.filter(|_| !event.prints()) {
        match spool.put(&event, at.0, &payload) {
            Ok(_) => {
                // The event is spooled: the hook may go, the capture follows.
                drop(stream);
                let _ = jobs.send(Job::Scan);
                return;
            }
            Err(e) => capture::log_line(
                &app.paths,
                "relay",
                &format!("cannot spool an event ({e}); captured while the hook waits"),
            ),
        }
    }
    // Kept in the spool until it is in the store: a daemon killed before that
    // captures it at its next start. (An event that prints nothing is here only
    // because the spool refused it a moment ago.)
    let held = spool.filter(|_| event.prints()).and_then(|spool| {
        match spool.hold(&event, at.0, &payload) {
            Ok(file) => Some(file),
            Err(e) => {
                capture::log_line(
                    &app.paths,
                    "relay",
                    &format!(
                        "cannot hold an answered event in the spool ({e}); captured from memory"
                    ),
                );
                None
            }
        }
    });
    let (reply, answer) = channel();
    let job = Job::Answer {
        event: event.clone(),
        payload: payload.clone(),
        at,
        reply,
        held,
    };
    let answer = match jobs.send(job) {
        Ok(()) => match answer.recv_timeout(CAPTURE_ANSWER_WAIT) {
            Ok(text) => text,
            Err(RecvTimeoutError::Timeout) => answer_by_reading(app, &event, &payload, at),
            // The capture thread is gone (it cannot be, short of a bug): say
            // nothing, as a failed hook does; the client logs that no answer came.
            Err(RecvTimeoutError::Disconnected) => return,
        },
        Err(_) => return,
    };
    // A client that gave up waiting is not our failure.
    let _ = stream.write_all(answer.as_bytes());
}

/// How long a hook that prints waits for the capture thread's answer before it is
/// answered from a read of the store instead. The capture thread answers in
/// milliseconds, after the events that came before; it can be held up for seconds
/// behind a write that another process's lock blocks (a long sync or prune), and
/// the client gives up at 5 s, which would leave the agent stalled and told nothing.
const CAPTURE_ANSWER_WAIT: Duration = Duration::from_secs(1);

/// What `event`'s hook prints, read from the store on a connection of its own
/// that writes nothing; the event is still captured by the capture thread, which
/// holds it. Events spooled before it and not yet written are not seen.
fn answer_by_reading(app: &App, event: &Event, payload: &[u8], at: UnixMillis) -> String {
    capture::log_line(
        &app.paths,
        "relay",
        "the capture is held up (the store is busy); a hook is answered from a read of the store",
    );
    let mut slot = StoreSlot::answering_in_daemon(app);
    capturer::capture_event(app, &mut slot, event, payload, at).answer
}

/// What a connection asks.
enum Request {
    /// Capture this event (and answer what its hook prints).
    Event(Event, Vec<u8>),
    /// A hook wrote its event into the spool itself.
    Spooled,
}

/// Why a request was not taken.
enum Unread {
    /// Not a request this daemon takes: answered [`REFUSED`], so that the client
    /// runs the event itself.
    Refused(String),
    /// Cut short or too large: nothing to hand back.
    Dropped(String),
}

/// A header line the daemon does not take, as the log shows it: quoted when it is
/// one of the protocol's (another version's), else only its length, since the first
/// line of something else may be a payload sent without a header, secrets and all.
fn unread_header(header: &[u8]) -> String {
    if is_relay_line(header) {
        format!(
            "{:?}",
            String::from_utf8_lossy(&header[..header.len().min(60)])
        )
    } else {
        format!(
            "a first line of {} byte(s) that is no relay header (not logged)",
            header.len()
        )
    }
}

/// The header and the payload, or why they cannot be read.
fn read_request(stream: &mut UnixStream) -> Result<Request, Unread> {
    let cut = |e: std::io::Error| Unread::Dropped(format!("cannot read a request: {e}"));
    stream.set_read_timeout(Some(REQUEST_WAIT)).map_err(cut)?;
    let mut reader = BufReader::new(stream);
    let mut header = Vec::new();
    (&mut reader)
        .take(MAX_HEADER_BYTES as u64)
        .read_until(b'\n', &mut header)
        .map_err(cut)?;
    if header == SPOOLED_NOTE.as_bytes() {
        return Ok(Request::Spooled);
    }
    let event = std::str::from_utf8(&header)
        .ok()
        .and_then(Event::parse_header)
        .ok_or_else(|| {
            Unread::Refused(format!("not a hook request: {}", unread_header(&header)))
        })?;
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
    Ok(Request::Event(event, payload))
}
