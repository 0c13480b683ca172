//! Two edge machines and a central service: the real `solaria` binary on each side
//! of TLS on loopback, a real PostgreSQL behind the server. What one machine captures
//! becomes searchable on the other after a sync; deletions travel; private spans and
//! refused machines stay out; a server outage loses nothing.

use serde_json::json;
use solaria_store::rusqlite;
use solaria_tests::central::{Central, Options};
use solaria_tests::edge::Edge;
use solaria_tests::payloads;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_one_machine_captures_the_other_finds_after_a_sync() {
    let (c, acct) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    laptop.enroll(&c, acct).await;
    desktop.enroll(&c, acct).await;

    laptop.prompt(
        "s1",
        "rotate refresh tokens in renew_jwt <private>my home is 12 Calle Mayor</private>",
    );
    let cwd = laptop.project.display().to_string();
    laptop.hook("post-tool-use", json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": "cargo test renew_jwt"}, "tool_response": {"stdout": "test result: ok"}}));
    laptop.hook(
        "stop",
        json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "Stop"}),
    );

    let out = laptop.ok(&["sync"]);
    assert!(
        out.contains("pushed 4"),
        "session, prompt, tool call, summary: {out}"
    );
    let again = laptop.ok(&["sync"]);
    assert!(
        again.contains("pushed 0"),
        "nothing new, nothing re-sent: {again}"
    );

    let out = desktop.ok(&["sync"]);
    assert!(out.contains("pulled 4"), "{out}");
    let hits = desktop.search("renew_jwt");
    assert!(hits.len() >= 2, "{hits:?}");
    let index = desktop.ok(&["search", "renew_jwt"]);
    assert!(
        index.contains("@laptop"),
        "labelled with the machine's name: {index}"
    );
    let context = desktop.ok(&["context"]);
    assert!(
        context.contains("@laptop") && context.contains("renew_jwt"),
        "{context}"
    );

    // The private span stayed on the laptop: searchable there, absent from PostgreSQL
    // and from the desktop.
    assert!(
        !laptop.search("Calle").is_empty(),
        "the private span is searchable where it was typed"
    );
    assert!(desktop.search("Calle").is_empty());
    let central_text: Vec<String> =
        sqlx::query_scalar("SELECT title || input || response FROM memory_observations_remote")
            .fetch_all(c.storage.pool())
            .await
            .expect("rows");
    assert!(
        central_text.iter().all(|t| !t.contains("Calle Mayor")),
        "{central_text:?}"
    );

    // A deletion on the laptop disappears from the desktop's searches.
    let id = laptop.search("cargo")[0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let on_disk = |m: &Edge| {
        let bytes = m.store_bytes();
        bytes.windows(15).any(|w| w == b"test result: ok")
    };
    assert!(
        on_disk(&desktop),
        "the tool's output is in the desktop's files"
    );
    laptop.ok(&["forget", &id]);
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);
    assert!(
        desktop
            .search("cargo")
            .iter()
            .all(|h| h["id"] != id.as_str()),
        "tombstone applied"
    );
    assert!(
        !on_disk(&desktop),
        "the erased text is in neither the desktop's database file nor its WAL"
    );

    let slash = desktop.ok(&["slash", "sync"]);
    assert!(
        slash.contains("Synced with") && slash.contains("pushed 0"),
        "/memory sync: {slash}"
    );
    let status = desktop.ok(&["status"]);
    assert!(
        status.contains(&c.url) && status.contains("success") && status.contains("pending:    0"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_edits_converge_to_the_same_winner_and_the_loser_is_told() {
    let (c, acct) = Central::tls_with_account().await;
    let a = Edge::new("a");
    let b = Edge::new("b");
    a.enroll(&c, acct).await;
    b.enroll(&c, acct).await;
    a.prompt("s", "shared decision about caching");
    a.ok(&["sync"]);
    b.ok(&["sync"]);
    let id = b.search("caching")[0]["id"]
        .as_str()
        .expect("id")
        .to_string();

    // Both machines forget the same record without syncing in between; b acts last
    // (its clock a little ahead: its stamp is the later one, whatever the scheduler).
    a.ok(&["forget", &id]);
    let session = b.search("caching")[0]["session_id"]
        .as_str()
        .expect("s")
        .to_string();
    b.ok_ahead(&["forget", "--session", &session]);
    b.ok(&["sync"]);
    let out = a.ok(&["sync"]);
    assert!(
        out.contains("conflicts 1"),
        "a's change lost and a is told: {out}"
    );
    let conflicts = a.ok(&["conflicts"]);
    assert!(
        conflicts.contains(&id) && conflicts.contains("by @b "),
        "{conflicts}"
    );
    b.ok(&["sync"]);

    let version = |e: &Edge| -> (i64, String, i64) {
        rusqlite::Connection::open(e.data().join("memory.db"))
            .expect("db")
            .query_row(
                "SELECT updated, machine_id, deleted FROM observations WHERE id = ?1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("row")
    };
    assert_eq!(
        version(&a),
        version(&b),
        "both machines hold the same winner"
    );
    let status = a.ok(&["status"]);
    assert!(status.contains("conflicts:  1"), "{status}");
    let context = a.ok(&["context"]);
    assert!(
        context.contains("Sync conflicts: 1"),
        "the next session is told: {context}"
    );
    a.ok(&["conflicts", "--ack"]);
    assert!(a.ok(&["status"]).contains("conflicts:  0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outages_and_revocation_fail_clearly_and_lose_nothing() {
    let (c, acct) = Central::tls_with_account().await;
    let a = Edge::new("a");
    a.enroll(&c, acct).await;
    a.prompt("s", "before the outage");
    a.ok(&["sync"]);

    // Server down: capture goes on, the sync fails with the reason, nothing is lost.
    let storage = c.storage.clone();
    let url = c.url.clone();
    c.stop().await;
    a.prompt("s", "during the outage");
    let out = a.run(&["sync"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the server"), "{err}");
    assert!(
        a.ok(&["status"]).contains("failed"),
        "the failure is visible"
    );
    assert_eq!(a.search("outage").len(), 2, "captured offline");

    // The server comes back on the same port and database: the next sync catches up.
    let port: u16 = url.rsplit(':').next().expect("port").parse().expect("port");
    let c = Central::serve_on(
        storage,
        Options {
            tls: true,
            ..Options::default()
        },
        port,
    )
    .await;
    std::fs::write(
        a.data().join("server-ca.pem"),
        c.ca_pem.as_deref().expect("ca"),
    )
    .expect("new ca");
    let out = a.ok(&["sync"]);
    assert!(out.contains("pushed 1"), "{out}");
    assert_eq!(c.count("memory_observations_remote").await, 2);

    // Revoked: refused with a clear message.
    let machine: String = sqlx::query_scalar("SELECT id::text FROM memory_machines")
        .fetch_one(c.storage.pool())
        .await
        .expect("machine");
    c.storage
        .revoke_machine(machine.parse().expect("id"), "test")
        .await
        .expect("revoke");
    let out = a.run(&["sync"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("revoked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let not_logged = Edge::new("x");
    let out = not_logged.run(&["sync"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("solaria login"));
}

const DAY_MS: i64 = 24 * 3600 * 1000;

/// The physical times (ms) of the stamps central holds for `machine`'s observations.
async fn stamps_on_central(c: &Central, machine: &str) -> Vec<i64> {
    let stamps: Vec<i64> = sqlx::query_scalar(
        "SELECT o.updated FROM memory_observations_remote o
         JOIN memory_machines m ON m.id = o.machine_id WHERE m.machine_name = $1",
    )
    .bind(machine)
    .fetch_all(c.storage.pool())
    .await
    .expect("stamps");
    stamps.into_iter().map(|u| u >> 16).collect()
}

fn near_now(ms: i64) -> bool {
    (ms - solaria_shared::UnixMillis::now().0).abs() < 10 * 60 * 1000
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_a_day_fast_still_syncs_and_does_not_win_later_edits() {
    let (c, acct) = Central::tls_with_account().await;
    let mut fast = Edge::new("fast");
    fast.env
        .push(("SOLARIA_CLOCK_SKEW_MS".into(), DAY_MS.to_string()));
    let honest = Edge::new("honest");
    fast.enroll(&c, acct).await;
    honest.enroll(&c, acct).await;

    // Captured before any sync: stamped a day ahead.
    fast.prompt("f1", "notes on the cache layer eviction");
    let out = fast.ok(&["sync"]);
    assert!(
        out.contains("pushed 2"),
        "session and prompt reach central: {out}"
    );
    assert!(out.contains("1 d 0 h fast"), "the sync says so: {out}");
    let status = fast.ok(&["status"]);
    assert!(
        status.contains("clock:") && status.contains("1 d 0 h fast"),
        "{status}"
    );
    assert!(status.contains("pending:    0"), "{status}");
    let stamps = stamps_on_central(&c, "fast").await;
    assert!(
        !stamps.is_empty() && stamps.iter().all(|&t| near_now(t)),
        "stamped by the server's time, not a day ahead: {stamps:?}"
    );

    // Its records reach the other machine, and a later deletion there wins.
    honest.ok(&["sync"]);
    let id = honest.search("eviction")[0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    // Written later on the fast machine (still a day fast, now corrected) ...
    fast.prompt("f1", "more about eviction order");
    fast.ok(&["sync"]);
    // ... and then erased on the honest one: the erasure holds everywhere.
    honest.ok(&["forget", &id]);
    honest.ok(&["sync"]);
    fast.ok(&["sync"]);
    assert!(
        fast.search("cache").iter().all(|h| h["id"] != id.as_str()),
        "the deletion made elsewhere won"
    );

    // The clock is fixed: the next sync pushes what is pending at once, and the
    // status stops warning.
    fast.env.clear();
    fast.prompt("f2", "written once the clock was fixed");
    let out = fast.ok(&["sync"]);
    assert!(out.contains("pushed 2") && !out.contains("Clock:"), "{out}");
    let status = fast.ok(&["status"]);
    assert!(
        status.contains("pending:    0") && !status.contains("clock:"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_fixed_before_the_first_sync_pushes_at_once() {
    let (c, acct) = Central::tls_with_account().await;
    let mut m = Edge::new("laptop");
    m.enroll(&c, acct).await;
    m.env
        .push(("SOLARIA_CLOCK_SKEW_MS".into(), DAY_MS.to_string()));
    m.prompt("s1", "written while the clock ran a day ahead");
    m.env.clear();
    // The machine's stamps carry the skew: what it writes now is still "ahead".
    m.prompt("s1", "written after the clock was fixed");
    let out = m.ok(&["sync"]);
    assert!(out.contains("pushed 3"), "nothing is refused: {out}");
    assert!(m.ok(&["status"]).contains("pending:    0"));
    let stamps = stamps_on_central(&c, "laptop").await;
    assert_eq!(stamps.len(), 2);
    assert!(stamps.iter().all(|&t| near_now(t)), "{stamps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_a_day_slow_syncs_and_its_later_edits_are_stamped_now() {
    let (c, acct) = Central::tls_with_account().await;
    let mut slow = Edge::new("slow");
    slow.env
        .push(("SOLARIA_CLOCK_SKEW_MS".into(), (-DAY_MS).to_string()));
    slow.enroll(&c, acct).await;
    slow.prompt("s1", "before the first sync");
    let out = slow.ok(&["sync"]);
    assert!(
        out.contains("pushed 2") && out.contains("1 d 0 h slow"),
        "{out}"
    );
    slow.prompt("s1", "after the first sync");
    slow.ok(&["sync"]);
    let stamps = stamps_on_central(&c, "slow").await;
    assert_eq!(stamps.len(), 2, "{stamps:?}");
    assert!(
        stamps.iter().any(|&t| near_now(t)),
        "an edit after the correction is stamped now, not a day behind: {stamps:?}"
    );
    let other = Edge::new("other");
    other.enroll(&c, acct).await;
    other.ok(&["sync"]);
    assert_eq!(
        other.search("sync").len(),
        2,
        "both reached the other machine"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_search_and_restore_of_a_fresh_machine() {
    let (c, acct) = Central::tls_with_account().await;
    let a = Edge::new("laptop");
    a.enroll(&c, acct).await;
    for n in 0..30 {
        a.prompt(
            "s",
            &format!("restore candidate {n} about websocket reconnects"),
        );
    }
    a.ok(&["sync"]);

    let fresh = Edge::new("new-desktop");
    fresh.enroll(&c, acct).await;
    let remote = fresh.ok(&["search", "--remote", "websocket", "reconnects"]);
    assert!(
        remote.contains("@laptop") && remote.contains("[O#"),
        "answered by the server: {remote}"
    );
    assert!(fresh.search("websocket").is_empty(), "nothing local yet");
    // A project named the way this machine knows it (its `owner/repo` slug or a path
    // inside it) means the same project to the server.
    let by_path = a.ok(&["search", "--remote", "--project", ".", "websocket"]);
    let by_slug = a.ok(&["search", "--remote", "--project", "acme/api", "websocket"]);
    assert!(by_path.contains("[O#"), "{by_path}");
    assert!(by_slug.contains("[O#"), "{by_slug}");
    let out = fresh.ok(&["restore"]);
    assert!(
        out.contains("pulled 31"),
        "the session and its 30 prompts: {out}"
    );
    assert_eq!(
        fresh.search("websocket").len(),
        20,
        "searchable offline now (default limit)"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fresh.ok(&["stats", "--json"])).expect("stats");
    assert_eq!(json["observations"], 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_background_agent_syncs_on_its_schedule() {
    let (c, acct) = Central::tls_with_account().await;
    let a = Edge::new("laptop");
    a.enroll(&c, acct).await;
    let mut agent = a
        .cmd()
        .args(["serve", "--every", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve");
    a.prompt("s", "captured while the agent runs");
    // Wait until the agent has pushed and logged a round that carried the record
    // (a generous deadline: its rounds come every second).
    let log_path = a.data().join("logs/serve.log");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut synced = false;
    while !synced && std::time::Instant::now() < deadline {
        let logged = std::fs::read_to_string(&log_path).unwrap_or_default();
        let pushed_some = logged
            .lines()
            .any(|l| l.contains("sync: pushed") && !l.contains("sync: pushed 0"));
        synced = c.count("memory_observations_remote").await == 1 && pushed_some;
        if !synced {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    agent.kill().expect("stop the agent");
    let _ = agent.wait();
    assert!(synced, "the agent pushed the new observation on its own");
    let log = std::fs::read_to_string(a.data().join("logs/serve.log")).expect("serve log");
    assert!(
        log.contains("sync: pushed") && log.contains("prune:"),
        "{log}"
    );
    let status = a.ok(&["status"]);
    assert!(status.contains("success"), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_only_project_never_leaves_the_machine() {
    let (c, acct) = Central::tls_with_account().await;
    let a = Edge::new("laptop");
    std::fs::write(
        a.data().join("config.toml"),
        "machine_name = \"laptop\"\n[sync]\nlocal_only_projects = [\"api\"]\n",
    )
    .expect("config");
    a.enroll(&c, acct).await;
    a.prompt("s", "client work under NDA");
    let out = a.ok(&["sync"]);
    assert!(out.contains("pushed 0"), "{out}");
    assert_eq!(c.count("memory_observations_remote").await, 0);
    assert_eq!(c.count("memory_sessions").await, 0);
    assert_eq!(a.search("NDA").len(), 1, "still searchable locally");
}

/// Rows of central's `table` (sessions, observations, summaries) of any account
/// whose text, any column, holds `word`.
async fn rows_holding(c: &Central, table: &str, word: &str) -> i64 {
    // `table` is one of our table names, never input.
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {table} t WHERE t::text ILIKE '%' || $1 || '%'"
    )))
    .bind(word)
    .fetch_one(c.storage.pool())
    .await
    .expect("count rows")
}

/// A session started in one project that moves (`cd`) into a local-only one: the
/// events there are that project's, and none of them, nor their vectors, nor their
/// words in the session's summary, reach central; the events of the first project do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_moves_into_a_local_only_project_leaves_its_events_there_home() {
    let (c, acct) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    laptop.write_config("[sync]\nlocal_only_projects = [\"github.com/me/diary\"]\n");
    let model = solaria_tests::semantic::minilm();
    if let Some(dir) = &model {
        solaria_tests::semantic::configure_model(&laptop, dir);
    }
    laptop.enroll(&c, acct).await;
    let (api, diary) = (
        laptop.project.clone(),
        payloads::project(
            laptop.root.path(),
            "diary",
            Some("git@github.com:me/diary.git"),
        ),
    );
    let bash = |cwd: &std::path::Path, command: &str, stdout: &str| {
        payloads::tool(
            "s1",
            cwd,
            "Bash",
            json!({"command": command}),
            json!({"stdout": stdout, "stderr": "", "interrupted": false}),
        )
    };
    laptop.hook("session-start", payloads::session_start("s1", &api));
    laptop.hook(
        "user-prompt-submit",
        payloads::prompt("s1", &api, "wire the export button to the reports endpoint"),
    );
    laptop.hook(
        "post-tool-use",
        bash(&api, "cargo test export", "test result: ok"),
    );
    laptop.hook(
        "user-prompt-submit",
        payloads::prompt(
            "s1",
            &diary,
            "draft the letter to Marguerite about the orchard",
        ),
    );
    laptop.hook(
        "post-tool-use",
        bash(
            &diary,
            "cat letters/marguerite.md",
            "Dear Marguerite, the orchard",
        ),
    );
    laptop.hook(
        "stop",
        payloads::with(
            payloads::stop("s1", &diary),
            json!({"last_assistant_message": "The letter to Marguerite is drafted."}),
        ),
    );

    // Each event is stored under the project of its own directory; the session
    // keeps the project it started in.
    let per_project = laptop.strings(
        "SELECT project_key || ' ' || count(*) FROM observations GROUP BY project_key ORDER BY 1",
    );
    assert_eq!(
        per_project,
        ["github.com/acme/api 2", "github.com/me/diary 2"],
        "{per_project:?}"
    );
    assert_eq!(
        laptop.strings("SELECT project_key FROM sessions"),
        ["github.com/acme/api"]
    );
    if model.is_some() {
        laptop.ok(&["embed"]);
        assert_eq!(
            laptop.count("SELECT count(*) FROM vector_outbox"),
            5,
            "4 events, 1 summary"
        );
    }

    let out = laptop.ok(&["sync"]);
    assert!(
        out.contains("pushed 4"),
        "session, 2 events, summary: {out}"
    );
    for table in [
        "memory_sessions",
        "memory_observations_remote",
        "memory_summaries_remote",
    ] {
        assert_eq!(rows_holding(&c, table, "marguerite").await, 0, "{table}");
        assert_eq!(rows_holding(&c, table, "diary").await, 0, "{table}");
    }
    assert_eq!(
        rows_holding(&c, "memory_observations_remote", "export").await,
        2
    );
    assert_eq!(
        rows_holding(&c, "memory_summaries_remote", "export").await,
        1
    );
    if model.is_some() {
        let diary_ids: Vec<String> =
            laptop.strings("SELECT id FROM observations WHERE project_key = 'github.com/me/diary'");
        let sent: Vec<String> = sqlx::query_scalar("SELECT record_id::text FROM memory_vectors")
            .fetch_all(c.storage.pool())
            .await
            .expect("vectors");
        assert_eq!(
            sent.len(),
            3,
            "the api project's events and summary: {sent:?}"
        );
        assert!(sent.iter().all(|id| !diary_ids.contains(id)), "{sent:?}");
    }
    let here: Vec<serde_json::Value> =
        serde_json::from_str(&laptop.ok(&["search", "--json", "--mode", "lexical", "Marguerite"]))
            .expect("json");
    assert_eq!(here.len(), 2, "still searchable here: {here:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erasure_sticks_when_a_machine_that_missed_it_writes_the_record_again() {
    let (c, acct) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    laptop.enroll(&c, acct).await;
    desktop.enroll(&c, acct).await;
    let cwd = laptop.project.display().to_string();
    let stop = |message: &str| {
        json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "Stop",
               "last_assistant_message": message})
    };
    laptop.prompt("s1", "move the ledger to postgres");
    laptop.hook("stop", stop("the ledger lives in postgres now"));
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);
    let session = desktop.search("ledger")[0]["session_id"]
        .as_str()
        .expect("session id")
        .to_string();
    desktop.ok(&["forget", "--session", &session]);
    desktop.ok(&["sync"]);

    // The laptop has not pulled the erasure and closes the session again: a newer
    // live version of the same summary.
    laptop.hook("stop", stop("ledger exports archived in bucket zeta"));
    laptop.ok(&["sync"]);

    let summaries: Vec<(bool, String)> =
        sqlx::query_as("SELECT deleted, summary FROM memory_summaries_remote")
            .fetch_all(c.storage.pool())
            .await
            .expect("summaries");
    assert_eq!(summaries.len(), 1, "{summaries:?}");
    assert!(summaries[0].0, "still erased on central: {summaries:?}");
    assert!(!summaries[0].1.contains("zeta"), "{summaries:?}");

    // The laptop took the erasure, and keeps no copy of what it erased.
    let laptop_db = laptop.db();
    let live: i64 = laptop_db
        .query_row(
            "SELECT count(*) FROM summaries WHERE deleted = 0",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(live, 0, "the laptop's summary is erased too");
    let kept: i64 = laptop_db
        .query_row(
            "SELECT count(*) FROM conflicts
             WHERE local_version LIKE '%zeta%' OR winner_version LIKE '%zeta%'
                OR local_version LIKE '%ledger%' OR winner_version LIKE '%ledger%'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(kept, 0, "no conflict row keeps the erased text");
    assert!(laptop.search("zeta").is_empty());

    // A later close finds nothing of the erased session to summarise again.
    laptop.hook("stop", stop("closing again"));
    laptop.ok(&["sync"]);
    assert!(laptop.search("postgres").is_empty());
    let text: Vec<String> = sqlx::query_scalar(
        "SELECT summary FROM memory_summaries_remote UNION ALL
         SELECT title || input FROM memory_observations_remote",
    )
    .fetch_all(c.storage.pool())
    .await
    .expect("rows");
    assert!(
        text.iter()
            .all(|t| !t.contains("ledger") && !t.contains("zeta")),
        "{text:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_span_in_the_project_name_never_reaches_postgres() {
    let (c, acct) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    laptop.enroll(&c, acct).await;
    // No git remote: the project is the directory, its name the directory's name.
    let dir = laptop
        .root
        .path()
        .join("billing <private>client-orion-secret</private>");
    std::fs::create_dir_all(&dir).expect("project dir");
    let cwd = dir.display().to_string();
    laptop.hook(
        "user-prompt-submit",
        json!({"session_id": "p1", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
               "prompt": "draft the invoice export"}),
    );
    laptop.hook(
        "stop",
        json!({"session_id": "p1", "cwd": cwd, "hook_event_name": "Stop"}),
    );
    let out = laptop.ok(&["sync"]);
    assert!(out.contains("pushed 3"), "session, prompt, summary: {out}");

    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT project_key || ' ' || project_name FROM memory_sessions
         UNION ALL SELECT project_key || ' ' || project_name || ' ' || title || input
             FROM memory_observations_remote
         UNION ALL SELECT project_key || ' ' || project_name || ' ' || summary
             FROM memory_summaries_remote",
    )
    .fetch_all(c.storage.pool())
    .await
    .expect("rows");
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert!(
        stored.iter().all(|t| !t.contains("orion")),
        "the private part of the project's name stayed on the laptop: {stored:?}"
    );
    assert!(
        stored.iter().all(|t| t.contains("billing")),
        "the rest of it travelled: {stored:?}"
    );
}
