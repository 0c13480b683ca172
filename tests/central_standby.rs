//! The central service on a primary with a streaming standby (`pg_basebackup -R`, the
//! run's PostgreSQL 16): search is answered by the standby while pushes go to the
//! primary, reads fall back to the primary when the standby stops, a service pointed
//! at the standby as its database refuses to start without trying to migrate, and a
//! synchronous standby promoted after the primary crashed holds every acknowledged
//! push.

use serde_json::Value;
use solaria_central::storage::{Databases, StandbyState, Storage};
use solaria_tests::central::{Central, Machine, Options, get_ok, refused};
use solaria_tests::pg::Server;
use solaria_tests::records::{observation, session, stamp, wire};
use solaria_tests::until;
use sqlx::{Connection, PgConnection};
use std::time::Duration;

/// The tables that hold what machines push.
const RECORD_TABLES: &str = "'memory_sessions', 'memory_observations_remote', \
     'memory_summaries_remote', 'memory_knowledge', 'memory_vectors'";

/// Creates database `solaria` on `server` and returns its URL.
async fn create_database(server: &Server) -> String {
    let mut admin = PgConnection::connect(&server.url).await.expect("admin");
    sqlx::raw_sql("CREATE DATABASE solaria")
        .execute(&mut admin)
        .await
        .expect("create database");
    server.database("solaria")
}

/// Scans (sequential and by index) of the record tables on the server at `url`, as
/// its statistics say after every session that used them has ended.
async fn record_scans(url: &str) -> i64 {
    let mut conn = PgConnection::connect(url).await.expect("connect");
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0)::int8
         FROM pg_stat_user_tables WHERE relname IN ({RECORD_TABLES})"
    )))
    .fetch_one(&mut conn)
    .await
    .expect("scan counters")
}

/// Whether the standby at `standby` has replayed everything the primary at
/// `primary` has written so far.
async fn caught_up(primary: &str, standby: &str) -> bool {
    let mut p = PgConnection::connect(primary).await.expect("primary");
    let written: String = sqlx::query_scalar("SELECT pg_current_wal_insert_lsn()::text")
        .fetch_one(&mut p)
        .await
        .expect("lsn");
    let mut s = PgConnection::connect(standby).await.expect("standby");
    sqlx::query_scalar("SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn")
        .bind(written)
        .fetch_one(&mut s)
        .await
        .expect("replayed")
}

async fn found(c: &Central, m: &Machine, word: &str) -> usize {
    let r: Value = get_ok(c, m, &format!("/memory/search?q={word}")).await;
    r["hits"].as_array().map_or(0, Vec::len)
}

/// A service's storage on the primary `db`, reading from the standby `replica_db`
/// while it is at most five seconds behind.
async fn with_standby(db: &str, replica_db: &str) -> Storage {
    Storage::connect_to(Databases {
        primary: db,
        pooled: None,
        standby: Some((replica_db, Duration::from_secs(5))),
        max_connections: 4,
    })
    .await
    .expect("connect to both")
}

async fn standby_serving(storage: &Storage) -> bool {
    matches!(storage.standby_state(), Some(StandbyState::Serving { .. }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_is_answered_by_the_standby_while_pushes_go_to_the_primary() {
    let primary = Server::primary();
    let standby = primary.standby();
    let db = create_database(&primary).await;
    let replica_db = standby.database("solaria");

    // What the team pushed, through a service on the primary alone.
    let first = Storage::connect(&db, 4).await.expect("connect");
    first.migrate().await.expect("migrate");
    let c = Central::serve(first.clone(), Options::default()).await;
    let account = c.account("acme").await;
    let desktop = c.machine(account, "desktop").await;
    let s = session(desktop.id, stamp(0));
    let o = observation(desktop.id, s.id, stamp(1), "zeppelin hangar inspection");
    c.push_ok(&desktop, &[wire(s.clone()), wire(o)]).await;
    c.stop().await;
    // Ending every session flushes its statistics: what follows starts from them.
    first.close().await;
    until("the standby replays the pushes", || {
        caught_up(&db, &replica_db)
    })
    .await;

    let storage = with_standby(&db, &replica_db).await;
    // Already migrated (a start's setup would scan the primary's vectors), and no
    // vectors were pushed: search runs by words.
    let c = Central::serve(storage.clone(), Options::default()).await;
    until("the standby is measured within its bound", || {
        standby_serving(&storage)
    })
    .await;
    let ready = c
        .client
        .get(c.at("/readyz"))
        .send()
        .await
        .expect("readyz")
        .text()
        .await
        .expect("body");
    assert!(ready.contains("standby: serving reads"), "{ready}");

    let (primary_before, standby_before) =
        (record_scans(&db).await, record_scans(&replica_db).await);
    for _ in 0..5 {
        assert_eq!(
            found(&c, &desktop, "zeppelin").await,
            1,
            "the standby finds it"
        );
    }
    c.stop().await;
    storage.close().await;
    let (primary_after, standby_after) = (record_scans(&db).await, record_scans(&replica_db).await);
    assert_eq!(
        primary_after, primary_before,
        "no search read the primary's record tables"
    );
    assert!(
        standby_after > standby_before,
        "the standby answered: {standby_before} → {standby_after} scans"
    );

    // Pushes go to the primary (the standby cannot take a write) and reach the
    // standby's answers once it has replayed them.
    let storage = with_standby(&db, &replica_db).await;
    let c = Central::serve(storage.clone(), Options::default()).await;
    let later = observation(desktop.id, s.id, stamp(2), "zeppelin mooring mast");
    c.push_ok(&desktop, &[wire(later)]).await;
    until("a search finds the new push", || async {
        found(&c, &desktop, "zeppelin").await == 2
    })
    .await;

    // The standby goes away: reads come back to the primary, nothing fails.
    drop(standby);
    until("the standby is passed over", || async {
        !standby_serving(&storage).await
    })
    .await;
    assert_eq!(
        found(&c, &desktop, "zeppelin").await,
        2,
        "the primary answers"
    );
    c.stop().await;
}

#[tokio::test]
async fn a_service_given_a_standby_as_its_database_refuses_to_start_and_says_where_it_goes() {
    let primary = Server::primary();
    let standby = primary.standby();
    let db = create_database(&primary).await;
    let replica_db = standby.database("solaria");
    until("the standby has the database", || async {
        PgConnection::connect(&replica_db).await.is_ok()
    })
    .await;
    for command in ["serve", "migrate"] {
        let said = refused(&replica_db, &[command]);
        assert!(
            said.contains("database_url names a standby") && said.contains("read_database_url"),
            "{command}: {said}"
        );
    }
    // Nothing was tried on it: the primary has no tables either.
    let mut conn = PgConnection::connect(&db).await.expect("primary");
    let tables: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            .fetch_one(&mut conn)
            .await
            .expect("tables");
    assert_eq!(tables, 0);
}

/// Pushes sessions of ten notes as `m` until a push is refused or fails; the notes
/// each acknowledged push carried are added to `acked`.
async fn push_until_refused(
    c: &Central,
    m: &Machine,
    acked: &std::sync::Mutex<Vec<uuid::Uuid>>,
) -> usize {
    let mut pushes = 0;
    loop {
        let s = session(m.id, stamp(0));
        let notes: Vec<_> = (0..10)
            .map(|i| observation(m.id, s.id, stamp(i + 1), &format!("failover note {i}")))
            .collect();
        let mut records = vec![wire(s)];
        records.extend(notes.iter().cloned().map(wire));
        match c.push(m, &records).await {
            r if r.status().is_success() => {
                pushes += 1;
                let mut acked = acked.lock().expect("acked");
                acked.extend(notes.iter().map(|o| *o.id.as_uuid()));
            }
            _ => return pushes,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synchronous_standby_promoted_after_the_primary_crashed_holds_every_acknowledged_push() {
    let primary = Server::primary();
    let standby = primary.standby();
    let db = primary.synchronous_database("solaria").await;
    until("the standby is synchronous", || {
        let url = primary.url.clone();
        async move {
            let mut conn = PgConnection::connect(&url).await.expect("primary");
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'",
            )
            .fetch_one(&mut conn)
            .await
            .expect("replication")
                == 1
        }
    })
    .await;
    let storage = Storage::connect(&db, 8).await.expect("connect");
    storage.migrate().await.expect("migrate");
    let c = Central::serve(storage, Options::default()).await;
    let account = c.account("acme").await;
    let mut machines = Vec::new();
    for name in ["a", "b", "c"] {
        machines.push(c.machine(account, name).await);
    }

    // Three machines push while the primary crashes under them.
    let acked = std::sync::Mutex::new(Vec::new());
    let pushing =
        futures_util::future::join_all(machines.iter().map(|m| push_until_refused(&c, m, &acked)));
    let crashing = async {
        until("pushes are acknowledged", || async {
            acked.lock().expect("acked").len() >= 300
        })
        .await;
        primary.crash();
    };
    let (pushes, ()) = tokio::join!(pushing, crashing);
    let acked = acked.into_inner().expect("acked");
    assert!(
        pushes.iter().all(|&n| n > 0),
        "every machine pushed: {pushes:?}"
    );
    c.stop().await;

    // The standby promoted: every acknowledged note is there, and pushes go on.
    standby.promote();
    let promoted = standby.database("solaria");
    let storage = Storage::connect(&promoted, 8).await.expect("connect");
    storage
        .migrate()
        .await
        .expect("the promoted standby takes writes");
    let mut conn = PgConnection::connect(&promoted).await.expect("promoted");
    let kept: i64 =
        sqlx::query_scalar("SELECT count(*) FROM memory_observations_remote WHERE id = ANY($1)")
            .bind(&acked)
            .fetch_one(&mut conn)
            .await
            .expect("count");
    assert_eq!(
        kept,
        acked.len() as i64,
        "every acknowledged note survived the crash"
    );
    let c = Central::serve(storage, Options::default()).await;
    let s = session(machines[0].id, stamp(100));
    let r = c.push(&machines[0], &[wire(s)]).await;
    assert!(r.status().is_success(), "pushes go on: {}", r.status());
    c.stop().await;
}
