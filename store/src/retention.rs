//! Forgetting (tombstones that propagate) and pruning (local retention that does
//! not): the two ways a record leaves this machine's memory.

use super::{Store, StoreError};
use crate::distill::PROPOSAL_TAG;
use crate::records::{self, OWN_ROW};
use crate::views::{self, AnyRecord};
use rusqlite::params;
use serde::{Deserialize, Serialize};
use solaria_shared::summary;
use solaria_shared::{RecordMeta, Session, SessionId, Summary, UnixMillis};

/// How many records a forget or prune touched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub sessions: usize,
    pub observations: usize,
    pub summaries: usize,
    /// Decisions, memories, commits… (a project's, or one by id).
    pub knowledge: usize,
}

impl Counts {
    /// All records touched.
    pub fn total(&self) -> usize {
        self.sessions + self.observations + self.summaries + self.knowledge
    }
}

// A tombstone keeps the envelope (id, machine, stamp) and erases the content.
const WIPE_OBSERVATION: &str = "deleted = 1, title = '', input = '', response = '', \
    files = '[]', metadata = '{}', tags = '[]', pairs = ''";
const WIPE_SUMMARY: &str = "deleted = 1, text = '', key_points = '[]', tags = '[]'";
const WIPE_SESSION: &str = "deleted = 1, cwd = ''";
// A knowledge tombstone keeps its kind and an empty body (`KnowledgeBody::erased`).
const WIPE_KNOWLEDGE: &str = "deleted = 1, title = '', text = '', body = '{}', sha = '', \
    status = 'active'";

/// What to forget.
#[derive(Debug, Clone)]
pub enum ForgetTarget {
    /// One record (observation, summary or session) by id.
    Record(String),
    /// A session and everything in it, the summarizer's proposals from it included
    /// (not the knowledge recorded in it on purpose).
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

/// After erasures received from the central service: the same cleaning as a local
/// forget, so erased text lingers in neither the full-text indexes nor the WAL.
pub fn scrub_erased(store: &mut Store) -> Result<(), StoreError> {
    scrub_indexes(store)?;
    empty_wal(store);
    Ok(())
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
             INSERT INTO summaries_fts (summaries_fts) VALUES ('optimize');
             INSERT INTO knowledge_fts (knowledge_fts) VALUES ('optimize');",
        )?;
        Ok(())
    })
}

/// Copies the WAL into the database file and truncates it, so no earlier version of
/// a page lingers there. Every path that removes content calls it: a closing
/// connection checkpoints only when it is the store's last one, and the daemon
/// keeps one open. Best effort: a reader in another process (the daemon, a
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
            AnyRecord::Knowledge(k) => return forget_knowledge(store, "id", &k.id.to_string()),
        },
        ForgetTarget::Session(id) => ("session", views::session_of(store.conn(), id)?.to_string()),
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
    let mut counts = forget_where(store, col, &value, true)?;
    if col == "project_key" {
        counts.knowledge = forget_knowledge(store, "project_key", &value)?.knowledge;
    } else {
        counts.knowledge = forget_proposals(store, &value)?;
    }
    Ok(counts)
}

/// Tombstones what the summarizer proposed from a session (its memories tagged
/// [`PROPOSAL_TAG`], standing or superseded): they were read out of the session's
/// own events, so they go with it. What was decided or remembered in the session
/// on purpose, and a proposal someone confirmed (a new memory without the tag),
/// outlives it.
fn forget_proposals(store: &mut Store, session: &str) -> Result<usize, StoreError> {
    store.write(|w| {
        let stamp = w.tick().as_i64();
        let me = w.machine_id().to_string();
        Ok(w.tx().execute(
            &format!(
                "UPDATE knowledge SET {WIPE_KNOWLEDGE}, updated = ?2, machine_id = ?3
                 WHERE session_id = ?1 AND kind = 'memory' AND deleted = 0 AND {OWN_ROW}
                   AND EXISTS (SELECT 1 FROM json_each(knowledge.body, '$.tags') WHERE value = ?4)"
            ),
            params![session, stamp, me, PROPOSAL_TAG],
        )?)
    })
}

/// The session `target` forgets whole, if it forgets one (a session's id, or
/// `--session`), as it is before the forget.
pub fn whole_session(
    conn: &rusqlite::Connection,
    target: &ForgetTarget,
) -> Result<Option<Session>, StoreError> {
    let id = match target {
        ForgetTarget::Record(id) => match views::resolve(conn, id)? {
            AnyRecord::Session(s) => return Ok(Some(s)),
            _ => return Ok(None),
        },
        ForgetTarget::Session(id) => views::session_of(conn, id)?,
        ForgetTarget::Project(_) => return Ok(None),
    };
    records::get_session(conn, id)
}

/// Tombstones the knowledge records whose `column` (`id` or `project_key`, our
/// own names) equals `value`.
fn forget_knowledge(store: &mut Store, column: &str, value: &str) -> Result<Counts, StoreError> {
    store.write(|w| {
        let stamp = w.tick().as_i64();
        let me = w.machine_id().to_string();
        let knowledge = w.tx().execute(
            &format!("UPDATE knowledge SET {WIPE_KNOWLEDGE}, updated = ?2, machine_id = ?3 WHERE {column} = ?1 AND deleted = 0 AND {OWN_ROW}"),
            params![value, stamp, me],
        )?;
        Ok(Counts { knowledge, ..Counts::default() })
    })
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
        let remaining = records::observations_summarized(w.tx(), session)?;
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
            &format!("UPDATE summaries SET {WIPE_SUMMARY}, updated = ?2, machine_id = ?3 WHERE id = ?1 AND deleted = 0 AND {OWN_ROW}"),
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
                &format!("UPDATE observations SET {WIPE_OBSERVATION}, updated = ?2, machine_id = ?3 WHERE {column} = ?1 AND deleted = 0 AND {OWN_ROW}"),
                params![value, stamp, me],
            )?,
            ..Counts::default()
        };
        if whole {
            let session_col = if column == "session_id" { "id" } else { column };
            counts.summaries = tx.execute(
                &format!("UPDATE summaries SET {WIPE_SUMMARY}, updated = ?2, machine_id = ?3 WHERE {column} = ?1 AND deleted = 0 AND {OWN_ROW}"),
                params![value, stamp, me],
            )?;
            counts.sessions = tx.execute(
                &format!("UPDATE sessions SET {WIPE_SESSION}, updated = ?2, machine_id = ?3 WHERE {session_col} = ?1 AND deleted = 0 AND {OWN_ROW}"),
                params![value, stamp, me],
            )?;
        }
        Ok(counts)
    })
}

/// The key in `sync_state` of the newest creation time retention has removed
/// (ms): before it, this machine's memory may be incomplete and a search asks the
/// central service too (`ops::search`).
pub const PRUNED_UP_TO_KEY: &str = "pruned_up_to";

/// How long records are kept locally. Whether retention runs at all is decided in
/// one place, [`Retention::decide`]: with a central service, only
/// what it acknowledged goes; without one, nothing goes unless `local` is set.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionConfig {
    /// Prune even without a central service, where this machine holds the only
    /// copy (what goes is gone for good). Off by default.
    pub local: bool,
    /// Observations (raw events) older than this go.
    pub observations_days: i64,
    /// Summaries older than this go; their own rule, never tied to observations.
    pub summaries_days: i64,
    /// When set, records older than this get no vector made (a machine short of
    /// space or time). Unset, the default: every record kept gets one, so what
    /// words find, meaning finds too. A vector, once made, stays as long as its
    /// record.
    pub embeddings_days: Option<i64>,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        RetentionConfig {
            local: false,
            observations_days: 30,
            summaries_days: 365,
            embeddings_days: None,
        }
    }
}

/// Whether retention runs, and on what terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RetentionMode {
    /// No central service and no `[retention] local = true`: this machine holds
    /// the only copy, and nothing is removed.
    Off,
    /// A central service is configured: what it has acknowledged goes once old.
    AfterServer,
    /// No central service, but the user asked for local retention: old records go
    /// for good.
    Local,
}

/// The retention in force: the one place that decides whether records leave this
/// machine, used by `solaria prune`, the daemon and the status reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Retention {
    pub mode: RetentionMode,
    pub observations_days: i64,
    pub summaries_days: i64,
}

impl Retention {
    /// The retention `config` asks for on a machine with (or without) a server.
    pub fn decide(config: &RetentionConfig, server_configured: bool) -> Retention {
        let mode = match (server_configured, config.local) {
            (true, _) => RetentionMode::AfterServer,
            (false, true) => RetentionMode::Local,
            (false, false) => RetentionMode::Off,
        };
        Retention {
            mode,
            observations_days: config.observations_days,
            summaries_days: config.summaries_days,
        }
    }

    /// Whether anything can be removed.
    pub fn is_on(&self) -> bool {
        self.mode != RetentionMode::Off
    }

    /// One line: on or off, and why.
    pub fn describe(&self) -> String {
        let ages = format!(
            "observations after {} days, summaries after {} days",
            self.observations_days, self.summaries_days
        );
        match self.mode {
            RetentionMode::Off => "off: no central server, so this machine holds the only copy \
                 (set `[retention] local = true` to prune it anyway)"
                .to_string(),
            RetentionMode::AfterServer => {
                format!(
                    "on: {ages}, once the server has them (older memory stays searchable there)"
                )
            }
            RetentionMode::Local => {
                format!("on (local, `[retention] local = true`): {ages}, deleted for good")
            }
        }
    }
}

/// What a prune removes (or, dry, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Pruned {
    pub counts: Counts,
    /// Observations by kind (`prompt`, `tool_use`, …).
    pub by_kind: Vec<(String, usize)>,
    /// The oldest and newest creation time among the observations and summaries.
    pub oldest: Option<i64>,
    pub newest: Option<i64>,
}

/// The cut-offs and the "already on the server" condition, shared by the dry run
/// and the prune so that both mean the same records.
struct Cut {
    obs_cutoff: i64,
    sum_cutoff: i64,
    me: String,
    cursor: i64,
}

// "Pushed" = written elsewhere (the server has it) or acknowledged.
const OBSERVATIONS_WHERE: &str =
    "FROM observations WHERE created_at < ?1 AND (machine_id <> ?2 OR updated <= ?3)";
const SUMMARIES_WHERE: &str =
    "FROM summaries WHERE created_at < ?1 AND (machine_id <> ?2 OR updated <= ?3)";
const SESSIONS_WHERE: &str =
    "FROM sessions WHERE started_at < ?1 AND (machine_id <> ?2 OR updated <= ?3)
     AND NOT EXISTS (SELECT 1 FROM observations o WHERE o.session_id = sessions.id)
     AND NOT EXISTS (SELECT 1 FROM summaries s WHERE s.session_id = sessions.id)";

impl Cut {
    fn new(store: &Store, r: &Retention, now: UnixMillis) -> Result<Cut, StoreError> {
        let cursor = match r.mode {
            RetentionMode::AfterServer => {
                super::sync::cursor(store.conn(), super::sync::PUSH_CURSOR_KEY)?
            }
            _ => i64::MAX,
        };
        Ok(Cut {
            obs_cutoff: now.minus_days(r.observations_days).0,
            sum_cutoff: now.minus_days(r.summaries_days).0,
            me: store.machine_id().to_string(),
            cursor,
        })
    }

    /// What these cut-offs select, read without removing anything.
    fn measure(&self, conn: &rusqlite::Connection) -> Result<Pruned, StoreError> {
        let obs = params![self.obs_cutoff, self.me, self.cursor];
        let sum = params![self.sum_cutoff, self.me, self.cursor];
        let range = |sql: &str, p: &[&dyn rusqlite::ToSql]| {
            conn.query_row(sql, p, |r| {
                Ok((
                    r.get::<_, i64>(0)? as usize,
                    r.get::<_, Option<i64>>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                ))
            })
        };
        let (observations, o_min, o_max) = range(
            &format!("SELECT count(*), min(created_at), max(created_at) {OBSERVATIONS_WHERE}"),
            obs,
        )?;
        let (summaries, s_min, s_max) = range(
            &format!("SELECT count(*), min(created_at), max(created_at) {SUMMARIES_WHERE}"),
            sum,
        )?;
        let sessions: i64 =
            conn.query_row(&format!("SELECT count(*) {SESSIONS_WHERE}"), sum, |r| {
                r.get(0)
            })?;
        let by_kind = conn
            .prepare_cached(&format!(
                "SELECT kind, count(*) {OBSERVATIONS_WHERE} GROUP BY kind ORDER BY 2 DESC"
            ))?
            .query_map(obs, |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)))?
            .collect::<Result<_, _>>()?;
        Ok(Pruned {
            // Knowledge is never pruned with raw events.
            counts: Counts {
                sessions: sessions as usize,
                observations,
                summaries,
                knowledge: 0,
            },
            by_kind,
            oldest: [o_min, s_min].into_iter().flatten().min(),
            newest: [o_max, s_max].into_iter().flatten().max(),
        })
    }
}

/// What [`prune`] would remove now, removing nothing.
pub fn plan(store: &Store, r: &Retention, now: UnixMillis) -> Result<Pruned, StoreError> {
    if !r.is_on() {
        return Ok(Pruned::default());
    }
    Cut::new(store, r, now)?.measure(store.conn())
}

/// Deletes, on this machine only, observations and summaries past their retention
/// (each kind by its own age), and sessions left empty and past the summaries'
/// retention; nothing when retention is off. With a server, this machine's changes
/// it has not acknowledged are kept. A record's vector goes with it, never before.
/// The newest creation time removed is kept (`PRUNED_UP_TO_KEY`).
pub fn prune(store: &mut Store, r: &Retention, now: UnixMillis) -> Result<Pruned, StoreError> {
    if !r.is_on() {
        return Ok(Pruned::default());
    }
    let cut = Cut::new(store, r, now)?;
    let pruned = store.write(|w| {
        let pruned = cut.measure(w.tx())?;
        let tx = w.tx();
        let obs = params![cut.obs_cutoff, cut.me, cut.cursor];
        let sum = params![cut.sum_cutoff, cut.me, cut.cursor];
        tx.execute(&format!("DELETE {OBSERVATIONS_WHERE}"), obs)?;
        tx.execute(&format!("DELETE {SUMMARIES_WHERE}"), sum)?;
        tx.execute(&format!("DELETE {SESSIONS_WHERE}"), sum)?;
        if let Some(newest) = pruned.newest {
            let before: i64 = super::sync::state(tx, PRUNED_UP_TO_KEY)?
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            w.set_state(PRUNED_UP_TO_KEY, &newest.max(before).to_string())?;
        }
        Ok(pruned)
    })?;
    super::vectors::drop_removed(store)?;
    if pruned.counts.total() > 0 {
        scrub_indexes(store)?;
        empty_wal(store);
    }
    Ok(pruned)
}

/// The newest creation time local retention has removed, if it ever removed any.
pub fn pruned_up_to(conn: &rusqlite::Connection) -> Result<Option<UnixMillis>, StoreError> {
    Ok(super::sync::state(conn, PRUNED_UP_TO_KEY)?
        .and_then(|v| v.parse().ok())
        .map(UnixMillis))
}
