//! Applying a pushed batch (idempotent, last-write-wins), in one place above the
//! kinds it writes: each record checked and cleaned, the session rule and other
//! people's records settled, then sessions, observations and summaries (`records`)
//! and knowledge (`knowledge`) upserted, and the supersessions the knowledge settles
//! marked, in one transaction with its `memory_sync_log` line.
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
//! account therefore commit in seq order, and a reader of the feed (`feed`) that has
//! seen seq N will never later find a committed row below N: no change is skipped.

use super::Storage;
use super::base::{AccountId, PersonId, StorageError, Viewer};
use super::knowledge::{settle_supersession, upsert_knowledge};
use super::records::{upsert_observations, upsert_sessions, upsert_summaries};
use super::rows::RECORD_TABLES;
use super::sql;
use super::visibility::{own_sql, visible_sql};
use solaria_shared::hlc::MAX_DRIFT_MS;
use solaria_shared::sharing::may_name_session;
use solaria_shared::wire::{RecordOutcome, WireRecord};
use solaria_shared::{MachineId, UnixMillis};
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

/// Whether the version `new` replaces the stored `old` (see the module doc: erasure
/// is final, else last write wins). `rows::replaces_where!` says the same in SQL.
fn replaces(new: &WireRecord, old: &WireRecord) -> bool {
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
        let records: Vec<WireRecord> = records.into_iter().map(WireRecord::cleaned).collect();
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
            sql::query_scalar("SELECT change_seq FROM accounts WHERE id = $1 FOR UPDATE")
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
        sql::query("UPDATE accounts SET change_seq = $2 WHERE id = $1")
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
        sql::query(
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
        sql::query(
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
        let rows = sql::query(sqlx::AssertSqlSafe(format!(
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
    let rows = sql::query(
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
        let rows = sql::query(sqlx::AssertSqlSafe(format!(
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

#[cfg(test)]
mod tests {
    use super::validate;
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
}
