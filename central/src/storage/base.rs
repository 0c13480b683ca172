//! The words every storage file shares, and nothing else: the error, whose a request
//! is (account, person, role, viewer), the names of the record tables, and the audit
//! line. It imports no other storage file, so each of them can import it without a
//! circle.

use super::sql;
use serde::Serialize;
use sqlx::{Postgres, Transaction};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// Errors of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// A request the storage refuses as it stands (the message says what to change).
    #[error("{0}")]
    Invalid(String),
    /// An act the person's role does not allow (the message says whose it is).
    #[error("{0}")]
    NotAllowed(String),
}

/// One account (tenant): the unit of isolation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct AccountId(pub Uuid);

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A person of an account (their id; people are named by their email).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct PersonId(pub Uuid);

impl fmt::Display for PersonId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// What a person may do: an admin manages people, machines and sharing; a member
/// their own machines and records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Member,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Role, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "admin" => Ok(Role::Admin),
            "member" => Ok(Role::Member),
            other => Err(format!("`{other}` is not a role: admin or member")),
        }
    }
}

/// The person a read is made for, in their account (what they may see is
/// `visibility`'s rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewer {
    pub account: AccountId,
    pub person: PersonId,
}

// The record tables. Their names are constants, never input: a statement that
// names a table in `format!` takes it from here.

/// Sessions.
pub(super) const SESSIONS_TABLE: &str = "memory_sessions";
/// Observations (what a teammate's machine pulls only when asked).
pub(super) const OBSERVATIONS_TABLE: &str = "memory_observations_remote";
/// Summaries.
pub(super) const SUMMARIES_TABLE: &str = "memory_summaries_remote";
/// Knowledge records (what only a reader that names them pulls).
pub(super) const KNOWLEDGE_TABLE: &str = "memory_knowledge";

/// Writes one audit line in `tx`: the action is logged if and only if it happens.
pub(super) async fn audit(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    actor: &str,
    action: &str,
    detail: &str,
) -> Result<(), StorageError> {
    sql::query("INSERT INTO audit_log (account_id, actor, action, detail) VALUES ($1, $2, $3, $4)")
        .bind(account.0)
        .bind(actor)
        .bind(action)
        .bind(detail)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_read_as_written() {
        assert_eq!("Admin".parse::<Role>(), Ok(Role::Admin));
        assert_eq!("member".parse::<Role>(), Ok(Role::Member));
        assert!("owner".parse::<Role>().is_err());
    }
}
