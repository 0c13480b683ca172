//! One hook event in a `solaria hook` process: the hook contract around it (config
//! read leniently, a watchdog, stdin within bounds, panics caught, failures logged,
//! exit 0), and what the process does when another process holds the store: the
//! event waits in the spool, and a later hook process that writes captures what
//! waits there when no daemon runs (`solaria_hook::spool`).

use super::{
    Capturing, HookError, MAX_PAYLOAD_BYTES, SpoolFile, StoreSlot, capture_spool_file,
    handle_event, log_line,
};
use crate::config::{self, Config, Env, Paths};
use crate::store::StoreError;
use solaria_hook::protocol::Event;
use solaria_hook::spool::Spool;
use solaria_shared::UnixMillis;
use std::io::{IsTerminal, Read, Write};
use std::path::Path;

/// The hook contract around one event of a hook process: config read leniently,
/// a watchdog, stdin read within bounds, panics caught, failures logged under
/// `label`, exit 0 whatever happens, stdout only for what the event's hook prints.
///
/// When the store stays held by another process past `HOOK_STORE_WAIT`, the
/// event is put in the spool rather than dropped (a daemon captures it when it
/// starts or runs, or a later hook process that finds the store free), and a hook
/// that prints is answered from a read of the store. A hook process that did
/// write captures, once its own event is in, what such processes left there when
/// no daemon runs.
pub(super) fn run_guarded(label: &str, env: &Env, event: Event) {
    let (config, paths, config_error) = config::load_lenient(env);
    if let Some(e) = config_error {
        log_line(
            &paths,
            label,
            &format!("config ignored, using defaults: {e}"),
        );
    }
    start_watchdog(
        label.to_owned(),
        paths.clone(),
        config.capture.hook_timeout_ms,
    );
    let skew = env.clock_skew_ms;
    let no_capture = env.no_capture;
    let runtime_dir = env.xdg_runtime_dir.as_deref();
    let outcome = std::panic::catch_unwind(|| {
        let bytes = read_stdin()?;
        if no_capture {
            // The summarizer's own agent run: capturing it would make a session
            // that the summarizer then summarizes, and so on. The payload is still
            // read, so the agent never writes into a closed pipe.
            return Ok(None);
        }
        let at = UnixMillis::now();
        let mut slot = StoreSlot::new(&paths, &config, skew);
        let (config, paths) = (&config, &paths);
        let cx = &mut Capturing {
            at,
            config,
            paths,
            slot: &mut slot,
        };
        match handle_event(&event, &bytes, cx) {
            Err(HookError::Store(e)) if e.is_busy() => {
                slot.close();
                keep_in_spool(label, &event, at, &bytes, paths, runtime_dir, &e);
                if !event.prints() {
                    return Ok(None);
                }
                let mut reading = StoreSlot::answering(paths, config, skew);
                let cx = &mut Capturing {
                    at,
                    config,
                    paths,
                    slot: &mut reading,
                };
                handle_event(&event, &bytes, cx)
            }
            Ok(answer) => {
                drain_left_events(paths, runtime_dir, config, &mut slot);
                Ok(answer)
            }
            failed => failed,
        }
    });
    match outcome {
        Ok(Ok(Some(output))) => {
            let mut stdout = std::io::stdout().lock();
            // A closed stdout (the agent gave up waiting) is not our failure.
            let _ = stdout.write_all(output.as_bytes());
            let _ = stdout.flush();
        }
        Ok(Ok(None)) => {}
        Ok(Err(e)) => log_line(&paths, label, &e.to_string()),
        Err(_) => log_line(
            &paths,
            label,
            "internal error (panic) while capturing; event dropped",
        ),
    }
}

/// Puts an event the store did not take (held by another process past
/// `HOOK_STORE_WAIT`) into the spool, where it waits for the next capture;
/// logged either way. Where no spool can be made, the event is lost, as before.
fn keep_in_spool(
    label: &str,
    event: &Event,
    at: UnixMillis,
    bytes: &[u8],
    paths: &Paths,
    runtime_dir: Option<&Path>,
    busy: &StoreError,
) {
    let message = match Spool::for_process(&paths.data_dir, runtime_dir)
        .and_then(|spool| spool.put(event, at.0, bytes))
    {
        Ok(file) => format!(
            "the store is held by another process ({busy}); the event waits in the spool ({}) \
             for the daemon or the next hook that finds the store free",
            file.display()
        ),
        Err(e) => format!(
            "the store is held by another process ({busy}) and the spool cannot take the event ({e}); event dropped"
        ),
    };
    log_line(paths, label, &message);
}

/// At most this many events left in the spool are captured by one hook process
/// (its agent waits for it; the next hook takes the rest).
const DRAIN_AT_MOST: usize = 50;

/// Captures, oldest first, events that hook processes left in the spool while the
/// store was held — only when no daemon runs (a daemon holds the drainer lock and
/// captures them itself) and no other hook process drains. A file is removed once
/// its event is in the store ([`capture_spool_file`], as the daemon does); one the
/// store refuses again stops the drain.
fn drain_left_events(
    paths: &Paths,
    runtime_dir: Option<&Path>,
    config: &Config,
    slot: &mut StoreSlot,
) {
    // Most hooks find nothing: one directory read, no lock taken.
    if Spool::waiting(&paths.data_dir, runtime_dir) == 0 {
        return;
    }
    let Ok(mut spool) = Spool::for_process(&paths.data_dir, runtime_dir) else {
        return;
    };
    if !spool.try_drain() {
        return;
    }
    let Ok(files) = spool.pending() else { return };
    for file in files.into_iter().take(DRAIN_AT_MOST) {
        if let SpoolFile::Kept(why) = capture_spool_file(&file, config, paths, slot) {
            // Held again, or failing: it and the rest wait for the next capture.
            let message = format!("{}: {why}; it stays in the spool", file.display());
            log_line(paths, "spool", &message);
            return;
        }
    }
}

/// Ends the process (exit 0, logged) if the hook runs past `timeout_ms`: a stdin
/// that never closes or a store locked by a stuck process must not hold the agent.
/// Exiting mid-transaction is safe: SQLite rolls an unfinished write back.
fn start_watchdog(label: String, paths: Paths, timeout_ms: u64) {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(timeout_ms));
        log_line(
            &paths,
            &label,
            &format!(
                "gave up after {timeout_ms} ms (stdin still open or store locked); event dropped"
            ),
        );
        std::process::exit(0);
    });
}

fn read_stdin() -> Result<Vec<u8>, HookError> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(HookError::Terminal);
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(HookError::Read)?;
    if bytes.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(HookError::TooLarge);
    }
    Ok(bytes)
}
