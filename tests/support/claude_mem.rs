//! A claude-mem database made the way claude-mem 13.15.3 makes it: the tables an
//! import reads, with the DDL its migrations leave (`SessionStore.ts` in
//! `thedotmack/claude-mem`, replayed to schema version 49), and rows as its
//! hooks and observer write them: ISO times beside epoch milliseconds, JSON
//! arrays as text, observations and summaries naming the observer's session id.

use solaria_store::rusqlite::{Connection, params};
use std::path::Path;

/// The final shape of the tables an import reads, as claude-mem's migrations
/// leave it at schema version 49 (its work queue and sync ledger left out).
pub const DDL: &str = "
CREATE TABLE schema_versions (id INTEGER PRIMARY KEY, version INTEGER UNIQUE NOT NULL,
 applied_at TEXT NOT NULL);
CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT NOT NULL,
 memory_session_id TEXT UNIQUE, project TEXT NOT NULL, platform_source TEXT NOT NULL DEFAULT 'claude',
 user_prompt TEXT, started_at TEXT NOT NULL, started_at_epoch INTEGER NOT NULL, completed_at TEXT,
 completed_at_epoch INTEGER,
 status TEXT CHECK(status IN ('active','completed','failed')) NOT NULL DEFAULT 'active',
 worker_port INTEGER, prompt_counter INTEGER DEFAULT 0, custom_title TEXT);
CREATE UNIQUE INDEX ux_sdk_sessions_platform_content ON sdk_sessions(platform_source, content_session_id);
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, session_db_id INTEGER,
 content_session_id TEXT NOT NULL, prompt_number INTEGER NOT NULL, prompt_text TEXT NOT NULL,
 created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL, synced_at INTEGER,
 origin_device_id TEXT, origin_local_id TEXT, sync_rev TEXT NOT NULL DEFAULT '1',
 FOREIGN KEY(session_db_id) REFERENCES sdk_sessions(id) ON DELETE CASCADE);
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL,
 project TEXT NOT NULL, text TEXT, type TEXT NOT NULL, title TEXT, subtitle TEXT, facts TEXT,
 narrative TEXT, concepts TEXT, files_read TEXT, files_modified TEXT, prompt_number INTEGER,
 discovery_tokens INTEGER DEFAULT 0, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL,
 content_hash TEXT, generated_by_model TEXT, relevance_count INTEGER DEFAULT 0,
 merged_into_project TEXT, agent_type TEXT, agent_id TEXT, metadata TEXT, synced_at INTEGER,
 origin_device_id TEXT, origin_local_id TEXT, sync_rev TEXT NOT NULL DEFAULT '1',
 FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE UNIQUE INDEX ux_observations_session_hash ON observations(memory_session_id, content_hash);
CREATE TABLE session_summaries (id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL,
 project TEXT NOT NULL, request TEXT, investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT,
 files_read TEXT, files_edited TEXT, notes TEXT, prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0,
 created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL, merged_into_project TEXT, synced_at INTEGER,
 origin_device_id TEXT, origin_local_id TEXT, sync_rev TEXT NOT NULL DEFAULT '1',
 FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE);
";

/// The versions claude-mem 13.15.3 records in `schema_versions` on a new database.
pub const VERSIONS: &[i64] = &[
    4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 20, 21, 22, 23, 24, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,
    39, 41, 42, 44, 45, 46, 47, 48, 49,
];

/// An ISO-8601 time as JavaScript's `toISOString()` writes it.
fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

/// A claude-mem database at `path`, of claude-mem 13.15.3's schema, with no rows.
pub fn create(path: &Path) -> Connection {
    let db = Connection::open(path).expect("create the claude-mem database");
    db.execute_batch("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;")
        .expect("pragmas");
    db.execute_batch(DDL).expect("claude-mem's DDL");
    for v in VERSIONS {
        db.execute(
            "INSERT INTO schema_versions (version, applied_at) VALUES (?1, ?2)",
            params![v, iso(1_796_000_000_000)],
        )
        .expect("schema version");
    }
    db
}

/// A session as claude-mem's SessionStart hook and observer leave it.
pub fn session(db: &Connection, content: &str, memory: &str, project: &str, at: i64) -> i64 {
    db.execute(
        "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, started_at,
             started_at_epoch, completed_at, completed_at_epoch, status)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'completed')",
        params![
            content,
            memory,
            project,
            iso(at),
            at,
            iso(at + 600_000),
            at + 600_000
        ],
    )
    .expect("session");
    db.last_insert_rowid()
}

/// A user prompt of the session `session_row`.
pub fn prompt(db: &Connection, session_row: i64, content: &str, number: i64, text: &str, at: i64) {
    db.execute(
        "INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number, prompt_text,
             created_at, created_at_epoch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![session_row, content, number, text, iso(at), at],
    )
    .expect("prompt");
}

/// An observation as claude-mem's observer writes it.
#[derive(Debug)]
pub struct Observed<'a> {
    pub memory: &'a str,
    pub project: &'a str,
    pub kind: &'a str,
    pub title: &'a str,
    pub narrative: &'a str,
    pub facts: &'a [&'a str],
    pub concepts: &'a [&'a str],
    pub files_modified: &'a [&'a str],
    pub at: i64,
}

/// Writes `o`; its row id.
pub fn observation(db: &Connection, o: &Observed<'_>) -> i64 {
    let json = |items: &[&str]| serde_json::to_string(items).expect("json");
    db.execute(
        "INSERT INTO observations (memory_session_id, project, type, title, subtitle, facts,
             narrative, concepts, files_read, files_modified, prompt_number, created_at,
             created_at_epoch, content_hash)
         VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7, '[]', ?8, 1, ?9, ?10, ?11)",
        params![
            o.memory,
            o.project,
            o.kind,
            o.title,
            json(o.facts),
            o.narrative,
            json(o.concepts),
            json(o.files_modified),
            iso(o.at),
            o.at,
            format!("{:016x}", o.at)
        ],
    )
    .expect("observation");
    db.last_insert_rowid()
}

/// A session summary as claude-mem's observer writes it (several per session
/// happen: one per prompt answered).
pub fn summary(db: &Connection, memory: &str, project: &str, parts: [&str; 4], at: i64) {
    db.execute(
        "INSERT INTO session_summaries (memory_session_id, project, request, learned, completed,
             next_steps, prompt_number, created_at, created_at_epoch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8)",
        params![
            memory,
            project,
            parts[0],
            parts[1],
            parts[2],
            parts[3],
            iso(at),
            at
        ],
    )
    .expect("summary");
}

/// Opens the database at `path` to change it as claude-mem would.
pub fn open(path: &Path) -> Connection {
    Connection::open(path).expect("open the claude-mem database")
}
