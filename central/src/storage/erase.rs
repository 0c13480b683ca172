//! Right to erasure (docs/DESIGN.md): turning a record, a session, a project or a machine's
//! data into tombstones that reach every edge, and removing a whole account.
//!
//! A tombstone keeps the sync envelope (id, session, project) and erases the content,
//! exactly as the edge's `forget` does: observations lose title, input, response,
//! files, metadata and tags; summaries their text, key points and tags; sessions their
//! working directory; knowledge records their body (`{}`), title and search text
//! (their kind stays, so the edge reads an erased body of that kind). It is a new version: `deleted = true`, stamped by the server's
//! hybrid logical clock later than every version it replaces (so it wins LWW on every
//! node), written as the calling machine, with a new seq in the account's change feed.
//!
//! The seqs are taken like `apply_batch` takes them: the account row is locked first
//! (`FOR UPDATE`, the same lock `apply_batch`'s `UPDATE accounts` takes) and
//! `change_seq` advanced in the same transaction, so the feed stays gap-free and
//! ordered by commit, and no batch can change the targets between reading and
//! rewriting them.
//!
//! Knowledge outlives the session it was recorded in: erasing a session (or a
//! session's id as a record) leaves the decisions, memories and commits written
//! during it, which are erased by their own id, their project or their machine.
//!
//! An account is erased by deleting its row: every table references it with
//! `ON DELETE CASCADE`, so nothing of it is left, and its machines' tokens stop
//! working because the machines are gone.

use super::Storage;
use super::base::{
    AccountId, KNOWLEDGE_TABLE, OBSERVATIONS_TABLE, PersonId, Role, SESSIONS_TABLE,
    SUMMARIES_TABLE, StorageError, audit,
};
use super::sql;
use super::visibility::{own_sql, shared_sql, visible_sql};
use serde::Serialize;
use solaria_shared::hlc::{Hlc, HlcClock};
use solaria_shared::{MachineId, UnixMillis};
use sqlx::{Postgres, Row, Transaction};
use uuid::Uuid;

/// What to turn into tombstones, within one account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErasureTarget {
    /// One record of any kind by id. A session's id erases the whole session (its
    /// observations and summary too, not its knowledge), as the edge's `forget` does.
    Record(Uuid),
    /// A session, its observations and its summary. Not the knowledge recorded in
    /// it: a decision outlives the conversation it was made in.
    Session(Uuid),
    /// Every record of a project, named by its key or its name.
    Project(String),
    /// Every record whose last writer is this machine (of the account).
    Machine(MachineId),
    /// Every record whose last writer is one of this person's machines: what they
    /// wrote (`person remove --erase`).
    Person(Uuid),
}

/// Whose records an erasure may turn into tombstones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The operator's (`solaria-central`): every record the target names.
    Operator,
    /// A person's, through one of their machines: their own records, and for an
    /// admin also those of the shared projects. A target naming only what they may
    /// see but not erase is refused with the reason; one naming nothing they may
    /// see reads as unknown.
    Person { person: PersonId, role: Role },
}

impl Reach {
    /// SQL: the row may be erased (`person`: the parameter bound to [`Reach::person`]).
    fn allowed_sql(self, person: &str) -> String {
        match self {
            Reach::Operator => "true".into(),
            Reach::Person {
                role: Role::Member, ..
            } => own_sql("", "$1", person),
            Reach::Person {
                role: Role::Admin, ..
            } => format!(
                "({} OR {})",
                own_sql("", "$1", person),
                shared_sql("", "$1")
            ),
        }
    }

    /// SQL: the row is one the eraser could read.
    fn visible_sql(self, person: &str) -> String {
        match self {
            Reach::Operator => "true".into(),
            Reach::Person { .. } => visible_sql("", "$1", person),
        }
    }

    fn person(self) -> Option<Uuid> {
        match self {
            Reach::Operator => None,
            Reach::Person { person, .. } => Some(person.0),
        }
    }
}

/// How many records became tombstones, per kind. Records that already were
/// tombstones are not counted (erasing twice is harmless).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ErasedCounts {
    pub sessions: u64,
    pub observations: u64,
    pub summaries: u64,
    /// Decisions, memories, links, commits, iterations and events.
    #[serde(default)]
    pub knowledge: u64,
}

impl ErasedCounts {
    /// All records erased.
    pub fn total(&self) -> u64 {
        self.sessions + self.observations + self.summaries + self.knowledge
    }
}

/// What an account held when it was removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct AccountErasure {
    pub sessions: u64,
    pub observations: u64,
    pub summaries: u64,
    #[serde(default)]
    pub knowledge: u64,
    pub machines: u64,
    pub enrollment_tokens: u64,
    pub sync_log: u64,
    pub context_injections: u64,
}

/// One record table and how to wipe a row of it.
struct Table {
    name: &'static str,
    wipe: &'static str,
}

const OBSERVATIONS: Table = Table {
    name: OBSERVATIONS_TABLE,
    wipe: "title = '', input = '', response = '', files = '[]'::jsonb, metadata = '{}'::jsonb, tags = '[]'::jsonb",
};
const SUMMARIES: Table = Table {
    name: SUMMARIES_TABLE,
    wipe: "summary = '', key_points = '[]'::jsonb, tags = '[]'::jsonb",
};
const SESSIONS: Table = Table {
    name: SESSIONS_TABLE,
    wipe: "cwd = ''",
};
const KNOWLEDGE: Table = Table {
    name: KNOWLEDGE_TABLE,
    wipe: "body = '{}'::jsonb, title = '', search_text = ''",
};

/// Every record table, in the order their tombstones take seqs.
const ALL_TABLES: [&Table; 4] = [&OBSERVATIONS, &SUMMARIES, &SESSIONS, &KNOWLEDGE];

/// The rows of one table a target selects: a SQL condition on `$2` (bound as text).
/// Written here, never built from input.
struct Selection {
    table: &'static Table,
    condition: &'static str,
}

fn selections(target: &ErasureTarget) -> Vec<Selection> {
    let all = |condition: &'static str| {
        ALL_TABLES
            .into_iter()
            .map(|table| Selection { table, condition })
            .collect::<Vec<_>>()
    };
    match target {
        // Not the knowledge recorded in the session (see the module doc).
        ErasureTarget::Session(_) => vec![
            Selection {
                table: &OBSERVATIONS,
                condition: "session_id = $2::uuid",
            },
            Selection {
                table: &SUMMARIES,
                condition: "session_id = $2::uuid",
            },
            Selection {
                table: &SESSIONS,
                condition: "id = $2::uuid",
            },
        ],
        ErasureTarget::Project(_) => all("(project_key = $2 OR project_name = $2)"),
        ErasureTarget::Machine(_) => all("machine_id = $2::uuid"),
        // Their personal records: what they wrote in shared projects stays the team's.
        ErasureTarget::Person(_) => all("machine_id IN (SELECT m.id FROM memory_machines m
                            WHERE m.account_id = $1 AND m.person_id = $2::uuid)
                        AND NOT project_key LIKE ANY(ARRAY(SELECT sp.like_pattern
                            FROM shared_projects sp WHERE sp.account_id = $1))"),
        // Resolved to one table (or to a session) before this is called.
        ErasureTarget::Record(_) => all("id = $2::uuid"),
    }
}

impl ErasureTarget {
    /// What it names, for the audit log.
    fn describe(&self) -> String {
        match self {
            ErasureTarget::Record(id) => format!("record {id}"),
            ErasureTarget::Session(id) => format!("session {id}"),
            ErasureTarget::Project(p) => {
                format!("project {}", p.chars().take(200).collect::<String>())
            }
            ErasureTarget::Machine(m) => format!("the records of machine {m}"),
            ErasureTarget::Person(p) => format!("the records of person {p}"),
        }
    }
}

fn parameter(target: &ErasureTarget) -> String {
    match target {
        ErasureTarget::Record(id) | ErasureTarget::Session(id) | ErasureTarget::Person(id) => {
            id.to_string()
        }
        ErasureTarget::Project(p) => p.clone(),
        ErasureTarget::Machine(m) => m.to_string(),
    }
}

impl Storage {
    /// Turns what `target` names within `reach` into tombstones written by `by` and
    /// returns how many records were erased, or `None` when the account holds
    /// nothing the target names that the eraser may see (an unknown id, another
    /// account's, or another person's personal record: all read the same).
    /// [`StorageError::NotAllowed`] when it names only records the eraser sees but
    /// may not erase (a member and a teammate's shared record).
    pub async fn erase(
        &self,
        account: AccountId,
        by: MachineId,
        target: &ErasureTarget,
        reach: Reach,
    ) -> Result<Option<ErasedCounts>, StorageError> {
        let mut tx = self.pool().begin().await?;
        // The feed's lock, before anything is read: see the module doc.
        let base: Option<i64> =
            sql::query_scalar("SELECT change_seq FROM accounts WHERE id = $1 FOR UPDATE")
                .bind(account.0)
                .fetch_optional(&mut *tx)
                .await?;
        let Some(base) = base else {
            return Ok(None);
        };

        let mut target = target.clone();
        let selections = match &target {
            ErasureTarget::Record(id) => match record_table(&mut tx, account, *id, reach).await? {
                None => return Ok(None),
                Some(t) if t == SESSIONS.name => {
                    target = ErasureTarget::Session(*id);
                    selections(&target)
                }
                Some(t) => selections(&target)
                    .into_iter()
                    .filter(|s| s.table.name == t)
                    .collect(),
            },
            ErasureTarget::Machine(m) => {
                let known: Option<i32> = sql::query_scalar(
                    "SELECT 1 FROM memory_machines WHERE id = $1 AND account_id = $2",
                )
                .bind(m.as_uuid())
                .bind(account.0)
                .fetch_optional(&mut *tx)
                .await?;
                if known.is_none() {
                    return Ok(None);
                }
                selections(&target)
            }
            _ => selections(&target),
        };
        let value = parameter(&target);

        // What exists (tombstones included, to tell "unknown" from "already erased"),
        // what of it the eraser may erase, and the latest version the tombstones
        // must beat.
        let (visible, allowed) = (reach.visible_sql("$3"), reach.allowed_sql("$3"));
        let (mut exists, mut erasable) = (false, false);
        let mut latest = Hlc::default();
        for s in &selections {
            let row = sql::query(sqlx::AssertSqlSafe(format!(
                "SELECT count(*) AS n, count(*) FILTER (WHERE {allowed}) AS mine,
                     max(updated) FILTER (WHERE NOT deleted AND {allowed}) AS latest
                 FROM {} WHERE account_id = $1 AND {} AND {visible}",
                s.table.name, s.condition
            )))
            .bind(account.0)
            .bind(&value)
            .bind(reach.person())
            .fetch_one(&mut *tx)
            .await?;
            exists |= row.try_get::<i64, _>("n")? > 0;
            erasable |= row.try_get::<i64, _>("mine")? > 0;
            if let Some(v) = row.try_get::<Option<i64>, _>("latest")? {
                latest = latest.max(Hlc::from_i64(v));
            }
        }
        if !exists {
            return Ok(None);
        }
        if !erasable {
            return Err(StorageError::NotAllowed(format!(
                "{} holds only records other people wrote in shared projects: erasing them is \
                 an admin's act (ask an admin of the account)",
                target.describe()
            )));
        }
        let stamp = HlcClock::resume(latest).tick(UnixMillis::now().0.max(0) as u64);

        let mut counts = ErasedCounts::default();
        let mut next = base;
        for s in &selections {
            let done = sql::query(sqlx::AssertSqlSafe(format!(
                "WITH targets AS (
                     SELECT id, row_number() OVER (ORDER BY seq, id) AS n FROM {table}
                     WHERE account_id = $1 AND NOT deleted AND {condition} AND {allowed}
                 )
                 UPDATE {table} AS t SET deleted = true, {wipe}, updated = $3, machine_id = $4,
                     seq = $5 + targets.n
                 FROM targets WHERE t.account_id = $1 AND t.id = targets.id",
                table = s.table.name,
                condition = s.condition,
                allowed = reach.allowed_sql("$6"),
                wipe = s.table.wipe,
            )))
            .bind(account.0)
            .bind(&value)
            .bind(stamp.as_i64())
            .bind(by.as_uuid())
            .bind(next)
            .bind(reach.person())
            .execute(&mut *tx)
            .await?;
            let n = done.rows_affected();
            next += n as i64;
            match s.table.name {
                t if t == SESSIONS.name => counts.sessions += n,
                t if t == OBSERVATIONS.name => counts.observations += n,
                t if t == KNOWLEDGE.name => counts.knowledge += n,
                _ => counts.summaries += n,
            }
        }
        if next != base {
            sql::query("UPDATE accounts SET change_seq = $2 WHERE id = $1")
                .bind(account.0)
                .bind(next)
                .execute(&mut *tx)
                .await?;
        }
        audit(
            &mut tx,
            account,
            &format!("machine {by}"),
            "records erased",
            &format!("{}: {} record(s)", target.describe(), counts.total()),
        )
        .await?;
        tx.commit().await?;
        Ok(Some(counts))
    }

    /// Removes an account and everything of it (records, machines, tokens, logs) and
    /// returns what it held. Its machines' credentials and JWTs stop working at once.
    pub async fn erase_account(&self, account: AccountId) -> Result<AccountErasure, StorageError> {
        let mut tx = self.pool().begin().await?;
        let found: Option<i32> =
            sql::query_scalar("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE")
                .bind(account.0)
                .fetch_optional(&mut *tx)
                .await?;
        if found.is_none() {
            return Err(StorageError::NotFound(format!("account {account}")));
        }
        let row = sql::query(
            "SELECT
                 (SELECT count(*) FROM memory_sessions WHERE account_id = $1) AS sessions,
                 (SELECT count(*) FROM memory_observations_remote WHERE account_id = $1) AS observations,
                 (SELECT count(*) FROM memory_summaries_remote WHERE account_id = $1) AS summaries,
                 (SELECT count(*) FROM memory_knowledge WHERE account_id = $1) AS knowledge,
                 (SELECT count(*) FROM memory_machines WHERE account_id = $1) AS machines,
                 (SELECT count(*) FROM enrollment_tokens WHERE account_id = $1) AS enrollment_tokens,
                 (SELECT count(*) FROM memory_sync_log WHERE account_id = $1) AS sync_log,
                 (SELECT count(*) FROM memory_context_injections WHERE account_id = $1) AS context_injections",
        )
        .bind(account.0)
        .fetch_one(&mut *tx)
        .await?;
        let n = |col: &str| -> Result<u64, sqlx::Error> {
            Ok(row.try_get::<i64, _>(col)?.max(0) as u64)
        };
        let held = AccountErasure {
            sessions: n("sessions")?,
            observations: n("observations")?,
            summaries: n("summaries")?,
            knowledge: n("knowledge")?,
            machines: n("machines")?,
            enrollment_tokens: n("enrollment_tokens")?,
            sync_log: n("sync_log")?,
            context_injections: n("context_injections")?,
        };
        // Every table references accounts ON DELETE CASCADE.
        sql::query("DELETE FROM accounts WHERE id = $1")
            .bind(account.0)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(held)
    }
}

/// Which record table holds `id` in the account, if any.
async fn record_table(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    id: Uuid,
    reach: Reach,
) -> Result<Option<&'static str>, StorageError> {
    for table in ALL_TABLES {
        let found: Option<i32> = sql::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT 1 FROM {} WHERE account_id = $1 AND id = $2 AND {}",
            table.name,
            reach.visible_sql("$3")
        )))
        .bind(account.0)
        .bind(id)
        .bind(reach.person())
        .fetch_optional(&mut **tx)
        .await?;
        if found.is_some() {
            return Ok(Some(table.name));
        }
    }
    Ok(None)
}
