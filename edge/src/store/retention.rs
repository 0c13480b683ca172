//! Forgetting (tombstones that propagate) and pruning (local retention that does
//! not): the two ways a record leaves this machine's memory.

use super::{Store, StoreError};
use crate::store::records;
use crate::store::views::{self, AnyRecord};
use crate::summary;
use rusqlite::params;
use serde::Serialize;
use solaria_shared::{RecordMeta, SessionId, Summary, UnixMillis};

/// How many records a forget or prune touched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub sessions: usize,
    pub observations: usize,
    pub summaries: usize,
}

impl Counts {
    /// All records touched.
    pub fn total(&self) -> usize {
        self.sessions + self.observations + self.summaries
    }
}

// A tombstone keeps the envelope (id, machine, stamp) and erases the content.
const WIPE_OBSERVATION: &str = "deleted = 1, title = '', input = '', response = '', \
    files = '[]', metadata = '{}', tags = '[]'";
const WIPE_SUMMARY: &str = "deleted = 1, text = '', key_points = '[]', tags = '[]'";
const WIPE_SESSION: &str = "deleted = 1, cwd = ''";

/// What to forget.
#[derive(Debug, Clone)]
pub enum ForgetTarget {
    /// One record (observation, summary or session) by id.
    Record(String),
    /// A session and everything in it.
    Session(String),
    /// Every record of a project (key or name).
    Project(String),
}

/// Turns the target into tombstones: content erased, a new version stamped by this
/// machine so that the deletion wins over older versions everywhere it syncs. Their
/// vectors (semantic search) go at once too.
///
/// The erased text does not stay in the file either: the connection overwrites what
/// it deletes (`secure_delete`), the full-text indexes are rewritten without it, and
/// the WAL is checkpointed and emptied when no other process is reading.
pub fn forget(store: &mut Store, target: &ForgetTarget) -> Result<Counts, StoreError> {
    let counts = forget_records(store, target)?;
    super::vectors::drop_removed(store)?;
    if counts.total() > 0 {
        scrub_indexes(store)?;
        empty_wal(store);
    }
    Ok(counts)
}

/// Rewrites each full-text index as one segment, which leaves out the entries of
/// deleted rows. FTS5 otherwise only marks a deleted row (contentless tables cannot
/// look its words up to remove them) and keeps those words in its segments until
/// some later merge, where `secure_delete` cannot reach them. Costs a pass over the
/// index, which is why only forget and prune do it.
fn scrub_indexes(store: &mut Store) -> Result<(), StoreError> {
    store.write(|w| {
        w.tx().execute_batch(
            "INSERT INTO observations_fts (observations_fts) VALUES ('optimize');
             INSERT INTO summaries_fts (summaries_fts) VALUES ('optimize');",
        )?;
        Ok(())
    })
}

/// Copies the WAL into the database file and truncates it, so no earlier version of
/// a page lingers there. Best effort: a reader in another process (the daemon, a
/// search) keeps the WAL; its frames are then overwritten as writes reuse it.
fn empty_wal(store: &Store) {
    let _ = store
        .conn()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
}

fn forget_records(store: &mut Store, target: &ForgetTarget) -> Result<Counts, StoreError> {
    let (column, value) = match target {
        ForgetTarget::Record(id) => match views::resolve(store.conn(), id)? {
            AnyRecord::Observation(o) => {
                let counts = forget_where(store, "id", &o.id.to_string(), false)?;
                rewrite_summary(store, o.session_id)?;
                return Ok(counts);
            }
            AnyRecord::Summary(s) => return forget_summary_only(store, &s.id.to_string()),
            AnyRecord::Session(s) => ("session", s.id.to_string()),
        },
        ForgetTarget::Session(id) => match views::resolve(store.conn(), id)? {
            AnyRecord::Session(s) => ("session", s.id.to_string()),
            AnyRecord::Observation(o) => ("session", o.session_id.to_string()),
            AnyRecord::Summary(s) => ("session", s.session_id.to_string()),
        },
        ForgetTarget::Project(p) => {
            let project = records::resolve_project(store.conn(), p)?
                .ok_or_else(|| StoreError::NotFound(format!("project {p}")))?;
            ("project", project.key)
        }
    };
    let col = if column == "session" {
        "session_id"
    } else {
        "project_key"
    };
    forget_where(store, col, &value, true)
}

/// Rewrites a session's summary from the observations it has left, so that a
/// forgotten record does not live on in the summary's text. The outcome line
/// (from the agent's last message) is kept.
fn rewrite_summary(store: &mut Store, session: SessionId) -> Result<(), StoreError> {
    store.write(|w| {
        let Some(old) = records::summary_of_session(w.tx(), session)?.filter(|s| !s.meta.deleted)
        else {
            return Ok(());
        };
        let remaining = records::observations_of_session(w.tx(), session)?;
        let outcome = old
            .key_points
            .iter()
            .find_map(|p| p.strip_prefix("Outcome: "))
            .map(str::to_string);
        let draft = summary::summarize(&remaining, outcome.as_deref());
        let stamp = w.tick();
        let machine_id = w.machine_id();
        w.upsert_summary(&Summary {
            meta: RecordMeta {
                machine_id,
                updated: stamp,
                deleted: false,
            },
            text: draft.text,
            key_points: draft.key_points,
            tags: draft.tags,
            observation_count: remaining.len() as u32,
            ..old
        })
    })
}

fn forget_summary_only(store: &mut Store, id: &str) -> Result<Counts, StoreError> {
    store.write(|w| {
        let stamp = w.tick().as_i64();
        let me = w.machine_id().to_string();
        let n = w.tx().execute(
            &format!("UPDATE summaries SET {WIPE_SUMMARY}, updated = ?2, machine_id = ?3 WHERE id = ?1 AND deleted = 0"),
            params![id, stamp, me],
        )?;
        Ok(Counts { summaries: n, ..Counts::default() })
    })
}

/// Tombstones observations (and, with `whole`, summaries and sessions) whose
/// `column` equals `value`. `column` is one of our own column names.
fn forget_where(
    store: &mut Store,
    column: &str,
    value: &str,
    whole: bool,
) -> Result<Counts, StoreError> {
    store.write(|w| {
        let stamp = w.tick().as_i64();
        let me = w.machine_id().to_string();
        let tx = w.tx();
        let mut counts = Counts {
            observations: tx.execute(
                &format!("UPDATE observations SET {WIPE_OBSERVATION}, updated = ?2, machine_id = ?3 WHERE {column} = ?1 AND deleted = 0"),
                params![value, stamp, me],
            )?,
            ..Counts::default()
        };
        if whole {
            let session_col = if column == "session_id" { "id" } else { column };
            counts.summaries = tx.execute(
                &format!("UPDATE summaries SET {WIPE_SUMMARY}, updated = ?2, machine_id = ?3 WHERE {column} = ?1 AND deleted = 0"),
                params![value, stamp, me],
            )?;
            counts.sessions = tx.execute(
                &format!("UPDATE sessions SET {WIPE_SESSION}, updated = ?2, machine_id = ?3 WHERE {session_col} = ?1 AND deleted = 0"),
                params![value, stamp, me],
            )?;
        }
        Ok(counts)
    })
}

/// The retention policy.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub observations_days: i64,
    pub summaries_days: i64,
    /// Vectors of records older than this are dropped (the records stay, found by
    /// their words).
    pub embeddings_days: i64,
    /// A server is configured: records it has not acknowledged are kept.
    pub server_configured: bool,
}

/// Deletes, on this machine only, observations and summaries past their retention,
/// and sessions left empty and past the summaries' retention. Once a server is
/// configured, this machine's changes the server has not acknowledged are kept.
pub fn prune(store: &mut Store, policy: Policy, now: UnixMillis) -> Result<Counts, StoreError> {
    let counts = prune_records(store, policy, now)?;
    super::vectors::drop_removed(store)?;
    super::vectors::prune_before(store, now.minus_days(policy.embeddings_days))?;
    if counts.total() > 0 {
        scrub_indexes(store)?;
    }
    Ok(counts)
}

fn prune_records(store: &mut Store, policy: Policy, now: UnixMillis) -> Result<Counts, StoreError> {
    let obs_cutoff = now.minus_days(policy.observations_days).0;
    let sum_cutoff = now.minus_days(policy.summaries_days).0;
    let cursor: i64 = if policy.server_configured {
        super::sync::cursor(store.conn(), super::sync::PUSH_CURSOR_KEY)?
    } else {
        i64::MAX
    };
    store.write(|w| {
        let me = w.machine_id().to_string();
        let tx = w.tx();
        // "Pushed" = written elsewhere (the server has it) or acknowledged.
        let pushed = "(machine_id <> ?2 OR updated <= ?3)";
        let mut counts = Counts {
            observations: tx.execute(
                &format!("DELETE FROM observations WHERE created_at < ?1 AND {pushed}"),
                params![obs_cutoff, me, cursor],
            )?,
            ..Counts::default()
        };
        counts.summaries = tx.execute(
            &format!("DELETE FROM summaries WHERE created_at < ?1 AND {pushed}"),
            params![sum_cutoff, me, cursor],
        )?;
        counts.sessions = tx.execute(
            &format!(
                "DELETE FROM sessions WHERE started_at < ?1 AND {pushed}
                 AND NOT EXISTS (SELECT 1 FROM observations o WHERE o.session_id = sessions.id)
                 AND NOT EXISTS (SELECT 1 FROM summaries s WHERE s.session_id = sessions.id)"
            ),
            params![sum_cutoff, me, cursor],
        )?;
        Ok(counts)
    })
}
