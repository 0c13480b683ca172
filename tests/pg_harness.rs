//! The throwaway-PostgreSQL harness itself: each `fresh_database()` is a distinct, empty
//! database of its own, and the server listens on loopback only.

use solaria_tests::pg::{TestDatabase, fresh_database};
use sqlx::{Connection, PgConnection};

async fn connect(db: &TestDatabase) -> PgConnection {
    PgConnection::connect(&db.url)
        .await
        .expect("connect to the test database")
}

async fn user_tables(conn: &mut PgConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables \
         WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    )
    .fetch_one(conn)
    .await
    .expect("count user tables")
}

#[tokio::test]
async fn two_fresh_databases_are_distinct_and_empty() {
    let a = fresh_database().await;
    let b = fresh_database().await;
    assert_ne!(a.name, b.name);
    assert_ne!(a.url, b.url);
    for db in [&a, &b] {
        assert!(db.name.starts_with("solaria_test_"), "{db:?}");
        let mut conn = connect(db).await;
        let current: String = sqlx::query_scalar("SELECT current_database()")
            .fetch_one(&mut conn)
            .await
            .expect("current_database()");
        assert_eq!(current, db.name);
        assert_eq!(user_tables(&mut conn).await, 0, "{db:?} is not empty");
    }
}

#[tokio::test]
async fn a_table_in_one_database_is_absent_from_another() {
    let a = fresh_database().await;
    let b = fresh_database().await;
    let mut in_a = connect(&a).await;
    sqlx::raw_sql(
        "CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'x')",
    )
    .execute(&mut in_a)
    .await
    .expect("create a table in a");
    assert_eq!(user_tables(&mut in_a).await, 1);

    let mut in_b = connect(&b).await;
    let found: Option<String> = sqlx::query_scalar("SELECT to_regclass('public.notes')::text")
        .fetch_one(&mut in_b)
        .await
        .expect("to_regclass");
    assert_eq!(found, None, "a's table is visible in b");
    assert_eq!(user_tables(&mut in_b).await, 0);
}

#[tokio::test]
async fn the_server_listens_on_loopback_only() {
    let db = fresh_database().await;
    assert!(db.url.contains("@127.0.0.1:"), "{}", db.url);
    let mut conn = connect(&db).await;
    let listen: String = sqlx::query_scalar("SHOW listen_addresses")
        .fetch_one(&mut conn)
        .await
        .expect("SHOW listen_addresses");
    assert_eq!(listen, "127.0.0.1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_callers_each_get_their_own_database() {
    let tasks: Vec<_> = (0..24).map(|_| tokio::spawn(fresh_database())).collect();
    let mut names = std::collections::HashSet::new();
    for task in tasks {
        let db = task.await.expect("fresh_database task");
        assert!(
            names.insert(db.name.clone()),
            "{} handed out twice",
            db.name
        );
    }
    assert_eq!(names.len(), 24);
}
