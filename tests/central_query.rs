//! The central service's cross-device queries over real HTTP on a fresh PostgreSQL
//! database per test: search (English and Spanish, the §9 weights, every filter, any
//! text a user may type), a project's context, a session's timeline, restore — and
//! account isolation and tombstones through each of them.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use solaria_shared::wire::{
    ContextResponse, MatchMode, RestorePage, SearchResponse, TimelineResponse, WireRecord,
};
use solaria_shared::{Observation, ObservationKind, Project, RecordType, Session, UnixMillis};
use solaria_tests::central::{Central, Machine, Options, legacy_machine, legacy_records};
use solaria_tests::records::{observation, session, stamp, summary, wire};
use std::collections::HashSet;

const DAY: i64 = 86_400_000;

async fn get(c: &Central, m: &Machine, path: &str, query: &[(&str, &str)]) -> reqwest::Response {
    c.client
        .get(c.at(path))
        .query(query)
        .bearer_auth(&m.jwt)
        .send()
        .await
        .expect("request")
}

async fn get_ok<T: DeserializeOwned>(
    c: &Central,
    m: &Machine,
    path: &str,
    query: &[(&str, &str)],
) -> T {
    let r = get(c, m, path, query).await;
    let status = r.status();
    let body = r.text().await.expect("body");
    assert_eq!(status, 200, "GET {path} {query:?}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
}

/// Asserts a clear JSON error with this status and returns its message.
async fn get_err(
    c: &Central,
    m: &Machine,
    path: &str,
    query: &[(&str, &str)],
    status: u16,
) -> String {
    let r = get(c, m, path, query).await;
    assert_eq!(r.status().as_u16(), status, "GET {path} {query:?}");
    let err: Value = r.json().await.expect("JSON error body");
    let message = err["message"].as_str().expect("message").to_string();
    assert!(message.len() > 15, "a message that says what to do: {err}");
    message
}

async fn search(c: &Central, m: &Machine, query: &[(&str, &str)]) -> SearchResponse {
    get_ok(c, m, "/memory/search", query).await
}

fn ids(r: &SearchResponse) -> Vec<uuid::Uuid> {
    r.hits.iter().map(|h| h.id).collect()
}

fn in_project(mut o: Observation, key: &str, name: &str) -> Observation {
    o.project = Project {
        key: key.into(),
        name: name.into(),
    };
    o
}

fn session_in(m: &Machine, key: &str, name: &str) -> Session {
    let mut s = session(m.id, stamp(0));
    s.project = Project {
        key: key.into(),
        name: name.into(),
    };
    s
}

fn days_ago(days: i64) -> UnixMillis {
    UnixMillis(UnixMillis::now().0 - days * DAY)
}

/// A path segment holding a project key (`/` encoded).
fn seg(key: &str) -> String {
    key.replace('/', "%2F")
}

#[tokio::test]
async fn search_finds_english_and_spanish_and_cites_each_hit() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let s1 = session(laptop.id, stamp(0));
    let mut o = observation(laptop.id, s1.id, stamp(1), "run the database migration");
    o.title = "Database migration for the users table".into();
    let s2 = session(desktop.id, stamp(0));
    let es = summary(
        desktop.id,
        s2.id,
        stamp(2),
        "Terminamos la migración de la base de datos de usuarios",
    );
    let noise = observation(laptop.id, s1.id, stamp(3), "cargo fmt");
    c.push_ok(
        &laptop,
        &[wire(s1.clone()), wire(o.clone()), wire(noise.clone())],
    )
    .await;
    c.push_ok(&desktop, &[wire(s2.clone()), wire(es.clone())])
        .await;

    let r = search(&c, &desktop, &[("q", "migrating the databases")]).await;
    assert_eq!(r.matched, MatchMode::All);
    let hit = r
        .hits
        .iter()
        .find(|h| h.id == *o.id.as_uuid())
        .expect("English stemming finds it");
    assert!(!ids(&r).contains(noise.id.as_uuid()));
    assert_eq!(hit.hit_type, RecordType::ToolUse);
    assert_eq!(hit.cite.to_string(), format!("[O#{}]", o.id));
    assert_eq!(hit.title, o.title);
    assert_eq!(
        (hit.project.as_str(), hit.project_name.as_str()),
        ("github.com/acme/api", "api")
    );
    assert_eq!(
        (hit.machine_id, hit.machine_name.as_str()),
        (laptop.id, "laptop")
    );
    assert_eq!(hit.session_id, s1.id);
    assert_eq!(hit.created_at, o.created_at);
    assert!(hit.tokens > 10 && hit.score > 0.0, "{hit:?}");

    let r = search(&c, &laptop, &[("q", "migraciones")]).await;
    let hit = r
        .hits
        .iter()
        .find(|h| h.id == *es.id.as_uuid())
        .expect("Spanish stemming finds it");
    assert_eq!(hit.hit_type, RecordType::Summary);
    assert_eq!(hit.cite.to_string(), format!("[S#{}]", s2.id));
    assert_eq!(
        (hit.machine_id, hit.machine_name.as_str()),
        (desktop.id, "desktop")
    );
    assert_eq!(hit.session_id, s2.id);
    assert!(hit.title.starts_with("Terminamos la migración"));

    // No record holds every word: the words are searched again, any of them.
    let r = search(&c, &laptop, &[("q", "migration zeppelin")]).await;
    assert_eq!(r.matched, MatchMode::Any);
    assert!(ids(&r).contains(o.id.as_uuid()));
    // An empty query is refused clearly.
    for q in [vec![], vec![("q", "")], vec![("q", "   \t ")]] {
        let msg = get_err(&c, &laptop, "/memory/search", &q, 400).await;
        assert!(msg.contains("`q`"), "{msg}");
    }
}

#[tokio::test]
async fn a_word_starting_a_line_of_a_tool_output_is_found() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let s1 = session(laptop.id, stamp(0));
    let mut o = observation(laptop.id, s1.id, stamp(1), "cargo test");
    // As the edge captures it: the agent's JSON, its line breaks escaped.
    o.response = serde_json::json!({
        "stdout": "running 3 tests\nquimoflux failed\n\tvelunt: 3",
        "stderr": "",
    })
    .to_string();
    assert!(o.response.contains("\\nquimoflux"));
    c.push_ok(&laptop, &[wire(s1.clone()), wire(o.clone())])
        .await;
    for word in ["quimoflux", "velunt"] {
        let r = search(&c, &laptop, &[("q", word)]).await;
        assert_eq!(ids(&r), [*o.id.as_uuid()], "{word}");
    }
}

#[tokio::test]
async fn a_tool_call_is_found_by_what_it_says_not_by_its_field_names() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let s1 = session(laptop.id, stamp(0));
    // As the edge captures a Bash call: the agent's JSON.
    let mut bash = observation(laptop.id, s1.id, stamp(1), "cargo build");
    bash.input = serde_json::json!({
        "command": "cargo build --release",
        "description": "Build the optimised binary",
    })
    .to_string();
    bash.response = serde_json::json!({"stdout": "Finished\nquimoflux ready"}).to_string();
    // A response the edge cut short at its size bound: no longer JSON, still taken
    // and found by its words.
    let mut cut = observation(laptop.id, s1.id, stamp(2), "read notes");
    cut.response = r#"{"content": "velunt rollout\nstep one: drain the qu"#.to_string();
    let mut note = observation(laptop.id, s1.id, stamp(3), "a note");
    note.input = "the description of the release pipeline".into();
    c.push_ok(
        &laptop,
        &[
            wire(s1.clone()),
            wire(bash.clone()),
            wire(cut.clone()),
            wire(note.clone()),
        ],
    )
    .await;
    let by = |o: &solaria_shared::Observation| vec![*o.id.as_uuid()];
    assert_eq!(
        ids(&search(&c, &laptop, &[("q", "description")]).await),
        by(&note)
    );
    assert_eq!(
        ids(&search(&c, &laptop, &[("q", "optimised binary")]).await),
        by(&bash)
    );
    assert_eq!(
        ids(&search(&c, &laptop, &[("q", "quimoflux")]).await),
        by(&bash)
    );
    assert_eq!(
        ids(&search(&c, &laptop, &[("q", "velunt")]).await),
        by(&cut)
    );
    assert!(ids(&search(&c, &laptop, &[("q", "stdout")]).await).is_empty());
}

#[tokio::test]
async fn a_fix_ranks_above_the_to_do_lists_that_name_it_and_each_hit_shows_its_words() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let s1 = session(laptop.id, stamp(0));
    let mut fix = observation(laptop.id, s1.id, stamp(1), "cargo test websocket_reconnect");
    fix.response = serde_json::json!({"stdout": "test websocket_reconnect ... ok"}).to_string();
    let mut records = vec![wire(s1.clone()), wire(fix.clone())];
    // The task list, rewritten three times, every item naming the fix (newer than it).
    for open in 1..=3 {
        let mut list = observation(laptop.id, s1.id, stamp(1 + open), "");
        list.tool_name = Some("TodoWrite".into());
        list.title = format!("TodoWrite: 3 items, {open} open");
        list.input = serde_json::json!({"todos": [
            {"content": "make websocket_reconnect retry with backoff", "status": "pending"},
            {"content": "test websocket_reconnect against a dropped link", "status": "pending"},
            {"content": "document websocket_reconnect", "status": "pending"},
        ]})
        .to_string();
        list.response = "{}".into();
        records.push(wire(list));
    }
    c.push_ok(&laptop, &records).await;
    let found = search(&c, &laptop, &[("q", "websocket_reconnect")]).await;
    assert_eq!(found.hits.len(), 4, "{found:?}");
    assert_eq!(
        found.hits[0].id,
        *fix.id.as_uuid(),
        "the fix first: {found:?}"
    );
    for hit in &found.hits {
        let snippet = hit.snippet.as_deref().unwrap_or_default();
        assert!(snippet.contains("**websocket_reconnect**"), "{hit:?}");
        assert!(
            !snippet.contains("stdout") && !snippet.contains("\":"),
            "what the call says, not its JSON: {snippet}"
        );
    }
    // As a page (an edge's `search --remote`, central's MCP tool): one line for the list.
    let page = solaria_shared::render::hits::remote_page(&found);
    assert_eq!(page.hits.len(), 2, "{:?}", page.hits);
    assert_eq!(page.hits[1].alike, 2, "{:?}", page.hits[1]);
}

#[tokio::test]
async fn a_server_upgraded_in_place_finds_line_starts_in_the_records_it_held() {
    let db = solaria_tests::pg::fresh_database().await;
    let storage = solaria_central::storage::Storage::connect(&db.url, 5)
        .await
        .expect("connect");
    // The schema as the version before this fix left it (migrations 1 to 4).
    solaria_central::storage::MIGRATOR
        .run_to(4, storage.pool())
        .await
        .expect("migrate to version 4");
    let (acct, id, credential) = legacy_machine(&storage, "acme", "laptop").await;
    let s1 = session(id, stamp(0));
    let mut o = observation(id, s1.id, stamp(1), "cargo test");
    o.response = serde_json::json!({"stdout": "running 3 tests\nquimoflux failed"}).to_string();
    legacy_records(&storage, acct, &[wire(s1.clone()), wire(o.clone())]).await;
    let found = |r: SearchResponse| ids(&r).contains(o.id.as_uuid());

    // The new version migrates at start: the row it already held is found.
    storage
        .migrate()
        .await
        .expect("migrate to the current version");
    let c = Central::serve(storage, Options::default()).await;
    let laptop = c.log_in(acct, id, credential).await;
    assert!(found(search(&c, &laptop, &[("q", "quimoflux")]).await));
    assert!(found(search(&c, &laptop, &[("q", "running tests")]).await));
}

#[tokio::test]
async fn ranking_follows_the_spec_weights() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let (p, q) = ("github.com/acme/web", "github.com/acme/cli");
    let sp = session_in(&m, p, "web");
    let sq = session_in(&m, q, "cli");
    let text = "flaky websocket reconnect";
    let make = |s: &Session, key: &str, name: &str, days: i64, tag: &str| {
        let mut o = in_project(observation(m.id, s.id, stamp(0), text), key, name);
        o.created_at = days_ago(days);
        o.tags = vec![tag.into()];
        o
    };
    let recent_here = make(&sp, p, "web", 1, "a");
    let month_here = make(&sp, p, "web", 15, "a");
    let old_here = make(&sp, p, "web", 90, "a");
    let recent_there = make(&sq, q, "cli", 1, "a");
    let tagged_there = make(&sq, q, "cli", 2, "net");
    let all = [
        &recent_here,
        &month_here,
        &old_here,
        &recent_there,
        &tagged_there,
    ];
    let mut batch = vec![wire(sp.clone()), wire(sq.clone())];
    batch.extend(all.iter().map(|o| wire((*o).clone())));
    c.push_ok(&m, &batch).await;
    let id = |o: &Observation| *o.id.as_uuid();

    // In project P: P's last week (1.0) > P's last month (0.8) > P's older (0.6) > Q (0.4).
    let r = search(&c, &m, &[("q", "websocket"), ("current_project", p)]).await;
    let got = ids(&r);
    assert_eq!(
        &got[..3],
        &[id(&recent_here), id(&month_here), id(&old_here)],
        "{r:#?}"
    );
    assert_eq!(got.len(), 5);
    let base = r.hits[0].score;
    let weights: Vec<f64> = r
        .hits
        .iter()
        .map(|h| (h.score / base * 10.0).round() / 10.0)
        .collect();
    assert_eq!(
        weights,
        vec![1.0, 0.8, 0.6, 0.4, 0.4],
        "same text: the score is relevance × weight"
    );
    // The current project may be named by its name too; a shared tag lifts another
    // project's record to 0.6.
    let r = search(
        &c,
        &m,
        &[
            ("q", "websocket"),
            ("current_project", "web"),
            ("tags", "net"),
        ],
    )
    .await;
    let got = ids(&r);
    assert_eq!(got[0], id(&recent_here));
    assert!(
        got.iter().position(|x| *x == id(&tagged_there))
            < got.iter().position(|x| *x == id(&recent_there)),
        "{r:#?}"
    );
    // Seen from Q, Q's records come first.
    let r = search(&c, &m, &[("q", "websocket"), ("current_project", q)]).await;
    let top: HashSet<_> = ids(&r)[..2].iter().copied().collect();
    assert_eq!(top, HashSet::from([id(&recent_there), id(&tagged_there)]));
    // The project filter is the current project too: recent above old.
    let r = search(&c, &m, &[("q", "websocket"), ("project", p)]).await;
    assert_eq!(
        ids(&r),
        vec![id(&recent_here), id(&month_here), id(&old_here)]
    );
}

#[tokio::test]
async fn every_filter_is_honoured() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let (api, web) = ("github.com/acme/api", "github.com/acme/web");
    let s_api = session_in(&laptop, api, "api");
    let s_web = session_in(&desktop, web, "web");
    let at = |m: &Machine, s: &Session, key: &str, name: &str, days: i64| {
        let mut o = in_project(
            observation(m.id, s.id, stamp(0), "deploy the service"),
            key,
            name,
        );
        o.created_at = days_ago(days);
        o
    };
    let api10 = at(&laptop, &s_api, api, "api", 10);
    let api5 = at(&laptop, &s_api, api, "api", 5);
    let mut api1_note = at(&laptop, &s_api, api, "api", 1);
    api1_note.kind = ObservationKind::Note;
    let web3 = at(&desktop, &s_web, web, "web", 3);
    let mut web_sum = summary(
        desktop.id,
        s_web.id,
        stamp(0),
        "Deploy the service to staging",
    );
    web_sum.project = s_web.project.clone();
    web_sum.created_at = days_ago(2);
    c.push_ok(
        &laptop,
        &[
            wire(s_api.clone()),
            wire(api10.clone()),
            wire(api5.clone()),
            wire(api1_note.clone()),
        ],
    )
    .await;
    c.push_ok(
        &desktop,
        &[
            wire(s_web.clone()),
            wire(web3.clone()),
            wire(web_sum.clone()),
        ],
    )
    .await;
    let set = |r: &SearchResponse| ids(r).into_iter().collect::<HashSet<_>>();
    let of = |os: &[&Observation]| os.iter().map(|o| *o.id.as_uuid()).collect::<HashSet<_>>();
    let q = ("q", "deploy");

    assert_eq!(search(&c, &laptop, &[q]).await.hits.len(), 5);
    let api_only = of(&[&api10, &api5, &api1_note]);
    assert_eq!(
        set(&search(&c, &laptop, &[q, ("project", api)]).await),
        api_only,
        "project by key"
    );
    assert_eq!(
        set(&search(&c, &laptop, &[q, ("project", "api")]).await),
        api_only,
        "project by name"
    );
    assert!(
        search(&c, &laptop, &[q, ("project", "nowhere")])
            .await
            .hits
            .is_empty()
    );
    let mut desk = of(&[&web3]);
    desk.insert(*web_sum.id.as_uuid());
    assert_eq!(
        set(&search(&c, &laptop, &[q, ("machine", "desktop")]).await),
        desk,
        "machine by name"
    );
    let desktop_id = desktop.id.to_string();
    assert_eq!(
        set(&search(&c, &laptop, &[q, ("machine", &desktop_id)]).await),
        desk,
        "machine by id"
    );
    assert!(
        search(&c, &laptop, &[q, ("machine", "toaster")])
            .await
            .hits
            .is_empty()
    );

    // from (RFC 3339, inclusive) and to (Unix ms, exclusive).
    let from = chrono_like_rfc3339(days_ago(7));
    let to = days_ago(4).0.to_string();
    assert_eq!(
        set(&search(&c, &laptop, &[q, ("from", &from), ("to", &to)]).await),
        of(&[&api5])
    );
    let to_exact = api5.created_at.0.to_string();
    assert!(
        !set(&search(&c, &laptop, &[q, ("from", &from), ("to", &to_exact)]).await)
            .contains(api5.id.as_uuid()),
        "`to` is exclusive"
    );
    let from_date = "2000-01-01";
    assert_eq!(
        search(&c, &laptop, &[q, ("from", from_date)])
            .await
            .hits
            .len(),
        5
    );

    let r = search(&c, &laptop, &[q, ("type", "summary")]).await;
    assert_eq!(ids(&r), vec![*web_sum.id.as_uuid()]);
    assert_eq!(
        set(&search(&c, &laptop, &[q, ("type", "note")]).await),
        of(&[&api1_note])
    );
    assert!(
        search(&c, &laptop, &[q, ("type", "prompt")])
            .await
            .hits
            .is_empty()
    );
    assert_eq!(
        search(&c, &laptop, &[q, ("limit", "2")]).await.hits.len(),
        2
    );
    assert_eq!(
        search(&c, &laptop, &[q, ("limit", "100000")])
            .await
            .hits
            .len(),
        5,
        "clamped, not refused"
    );
    // Filters combine.
    assert_eq!(
        set(&search(
            &c,
            &laptop,
            &[
                q,
                ("project", api),
                ("machine", "laptop"),
                ("type", "tool_use"),
                ("from", &from)
            ]
        )
        .await),
        of(&[&api5])
    );

    for (what, query) in [
        ("from", vec![q, ("from", "last tuesday")]),
        ("to", vec![q, ("to", "2026-13-45")]),
        (
            "`from` must be earlier",
            vec![q, ("from", "2000-01-02"), ("to", "2000-01-01")],
        ),
        ("`type`", vec![q, ("type", "diary")]),
        ("limit", vec![q, ("limit", "-1")]),
        ("limit", vec![q, ("limit", "many")]),
    ] {
        let msg = get_err(&c, &laptop, "/memory/search", &query, 400).await;
        assert!(msg.contains(what), "{what}: {msg}");
    }
}

/// An RFC 3339 UTC time, by hand (the tests do not depend on chrono).
fn chrono_like_rfc3339(t: UnixMillis) -> String {
    let secs = t.0.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[tokio::test]
async fn any_text_is_a_valid_query() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let s = session(m.id, stamp(0));
    let mut o = observation(m.id, s.id, stamp(1), "database migration");
    o.title = "Database migration: users' emails".into();
    c.push_ok(&m, &[wire(s), wire(o.clone())]).await;

    let long_words = "error src test cargo database ".repeat(340);
    let long_letters = "a".repeat(10_000);
    // 4,000 emoji are 48 KB once URL-encoded: near the 64 KB limit of a URI.
    let long_emoji = "🎉".repeat(4_000);
    let long_punct = "'\"()!&|:*<->\\".repeat(800);
    let weird = [
        "\"",
        "'",
        "\"unbalanced phrase",
        "a & b | !c",
        "foo:*",
        "(((",
        ")))",
        "<->",
        "<2>",
        "-",
        "--",
        "!",
        "!!!",
        "or",
        "OR or",
        "and",
        "-database",
        "NOT",
        "🎉🔥",
        "\\",
        "%",
        "_",
        "*",
        "?",
        ":",
        "&&&",
        "'); DROP TABLE accounts; --",
        "null",
        "the of a",
        "el la de",
        "データベース",
        "قاعدة البيانات",
        "\u{0}",
        "a\u{0}b",
        "\u{7f}\u{1b}[31m",
        "e\u{301}",
        "\u{feff}",
        "users' emails",
        "migration:*B",
        long_words.as_str(),
        long_letters.as_str(),
        long_emoji.as_str(),
        long_punct.as_str(),
    ];
    for q in weird {
        let r = get(&c, &m, "/memory/search", &[("q", q)]).await;
        let status = r.status();
        let shown: String = q.chars().take(40).collect();
        assert!(status == 200 || status == 400, "{shown:?}: {status}");
        let body: Value = r
            .json()
            .await
            .unwrap_or_else(|e| panic!("{shown:?}: JSON body: {e}"));
        if status == 400 {
            // Only blank text is refused (control characters are blanks).
            assert!(
                q.chars().all(|ch| ch.is_control() || ch.is_whitespace()),
                "{shown:?}: {body}"
            );
        } else {
            assert!(body["hits"].is_array(), "{shown:?}: {body}");
        }
    }
    // Syntax-looking text still finds what its words name.
    for q in [
        "\"database migration\"",
        "database -nothing",
        "(database) or zeppelin!!",
        "users' emails",
        "database:*",
    ] {
        let r = search(&c, &m, &[("q", q)]).await;
        assert!(ids(&r).contains(o.id.as_uuid()), "{q}: {r:?}");
    }
    let r = search(&c, &m, &[("q", long_words.as_str())]).await;
    assert!(r.truncated && r.query.len() < 2000);
}

#[tokio::test]
async fn context_cites_recent_records_of_every_machine_within_its_budget() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let key = "github.com/acme/api";
    let s1 = session(laptop.id, stamp(0));
    let s2 = session(desktop.id, stamp(0));
    let mut older = summary(
        laptop.id,
        s1.id,
        stamp(1),
        "Added refresh tokens to the login flow",
    );
    older.created_at = days_ago(2);
    let newer = summary(
        desktop.id,
        s2.id,
        stamp(1),
        "Fixed the flaky websocket test",
    );
    let mut obs: Vec<Observation> = (0..30)
        .map(|i| {
            let mut o = observation(laptop.id, s1.id, stamp(2), &format!("cargo test case_{i}"));
            o.created_at = UnixMillis(days_ago(1).0 + i * 1000);
            o
        })
        .collect();
    obs[29].metadata = json!({"error": true});
    let from_desktop = observation(desktop.id, s2.id, stamp(3), "git push origin main");
    let mut other_project = observation(laptop.id, s1.id, stamp(2), "elsewhere");
    other_project.project = Project {
        key: "github.com/acme/web".into(),
        name: "web".into(),
    };
    let mut batch = vec![
        wire(s1.clone()),
        wire(older.clone()),
        wire(other_project.clone()),
    ];
    batch.extend(obs.iter().cloned().map(wire));
    c.push_ok(&laptop, &batch).await;
    c.push_ok(
        &desktop,
        &[
            wire(s2.clone()),
            wire(newer.clone()),
            wire(from_desktop.clone()),
        ],
    )
    .await;

    let path = format!("/memory/context/{}", seg(key));
    let ctx: ContextResponse = get_ok(&c, &laptop, &path, &[("session", "cc-abc")]).await;
    assert_eq!(
        ctx.project,
        Project {
            key: key.into(),
            name: "api".into()
        }
    );
    assert_eq!(ctx.budget, 2000, "the default budget");
    assert!(ctx.tokens <= ctx.budget && ctx.tokens == ctx.text.chars().count().div_ceil(4));
    assert_eq!(
        ctx.sessions,
        vec![s2.id, s1.id],
        "summaries newest first: {}",
        ctx.text
    );
    assert_eq!(
        ctx.observations,
        vec![obs[29].id],
        "of the events, the error alone (routine calls are summed up by their session): {}",
        ctx.text
    );
    assert!(!ctx.text.contains("elsewhere"), "only this project");
    let line = |prefix: String| {
        ctx.text
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{prefix}: {}", ctx.text))
            .to_string()
    };
    let newest = line(format!("[S#{}]", s2.id));
    assert!(newest.contains("desktop") && newest.contains("Fixed the flaky websocket test"));
    let oldest = line(format!("[S#{}]", s1.id));
    assert!(oldest.contains("laptop") && oldest.contains("Added refresh tokens"));
    let error = line(format!("[O#{}]", obs[29].id));
    assert!(error.contains("[error]") && error.contains("cargo test case_29"));
    assert!(
        newest.contains("+00:00") && error.contains("+00:00"),
        "a UTC time on each line"
    );

    // Logged: account, machine, target session, the observations injected.
    let (machine, target, sources): (uuid::Uuid, Option<String>, Vec<uuid::Uuid>) = sqlx::query_as(
        "SELECT machine_id, target_session_id, source_observations FROM memory_context_injections WHERE account_id = $1",
    )
    .bind(acct.0)
    .fetch_one(c.storage.pool())
    .await
    .expect("one injection row");
    assert_eq!(machine, *laptop.id.as_uuid());
    assert_eq!(target.as_deref(), Some("cc-abc"));
    assert_eq!(
        sources,
        ctx.observations
            .iter()
            .map(|o| *o.as_uuid())
            .collect::<Vec<_>>()
    );

    // A small budget holds fewer lines and is never exceeded; the name works as a key.
    let small: ContextResponse =
        get_ok(&c, &desktop, "/memory/context/api", &[("budget", "240")]).await;
    assert_eq!(small.budget, 240);
    assert!(small.tokens <= 240, "{}", small.text);
    assert!(
        small.sessions.len() + small.observations.len() < 3 && !small.sessions.is_empty(),
        "{}",
        small.text
    );

    get_err(
        &c,
        &laptop,
        "/memory/context/github.com%2Facme%2Fnowhere",
        &[],
        404,
    )
    .await;
    get_err(&c, &laptop, &path, &[("budget", "lots")], 400).await;
}

#[tokio::test]
async fn timeline_shows_a_session_oldest_first_with_its_summary() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let s = session(laptop.id, stamp(0));
    let base = UnixMillis::now().0 - 3_600_000;
    let mut obs: Vec<Observation> = (0..4)
        .map(|i| {
            let mut o = observation(laptop.id, s.id, stamp(1), &format!("step {i}"));
            o.created_at = UnixMillis(base + i * 60_000);
            o
        })
        .collect();
    obs.swap(0, 3); // pushed out of order
    let sum = summary(laptop.id, s.id, stamp(2), "Did four steps");
    let other = session(laptop.id, stamp(0));
    let elsewhere = observation(laptop.id, other.id, stamp(1), "another session");
    let mut batch = vec![
        wire(s.clone()),
        wire(other),
        wire(elsewhere.clone()),
        wire(sum.clone()),
    ];
    batch.extend(obs.iter().cloned().map(wire));
    c.push_ok(&laptop, &batch).await;
    // Desktop edits one observation later: the timeline names both machines.
    let mut edited = obs[1].clone();
    edited.meta.machine_id = desktop.id;
    edited.meta.updated = stamp(10);
    edited.title = "step edited on the desktop".into();
    c.push_ok(&desktop, &[wire(edited.clone())]).await;

    let t: TimelineResponse =
        get_ok(&c, &desktop, &format!("/memory/timeline/{}", s.id), &[]).await;
    assert_eq!(t.session, s);
    let times: Vec<i64> = t.observations.iter().map(|o| o.created_at.0).collect();
    assert_eq!(
        times,
        (0..4).map(|i| base + i * 60_000).collect::<Vec<_>>(),
        "oldest first"
    );
    assert!(t.observations.contains(&edited));
    assert!(!t.observations.iter().any(|o| o.id == elsewhere.id));
    assert_eq!(t.summary, Some(sum.clone()));
    let names: Vec<(solaria_shared::MachineId, String)> =
        t.machines.iter().map(|m| (m.id, m.name.clone())).collect();
    assert!(
        names.contains(&(laptop.id, "laptop".into()))
            && names.contains(&(desktop.id, "desktop".into()))
    );

    // The id of a record in the session leads to the same timeline.
    let via_obs: TimelineResponse =
        get_ok(&c, &laptop, &format!("/memory/timeline/{}", obs[2].id), &[]).await;
    assert_eq!(via_obs, t);
    let via_sum: TimelineResponse =
        get_ok(&c, &laptop, &format!("/memory/timeline/{}", sum.id), &[]).await;
    assert_eq!(via_sum, t);

    let msg = get_err(
        &c,
        &laptop,
        &format!("/memory/timeline/{}", uuid::Uuid::now_v7()),
        &[],
        404,
    )
    .await;
    assert!(msg.contains("not found"));
    let msg = get_err(&c, &laptop, "/memory/timeline/not-a-uuid", &[], 400).await;
    assert!(msg.contains("UUID"), "{msg}");
    get_err(&c, &laptop, "/memory/timeline/%FF%FE", &[], 400).await;
}

/// Drains `/memory/restore` with pages of `limit`.
async fn restore_all(c: &Central, m: &Machine, limit: &str) -> (Vec<WireRecord>, i64, usize) {
    let (mut all, mut since, mut pages) = (Vec::new(), 0i64, 0);
    loop {
        let since_s = since.to_string();
        let page: RestorePage = get_ok(
            c,
            m,
            "/memory/restore",
            &[("since", &since_s), ("limit", limit)],
        )
        .await;
        pages += 1;
        assert!(page.next >= since);
        all.extend(page.records);
        since = page.next;
        if !page.more {
            return (all, since, pages);
        }
        assert!(pages < 100, "restore ends");
    }
}

#[tokio::test]
async fn restore_pages_every_live_record_and_leaves_tombstones_out() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let desktop = c.machine(acct, "desktop").await;
    let s = session(laptop.id, stamp(0));
    let obs: Vec<Observation> = (0..25)
        .map(|i| observation(laptop.id, s.id, stamp(1), &format!("obs {i}")))
        .collect();
    let sum = summary(laptop.id, s.id, stamp(2), "restorable");
    let s2 = session(desktop.id, stamp(0));
    let o2 = observation(desktop.id, s2.id, stamp(1), "from the desktop");
    let mut batch = vec![wire(s.clone()), wire(sum.clone())];
    batch.extend(obs.iter().cloned().map(wire));
    c.push_ok(&laptop, &batch).await;
    c.push_ok(&desktop, &[wire(s2.clone()), wire(o2.clone())])
        .await;
    // Two observations are deleted: tombstones.
    let tombstones: Vec<WireRecord> = obs[..2]
        .iter()
        .map(|o| {
            let mut t = o.clone();
            t.meta.updated = stamp(5);
            t.meta.deleted = true;
            wire(t)
        })
        .collect();
    c.push_ok(&laptop, &tombstones).await;

    let (records, next, pages) = restore_all(&c, &desktop, "10").await;
    assert_eq!(pages, 3);
    let mut expected: Vec<WireRecord> = vec![
        wire(s.clone()),
        wire(sum.clone()),
        wire(s2.clone()),
        wire(o2.clone()),
    ];
    expected.extend(obs[2..].iter().cloned().map(wire));
    let got: HashSet<String> = records
        .iter()
        .map(|r| serde_json::to_string(r).expect("json"))
        .collect();
    let want: HashSet<String> = expected
        .iter()
        .map(|r| serde_json::to_string(r).expect("json"))
        .collect();
    assert_eq!(records.len(), expected.len(), "no duplicates");
    assert_eq!(
        got, want,
        "every live record, exactly as pushed; no tombstone"
    );
    assert!(records.iter().all(|r| !r.meta().deleted));
    let first_session = records
        .iter()
        .position(|r| r.id() == *s.id.as_uuid())
        .expect("session");
    let first_obs = records
        .iter()
        .position(|r| r.id() == *obs[2].id.as_uuid())
        .expect("obs");
    assert!(
        first_session < first_obs,
        "a session comes before its observations"
    );

    // One page with the defaults; the cursor carries on into the change feed.
    let (one, next_default, pages) = restore_all(&c, &laptop, "500").await;
    assert_eq!((one.len(), pages, next_default), (records.len(), 1, next));
    let s3 = session(laptop.id, stamp(20));
    c.push_ok(&laptop, &[wire(s3.clone())]).await;
    let feed: Value = get_ok(
        &c,
        &laptop,
        "/memory/changes",
        &[("since", &next.to_string())],
    )
    .await;
    assert_eq!(feed["changes"].as_array().expect("changes").len(), 1);
    let page: RestorePage = get_ok(
        &c,
        &laptop,
        "/memory/restore",
        &[("since", &next.to_string())],
    )
    .await;
    assert_eq!(page.records, vec![wire(s3)]);

    get_err(&c, &laptop, "/memory/restore", &[("since", "-1")], 400).await;
    get_err(&c, &laptop, "/memory/restore", &[("limit", "x")], 400).await;
    let capped: RestorePage = get_ok(&c, &laptop, "/memory/restore", &[("limit", "1000000")]).await;
    assert_eq!(capped.records.len(), records.len() + 1);
}

#[tokio::test]
async fn tombstones_leave_search_context_and_timeline() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let s = session(m.id, stamp(0));
    let keep = observation(m.id, s.id, stamp(1), "kubernetes rollout kept");
    // An error, so that the context cites it while it lives.
    let mut gone = observation(m.id, s.id, stamp(1), "kubernetes rollout forgotten");
    gone.metadata = json!({"error": true});
    let sum = summary(m.id, s.id, stamp(1), "kubernetes rollout summary");
    c.push_ok(
        &m,
        &[
            wire(s.clone()),
            wire(keep.clone()),
            wire(gone.clone()),
            wire(sum.clone()),
        ],
    )
    .await;
    assert_eq!(search(&c, &m, &[("q", "kubernetes")]).await.hits.len(), 3);
    let before: ContextResponse = get_ok(&c, &m, "/memory/context/api", &[]).await;
    assert_eq!(before.observations, vec![gone.id], "{}", before.text);
    assert!(before.text.contains("kubernetes rollout summary"));
    // Tombstones keep their text here, to prove the flag alone hides them.
    let mut t1 = gone.clone();
    t1.meta.updated = stamp(5);
    t1.meta.deleted = true;
    let mut t2 = sum.clone();
    t2.meta.updated = stamp(5);
    t2.meta.deleted = true;
    c.push_ok(&m, &[wire(t1), wire(t2)]).await;
    assert_eq!(
        ids(&search(&c, &m, &[("q", "kubernetes")]).await),
        vec![*keep.id.as_uuid()]
    );
    let ctx: ContextResponse = get_ok(&c, &m, "/memory/context/api", &[]).await;
    assert!(ctx.observations.is_empty(), "{}", ctx.text);
    assert_eq!(ctx.sessions, vec![s.id], "the session keeps its live event");
    assert!(
        !ctx.text.contains(&gone.id.to_string())
            && !ctx.text.contains("forgotten")
            && !ctx.text.contains("rollout summary"),
        "{}",
        ctx.text
    );
    let t: TimelineResponse = get_ok(&c, &m, &format!("/memory/timeline/{}", s.id), &[]).await;
    assert_eq!(t.observations, vec![keep.clone()]);
    assert_eq!(t.summary, None);
    get_err(&c, &m, &format!("/memory/timeline/{}", gone.id), &[], 404).await;
    // A deleted session has no timeline.
    let mut ts = s.clone();
    ts.meta.updated = stamp(6);
    ts.meta.deleted = true;
    c.push_ok(&m, &[wire(ts)]).await;
    get_err(&c, &m, &format!("/memory/timeline/{}", s.id), &[], 404).await;
}

#[tokio::test]
async fn another_account_never_reads_or_detects_records_through_queries() {
    let c = Central::start().await;
    let acme = c.account("acme").await;
    let other = c.account("other").await;
    let a = c.machine(acme, "acme-laptop").await;
    let b = c.machine(other, "other-laptop").await;
    // Both accounts work on a project with the same key.
    let key = "github.com/acme/api";
    let sa = session(a.id, stamp(0));
    let oa = observation(a.id, sa.id, stamp(1), "zanzibar secret plans deploy");
    let suma = summary(a.id, sa.id, stamp(2), "zanzibar summary deploy");
    let mut only_a = session(a.id, stamp(0));
    only_a.project = Project {
        key: "github.com/acme/secret".into(),
        name: "secret".into(),
    };
    c.push_ok(
        &a,
        &[
            wire(sa.clone()),
            wire(oa.clone()),
            wire(suma.clone()),
            wire(only_a.clone()),
        ],
    )
    .await;
    let sb = session(b.id, stamp(0));
    let ob = observation(b.id, sb.id, stamp(1), "deploy of our own");
    c.push_ok(&b, &[wire(sb.clone()), wire(ob.clone())]).await;

    let a_ids: HashSet<uuid::Uuid> = [
        *sa.id.as_uuid(),
        *oa.id.as_uuid(),
        *suma.id.as_uuid(),
        *only_a.id.as_uuid(),
    ]
    .into();
    assert!(search(&c, &b, &[("q", "zanzibar")]).await.hits.is_empty());
    for query in [
        vec![("q", "deploy")],
        vec![("q", "deploy"), ("project", key)],
        vec![("q", "deploy"), ("current_project", key)],
        vec![("q", "zanzibar deploy plans")],
    ] {
        let r = search(&c, &b, &query).await;
        assert_eq!(ids(&r), vec![*ob.id.as_uuid()], "{query:?}");
    }
    let a_machine = a.id.to_string();
    for machine in ["acme-laptop", a_machine.as_str()] {
        assert!(
            search(&c, &b, &[("q", "deploy"), ("machine", machine)])
                .await
                .hits
                .is_empty()
        );
    }
    // Context: B's own records only; a project only A has is unknown.
    let ctx: ContextResponse = get_ok(&c, &b, &format!("/memory/context/{}", seg(key)), &[]).await;
    assert_eq!(ctx.sessions, vec![sb.id], "{}", ctx.text);
    assert!(ctx.observations.is_empty());
    assert!(!ctx.text.contains("zanzibar") && !ctx.text.contains("acme-laptop"));
    let unknown = get_err(
        &c,
        &b,
        "/memory/context/github.com%2Facme%2Fsecret",
        &[],
        404,
    )
    .await;
    assert_eq!(
        unknown,
        get_err(
            &c,
            &b,
            "/memory/context/github.com%2Facme%2Fsecrex",
            &[],
            404
        )
        .await
        .replace("secrex", "secret")
    );
    get_err(&c, &b, "/memory/context/secret", &[], 404).await;
    // Timeline: A's ids read exactly like ids nobody has.
    let nobody = uuid::Uuid::now_v7();
    let unknown = get_err(&c, &b, &format!("/memory/timeline/{nobody}"), &[], 404).await;
    for id in &a_ids {
        let msg = get_err(&c, &b, &format!("/memory/timeline/{id}"), &[], 404).await;
        assert_eq!(msg, unknown.replace(&nobody.to_string(), &id.to_string()));
    }
    // Restore: B's records only.
    let (records, _, _) = restore_all(&c, &b, "1000").await;
    let got: HashSet<uuid::Uuid> = records.iter().map(WireRecord::id).collect();
    assert_eq!(got, HashSet::from([*sb.id.as_uuid(), *ob.id.as_uuid()]));
    // Nothing B did was logged against A.
    let a_injections: i64 =
        sqlx::query_scalar("SELECT count(*) FROM memory_context_injections WHERE account_id = $1")
            .bind(acme.0)
            .fetch_one(c.storage.pool())
            .await
            .expect("count");
    assert_eq!(a_injections, 0);
    // A still sees its own.
    assert_eq!(search(&c, &a, &[("q", "zanzibar")]).await.hits.len(), 2);
}

#[tokio::test]
async fn queries_need_a_valid_machine_token() {
    let c = Central::start_with(Options::default()).await;
    for path in [
        "/memory/search?q=x",
        "/memory/context/api",
        "/memory/restore",
        &format!("/memory/timeline/{}", uuid::Uuid::now_v7()),
    ] {
        let r = c.client.get(c.at(path)).send().await.expect("request");
        assert_eq!(r.status(), 401, "{path}");
        let r = c
            .client
            .get(c.at(path))
            .bearer_auth("not-a-token")
            .send()
            .await
            .expect("request");
        assert_eq!(r.status(), 401, "{path}");
    }
}

#[tokio::test]
async fn rare_words_are_found_past_the_recent_window_and_common_ones_rank_among_the_newest() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let m = c.machine(acct, "laptop").await;
    let base = UnixMillis::now().0 - 30 * DAY;
    // More rows than a search walks in time order (2,000), straight into the table:
    // "cargo" is in every row; "quasar" only in the oldest and the 100th newest.
    let rows: u64 = sqlx::query(
        "INSERT INTO memory_observations_remote (account_id, id, session_id, machine_id, updated, seq,
             project_key, project_name, kind, title, input, response, created_at)
         SELECT $1, gen_random_uuid(), gen_random_uuid(), $2, g, g,
             CASE WHEN g % 2 = 0 THEN 'github.com/acme/api' ELSE 'github.com/acme/web' END, 'p', 'note',
             CASE WHEN g IN (1, 2401) THEN 'quasar calibration ' ELSE '' END || 'cargo build step ' || g,
             '', '', $3 + g * 1000
         FROM generate_series(1, 2500) AS g",
    )
    .bind(acct.0)
    .bind(m.id.as_uuid())
    .bind(base)
    .execute(c.storage.pool())
    .await
    .expect("insert")
    .rows_affected();
    assert_eq!(rows, 2500);
    let title_of = |r: &SearchResponse| r.hits.iter().map(|h| h.title.clone()).collect::<Vec<_>>();

    let r = search(&c, &m, &[("q", "quasar")]).await;
    let titles = title_of(&r);
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles.iter().any(|t| t.ends_with("step 1")),
        "the oldest match is found: {titles:?}"
    );
    for query in [
        vec![("q", "quasar"), ("current_project", "github.com/acme/web")],
        vec![("q", "quasar"), ("project", "github.com/acme/web")],
        vec![("q", "quasar calibration"), ("machine", "laptop")],
        vec![("q", "quasar zeppelin")],
    ] {
        let titles = title_of(&search(&c, &m, &query).await);
        assert!(
            titles.iter().any(|t| t.ends_with("step 1")),
            "{query:?}: {titles:?}"
        );
    }
    // A word in every row ranks among its newest 200 matches, the candidates.
    let r = search(&c, &m, &[("q", "cargo"), ("limit", "100")]).await;
    assert_eq!(r.hits.len(), 100);
    let step = |t: &str| {
        t.rsplit(' ')
            .next()
            .and_then(|n| n.parse::<u32>().ok())
            .expect("step number")
    };
    assert!(
        r.hits.iter().all(|h| step(&h.title) > 2300),
        "{:?}",
        title_of(&r)
    );
    assert_eq!(
        step(&r.hits[0].title),
        2500,
        "equal relevance: newest first"
    );
    // A time filter reaches back.
    let to = (base + 11_000).to_string();
    let r = search(&c, &m, &[("q", "cargo"), ("to", &to)]).await;
    assert_eq!(r.hits.len(), 10);
}

/// A prompt's title is its text: its snippet says it once, not title and text.
#[tokio::test]
async fn a_prompts_snippet_says_it_once() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let s1 = session(laptop.id, stamp(0));
    let text = "why does the websocket reconnect loop drop messages";
    let mut prompt = observation(laptop.id, s1.id, stamp(1), text);
    prompt.kind = ObservationKind::Prompt;
    prompt.tool_name = None;
    prompt.title = text.into();
    prompt.input = json!({ "prompt": text }).to_string();
    prompt.response = "{}".into();
    c.push_ok(&laptop, &[wire(s1), wire(prompt)]).await;
    let found = search(&c, &laptop, &[("q", "websocket")]).await;
    let [hit] = found.hits.as_slice() else {
        panic!("{found:?}");
    };
    let snippet = hit.snippet.as_deref().unwrap_or_default();
    assert_eq!(snippet.matches("**websocket**").count(), 1, "{snippet}");
}
