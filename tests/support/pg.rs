//! Throwaway PostgreSQL for tests: every test gets a fresh database of its own on the
//! run's private cluster.
//!
//! The cluster's admin URL comes from `SOLARIA_TEST_DATABASE_URL` (`deploy/test.sh` starts
//! one cluster for the whole run and sets it). When it is unset — `cargo test` run
//! directly — the first call in each test process starts a cluster with
//! `deploy/pg.sh start` and leaves behind a detached watcher that runs `deploy/pg.sh stop`
//! once the test process has exited (no atexit: unsafe code is forbidden here).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// Names the admin URL of the run's cluster (database `postgres`, superuser `postgres`).
pub const URL_VAR: &str = "SOLARIA_TEST_DATABASE_URL";

const HINT: &str = "the PostgreSQL tests need the PostgreSQL server binaries: run \
    `bash deploy/pg.sh install` (as root it runs `apt-get update && apt-get install -y postgresql`), \
    or set PG_BINDIR to a directory holding initdb and pg_ctl, or set SOLARIA_TEST_DATABASE_URL \
    to a superuser URL of a throwaway server; `bash deploy/test.sh` does all of this";

/// A database of its own for one test, on the run's throwaway cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestDatabase {
    /// Connects to this database as the superuser `postgres`.
    pub url: String,
    /// The database's name: `solaria_test_<uuid>`.
    pub name: String,
}

/// Creates an empty database on the run's cluster (starting one for this test process
/// when `SOLARIA_TEST_DATABASE_URL` is unset). Panics saying what to install or run when
/// no PostgreSQL can be had.
pub async fn fresh_database() -> TestDatabase {
    let admin = admin_url();
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

/// The admin URL of the run's cluster, started here once per process if need be.
fn admin_url() -> &'static str {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    let url = URL.get_or_init(|| match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Ok(url.trim().to_string()),
        _ => start_cluster(),
    });
    match url {
        Ok(url) => url,
        Err(e) => panic!("no PostgreSQL for the tests: {e}"),
    }
}

/// Starts a cluster for this test process and arranges for it to be stopped (and its
/// directory removed) when the process exits.
fn start_cluster() -> Result<String, String> {
    let pg_sh = crate::workspace().join("deploy/pg.sh");
    let dir = tempfile::Builder::new()
        .prefix("solaria-pg-")
        .tempdir()
        .map_err(|e| format!("creating a temporary directory: {e}"))?
        .keep();

    // The watcher first: if this process dies while the cluster starts, it still goes.
    spawn_watcher(&pg_sh, &dir)?;

    let out = Command::new("bash")
        .arg(&pg_sh)
        .arg("start")
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running bash {}: {e}", pg_sh.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !url.starts_with("postgres://") {
        stop_cluster(&pg_sh, &dir);
        return Err(format!(
            "`bash deploy/pg.sh start {}` failed ({}):\n{stderr}\n{HINT}",
            dir.display(),
            out.status
        ));
    }
    Ok(url)
}

/// A detached `sh` that waits for this process to end, then stops the cluster. It lives
/// in a process group of its own so Ctrl-C on the test run does not kill it first.
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
