//! Seconds from a primary's crash to machines pushing again, on a synchronous standby
//! promoted by hand (`pg_ctl promote`) and a service started on it — against the
//! baseline of the same service restarted on a primary that stayed up, measured in
//! the same run, rounds interleaved. Each round builds its own primary and standby.
//!
//! ```sh
//! cargo bench -p solaria-tests --bench failover
//! ```

use solaria_central::storage::Storage;
use solaria_tests::bench::pct;
use solaria_tests::central::{Central, Machine, Options};
use solaria_tests::pg::Server;
use solaria_tests::records::{session, stamp, wire};
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;

/// A primary with a synchronous standby, database `solaria` on it, migrated.
async fn pair() -> (Server, Server, String) {
    let primary = Server::primary();
    let standby = primary.standby();
    let db = primary.synchronous_database("solaria").await;
    Storage::connect(&db, 4)
        .await
        .expect("connect")
        .migrate()
        .await
        .expect("migrate");
    (primary, standby, db)
}

/// Starts a service on `db` and pushes as `m` until a push is taken.
async fn serve_and_push(db: &str, m: &Machine) -> Central {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            Instant::now() < deadline,
            "no push taken in two minutes on {db}"
        );
        if let Ok(storage) = Storage::connect(db, 4).await
            && storage.migrate().await.is_ok()
        {
            let c = Central::serve(storage, Options::bench()).await;
            if c.push(m, &[wire(session(m.id, stamp(0)))])
                .await
                .status()
                .is_success()
            {
                return c;
            }
            c.stop().await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut failover = Vec::new();
    let mut restart = Vec::new();
    for round in 0..ROUNDS {
        let (primary, standby, db) = pair().await;
        let c = Central::serve(
            Storage::connect(&db, 4).await.expect("connect"),
            Options::bench(),
        )
        .await;
        let account = c.account("bench").await;
        let m = c.machine(account, "laptop").await;

        // Baseline: the service stopped and started again on the same primary.
        let t = Instant::now();
        c.stop().await;
        let c = serve_and_push(&db, &m).await;
        restart.push(t.elapsed());

        // The primary crashes; the standby is promoted and a service started on it.
        let t = Instant::now();
        primary.crash();
        c.abort().await;
        standby.promote();
        let promoted = standby.database("solaria");
        let c = serve_and_push(&promoted, &m).await;
        failover.push(t.elapsed());
        c.stop().await;
        eprintln!("round {} of {ROUNDS} done", round + 1);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (f50, f95) = (pct(&mut failover, 0.5), pct(&mut failover, 0.95));
    let (r50, r95) = (pct(&mut restart, 0.5), pct(&mut restart, 0.95));
    println!(
        "primary crash → standby promoted → a push taken: p50 {:.0} ms, p95 {:.0} ms \
         = {:.2}× / {:.2}× a service restart on a primary that stayed up (p50 {:.0} ms, p95 {:.0} ms)",
        ms(f50),
        ms(f95),
        ms(f50) / ms(r50),
        ms(f95) / ms(r95),
        ms(r50),
        ms(r95)
    );
}
