//! Capturing an event that did not arrive on this process's stdin: one the daemon
//! took on its socket, or one a hook left in the spool. Failures are logged under
//! the event's own name and a panic costs that event alone; the daemon's capture
//! thread (`crate::relay::capturer`) and a hook process's drain (`process.rs`) both
//! capture spool files here, so the two agree on what stays and what goes.

use super::{
    Capturing, HookError, StoreSlot, claude_code, codex, gemini, log_line, opencode, payload,
};
use crate::config::{Config, Paths};
use solaria_hook::protocol::{Event, HookEvent};
use solaria_hook::spool::{Spool, SpoolError, Spooled};
use solaria_shared::UnixMillis;
use std::path::Path;

/// One relayed or spooled event captured as `cx` says: a Claude
/// Code hook by its `solaria hook` argument, an OpenCode event by its name; what
/// its hook prints. The hook process, the daemon's relay and the spool's drains
/// all capture through this.
pub fn handle_event(
    event: &Event,
    bytes: &[u8],
    cx: &mut Capturing<'_>,
) -> Result<Option<String>, HookError> {
    match event {
        Event::ClaudeCode(name) => {
            let hook = HookEvent::from_arg(name)
                .ok_or_else(|| HookError::UnknownEvent(name.escape_debug().to_string()))?;
            claude_code::handle(hook, bytes, cx)
        }
        Event::OpenCode(name) => opencode::handle(name, bytes, cx),
        Event::Codex(name) => codex::handle(name, bytes, cx),
        Event::Gemini(name) => gemini::handle(name, bytes, cx),
    }
}

/// How one event's capture ended.
#[derive(Debug)]
pub struct Captured {
    /// What a `solaria hook` process would have printed.
    pub answer: String,
    /// The store could not take the event (locked past the wait, a disk error):
    /// unlike a payload that cannot be read, it is worth trying again.
    pub store_failed: bool,
}

/// [`handle_event`], its failure logged under the event's name (a panic too: the
/// event is then dropped); after a failure `slot` is closed, so that the next
/// event opens the store afresh rather than trust this connection.
pub fn capture_logged(event: &Event, payload: &[u8], cx: &mut Capturing<'_>) -> Captured {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        handle_event(event, payload, cx)
    }));
    let (message, store_failed) = match outcome {
        Ok(Ok(answer)) => {
            return Captured {
                answer: answer.unwrap_or_default(),
                store_failed: false,
            };
        }
        Ok(Err(e)) => (e.to_string(), matches!(e, HookError::Store(_))),
        Err(_) => (
            "internal error (panic) while capturing; event dropped".to_owned(),
            false,
        ),
    };
    cx.slot.close();
    log_line(cx.paths, &label(event), &message);
    Captured {
        answer: String::new(),
        store_failed,
    }
}

/// The name an event's log lines go under: the hook's (`PostToolUse`), or
/// `opencode <event>`, `codex <event>`, `gemini <event>`.
fn label(event: &Event) -> String {
    match event {
        Event::ClaudeCode(name) => HookEvent::from_arg(name)
            .map_or_else(|| "relay".to_owned(), |hook| hook.claude_name().to_owned()),
        Event::OpenCode(name) => format!("opencode {}", name.escape_debug()),
        Event::Codex(name) => format!("codex {}", name.escape_debug()),
        Event::Gemini(name) => format!("gemini {}", name.escape_debug()),
    }
}

/// What became of one spool file.
#[derive(Debug, PartialEq, Eq)]
pub enum SpoolFile {
    /// Its event is in the store, or was refused as a hook process refuses it
    /// (logged): the file is removed.
    Captured,
    /// It held no event (logged): the file is removed.
    Dropped,
    /// The store did not take it, or the file cannot be read now: it stays, the
    /// event's only copy, for a later capture; why.
    Kept(String),
}

/// Captures the event of one spool file (see [`SpoolFile`]).
pub fn capture_spool_file(
    file: &Path,
    config: &Config,
    paths: &Paths,
    slot: &mut StoreSlot,
) -> SpoolFile {
    match Spool::read(file) {
        Ok(Spooled {
            event,
            at_ms,
            payload,
        }) => {
            let at = UnixMillis(at_ms);
            let cx = &mut Capturing {
                at,
                config,
                paths,
                slot,
            };
            if capture_logged(&event, &payload, cx).store_failed {
                SpoolFile::Kept("the store did not take it".to_owned())
            } else {
                Spool::done(file);
                SpoolFile::Captured
            }
        }
        // It may read another time.
        Err(SpoolError::Io(_, e)) => SpoolFile::Kept(format!("cannot be read ({e})")),
        Err(malformed @ SpoolError::Malformed(_)) => {
            // Never an event (hooks write whole files): nothing to capture.
            log_line(paths, "spool", &format!("{malformed}; dropped"));
            Spool::done(file);
            SpoolFile::Dropped
        }
    }
}

/// Removes the events of agent session `agent_session` of `agent` (`claude-code`,
/// `opencode`) that wait in the spool of `paths`' data dir, never captured (the
/// store was held or refused them, or no daemon ran since): `solaria forget` of
/// that session, since each file is a payload as the agent sent it, before
/// redaction. A payload names its session as its capture reads it. How many.
pub fn forget_spooled(
    paths: &Paths,
    runtime_dir: Option<&Path>,
    agent: &str,
    agent_session: &str,
) -> usize {
    let of_the_session = |file: &Path| {
        Spool::read(file).is_ok_and(|spooled| {
            let named = match &spooled.event {
                Event::ClaudeCode(_) => payload::parse(&spooled.payload)
                    .ok()
                    .map(|p| (super::AGENT, p.session_id)),
                Event::OpenCode(_) => {
                    opencode::session_of(&spooled.payload).map(|s| (opencode::AGENT, s))
                }
                Event::Codex(_) => payload::parse(&spooled.payload)
                    .ok()
                    .map(|p| (codex::AGENT, p.session_id)),
                Event::Gemini(_) => payload::parse(&spooled.payload)
                    .ok()
                    .map(|p| (gemini::AGENT, p.session_id)),
            };
            named.is_some_and(|(a, s)| a == agent && s == agent_session)
        })
    };
    let mut removed = 0;
    for file in Spool::events(&paths.data_dir, runtime_dir) {
        if of_the_session(&file) && std::fs::remove_file(&file).is_ok() {
            removed += 1;
        }
    }
    removed
}
