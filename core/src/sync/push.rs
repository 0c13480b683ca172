//! Push, as the sync guide names it: what changed here since the last
//! acknowledged push, in batches, private spans stripped and local-only projects
//! left out; then the vectors made here. Each batch is its own transaction: the
//! push cursor moves only once the server has answered for the batch, and never
//! past a record it refused.

use super::{Progress, Server, SyncError, SyncReport, VECTOR_BATCH};
use crate::store::Store;
use crate::store::sync::{self as store_sync, PUSH_CURSOR_KEY};
use crate::store::{vectors, vectors_wire};
use solaria_shared::embedding::WireEmbedding;
use solaria_shared::private::{strip_private, strip_private_json};
use solaria_shared::wire::{MAX_BATCH, RecordOutcome, WireRecord};

/// Pushes every pending record, a batch at a time; whether all went (a refused
/// record, or knowledge a first-release server cannot store, stops the push and
/// keeps the rest pending).
pub(super) fn records(
    store: &mut Store,
    server: &Server<'_>,
    report: &mut SyncReport,
    progress: &mut impl FnMut(Progress),
) -> Result<bool, SyncError> {
    let me = store.machine_id();
    let local_only = &server.options.local_only;
    loop {
        server.check_time()?;
        let cursor = store_sync::cursor(store.conn(), PUSH_CURSOR_KEY)?;
        let mut batch = store_sync::pending(store.conn(), me, cursor, MAX_BATCH)?;
        // A server of the first release cannot parse knowledge records: push what
        // comes before the first one and keep it and the rest pending (nothing
        // is lost; they go once the server is upgraded).
        let held_at = (!server.stores_knowledge)
            .then(|| {
                batch.iter().position(|r| {
                    matches!(r, WireRecord::Knowledge(_)) && !is_local_only(r, local_only)
                })
            })
            .flatten();
        if let Some(k) = held_at {
            batch.truncate(k);
            let waiting = store_sync::pending_count(store.conn(), me, cursor)?;
            report.rejected.push(format!(
                "{waiting} records wait, starting with a decision, memory or other knowledge record: the server does not store knowledge records yet. Upgrade the central service, then sync again; nothing is lost"
            ));
        }
        let Some(last) = batch.last().map(|r| r.updated().as_i64()) else {
            return Ok(true);
        };
        let outgoing: Vec<&WireRecord> = batch
            .iter()
            .filter(|r| !is_local_only(r, local_only))
            .collect();
        let answer = if outgoing.is_empty() {
            None
        } else {
            let wire: Vec<WireRecord> = outgoing.iter().map(|r| prepare_outgoing(r)).collect();
            let kind = server.options.kind;
            Some(server.client.push(&server.jwt, &wire, &[], kind)?)
        };
        // A refused record stops the push before it: the cursor never passes a record
        // the server does not hold, so it stays pending (and visible) until fixed.
        let refused_at = answer.as_ref().and_then(|a| {
            a.results
                .iter()
                .position(|o| matches!(o, RecordOutcome::Rejected { .. }))
        });
        let new_cursor = match refused_at {
            None => last,
            Some(k) => {
                let first_refused = outgoing[k].updated();
                batch
                    .iter()
                    .map(|r| r.updated())
                    .take_while(|u| *u < first_refused)
                    .last()
                    .map_or(cursor, |u| u.as_i64())
            }
        };
        store.write(|w| {
            if let Some(answer) = &answer {
                for outcome in &answer.results {
                    match outcome {
                        RecordOutcome::Applied { .. } => report.pushed += 1,
                        RecordOutcome::Stale { winner, .. } => {
                            // Apply the winner before the cursor moves past our loser,
                            // so the loss is recorded as a conflict.
                            let applied = w.apply_winners(std::slice::from_ref(winner), cursor)?;
                            w.count_foreign(applied.foreign)?;
                            report.conflicts += applied.conflicts;
                            report.refused_pulled.extend(applied.refused);
                        }
                        RecordOutcome::Rejected { id, reason } => {
                            report.rejected.push(format!("{id}: {reason}"));
                        }
                    }
                }
                w.observe(answer.server_time);
            }
            w.set_state(PUSH_CURSOR_KEY, &new_cursor.to_string())
        })?;
        if refused_at.is_some() || held_at.is_some() {
            return Ok(false);
        }
        let left = store_sync::pending_count(store.conn(), me, new_cursor)?;
        progress(Progress::Pushed {
            done: report.pushed,
            left,
        });
    }
}

/// Pushes the outbox's vectors (those made here since the last sync), once the
/// server holds every record they belong to (`all_records_pushed`) and only of a model it keeps (it says
/// which; an older one does not): a batch at a time, each entry taken off once the
/// server has answered for it. A vector the server does not keep is not retried:
/// the record's other machines embed it.
pub(super) fn vectors(
    store: &mut Store,
    server: &Server<'_>,
    all_records_pushed: bool,
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    if let (Some(taken), Some(ours)) = (&server.vector_models, vectors::index_model(store.conn())?)
        && !taken.contains(&ours.fingerprint)
    {
        report.vectors_not_taken = Some(ours.fingerprint);
        return Ok(());
    }
    if !server.stores_vectors || !all_records_pushed {
        return Ok(());
    }
    let (options, encoding) = (server.options, server.vector_encoding);
    store.write(|w| vectors_wire::backfill_outbox(w.tx()))?;
    loop {
        server.check_time()?;
        let entries = vectors_wire::outgoing(store.conn(), VECTOR_BATCH)?;
        if entries.is_empty() {
            return Ok(());
        }
        let embeddings: Vec<WireEmbedding> = entries
            .iter()
            .filter(|e| !is_local_project(&e.project.0, &e.project.1, &options.local_only))
            .filter_map(|e| e.embedding.as_ref())
            // A stored vector that does not read back is not sent at all.
            .filter_map(|e| e.reencoded(encoding).ok())
            .collect();
        if !embeddings.is_empty() {
            let answer = server
                .client
                .push(&server.jwt, &[], &embeddings, options.kind)?;
            report.vectors_pushed += embeddings.len() - answer.embeddings_refused.len();
            report.vectors_refused.extend(
                answer
                    .embeddings_refused
                    .into_iter()
                    .map(|r| format!("vector of {}: {}", r.id, r.reason)),
            );
        }
        store.write(|w| vectors_wire::sent(w.tx(), &entries))?;
    }
}

/// A record as it may leave this machine: every `<private>` span stripped from
/// every user-text field (the one list of them is `WireRecord::map_user_text`).
fn prepare_outgoing(r: &WireRecord) -> WireRecord {
    let mut out = r.clone();
    out.map_user_text(
        &mut |t| strip_private(t).into_owned(),
        &mut strip_private_json,
    );
    out
}

fn is_local_only(r: &WireRecord, local_only: &[String]) -> bool {
    let project = r.project();
    is_local_project(&project.key, &project.name, local_only)
}

fn is_local_project(key: &str, name: &str, local_only: &[String]) -> bool {
    crate::config::is_local_only(local_only, key, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_message_leaves_without_its_private_spans() {
        use solaria_shared::knowledge::Commit;
        use solaria_shared::{Knowledge, KnowledgeBody, KnowledgeId, MachineId, Project};
        let k = Knowledge::new(
            KnowledgeId::new(),
            MachineId::new(),
            solaria_shared::Hlc::new(1_700_000_000_000, 0),
            Project {
                key: "github.com/acme/api".into(),
                name: "api".into(),
            },
            None,
            KnowledgeBody::Commit(Commit {
                sha: "0123456789abcdef0123456789abcdef01234567".into(),
                message: "Fix login <private>vault 7731</private>".into(),
                files: vec!["<private>vault 7731</private>.rs".into()],
                ..Commit::default()
            }),
        );
        let sent = prepare_outgoing(&WireRecord::Knowledge(k));
        let json = serde_json::to_string(&sent).expect("serialises");
        assert!(!json.contains("7731"), "{json}");
        assert!(json.contains("Fix login"), "{json}");
    }
}
