//! The people of an account and the audit log of what was done to it. Every
//! machine belongs to one person (`memory_machines.person_id`), so a record's author
//! is the person of the machine that wrote it; removing a person revokes their
//! machines in the same transaction, so they are refused from their next request.

use super::Storage;
use super::base::{AccountId, PersonId, Role, StorageError, audit};
use super::erase::{ErasureTarget, Reach};
use super::sql;
use serde::Serialize;
use solaria_shared::MachineId;
use sqlx::Row;
use uuid::Uuid;

/// A person as listed to operators.
#[derive(Debug, Clone, Serialize)]
pub struct PersonInfo {
    pub id: PersonId,
    pub email: String,
    pub role: Role,
    /// Their machines that may still sync.
    pub active_machines: i64,
    pub added_at: chrono::DateTime<chrono::Utc>,
    pub removed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// What removing a person did.
#[derive(Debug, Clone, Serialize)]
pub struct Removal {
    pub person: PersonId,
    /// They had been removed before: only their records were erased now.
    pub already_removed: bool,
    /// Their machines revoked by it (those already revoked are not counted).
    pub machines_revoked: u64,
    /// Their unused enrollment tokens, spent so that none enrolls a machine.
    pub tokens_spent: u64,
    /// With `--erase`: how many of their records became tombstones.
    pub records_erased: u64,
}

/// One line of the audit log.
#[derive(Debug, Clone, Serialize)]
pub struct AuditEntry {
    pub at: chrono::DateTime<chrono::Utc>,
    pub actor: String,
    pub action: String,
    pub detail: String,
}

/// An email as people are named: trimmed, with one `@` between a name and a host.
pub fn checked_email(email: &str) -> Result<String, StorageError> {
    let e = email.trim();
    match e.split_once('@') {
        Some((name, host))
            if !name.is_empty()
                && !host.is_empty()
                && !host.contains('@')
                && e.len() <= 320
                && !e.chars().any(|c| c.is_whitespace() || c.is_control()) =>
        {
            Ok(e.to_string())
        }
        _ => Err(StorageError::Invalid(format!(
            "`{}` is not an email address (name@host)",
            e.chars().take(80).collect::<String>()
        ))),
    }
}

impl Storage {
    /// Adds a person to `account`; their email must not name a live person of it.
    pub async fn add_person(
        &self,
        account: AccountId,
        email: &str,
        role: Role,
        actor: &str,
    ) -> Result<PersonId, StorageError> {
        let email = checked_email(email)?;
        let mut tx = self.pool().begin().await?;
        let id = PersonId(Uuid::now_v7());
        let done = sql::query(
            "INSERT INTO people (account_id, id, email, role) VALUES ($1, $2, $3, $4)
             ON CONFLICT DO NOTHING",
        )
        .bind(account.0)
        .bind(id.0)
        .bind(&email)
        .bind(role.as_str())
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StorageError::Conflict(format!(
                "{email} is already a person of this account (`person list` shows them)"
            )));
        }
        audit(
            &mut tx,
            account,
            actor,
            "person added",
            &format!("{email} as {}", role.as_str()),
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The live person of `account` named by `email`.
    pub async fn find_person(
        &self,
        account: AccountId,
        email: &str,
    ) -> Result<PersonId, StorageError> {
        let id: Option<Uuid> = sql::query_scalar(
            "SELECT id FROM people
             WHERE account_id = $1 AND lower(email) = lower($2) AND removed_at IS NULL",
        )
        .bind(account.0)
        .bind(email.trim())
        .fetch_optional(&mut *self.session().await?)
        .await?;
        id.map(PersonId).ok_or_else(|| {
            StorageError::NotFound(format!(
                "person {}",
                email.trim().chars().take(80).collect::<String>()
            ))
        })
    }

    /// The person an enrollment token is for when none is named: the account's only
    /// live person. An account of several people must be told whose machine it is.
    pub async fn sole_person(&self, account: AccountId) -> Result<PersonId, StorageError> {
        let ids: Vec<Uuid> = sql::query_scalar(
            "SELECT id FROM people WHERE account_id = $1 AND removed_at IS NULL LIMIT 2",
        )
        .bind(account.0)
        .fetch_all(&mut *self.session().await?)
        .await?;
        match ids[..] {
            [only] => Ok(PersonId(only)),
            [] => Err(StorageError::Invalid(
                "this account has no people yet: add one with `person add ACCOUNT EMAIL --role admin`"
                    .into(),
            )),
            _ => Err(StorageError::Invalid(
                "this account has several people: say whose machine it is with --person EMAIL"
                    .into(),
            )),
        }
    }

    /// The people of `account`, removed ones too, in the order they were added.
    pub async fn list_people(&self, account: AccountId) -> Result<Vec<PersonInfo>, StorageError> {
        let rows = sql::query(
            "SELECT p.id, p.email, p.role, p.added_at, p.removed_at,
                    (SELECT count(*) FROM memory_machines m
                     WHERE m.account_id = p.account_id AND m.person_id = p.id
                       AND m.revoked_at IS NULL) AS active_machines
             FROM people p WHERE p.account_id = $1 ORDER BY p.added_at, p.id",
        )
        .bind(account.0)
        .fetch_all(&mut *self.session().await?)
        .await?;
        rows.iter()
            .map(|r| {
                let role: String = r.try_get("role")?;
                Ok(PersonInfo {
                    id: PersonId(r.try_get("id")?),
                    email: r.try_get("email")?,
                    role: role.parse().map_err(StorageError::Invalid)?,
                    active_machines: r.try_get("active_machines")?,
                    added_at: r.try_get("added_at")?,
                    removed_at: r.try_get("removed_at")?,
                })
            })
            .collect()
    }

    /// Removes the person `email` from `account`: their machines are revoked and
    /// their unused enrollment tokens spent, in one transaction, so none of their
    /// machines is served again. With `erase`, their records (those their machines
    /// wrote last) become tombstones too, which reach the account's machines at
    /// their next sync; a person removed before is then only erased, so an erasure
    /// asked for later, or one that failed halfway, can be asked again. An account
    /// keeps at least one admin.
    pub async fn remove_person(
        &self,
        account: AccountId,
        email: &str,
        erase: bool,
        actor: &str,
    ) -> Result<Removal, StorageError> {
        let mut removal = match self.find_person(account, email).await {
            Ok(person) => {
                self.revoke_person(account, person, email, erase, actor)
                    .await?
            }
            Err(StorageError::NotFound(_)) if erase => Removal {
                person: self.removed_person(account, email).await?,
                already_removed: true,
                machines_revoked: 0,
                tokens_spent: 0,
                records_erased: 0,
            },
            Err(e) => return Err(e),
        };
        if erase {
            // Tombstones are written by one of their own machines, as their last act.
            let by: Option<Uuid> = sql::query_scalar(
                "SELECT id FROM memory_machines WHERE account_id = $1 AND person_id = $2
                 ORDER BY first_seen_at DESC LIMIT 1",
            )
            .bind(account.0)
            .bind(removal.person.0)
            .fetch_optional(&mut *self.session().await?)
            .await?;
            if let Some(by) = by {
                let erased = self
                    .erase(
                        account,
                        MachineId::from_uuid(by),
                        &ErasureTarget::Person(removal.person.0),
                        Reach::Operator,
                    )
                    .await?;
                removal.records_erased = erased.map_or(0, |c| c.total());
            }
        }
        Ok(removal)
    }

    /// The person of `account` last removed under `email`.
    async fn removed_person(
        &self,
        account: AccountId,
        email: &str,
    ) -> Result<PersonId, StorageError> {
        let id: Option<Uuid> = sql::query_scalar(
            "SELECT id FROM people
             WHERE account_id = $1 AND lower(email) = lower($2) AND removed_at IS NOT NULL
             ORDER BY removed_at DESC LIMIT 1",
        )
        .bind(account.0)
        .bind(email.trim())
        .fetch_optional(&mut *self.session().await?)
        .await?;
        id.map(PersonId).ok_or_else(|| {
            StorageError::NotFound(format!(
                "person {}",
                email.trim().chars().take(80).collect::<String>()
            ))
        })
    }

    /// The removal itself: the person, their machines and their unused tokens, in
    /// one transaction with its audit line.
    async fn revoke_person(
        &self,
        account: AccountId,
        person: PersonId,
        email: &str,
        erase: bool,
        actor: &str,
    ) -> Result<Removal, StorageError> {
        let mut tx = self.pool().begin().await?;
        let role: String = sql::query_scalar(
            "SELECT role FROM people WHERE account_id = $1 AND id = $2 FOR UPDATE",
        )
        .bind(account.0)
        .bind(person.0)
        .fetch_one(&mut *tx)
        .await?;
        if role == Role::Admin.as_str() {
            let admins: i64 = sql::query_scalar(
                "SELECT count(*) FROM people
                 WHERE account_id = $1 AND role = 'admin' AND removed_at IS NULL",
            )
            .bind(account.0)
            .fetch_one(&mut *tx)
            .await?;
            if admins <= 1 {
                return Err(StorageError::Invalid(
                    "this is the account's last admin: add another admin first".into(),
                ));
            }
        }
        // The person, then their machines and their unused tokens, together.
        let mut changed = [0u64; 3];
        for (n, sql) in [
            "UPDATE people SET removed_at = now() WHERE account_id = $1 AND id = $2",
            "UPDATE memory_machines SET revoked_at = now()
             WHERE account_id = $1 AND person_id = $2 AND revoked_at IS NULL",
            "UPDATE enrollment_tokens SET used_at = now()
             WHERE account_id = $1 AND person_id = $2 AND used_at IS NULL",
        ]
        .into_iter()
        .enumerate()
        {
            changed[n] = sql::query(sql)
                .bind(account.0)
                .bind(person.0)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        }
        let removal = Removal {
            person,
            already_removed: false,
            machines_revoked: changed[1],
            tokens_spent: changed[2],
            records_erased: 0,
        };
        audit(
            &mut tx,
            account,
            actor,
            "person removed",
            &format!(
                "{} ({} machine(s) revoked{})",
                email.trim(),
                removal.machines_revoked,
                if erase { ", their records erased" } else { "" }
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(removal)
    }

    /// Notes an administrative action of `actor` in `account`'s audit log.
    pub async fn note(
        &self,
        account: AccountId,
        actor: &str,
        action: &str,
        detail: &str,
    ) -> Result<(), StorageError> {
        let mut tx = self.pool().begin().await?;
        audit(&mut tx, account, actor, action, detail).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The audit log of `account`, oldest first.
    pub async fn audit_log(&self, account: AccountId) -> Result<Vec<AuditEntry>, StorageError> {
        let rows = sql::query(
            "SELECT at, actor, action, detail FROM audit_log WHERE account_id = $1 ORDER BY id",
        )
        .bind(account.0)
        .fetch_all(&mut *self.session().await?)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(AuditEntry {
                    at: r.try_get("at")?,
                    actor: r.try_get("actor")?,
                    action: r.try_get("action")?,
                    detail: r.try_get("detail")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_email_is_a_name_at_a_host_and_nothing_else() {
        assert_eq!(
            checked_email("  ada@example.com ").expect("valid"),
            "ada@example.com"
        );
        for bad in [
            "",
            "ada",
            "@example.com",
            "ada@",
            "a@b@c",
            "ada @example.com",
            "ada@ex\nample",
        ] {
            assert!(checked_email(bad).is_err(), "{bad:?}");
        }
    }
}
