//! Operating the central service, over real HTTP on loopback: Prometheus metrics on
//! their own listener (and not on the API's port), readiness that follows the
//! database, graceful shutdown that finishes a request in flight, and the request id
//! echoed on every answer.

use serde_json::json;
use solaria_tests::central::{Central, Options};
use solaria_tests::pg::fresh_database;
use solaria_tests::records::{observation, session, stamp, wire};
use std::io::{Read, Write};
use std::time::Duration;

/// The value of the sample `name{labels…}` in an exposition (0 when absent).
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (metric, rest) = series.split_once('{').unwrap_or((series, ""));
            (metric == name
                && labels
                    .iter()
                    .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\""))))
            .then(|| value.parse::<f64>().ok())
            .flatten()
        })
        .sum()
}

async fn scrape(c: &Central) -> String {
    let url = c.metrics_url.as_ref().expect("metrics listener");
    let r = c
        .client
        .get(format!("{url}/metrics"))
        .send()
        .await
        .expect("scrape");
    assert_eq!(r.status(), 200);
    let ct = r.headers()["content-type"]
        .to_str()
        .expect("content type")
        .to_string();
    assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
    let text = r.text().await.expect("exposition");
    assert!(text.ends_with("# EOF\n"), "a complete exposition");
    text
}

#[tokio::test]
async fn metrics_are_served_on_their_own_listener_and_count_requests() {
    let c = Central::start_with(Options {
        metrics_listen: true,
        ..Options::default()
    })
    .await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    // The registry is process-wide and other tests run beside this one: compare
    // before and after, and expect at least this test's own traffic.
    let before = scrape(&c).await;

    for _ in 0..3 {
        assert_eq!(
            c.client
                .get(c.at("/healthz"))
                .send()
                .await
                .expect("healthz")
                .status(),
            200
        );
    }
    assert_eq!(
        c.client
            .get(c.at("/no/such/path"))
            .send()
            .await
            .expect("404")
            .status(),
        404
    );
    assert_eq!(
        c.client
            .get(c.at("/memory/changes"))
            .send()
            .await
            .expect("401")
            .status(),
        401
    );
    let s = session(m.id, stamp(0));
    let o = observation(m.id, s.id, stamp(10), "cargo build");
    c.push_ok(&m, &[wire(s.clone()), wire(o.clone())]).await;
    let mut older = o.clone();
    older.meta.updated = solaria_shared::Hlc::from_i64(o.meta.updated.as_i64() - 1);
    let mut bad = observation(m.id, s.id, stamp(1), "x");
    bad.meta.machine_id = solaria_shared::MachineId::new();
    c.push_ok(&m, &[wire(older), wire(bad)]).await;
    let erase = c
        .client
        .delete(c.at(&format!("/memory/records/{}", o.id)))
        .bearer_auth(&m.jwt)
        .send()
        .await
        .expect("erase");
    assert_eq!(erase.status(), 200);

    let after = scrape(&c).await;
    let delta = |name: &str, labels: &[(&str, &str)]| {
        sample(&after, name, labels) - sample(&before, name, labels)
    };
    let requests = "solaria_http_requests_total";
    assert!(
        delta(
            requests,
            &[("method", "GET"), ("route", "/healthz"), ("status", "200")]
        ) >= 3.0,
        "{after}"
    );
    assert!(
        delta(
            requests,
            &[("method", "GET"), ("route", "unmatched"), ("status", "404")]
        ) >= 1.0,
        "{after}"
    );
    assert!(
        delta(
            requests,
            &[
                ("method", "GET"),
                ("route", "/memory/changes"),
                ("status", "401")
            ]
        ) >= 1.0
    );
    assert!(
        delta(
            requests,
            &[
                ("method", "POST"),
                ("route", "/memory/sync"),
                ("status", "200")
            ]
        ) >= 2.0
    );
    assert!(
        delta(
            requests,
            &[
                ("method", "DELETE"),
                ("route", "/memory/records/{id}"),
                ("status", "200")
            ]
        ) >= 1.0
    );
    let duration = "solaria_http_request_duration_seconds_count";
    assert!(
        delta(duration, &[("method", "GET"), ("route", "/healthz")]) >= 3.0,
        "{after}"
    );
    assert!(
        sample(
            &after,
            "solaria_http_request_duration_seconds_bucket",
            &[("route", "/healthz"), ("le", "+Inf")]
        ) >= 3.0
    );
    assert!(
        delta("solaria_sync_records_total", &[("outcome", "applied")]) >= 2.0,
        "{after}"
    );
    assert!(delta("solaria_sync_records_total", &[("outcome", "stale")]) >= 1.0);
    assert!(delta("solaria_sync_records_total", &[("outcome", "rejected")]) >= 1.0);
    assert!(delta("solaria_erased_records_total", &[("kind", "observation")]) >= 1.0);
    assert!(
        after.contains("# TYPE solaria_http_requests_in_flight gauge"),
        "{after}"
    );

    // The API does not serve metrics; the metrics listener serves nothing else.
    let r = c
        .client
        .get(c.at("/metrics"))
        .bearer_auth(&m.jwt)
        .send()
        .await
        .expect("api /metrics");
    assert_eq!(r.status(), 404);
    assert!(
        !r.text()
            .await
            .expect("body")
            .contains("solaria_http_requests_total")
    );
    let metrics_url = c.metrics_url.clone().expect("metrics url");
    for path in ["/healthz", "/memory/changes", "/"] {
        let r = c
            .client
            .get(format!("{metrics_url}{path}"))
            .send()
            .await
            .expect("metrics port");
        assert_eq!(r.status(), 404, "{path} on the metrics port");
    }
    let r = c
        .client
        .post(format!("{metrics_url}/metrics"))
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 405);
}

#[tokio::test]
async fn readyz_follows_the_database() {
    let db = fresh_database().await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(3))
        .connect(&db.url)
        .await
        .expect("connect");
    let storage = solaria_central::storage::Storage::from_pool(pool);
    storage.migrate().await.expect("migrate");
    let c = Central::serve(storage, Options::default()).await;
    let r = c.client.get(c.at("/readyz")).send().await.expect("readyz");
    assert_eq!(r.status(), 200);
    let body = r.text().await.expect("body");
    assert_eq!(body.lines().next(), Some("ready"));
    assert!(
        body.contains("search by meaning: on (pgvector 0."),
        "the test cluster has pgvector: {body}"
    );

    // The database goes away under the running server.
    let admin = db.url.replace(&format!("/{}", db.name), "/postgres");
    let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
        .await
        .expect("admin connection");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        r#"DROP DATABASE "{}" WITH (FORCE)"#,
        db.name
    )))
    .execute(&mut conn)
    .await
    .expect("drop the database");
    // Answered, not left to hang: a probe gets its 503 within the server's request
    // timeout (past it, the answer would be a 408).
    let r = c.client.get(c.at("/readyz")).send().await.expect("readyz");
    assert_eq!(r.status(), 503);
    let body: serde_json::Value = r.json().await.expect("json");
    assert_eq!(body["error"], "not_ready");
    // Liveness does not depend on the database.
    assert_eq!(
        c.client
            .get(c.at("/healthz"))
            .send()
            .await
            .expect("healthz")
            .status(),
        200
    );
}

#[tokio::test]
async fn readyz_is_503_when_the_database_cannot_be_reached() {
    // A pool on a port where nothing listens (port 1 on loopback).
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(2))
        .connect_lazy("postgres://postgres@127.0.0.1:1/none")
        .expect("lazy pool");
    let c = Central::serve(
        solaria_central::storage::Storage::from_pool(pool),
        Options::default(),
    )
    .await;
    let r = c.client.get(c.at("/readyz")).send().await.expect("readyz");
    assert_eq!(r.status(), 503);
    assert_eq!(
        c.client
            .get(c.at("/healthz"))
            .send()
            .await
            .expect("healthz")
            .status(),
        200
    );
}

#[tokio::test]
async fn graceful_shutdown_finishes_a_request_in_flight() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let s = session(m.id, stamp(0));
    let body = json!({ "records": [wire(s.clone())] })
        .to_string()
        .into_bytes();
    let addr = c.url.trim_start_matches("http://").to_string();

    // The head first, asking to be told to go on: the server answers `100 Continue`
    // once its handler reads the body, so from then on the request is in flight.
    let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let head = format!(
        "POST /memory/sync HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        m.jwt,
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("write head");
    // Read off the runtime: the server answers on this test's runtime.
    let mut stream = tokio::task::spawn_blocking(move || {
        let mut interim = Vec::new();
        let mut byte = [0u8; 1];
        while !interim.ends_with(b"\r\n\r\n") {
            stream
                .read_exact(&mut byte)
                .expect("the server's interim answer");
            interim.push(byte[0]);
        }
        assert!(
            interim.starts_with(b"HTTP/1.1 100"),
            "{}",
            String::from_utf8_lossy(&interim)
        );
        stream
    })
    .await
    .expect("reader");
    // Half the body: the request is in flight when the server is told to stop.
    let half = body.len() / 2;
    stream.write_all(&body[..half]).expect("write half");
    stream.flush().expect("flush");

    let storage = c.storage.clone();
    let client = c.client.clone();
    let url = c.url.clone();
    let stopping = tokio::spawn(c.stop());
    // Once it no longer takes connections the server is stopping, and it cannot be
    // done while the request is half read.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while client.get(format!("{url}/healthz")).send().await.is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "no new connection is accepted once stopping"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !stopping.is_finished(),
        "the server waits for the request in flight"
    );

    let rest = body[half..].to_vec();
    let response = tokio::task::spawn_blocking(move || {
        stream.write_all(&rest).expect("write the rest");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("read the answer");
        answer
    })
    .await
    .expect("reader");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"outcome\":\"applied\""), "{response}");
    tokio::time::timeout(Duration::from_secs(60), stopping)
        .await
        .expect("stops once the request is answered")
        .expect("stop task");
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM memory_sessions WHERE id = $1")
        .bind(s.id.as_uuid())
        .fetch_one(storage.pool())
        .await
        .expect("count");
    assert_eq!(stored, 1, "the request's work was committed");
}

#[tokio::test]
async fn the_request_id_is_echoed_or_made() {
    let c = Central::start().await;
    for path in ["/healthz", "/no/such/path", "/memory/changes"] {
        let r = c
            .client
            .get(c.at(path))
            .header("x-request-id", "trace-me-42")
            .send()
            .await
            .expect("request");
        assert_eq!(r.headers()["x-request-id"], "trace-me-42", "{path}");
    }
    let r = c
        .client
        .get(c.at("/healthz"))
        .send()
        .await
        .expect("request");
    let made = r.headers()["x-request-id"]
        .to_str()
        .expect("ascii")
        .to_string();
    assert!(
        uuid::Uuid::parse_str(&made).is_ok(),
        "a fresh id when none is sent: {made}"
    );
}

#[tokio::test]
async fn the_binary_serves_beside_the_edge_s_environment_variables() {
    let db = fresh_database().await;
    let mut child = solaria_tests::central::command(
        solaria_tests::binary("solaria-central").as_path(),
        &["serve", "--log-format", "json"],
        &[
            ("SOLARIA_DATABASE_URL", db.url.as_str()),
            ("SOLARIA_JWT_SECRET", solaria_tests::central::JWT_SECRET),
            // Any free port: the log says which (no port picked beforehand that
            // another test could take meanwhile).
            ("SOLARIA_LISTEN", "127.0.0.1:0"),
            // The edge's variables, and a typo: none of them stops central.
            ("SOLARIA_MODEL_MIRROR", "x"),
            ("SOLARIA_HOME", "/tmp/x"),
            ("SOLARIA_RATE_LIMT_PER_SEC", "5"),
        ],
    )
    .spawn()
    .expect("spawn solaria-central serve");
    let listen = solaria_tests::central::serving_address(&mut child).await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let r = client
        .get(format!("http://{listen}/healthz"))
        .send()
        .await
        .expect("solaria-central answers where it says it listens");
    assert_eq!(r.status(), 200, "solaria-central answers /healthz");
    child.kill().await.expect("stop solaria-central");
}

#[tokio::test]
async fn a_misspelled_key_in_the_config_file_stops_the_binary_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("central.toml");
    std::fs::write(
        &file,
        format!(
            "database_url = \"postgres://127.0.0.1:1/none\"\njwt_secret = \"{}\"\nmax_body_byte = 100\n",
            solaria_tests::central::JWT_SECRET
        ),
    )
    .expect("write config");
    let path = file.display().to_string();
    let out = solaria_tests::central::command(
        solaria_tests::binary("solaria-central").as_path(),
        &["--config", &path, "serve"],
        &[],
    )
    .output()
    .await
    .expect("run solaria-central");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown key `max_body_byte`") && stderr.contains("max_body_bytes"),
        "{stderr}"
    );
}
