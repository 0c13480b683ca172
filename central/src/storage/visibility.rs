//! Who sees what. **The one rule**: a person sees a record when one of their own
//! machines wrote it, or when its project is shared with the whole account (a key
//! that matches one of the account's shared patterns). Every other project is
//! personal. Every read of records takes a [`Viewer`](super::base::Viewer) and puts [`visible_sql`] in its
//! `WHERE`; a record the rule hides reads exactly like one that does not exist.
//!
//! Sharing is an admin's act, logged in the audit log. Sharing a pattern announces
//! the records it reveals again in the change feed (new seqs), so that teammates'
//! machines, whose cursors have passed them, pull them on their next sync.
//! Unsharing stops what is shared from then on; copies a teammate's machine already
//! pulled stay there (nothing reaches into another person's machine to delete what
//! it was once allowed to hold).

use super::Storage;
use super::base::{AccountId, StorageError, audit};
use super::rows::RECORD_TABLES;
use super::sql;
use serde::Serialize;
use sqlx::Row;

/// A shared project pattern as listed.
#[derive(Debug, Clone, Serialize)]
pub struct SharedProject {
    /// As the admin wrote it: a project key, `*` matching any run of characters.
    pub pattern: String,
    pub shared_by: String,
    pub shared_at: chrono::DateTime<chrono::Utc>,
}

/// What sharing a pattern did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shared {
    /// It was shared already (nothing changed).
    pub already: bool,
    /// Records it matches, announced again to the account's machines.
    pub records: u64,
}

/// The longest pattern accepted.
const MAX_PATTERN_CHARS: usize = 300;

/// SQL: the row's machine (`{q}machine_id`) is one of the person `{person}`'s, in
/// the account `{account}` (both parameters, e.g. `$1`). `q` qualifies the columns
/// (`"s."`, or `""`). The machines are read once per statement, not per row.
pub(super) fn own_sql(q: &str, account: &str, person: &str) -> String {
    format!(
        "{q}machine_id = ANY(ARRAY(SELECT vm.id FROM memory_machines vm \
         WHERE vm.account_id = {account} AND vm.person_id = {person}))"
    )
}

/// SQL: the row's project (`{q}project_key`) is shared in the account `{account}`.
pub(super) fn shared_sql(q: &str, account: &str) -> String {
    format!(
        "{q}project_key LIKE ANY(ARRAY(SELECT sp.like_pattern FROM shared_projects sp \
         WHERE sp.account_id = {account}))"
    )
}

/// SQL: **the rule**: the row is visible to the person `{person}` of `{account}`.
pub(super) fn visible_sql(q: &str, account: &str, person: &str) -> String {
    format!(
        "({} OR {})",
        own_sql(q, account, person),
        shared_sql(q, account)
    )
}

/// SQL: the project key `{key}` (a column or a parameter) is shared in the
/// account `{account}`: [`shared_sql`] for a key that is not the row's own.
pub(super) fn key_shared_sql(key: &str, account: &str) -> String {
    format!(
        "{key} LIKE ANY(ARRAY(SELECT sp.like_pattern FROM shared_projects sp \
         WHERE sp.account_id = {account}))"
    )
}

/// SQL: the row's machine (`{q}machine_id`) belongs to the person whose machine
/// `{machine}` is (a column such as `s.machine_id`, or a parameter): **the session
/// rule**'s "same person" (`solaria_shared::sharing::may_name_session`). A
/// session's line, timeline and summary show only what its own person wrote.
pub(super) fn same_person_sql(q: &str, machine: &str) -> String {
    format!(
        "{q}machine_id IN (SELECT mine.id FROM memory_machines mine \
         JOIN memory_machines theirs ON theirs.account_id = mine.account_id \
         AND theirs.person_id = mine.person_id WHERE theirs.id = {machine})"
    )
}

/// A pattern as typed, checked, and its LIKE form (`%`, `_` and `\` escaped, `*` a
/// run of any characters).
pub fn like_pattern(pattern: &str) -> Result<(String, String), StorageError> {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return Err(StorageError::Invalid(
            "give a project key or a pattern such as 'github.com/acme/*'".into(),
        ));
    }
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(StorageError::Invalid(format!(
            "a pattern has at most {MAX_PATTERN_CHARS} characters"
        )));
    }
    if pattern.chars().any(char::is_control) {
        return Err(StorageError::Invalid(
            "a pattern holds no control characters".into(),
        ));
    }
    let mut like = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        match c {
            '*' => like.push('%'),
            '%' | '_' | '\\' => {
                like.push('\\');
                like.push(c);
            }
            c => like.push(c),
        }
    }
    Ok((pattern.to_string(), like))
}

impl Storage {
    /// Shares the projects whose keys match `pattern` with the whole account, and
    /// announces the records it reveals (see the module doc).
    pub async fn share_projects(
        &self,
        account: AccountId,
        pattern: &str,
        actor: &str,
    ) -> Result<Shared, StorageError> {
        let (pattern, like) = like_pattern(pattern)?;
        let mut tx = self.pool().begin().await?;
        // The feed's lock first, as every writer of seqs takes it.
        let base: i64 =
            sql::query_scalar("SELECT change_seq FROM accounts WHERE id = $1 FOR UPDATE")
                .bind(account.0)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or_else(|| StorageError::NotFound(format!("account {account}")))?;
        let inserted = sql::query(
            "INSERT INTO shared_projects (account_id, pattern, like_pattern, shared_by)
             VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, pattern) DO NOTHING",
        )
        .bind(account.0)
        .bind(&pattern)
        .bind(&like)
        .bind(actor)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            return Ok(Shared {
                already: true,
                records: 0,
            });
        }
        let mut next = base;
        for table in RECORD_TABLES.map(|(t, _, _)| t) {
            // Table names are constants; the pattern is a parameter.
            let n = sql::query(sqlx::AssertSqlSafe(format!(
                "WITH targets AS (
                     SELECT id, row_number() OVER (ORDER BY seq, id) AS n FROM {table}
                     WHERE account_id = $1 AND project_key LIKE $2
                 )
                 UPDATE {table} AS t SET seq = $3 + targets.n
                 FROM targets WHERE t.account_id = $1 AND t.id = targets.id"
            )))
            .bind(account.0)
            .bind(&like)
            .bind(next)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            next += n as i64;
        }
        sql::query("UPDATE accounts SET change_seq = $2 WHERE id = $1")
            .bind(account.0)
            .bind(next)
            .execute(&mut *tx)
            .await?;
        let records = (next - base) as u64;
        audit(
            &mut tx,
            account,
            actor,
            "project shared",
            &format!("{pattern} ({records} record(s) now seen by the whole account)"),
        )
        .await?;
        tx.commit().await?;
        Ok(Shared {
            already: false,
            records,
        })
    }

    /// Makes the projects of `pattern` personal again (their records seen only by
    /// their authors from now on); `false` when it was not shared.
    pub async fn unshare_projects(
        &self,
        account: AccountId,
        pattern: &str,
        actor: &str,
    ) -> Result<bool, StorageError> {
        let (pattern, _) = like_pattern(pattern)?;
        let mut tx = self.pool().begin().await?;
        let removed =
            sql::query("DELETE FROM shared_projects WHERE account_id = $1 AND pattern = $2")
                .bind(account.0)
                .bind(&pattern)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if removed > 0 {
            audit(&mut tx, account, actor, "project unshared", &pattern).await?;
        }
        tx.commit().await?;
        Ok(removed > 0)
    }

    /// The account's shared patterns, oldest first.
    pub async fn shared_projects(
        &self,
        account: AccountId,
    ) -> Result<Vec<SharedProject>, StorageError> {
        let rows = sql::query(
            "SELECT pattern, shared_by, shared_at FROM shared_projects
             WHERE account_id = $1 ORDER BY shared_at, pattern",
        )
        .bind(account.0)
        .fetch_all(&mut *self.session().await?)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(SharedProject {
                    pattern: r.try_get("pattern")?,
                    shared_by: r.try_get("shared_by")?,
                    shared_at: r.try_get("shared_at")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StorageError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_matches_what_its_stars_say_and_nothing_its_other_characters_could() {
        assert_eq!(
            like_pattern(" github.com/acme/* ").expect("valid"),
            ("github.com/acme/*".into(), "github.com/acme/%".into())
        );
        assert_eq!(like_pattern("a_b%c\\d").expect("valid").1, "a\\_b\\%c\\\\d");
        for bad in ["", "  ", "a\nb", &"x".repeat(301)] {
            assert!(like_pattern(bad).is_err(), "{bad:?}");
        }
    }
}
