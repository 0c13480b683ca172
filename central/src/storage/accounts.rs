//! Accounts, enrollment tokens and machines: who may sync, and as whom.

use super::{Storage, StorageError};
use crate::secret::{hash_token, random_token};
use serde::Serialize;
use solaria_shared::MachineId;
use solaria_shared::wire::EnrollResponse;
use sqlx::Row;
use std::fmt;
use uuid::Uuid;

/// One account (tenant): the unit of isolation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct AccountId(pub Uuid);

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Why an enrollment was refused. Deliberately vague towards the caller: an
/// unknown, used or expired token all read the same.
#[derive(Debug, thiserror::Error)]
pub enum EnrollmentError {
    #[error(
        "the enrollment token is unknown, expired or already used; ask the operator for a new one"
    )]
    BadToken,
    /// Answered as a request that is not valid, never as what it is: whether an
    /// id is enrolled, and in which account, is no one's business (`api::enroll`).
    #[error("a machine is already enrolled with this machine id, in this account or another")]
    MachineTaken,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A machine as listed to operators.
#[derive(Debug, Clone, Serialize)]
pub struct MachineInfo {
    pub id: MachineId,
    pub account_id: Uuid,
    pub name: String,
    pub first_seen_at: chrono::DateTime<chrono::Utc>,
    pub last_sync_at: Option<chrono::DateTime<chrono::Utc>>,
    pub revoked_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Whether a machine may act now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineStatus {
    Active(AccountId),
    Revoked,
    Unknown,
}

impl Storage {
    /// Creates an account; its name must be new.
    pub async fn create_account(&self, name: &str) -> Result<AccountId, StorageError> {
        let id = Uuid::now_v7();
        let done = sqlx::query(
            "INSERT INTO accounts (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(id)
        .bind(name)
        .execute(self.pool())
        .await?;
        if done.rows_affected() == 0 {
            return Err(StorageError::Conflict(format!(
                "an account named {name:?} already exists"
            )));
        }
        Ok(AccountId(id))
    }

    /// The account with this name or id.
    pub async fn find_account(&self, name_or_id: &str) -> Result<AccountId, StorageError> {
        let id: Option<Uuid> =
            sqlx::query_scalar("SELECT id FROM accounts WHERE name = $1 OR id::text = $1")
                .bind(name_or_id)
                .fetch_optional(self.pool())
                .await?;
        id.map(AccountId)
            .ok_or_else(|| StorageError::NotFound(format!("account {name_or_id:?}")))
    }

    /// A new single-use enrollment token for `account`, valid for `ttl`. Only its
    /// hash is stored; the token is returned once.
    pub async fn create_enrollment_token(
        &self,
        account: AccountId,
        ttl: std::time::Duration,
    ) -> Result<String, StorageError> {
        let token = random_token("solenroll");
        sqlx::query(
            "INSERT INTO enrollment_tokens (id, account_id, token_hash, expires_at)
             VALUES ($1, $2, $3, now() + make_interval(secs => $4))",
        )
        .bind(Uuid::now_v7())
        .bind(account.0)
        .bind(hash_token(&token))
        .bind(ttl.as_secs_f64())
        .execute(self.pool())
        .await?;
        Ok(token)
    }

    /// Registers a machine with an enrollment token: a new machine id and a machine
    /// credential (returned once, stored hashed). The token is spent.
    pub async fn enroll(
        &self,
        token: &str,
        name: &str,
        machine: Option<MachineId>,
    ) -> Result<EnrollResponse, EnrollmentError> {
        let mut tx = self.pool().begin().await.map_err(StorageError::from)?;
        let account: Option<Uuid> = sqlx::query_scalar(
            "UPDATE enrollment_tokens SET used_at = now()
             WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
             RETURNING account_id",
        )
        .bind(hash_token(token))
        .fetch_optional(&mut *tx)
        .await
        .map_err(StorageError::from)?;
        let account = account.ok_or(EnrollmentError::BadToken)?;
        let machine = machine.unwrap_or_default();
        let credential = random_token("solmachine");
        let inserted = sqlx::query(
            "INSERT INTO memory_machines (id, account_id, machine_name, credential_hash)
             VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
        )
        .bind(machine.as_uuid())
        .bind(account)
        .bind(name)
        .bind(hash_token(&credential))
        .execute(&mut *tx)
        .await
        .map_err(StorageError::from)?;
        if inserted.rows_affected() == 0 {
            // Nothing is spent: the token's use is rolled back with the rest.
            tx.rollback().await.map_err(StorageError::from)?;
            return Err(EnrollmentError::MachineTaken);
        }
        tx.commit().await.map_err(StorageError::from)?;
        Ok(EnrollResponse {
            machine_id: machine,
            account_id: account,
            credential,
        })
    }

    /// The account of a machine whose credential matches, if it is not revoked.
    pub async fn authenticate_machine(
        &self,
        machine: MachineId,
        credential: &str,
    ) -> Result<MachineStatus, StorageError> {
        let row = sqlx::query(
            "SELECT account_id, revoked_at IS NOT NULL AS revoked FROM memory_machines
             WHERE id = $1 AND credential_hash = $2",
        )
        .bind(machine.as_uuid())
        .bind(hash_token(credential))
        .fetch_optional(self.pool())
        .await?;
        Ok(match row {
            None => MachineStatus::Unknown,
            Some(r) if r.try_get::<bool, _>("revoked")? => MachineStatus::Revoked,
            Some(r) => MachineStatus::Active(AccountId(r.try_get("account_id")?)),
        })
    }

    /// Whether a machine (of `account`) may still act: checked on every request, so
    /// a revocation takes effect at once.
    pub async fn machine_status(
        &self,
        machine: MachineId,
        account: AccountId,
    ) -> Result<MachineStatus, StorageError> {
        let revoked: Option<bool> = sqlx::query_scalar(
            "SELECT revoked_at IS NOT NULL FROM memory_machines WHERE id = $1 AND account_id = $2",
        )
        .bind(machine.as_uuid())
        .bind(account.0)
        .fetch_optional(self.pool())
        .await?;
        Ok(match revoked {
            None => MachineStatus::Unknown,
            Some(true) => MachineStatus::Revoked,
            Some(false) => MachineStatus::Active(account),
        })
    }

    /// The machines of an account.
    pub async fn list_machines(
        &self,
        account: AccountId,
    ) -> Result<Vec<MachineInfo>, StorageError> {
        let rows = sqlx::query(
            "SELECT id, account_id, machine_name, first_seen_at, last_sync_at, revoked_at
             FROM memory_machines WHERE account_id = $1 ORDER BY first_seen_at",
        )
        .bind(account.0)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(MachineInfo {
                    id: MachineId::from_uuid(r.try_get("id")?),
                    account_id: r.try_get("account_id")?,
                    name: r.try_get("machine_name")?,
                    first_seen_at: r.try_get("first_seen_at")?,
                    last_sync_at: r.try_get("last_sync_at")?,
                    revoked_at: r.try_get("revoked_at")?,
                })
            })
            .collect()
    }

    /// Revokes a machine: its credential and every JWT it holds stop working now.
    pub async fn revoke_machine(&self, machine: MachineId) -> Result<(), StorageError> {
        let done = sqlx::query(
            "UPDATE memory_machines SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1",
        )
        .bind(machine.as_uuid())
        .execute(self.pool())
        .await?;
        if done.rows_affected() == 0 {
            return Err(StorageError::NotFound(format!("machine {machine}")));
        }
        Ok(())
    }
}
