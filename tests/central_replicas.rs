//! Several replicas of the central service on one database: what they prepare when
//! they start together (one vector index per model, built concurrently, outside the
//! setup lock), what they do with an index an interrupted build left invalid, and
//! that a machine may be served by any of them (tokens taken by every replica, an
//! enrollment token spent once however many replicas it is sent to), and that a
//! replica killed with a push inside it loses nothing when the machine syncs to
//! another.

use solaria_central::storage::{Storage, VectorModels};
use solaria_shared::wire::RecordOutcome;
use solaria_tests::central::{Central, Options, Replica, ok, test_tls};
use solaria_tests::edge::Edge;
use solaria_tests::pg::fresh_database;
use solaria_tests::records::{session, stamp, wire};
use solaria_tests::until;
use sqlx::{Connection, PgConnection};

/// The vector indexes of the database: name, whether valid, and the table it is on.
async fn vector_indexes(storage: &Storage) -> Vec<(String, bool, String)> {
    sqlx::query_as(
        "SELECT c.relname::text, i.indisvalid, i.indrelid::regclass::text
         FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
         WHERE c.relname LIKE 'memory_vectors_hnsw_%' ORDER BY c.relname",
    )
    .fetch_all(storage.pool())
    .await
    .expect("indexes")
}

async fn replica(url: &str) -> Storage {
    Storage::connect(url, 4).await.expect("connects")
}

#[tokio::test]
async fn replicas_starting_together_build_one_valid_index_per_model() {
    let db = fresh_database().await;
    let (a, b, c) = (
        replica(&db.url).await,
        replica(&db.url).await,
        replica(&db.url).await,
    );
    let (ra, rb, rc) = tokio::join!(a.migrate(), b.migrate(), c.migrate());
    for started in [ra, rb, rc] {
        started.expect("every replica starts");
    }
    for storage in [&a, &b, &c] {
        assert!(storage.meaning().is_on(), "{}", storage.meaning().line());
    }
    let indexes = vector_indexes(&a).await;
    assert_eq!(
        indexes.len(),
        VectorModels::default().fingerprints().len(),
        "one index per listed model: {indexes:?}"
    );
    assert!(
        indexes
            .iter()
            .all(|(_, valid, table)| *valid && table == "memory_vectors"),
        "{indexes:?}"
    );
}

#[tokio::test]
async fn an_index_an_interrupted_build_left_invalid_is_built_again_at_the_next_start() {
    let db = fresh_database().await;
    let first = replica(&db.url).await;
    first.migrate().await.expect("starts");
    let indexes = vector_indexes(&first).await;
    let (name, _, _) = indexes.first().cloned().expect("an index");
    // What a concurrent build that failed midway leaves: an invalid index of that
    // name (here a unique one that met duplicates, on a scratch table).
    for sql in [
        format!("DROP INDEX {name}"),
        "CREATE TABLE interrupted (x int)".to_owned(),
        "INSERT INTO interrupted VALUES (1), (1)".to_owned(),
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(first.pool())
            .await
            .expect("setup");
    }
    let failed = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE UNIQUE INDEX CONCURRENTLY {name} ON interrupted (x)"
    )))
    .execute(first.pool())
    .await;
    assert!(failed.is_err(), "the build fails on the duplicates");
    let left = vector_indexes(&first).await;
    assert!(
        left.iter()
            .any(|(n, valid, table)| *n == name && !valid && table == "interrupted"),
        "an invalid index is left: {left:?}"
    );

    let next = replica(&db.url).await;
    next.migrate().await.expect("starts again");
    assert!(next.meaning().is_on(), "{}", next.meaning().line());
    let rebuilt = vector_indexes(&next).await;
    assert_eq!(rebuilt.len(), indexes.len(), "{rebuilt:?}");
    assert!(
        rebuilt
            .iter()
            .all(|(_, valid, table)| *valid && table == "memory_vectors"),
        "the invalid index was dropped and built again on the vectors: {rebuilt:?}"
    );
}

/// Three replicas serving one database, each with its own pool, as behind a
/// load balancer.
async fn three_replicas() -> [Central; 3] {
    let db = fresh_database().await;
    let mut served = Vec::new();
    for _ in 0..3 {
        let storage = replica(&db.url).await;
        storage.migrate().await.expect("starts");
        served.push(Central::serve(storage, Options::default()).await);
    }
    served.try_into().expect("three")
}

#[tokio::test]
async fn a_token_from_one_replica_is_taken_by_the_others_and_an_enrollment_token_once() {
    let [a, b, c] = three_replicas().await;
    let account = a.account("acme").await;

    // Logged in through one replica, a machine pushes through the others.
    let m = a.machine(account, "laptop").await;
    let record = wire(session(m.id, stamp(0)));
    let outcomes = b.push_ok(&m, &[record]).await;
    assert!(
        matches!(outcomes.as_slice(), [RecordOutcome::Applied { .. }]),
        "{outcomes:?}"
    );
    let page = c.changes(&m, 0).await;
    assert_eq!(page.changes.len(), 1, "replica c reads what b took");

    // One enrollment token, sent to the three replicas at once: one machine.
    let token = a
        .storage
        .create_enrollment_token(account, std::time::Duration::from_secs(3600))
        .await
        .expect("token");
    let enroll = |r: &Central| {
        r.client
            .post(r.at("/memory/enroll"))
            .json(&serde_json::json!({"token": token, "name": "desktop"}))
            .send()
    };
    let (ra, rb, rc) = tokio::join!(enroll(&a), enroll(&b), enroll(&c));
    let statuses: Vec<reqwest::StatusCode> = [ra, rb, rc]
        .into_iter()
        .map(|r| r.expect("answered").status())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| s.is_success()).count(),
        1,
        "the token is spent once: {statuses:?}"
    );
    assert!(
        statuses
            .iter()
            .all(|s| s.is_success() || *s == reqwest::StatusCode::UNAUTHORIZED),
        "the others are refused as a spent token is: {statuses:?}"
    );
    let machines: i64 =
        sqlx::query_scalar("SELECT count(*) FROM memory_machines WHERE machine_name = 'desktop'")
            .fetch_one(a.storage.pool())
            .await
            .expect("count");
    assert_eq!(machines, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_with_a_push_inside_it_loses_nothing_when_the_edge_syncs_to_another() {
    let db = fresh_database().await;
    let (tls, ca_pem) = test_tls();
    let ca = tls.path().join("ca.pem");
    std::fs::write(&ca, ca_pem).expect("ca");
    ok(&db.url, &["migrate"]);
    ok(
        &db.url,
        &["account", "create", "acme", "--admin", "lin@acme.dev"],
    );
    let program = solaria_tests::binary("solaria-central");
    let doomed = Replica::serve(&program, &db.url, tls.path()).await;
    let survivor = Replica::serve(&program, &db.url, tls.path()).await;
    let laptop = std::sync::Arc::new(Edge::new("laptop"));
    laptop.login_to(
        &doomed.url,
        ok(&db.url, &["enroll-token", "acme"]).trim(),
        &ca,
    );
    const PROMPTS: usize = 60;
    for i in 0..PROMPTS {
        laptop.prompt(&format!("s{}", i % 3), &format!("quartz note {i}"));
    }

    // The account's row held: the push waits inside the doomed replica's transaction.
    let mut holder = PgConnection::connect(&db.url).await.expect("connect");
    let mut held = holder.begin().await.expect("begin");
    sqlx::query("SELECT change_seq FROM accounts FOR UPDATE")
        .fetch_all(&mut *held)
        .await
        .expect("hold the account");
    let syncing = {
        let laptop = laptop.clone();
        tokio::task::spawn_blocking(move || laptop.run(&["sync"]))
    };
    let watcher = fresh_connection(&db.url).await;
    until("the push waits inside the replica", || {
        let watcher = watcher.clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'",
            )
            .fetch_one(&watcher)
            .await
            .expect("activity")
                > 0
        }
    })
    .await;
    doomed.stop().await;
    held.rollback().await.expect("release");
    let interrupted = syncing.await.expect("sync ran");
    assert!(
        !interrupted.status.success(),
        "the sync to the killed replica fails: {}",
        String::from_utf8_lossy(&interrupted.stdout)
    );

    // The same machine syncs to the other replica, as a load balancer would send it.
    laptop.point_at(&survivor.url);
    laptop.ok(&["sync"]);
    let desktop = Edge::new("desktop");
    desktop.login_to(
        &survivor.url,
        ok(&db.url, &["enroll-token", "acme"]).trim(),
        &ca,
    );
    desktop.ok(&["sync"]);
    let (prompts, positions): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE kind = 'prompt'), count(DISTINCT seq) - count(*)
         FROM memory_observations_remote",
    )
    .fetch_one(&watcher)
    .await
    .expect("counts");
    assert_eq!(prompts, PROMPTS as i64, "every prompt on central, once");
    assert_eq!(positions, 0, "no feed position given twice");
    assert_eq!(
        desktop.count("SELECT count(*) FROM observations WHERE kind = 'prompt'"),
        PROMPTS as i64,
        "the other machine receives each once"
    );
    survivor.stop().await;
}

async fn fresh_connection(url: &str) -> sqlx::PgPool {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await
        .expect("connect")
}
