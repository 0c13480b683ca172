//! `solaria import`: memory brought in from a file. Each source reads its own
//! format into records (`solaria.rs`: a SOLARIA export); then every record takes
//! the one path here, the same rules as what is captured or received: private
//! spans stripped and secrets redacted (`WireRecord::cleaned`), long texts
//! bounded as capture bounds them, projects never captured skipped, stamps far
//! ahead of this clock refused, and last-write-wins against what is held, so a
//! second import of the same file stores nothing. The whole file is read and
//! checked before the first write: a malformed one changes nothing. Records are
//! applied a batch per transaction.

pub mod solaria;

use super::OpResult;
use super::export::kind_name;
use crate::app::App;
use crate::present::portable::ImportReport;
use crate::store::sync::{self as store_sync, PUSH_CURSOR_KEY};
use solaria_shared::UnixMillis;
use solaria_shared::hlc::MAX_DRIFT_MS;
use solaria_shared::private::bound_text;
use solaria_shared::wire::{MachineName, WireRecord};

/// Records applied per transaction: a batch is all or nothing, and a long
/// import lets hooks write between its batches.
const BATCH: usize = 500;

/// Records read from a source, ready for the one import path.
#[derive(Debug, Default)]
pub struct Incoming {
    /// What was imported (`solaria`, `claude-mem`…).
    pub source: String,
    /// The file read.
    pub path: String,
    /// Names of the machines the records name.
    pub machines: Vec<MachineName>,
    pub records: Vec<WireRecord>,
}

/// How far an import got: records applied so far, of all.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

/// Why a record, read well, is not stored; `None` when it may be.
fn refused(app: &App, record: &WireRecord, now: UnixMillis) -> Option<String> {
    let project = record.project();
    let skipped = &app.config.capture.skip_projects;
    if skipped
        .iter()
        .any(|p| *p == project.key || *p == project.name)
    {
        return Some(format!(
            "project {} is never captured here (`[capture] skip_projects`)",
            project.name
        ));
    }
    let ahead = record.updated().physical_ms() as i64 - now.0;
    if ahead > MAX_DRIFT_MS as i64 {
        return Some(format!(
            "its version stamp is {} s ahead of this machine's clock; a file from a machine whose clock ran ahead",
            ahead / 1000
        ));
    }
    None
}

/// Long texts cut as capture cuts them (`[capture] max_input_bytes`,
/// `max_response_bytes`), so an import stores nothing a session could not.
fn bounded(app: &App, record: WireRecord) -> WireRecord {
    let bounds = &app.config.capture;
    match record {
        WireRecord::Observation(mut o) => {
            o.input = bound_text(&o.input, bounds.max_input_bytes).0;
            o.response = bound_text(&o.response, bounds.max_response_bytes).0;
            WireRecord::Observation(o)
        }
        WireRecord::Summary(mut s) => {
            s.text = bound_text(&s.text, bounds.max_response_bytes).0;
            WireRecord::Summary(s)
        }
        other => other,
    }
}

/// Applies what a source read: the one path every import ends in.
pub fn apply(
    app: &App,
    incoming: Incoming,
    progress: &mut dyn FnMut(Progress),
) -> OpResult<ImportReport> {
    let now = UnixMillis::now();
    let mut report = ImportReport {
        source: incoming.source,
        path: incoming.path,
        ..ImportReport::default()
    };
    let mut ready = Vec::with_capacity(incoming.records.len());
    for record in incoming.records {
        let record = bounded(app, record.cleaned());
        match refused(app, &record, now) {
            Some(why) => report.skipped.push(format!("{}: {why}", record.id())),
            None => ready.push(record),
        }
    }
    let mut store = app.store()?;
    let me = store.machine_id();
    store.write(|w| {
        incoming
            .machines
            .iter()
            .filter(|m| m.id != me)
            .try_for_each(|m| w.learn_machine_name(m))
    })?;
    let total = ready.len();
    let mut done = 0;
    for batch in ready.chunks(BATCH) {
        let push_cursor = store_sync::cursor(store.conn(), PUSH_CURSOR_KEY)?;
        // One record at a time inside the batch's transaction, so that the
        // report says what became of each.
        let applied = store.write(|w| {
            batch
                .iter()
                .map(|r| w.apply_remote(std::slice::from_ref(r), push_cursor))
                .collect::<Result<Vec<_>, _>>()
        })?;
        for (record, outcome) in batch.iter().zip(applied) {
            let counts = if outcome.stored > 0 {
                &mut report.stored
            } else if outcome.ignored > 0 {
                &mut report.unchanged
            } else {
                report.skipped.extend(outcome.refused);
                continue;
            };
            *counts.entry(kind_name(record)).or_default() += 1;
            report.conflicts += outcome.conflicts;
        }
        done += batch.len();
        progress(Progress { done, total });
    }
    Ok(report)
}
