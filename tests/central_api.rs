//! The central service over real HTTP on loopback, on a fresh PostgreSQL database per
//! test: enrollment and tokens, pushing batches (idempotent, last-write-wins), the
//! change feed, bad input, auth failures, account isolation and the rate limit.

use serde_json::{Value, json};
use solaria_shared::wire::{RecordOutcome, WireRecord};
use solaria_shared::{Hlc, MachineId};
use solaria_tests::central::{Central, Options};
use solaria_tests::records::{observation, session, stamp, summary, wire};

#[tokio::test]
async fn enroll_push_and_pull_round_trip() {
    let c = Central::start().await;
    assert_eq!(
        c.client
            .get(c.at("/healthz"))
            .send()
            .await
            .expect("healthz")
            .status(),
        200
    );
    assert_eq!(
        c.client
            .get(c.at("/readyz"))
            .send()
            .await
            .expect("readyz")
            .status(),
        200
    );
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let s = session(laptop.id, stamp(0));
    let o = observation(laptop.id, s.id, stamp(1), "cargo test auth");
    let sum = summary(laptop.id, s.id, stamp(2), "Fixed the refresh flow");
    let records = vec![wire(s.clone()), wire(o.clone()), wire(sum.clone())];
    let results = c.push_ok(&laptop, &records).await;
    assert!(
        results
            .iter()
            .all(|r| matches!(r, RecordOutcome::Applied { .. })),
        "{results:?}"
    );

    let desktop = c.machine(acct, "desktop").await;
    let page = c.changes(&desktop, 0).await;
    let got: Vec<WireRecord> = page.changes.iter().map(|ch| ch.record.clone()).collect();
    assert_eq!(
        got, records,
        "another machine of the account pulls exactly what was pushed"
    );
    assert!(!page.more);
    assert_eq!(page.next, page.changes.last().expect("changes").seq);
    assert!(
        c.changes(&desktop, page.next).await.changes.is_empty(),
        "nothing after the cursor"
    );

    let logged: (String, i32, String) = sqlx::query_as(
        "SELECT sync_type, observations_count, status FROM memory_sync_log WHERE machine_id = $1",
    )
    .bind(laptop.id.as_uuid())
    .fetch_one(c.storage.pool())
    .await
    .expect("one sync log row");
    assert_eq!(logged, ("batch".to_string(), 3, "success".to_string()));
}

#[tokio::test]
async fn replays_change_nothing_and_stale_writes_lose_with_the_winner() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let a = c.machine(acct, "a").await;
    let b = c.machine(acct, "b").await;
    // Stamps relative to one instant, so "later" means later however slow the test.
    let t0 = stamp(0).physical_ms();
    let at = |ms: u64| Hlc::new(t0 + ms, 0);
    let s = session(a.id, at(0));
    let o = observation(a.id, s.id, at(10), "first version");
    let batch = vec![wire(s.clone()), wire(o.clone())];
    c.push_ok(&a, &batch).await;
    let after_first = c.changes(&a, 0).await;
    let again = c.push_ok(&a, &batch).await;
    assert!(
        again
            .iter()
            .all(|r| matches!(r, RecordOutcome::Applied { .. })),
        "a replay is harmless"
    );
    assert_eq!(
        c.changes(&a, 0).await,
        after_first,
        "a replay changes nothing, not even the feed"
    );
    assert_eq!(c.count("memory_observations_remote").await, 1);

    // B edits the same record later: B wins.
    let mut newer = o.clone();
    newer.meta.machine_id = b.id;
    newer.meta.updated = at(20);
    newer.title = "Bash: second version".into();
    assert!(matches!(
        c.push_ok(&b, &[wire(newer.clone())]).await[0],
        RecordOutcome::Applied { .. }
    ));
    // A's older edit arrives after: it loses and learns the winner.
    let mut older = o.clone();
    older.meta.updated = at(15);
    older.title = "Bash: stale version".into();
    match &c.push_ok(&a, &[wire(older)]).await[0] {
        RecordOutcome::Stale { winner, .. } => assert_eq!(**winner, wire(newer.clone())),
        other => panic!("expected stale, got {other:?}"),
    }
    let title: String = sqlx::query_scalar("SELECT title FROM memory_observations_remote")
        .fetch_one(c.storage.pool())
        .await
        .expect("title");
    assert_eq!(title, "Bash: second version");

    // Equal stamps: the larger machine id wins, the same way on every node.
    let tie = at(30);
    let mut from_a = newer.clone();
    from_a.meta = solaria_shared::RecordMeta {
        machine_id: a.id,
        updated: tie,
        deleted: false,
    };
    from_a.title = "from a".into();
    let mut from_b = newer.clone();
    from_b.meta = solaria_shared::RecordMeta {
        machine_id: b.id,
        updated: tie,
        deleted: false,
    };
    from_b.title = "from b".into();
    c.push_ok(&a, &[wire(from_a.clone())]).await;
    c.push_ok(&b, &[wire(from_b.clone())]).await;
    let title: String = sqlx::query_scalar("SELECT title FROM memory_observations_remote")
        .fetch_one(c.storage.pool())
        .await
        .expect("title");
    let expected = if b.id > a.id { "from b" } else { "from a" };
    assert_eq!(title, expected);
    assert!(
        solaria_shared::hlc::wins_over(tie, a.id.max(b.id), tie, a.id.min(b.id)),
        "same rule as the edge"
    );
}

#[tokio::test]
async fn bad_input_gets_a_clear_4xx_and_stores_nothing() {
    let c = Central::start_with(Options {
        max_body_bytes: 4 * 1024 * 1024,
        ..Options::default()
    })
    .await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let s = session(m.id, stamp(0));
    let send = |body: Vec<u8>, content_type: &'static str| {
        c.client
            .post(c.at("/memory/sync"))
            .bearer_auth(&m.jwt)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let cases: Vec<(&str, Vec<u8>, &str, u16, &str)> = vec![
        (
            "malformed JSON",
            b"{\"records\": [".to_vec(),
            "application/json",
            400,
            "malformed_json",
        ),
        (
            "wrong types",
            br#"{"records": "many"}"#.to_vec(),
            "application/json",
            422,
            "invalid_body",
        ),
        (
            "unknown record type",
            br#"{"records": [{"type": "diary", "id": "x"}]}"#.to_vec(),
            "application/json",
            422,
            "invalid_body",
        ),
        (
            "invalid UTF-8",
            b"{\"records\": [\"\xff\xfe\"]}".to_vec(),
            "application/json",
            400,
            "malformed_json",
        ),
        (
            "not JSON at all",
            b"records=1".to_vec(),
            "text/plain",
            415,
            "unsupported_media_type",
        ),
        (
            "10 MB body",
            {
                let mut big = b"{\"records\": [], \"pad\": \"".to_vec();
                big.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024));
                big.extend(b"\"}");
                big
            },
            "application/json",
            413,
            "body_too_large",
        ),
    ];
    for (what, body, ct, status, code) in cases {
        let r = send(body, ct).await.expect("request");
        assert_eq!(r.status().as_u16(), status, "{what}");
        let err: Value = r.json().await.expect("JSON error body");
        assert_eq!(err["error"], code, "{what}: {err}");
        assert!(
            err["message"].as_str().is_some_and(|m| m.len() > 20),
            "{what}: says what to do"
        );
    }
    // 1001 records: refused whole with the limit named.
    let too_many: Vec<WireRecord> = (0..1001)
        .map(|i| wire(observation(m.id, s.id, stamp(i), "x")))
        .collect();
    let r = c.push(&m, &too_many).await;
    assert_eq!(r.status(), 413);
    let err: Value = r.json().await.expect("json");
    assert_eq!(err["error"], "batch_too_large");
    assert!(err["message"].as_str().expect("message").contains("1000"));
    for table in [
        "memory_sessions",
        "memory_observations_remote",
        "memory_summaries_remote",
        "memory_sync_log",
    ] {
        assert_eq!(c.count(table).await, 0, "{table} untouched");
    }
    // Exactly 1000 is fine, gzip-compressed too.
    let thousand: Vec<WireRecord> = (0..1000)
        .map(|i| wire(observation(m.id, s.id, stamp(i), "ok")))
        .collect();
    let body = serde_json::to_vec(&json!({"records": thousand})).expect("json");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &body).expect("gzip");
    let r = c
        .client
        .post(c.at("/memory/sync"))
        .bearer_auth(&m.jwt)
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(gz.finish().expect("gzip"))
        .send()
        .await
        .expect("gzip push");
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    assert_eq!(c.count("memory_observations_remote").await, 1000);
}

#[tokio::test]
async fn records_are_checked_redacted_and_clock_bounded_on_ingest() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let s = session(m.id, stamp(0));
    let secret = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";
    let mut leaky = observation(
        m.id,
        s.id,
        stamp(1),
        &format!("git push https://{secret}@github.com/acme/api"),
    );
    leaky.response = format!("token {secret} <private>home address</private>");
    let mut spoofed = observation(
        MachineId::new(),
        s.id,
        stamp(2),
        "pretending to be another machine",
    );
    spoofed.title = "spoof".into();
    let future = observation(
        m.id,
        s.id,
        Hlc::new(stamp(0).physical_ms() + 86_400_000, 0),
        "a day ahead",
    );
    let results = c
        .push_ok(
            &m,
            &[
                wire(s.clone()),
                wire(leaky.clone()),
                wire(spoofed),
                wire(future),
            ],
        )
        .await;
    assert!(matches!(results[1], RecordOutcome::Applied { .. }));
    match &results[2] {
        RecordOutcome::Rejected { reason, .. } => {
            assert!(reason.contains("pushing machine"), "{reason}")
        }
        other => panic!("spoofed machine id accepted: {other:?}"),
    }
    match &results[3] {
        RecordOutcome::Rejected { reason, .. } => assert!(reason.contains("clock"), "{reason}"),
        other => panic!("a stamp a day ahead accepted: {other:?}"),
    }
    let stored: (String, String, String) =
        sqlx::query_as("SELECT title, input, response FROM memory_observations_remote")
            .fetch_one(c.storage.pool())
            .await
            .expect("one row");
    let all = format!("{stored:?}");
    assert!(
        !all.contains(secret),
        "secret redacted again on ingest: {all}"
    );
    assert!(
        !all.contains("home address"),
        "private spans never stored centrally: {all}"
    );
    assert!(all.contains("[REDACTED:GITHUB_TOKEN]"));
    let status: String = sqlx::query_scalar("SELECT status FROM memory_sync_log")
        .fetch_one(c.storage.pool())
        .await
        .expect("log");
    assert_eq!(status, "partial");
}

#[tokio::test]
async fn forged_expired_unsigned_and_revoked_credentials_are_refused() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let get = |token: Option<String>| {
        let mut req = c.client.get(c.at("/memory/changes"));
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        req.send()
    };
    assert_eq!(get(Some(m.jwt.clone())).await.expect("ok").status(), 200);
    let forged = solaria_central::auth::JwtKeys::new("an-attacker-key-an-attacker-key-0000", 900)
        .issue(m.id, m.account.0)
        .expect("issue")
        .0;
    // Signed with the server's own key, the claims it issues, expired an hour ago
    // (far past the 5 s leeway): refused for that alone, without waiting for it.
    let expired = {
        let now = solaria_shared::UnixMillis::now().0 / 1000;
        let claims = solaria_central::auth::Claims {
            sub: *m.id.as_uuid(),
            acc: m.account.0,
            iat: now - 7200,
            exp: now - 3600,
        };
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(solaria_tests::central::JWT_SECRET.as_bytes()),
        )
        .expect("sign")
    };
    let parts: Vec<&str> = m.jwt.split('.').collect();
    let none_header = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"; // {"alg":"none","typ":"JWT"}
    let unsigned = format!("{none_header}.{}.", parts[1]);
    let tampered = format!("{}.{}x.{}", parts[0], parts[1], parts[2]);
    for (what, token) in [
        ("forged", Some(forged)),
        ("expired", Some(expired)),
        ("alg none", Some(unsigned)),
        ("tampered", Some(tampered)),
        ("garbage", Some("not-a-token".into())),
        ("missing", None),
    ] {
        let r = get(token).await.expect("request");
        assert_eq!(r.status(), 401, "{what}");
        let err: Value = r.json().await.expect("json");
        assert_eq!(err["error"], "unauthorized", "{what}");
        let says_expired = err["message"]
            .as_str()
            .is_some_and(|m| m.contains("expired"));
        assert_eq!(
            says_expired,
            what == "expired",
            "{what}: the expired token is refused as expired, and told how to renew: {err}"
        );
    }
    // Revoked: the current JWT is refused at once, and no new one is issued.
    c.storage
        .revoke_machine(m.id, "test")
        .await
        .expect("revoke");
    let r = get(Some(m.jwt.clone())).await.expect("request");
    assert_eq!(r.status(), 403);
    let err: Value = r.json().await.expect("json");
    assert_eq!(err["error"], "machine_revoked");
    let r = c
        .client
        .post(c.at("/memory/token"))
        .json(&json!({"machine_id": m.id, "credential": m.credential}))
        .send()
        .await
        .expect("token request");
    assert_eq!(r.status(), 403);
    // A wrong credential and a used enrollment token are refused too.
    let r = c
        .client
        .post(c.at("/memory/token"))
        .json(&json!({"machine_id": m.id, "credential": "solmachine_wrong"}))
        .send()
        .await
        .expect("token request");
    assert_eq!(r.status(), 401);
    let token = c
        .storage
        .create_enrollment_token(acct, std::time::Duration::from_secs(60))
        .await
        .expect("token");
    let enroll = |name: &str| {
        c.client
            .post(c.at("/memory/enroll"))
            .json(&json!({"token": token, "name": name}))
            .send()
    };
    assert_eq!(enroll("first").await.expect("enroll").status(), 201);
    assert_eq!(
        enroll("second").await.expect("enroll").status(),
        401,
        "single use"
    );
}

/// `POST /memory/enroll` with `body`: the status and the body as sent back.
async fn enroll_raw(c: &Central, body: Value) -> (u16, String) {
    let r = c
        .client
        .post(c.at("/memory/enroll"))
        .json(&body)
        .send()
        .await
        .expect("enroll request");
    let status = r.status().as_u16();
    (status, r.text().await.expect("body"))
}

/// Enrolling with another account's machine id answers exactly as a malformed
/// request does (no `409 machine_taken`: whether an id is enrolled, and where, is
/// no one else's business), and spends nothing: the token still enrolls.
#[tokio::test]
async fn enrolling_with_another_accounts_machine_id_reads_as_a_bad_request_and_spends_nothing() {
    let c = Central::start().await;
    let first = c.account("first").await;
    let second = c.account("second").await;
    let taken = c.machine(first, "first-laptop").await;
    let token = c
        .storage
        .create_enrollment_token(second, std::time::Duration::from_secs(600))
        .await
        .expect("token");
    let malformed = enroll_raw(&c, json!({"token": token, "name": "   "})).await;
    let taken_id = enroll_raw(
        &c,
        json!({"token": token, "name": "second-laptop", "machine_id": taken.id}),
    )
    .await;
    assert_eq!(malformed.0, 400, "{}", malformed.1);
    assert_eq!(
        taken_id, malformed,
        "another account's machine id reads exactly as a malformed request"
    );
    assert!(
        !taken_id.1.contains(&taken.id.to_string()),
        "{}",
        taken_id.1
    );

    let (status, text) = enroll_raw(&c, json!({"token": token, "name": "second-laptop"})).await;
    assert_eq!(status, 201, "the token was not spent: {text}");
    let enrolled: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(enrolled["account_id"], json!(second.0));
    // The first account's machine is untouched.
    let r = c
        .client
        .post(c.at("/memory/token"))
        .json(&json!({"machine_id": taken.id, "credential": taken.credential}))
        .send()
        .await
        .expect("token request");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn accounts_never_see_or_touch_each_other() {
    let c = Central::start().await;
    let acme = c.account("acme").await;
    let other = c.account("other").await;
    let a = c.machine(acme, "acme-laptop").await;
    let b = c.machine(other, "other-laptop").await;
    let s = session(a.id, stamp(0));
    let o = observation(a.id, s.id, stamp(1), "acme secret plans");
    c.push_ok(&a, &[wire(s.clone()), wire(o.clone())]).await;

    assert!(
        c.changes(&b, 0).await.changes.is_empty(),
        "B's feed is empty"
    );
    // B pushes a record with A's id: it becomes B's own record; A's is untouched and
    // B learns nothing (no "stale" answer revealing A's version).
    let mut guess = o.clone();
    guess.meta.machine_id = b.id;
    guess.meta.updated = stamp(-60_000);
    guess.title = "overwrite attempt".into();
    let r = c.push_ok(&b, &[wire(guess.clone())]).await;
    assert!(matches!(r[0], RecordOutcome::Applied { .. }), "{r:?}");
    let a_feed = c.changes(&a, 0).await;
    assert!(
        a_feed.changes.iter().any(|ch| ch.record == wire(o.clone())),
        "A's record intact"
    );
    assert!(
        a_feed
            .changes
            .iter()
            .all(|ch| ch.record.machine_id() == a.id),
        "nothing of B in A's feed"
    );
    let b_feed = c.changes(&b, 0).await;
    assert_eq!(b_feed.changes.len(), 1);
    assert_eq!(b_feed.changes[0].record, wire(guess));
    // A token claiming B's account for A's machine is refused.
    let mixed = solaria_central::auth::JwtKeys::new(solaria_tests::central::JWT_SECRET, 900)
        .issue(a.id, b.account.0)
        .expect("issue")
        .0;
    let r = c
        .client
        .get(c.at("/memory/changes"))
        .bearer_auth(mixed)
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn the_change_feed_never_skips_a_concurrent_commit() {
    let c = std::sync::Arc::new(
        Central::start_with(Options {
            rate_limit_per_sec: 10_000,
            ..Options::default()
        })
        .await,
    );
    let acct = c.account("acme").await;
    let writers: usize = 6;
    let batches: usize = 15;
    let per_batch: usize = 20;
    let mut machines = Vec::new();
    for i in 0..writers {
        machines.push(c.machine(acct, &format!("writer-{i}")).await);
    }
    let reader = c.machine(acct, "reader").await;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));

    let mut tasks = Vec::new();
    for m in machines.clone() {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            let s = session(m.id, stamp(0));
            c.push_ok(&m, &[wire(s.clone())]).await;
            for _ in 0..batches {
                let batch: Vec<WireRecord> = (0..per_batch)
                    .map(|k| wire(observation(m.id, s.id, stamp(k as i64), "concurrent")))
                    .collect();
                c.push_ok(&m, &batch).await;
            }
        }));
    }
    let poller = {
        let c = c.clone();
        let done = done.clone();
        tokio::spawn(async move {
            let mut seen: Vec<(uuid::Uuid, i64)> = Vec::new();
            let mut cursor = 0;
            loop {
                let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                let page = c.changes(&reader, cursor).await;
                for ch in &page.changes {
                    assert!(ch.seq > cursor, "seqs only grow");
                    seen.push((ch.record.id(), ch.record.updated().as_i64()));
                }
                cursor = page.next;
                if finished && page.changes.is_empty() {
                    return seen;
                }
            }
        })
    };
    for t in tasks {
        t.await.expect("writer");
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let seen = poller.await.expect("reader");
    let expected = writers * (1 + batches * per_batch);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "every change seen exactly once");
    assert_eq!(seen.len(), expected, "no change skipped");
    assert_eq!(
        c.count("memory_observations_remote").await as usize,
        writers * batches * per_batch
    );
}

#[tokio::test]
async fn tombstones_travel_through_the_feed() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let a = c.machine(acct, "a").await;
    let s = session(a.id, stamp(0));
    let o = observation(a.id, s.id, stamp(1), "to be forgotten");
    c.push_ok(&a, &[wire(s), wire(o.clone())]).await;
    let cursor = c.changes(&a, 0).await.next;
    let mut gone = o.clone();
    gone.meta.updated = stamp(5);
    gone.meta.deleted = true;
    gone.title.clear();
    gone.input.clear();
    gone.response.clear();
    c.push_ok(&a, &[wire(gone.clone())]).await;
    let page = c.changes(&a, cursor).await;
    assert_eq!(page.changes.len(), 1);
    assert!(page.changes[0].record.meta().deleted);
    let input: String = sqlx::query_scalar("SELECT input FROM memory_observations_remote")
        .fetch_one(c.storage.pool())
        .await
        .expect("row");
    assert!(input.is_empty(), "erased content is gone from the database");
}

#[tokio::test]
async fn one_machine_past_its_rate_is_throttled_without_slowing_another() {
    // One request a second: the 30 of the burst get past only if they are spread
    // over half a minute, which no load on the test machine comes near (at 100 a
    // second, a slow machine could serve a burst as fast as the allowance refills).
    let c = std::sync::Arc::new(
        Central::start_with(Options {
            rate_limit_per_sec: 1,
            ..Options::default()
        })
        .await,
    );
    let acct = c.account("acme").await;
    let noisy = c.machine(acct, "noisy").await;
    let calm = c.machine(acct, "calm").await;
    let mut statuses = Vec::new();
    let mut retry_after = None;
    let burst: Vec<_> = (0..30)
        .map(|_| {
            let c = c.clone();
            let jwt = noisy.jwt.clone();
            tokio::spawn(async move {
                let r = c
                    .client
                    .get(c.at("/memory/changes"))
                    .bearer_auth(jwt)
                    .send()
                    .await
                    .expect("request");
                (
                    r.status().as_u16(),
                    r.headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string),
                )
            })
        })
        .collect();
    // Meanwhile the calm machine is served normally: its allowance is its own.
    let r = c
        .client
        .get(c.at("/memory/changes"))
        .bearer_auth(&calm.jwt)
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 200, "another machine is not throttled");
    for t in burst {
        let (status, retry) = t.await.expect("task");
        statuses.push(status);
        if status == 429 {
            retry_after = retry;
        }
    }
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert!(
        limited > 0,
        "a burst past 1 request/s is throttled: {statuses:?}"
    );
    assert!(
        statuses.contains(&200),
        "the allowance is served: {statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    let secs: u64 = retry_after
        .expect("429 carries Retry-After")
        .parse()
        .expect("seconds");
    assert!(secs >= 1);
}

#[tokio::test]
async fn tls_serves_the_api_with_a_certificate_from_a_custom_ca() {
    let c = Central::start_tls().await;
    assert!(c.url.starts_with("https://localhost:"));
    let r = c
        .client
        .get(c.at("/healthz"))
        .send()
        .await
        .expect("https request");
    assert_eq!(r.status(), 200);
    // A client that does not trust the CA is refused by TLS itself.
    let stranger = reqwest::Client::builder()
        .no_proxy()
        .resolve(
            "localhost",
            c.url
                .trim_start_matches("https://localhost:")
                .parse::<u16>()
                .map(|p| ([127, 0, 0, 1], p).into())
                .expect("port"),
        )
        .build()
        .expect("client");
    assert!(stranger.get(c.at("/healthz")).send().await.is_err());
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let s = session(m.id, stamp(0));
    assert!(matches!(
        c.push_ok(&m, &[wire(s)]).await[0],
        RecordOutcome::Applied { .. }
    ));
}

#[tokio::test]
async fn token_requests_past_the_address_limit_are_refused_with_retry_after() {
    let c = Central::start_with(Options {
        auth_rate_limit_per_min: 3,
        ..Options::default()
    })
    .await;
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..8 {
        let r = c
            .client
            .post(c.at("/memory/token"))
            .json(&json!({"machine_id": MachineId::new(), "credential": "guess"}))
            .send()
            .await
            .expect("token request");
        statuses.push(r.status().as_u16());
        last = Some(r);
    }
    assert_eq!(&statuses[..3], [401, 401, 401], "the allowance is served");
    assert!(
        statuses[3..].iter().all(|s| *s == 429),
        "then refused: {statuses:?}"
    );
    let r = last.expect("answers");
    let secs: u64 = r.headers()["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!(secs >= 1);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["error"], "rate_limited");
    // Enrollment shares the address's allowance; other routes do not.
    let r = c
        .client
        .post(c.at("/memory/enroll"))
        .json(&json!({"token": "guess", "name": "laptop"}))
        .send()
        .await
        .expect("enroll request");
    assert_eq!(r.status(), 429);
    let r = c
        .client
        .get(c.at("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn a_client_trickling_its_body_is_cut_off_at_the_request_timeout() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    let c = Central::start_with(Options {
        request_timeout_secs: 1,
        ..Options::default()
    })
    .await;
    let addr = c.url.trim_start_matches("http://").to_string();
    let (answer, cut_off) = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .expect("read timeout");
        let head = format!(
            "POST /memory/enroll HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: 1000000\r\n\r\n{{\"token\": "
        );
        stream.write_all(head.as_bytes()).expect("write head");
        let mut answer = Vec::new();
        let mut buf = [0u8; 1024];
        // One byte of the body every 200 ms: a million bytes would take days, so
        // only the server ends this. The bound only turns a server that never does
        // into a failure instead of a hung suite: 120 times its timeout.
        let mut cut_off = false;
        while !cut_off && started.elapsed() < Duration::from_secs(120) {
            match stream.read(&mut buf) {
                Ok(0) => cut_off = true,
                Ok(n) => {
                    answer.extend_from_slice(&buf[..n]);
                    // Answered once the head is in.
                    cut_off = answer.windows(4).any(|w| w == b"\r\n\r\n");
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => cut_off = true,
            }
            if !cut_off && stream.write_all(b" ").is_err() {
                cut_off = true;
            }
        }
        (String::from_utf8_lossy(&answer).to_string(), cut_off)
    })
    .await
    .expect("trickler");
    assert!(
        cut_off,
        "the server ends a request whose body does not arrive within its timeout"
    );
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "408 or a closed connection: {answer}"
    );
}
