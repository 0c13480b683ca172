//! A team on one central service, at the spec's scale (§8.2): 20 people with 5
//! machines each, enrolled for real, over a history preloaded with PostgreSQL's
//! `COPY` (`SOLARIA_BENCH_PRELOAD` observations, default 10,000,000; one session
//! and one summary per 100 of them, one decision per 500). Six in ten records
//! belong to the team's 20 shared projects, the rest to each person's personal
//! ones. Against the real server over TLS on loopback it measures:
//!
//! * **team remote search** as one member: the queries of the `central` bench, each
//!   interleaved with an authenticated request that reads nothing
//!   (`GET /memory/machines`), its baseline in the same run;
//! * **a 1,000-record push** of that member's machine, beside PostgreSQL's `COPY`
//!   of as many rows into the same table;
//! * **a new member's first sync**: a person added now, one machine, the whole
//!   change feed walked as an edge walks it (`types=knowledge`, pages of 500): time,
//!   pages, records and bytes, against the same walk by a member who asks for their
//!   teammates' events too (`team_observations`).
//!
//! ```sh
//! cargo bench -p solaria-tests --bench team
//! SOLARIA_BENCH_PRELOAD=1000000 cargo bench -p solaria-tests --bench team
//! # measure again on a database an earlier run preloaded (it prints its URL):
//! SOLARIA_BENCH_REUSE=postgres://…/solaria_test_… cargo bench -p solaria-tests --bench team
//! ```
//!
//! Reusing a database, each person gets a fresh machine (the earlier run's
//! credentials are not kept): the member searching is still the person who wrote
//! a twentieth of the history.

use solaria_central::storage::{AccountId, Role};
use solaria_shared::wire::{ChangesPage, SearchResponse, SyncResponse};
use solaria_shared::{Hlc, UnixMillis};
use solaria_tests::bench::{Rng, pct};
use solaria_tests::central::{Central, Machine, Options};
use solaria_tests::records::{observation, session, wire};
use std::time::{Duration, Instant};

const PEOPLE: usize = 20;
const MACHINES_EACH: usize = 5;
const SHARED_PROJECTS: u64 = 20;

const WORDS: &[&str] = &[
    "error",
    "src",
    "test",
    "cargo",
    "build",
    "refresh",
    "token",
    "migration",
    "database",
    "session",
    "renew_jwt",
    "handler",
    "config",
    "deploy",
    "cache",
    "retry",
    "timeout",
    "schema",
    "index",
    "query",
    "fails",
    "fixed",
    "panic",
    "async",
    "tokio",
    "axum",
    "sqlx",
    "rows",
    "commit",
    "branch",
    "sesión",
    "migración",
    "base",
    "datos",
    "falla",
    "prueba",
    "despliegue",
    "configuración",
    "tabla",
];

/// The machines of the team, person by person.
struct Team {
    account: AccountId,
    /// `machines[p * MACHINES_EACH + k]` is person `p`'s `k`-th machine.
    machines: Vec<Machine>,
}

/// The project of a session of `person`: six in ten shared.
fn project_of(person: usize, rng: &mut Rng) -> String {
    if rng.draw() % 10 < 6 {
        format!("github.com/team/service-{}", rng.draw() % SHARED_PROJECTS)
    } else {
        format!("github.com/person-{person}/notes-{}", rng.draw() % 4)
    }
}

/// One `COPY` of `text` into `table (columns)`.
async fn copy(c: &Central, table: &str, columns: &str, text: String) -> Duration {
    let start = Instant::now();
    let mut conn = c.storage.pool().acquire().await.expect("connection");
    let mut copy = conn
        .copy_in_raw(&format!("COPY {table} ({columns}) FROM STDIN"))
        .await
        .expect("copy in");
    copy.send(text.into_bytes()).await.expect("copy data");
    copy.finish().await.expect("copy finish");
    start.elapsed()
}

const OBSERVATION_COLUMNS: &str = "account_id, id, session_id, machine_id, updated, deleted, seq, \
     project_key, project_name, kind, tool_name, title, input, response, files, metadata, tags, created_at";

/// Copies observations `from..from + n` of the history (with their sessions,
/// summaries and decisions); how long the observations' `COPY` took.
async fn copy_history(c: &Central, team: &Team, from: u64, n: u64) -> Duration {
    let account = team.account.0;
    let now = UnixMillis::now().0;
    let mut rng = Rng(from.wrapping_mul(2_654_435_761) | 1);
    let (mut obs, mut sessions, mut summaries, mut decisions) =
        (String::new(), String::new(), String::new(), String::new());
    let mut current: (uuid::Uuid, String) = (uuid::Uuid::nil(), String::new());
    for i in from..from + n {
        // Records of a session are written by one machine, in one project.
        let session_no = i / 100;
        let m = &team.machines[(session_no as usize) % team.machines.len()];
        let person = (session_no as usize % team.machines.len()) / MACHINES_EACH;
        let seq = 10_000_000_000 + i as i64 * 4;
        let at = now - ((n + from - i) as i64 % (120 * 86_400)) * 1000;
        let stamp = Hlc::new(now as u64, i).as_i64();
        if i % 100 == 0 || current.0.is_nil() {
            let project = project_of(person, &mut rng);
            let sid = uuid::Uuid::now_v7();
            let name = project.rsplit('/').next().unwrap_or("p").to_string();
            sessions.push_str(&format!(
                "{account}\t{sid}\t{}\t{stamp}\tf\t{}\t{project}\t{name}\tclaude-code\tcc-{i}\t/work/{name}\tstartup\t{at}\n",
                m.id,
                seq + 1,
            ));
            summaries.push_str(&format!(
                "{account}\t{}\t{sid}\t{}\t{stamp}\tf\t{}\t{project}\t{name}\tWorked on {}\t[]\t[]\t100\t{at}\n",
                uuid::Uuid::now_v7(),
                m.id,
                seq + 2,
                rng.words(WORDS, 20),
            ));
            current = (sid, project);
        }
        if i % 500 == 0 {
            let title = format!("Decide {}", rng.words(WORDS, 4));
            let chosen = rng.words(WORDS, 6);
            let body = serde_json::json!({"title": title, "chosen": chosen, "rationale": "bench"});
            let name = current.1.rsplit('/').next().unwrap_or("p").to_string();
            decisions.push_str(&format!(
                "{account}\t{}\t{}\t{stamp}\tf\t{}\t{}\t{name}\t{}\tdecision\tactive\t{title}\t{chosen} bench\t{body}\t{at}\n",
                uuid::Uuid::now_v7(),
                m.id,
                seq + 3,
                current.1,
                current.0,
            ));
        }
        let rare = if i % 5_000 == 0 { " zebrafish" } else { "" };
        let name = current.1.rsplit('/').next().unwrap_or("p");
        obs.push_str(&format!(
            "{account}\t{}\t{}\t{}\t{stamp}\tf\t{seq}\t{}\t{name}\ttool_use\tBash\tBash: {}{rare}\t{{\"command\": \"{}\"}}\t{{\"stdout\": \"{}\"}}\t[]\t{{}}\t[]\t{at}\n",
            uuid::Uuid::now_v7(),
            current.0,
            m.id,
            current.1,
            rng.words(WORDS, 5),
            rng.words(WORDS, 8),
            rng.words(WORDS, 24),
        ));
    }
    copy(
        c,
        "memory_sessions",
        "account_id, id, machine_id, updated, deleted, seq, project_key, project_name, agent, \
         agent_session_id, cwd, source, started_at",
        sessions,
    )
    .await;
    copy(
        c,
        "memory_summaries_remote",
        "account_id, id, session_id, machine_id, updated, deleted, seq, project_key, project_name, \
         summary, key_points, tags, observations_count, created_at",
        summaries,
    )
    .await;
    copy(
        c,
        "memory_knowledge",
        "account_id, id, machine_id, updated, deleted, seq, project_key, project_name, session_id, \
         kind, status, title, search_text, body, created_at",
        decisions,
    )
    .await;
    copy(c, "memory_observations_remote", OBSERVATION_COLUMNS, obs).await
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn timed_get(c: &Central, m: &Machine, path: &str) -> (Duration, usize, reqwest::StatusCode) {
    let t = Instant::now();
    let r = c
        .client
        .get(c.at(path))
        .bearer_auth(&m.jwt)
        .send()
        .await
        .expect("GET");
    let status = r.status();
    let bytes = r.bytes().await.expect("body").len();
    (t.elapsed(), bytes, status)
}

fn options() -> Options {
    Options {
        tls: true,
        rate_limit_per_sec: 100_000,
        ..Options::default()
    }
}

/// A team on a database an earlier run preloaded: one fresh machine per person.
async fn reuse(url: &str) -> (Central, Team, u64) {
    let storage = solaria_central::storage::Storage::connect(url, 10)
        .await
        .expect("connect");
    let c = Central::serve(storage, options()).await;
    let account = c.storage.find_account("team").await.expect("team account");
    let mut machines = Vec::new();
    for p in 0..PEOPLE {
        let person = c
            .storage
            .find_person(account, &format!("dev{p}@team.dev"))
            .await
            .expect("person");
        machines.push(
            c.machine_of(account, person, &format!("dev{p}-again"))
                .await,
        );
    }
    let preload: i64 =
        sqlx::query_scalar("SELECT count(*) FROM memory_observations_remote WHERE account_id = $1")
            .bind(account.0)
            .fetch_one(c.storage.pool())
            .await
            .expect("count");
    (c, Team { account, machines }, preload as u64)
}

#[tokio::main]
async fn main() {
    if let Ok(url) = std::env::var("SOLARIA_BENCH_REUSE") {
        let (c, team, preload) = reuse(&url).await;
        measure(&c, &team, preload).await;
        return;
    }
    let preload: u64 = std::env::var("SOLARIA_BENCH_PRELOAD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let c = Central::start_with(options()).await;
    eprintln!(
        "database: {}",
        c.storage
            .pool()
            .connect_options()
            .get_database()
            .unwrap_or("?")
    );
    let account = c.account("team").await;
    c.storage
        .share_projects(account, "github.com/team/*", "bench")
        .await
        .expect("share");
    let mut machines = Vec::new();
    for p in 0..PEOPLE {
        let person = c
            .person(account, &format!("dev{p}@team.dev"), Role::Member)
            .await;
        for k in 0..MACHINES_EACH {
            machines.push(c.machine_of(account, person, &format!("dev{p}-m{k}")).await);
        }
    }
    let team = Team { account, machines };

    eprintln!("preloading {preload} observations with COPY…");
    let t = Instant::now();
    let chunk = 200_000;
    let mut loaded = 0;
    while loaded < preload {
        let n = chunk.min(preload - loaded);
        copy_history(&c, &team, loaded, n).await;
        loaded += n;
        eprintln!("  {loaded} ({:.0} s)", t.elapsed().as_secs_f64());
    }
    for table in [
        "memory_observations_remote",
        "memory_sessions",
        "memory_summaries_remote",
        "memory_knowledge",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!("ANALYZE {table}")))
            .execute(c.storage.pool())
            .await
            .expect("analyze");
    }
    let size: String =
        sqlx::query_scalar("SELECT pg_size_pretty(pg_database_size(current_database()))")
            .fetch_one(c.storage.pool())
            .await
            .expect("size");
    eprintln!(
        "  preloaded in {:.0} s; database {size}",
        t.elapsed().as_secs_f64()
    );

    // The preload outlives the machines' tokens: log in again.
    let mut fresh = Vec::new();
    for m in &team.machines {
        fresh.push(c.log_in(m.account, m.id, m.credential.clone()).await);
    }
    let team = Team {
        machines: fresh,
        ..team
    };
    measure(&c, &team, preload).await;
    c.stop().await;
}

async fn measure(c: &Central, team: &Team, preload: u64) {
    let size: String =
        sqlx::query_scalar("SELECT pg_size_pretty(pg_database_size(current_database()))")
            .fetch_one(c.storage.pool())
            .await
            .expect("size");
    println!(
        "\nteam of {PEOPLE} people × {MACHINES_EACH} machines, {preload} observations \
         (6 in 10 in shared projects), database {size}\n"
    );
    search(c, &team.machines[0]).await;
    push(c, team).await;
    first_sync(c, team).await;
}

async fn search(c: &Central, m: &Machine) {
    let queries: &[(&str, &str)] = &[
        ("common word", "q=error"),
        ("two common words", "q=cargo%20test"),
        ("identifier", "q=renew_jwt"),
        ("Spanish", "q=migraci%C3%B3n%20base%20datos"),
        ("rare word, only in old rows", "q=zebrafish"),
        ("no match", "q=zzqqxxyy"),
        (
            "shared project",
            "q=error&project=github.com%2Fteam%2Fservice-7",
        ),
        (
            "own personal project",
            "q=deploy&project=github.com%2Fperson-0%2Fnotes-1",
        ),
        (
            "a teammate's personal project (nothing)",
            "q=deploy&project=github.com%2Fperson-3%2Fnotes-1",
        ),
        ("decisions", "q=decide%20cache&type=decision"),
    ];
    let runs = 30;
    let (mut all, mut base_all) = (Vec::new(), Vec::new());
    println!(
        "team remote search over TLS as one member (limit 20), baseline: an authenticated GET /memory/machines\n"
    );
    println!("| query | hits | p50 | p95 | baseline p50 | ratio (p50) |");
    println!("|---|---|---|---|---|---|");
    for (label, qs) in queries {
        let path = format!("/memory/search?{qs}&limit=20");
        for _ in 0..3 {
            timed_get(c, m, &path).await;
        }
        let (mut samples, mut base) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let (d, _, status) = timed_get(c, m, &path).await;
            assert!(status.is_success(), "{label}: {status}");
            samples.push(d);
            base.push(timed_get(c, m, "/memory/machines").await.0);
        }
        let r = c
            .client
            .get(c.at(&path))
            .bearer_auth(&m.jwt)
            .send()
            .await
            .expect("search");
        let hits = r.json::<SearchResponse>().await.expect("json").hits.len();
        all.extend(samples.iter().copied());
        base_all.extend(base.iter().copied());
        let (p50, p95, b50) = (
            pct(&mut samples, 0.5),
            pct(&mut samples, 0.95),
            pct(&mut base, 0.5),
        );
        println!(
            "| {label} | {hits} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1}× |",
            ms(p50),
            ms(p95),
            ms(b50),
            p50.as_secs_f64() / b50.as_secs_f64()
        );
    }
    let (p50, p95, b50) = (
        pct(&mut all, 0.5),
        pct(&mut all, 0.95),
        pct(&mut base_all, 0.5),
    );
    println!(
        "| **all** | | **{:.1} ms** | **{:.1} ms** | {:.1} ms | {:.1}× |",
        ms(p50),
        ms(p95),
        ms(b50),
        p50.as_secs_f64() / b50.as_secs_f64()
    );
}

async fn push(c: &Central, team: &Team) {
    let m = &team.machines[1];
    let mut rng = Rng(97);
    let (mut pushes, mut copies) = (Vec::new(), Vec::new());
    for b in 0..10u64 {
        let s = session(m.id, Hlc::new(UnixMillis::now().0 as u64, 0));
        let mut records = vec![wire(s.clone())];
        records.extend((0..999).map(|k| {
            let mut o = observation(m.id, s.id, Hlc::new(UnixMillis::now().0 as u64, k), "x");
            o.title = format!("Bash: {}", rng.words(WORDS, 5));
            o.input = format!("{{\"command\": \"{}\"}}", rng.words(WORDS, 8));
            o.response = format!("{{\"stdout\": \"{}\"}}", rng.words(WORDS, 24));
            o.project.key = "github.com/team/service-1".into();
            wire(o)
        }));
        let body = serde_json::to_vec(&serde_json::json!({ "records": records })).expect("json");
        let t = Instant::now();
        let r = c
            .client
            .post(c.at("/memory/sync"))
            .bearer_auth(&m.jwt)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("push");
        assert_eq!(r.status(), 200);
        let out: SyncResponse = r.json().await.expect("answer");
        pushes.push(t.elapsed());
        assert_eq!(out.results.len(), records.len());
        copies.push(copy_history(c, team, 900_000_000 + b * 1000, 1000).await);
    }
    let (p50, p95) = (pct(&mut pushes, 0.5), pct(&mut pushes, 0.95));
    let c50 = pct(&mut copies, 0.5);
    println!(
        "\n1,000-record push (a member's machine, shared project), 10 pushes: p50 {:.0} ms, p95 {:.0} ms; \
         COPY of 1,000 rows into the same table in the same run: p50 {:.0} ms ({:.1}×)",
        ms(p50),
        ms(p95),
        ms(c50),
        p50.as_secs_f64() / c50.as_secs_f64()
    );
}

/// The change feed walked from the start as `m`'s edge walks it.
async fn walk(c: &Central, m: &Machine, types: &str) -> (Duration, usize, usize, usize) {
    let (mut since, mut pages, mut records, mut bytes) = (0i64, 0, 0, 0);
    let t = Instant::now();
    loop {
        let r = c
            .client
            .get(c.at(&format!(
                "/memory/changes?since={since}&limit=500&types={types}"
            )))
            .bearer_auth(&m.jwt)
            .send()
            .await
            .expect("changes");
        assert!(r.status().is_success());
        let body = r.bytes().await.expect("body");
        bytes += body.len();
        let page: ChangesPage = serde_json::from_slice(&body).expect("page");
        pages += 1;
        records += page.changes.len();
        since = page.next;
        if !page.more {
            break;
        }
    }
    (t.elapsed(), pages, records, bytes)
}

async fn first_sync(c: &Central, team: &Team) {
    // A new address each run: a reused database keeps the people of earlier runs.
    let email = format!("new-{}@team.dev", uuid::Uuid::now_v7().simple());
    let newcomer = c.person(team.account, &email, Role::Member).await;
    let laptop = c.machine_of(team.account, newcomer, "new-laptop").await;
    let (time, pages, records, bytes) = walk(c, &laptop, "knowledge").await;
    let (t_all, p_all, r_all, b_all) = walk(c, &laptop, "knowledge,team_observations").await;
    println!(
        "\na new member's first sync (the feed walked from the start, pages of 500):\n\n\
         | asks for | time | pages | records | MB | ratio (time) |\n|---|---|---|---|---|---|\n\
         | knowledge, sessions, summaries (the default) | {:.1} s | {pages} | {records} | {:.1} | {:.2}× |\n\
         | also teammates' events (`team_observations`) | {:.1} s | {p_all} | {r_all} | {:.1} | 1.00 |",
        time.as_secs_f64(),
        bytes as f64 / 1e6,
        time.as_secs_f64() / t_all.as_secs_f64(),
        t_all.as_secs_f64(),
        b_all as f64 / 1e6,
    );
}
