//! The change feed: what an account's machines pull after their cursor, page by
//! page ([`changes`]), and which kinds a reader asks for ([`FeedTypes`]).
//!
//! No change is skipped, by the way a batch numbers its rows (`batch`'s module doc:
//! the feed's order).

use super::base::{KNOWLEDGE_TABLE, OBSERVATIONS_TABLE, StorageError, Viewer};
use super::rows::RECORD_TABLES;
use super::sql;
use super::visibility::{own_sql, visible_sql};
use super::{Storage, read_snapshot};
use solaria_shared::wire::{Change, ChangesPage};
use sqlx::Row;

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
        let row = sql::query(sqlx::AssertSqlSafe(format!(
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
        let rows = sql::query(sqlx::AssertSqlSafe(format!(
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
    use super::FeedTypes;

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
