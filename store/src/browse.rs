//! What the viewer lists beyond search and timelines: every project with its counts
//! and last activity, and the events and summaries stored after a point of the
//! store (its live feed, by their row order).

use super::StoreError;
use super::records::{self, OBSERVATION_COLUMNS, SUMMARY_COLUMNS};
use rusqlite::{Connection, params};
use solaria_shared::{Observation, Project, Summary, UnixMillis};

/// A project as the viewer's first page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectCounts {
    pub project: Project,
    /// Its live sessions.
    pub sessions: i64,
    /// Its live events, and how many of them failed.
    pub events: i64,
    pub failures: i64,
    /// Its decisions and memories that stand.
    pub decisions: i64,
    pub memories: i64,
    /// The newest session start, event or knowledge record.
    pub last_activity: Option<UnixMillis>,
    /// The teammates whose records of it this machine holds (their handles).
    pub teammates: Vec<String>,
}

/// Every project with a live session, an event or a knowledge record, most
/// recently active first.
pub fn projects(conn: &Connection) -> Result<Vec<ProjectCounts>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "WITH activity (project_key, project_name, at) AS (
             SELECT project_key, project_name, started_at FROM sessions WHERE deleted = 0
             UNION ALL
             SELECT project_key, project_name, created_at FROM observations WHERE deleted = 0
             UNION ALL
             SELECT project_key, project_name, created_at FROM knowledge WHERE deleted = 0
         )
         SELECT project_key, project_name, max(at) FROM activity
         GROUP BY project_key ORDER BY 3 DESC, 1",
    )?;
    let heads: Vec<(Project, i64)> = stmt
        .query_map([], |r| {
            Ok((
                Project {
                    key: r.get(0)?,
                    name: r.get(1)?,
                },
                r.get(2)?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    let count = |sql: &str, key: &str| -> Result<i64, StoreError> {
        Ok(conn.prepare_cached(sql)?.query_row([key], |r| r.get(0))?)
    };
    let mut out = Vec::with_capacity(heads.len());
    for (project, last) in heads {
        let key = project.key.as_str();
        let teammates = conn
            .prepare_cached(
                "SELECT DISTINCT m.person FROM machines m
                 WHERE m.person IS NOT NULL AND (
                     m.id IN (SELECT machine_id FROM sessions WHERE project_key = ?1 AND deleted = 0)
                  OR m.id IN (SELECT machine_id FROM knowledge WHERE project_key = ?1 AND deleted = 0))
                 ORDER BY 1",
            )?
            .query_map([key], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        out.push(ProjectCounts {
            sessions: count(
                "SELECT count(*) FROM sessions WHERE project_key = ?1 AND deleted = 0",
                key,
            )?,
            events: count(
                "SELECT count(*) FROM observations WHERE project_key = ?1 AND deleted = 0",
                key,
            )?,
            failures: count(
                "SELECT count(*) FROM observations WHERE project_key = ?1 AND deleted = 0
                   AND json_valid(metadata) AND json_type(metadata, '$.error') = 'true'",
                key,
            )?,
            decisions: count(
                "SELECT count(*) FROM knowledge WHERE project_key = ?1 AND deleted = 0
                   AND kind = 'decision' AND status = 'active'",
                key,
            )?,
            memories: count(
                "SELECT count(*) FROM knowledge WHERE project_key = ?1 AND deleted = 0
                   AND kind = 'memory' AND status = 'active'",
                key,
            )?,
            last_activity: Some(UnixMillis(last)),
            teammates,
            project,
        });
    }
    Ok(out)
}

/// Where the live feed stands: the newest observation's row and the newest
/// summary's. Written `events-summaries` (`1204-87`), as a page and an event id
/// carry it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeedPosition {
    pub events: i64,
    pub summaries: i64,
}

impl std::fmt::Display for FeedPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.events, self.summaries)
    }
}

impl std::str::FromStr for FeedPosition {
    type Err = ();

    fn from_str(text: &str) -> Result<FeedPosition, ()> {
        let (events, summaries) = text.trim().split_once('-').ok_or(())?;
        let (events, summaries) = (
            events.parse().map_err(|_| ())?,
            summaries.parse().map_err(|_| ())?,
        );
        if events < 0 || summaries < 0 {
            return Err(());
        }
        Ok(FeedPosition { events, summaries })
    }
}

/// Where the live feed stands now.
pub fn feed_position(conn: &Connection) -> Result<FeedPosition, StoreError> {
    let newest = |table: &str| -> Result<i64, StoreError> {
        Ok(conn
            .prepare_cached(&format!("SELECT coalesce(max(rowid), 0) FROM {table}"))?
            .query_row([], |r| r.get(0))?)
    };
    Ok(FeedPosition {
        events: newest("observations")?,
        summaries: newest("summaries")?,
    })
}

/// The summaries first stored after row `after`, oldest first, at most `limit`,
/// each with its row (a summary rewritten in place keeps its row: it is not new).
pub fn summaries_after(
    conn: &Connection,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, Summary)>, StoreError> {
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS}, rowid FROM summaries
         WHERE rowid > ?1 AND deleted = 0 ORDER BY rowid LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![after, limit as i64], |r| {
        Ok((r.get(12)?, records::summary_from_row(r)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The live events stored after row `after` (a [`feed_position`]), oldest first,
/// at most `limit`, each with its row.
pub fn events_after(
    conn: &Connection,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, Observation)>, StoreError> {
    let sql = format!(
        "SELECT {OBSERVATION_COLUMNS}, rowid FROM observations
         WHERE rowid > ?1 AND deleted = 0 ORDER BY rowid LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![after, limit as i64], |r| {
        Ok((r.get(16)?, records::observation_from_row(r)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::FeedPosition;

    #[test]
    fn a_feed_position_reads_back_what_it_writes_and_nothing_else() {
        let at = FeedPosition {
            events: 1204,
            summaries: 87,
        };
        assert_eq!(at.to_string(), "1204-87");
        assert_eq!("1204-87".parse::<FeedPosition>(), Ok(at));
        for bad in [
            "",
            "1204",
            "-1-2",
            "1--2",
            "a-b",
            "1-2-3",
            "99999999999999999999-1",
        ] {
            assert!(bad.parse::<FeedPosition>().is_err(), "{bad}");
        }
    }
}
