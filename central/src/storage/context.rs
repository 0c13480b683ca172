//! What a project's context is made of: its newest live summaries and observations,
//! and the log of each context served.

use super::{AccountId, Storage, StorageError, key_condition};
use solaria_shared::{MachineId, SessionId, UnixMillis};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A summary line of a context.
#[derive(Debug, Clone)]
pub struct RecentSummary {
    pub session_id: SessionId,
    pub machine_id: MachineId,
    pub created_at: UnixMillis,
    pub text: String,
}

/// An observation line of a context.
#[derive(Debug, Clone)]
pub struct RecentObservation {
    pub id: Uuid,
    pub machine_id: MachineId,
    pub created_at: UnixMillis,
    pub title: String,
    pub error: bool,
}

impl Storage {
    /// The newest live summaries of the projects `keys`, at most `limit`.
    pub async fn recent_summaries(
        &self,
        account: AccountId,
        keys: &[String],
        limit: i64,
    ) -> Result<Vec<RecentSummary>, StorageError> {
        let sql = format!(
            "SELECT session_id, machine_id, created_at, summary FROM memory_summaries_remote
             WHERE account_id = $1 AND NOT deleted{}
             ORDER BY created_at DESC, id DESC LIMIT $3",
            key_condition("project_key", "$2", keys)
        );
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(account.0)
            .bind(keys)
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(RecentSummary {
                    session_id: SessionId::from_uuid(r.try_get("session_id")?),
                    machine_id: MachineId::from_uuid(r.try_get("machine_id")?),
                    created_at: UnixMillis(r.try_get("created_at")?),
                    text: r.try_get("summary")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StorageError::from)
    }

    /// The newest live observations of the projects `keys`, at most `limit`.
    pub async fn recent_observations(
        &self,
        account: AccountId,
        keys: &[String],
        limit: i64,
    ) -> Result<Vec<RecentObservation>, StorageError> {
        let sql = format!(
            "SELECT id, machine_id, created_at, title,
                    coalesce(metadata->>'error' = 'true', false) AS error
             FROM memory_observations_remote
             WHERE account_id = $1 AND NOT deleted{}
             ORDER BY created_at DESC, id DESC LIMIT $3",
            key_condition("project_key", "$2", keys)
        );
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(account.0)
            .bind(keys)
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(RecentObservation {
                    id: r.try_get("id")?,
                    machine_id: MachineId::from_uuid(r.try_get("machine_id")?),
                    created_at: UnixMillis(r.try_get("created_at")?),
                    title: r.try_get("title")?,
                    error: r.try_get("error")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StorageError::from)
    }

    /// Records that a context was served to `machine` (`memory_context_injections`).
    pub async fn log_context_injection(
        &self,
        account: AccountId,
        machine: MachineId,
        target_session: Option<&str>,
        sources: &[Uuid],
    ) -> Result<(), StorageError> {
        sqlx::query(
            "INSERT INTO memory_context_injections (account_id, machine_id, target_session_id, source_observations)
             VALUES ($1, $2, $3, $4)",
        )
        .bind(account.0)
        .bind(machine.as_uuid())
        .bind(target_session)
        .bind(sources)
        .execute(self.pool())
        .await?;
        Ok(())
    }
}
