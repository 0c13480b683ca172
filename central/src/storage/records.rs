//! Applying pushed batches (idempotent, last-write-wins) and reading the change feed.
//!
//! Which version is kept is decided by [`replaces`] (the shared rule,
//! `solaria_shared::RecordMeta::replaces`), mirrored in SQL by `rows::replaces_where!`
//! in every upsert:
//!
//! - **Erasure is final.** A tombstone (`deleted`) is never replaced by a live
//!   version: an erased id accepts no content ever again, however late its stamp, so
//!   a machine that had not yet pulled the erasure cannot bring the content back. Its
//!   push is answered `stale` with the tombstone as the winner, so it moves on
//!   instead of retrying. A tombstone replaces any live version, whatever the stamps;
//!   between two tombstones the later wins, so every node keeps the same one.
//! - **Otherwise last write wins**, by `solaria_shared::hlc::wins_over`: the later
//!   `(updated, machine_id)`, with UUIDs compared bytewise by both PostgreSQL and
//!   Rust, so a live record is only ever replaced by a version every node would also
//!   pick.
//!
//! The feed's order: each batch first increments its account's `change_seq` (taking
//! the account row's lock until commit) and numbers its rows from it. Batches of an
//! account therefore commit in seq order, and a reader that has seen seq N will never
//! later find a committed row below N: no change is skipped.

use super::base::{AccountId, KNOWLEDGE_TABLE, OBSERVATIONS_TABLE, PersonId, StorageError, Viewer};
use super::knowledge::{settle_supersession, upsert_knowledge};
use super::rows::{RECORD_TABLES, replaces_where};
use super::visibility::{own_sql, visible_sql};
use super::{Storage, read_snapshot};
use solaria_shared::hlc::MAX_DRIFT_MS;
use solaria_shared::private::strip_private;
use solaria_shared::redact::redact;
use solaria_shared::sharing::may_name_session;
use solaria_shared::wire::{Change, ChangesPage, RecordOutcome, WireRecord};
use solaria_shared::{MachineId, Observation, Session, Summary, UnixMillis};
use sqlx::{Postgres, Row, Transaction};
use std::collections::HashMap;
use uuid::Uuid;

/// What triggered a sync, as logged in `memory_sync_log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncKind {
    Batch,
    Manual,
    SessionEnd,
}

impl SyncKind {
    fn as_str(self) -> &'static str {
        match self {
            SyncKind::Batch => "batch",
            SyncKind::Manual => "manual",
            SyncKind::SessionEnd => "session_end",
        }
    }
}

/// A pushed record as it may reach the database, cleaned once more whatever the
/// edge did: private spans stripped, then secrets redacted, in every user-text
/// field (`WireRecord::map_user_text` is the one list of them).
fn cleaned(mut record: WireRecord) -> WireRecord {
    record.map_user_text(
        &mut |text| redact(&strip_private(text)).into_owned(),
        &mut |json| {
            solaria_shared::private::strip_private_json(json);
            solaria_shared::redact::redact_json(json);
        },
    );
    record
}

/// A list as the database keeps it (a JSON array).
fn json_list(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

/// Whether the version `new` replaces the stored `old` (see the module doc: erasure
/// is final, else last write wins). `rows::replaces_where!` says the same in SQL.
pub fn replaces(new: &WireRecord, old: &WireRecord) -> bool {
    new.meta().replaces(old.meta())
}

/// Why a record is refused before any storage happens.
fn validate(record: &WireRecord, pusher: MachineId, now: UnixMillis) -> Option<String> {
    if record.machine_id() != pusher {
        return Some(format!(
            "machine_id {} is not the pushing machine {pusher}: a machine pushes only its own versions",
            record.machine_id()
        ));
    }
    let limit = (now.0.max(0) as u64).saturating_add(MAX_DRIFT_MS);
    if record.updated().physical_ms() > limit {
        return Some(format!(
            "version stamp {} is ahead of the server's clock by more than {} s; fix this machine's clock and sync again",
            record.updated(),
            MAX_DRIFT_MS / 1000
        ));
    }
    // A record no store may keep (a commit whose sha could reach git as an option
    // or an expression): the one rule is the shared `Knowledge::refused_because`.
    if let WireRecord::Knowledge(k) = record {
        return k.refused_because();
    }
    None
}

impl Storage {
    /// Applies a pushed batch in one transaction and answers per record, in order:
    /// applied (also for a replay of a version already stored), stale (with the
    /// winning version: a later one, or the tombstone of an erased id), or rejected
    /// (with the reason). Logs one `memory_sync_log` row.
    pub async fn apply_batch(
        &self,
        viewer: Viewer,
        pusher: MachineId,
        records: Vec<WireRecord>,
        kind: SyncKind,
    ) -> Result<Vec<RecordOutcome>, StorageError> {
        let started = std::time::Instant::now();
        let now = UnixMillis::now();
        let records: Vec<WireRecord> = records.into_iter().map(cleaned).collect();
        let mut outcomes: Vec<Option<RecordOutcome>> = vec![None; records.len()];
        // Within one batch the same id may appear twice: keep the one stored last.
        let mut best: HashMap<Uuid, usize> = HashMap::new();
        for (i, r) in records.iter().enumerate() {
            if let Some(reason) = validate(r, pusher, now) {
                outcomes[i] = Some(RecordOutcome::Rejected { id: r.id(), reason });
                continue;
            }
            match best.get(&r.id()) {
                Some(&j) if !replaces(r, &records[j]) => {}
                _ => {
                    best.insert(r.id(), i);
                }
            }
        }
        let account = viewer.account;
        let mut tx = self.pool().begin().await?;
        // The feed's lock first: no other batch writes these ids until commit.
        let base: i64 =
            sqlx::query_scalar("SELECT change_seq FROM accounts WHERE id = $1 FOR UPDATE")
                .bind(account.0)
                .fetch_one(&mut *tx)
                .await?;
        let ids: Vec<Uuid> = best.keys().copied().collect();
        let others = written_by_others(&mut tx, viewer, &ids).await?;
        // The session rule: a record naming another person's session is refused,
        // whatever else it says.
        let named: Vec<Uuid> = best
            .values()
            .filter(|&&i| !others.contains_key(&records[i].id()))
            .filter_map(|&i| records[i].session())
            .map(|s| *s.as_uuid())
            .collect();
        let claims = session_claims(&mut tx, account, &named).await?;
        let mut chosen: Vec<usize> = Vec::new();
        for &i in best.values() {
            let record = &records[i];
            if others.contains_key(&record.id()) {
                continue;
            }
            let refusal = record.session().and_then(|session| {
                let claim = claims.get(session.as_uuid())?;
                claim.refuses(record, viewer.person).then(|| {
                    format!(
                        "it names session {session}, another person's session: a record belongs \
                         only to a session of its own person"
                    )
                })
            });
            match refusal {
                Some(reason) => {
                    outcomes[i] = Some(RecordOutcome::Rejected {
                        id: record.id(),
                        reason,
                    })
                }
                None => chosen.push(i),
            }
        }
        chosen.sort_unstable();
        sqlx::query("UPDATE accounts SET change_seq = $2 WHERE id = $1")
            .bind(account.0)
            .bind(base + chosen.len() as i64)
            .execute(&mut *tx)
            .await?;
        let mut seq = base;
        let (mut sessions, mut observations, mut summaries) = (Vec::new(), Vec::new(), Vec::new());
        let mut knowledge = Vec::new();
        for &i in &chosen {
            seq += 1;
            match &records[i] {
                WireRecord::Session(s) => sessions.push((seq, s)),
                WireRecord::Observation(o) => observations.push((seq, o)),
                WireRecord::Summary(s) => summaries.push((seq, s)),
                WireRecord::Knowledge(k) => knowledge.push((seq, k)),
            }
        }
        let mut applied: Vec<Uuid> = Vec::new();
        applied.extend(upsert_sessions(&mut tx, account, &sessions).await?);
        applied.extend(upsert_observations(&mut tx, account, &observations).await?);
        applied.extend(upsert_summaries(&mut tx, account, &summaries).await?);
        let written = upsert_knowledge(&mut tx, account, &knowledge).await?;
        let settled: Vec<&solaria_shared::Knowledge> = knowledge
            .iter()
            .map(|(_, k)| *k)
            .filter(|k| written.contains(k.id.as_uuid()))
            .collect();
        settle_supersession(&mut tx, viewer, &settled).await?;
        applied.extend(written);

        // Not applied: either a replay of the stored version, or a newer one won.
        let missing: Vec<Uuid> = chosen
            .iter()
            .map(|&i| records[i].id())
            .filter(|id| !applied.contains(id))
            .chain(others.keys().copied())
            .collect();
        let stored = fetch_by_ids(&mut tx, account, &missing).await?;
        for (i, r) in records.iter().enumerate() {
            if outcomes[i].is_some() {
                continue;
            }
            let id = r.id();
            // Another copy of a record the session rule refused: refused alike.
            if let Some(Some(RecordOutcome::Rejected { reason, .. })) =
                best.get(&id).map(|&j| outcomes[j].clone())
            {
                outcomes[i] = Some(RecordOutcome::Rejected { id, reason });
                continue;
            }
            // Another person's record: their version stands, as a loss under
            // last-write-wins would (the pusher's machine takes it back and notes
            // the conflict); one the pusher may no longer see is refused.
            if let Some(&visible) = others.get(&id) {
                outcomes[i] = Some(match stored.get(&id) {
                    Some(theirs) if visible => RecordOutcome::Stale {
                        id,
                        winner: Box::new(theirs.clone()),
                    },
                    _ => RecordOutcome::Rejected {
                        id,
                        reason: format!(
                            "id {id} names a record another person wrote: a machine changes \
                             only its own person's records"
                        ),
                    },
                });
                continue;
            }
            let is_chosen = best.get(&id) == Some(&i);
            outcomes[i] = Some(if is_chosen && applied.contains(&id) {
                RecordOutcome::Applied { id }
            } else {
                let winner = if is_chosen {
                    stored.get(&id).cloned()
                } else {
                    Some(records[best[&id]].clone())
                };
                match winner {
                    Some(w) if w.updated() == r.updated() && w.machine_id() == r.machine_id() => {
                        RecordOutcome::Applied { id }
                    }
                    Some(w) if w.type_name() != r.type_name() => RecordOutcome::Rejected {
                        id,
                        reason: format!("id {id} already names a {} record", w.type_name()),
                    },
                    Some(winner) => RecordOutcome::Stale {
                        id,
                        winner: Box::new(winner),
                    },
                    None => RecordOutcome::Rejected {
                        id,
                        reason: "not stored (unknown reason); retry the sync".into(),
                    },
                }
            });
        }
        let outcomes: Vec<RecordOutcome> = outcomes.into_iter().flatten().collect();
        let rejected = outcomes
            .iter()
            .filter(|o| matches!(o, RecordOutcome::Rejected { .. }))
            .count();
        let status = match rejected {
            0 => "success",
            n if n == outcomes.len() => "failed",
            _ => "partial",
        };
        sqlx::query(
            "INSERT INTO memory_sync_log (account_id, machine_id, sync_type, observations_count, sync_duration_ms, status)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(account.0)
        .bind(pusher.as_uuid())
        .bind(kind.as_str())
        .bind(records.len() as i32)
        .bind(started.elapsed().as_millis().min(i32::MAX as u128) as i32)
        .bind(status)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE memory_machines SET last_sync_at = now() WHERE id = $1 AND account_id = $2",
        )
        .bind(pusher.as_uuid())
        .bind(account.0)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(outcomes)
    }
}

async fn upsert_sessions(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    rows: &[(i64, &Session)],
) -> Result<Vec<Uuid>, StorageError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Uuid> = rows.iter().map(|(_, s)| *s.id.as_uuid()).collect();
    let ids_q = sqlx::query_scalar(concat!(
        "INSERT INTO memory_sessions AS t (account_id, id, machine_id, updated, deleted, seq, project_key,
             project_name, agent, agent_session_id, cwd, source, started_at, ended_at)
         SELECT $1, u.* FROM UNNEST($2::uuid[], $3::uuid[], $4::int8[], $5::bool[], $6::int8[], $7::text[],
             $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::int8[], $14::int8[])
             AS u(id, machine_id, updated, deleted, seq, project_key, project_name, agent, agent_session_id,
                  cwd, source, started_at, ended_at)
         ON CONFLICT (account_id, id) DO UPDATE SET machine_id = EXCLUDED.machine_id,
             updated = EXCLUDED.updated, deleted = EXCLUDED.deleted, seq = EXCLUDED.seq,
             project_key = EXCLUDED.project_key, project_name = EXCLUDED.project_name,
             agent = EXCLUDED.agent, agent_session_id = EXCLUDED.agent_session_id, cwd = EXCLUDED.cwd,
             source = EXCLUDED.source, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at",
        replaces_where!(),
        " RETURNING id"
    ))
    .bind(account.0)
    .bind(&ids)
    .bind(rows.iter().map(|(_, s)| *s.meta.machine_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.meta.updated.as_i64()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.meta.deleted).collect::<Vec<_>>())
    .bind(rows.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.project.key.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.project.name.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.agent.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.agent_session_id.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.cwd.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.source.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.started_at.0).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.ended_at.map(|t| t.0)).collect::<Vec<_>>())
    .fetch_all(&mut **tx)
    .await?;
    Ok(ids_q)
}

async fn upsert_observations(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    rows: &[(i64, &Observation)],
) -> Result<Vec<Uuid>, StorageError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let col =
        |f: &dyn Fn(&Observation) -> String| rows.iter().map(|(_, o)| f(o)).collect::<Vec<_>>();
    let ids = sqlx::query_scalar(concat!(
        "INSERT INTO memory_observations_remote AS t (account_id, id, session_id, machine_id, updated,
             deleted, seq, project_key, project_name, kind, tool_name, title, input, response, files,
             metadata, tags, created_at)
         SELECT $1, u.id, u.session_id, u.machine_id, u.updated, u.deleted, u.seq, u.project_key,
             u.project_name, u.kind, u.tool_name, u.title, u.input, u.response, u.files::jsonb,
             u.metadata::jsonb, u.tags::jsonb, u.created_at
         FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::int8[], $6::bool[], $7::int8[], $8::text[],
             $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[],
             $16::text[], $17::text[], $18::int8[])
             AS u(id, session_id, machine_id, updated, deleted, seq, project_key, project_name, kind,
                  tool_name, title, input, response, files, metadata, tags, created_at)
         ON CONFLICT (account_id, id) DO UPDATE SET session_id = EXCLUDED.session_id,
             machine_id = EXCLUDED.machine_id, updated = EXCLUDED.updated, deleted = EXCLUDED.deleted,
             seq = EXCLUDED.seq, project_key = EXCLUDED.project_key, project_name = EXCLUDED.project_name,
             kind = EXCLUDED.kind, tool_name = EXCLUDED.tool_name, title = EXCLUDED.title,
             input = EXCLUDED.input, response = EXCLUDED.response, files = EXCLUDED.files,
             metadata = EXCLUDED.metadata, tags = EXCLUDED.tags, created_at = EXCLUDED.created_at",
        replaces_where!(),
        " RETURNING id"
    ))
    .bind(account.0)
    .bind(rows.iter().map(|(_, o)| *o.id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, o)| *o.session_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, o)| *o.meta.machine_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, o)| o.meta.updated.as_i64()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, o)| o.meta.deleted).collect::<Vec<_>>())
    .bind(rows.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())
    .bind(col(&|o| o.project.key.clone()))
    .bind(col(&|o| o.project.name.clone()))
    .bind(col(&|o| o.kind.as_str().to_string()))
    .bind(rows.iter().map(|(_, o)| o.tool_name.clone()).collect::<Vec<_>>())
    .bind(col(&|o| o.title.clone()))
    .bind(col(&|o| o.input.clone()))
    .bind(col(&|o| o.response.clone()))
    .bind(col(&|o| json_list(&o.files)))
    .bind(col(&|o| o.metadata.to_string()))
    .bind(col(&|o| json_list(&o.tags)))
    .bind(rows.iter().map(|(_, o)| o.created_at.0).collect::<Vec<_>>())
    .fetch_all(&mut **tx)
    .await?;
    Ok(ids)
}

async fn upsert_summaries(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    rows: &[(i64, &Summary)],
) -> Result<Vec<Uuid>, StorageError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids = sqlx::query_scalar(concat!(
        "INSERT INTO memory_summaries_remote AS t (account_id, id, session_id, machine_id, updated,
             deleted, seq, project_key, project_name, summary, key_points, tags, observations_count,
             created_at)
         SELECT $1, u.id, u.session_id, u.machine_id, u.updated, u.deleted, u.seq, u.project_key,
             u.project_name, u.summary, u.key_points::jsonb, u.tags::jsonb, u.observations_count,
             u.created_at
         FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::int8[], $6::bool[], $7::int8[], $8::text[],
             $9::text[], $10::text[], $11::text[], $12::text[], $13::int4[], $14::int8[])
             AS u(id, session_id, machine_id, updated, deleted, seq, project_key, project_name, summary,
                  key_points, tags, observations_count, created_at)
         ON CONFLICT (account_id, id) DO UPDATE SET session_id = EXCLUDED.session_id,
             machine_id = EXCLUDED.machine_id, updated = EXCLUDED.updated, deleted = EXCLUDED.deleted,
             seq = EXCLUDED.seq, project_key = EXCLUDED.project_key, project_name = EXCLUDED.project_name,
             summary = EXCLUDED.summary, key_points = EXCLUDED.key_points, tags = EXCLUDED.tags,
             observations_count = EXCLUDED.observations_count, created_at = EXCLUDED.created_at",
        replaces_where!(),
        " RETURNING id"
    ))
    .bind(account.0)
    .bind(rows.iter().map(|(_, s)| *s.id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| *s.session_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| *s.meta.machine_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.meta.updated.as_i64()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.meta.deleted).collect::<Vec<_>>())
    .bind(rows.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.project.key.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.project.name.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.text.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| json_list(&s.key_points)).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| json_list(&s.tags)).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.observation_count as i32).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.created_at.0).collect::<Vec<_>>())
    .fetch_all(&mut **tx)
    .await?;
    Ok(ids)
}

/// The record types a reader of the change feed (or of restore) can parse beyond
/// the first release's three: an edge of that release parses only sessions,
/// observations and summaries, and would fail on a page holding anything else, so
/// newer types are sent only to a reader that names them (`types=knowledge`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeedTypes {
    pub knowledge: bool,
    /// Teammates' observations of shared projects too (`team_observations`); by
    /// default a machine pulls only its own person's, and reaches the rest through
    /// remote search.
    pub team_observations: bool,
}

impl FeedTypes {
    /// Reads a `types` parameter: comma-separated wire type names. Names this
    /// server does not store are ignored (a newer edge may ask for more than an
    /// older server has; `TokenResponse::types` tells it what there is).
    pub fn parse(types: Option<&str>) -> FeedTypes {
        let mut out = FeedTypes::default();
        for name in types.unwrap_or("").split(',').map(str::trim) {
            if name == solaria_shared::wire::KNOWLEDGE_TYPE {
                out.knowledge = true;
            }
            if name == solaria_shared::wire::TEAM_OBSERVATIONS {
                out.team_observations = true;
            }
        }
        out
    }

    fn includes(self, table: &str) -> bool {
        table != KNOWLEDGE_TABLE || self.knowledge
    }

    /// Which of `table`'s rows the feed carries to `viewer`'s machines: what they
    /// may see (`visibility`), less teammates' observations unless asked for. For
    /// [`changes`]'s statement: `$1` the account, `$4` the viewer's person.
    fn condition(self, table: &str) -> String {
        if table == OBSERVATIONS_TABLE && !self.team_observations {
            own_sql("", "$1", "$4")
        } else {
            visible_sql("", "$1", "$4")
        }
    }
}

/// Those of `ids` already stored (any kind) whose live version another person's
/// machine wrote, not the pusher's to change, and whether the pusher may see each.
/// A tombstone is left to last-write-wins (erasure is final, and its answer,
/// `stale` with the tombstone, shows nothing).
async fn written_by_others(
    tx: &mut Transaction<'_, Postgres>,
    pusher: Viewer,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, bool>, StorageError> {
    let mut found = HashMap::new();
    if ids.is_empty() {
        return Ok(found);
    }
    for (table, _, _) in RECORD_TABLES {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT id, {visible} AS visible FROM {table}
             WHERE account_id = $1 AND id = ANY($2) AND NOT deleted AND NOT {own}",
            own = own_sql("", "$1", "$3"),
            visible = visible_sql("", "$1", "$3"),
        )))
        .bind(pusher.account.0)
        .bind(ids)
        .bind(pusher.person.0)
        .fetch_all(&mut **tx)
        .await?;
        for row in &rows {
            found.insert(row.try_get("id")?, row.try_get("visible")?);
        }
    }
    Ok(found)
}

/// Whose a session is, as far as the account's stored records say.
#[derive(Debug, Default)]
struct SessionClaim {
    /// The person whose machine wrote its live session record, once it arrived.
    owner: Option<PersonId>,
    /// The people whose live records name it.
    naming: Vec<PersonId>,
}

impl SessionClaim {
    /// Whether `record`, pushed by a machine of `pusher`, names this session
    /// against the session rule (`sharing::may_name_session`). Once the session
    /// record is here, it decides. Before it arrives, records of the session may
    /// come first (the feed lists a record at its latest version, and a session is
    /// stamped again when it ends), so they are taken; but no session record takes
    /// an id that only other people's records name: a teammate who read the id of
    /// someone's session in the feed cannot open it as his. (Their own session
    /// record, refused once behind a claim made with an id learnt elsewhere, goes
    /// through at the next sync, once their records name it.)
    fn refuses(&self, record: &WireRecord, pusher: PersonId) -> bool {
        match (&self.owner, record) {
            (Some(owner), _) => !may_name_session(&pusher, owner),
            (None, WireRecord::Session(_)) => {
                !self.naming.is_empty() && !self.naming.iter().any(|p| may_name_session(&pusher, p))
            }
            (None, _) => false,
        }
    }
}

/// What the account holds of each of `sessions`: the writer of its live session
/// record, and who wrote the live records naming it. An erased session has no
/// owner left (its tombstone is written as whoever erased it): what its own
/// machines still push of it is taken, and never shown with the erased session.
async fn session_claims(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    sessions: &[Uuid],
) -> Result<HashMap<Uuid, SessionClaim>, StorageError> {
    let mut claims: HashMap<Uuid, SessionClaim> = HashMap::new();
    if sessions.is_empty() {
        return Ok(claims);
    }
    let rows = sqlx::query(
        "SELECT DISTINCT c.sid, c.is_session, m.person_id FROM (
             SELECT id AS sid, machine_id, true AS is_session FROM memory_sessions
             WHERE account_id = $1 AND id = ANY($2) AND NOT deleted
             UNION ALL SELECT session_id, machine_id, false FROM memory_observations_remote
             WHERE account_id = $1 AND session_id = ANY($2) AND NOT deleted
             UNION ALL SELECT session_id, machine_id, false FROM memory_summaries_remote
             WHERE account_id = $1 AND session_id = ANY($2) AND NOT deleted
             UNION ALL SELECT session_id, machine_id, false FROM memory_knowledge
             WHERE account_id = $1 AND session_id = ANY($2) AND NOT deleted
         ) AS c JOIN memory_machines m ON m.id = c.machine_id",
    )
    .bind(account.0)
    .bind(sessions)
    .fetch_all(&mut **tx)
    .await?;
    for row in &rows {
        let claim = claims.entry(row.try_get("sid")?).or_default();
        let person = PersonId(row.try_get("person_id")?);
        if row.try_get("is_session")? {
            claim.owner = Some(person);
        } else {
            claim.naming.push(person);
        }
    }
    Ok(claims)
}

/// The stored versions of `ids` (any kind) in one account.
async fn fetch_by_ids(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, WireRecord>, StorageError> {
    let mut found = HashMap::new();
    if ids.is_empty() {
        return Ok(found);
    }
    for (table, cols, map) in RECORD_TABLES {
        // Table and column names come from the constants above, never from input.
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {cols} FROM {table} WHERE account_id = $1 AND id = ANY($2)"
        )))
        .bind(account.0)
        .bind(ids)
        .fetch_all(&mut **tx)
        .await?;
        for row in &rows {
            let record = map(row)?;
            found.insert(record.id(), record);
        }
    }
    Ok(found)
}

/// How many of a table's feed positions one page looks at, per change it may hold:
/// a page's cost is bounded whatever share of the account the viewer sees.
const SCAN_PER_CHANGE: usize = 8;

/// The changes after `since` that `viewer`'s machines receive, oldest first, at
/// most `limit`, of the first release's types and of the newer ones in `types`.
/// Changes of types left out, or that the viewer does not receive, are skipped, not
/// waited for: `next` may pass them.
///
/// A page looks at most `limit × SCAN_PER_CHANGE` positions of each table: where a
/// table holds more, the page stops at the lowest position some table's look ended
/// on (its horizon) and says `more`, so that a member who sees little of a big
/// account walks the feed in bounded steps rather than reading it whole per page.
pub async fn changes(
    storage: &Storage,
    viewer: Viewer,
    since: i64,
    limit: usize,
    types: FeedTypes,
) -> Result<ChangesPage, StorageError> {
    let scan = (limit.max(1) * SCAN_PER_CHANGE) as i64;
    // One snapshot for the tables: read separately, a batch committing between two
    // reads could put its lower seqs behind the cursor.
    let mut tx = read_snapshot(storage).await?;
    let mut horizon = i64::MAX;
    for (table, _, _) in RECORD_TABLES {
        if !types.includes(table) {
            continue;
        }
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) AS n, max(seq) AS last FROM (
                 SELECT seq FROM {table} WHERE account_id = $1 AND seq > $2 ORDER BY seq LIMIT $3
             ) AS w"
        )))
        .bind(viewer.account.0)
        .bind(since)
        .bind(scan)
        .fetch_one(&mut *tx)
        .await?;
        if row.try_get::<i64, _>("n")? == scan
            && let Some(last) = row.try_get::<Option<i64>, _>("last")?
        {
            horizon = horizon.min(last);
        }
    }
    let mut all: Vec<Change> = Vec::new();
    for (table, cols, map) in RECORD_TABLES {
        if !types.includes(table) {
            continue;
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {cols} FROM {table}
             WHERE account_id = $1 AND seq > $2 AND seq <= $5 AND {shown}
             ORDER BY seq LIMIT $3",
            shown = types.condition(table)
        )))
        .bind(viewer.account.0)
        .bind(since)
        .bind(limit as i64 + 1)
        .bind(viewer.person.0)
        .bind(horizon)
        .fetch_all(&mut *tx)
        .await?;
        for row in &rows {
            all.push(Change {
                seq: row.try_get("seq")?,
                record: map(row)?,
            });
        }
    }
    tx.commit().await?;
    all.sort_by_key(|c| c.seq);
    let (next, more) = if all.len() > limit {
        all.truncate(limit);
        (all.last().map_or(since, |c| c.seq), true)
    } else if horizon < i64::MAX {
        (horizon, true)
    } else {
        (all.last().map_or(since, |c| c.seq), false)
    };
    Ok(ChangesPage {
        changes: all,
        next,
        more,
        embeddings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::{FeedTypes, validate};
    use solaria_shared::knowledge::Commit;
    use solaria_shared::wire::WireRecord;
    use solaria_shared::{
        Hlc, Knowledge, KnowledgeBody, KnowledgeId, MachineId, Project, UnixMillis,
    };

    #[test]
    fn a_commit_whose_sha_is_not_a_full_object_name_is_refused_with_the_reason() {
        let machine = MachineId::new();
        let now = UnixMillis::now();
        let commit = |sha: &str| {
            WireRecord::Knowledge(Knowledge::new(
                KnowledgeId::new(),
                machine,
                Hlc::new(now.0 as u64, 0),
                Project {
                    key: "github.com/acme/api".into(),
                    name: "api".into(),
                },
                None,
                KnowledgeBody::Commit(Commit {
                    sha: sha.into(),
                    ..Commit::default()
                }),
            ))
        };
        let honest = commit("0123456789abcdef0123456789abcdef01234567");
        assert_eq!(validate(&honest, machine, now), None);
        let reason =
            validate(&commit("--output=/home/ada/.config/x"), machine, now).expect("refused");
        assert!(
            reason.contains("--output=/home/ada/.config/x") && reason.contains("full object name"),
            "{reason}"
        );
        assert!(
            validate(&commit("0123456"), machine, now).is_some(),
            "abbreviated"
        );
    }

    #[test]
    fn only_a_reader_that_names_knowledge_gets_it() {
        assert!(!FeedTypes::parse(None).knowledge);
        assert!(!FeedTypes::parse(Some("")).knowledge);
        assert!(!FeedTypes::parse(Some("comments")).knowledge);
        assert!(FeedTypes::parse(Some("knowledge")).knowledge);
        assert!(FeedTypes::parse(Some("comments, knowledge")).knowledge);
        assert!(!FeedTypes::default().includes("memory_knowledge"));
        assert!(FeedTypes::default().includes("memory_sessions"));
    }
}
