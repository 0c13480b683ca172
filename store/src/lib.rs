//! The local store: one SQLite file (WAL, foreign keys, 0600) holding sessions,
//! observations, summaries, their FTS5 indexes, and the sync bookkeeping.
//!
//! All writes go through [`Store::write`], which takes the write lock up front
//! (`BEGIN IMMEDIATE`) and stamps records with the machine's hybrid logical clock,
//! so concurrent hook processes serialise cleanly and stamps never go backwards.

/// The SQLite driver, for tools and tests that open the file themselves: SQLite is
/// a dependency of this crate alone.
pub use rusqlite;

pub mod both_ways;
pub mod browse;
pub mod claude_mem;
pub mod close_pairs;
pub mod commits;
pub mod distill;
pub mod export;
#[cfg(test)]
pub(crate) mod fixtures;
mod fts5_api;
pub mod gist;
mod held;
pub mod hit_text;
pub mod hybrid;
pub mod imported;
pub mod injected;
pub mod knowledge;
mod migrate;
pub mod pairs;
pub mod phrases;
pub mod rarity;
pub mod recalled;
pub mod records;
pub mod retention;
pub mod scope;
pub mod search;
pub mod sight;
pub mod source;
pub mod staleness;
pub mod stemming;
pub mod sync;
pub mod text;
pub mod vectors;
pub mod vectors_wire;
pub mod views;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};
use solaria_shared::knowledge::WrittenBy;
use solaria_shared::{Hlc, HlcClock, MachineId, UnixMillis};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The tables of records that sync, each with the same envelope columns (id,
/// machine_id, updated, deleted). Constants, never input.
pub(crate) const SYNCED_TABLES: [&str; 4] = ["sessions", "observations", "summaries", "knowledge"];

/// How long a writer waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Errors of the local store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot prepare the data directory {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the store {path} was written by a newer SOLARIA (schema {found}, this binary knows up to {known}); upgrade solaria"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("the store's machine id is damaged ({0}); restore the data dir from a backup")]
    BadMachineId(String),
    #[error("no record with id {0}")]
    NotFound(String),
}

/// An open store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    machine: MachineId,
    path: PathBuf,
    wall: WallClock,
    /// Who the knowledge records this store writes are attributed to.
    writer: WrittenBy,
}

/// The wall clock a store stamps writes with: the system's, shifted by a skew
/// (`Env::clock_skew_ms`, a test seam for a machine whose clock is off) and
/// corrected by the offset learned from the server at the last sync (stored as
/// `clock_offset_ms`; see `solaria_shared::hlc::clock_offset`).
#[derive(Debug, Clone, Copy, Default)]
pub struct WallClock {
    pub skew_ms: i64,
    pub offset_ms: i64,
}

impl WallClock {
    /// This machine's own reading of `real_ms` (what its clock says), uncorrected.
    pub fn reading_at(self, real_ms: i64) -> i64 {
        real_ms.saturating_add(self.skew_ms)
    }

    /// The corrected time now, in ms: what stamps are made from.
    pub fn now_ms(self) -> u64 {
        self.reading_at(UnixMillis::now().0)
            .saturating_add(self.offset_ms)
            .max(0) as u64
    }
}

/// Gives `conn`, a connection to a store's file, what its full-text indexes take:
/// the tokenizer they were made with ([`stemming`]) and the function search asks
/// of them ([`phrases`]). [`Store::open`] calls it; so must anything that opens a
/// store's file by another way and reads or writes what is indexed.
pub fn register_sql(conn: &Connection) -> Result<(), rusqlite::Error> {
    stemming::register(conn)?;
    phrases::register(conn)
}

impl Store {
    /// Opens (creating if needed) the store at `path`: the directory is made 0700,
    /// the file 0600, pending migrations run, and a machine id is generated once.
    /// `machine_name` names this machine the first time only.
    pub fn open(path: &Path, machine_name: &str) -> Result<Store, StoreError> {
        vectors::register_extension();
        prepare_file(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        register_sql(&conn)?;
        let mut conn = conn;
        // Many hook processes may open a brand-new store at once. Switching it to WAL
        // needs a moment of exclusive access, and SQLite answers "database is locked"
        // there without waiting on the busy handler: retry briefly instead of losing
        // the event.
        let mut attempt = 0u64;
        loop {
            match setup(&mut conn, path, machine_name) {
                Err(StoreError::Sqlite(e)) if is_busy(&e) && attempt < 60 => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis((attempt * 5).min(50)));
                }
                other => break other?,
            }
        }
        let machine = read_machine_id(&conn)?;
        let offset_ms = sync::cursor(&conn, sync::CLOCK_OFFSET_KEY)?;
        Ok(Store {
            conn,
            machine,
            path: path.to_path_buf(),
            wall: WallClock {
                skew_ms: 0,
                offset_ms,
            },
            writer: WrittenBy::Person,
        })
    }

    /// This machine's id.
    pub fn machine_id(&self) -> MachineId {
        self.machine
    }

    /// The same store, stamping writes with a wall clock shifted by `skew_ms`.
    pub fn with_clock_skew(mut self, skew_ms: i64) -> Store {
        self.wall.skew_ms = skew_ms;
        self
    }

    /// The same store, attributing the knowledge records it writes to `writer`
    /// (a person by default: the command line; an agent through MCP).
    pub fn written_by(mut self, writer: WrittenBy) -> Store {
        self.writer = writer;
        self
    }

    /// Attributes the knowledge records written from now on to `writer`.
    pub fn set_writer(&mut self, writer: WrittenBy) {
        self.writer = writer;
    }

    /// The clock writes are stamped with.
    pub fn wall(&self) -> WallClock {
        self.wall
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, for reads.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// One read transaction, held until the value is dropped, so that the reads of
    /// one answer (a session's context, a prompt's recall) see one state of the
    /// store and take the file's read lock once rather than once per statement.
    /// `None` when a transaction is already open on this connection.
    pub fn snapshot(&self) -> Result<Option<rusqlite::Transaction<'_>>, StoreError> {
        if !self.conn.is_autocommit() {
            return Ok(None);
        }
        // Read-only: dropping it rolls back, which ends the read and changes nothing.
        Ok(Some(self.conn.unchecked_transaction()?))
    }

    /// Leaves checkpoints to [`Store::checkpoint`]: a commit on this connection no
    /// longer copies the WAL into the database (and syncs it) when the WAL passes
    /// SQLite's threshold. For a connection whose writes someone waits on (the
    /// daemon's hooks), with a checkpoint run elsewhere.
    pub fn defer_checkpoints(&self) -> Result<(), StoreError> {
        self.conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        Ok(())
    }

    /// Copies what the WAL holds into the database as far as readers allow,
    /// without waiting for any (SQLite's PASSIVE checkpoint); the frames copied.
    pub fn checkpoint(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get(2))?)
    }

    /// A checkpoint on behalf of connections that defer theirs (the daemon's
    /// hooks): when others wrote since `seen` (`PRAGMA data_version`, kept by the
    /// caller), copies the WAL into the database; when all of it was copied, starts
    /// the next WAL itself with a one-row write. The first write after a complete
    /// checkpoint rewrites and syncs the WAL's header (an `fsync`, 0.5–4 ms here),
    /// and this way it is this connection's, not a hook's. The frames copied.
    pub fn checkpoint_ahead(&self, seen: &mut Option<i64>) -> Result<i64, StoreError> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?;
        if *seen == Some(version) {
            return Ok(0);
        }
        let (busy, log, copied): (i64, i64, i64) =
            self.conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?;
        if busy == 0 && log > 0 && copied == log {
            self.conn.execute(
                "INSERT INTO meta (key, value) VALUES ('wal_started_at', ?1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [UnixMillis::now().0.to_string()],
            )?;
        }
        // This connection's own write leaves its `data_version` as it is.
        *seen = Some(version);
        Ok(copied)
    }

    /// Runs `f` in one write transaction holding the write lock from the start; the
    /// clock advances only if the transaction commits.
    pub fn write<T>(
        &mut self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Cached, as are the other statements every hook runs: a daemon capturing
        // hooks' events reuses them instead of compiling them (and their triggers)
        // for each event.
        let last: Option<i64> = tx
            .prepare_cached("SELECT value FROM meta WHERE key = 'hlc_last'")?
            .query_row([], |r| r.get::<_, String>(0))
            .optional()?
            .and_then(|v| v.parse().ok());
        let mut writer = Writer {
            tx,
            clock: HlcClock::resume(Hlc::from_i64(last.unwrap_or(0))),
            wall: self.wall,
            machine: self.machine,
            start: last.unwrap_or(0),
            writer: self.writer.clone(),
        };
        let out = f(&mut writer)?;
        let wall = writer.wall;
        writer.finish()?;
        // A correction learned in the transaction holds for the next ones.
        self.wall = wall;
        Ok(out)
    }
}

/// One write transaction with the machine's clock.
pub struct Writer<'a> {
    tx: Transaction<'a>,
    clock: HlcClock,
    wall: WallClock,
    machine: MachineId,
    start: i64,
    writer: WrittenBy,
}

impl std::fmt::Debug for Writer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("machine", &self.machine)
            .finish()
    }
}

impl Writer<'_> {
    /// A fresh stamp for a local write, later than any issued or seen before.
    pub fn tick(&mut self) -> Hlc {
        self.clock.tick(self.wall.now_ms())
    }

    /// This machine's id.
    pub fn machine_id(&self) -> MachineId {
        self.machine
    }

    /// Who the knowledge records of this write are attributed to.
    pub fn writer(&self) -> &WrittenBy {
        &self.writer
    }

    /// Sets the clock to continue after `stamp`, even backwards (a clock corrected
    /// after running ahead; see `correct_clock`).
    pub(crate) fn set_clock(&mut self, stamp: Hlc) {
        self.clock = HlcClock::resume(stamp);
    }

    /// Moves the clock past `stamp` (a version received from elsewhere).
    pub(crate) fn merge_clock(&mut self, stamp: Hlc) {
        self.clock.observe(stamp);
    }

    /// The open transaction, handed to the store's functions that read or write
    /// inside it (`records::…(w.tx(), …)`): callers pass it on, they write no SQL.
    pub fn tx(&self) -> &Transaction<'_> {
        &self.tx
    }

    fn finish(self) -> Result<(), StoreError> {
        let last = self.clock.last().as_i64();
        if last != self.start {
            self.tx
                .prepare_cached(
                    "INSERT INTO meta (key, value) VALUES ('hlc_last', ?1)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                )?
                .execute([last.to_string()])?;
        }
        self.tx.commit()?;
        Ok(())
    }
}

/// Pragmas and migrations of a freshly opened connection.
fn setup(conn: &mut Connection, path: &Path, machine_name: &str) -> Result<(), StoreError> {
    // WAL lets readers (search, the daemon) run beside a writing hook; NORMAL sync is
    // durable across application crashes and never corrupts in WAL mode.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // Room for every statement a hook's event runs (capture, SessionStart's context,
    // a prompt's recall): a daemon that keeps this connection compiles each once.
    conn.set_prepared_statement_cache_capacity(64);
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    // Deleted and rewritten content is overwritten with zeros, so what `forget`,
    // `prune` and erasures remove does not linger in free pages or free space
    // inside pages of the file (or of the WAL frames written from now on).
    conn.pragma_update(None, "secure_delete", "ON")?;
    migrate::run(conn, path, machine_name)
}

impl StoreError {
    /// Whether another connection held the store past this one's wait (a write
    /// lock, or the exclusive moment of a new store's setup): the same request may
    /// succeed later.
    pub fn is_busy(&self) -> bool {
        matches!(self, StoreError::Sqlite(e) if is_busy(e))
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn read_machine_id(conn: &Connection) -> Result<MachineId, StoreError> {
    let text: String =
        conn.query_row("SELECT value FROM meta WHERE key = 'machine_id'", [], |r| {
            r.get(0)
        })?;
    text.parse().map_err(|_| StoreError::BadMachineId(text))
}

/// Makes the data dir private (created or narrowed to 0700) and creates an empty
/// store file (0600) before SQLite opens it, so the file is never readable by
/// others, not even for an instant. SQLite gives the WAL and shared-memory files the
/// same mode as the database.
fn prepare_file(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        solaria_hook::files::private_dir(dir).map_err(io)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// The WAL header's salts: a writer that restarts the WAL draws new ones.
    fn wal_salts(path: &Path) -> Vec<u8> {
        let wal = std::fs::read(format!("{}-wal", path.display())).expect("the WAL");
        wal[16..24].to_vec()
    }

    #[test]
    fn a_checkpoint_ahead_starts_the_next_wal_so_the_writer_does_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("memory.db");
        let mut hooks = Store::open(&path, "laptop").expect("opens");
        hooks.defer_checkpoints().expect("defer");
        let checkpointer = Store::open(&path, "laptop").expect("opens");
        let mut seen = None;
        hooks.write(|w| Ok(w.tick())).expect("write");
        assert!(
            checkpointer
                .checkpoint_ahead(&mut seen)
                .expect("checkpoint")
                > 0
        );
        let started = wal_salts(&path);
        // The hooks' next write goes on in the WAL the checkpointer started: it
        // does not restart it (nor sync its header).
        hooks.write(|w| Ok(w.tick())).expect("write");
        assert_eq!(wal_salts(&path), started);
        // Nothing written since: the next pass does nothing.
        checkpointer
            .checkpoint_ahead(&mut seen)
            .expect("checkpoint");
        assert!(checkpointer.checkpoint_ahead(&mut seen).expect("idle") == 0);
    }

    #[test]
    fn a_new_store_is_private_and_has_a_machine_id() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("data").join("memory.db");
        let store = Store::open(&path, "laptop").expect("opens");
        let mode = std::fs::metadata(&path).expect("file").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().expect("dir"))
            .expect("dir")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        let id = store.machine_id();
        let mut store = store;
        store
            .write(|w| Ok(w.tick()))
            .expect("a write creates the WAL");
        for suffix in ["-wal", "-shm"] {
            let side = format!("{}{suffix}", path.display());
            let mode = std::fs::metadata(&side).expect(&side).permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{side} is as private as the store");
        }
        drop(store);
        let again = Store::open(&path, "renamed").expect("reopens");
        assert_eq!(again.machine_id(), id, "the machine id is generated once");
        let name: String = again
            .conn()
            .query_row(
                "SELECT name FROM machines WHERE id = ?1",
                [id.to_string()],
                |r| r.get(0),
            )
            .expect("machine row");
        assert_eq!(name, "laptop");
        let fk: i64 = again
            .conn()
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .expect("pragma");
        assert_eq!(fk, 1);
        let mode: String = again
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .expect("pragma");
        assert_eq!(mode, "wal");
    }

    #[test]
    fn stamps_keep_increasing_across_transactions_and_reopens() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("memory.db");
        let mut store = Store::open(&path, "m").expect("opens");
        let a = store.write(|w| Ok(w.tick())).expect("tx");
        let b = store.write(|w| Ok(w.tick())).expect("tx");
        drop(store);
        let mut store = Store::open(&path, "m").expect("reopens");
        let c = store.write(|w| Ok(w.tick())).expect("tx");
        assert!(a < b && b < c);
    }
}
