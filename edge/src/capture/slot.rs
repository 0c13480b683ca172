//! The store a hook writes to ([`StoreSlot`]), opened when first needed, and who
//! waits for what the hook prints: a hook process's slot, the daemon's, and the
//! read-only ones that answer while a write is held up elsewhere.

use crate::config::{Config, Paths};
use crate::store::{Store, StoreError};

/// How long a hook process waits for a store another process is writing. Hooks'
/// own writes take milliseconds; a lock held longer is a long `solaria sync`,
/// `prune` or `embed`, and the agent must not wait for it: the event then waits in
/// the spool instead (see `process::run_guarded`), well within the hook's watchdog.
pub(super) const HOOK_STORE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The store a hook writes to, opened when first needed (an event skipped by the
/// config never opens it): a hook process opens one for its one event; the daemon's
/// relay keeps one open for its life, which spares each event the open, and
/// recalls with its own model instead of asking itself over HTTP.
#[derive(Debug)]
pub struct StoreSlot {
    path: std::path::PathBuf,
    machine_name: String,
    clock_skew_ms: i64,
    store: Option<Store>,
    pub(super) daemon: Option<crate::app::App>,
    /// Who waits for what this event's hook prints (the daemon's client): told as
    /// soon as it is known, before the event's own writes.
    early: Option<EarlyAnswer>,
    /// Only answers: the event's writes are left to the capture that follows, and
    /// the connection itself refuses any (`PRAGMA query_only`).
    pub(super) answers_only: bool,
}

/// Hands what a hook prints to whoever waits for it.
struct EarlyAnswer(Box<dyn FnOnce(Option<String>) + Send>);

impl std::fmt::Debug for EarlyAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EarlyAnswer")
    }
}

impl StoreSlot {
    /// The store of `paths`, not opened yet; writes stamped `clock_skew_ms` off.
    pub fn new(paths: &Paths, config: &Config, clock_skew_ms: i64) -> StoreSlot {
        StoreSlot {
            path: paths.store(),
            machine_name: config.machine_name(),
            clock_skew_ms,
            store: None,
            daemon: None,
            early: None,
            answers_only: false,
        }
    }

    /// Has the next event's answer (what its hook prints, `None` for nothing)
    /// given to `answer` as soon as it is known, before that event's writes; the
    /// daemon's relay answers its client so. Neither answer depends on those
    /// writes: a session's context does not list the session starting, and a
    /// prompt's recall leaves out the prompt's own session.
    pub fn answer_early(&mut self, answer: impl FnOnce(Option<String>) + Send + 'static) {
        self.early = Some(EarlyAnswer(Box::new(answer)));
    }

    /// Drops an early answer that was not given.
    pub fn forget_early(&mut self) {
        self.early = None;
    }

    /// Puts `format` between the answer and whoever waits for it (the JSON Claude
    /// Code reads).
    pub(super) fn format_early(&mut self, format: impl FnOnce(String) -> String + Send + 'static) {
        if let Some(EarlyAnswer(answer)) = self.early.take() {
            self.early = Some(EarlyAnswer(Box::new(move |text: Option<String>| {
                answer(text.map(format))
            })));
        }
    }

    /// Gives the early answer, if someone waits for one.
    pub(super) fn answered(&mut self, text: Option<&str>) {
        if let Some(EarlyAnswer(answer)) = self.early.take() {
            answer(text.map(str::to_owned));
        }
    }

    /// The daemon's slot: its store, which leaves checkpoints to the daemon's
    /// checkpointer (`crate::relay::server`), and its model for recall.
    pub fn in_daemon(app: &crate::app::App) -> StoreSlot {
        StoreSlot {
            daemon: Some(app.clone()),
            ..StoreSlot::new(&app.paths, &app.config, app.clock_skew_ms)
        }
    }

    /// The daemon's read path: a slot that answers what a hook prints (a session's
    /// context, a prompt's recall) from reads alone and writes nothing, for when
    /// the capture thread is held up behind a write another process blocks. The
    /// event itself is still captured by that thread, later.
    pub fn answering_in_daemon(app: &crate::app::App) -> StoreSlot {
        StoreSlot {
            answers_only: true,
            ..StoreSlot::in_daemon(app)
        }
    }

    /// A hook process's slot that answers what its hook prints from reads alone
    /// and writes nothing: for when the store is held by another process and the
    /// event waits in the spool (see [`StoreSlot::answering_in_daemon`]).
    pub(super) fn answering(paths: &Paths, config: &Config, clock_skew_ms: i64) -> StoreSlot {
        StoreSlot {
            answers_only: true,
            ..StoreSlot::new(paths, config, clock_skew_ms)
        }
    }

    /// The store, opened on first use.
    pub fn get(&mut self) -> Result<&mut Store, StoreError> {
        match &mut self.store {
            Some(store) => Ok(store),
            empty => {
                let store = Store::open(&self.path, &self.machine_name)?
                    .with_clock_skew(self.clock_skew_ms);
                if self.answers_only {
                    store.conn().pragma_update(None, "query_only", true)?;
                } else if self.daemon.is_some() {
                    // A hook waits on these writes: the daemon checkpoints apart.
                    store.defer_checkpoints()?;
                } else {
                    // A hook process: its agent waits (see `HOOK_STORE_WAIT`).
                    store.conn().busy_timeout(HOOK_STORE_WAIT)?;
                }
                Ok(empty.insert(store))
            }
        }
    }

    /// Closes the store (the next use opens it again): after an error, so that a
    /// connection in a bad state is not kept.
    pub fn close(&mut self) {
        self.store = None;
    }
}
