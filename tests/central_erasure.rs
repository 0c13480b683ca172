//! Right to erasure on the central service, over real HTTP on a fresh PostgreSQL
//! database per test: each target (record, session, project, machine's data, account)
//! becomes tombstones that reach another machine through the change feed, the content
//! is gone from the tables, a stale re-push loses to the tombstone, another account's
//! ids are 404 and untouched, and a deleted account leaves no row and no working token.

use serde_json::{Value, json};
use solaria_shared::wire::{RecordOutcome, WireRecord};
use solaria_shared::{Observation, Project, Session, Summary};
use solaria_tests::central::{Central, Machine, delete};
use solaria_tests::records::{observation, session, stamp, summary, wire};
use uuid::Uuid;

fn counts(sessions: u64, observations: u64, summaries: u64) -> Value {
    json!({ "sessions": sessions, "observations": observations, "summaries": summaries, "knowledge": 0 })
}

async fn change_seq(c: &Central, account: solaria_central::storage::AccountId) -> i64 {
    sqlx::query_scalar("SELECT change_seq FROM accounts WHERE id = $1")
        .bind(account.0)
        .fetch_one(c.storage.pool())
        .await
        .expect("change_seq")
}

/// A session with two observations and a summary, written by `m`.
fn a_session(m: &Machine, project: Option<Project>) -> (Session, Vec<Observation>, Summary) {
    let mut s = session(m.id, stamp(0));
    let mut o1 = observation(m.id, s.id, stamp(1), "cargo test auth");
    let mut o2 = observation(m.id, s.id, stamp(2), "git commit -m secret-plan");
    let mut sum = summary(m.id, s.id, stamp(3), "Fixed the refresh flow");
    if let Some(p) = project {
        s.project = p.clone();
        o1.project = p.clone();
        o2.project = p.clone();
        sum.project = p;
    }
    (s, vec![o1, o2], sum)
}

fn records(s: &Session, obs: &[Observation], sum: &Summary) -> Vec<WireRecord> {
    let mut all = vec![wire(s.clone())];
    all.extend(obs.iter().cloned().map(wire));
    all.push(wire(sum.clone()));
    all
}

/// Checks that `record` is a tombstone written by `by` that beats `before`.
fn assert_tombstone(record: &WireRecord, before: &WireRecord, by: &Machine) {
    assert_eq!(record.id(), before.id());
    assert!(record.meta().deleted, "{record:?}");
    assert_eq!(record.machine_id(), by.id, "written as the erasing machine");
    assert!(
        record.updated() > before.updated(),
        "the tombstone is a later version"
    );
    match record {
        WireRecord::Observation(o) => {
            assert!(
                o.title.is_empty() && o.input.is_empty() && o.response.is_empty(),
                "{o:?}"
            );
            assert!(
                o.files.is_empty() && o.tags.is_empty() && o.metadata == json!({}),
                "{o:?}"
            );
        }
        WireRecord::Summary(s) => {
            assert!(
                s.text.is_empty() && s.key_points.is_empty() && s.tags.is_empty(),
                "{s:?}"
            );
        }
        WireRecord::Session(s) => assert!(s.cwd.is_empty(), "{s:?}"),
        WireRecord::Knowledge(k) => assert_eq!(k.body, k.erased(), "{k:?}"),
    }
}

/// Every text of the account's record tables, as stored.
async fn stored_text(c: &Central, account: solaria_central::storage::AccountId) -> String {
    let rows: Vec<String> = sqlx::query_scalar(
        "SELECT title || input || response || files::text || metadata::text || tags::text
             FROM memory_observations_remote WHERE account_id = $1
         UNION ALL SELECT summary || key_points::text || tags::text FROM memory_summaries_remote WHERE account_id = $1
         UNION ALL SELECT cwd FROM memory_sessions WHERE account_id = $1",
    )
    .bind(account.0)
    .fetch_all(c.storage.pool())
    .await
    .expect("stored text");
    rows.join("\n")
}

#[tokio::test]
async fn erasing_a_record_reaches_other_machines_and_a_stale_push_loses() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let (s, obs, sum) = a_session(&laptop, None);
    c.push_ok(&laptop, &records(&s, &obs, &sum)).await;
    let cursor = c.changes(&desktop, 0).await.next;

    let (status, body) = delete(&c, &desktop, &format!("/memory/records/{}", obs[1].id)).await;
    assert_eq!((status, body), (200, counts(0, 1, 0)));

    // The other machine (and the erasing one) pull exactly one change: the tombstone.
    let page = c.changes(&laptop, cursor).await;
    assert_eq!(page.changes.len(), 1, "{page:?}");
    let tombstone = page.changes[0].record.clone();
    assert!(page.changes[0].seq > cursor, "a new place in the feed");
    assert_eq!(page.changes[0].seq, change_seq(&c, acct).await);
    assert_tombstone(&tombstone, &wire(obs[1].clone()), &desktop);

    // The content is gone from the database; the rest is intact.
    let (deleted, title, input, response): (bool, String, String, String) = sqlx::query_as(
        "SELECT deleted, title, input, response FROM memory_observations_remote WHERE id = $1",
    )
    .bind(obs[1].id.as_uuid())
    .fetch_one(c.storage.pool())
    .await
    .expect("row");
    assert!(deleted && title.is_empty() && input.is_empty() && response.is_empty());
    let text = stored_text(&c, acct).await;
    assert!(!text.contains("secret-plan"), "{text}");
    assert!(
        text.contains("cargo test auth"),
        "other records keep their content"
    );

    // The laptop had not pulled yet and pushes its old version again: it loses, and
    // learns the tombstone.
    match &c.push_ok(&laptop, &[wire(obs[1].clone())]).await[0] {
        RecordOutcome::Stale { winner, .. } => assert_eq!(**winner, tombstone),
        other => panic!("expected stale, got {other:?}"),
    }
    assert!(!stored_text(&c, acct).await.contains("secret-plan"));
    assert!(
        c.changes(&desktop, page.next).await.changes.is_empty(),
        "a lost push adds nothing"
    );

    // Erasing again is harmless: nothing more to erase, nothing new in the feed.
    let (status, body) = delete(&c, &desktop, &format!("/memory/records/{}", obs[1].id)).await;
    assert_eq!((status, body), (200, counts(0, 0, 0)));
    assert!(c.changes(&desktop, page.next).await.changes.is_empty());

    // A summary by its id: only the summary.
    let (status, body) = delete(&c, &laptop, &format!("/memory/records/{}", sum.id)).await;
    assert_eq!((status, body), (200, counts(0, 0, 1)));
    let page = c.changes(&desktop, page.next).await;
    assert_eq!(page.changes.len(), 1);
    assert_tombstone(&page.changes[0].record, &wire(sum.clone()), &laptop);

    // Unknown and malformed ids.
    let (status, body) = delete(&c, &laptop, &format!("/memory/records/{}", Uuid::now_v7())).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"], "not_found");
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .contains("no record"),
        "{body}"
    );
    let (status, body) = delete(&c, &laptop, "/memory/records/not-a-uuid").await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().expect("message").contains("UUID"),
        "{body}"
    );
}

#[tokio::test]
async fn erasure_is_final_a_later_live_version_does_not_bring_it_back() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let (s, obs, sum) = a_session(&laptop, None);
    c.push_ok(&laptop, &records(&s, &obs, &sum)).await;

    let (status, _) = delete(&c, &desktop, &format!("/memory/records/{}", obs[1].id)).await;
    assert_eq!(status, 200);
    let (status, _) = delete(&c, &desktop, &format!("/memory/records/{}", sum.id)).await;
    assert_eq!(status, 200);
    let after_erasure = c.changes(&desktop, 0).await.next;

    // The laptop had not pulled the tombstones and edits both records again: newer
    // live versions, stamped after the tombstones.
    let mut edited = obs[1].clone();
    edited.meta.updated = stamp(60_000);
    edited.title = "Bash: git commit -m secret-plan-v2".into();
    let mut resummarised = sum.clone();
    resummarised.meta.updated = stamp(60_000);
    resummarised.text = "The secret-plan, summarised again".into();
    let outcomes = c
        .push_ok(&laptop, &[wire(edited.clone()), wire(resummarised.clone())])
        .await;
    for (outcome, pushed) in outcomes.iter().zip([wire(edited), wire(resummarised)]) {
        match outcome {
            RecordOutcome::Stale { id, winner } => {
                assert_eq!(*id, pushed.id());
                assert!(winner.meta().deleted, "the tombstone wins: {winner:?}");
                assert!(winner.updated() < pushed.updated(), "whatever the stamps");
            }
            other => panic!("expected stale (the edge moves on), got {other:?}"),
        }
    }

    // PostgreSQL keeps the tombstones, the content stays erased, the feed carries
    // nothing new, and search cannot find it.
    let (deleted, title): (bool, String) =
        sqlx::query_as("SELECT deleted, title FROM memory_observations_remote WHERE id = $1")
            .bind(obs[1].id.as_uuid())
            .fetch_one(c.storage.pool())
            .await
            .expect("row");
    assert!(deleted && title.is_empty(), "{title}");
    let (deleted, text): (bool, String) =
        sqlx::query_as("SELECT deleted, summary FROM memory_summaries_remote WHERE id = $1")
            .bind(sum.id.as_uuid())
            .fetch_one(c.storage.pool())
            .await
            .expect("row");
    assert!(deleted && text.is_empty(), "{text}");
    assert!(!stored_text(&c, acct).await.contains("secret-plan"));
    let page = c.changes(&laptop, after_erasure).await;
    assert!(page.changes.is_empty(), "{page:?}");
    let found: Value = c
        .client
        .get(c.at("/memory/search?q=secret-plan"))
        .bearer_auth(&laptop.jwt)
        .send()
        .await
        .expect("search")
        .json()
        .await
        .expect("json");
    assert_eq!(found["hits"], json!([]), "{found}");
}

#[tokio::test]
async fn erasing_a_session_takes_its_observations_and_summary() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let (s1, obs1, sum1) = a_session(&laptop, None);
    let (s2, obs2, sum2) = a_session(&laptop, None);
    c.push_ok(&laptop, &records(&s1, &obs1, &sum1)).await;
    c.push_ok(&laptop, &records(&s2, &obs2, &sum2)).await;
    let cursor = c.changes(&desktop, 0).await.next;

    let (status, body) = delete(&c, &laptop, &format!("/memory/sessions/{}", s1.id)).await;
    assert_eq!((status, body), (200, counts(1, 2, 1)));
    let page = c.changes(&desktop, cursor).await;
    let seqs: Vec<i64> = page.changes.iter().map(|ch| ch.seq).collect();
    assert_eq!(
        seqs,
        (cursor + 1..=cursor + 4).collect::<Vec<_>>(),
        "four new seqs, no gap"
    );
    let before = records(&s1, &obs1, &sum1);
    for ch in &page.changes {
        let old = before
            .iter()
            .find(|r| r.id() == ch.record.id())
            .expect("one of the session's records");
        assert_tombstone(&ch.record, old, &laptop);
    }
    // The other session is untouched.
    let live: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM memory_observations_remote WHERE session_id = $1 AND NOT deleted AND title <> ''",
    )
    .bind(s2.id.as_uuid())
    .fetch_one(c.storage.pool())
    .await
    .expect("count");
    assert_eq!(live, 2);

    // A session's id given as a record erases the whole session, like the edge's forget.
    let (status, body) = delete(&c, &desktop, &format!("/memory/records/{}", s2.id)).await;
    assert_eq!((status, body), (200, counts(1, 2, 1)));
    let left: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM memory_observations_remote WHERE account_id = $1 AND NOT deleted",
    )
    .bind(acct.0)
    .fetch_one(c.storage.pool())
    .await
    .expect("count");
    assert_eq!(left, 0);

    let (status, _) = delete(&c, &laptop, &format!("/memory/sessions/{}", Uuid::now_v7())).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn erasing_a_project_by_key_or_by_name() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let api = Project {
        key: "github.com/acme/api".into(),
        name: "api".into(),
    };
    let web = Project {
        key: "github.com/acme/web".into(),
        name: "web".into(),
    };
    let docs = Project {
        key: "/home/me/docs".into(),
        name: "docs".into(),
    };
    let (s1, o1, m1) = a_session(&laptop, Some(api.clone()));
    let (s2, o2, m2) = a_session(&desktop, Some(web.clone()));
    let (s3, o3, m3) = a_session(&laptop, Some(docs.clone()));
    c.push_ok(&laptop, &records(&s1, &o1, &m1)).await;
    c.push_ok(&desktop, &records(&s2, &o2, &m2)).await;
    c.push_ok(&laptop, &records(&s3, &o3, &m3)).await;
    let cursor = c.changes(&desktop, 0).await.next;

    // By key, URL-encoded (it holds slashes).
    let (status, body) = delete(&c, &desktop, "/memory/projects/github.com%2Facme%2Fapi").await;
    assert_eq!((status, body), (200, counts(1, 2, 1)));
    let page = c.changes(&desktop, cursor).await;
    assert_eq!(page.changes.len(), 4);
    assert!(
        page.changes
            .iter()
            .all(|ch| ch.record.meta().deleted && ch.seq > cursor)
    );

    // By name.
    let (status, body) = delete(&c, &laptop, "/memory/projects/web").await;
    assert_eq!((status, body), (200, counts(1, 2, 1)));

    let live: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT project_key FROM memory_observations_remote WHERE account_id = $1 AND NOT deleted",
    )
    .bind(acct.0)
    .fetch_all(c.storage.pool())
    .await
    .expect("live projects");
    assert_eq!(
        live,
        vec![docs.key.clone()],
        "only the third project is left"
    );

    let (status, body) = delete(&c, &laptop, "/memory/projects/no-such-project").await;
    assert_eq!(status, 404);
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .contains("no-such-project"),
        "{body}"
    );
}

#[tokio::test]
async fn erasing_a_machines_data() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let (s1, o1, m1) = a_session(&laptop, None);
    let (s2, o2, m2) = a_session(&desktop, None);
    c.push_ok(&laptop, &records(&s1, &o1, &m1)).await;
    c.push_ok(&desktop, &records(&s2, &o2, &m2)).await;
    let cursor = c.changes(&desktop, 0).await.next;

    let (status, body) = delete(
        &c,
        &desktop,
        &format!("/memory/machines/{}/data", laptop.id),
    )
    .await;
    assert_eq!((status, body), (200, counts(1, 2, 1)));
    let page = c.changes(&laptop, cursor).await;
    let before = records(&s1, &o1, &m1);
    assert_eq!(page.changes.len(), 4);
    for ch in &page.changes {
        let old = before
            .iter()
            .find(|r| r.id() == ch.record.id())
            .expect("a record the laptop wrote");
        assert_tombstone(&ch.record, old, &desktop);
    }
    // The desktop's own records stay; the laptop stays enrolled.
    let (desktop_live, laptop_live): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE session_id = $2 AND NOT deleted), count(*) FILTER (WHERE session_id = $3 AND NOT deleted)
         FROM memory_observations_remote WHERE account_id = $1",
    )
    .bind(acct.0)
    .bind(s2.id.as_uuid())
    .bind(s1.id.as_uuid())
    .fetch_one(c.storage.pool())
    .await
    .expect("counts");
    assert_eq!((desktop_live, laptop_live), (2, 0));
    assert_eq!(
        c.changes(&laptop, page.next).await.changes.len(),
        0,
        "the laptop can still pull"
    );

    let (status, body) = delete(
        &c,
        &desktop,
        &format!("/memory/machines/{}/data", Uuid::now_v7()),
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .contains("no machine"),
        "{body}"
    );
}

#[tokio::test]
async fn another_accounts_ids_are_not_found_and_stay_untouched() {
    let c = Central::start().await;
    let acme = c.account("acme").await;
    let globex = c.account("globex").await;
    let intruder = c.machine(acme, "intruder").await;
    let theirs = c.machine(globex, "theirs").await;
    let only_theirs = Project {
        key: "github.com/globex/secret".into(),
        name: "secret".into(),
    };
    let (s, obs, sum) = a_session(&theirs, Some(only_theirs));
    let all = records(&s, &obs, &sum);
    c.push_ok(&theirs, &all).await;
    let seq_before = change_seq(&c, globex).await;
    let text_before = stored_text(&c, globex).await;

    let unknown = delete(
        &c,
        &intruder,
        &format!("/memory/records/{}", Uuid::now_v7()),
    )
    .await;
    for path in [
        format!("/memory/records/{}", obs[0].id),
        format!("/memory/records/{}", sum.id),
        format!("/memory/records/{}", s.id),
        format!("/memory/sessions/{}", s.id),
        "/memory/projects/github.com%2Fglobex%2Fsecret".to_string(),
        "/memory/projects/secret".to_string(),
        format!("/memory/machines/{}/data", theirs.id),
    ] {
        let (status, body) = delete(&c, &intruder, &path).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(
            body["error"], unknown.1["error"],
            "{path}: reads like an unknown id"
        );
    }
    assert_eq!(
        change_seq(&c, globex).await,
        seq_before,
        "nothing new in their feed"
    );
    assert_eq!(
        stored_text(&c, globex).await,
        text_before,
        "their content is intact"
    );
    let page = c.changes(&theirs, 0).await;
    let got: Vec<WireRecord> = page.changes.into_iter().map(|ch| ch.record).collect();
    assert_eq!(got, all, "their records are exactly as pushed");
    let acme_rows: i64 =
        sqlx::query_scalar("SELECT count(*) FROM memory_observations_remote WHERE account_id = $1")
            .bind(acme.0)
            .fetch_one(c.storage.pool())
            .await
            .expect("count");
    assert_eq!(
        acme_rows, 0,
        "nothing was copied into the intruder's account"
    );
}

/// Every table with an `account_id` column, and how many rows of `account` it holds.
async fn rows_per_table(
    c: &Central,
    account: solaria_central::storage::AccountId,
) -> Vec<(String, i64)> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.columns
         WHERE table_schema = 'public' AND column_name = 'account_id' ORDER BY table_name",
    )
    .fetch_all(c.storage.pool())
    .await
    .expect("tables");
    assert!(tables.len() >= 7, "{tables:?}");
    let mut out = Vec::new();
    for table in tables {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM {table} WHERE account_id = $1"
        )))
        .bind(account.0)
        .fetch_one(c.storage.pool())
        .await
        .expect("count");
        out.push((table, n));
    }
    let accounts: i64 = sqlx::query_scalar("SELECT count(*) FROM accounts WHERE id = $1")
        .bind(account.0)
        .fetch_one(c.storage.pool())
        .await
        .expect("count");
    out.push(("accounts".into(), accounts));
    out
}

#[tokio::test]
async fn deleting_the_account_removes_every_row_and_its_tokens_stop_working() {
    let c = Central::start().await;
    let acme = c.account("acme").await;
    let globex = c.account("globex").await;
    let laptop = c.machine(acme, "laptop").await;
    let desktop = c.machine(acme, "desktop").await;
    let theirs = c.machine(globex, "theirs").await;
    let (s, obs, sum) = a_session(&laptop, None);
    c.push_ok(&laptop, &records(&s, &obs, &sum)).await;
    let (s2, obs2, sum2) = a_session(&desktop, None);
    c.push_ok(&desktop, &records(&s2, &obs2, &sum2)).await;
    c.storage
        .create_enrollment_token(acme, std::time::Duration::from_secs(600))
        .await
        .expect("an unused token");
    sqlx::query("INSERT INTO memory_context_injections (account_id, machine_id) VALUES ($1, $2)")
        .bind(acme.0)
        .bind(laptop.id.as_uuid())
        .execute(c.storage.pool())
        .await
        .expect("an injection row");
    let (gs, gobs, gsum) = a_session(&theirs, None);
    let theirs_all = records(&gs, &gobs, &gsum);
    c.push_ok(&theirs, &theirs_all).await;
    let globex_before = rows_per_table(&c, globex).await;
    let known = [
        "accounts",
        "enrollment_tokens",
        "memory_machines",
        "memory_sessions",
        "memory_observations_remote",
        "memory_summaries_remote",
        "memory_sync_log",
        "memory_context_injections",
    ];
    let acme_before = rows_per_table(&c, acme).await;
    for table in known {
        assert!(
            acme_before.iter().any(|(t, n)| t == table && *n > 0),
            "acme has rows in {table}: {acme_before:?}"
        );
    }

    let (status, body) = delete(&c, &laptop, "/memory/account").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({
            "sessions": 2, "observations": 4, "summaries": 2, "knowledge": 0, "machines": 2,
            "enrollment_tokens": 3, "sync_log": 2, "context_injections": 1
        })
    );
    for (table, n) in rows_per_table(&c, acme).await {
        assert_eq!(n, 0, "{table} still holds rows of the deleted account");
    }
    let text: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM memory_observations_remote WHERE title LIKE '%secret-plan%'",
    )
    .fetch_one(c.storage.pool())
    .await
    .expect("count");
    assert_eq!(
        text, 1,
        "only the other account's copy of the words remains"
    );

    // Its JWTs and credentials stop working at once.
    for m in [&laptop, &desktop] {
        let r = c
            .client
            .get(c.at("/memory/changes?since=0"))
            .bearer_auth(&m.jwt)
            .send()
            .await
            .expect("request");
        assert_eq!(r.status(), 401);
        let r = c
            .client
            .post(c.at("/memory/token"))
            .json(&json!({"machine_id": m.id, "credential": m.credential}))
            .send()
            .await
            .expect("token request");
        assert_eq!(r.status(), 401);
    }
    let (status, _) = delete(&c, &laptop, "/memory/account").await;
    assert_eq!(status, 401, "a deleted account cannot be deleted again");

    // The other account is intact.
    assert_eq!(rows_per_table(&c, globex).await, globex_before);
    let got: Vec<WireRecord> = c
        .changes(&theirs, 0)
        .await
        .changes
        .into_iter()
        .map(|ch| ch.record)
        .collect();
    assert_eq!(got, theirs_all);
}

#[tokio::test]
async fn a_puller_misses_no_tombstone_while_pushes_and_erasures_run_at_once() {
    let c = std::sync::Arc::new(Central::start().await);
    let acct = c.account("acme").await;
    let writer = c.machine(acct, "writer").await;
    let eraser = c.machine(acct, "eraser").await;
    let reader = c.machine(acct, "reader").await;
    let (sessions_tx, mut sessions_rx) = tokio::sync::mpsc::unbounded_channel::<Uuid>();

    let push_task = {
        let c = c.clone();
        tokio::spawn(async move {
            for _ in 0..15 {
                let (s, obs, sum) = a_session(&writer, None);
                c.push_ok(&writer, &records(&s, &obs, &sum)).await;
                sessions_tx.send(*s.id.as_uuid()).expect("send");
            }
        })
    };
    let erase_task = {
        let c = c.clone();
        tokio::spawn(async move {
            let mut n = 0;
            while let Some(id) = sessions_rx.recv().await {
                let (status, body) = delete(&c, &eraser, &format!("/memory/sessions/{id}")).await;
                assert_eq!((status, body), (200, counts(1, 2, 1)));
                n += 1;
            }
            n
        })
    };
    // The reader pulls all along and keeps the latest version of each record.
    let mut seen: std::collections::HashMap<Uuid, WireRecord> = std::collections::HashMap::new();
    let mut cursor = 0;
    let mut last_round = false;
    loop {
        let done = push_task.is_finished() && erase_task.is_finished();
        loop {
            let page = c.changes(&reader, cursor).await;
            for ch in page.changes {
                assert!(ch.seq > cursor, "the feed only moves forward");
                seen.insert(ch.record.id(), ch.record);
            }
            cursor = page.next;
            if !page.more {
                break;
            }
        }
        if last_round {
            break;
        }
        last_round = done;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    push_task.await.expect("pushes");
    assert_eq!(erase_task.await.expect("erasures"), 15);

    let full: std::collections::HashMap<Uuid, WireRecord> = c
        .changes(&reader, 0)
        .await
        .changes
        .into_iter()
        .map(|ch| (ch.record.id(), ch.record))
        .collect();
    assert_eq!(full.len(), 15 * 4);
    assert!(
        full.values().all(|r| r.meta().deleted),
        "every record ends a tombstone"
    );
    assert_eq!(seen, full, "the incremental puller saw every tombstone");
}
