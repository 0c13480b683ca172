//! Accounts, enrollment tokens and machines: who may sync, and as whom.

use super::Storage;
use super::base::{AccountId, PersonId, Role, StorageError, Viewer, audit};
use super::people::checked_email;
use super::sql;
use crate::secret::{hash_token, random_token};
use serde::Serialize;
use solaria_shared::MachineId;
use solaria_shared::wire::EnrollResponse;
use sqlx::Row;
use uuid::Uuid;

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
    /// Whose machine it is (their email).
    pub person: String,
    pub first_seen_at: chrono::DateTime<chrono::Utc>,
    pub last_sync_at: Option<chrono::DateTime<chrono::Utc>>,
    pub revoked_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Whom an active machine acts for: its person, in its account, with their role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub viewer: Viewer,
    pub role: Role,
}

/// Whether a machine may act now, and as whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineStatus {
    Active(Identity),
    Revoked,
    Unknown,
}

/// A machine's account, person, role and revocation (`status` reads it).
const STATUS_SELECT: &str =
    "SELECT m.account_id, m.person_id, p.role, m.revoked_at IS NOT NULL AS revoked
     FROM memory_machines m JOIN people p ON p.account_id = m.account_id AND p.id = m.person_id";

fn status(row: Option<sqlx::postgres::PgRow>) -> Result<MachineStatus, StorageError> {
    let Some(r) = row else {
        return Ok(MachineStatus::Unknown);
    };
    if r.try_get::<bool, _>("revoked")? {
        return Ok(MachineStatus::Revoked);
    }
    let role: String = r.try_get("role")?;
    Ok(MachineStatus::Active(Identity {
        viewer: Viewer {
            account: AccountId(r.try_get("account_id")?),
            person: PersonId(r.try_get("person_id")?),
        },
        // The column's CHECK allows these two only.
        role: role.parse().unwrap_or(Role::Member),
    }))
}

impl Storage {
    /// Creates an account, its name new, with its first admin `admin` (an email):
    /// an account always has someone to manage it.
    pub async fn create_account(
        &self,
        name: &str,
        admin: &str,
        actor: &str,
    ) -> Result<AccountId, StorageError> {
        let admin = checked_email(admin)?;
        let id = Uuid::now_v7();
        let mut tx = self.pool().begin().await?;
        let done = sql::query(
            "INSERT INTO accounts (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(id)
        .bind(name)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StorageError::Conflict(format!(
                "an account named {name:?} already exists"
            )));
        }
        sql::query("INSERT INTO people (account_id, id, email, role) VALUES ($1, $2, $3, 'admin')")
            .bind(id)
            .bind(Uuid::now_v7())
            .bind(&admin)
            .execute(&mut *tx)
            .await?;
        let account = AccountId(id);
        audit(
            &mut tx,
            account,
            actor,
            "account created",
            &format!("{name}, first admin {admin}"),
        )
        .await?;
        tx.commit().await?;
        Ok(account)
    }

    /// The account with this name or id.
    pub async fn find_account(&self, name_or_id: &str) -> Result<AccountId, StorageError> {
        let id: Option<Uuid> =
            sql::query_scalar("SELECT id FROM accounts WHERE name = $1 OR id::text = $1")
                .bind(name_or_id)
                .fetch_optional(&mut *self.session().await?)
                .await?;
        id.map(AccountId)
            .ok_or_else(|| StorageError::NotFound(format!("account {name_or_id:?}")))
    }

    /// A new single-use enrollment token for a machine of the account's only person
    /// (see [`Storage::sole_person`]), valid for `ttl`.
    pub async fn create_enrollment_token(
        &self,
        account: AccountId,
        ttl: std::time::Duration,
    ) -> Result<String, StorageError> {
        let person = self.sole_person(account).await?;
        self.enrollment_token_for(account, person, ttl).await
    }

    /// A new single-use enrollment token for a machine of `person`, valid for
    /// `ttl`. Only its hash is stored; the token is returned once.
    pub async fn enrollment_token_for(
        &self,
        account: AccountId,
        person: PersonId,
        ttl: std::time::Duration,
    ) -> Result<String, StorageError> {
        let token = random_token("solenroll");
        let mut session = self.session().await?;
        sql::query(
            "INSERT INTO enrollment_tokens (id, account_id, person_id, token_hash, expires_at)
             VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))",
        )
        .bind(Uuid::now_v7())
        .bind(account.0)
        .bind(person.0)
        .bind(hash_token(&token))
        .bind(ttl.as_secs_f64())
        .execute(&mut *session)
        .await?;
        session.finish().await?;
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
        // A token of a person removed since is spent by the removal; the join says
        // so again.
        let spent: Option<(Uuid, Uuid)> = sql::query_as(
            "UPDATE enrollment_tokens t SET used_at = now()
             FROM people p
             WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > now()
               AND p.account_id = t.account_id AND p.id = t.person_id AND p.removed_at IS NULL
             RETURNING t.account_id, t.person_id",
        )
        .bind(hash_token(token))
        .fetch_optional(&mut *tx)
        .await
        .map_err(StorageError::from)?;
        let (account, person) = spent.ok_or(EnrollmentError::BadToken)?;
        let machine = machine.unwrap_or_default();
        let credential = random_token("solmachine");
        let inserted = sql::query(
            "INSERT INTO memory_machines (id, account_id, person_id, machine_name, credential_hash)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
        )
        .bind(machine.as_uuid())
        .bind(account)
        .bind(person)
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
        let row = sql::query(sqlx::AssertSqlSafe(format!(
            "{STATUS_SELECT} WHERE m.id = $1 AND m.credential_hash = $2"
        )))
        .bind(machine.as_uuid())
        .bind(hash_token(credential))
        .fetch_optional(&mut *self.session().await?)
        .await?;
        status(row)
    }

    /// Whether a machine (of `account`) may still act: checked on every request, so
    /// a revocation takes effect at once.
    pub async fn machine_status(
        &self,
        machine: MachineId,
        account: AccountId,
    ) -> Result<MachineStatus, StorageError> {
        let row = sql::query(sqlx::AssertSqlSafe(format!(
            "{STATUS_SELECT} WHERE m.id = $1 AND m.account_id = $2"
        )))
        .bind(machine.as_uuid())
        .bind(account.0)
        .fetch_optional(&mut *self.session().await?)
        .await?;
        status(row)
    }

    /// The machines of an account.
    pub async fn list_machines(
        &self,
        account: AccountId,
    ) -> Result<Vec<MachineInfo>, StorageError> {
        let rows = sql::query(
            "SELECT m.id, m.account_id, m.machine_name, p.email, m.first_seen_at,
                    m.last_sync_at, m.revoked_at
             FROM memory_machines m
             JOIN people p ON p.account_id = m.account_id AND p.id = m.person_id
             WHERE m.account_id = $1 ORDER BY m.first_seen_at",
        )
        .bind(account.0)
        .fetch_all(&mut *self.session().await?)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(MachineInfo {
                    id: MachineId::from_uuid(r.try_get("id")?),
                    account_id: r.try_get("account_id")?,
                    name: r.try_get("machine_name")?,
                    person: r.try_get("email")?,
                    first_seen_at: r.try_get("first_seen_at")?,
                    last_sync_at: r.try_get("last_sync_at")?,
                    revoked_at: r.try_get("revoked_at")?,
                })
            })
            .collect()
    }

    /// Revokes a machine: its credential and every JWT it holds stop working now.
    pub async fn revoke_machine(
        &self,
        machine: MachineId,
        actor: &str,
    ) -> Result<(), StorageError> {
        let mut tx = self.pool().begin().await?;
        let revoked: Option<(Uuid, String)> = sql::query_as(
            "UPDATE memory_machines SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1
             RETURNING account_id, machine_name",
        )
        .bind(machine.as_uuid())
        .fetch_optional(&mut *tx)
        .await?;
        let Some((account, name)) = revoked else {
            return Err(StorageError::NotFound(format!("machine {machine}")));
        };
        audit(
            &mut tx,
            AccountId(account),
            actor,
            "machine revoked",
            &format!("{name} ({machine})"),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
