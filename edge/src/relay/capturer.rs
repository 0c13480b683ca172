//! The daemon's one capture thread: writes the relayed events into the store kept
//! open for the daemon's life, in the order they came — an answered event as soon
//! as it arrives, after what the spool holds; spooled ones once their notes pause
//! (`settle`). What the store does not take stays in the spool (`Kept`) and is
//! tried again later, never in a loop against a store that keeps failing.

use crate::app::App;
use crate::capture::{self, Captured, StoreSlot};
use crate::config;
use solaria_hook::protocol::Event;
use solaria_hook::spool::{Spool, Spooled};
use solaria_shared::UnixMillis;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// What the capture thread is given, in the order events arrived.
pub(super) enum Job {
    /// Events were spooled (by the daemon or by hooks): capture what the spool
    /// holds, oldest first, each file removed once its event is in the store.
    Scan,
    /// An event whose hook waits for what it prints.
    Answer {
        event: Event,
        payload: Vec<u8>,
        at: UnixMillis,
        reply: Sender<String>,
        /// Its file in the spool, held until the event is in the store (`None`
        /// without a spool).
        held: Option<PathBuf>,
    },
}

/// The one thread that writes relayed events, in the order they came, into the
/// daemon's store. Before an event that is answered, it captures what the spool
/// holds, which came before it.
pub(super) fn start(app: &App, spool: Option<Arc<Spool>>, queue: Receiver<Job>) {
    let app = app.clone();
    std::thread::spawn(move || {
        let mut slot = StoreSlot::in_daemon(&app);
        let mut kept = Kept::default();
        loop {
            let job = match kept.patience() {
                None => queue.recv().ok(),
                Some(wait) => match queue.recv_timeout(wait) {
                    Ok(job) => Some(job),
                    // No event came to retry the kept ones after: retry them anyway.
                    Err(RecvTimeoutError::Timeout) => {
                        kept.retry_all();
                        Some(Job::Scan)
                    }
                    Err(RecvTimeoutError::Disconnected) => None,
                },
            };
            // The daemon's sockets are gone: nothing more will come.
            let Some(job) = job else { return };
            let job = match job {
                Job::Scan => settle(&queue).unwrap_or(Job::Scan),
                answer => answer,
            };
            if let Some(spool) = &spool {
                drain(&app, &mut slot, spool, &mut kept);
            }
            if let Job::Answer {
                event,
                payload,
                at,
                reply,
                held,
            } = job
            {
                // The client has its answer as soon as it is known; the event's own
                // writes follow (the first answer sent is the one read).
                let early = reply.clone();
                slot.answer_early(move |text| {
                    let _ = early.send(text.unwrap_or_default());
                });
                let captured = capture_event(&app, &mut slot, &event, &payload, at);
                slot.forget_early();
                if captured.store_failed {
                    let answered = Spooled {
                        event,
                        at_ms: at.0,
                        payload,
                    };
                    keep_answered(&app, spool.as_deref(), &mut kept, held, &answered);
                } else {
                    // In the store, or refused as a hook process would refuse it.
                    kept.stored();
                    if let Some(file) = &held {
                        Spool::done(file);
                    }
                }
                // A client that gave up waiting is not our failure.
                let _ = reply.send(captured.answer);
            }
        }
    });
}

/// How long spooled events wait after the last note before they are written. The
/// hook that left the note exits a moment later and its agent goes on: written at
/// once, the capture took the CPU from them (each such hook 0.5–0.9 ms slower
/// inside Claude Code on two cores, docs/BENCHMARKS.md, "Hook cost inside Claude
/// Code"); a little later the agent is waiting on its model. The events are safe in
/// the spool meanwhile.
const SETTLE: Duration = Duration::from_millis(25);

/// However often notes come, spooled events wait no longer than this.
const SETTLE_AT_MOST: Duration = Duration::from_millis(250);

/// After a note, waits until no note came for [`SETTLE`], or [`SETTLE_AT_MOST`] in
/// all. An event whose hook waits for its answer ends the wait and is returned: it is
/// captured at once, after the spool it follows.
fn settle(queue: &Receiver<Job>) -> Option<Job> {
    let until = Instant::now() + SETTLE_AT_MOST;
    loop {
        let wait = SETTLE.min(until.saturating_duration_since(Instant::now()));
        if wait.is_zero() {
            return None;
        }
        match queue.recv_timeout(wait) {
            Ok(Job::Scan) => continue,
            Ok(answer) => return Some(answer),
            // Quiet for long enough, or the daemon is going: capture now.
            Err(_) => return None,
        }
    }
}

/// Spooled events the store could not take (locked past its wait, a disk error),
/// left in the spool: each is tried again once the store has taken another event
/// since, or when no event came for [`Kept::retry_in`], and at the daemon's next
/// start; never in a loop against a store that keeps failing.
struct Kept {
    /// Each kept file, with how many events had been captured when it failed.
    files: HashMap<PathBuf, u64>,
    /// Events captured so far.
    captured: u64,
    /// How long the kept files wait for an event before they are tried anyway:
    /// doubled after each such try, back to the first once an event is captured.
    retry_in: Duration,
}

/// The first wait before kept files are tried again with no event coming.
const RETRY_KEPT_FIRST: Duration = Duration::from_secs(10);
/// The longest: a store that keeps failing is tried (and logged) a few times an hour.
const RETRY_KEPT_AT_MOST: Duration = Duration::from_secs(600);

impl Default for Kept {
    fn default() -> Kept {
        Kept {
            files: HashMap::new(),
            captured: 0,
            retry_in: RETRY_KEPT_FIRST,
        }
    }
}

impl Kept {
    /// How long the capture thread waits for a job before it tries the kept files:
    /// `None` (for ever) when none is kept.
    fn patience(&self) -> Option<Duration> {
        (!self.files.is_empty()).then_some(self.retry_in)
    }

    /// Makes every kept file due, and the next such wait longer.
    fn retry_all(&mut self) {
        self.files.clear();
        self.retry_in = (self.retry_in * 2).min(RETRY_KEPT_AT_MOST);
    }

    /// An event is in the store (spooled or answered): the store works again.
    fn stored(&mut self) {
        self.captured += 1;
        self.retry_in = RETRY_KEPT_FIRST;
    }

    /// Whether `file` failed and the store has taken nothing since.
    fn waits(&self, file: &Path) -> bool {
        self.files.get(file) == Some(&self.captured)
    }

    /// Whether a kept file is due another try.
    fn any_due(&self) -> bool {
        self.files.values().any(|&at| at < self.captured)
    }
}

/// Captures the spooled events, oldest first; then the kept ones that are due,
/// once more.
fn drain(app: &App, slot: &mut StoreSlot, spool: &Spool, kept: &mut Kept) {
    loop {
        let files = match spool.pending() {
            Ok(files) => files,
            Err(e) => {
                capture::log_line(&app.paths, "relay", &format!("cannot list the spool: {e}"));
                return;
            }
        };
        // A kept file someone removed is no longer waited for.
        kept.files
            .retain(|file, _| files.binary_search(file).is_ok());
        for file in files {
            if !kept.waits(&file) {
                capture_spooled(app, slot, &file, kept);
            }
        }
        if !kept.any_due() {
            return;
        }
    }
}

/// An answered event the store did not take (locked past its wait, a disk error):
/// made pending in the spool (its held file, or a new one) and kept there, to be
/// written as a spooled event is, rather than lost. Without a spool it is lost,
/// and the log says so.
fn keep_answered(
    app: &App,
    spool: Option<&Spool>,
    kept: &mut Kept,
    held: Option<PathBuf>,
    answered: &Spooled,
) {
    let log = |message: &str| capture::log_line(&app.paths, "relay", message);
    let pending = match (held, spool) {
        (Some(file), _) => Spool::release(&file).map_err(|e| {
            format!(
                "{}: the store did not take it and it cannot be made pending ({e}); \
                 the daemon's next start captures it",
                file.display()
            )
        }),
        (None, Some(spool)) => spool
            .put(&answered.event, answered.at_ms, &answered.payload)
            .map_err(|e| {
                format!(
                    "the store did not take an answered event and it cannot be spooled ({e}); lost"
                )
            }),
        (None, None) => Err(
            "the store did not take an answered event and there is no spool to keep it in; lost"
                .to_owned(),
        ),
    };
    match pending {
        Ok(file) => {
            log(&format!(
                "{}: the store did not take it; it stays in the spool",
                file.display()
            ));
            kept.files.insert(file, kept.captured);
        }
        Err(message) => log(&message),
    }
}

/// Captures one spool file ([`capture::capture_spool_file`]); one the store did
/// not take, or that cannot be read now, is kept (tried again later, and at the
/// next daemon start).
fn capture_spooled(app: &App, slot: &mut StoreSlot, file: &Path, kept: &mut Kept) {
    match capture::capture_spool_file(file, &current_config(app), &app.paths, slot) {
        capture::SpoolFile::Captured => {
            kept.stored();
            kept.files.remove(file);
        }
        capture::SpoolFile::Dropped => {}
        capture::SpoolFile::Kept(why) => {
            capture::log_line(
                &app.paths,
                "relay",
                &format!("{}: {why}; it stays in the spool", file.display()),
            );
            kept.files.insert(file.to_owned(), kept.captured);
        }
    }
}

/// Captures `payload` as `event` would in a `solaria hook` process run `at`.
/// Failures are logged as the hook's, under its name.
pub(super) fn capture_event(
    app: &App,
    slot: &mut StoreSlot,
    event: &Event,
    payload: &[u8],
    at: UnixMillis,
) -> Captured {
    let config = current_config(app);
    let cx = &mut capture::Capturing {
        at,
        config: &config,
        paths: &app.paths,
        slot,
    };
    capture::capture_logged(event, payload, cx)
}

/// The config, read again for each event: a skipped project or a changed bound
/// holds at once, as it does for hook processes; a config that does not parse
/// keeps the daemon's.
fn current_config(app: &App) -> config::Config {
    config::read_config(&app.paths.config_file).unwrap_or_else(|_| app.config.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::channel;

    fn answer() -> (Job, Receiver<String>) {
        let (reply, answered) = channel();
        let job = Job::Answer {
            event: Event::ClaudeCode("user-prompt-submit".into()),
            payload: b"{}".to_vec(),
            at: UnixMillis(0),
            reply,
            held: None,
        };
        (job, answered)
    }

    #[test]
    fn a_burst_of_notes_is_captured_once() {
        let (jobs, queue) = channel();
        for _ in 0..5 {
            jobs.send(Job::Scan).expect("queued");
        }
        assert!(settle(&queue).is_none(), "nothing waits for an answer");
        assert!(queue.try_recv().is_err(), "every note taken by one scan");
    }

    #[test]
    fn an_event_that_waits_for_its_answer_ends_the_wait() {
        let (jobs, queue) = channel();
        jobs.send(Job::Scan).expect("queued");
        let (job, _answered) = answer();
        jobs.send(job).expect("queued");
        jobs.send(Job::Scan).expect("queued");
        assert!(matches!(settle(&queue), Some(Job::Answer { .. })));
        assert!(
            matches!(queue.try_recv(), Ok(Job::Scan)),
            "the note after the answer stays queued"
        );
    }

    #[test]
    fn notes_that_never_stop_do_not_hold_the_capture_back() {
        let (jobs, queue) = channel();
        let streaming = Arc::new(AtomicBool::new(true));
        let sender = {
            let streaming = streaming.clone();
            std::thread::spawn(move || {
                // Far longer than SETTLE_AT_MOST, a note far more often than SETTLE.
                let end = Instant::now() + SETTLE_AT_MOST * 20;
                while Instant::now() < end {
                    if jobs.send(Job::Scan).is_err() {
                        // The test is over.
                        return;
                    }
                    std::thread::sleep(SETTLE / 5);
                }
                streaming.store(false, Ordering::SeqCst);
            })
        };
        assert!(settle(&queue).is_none());
        assert!(
            streaming.load(Ordering::SeqCst),
            "the spool is captured while notes still come"
        );
        drop(queue);
        let _ = sender.join();
    }
}
