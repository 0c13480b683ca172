//! Throwaway PostgreSQL for tests: every test gets a fresh database of its own on one of
//! the run's private clusters.
//!
//! Two clusters: the main one has pgvector, and every central test runs there
//! ([`fresh_database`]); the plain one has no pgvector, for the tests of a central service
//! without it ([`fresh_plain_database`]). Their admin URLs come from
//! `SOLARIA_TEST_DATABASE_URL` and `SOLARIA_TEST_PLAIN_DATABASE_URL` (`deploy/test.sh`
//! starts both clusters for the whole run and sets them). When one is unset — `cargo test`
//! run directly — the first call for it in each test process starts that cluster with
//! `deploy/pg.sh start`: the main one with `PG_BINDIR` set to what `deploy/pg.sh pgvector`
//! prints (the pgserver wheel's PostgreSQL with pgvector, unpacked in a cache), the plain
//! one with the system's binaries (`PG_BINDIR` removed). Each leaves behind a detached
//! watcher that runs `deploy/pg.sh stop` once the test process has exited (no atexit:
//! unsafe code is forbidden here).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// Names the admin URL of the run's cluster with pgvector (database `postgres`, superuser
/// `postgres`).
pub const URL_VAR: &str = "SOLARIA_TEST_DATABASE_URL";

/// Names the admin URL of the run's cluster without pgvector (database `postgres`,
/// superuser `postgres`).
pub const PLAIN_URL_VAR: &str = "SOLARIA_TEST_PLAIN_DATABASE_URL";

const HINT: &str = "the PostgreSQL tests need the PostgreSQL server binaries: run \
    `bash deploy/pg.sh install` (as root it runs `apt-get update && apt-get install -y postgresql`) \
    for the cluster without pgvector, and `bash deploy/pg.sh pgvector` fetches the one with \
    pgvector (x86_64 Linux, with pip; elsewhere set PG_BINDIR to a PostgreSQL with pgvector); \
    or set SOLARIA_TEST_DATABASE_URL (with pgvector) and SOLARIA_TEST_PLAIN_DATABASE_URL \
    (without) to superuser URLs of throwaway servers; `bash deploy/test.sh` does all of this";

/// A database of its own for one test, on one of the run's throwaway clusters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestDatabase {
    /// Connects to this database as the superuser `postgres`.
    pub url: String,
    /// The database's name: `solaria_test_<uuid>`.
    pub name: String,
}

/// Creates an empty database on the run's cluster with pgvector (starting one for this
/// test process when `SOLARIA_TEST_DATABASE_URL` is unset). Panics saying what to install
/// or run when no PostgreSQL can be had.
pub async fn fresh_database() -> TestDatabase {
    create_database(admin_url()).await
}

/// Creates an empty database on the run's cluster without pgvector (starting one with the
/// system's PostgreSQL for this test process when `SOLARIA_TEST_PLAIN_DATABASE_URL` is
/// unset). Panics saying what to install or run when no PostgreSQL can be had.
pub async fn fresh_plain_database() -> TestDatabase {
    create_database(plain_admin_url()).await
}

/// Creates a database named `solaria_test_<uuid>` on the cluster whose admin URL is `admin`.
async fn create_database(admin: &str) -> TestDatabase {
    let name = format!("solaria_test_{}", uuid::Uuid::new_v4().simple());
    let create = format!(r#"CREATE DATABASE "{name}""#);

    // Many tests from several processes create databases at once: retry what a busy
    // server may refuse for a moment (connection slots, a template being copied).
    let mut last_error = String::new();
    for attempt in 0..20u64 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(50 * attempt.min(10))).await;
        }
        let mut conn = match PgConnection::connect(admin).await {
            Ok(conn) => conn,
            Err(e) => {
                last_error = format!("connecting to {admin}: {e}");
                continue;
            }
        };
        let created = sqlx::raw_sql(AssertSqlSafe(create.clone()))
            .execute(&mut conn)
            .await;
        // Closing is a courtesy; the server drops the session either way.
        let _ = conn.close().await;
        match created {
            Ok(_) => {
                return TestDatabase {
                    url: with_database(admin, &name),
                    name,
                };
            }
            Err(e) => last_error = format!("{create} on {admin}: {e}"),
        }
    }
    panic!("could not create a test database: {last_error}");
}

/// The admin URL of the run's cluster with pgvector, started here once per process if
/// need be.
fn admin_url() -> &'static str {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    cluster_url(&URL, URL_VAR, || {
        let bindir = pgvector_bindir()?;
        start_cluster(Some(bindir.as_str()))
    })
}

/// The admin URL of the run's cluster without pgvector, started here once per process
/// with the system's binaries if need be.
fn plain_admin_url() -> &'static str {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    cluster_url(&URL, PLAIN_URL_VAR, || start_cluster(None))
}

/// The URL in `var`, else the one `start` gives (once per process: `cell` keeps it).
fn cluster_url(
    cell: &'static OnceLock<Result<String, String>>,
    var: &str,
    start: impl FnOnce() -> Result<String, String>,
) -> &'static str {
    let url = cell.get_or_init(|| match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Ok(url.trim().to_string()),
        _ => start(),
    });
    match url {
        Ok(url) => url,
        Err(e) => panic!("no PostgreSQL for the tests ({var} is unset): {e}"),
    }
}

/// The bin directory of a PostgreSQL with pgvector: `deploy/pg.sh pgvector` unpacks the
/// pinned pgserver wheel into a cache once (or passes an explicit `PG_BINDIR` through)
/// and prints it.
fn pgvector_bindir() -> Result<String, String> {
    let pg_sh = crate::workspace().join("deploy/pg.sh");
    let out = Command::new("bash")
        .arg(&pg_sh)
        .arg("pgvector")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running bash {}: {e}", pg_sh.display()))?;
    let bindir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || bindir.is_empty() || bindir.contains('\n') {
        return Err(format!(
            "`bash deploy/pg.sh pgvector` failed ({}):\n{}\n{HINT}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(bindir)
}

/// Starts a cluster for this test process and arranges for it to be stopped (and its
/// directory removed) when the process exits. Its binaries: those in `bindir`, else the
/// system's (`PG_BINDIR` removed).
fn start_cluster(bindir: Option<&str>) -> Result<String, String> {
    let (url, dir) = pg_sh("start", None, bindir)?;
    // The run's cluster lives as long as the process; its watcher removes it.
    let _ = dir;
    Ok(url)
}

/// Runs `deploy/pg.sh VERB [BESIDE] DIR` on a new temporary DIR, with a watcher that
/// stops what it starts once this process has exited; returns the URL it prints and
/// DIR.
fn pg_sh(
    verb: &str,
    beside: Option<&Path>,
    bindir: Option<&str>,
) -> Result<(String, std::path::PathBuf), String> {
    let pg_sh = crate::workspace().join("deploy/pg.sh");
    let dir = tempfile::Builder::new()
        .prefix("solaria-pg-")
        .tempdir()
        .map_err(|e| format!("creating a temporary directory: {e}"))?
        .keep();

    // The watcher first: if this process dies while the server starts, it still goes.
    spawn_watcher(&pg_sh, &dir)?;

    let mut command = Command::new("bash");
    command.arg(&pg_sh).arg(verb);
    if let Some(beside) = beside {
        command.arg(beside);
    }
    command.arg(&dir).stdin(Stdio::null());
    match bindir {
        Some(bindir) => command.env("PG_BINDIR", bindir),
        None => command.env_remove("PG_BINDIR"),
    };
    let out = command
        .output()
        .map_err(|e| format!("running bash {}: {e}", pg_sh.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !url.starts_with("postgres://") {
        stop_cluster(&pg_sh, &dir);
        return Err(format!(
            "`bash deploy/pg.sh {verb} {}` failed ({}):\n{stderr}\n{HINT}",
            dir.display(),
            out.status
        ));
    }
    Ok((url, dir))
}

/// A PostgreSQL server of one test's own — a cluster with pgvector, a streaming
/// standby of one, or PgBouncer in transaction mode in front of one — stopped and
/// removed when dropped (or by its watcher when the test process dies).
#[derive(Debug)]
pub struct Server {
    /// The superuser's URL, database `postgres`.
    pub url: String,
    dir: std::path::PathBuf,
}

impl Server {
    /// A new cluster with pgvector (the run's binaries), fsync off as the run's.
    pub fn primary() -> Server {
        let started = pgvector_bindir().and_then(|bin| pg_sh("start", None, Some(&bin)));
        Server::from(started)
    }

    /// A streaming standby of this cluster (`pg_basebackup -R`), started.
    pub fn standby(&self) -> Server {
        Server::from(pg_sh("standby", Some(&self.dir), None))
    }

    /// PgBouncer in transaction mode in front of this cluster (Debian's PgBouncer).
    pub fn pooler(&self) -> Server {
        Server::from(pg_sh("pooler", Some(&self.dir), None))
    }

    /// Kills this cluster as a crash would: its postmaster and every child, at once.
    pub fn crash(&self) {
        self.run("crash");
    }

    /// Promotes this standby to a primary, waiting until it takes writes.
    pub fn promote(&self) {
        self.run("promote");
    }

    fn run(&self, verb: &str) {
        let out = Command::new("bash")
            .arg(crate::workspace().join("deploy/pg.sh"))
            .arg(verb)
            .arg(&self.dir)
            .stdin(Stdio::null())
            .output()
            .expect("run deploy/pg.sh");
        assert!(
            out.status.success(),
            "pg.sh {verb}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Creates database `name` on this primary, committing only once a standby has
    /// each commit (`synchronous_standby_names = '*'`, and `synchronous_commit = on`
    /// for it: the run's clusters commit asynchronously); returns its URL.
    pub async fn synchronous_database(&self, name: &str) -> String {
        use sqlx::Connection;
        let mut admin = sqlx::PgConnection::connect(&self.url).await.expect("admin");
        for statement in [
            "ALTER SYSTEM SET synchronous_standby_names = '*'".to_string(),
            "SELECT pg_reload_conf()".to_string(),
            format!(r#"CREATE DATABASE "{name}""#),
            format!(r#"ALTER DATABASE "{name}" SET synchronous_commit = on"#),
        ] {
            sqlx::raw_sql(AssertSqlSafe(statement.clone()))
                .execute(&mut admin)
                .await
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
        self.database(name)
    }

    /// The URL of database `name` on this server.
    pub fn database(&self, name: &str) -> String {
        with_database(&self.url, name)
    }

    fn from(started: Result<(String, std::path::PathBuf), String>) -> Server {
        match started {
            Ok((url, dir)) => Server { url, dir },
            Err(e) => panic!("{e}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        stop_cluster(&crate::workspace().join("deploy/pg.sh"), &self.dir);
    }
}

fn spawn_watcher(pg_sh: &Path, dir: &Path) -> Result<(), String> {
    use std::os::unix::process::CommandExt;

    Command::new("sh")
        .arg("-c")
        .arg(r#"while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$2" stop "$3""#)
        .arg("solaria-pg-watcher")
        .arg(std::process::id().to_string())
        .arg(pg_sh)
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map(drop)
        .map_err(|e| format!("spawning the cluster's watcher (sh): {e}"))
}

fn stop_cluster(pg_sh: &Path, dir: &Path) {
    let _ = Command::new("bash")
        .arg(pg_sh)
        .arg("stop")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// `url` with its database (the path) replaced by `name`; the query string is kept.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{name}", &base[..path_start]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn the_database_of_a_url_is_replaced() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "t1"),
            "postgres://postgres@127.0.0.1:5432/t1"
        );
        assert_eq!(
            with_database("postgres://u:p@h:1/db?sslmode=disable", "t2"),
            "postgres://u:p@h:1/t2?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h:1", "t3"), "postgres://h:1/t3");
        assert_eq!(
            with_database("postgres://h:1?application_name=x", "t4"),
            "postgres://h:1/t4?application_name=x"
        );
    }
}
