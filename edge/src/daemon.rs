//! The background agent behind `solaria serve`: syncs on a schedule (hourly by
//! default, with jitter so a fleet does not hit the server at once), applies the
//! retention policy weekly, and makes the vectors of new and pulled records
//! (semantic search) in batches between those, completes captured commits
//! (author, file statistics: `git show`), works out which decisions and memories
//! speak of code changed since (`git log`), has closed sessions summarized by a
//! model when `[summarizer]` is on (`ops::distill`), while the local HTTP API
//! (`crate::http`, on 127.0.0.1:37777 by default) answers on a thread of its own,
//! and the hooks' socket (`crate::relay`) captures what `solaria-hook` sends.
//! The installer runs it as a user service.

use crate::app::App;
use crate::http;
use crate::semantic;
use crate::store::retention;
use crate::sync::SyncOptions;
use solaria_shared::UnixMillis;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

const WEEK_MS: i64 = 7 * 86_400_000;

/// A scheduled sync may take longer than one the user waits for (a first sync of
/// a big store); it resumes anyway.
pub const SCHEDULED_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// How the daemon runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Time between syncs (default: the config's `sync.interval_minutes`).
    pub every: Option<Duration>,
    /// One round (sync if logged in, prune if due, complete commits, check what
    /// changed in anchored code, summarize the sessions waiting when
    /// `[summarizer]` is on, embed what waits), then return, without the local
    /// HTTP API.
    pub once: bool,
    /// Time between looks at the records waiting for vectors.
    pub embed_every: Duration,
}

/// Runs the daemon: forever, or one round with [`Options::once`]. Every failure
/// is logged and retried at the next round; nothing here ends the process.
pub fn run(app: &App, options: &Options) {
    options.run(app)
}

impl Options {
    fn run(&self, app: &App) {
        let every = self
            .every
            .unwrap_or(Duration::from_secs(
                app.config.sync.interval_minutes.max(1) * 60,
            ))
            .max(Duration::from_secs(1));
        log(
            app,
            &format!(
                "serving: sync every {every:?} (±10%), prune weekly, vectors every {:?}",
                self.embed_every
            ),
        );
        log(app, &format!("retention {}", app.retention().describe()));
        log(app, &summarizer_line(app));
        // One idle connection held for the daemon's life makes every hook process a
        // second connection: closing it then neither checkpoints the WAL into the
        // database nor deletes it, and the next hook neither recreates it nor
        // rebuilds its index — 7.4 → 4.8 ms per hook on this disk (docs/BENCHMARKS.md,
        // "Store one observation").
        // It holds no transaction, so checkpoints and forget's WAL truncation still run.
        let _keeper = match app.store() {
            Ok(store) => Some(store),
            Err(e) => {
                log(app, &format!("cannot open the store: {e}"));
                None
            }
        };
        if !self.once {
            follow_upgrades(app);
            start_api(app);
            match crate::relay::server::start(app) {
                Ok(path) => log(app, &format!("hooks relayed through {}", path.display())),
                Err(e) => log(
                    app,
                    &format!("hooks not relayed: {e}; they capture on their own"),
                ),
            }
        }
        let mut embedder = Embedding::default();
        // Commits that cannot be completed on this machine: not asked of git again.
        let mut commits_tried = std::collections::HashSet::new();
        // Records were re-indexed since the full-text index was last merged.
        let mut merge_due = false;
        // Where each project's staleness was last worked out.
        let mut staleness = crate::ops::staleness::Memo::default();
        let mut next_round = std::time::Instant::now();
        loop {
            if std::time::Instant::now() >= next_round {
                self.round(app);
                next_round = std::time::Instant::now() + jittered(every);
            }
            complete_commits(app, &mut commits_tried);
            check_staleness(app, &mut staleness);
            index_identifier_pairs(app, &mut merge_due);
            summarize_sessions(app);
            embedder.pass(app);
            if self.once {
                return;
            }
            let pause = self
                .embed_every
                .max(Duration::from_secs(1))
                .min(next_round.saturating_duration_since(std::time::Instant::now()));
            std::thread::sleep(pause.max(Duration::from_millis(200)));
        }
    }

    /// One round; failures are logged, never fatal: the next round tries again.
    fn round(&self, app: &App) {
        match app.credentials() {
            Ok(Some(creds)) => {
                let outcome = app
                    .store()
                    .map_err(|e| e.to_string())
                    .and_then(|mut store| {
                        let _ = crate::semantic::ready_for_pulled_vectors(
                            &app.config,
                            &app.paths,
                            &mut store,
                        );
                        let options =
                            SyncOptions::new("batch", SCHEDULED_DEADLINE, &app.config.sync);
                        let result = crate::sync::run(&mut store, &creds, &options, |_| {});
                        let _ = crate::sync::record_outcome(&mut store, &result);
                        result.map_err(|e| e.to_string())
                    });
                match outcome {
                    Ok(r) => {
                        log(app, &format!("sync: {}", r.counts()));
                        for refused in &r.refused_pulled {
                            log(app, &format!("sync: pulled but not applied: {refused}"));
                        }
                    }
                    Err(e) => log(app, &format!("sync failed: {e}")),
                }
            }
            Ok(None) => {}
            Err(e) => log(app, &format!("cannot read credentials: {e}")),
        }
        if let Err(e) = prune_if_due(app) {
            log(app, &format!("prune failed: {e}"));
        }
    }
}

/// Starts the local HTTP API unless `[serve] http_port = 0`, and logs the address
/// it took (with `"any"`, a port the system picked). A failure (a busy port) is
/// logged; the daemon's other duties go on without the API.
/// How often the daemon looks whether its binary was replaced.
const BINARY_CHECK: Duration = Duration::from_secs(5);

/// Keeps the daemon on the binary installed now: an upgrade (a release archive,
/// npm, `cargo install`) replaces the file at the path the daemon was started
/// from, and the daemon then runs it in its own place (`exec`, same arguments,
/// same process), so the service manager need not be asked and a daemon started
/// by hand follows too. To the store this is a kill -9 and a start: what the
/// relay acknowledged is in the spool, and the new process captures it first.
fn follow_upgrades(app: &App) {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    let Ok(path) = std::env::current_exe() else {
        return;
    };
    let identity = |p: &std::path::Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let Some(started_as) = identity(&path) else {
        return;
    };
    let app = app.clone();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(BINARY_CHECK);
            // Gone (an uninstall, or halfway through a copy): nothing to run yet.
            match identity(&path) {
                Some(now) if now != started_as => {}
                _ => continue,
            }
            log(
                &app,
                &format!(
                    "{} was replaced (an upgrade): running the new binary in this daemon's place",
                    path.display()
                ),
            );
            let error = std::process::Command::new(&path)
                .args(std::env::args_os().skip(1))
                .exec();
            log(
                &app,
                &format!("cannot run the new binary: {error}; serving on"),
            );
            return;
        }
    });
}

fn start_api(app: &App) {
    let Some(port) = app.config.serve.http_port.to_bind() else {
        log(
            app,
            "local API off (`[serve] http_port = 0` in config.toml)",
        );
        return;
    };
    let log_app = app.clone();
    let logger: http::Logger = Arc::new(move |message: &str| log(&log_app, message));
    match http::start(app.clone(), port, logger) {
        Ok(addr) => {
            log(
                app,
                &format!(
                    "local API on http://{addr} (bearer token in {})",
                    app.paths.api_token().display()
                ),
            );
            // A prompt's hook waits only ~100 ms for the API's recall: the model must
            // be loaded before the first prompt, not by it (a load takes 0.7–1.7 s).
            let warm = app.clone();
            std::thread::spawn(move || {
                if let Err(e) = crate::semantic::cached_model(&warm.config, &warm.paths) {
                    log(&warm, &format!("model not loaded for recall: {e}"));
                }
            });
        }
        Err(e) => log(
            app,
            &format!("local API not started: {e}; sync, prune and vectors go on"),
        ),
    }
}

/// Observations given their identifier pairs a write transaction (short: hooks
/// wait for the write lock meanwhile).
const PAIRS_BATCH: usize = 100;
/// Batches between the daemon's other work: 10,000 records a pass, so a store of
/// 100k written before pairs existed is indexed within minutes.
const PAIRS_BATCHES: usize = 100;

/// Merge steps after a pass that re-indexed records (`store::pairs::merge_step`).
const MERGE_STEPS_AT_MOST: usize = 1_000;

/// Gives the observations written before identifier pairs existed their pairs
/// (`store::pairs`); until none is left, searches match identifiers as phrases.
/// `merge_due` carries over passes that re-indexed records until the merge is done.
fn index_identifier_pairs(app: &App, merge_due: &mut bool) {
    let Ok(mut store) = app.store() else {
        return;
    };
    let mut finished = false;
    for _ in 0..PAIRS_BATCHES {
        match crate::store::pairs::backfill(&mut store, PAIRS_BATCH) {
            Ok(0) => {
                finished = true;
                break;
            }
            Ok(_) => *merge_due = true,
            Err(e) => {
                log(app, &format!("identifier pairs not indexed yet: {e}"));
                return;
            }
        }
    }
    if !finished || !*merge_due {
        return;
    }
    // Re-indexing left the full-text index in many small segments: merge them once
    // every record is done, a bounded step at a time (a few dozen steps at 100k).
    for _ in 0..MERGE_STEPS_AT_MOST {
        match crate::store::pairs::merge_step(&mut store) {
            Ok(true) => {}
            Ok(false) => {
                *merge_due = false;
                break;
            }
            Err(e) => {
                log(app, &format!("full-text index not merged: {e}"));
                return;
            }
        }
    }
}

/// The daemon's embedding: the model is loaded on first need and kept.
#[derive(Default)]
struct Embedding {
    /// Shared with the local API's searches (`semantic::cached_model`): one copy.
    model: Option<std::sync::Arc<solaria_embed::Embedder>>,
    /// The weights file (size, modification time) of a model that failed to load:
    /// not tried again until it changes (loading e5 costs ~2 s and 1 GB; every 30 s
    /// that would be a daemon busy failing).
    broken: Option<(u64, std::time::SystemTime)>,
    failed_once: bool,
}

/// The installed weights file's size and modification time, if it is there.
fn weights_stamp(app: &App) -> Option<(u64, std::time::SystemTime)> {
    let dir = semantic::model_dir(&app.config, &app.paths);
    let meta = std::fs::metadata(solaria_embed::ModelFiles::new(dir).weights()).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

impl Embedding {
    /// Embeds what waits, for at most 20 seconds (sync and prune never wait long).
    fn pass(&mut self, app: &App) {
        let result = (|| -> Result<Option<semantic::PassReport>, Box<dyn std::error::Error>> {
            let mut store = app.store()?;
            // Work: records waiting, or vectors of a model that is no longer installed.
            let rebuild = semantic::model_present(&app.config, &app.paths)
                && !semantic::vectors_current(&app.config, &app.paths, &store)?;
            if crate::store::vectors::queued(store.conn())? == 0 && !rebuild {
                return Ok(None);
            }
            if self.model.is_none() {
                let stamp = weights_stamp(app);
                if self.broken.is_some() && self.broken == stamp {
                    return Ok(None);
                }
                self.model = semantic::cached_model(&app.config, &app.paths).inspect_err(|_| {
                    self.broken = stamp;
                })?;
                if self.model.is_some() {
                    // A mended model: the next failure is news again.
                    self.broken = None;
                    self.failed_once = false;
                }
            }
            let Some(model) = &self.model else {
                return Ok(None);
            };
            let options = semantic::background_pass(&app.config);
            Ok(Some(semantic::run_pass(
                &mut store,
                model,
                options,
                |_| {},
            )?))
        })();
        match result {
            Ok(Some(r)) if r.embedded + r.removed > 0 => log(
                app,
                &format!(
                    "vectors: {} made, {} removed, {} waiting{}",
                    r.embedded,
                    r.removed,
                    r.remaining,
                    if r.rebuilt {
                        " (model changed: rebuilding)"
                    } else {
                        ""
                    }
                ),
            ),
            Ok(_) => {}
            Err(e) => {
                // A broken model would log the same failure every 30 s: say it once.
                if !self.failed_once {
                    log(app, &format!("embedding failed: {e}"));
                }
                self.failed_once = true;
                self.model = None;
            }
        }
    }
}

/// Fills in author and file statistics of the commits the hooks captured (one
/// query when none waits; `git show` per commit otherwise, never in a hook).
fn complete_commits(app: &App, tried: &mut std::collections::HashSet<solaria_shared::KnowledgeId>) {
    match crate::ops::commits::complete_pending(app, tried) {
        Ok(r) => {
            if r.completed > 0 || !r.skipped.is_empty() {
                log(
                    app,
                    &format!(
                        "commits: {} completed, {} waiting{}",
                        r.completed,
                        r.waiting,
                        r.skipped
                            .iter()
                            .map(|s| format!("; {s}"))
                            .collect::<String>()
                    ),
                );
            }
            for u in &r.unresolved {
                log(
                    app,
                    &format!("commits: {u}, which is no decision here; not linked"),
                );
            }
        }
        Err(e) => log(app, &format!("commit completion failed: {e}")),
    }
}

/// Works out which anchored records speak of code changed since, for each
/// project whose repository is here and moved (`git log`, never in a hook).
fn check_staleness(app: &App, memo: &mut crate::ops::staleness::Memo) {
    let result = app
        .store()
        .map_err(crate::ops::OpError::from)
        .and_then(|mut store| crate::ops::staleness::check_due(&mut store, memo));
    match result {
        Ok(lines) => {
            for line in lines {
                log(app, &format!("staleness: {line}"));
            }
        }
        Err(e) => log(app, &format!("staleness check failed: {e}")),
    }
}

/// What the summarizer will do, for the start of the log.
fn summarizer_line(app: &App) -> String {
    let c = &app.config.summarizer;
    if !c.enabled {
        return "summarizer off: summaries stay deterministic ([summarizer] enabled = false)"
            .into();
    }
    format!(
        "summarizer on: {}, sessions quiet for {} s, at most {} tokens a day and {} a session",
        crate::distill::runner::describe(c),
        c.quiet_secs,
        c.max_tokens_per_day,
        c.max_tokens_per_session
    )
}

/// Has the closed sessions waiting summarized by the configured model (a few per
/// call; each attempt logged, a failure leaves the deterministic summary).
fn summarize_sessions(app: &App) {
    match crate::ops::distill::pass(app, UnixMillis::now()) {
        Ok(attempts) => {
            for a in attempts {
                log(app, &a.line());
            }
        }
        Err(e) => log(app, &format!("summarizer pass failed: {e}")),
    }
}

fn prune_if_due(app: &App) -> Result<(), Box<dyn std::error::Error>> {
    let mut store = app.store()?;
    let now = UnixMillis::now();
    let last: i64 = crate::store::sync::state(store.conn(), "last_prune_at")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if now.0 - last < WEEK_MS {
        return Ok(());
    }
    let retention = app.retention();
    let pruned = retention::prune(&mut store, &retention, now)?;
    store.write(|w| w.set_state("last_prune_at", &now.0.to_string()))?;
    if retention.is_on() {
        log(
            app,
            &format!(
                "prune: {} record(s) past retention removed",
                pruned.counts.total()
            ),
        );
    }
    Ok(())
}

/// `every` ±10%, so that machines started together spread out.
fn jittered(every: Duration) -> Duration {
    let r = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0; // 0..=1
    every.mul_f64(0.9 + 0.2 * r)
}

fn log(app: &App, message: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = app.paths.prepare_logs_dir();
    let path = app.paths.logs_dir().join("serve.log");
    let line = format!(
        "{} {message}\n",
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ")
    );
    eprint!("{line}");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}
