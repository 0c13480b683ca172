//! claude-mem's database read for an import, never written: its sessions, user
//! prompts, observations and session summaries as plain rows, every column
//! selected by name (an upgraded database may hold them in another order).
//!
//! The schema is claude-mem's own (`src/services/sqlite/SessionStore.ts` in
//! `thedotmack/claude-mem`): 13.15.3 writes schema version 49 to its
//! `schema_versions` table. A database of a newer schema is refused, as is one
//! missing a column read here; any older one holding every such column is read.

use rusqlite::{Connection, OpenFlags, Row};
use std::path::Path;

/// The newest claude-mem schema read here (claude-mem 13.15.3).
pub const NEWEST_SCHEMA: i64 = 49;

/// Why a file cannot be read as a claude-mem database.
#[derive(Debug, thiserror::Error)]
pub enum ClaudeMemError {
    #[error("not a claude-mem database: {0}")]
    Foreign(String),
    #[error(
        "a claude-mem database of schema version {0}, newer than {NEWEST_SCHEMA} (claude-mem 13.15.3), the newest this SOLARIA reads: upgrade solaria"
    )]
    Newer(i64),
    #[error("{table} row {row} cannot be read: {why}")]
    BadRow {
        table: &'static str,
        row: i64,
        why: String,
    },
    #[error("reading the claude-mem database failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// A claude-mem database open for reading.
#[derive(Debug)]
pub struct ClaudeMemDb {
    conn: Connection,
    /// The newest version in its `schema_versions`.
    pub schema: i64,
}

/// One row of `sdk_sessions`.
#[derive(Debug, Clone)]
pub struct Session {
    pub row: i64,
    /// The agent's own session id.
    pub content_session_id: String,
    /// The id its observations and summaries name (absent until claude-mem's
    /// observer started).
    pub memory_session_id: Option<String>,
    pub project: String,
    /// `claude`, `codex`, `cursor`…
    pub platform_source: String,
    pub started_at_ms: i64,
    pub completed_at_ms: Option<i64>,
}

/// One row of `user_prompts`.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub row: i64,
    pub session_row: Option<i64>,
    pub content_session_id: String,
    pub prompt_number: i64,
    pub text: String,
    pub created_at_ms: i64,
}

/// One row of `observations`.
#[derive(Debug, Clone)]
pub struct Observation {
    pub row: i64,
    pub memory_session_id: String,
    pub project: String,
    /// `bugfix`, `feature`, `decision`, `discovery`…: whatever its mode named.
    pub kind: String,
    pub title: Option<String>,
    pub subtitle: Option<String>,
    /// A JSON array of strings, as claude-mem writes it; older rows may differ.
    pub facts: Option<String>,
    pub narrative: Option<String>,
    /// Its legacy free text (NULL in new rows).
    pub text: Option<String>,
    pub concepts: Option<String>,
    pub files_read: Option<String>,
    pub files_modified: Option<String>,
    pub prompt_number: Option<i64>,
    pub created_at_ms: i64,
}

/// One row of `session_summaries`.
#[derive(Debug, Clone)]
pub struct Summary {
    pub row: i64,
    pub memory_session_id: String,
    pub project: String,
    pub request: Option<String>,
    pub investigated: Option<String>,
    pub learned: Option<String>,
    pub completed: Option<String>,
    pub next_steps: Option<String>,
    pub notes: Option<String>,
    pub created_at_ms: i64,
}

/// The columns read from each table: all must be there.
const READ: [(&str, &[&str]); 4] = [
    (
        "sdk_sessions",
        &[
            "id",
            "content_session_id",
            "memory_session_id",
            "project",
            "started_at_epoch",
            "completed_at_epoch",
        ],
    ),
    (
        "user_prompts",
        &[
            "id",
            "content_session_id",
            "prompt_number",
            "prompt_text",
            "created_at_epoch",
        ],
    ),
    (
        "observations",
        &[
            "id",
            "memory_session_id",
            "project",
            "type",
            "title",
            "subtitle",
            "facts",
            "narrative",
            "text",
            "concepts",
            "files_read",
            "files_modified",
            "prompt_number",
            "created_at_epoch",
        ],
    ),
    (
        "session_summaries",
        &[
            "id",
            "memory_session_id",
            "project",
            "request",
            "investigated",
            "learned",
            "completed",
            "next_steps",
            "notes",
            "created_at_epoch",
        ],
    ),
];

fn columns(conn: &Connection, table: &str) -> Result<Vec<String>, rusqlite::Error> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |r| r.get::<_, String>(0))?;
    names.collect()
}

impl ClaudeMemDb {
    /// Opens `path` read-only and checks that it is a claude-mem database this
    /// SOLARIA reads.
    pub fn open(path: &Path) -> Result<ClaudeMemDb, ClaudeMemError> {
        if !path.is_file() {
            return Err(ClaudeMemError::Foreign(format!(
                "{} is not a file",
                path.display()
            )));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let tables: Vec<String> = match conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        {
            Ok(tables) => tables,
            Err(e) => {
                return Err(ClaudeMemError::Foreign(format!(
                    "not an SQLite database ({e})"
                )));
            }
        };
        if !tables.iter().any(|t| t == "schema_versions") {
            return Err(ClaudeMemError::Foreign(
                "it has no schema_versions table".into(),
            ));
        }
        let schema: i64 = conn.query_row(
            "SELECT coalesce(max(version), 0) FROM schema_versions",
            [],
            |r| r.get(0),
        )?;
        if schema > NEWEST_SCHEMA {
            return Err(ClaudeMemError::Newer(schema));
        }
        for (table, wanted) in READ {
            let held = columns(&conn, table)?;
            if held.is_empty() {
                return Err(ClaudeMemError::Foreign(format!("it has no {table} table")));
            }
            let missing: Vec<&str> = wanted
                .iter()
                .copied()
                .filter(|c| !held.iter().any(|h| h == c))
                .collect();
            if !missing.is_empty() {
                return Err(ClaudeMemError::Foreign(format!(
                    "its {table} table has no {} column (schema version {schema}; this SOLARIA reads claude-mem's schema up to {NEWEST_SCHEMA}, claude-mem 13.15.3)",
                    missing.join(", ")
                )));
            }
        }
        Ok(ClaudeMemDb { conn, schema })
    }

    fn has_column(&self, table: &str, column: &str) -> Result<bool, rusqlite::Error> {
        Ok(columns(&self.conn, table)?.iter().any(|c| c == column))
    }

    /// Every session, oldest first.
    pub fn sessions(&self) -> Result<Vec<Session>, ClaudeMemError> {
        // Added by a later schema than the others read here: `claude` before it.
        let platform = if self.has_column("sdk_sessions", "platform_source")? {
            "platform_source"
        } else {
            "'claude'"
        };
        self.rows(
            "sdk_sessions",
            &format!(
                "SELECT id, content_session_id, memory_session_id, project, {platform},
                        started_at_epoch, completed_at_epoch
                 FROM sdk_sessions ORDER BY started_at_epoch, id"
            ),
            |r| {
                Ok(Session {
                    row: r.get(0)?,
                    content_session_id: r.get(1)?,
                    memory_session_id: r.get(2)?,
                    project: r.get(3)?,
                    platform_source: r.get(4)?,
                    started_at_ms: r.get(5)?,
                    completed_at_ms: r.get(6)?,
                })
            },
        )
    }

    /// Every user prompt, oldest first.
    pub fn prompts(&self) -> Result<Vec<Prompt>, ClaudeMemError> {
        let session_row = if self.has_column("user_prompts", "session_db_id")? {
            "session_db_id"
        } else {
            "NULL"
        };
        self.rows(
            "user_prompts",
            &format!(
                "SELECT id, {session_row}, content_session_id, prompt_number, prompt_text,
                        created_at_epoch
                 FROM user_prompts ORDER BY created_at_epoch, id"
            ),
            |r| {
                Ok(Prompt {
                    row: r.get(0)?,
                    session_row: r.get(1)?,
                    content_session_id: r.get(2)?,
                    prompt_number: r.get(3)?,
                    text: r.get(4)?,
                    created_at_ms: r.get(5)?,
                })
            },
        )
    }

    /// Every observation, oldest first.
    pub fn observations(&self) -> Result<Vec<Observation>, ClaudeMemError> {
        self.rows(
            "observations",
            "SELECT id, memory_session_id, project, type, title, subtitle, facts, narrative,
                    text, concepts, files_read, files_modified, prompt_number, created_at_epoch
             FROM observations ORDER BY created_at_epoch, id",
            |r| {
                Ok(Observation {
                    row: r.get(0)?,
                    memory_session_id: r.get(1)?,
                    project: r.get(2)?,
                    kind: r.get(3)?,
                    title: r.get(4)?,
                    subtitle: r.get(5)?,
                    facts: r.get(6)?,
                    narrative: r.get(7)?,
                    text: r.get(8)?,
                    concepts: r.get(9)?,
                    files_read: r.get(10)?,
                    files_modified: r.get(11)?,
                    prompt_number: r.get(12)?,
                    created_at_ms: r.get(13)?,
                })
            },
        )
    }

    /// Every session summary, oldest first.
    pub fn summaries(&self) -> Result<Vec<Summary>, ClaudeMemError> {
        self.rows(
            "session_summaries",
            "SELECT id, memory_session_id, project, request, investigated, learned, completed,
                    next_steps, notes, created_at_epoch
             FROM session_summaries ORDER BY created_at_epoch, id",
            |r| {
                Ok(Summary {
                    row: r.get(0)?,
                    memory_session_id: r.get(1)?,
                    project: r.get(2)?,
                    request: r.get(3)?,
                    investigated: r.get(4)?,
                    learned: r.get(5)?,
                    completed: r.get(6)?,
                    next_steps: r.get(7)?,
                    notes: r.get(8)?,
                    created_at_ms: r.get(9)?,
                })
            },
        )
    }

    /// Reads every row of `sql` (whose first column is the row's id) with `map`;
    /// a row that does not map is an error naming its table and id.
    fn rows<T>(
        &self,
        table: &'static str,
        sql: &str,
        map: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, ClaudeMemError> {
        let mut stmt = self.conn.prepare(sql)?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            match map(row) {
                Ok(v) => out.push(v),
                Err(e) => {
                    let id = row.get::<_, i64>(0).unwrap_or(-1);
                    return Err(ClaudeMemError::BadRow {
                        table,
                        row: id,
                        why: e.to_string(),
                    });
                }
            }
        }
        Ok(out)
    }
}
