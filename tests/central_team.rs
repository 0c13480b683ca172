//! Team memory on a real central service (PostgreSQL, HTTP on loopback, the real
//! `solaria-central` binary for the operator): two people, three machines. What a
//! person writes in a shared project reaches their teammates with its author; what
//! they write anywhere else stays theirs, through every read path and endpoint; a
//! member's admin act is refused; a removed person's machine is refused at once;
//! and the audit log lists what happened.

use serde_json::{Value, json};
use solaria_central::storage::Storage;
use solaria_shared::knowledge::Iteration;
use solaria_shared::wire::{
    ChangesPage, MachineName, RecordOutcome, RestorePage, SearchResponse, SyncResponse, WireRecord,
};
use solaria_shared::{Knowledge, KnowledgeBody, KnowledgeId, Project};
use solaria_tests::central::{Central, Machine, Options, delete, get, get_ok, ok};
use solaria_tests::central_mcp::Client;
use solaria_tests::pg::fresh_database;
use solaria_tests::records::{decision, observation, session, stamp, summary, wire};
use std::collections::HashSet;
use uuid::Uuid;

/// Ana's own project: every record of it is personal.
fn dotfiles() -> Project {
    Project {
        key: "github.com/ana/dotfiles".into(),
        name: "dotfiles".into(),
    }
}

/// What one machine wrote in one project, by id.
struct Written {
    session: Uuid,
    observation: Uuid,
    summary: Uuid,
    decision: Uuid,
    iteration: Uuid,
    records: Vec<WireRecord>,
}

impl Written {
    fn ids(&self) -> [Uuid; 5] {
        [
            self.session,
            self.observation,
            self.summary,
            self.decision,
            self.iteration,
        ]
    }
}

/// A session in `project` by `m`, with an event, a summary, a decision and an
/// iteration, whose texts carry `word`.
fn work(m: &Machine, project: Project, word: &str, decided: &str) -> Written {
    let mut s = session(m.id, stamp(-5_000));
    s.project = project.clone();
    let mut o = observation(m.id, s.id, stamp(-4_000), &format!("cargo test {word}"));
    o.project = project.clone();
    let mut su = summary(m.id, s.id, stamp(-3_000), &format!("Worked on the {word}"));
    su.project = project.clone();
    let d = Knowledge::new(
        KnowledgeId::new(),
        m.id,
        stamp(-2_000),
        project.clone(),
        Some(s.id),
        decision(decided, &format!("{word} as plain SQL"), "fewer layers"),
    );
    let i = Knowledge::new(
        KnowledgeId::new(),
        m.id,
        stamp(-1_000),
        project,
        Some(s.id),
        KnowledgeBody::Iteration(Iteration {
            title: format!("{word} iteration"),
            description: format!("Everything about the {word}"),
            ..Iteration::default()
        }),
    );
    Written {
        session: *s.id.as_uuid(),
        observation: *o.id.as_uuid(),
        summary: *su.id.as_uuid(),
        decision: *d.id.as_uuid(),
        iteration: *i.id.as_uuid(),
        records: vec![wire(s), wire(o), wire(su), wire(d), wire(i)],
    }
}

/// A newer version of `r` written by `m`.
fn rewritten(r: &WireRecord, m: &Machine, at: solaria_shared::Hlc) -> WireRecord {
    let mut r = r.clone();
    let meta = match &mut r {
        WireRecord::Session(x) => &mut x.meta,
        WireRecord::Observation(x) => &mut x.meta,
        WireRecord::Summary(x) => &mut x.meta,
        WireRecord::Knowledge(x) => &mut x.meta,
    };
    meta.machine_id = m.id;
    meta.updated = at;
    r
}

/// Every record id the change feed gives `m` from the start, with `types`.
async fn feed(c: &Central, m: &Machine, types: &str) -> HashSet<Uuid> {
    let mut ids = HashSet::new();
    let mut since = 0;
    loop {
        let page: ChangesPage = get_ok(
            c,
            m,
            &format!("/memory/changes?since={since}&limit=50&types={types}"),
        )
        .await;
        ids.extend(page.changes.iter().map(|ch| ch.record.id()));
        since = page.next;
        if !page.more {
            return ids;
        }
    }
}

async fn search_ids(c: &Central, m: &Machine, query: &str) -> Vec<Uuid> {
    let found: SearchResponse = get_ok(c, m, &format!("/memory/search?{query}")).await;
    found.hits.iter().map(|h| h.id).collect()
}

/// A team on a fresh database: the operator creates it with the real binary.
struct Team {
    _db: solaria_tests::pg::TestDatabase,
    c: Central,
    storage: Storage,
    url: String,
    ana_laptop: Machine,
    ana_desktop: Machine,
    bo: Machine,
    lin: Machine,
}

async fn team() -> Team {
    let db = fresh_database().await;
    let url = db.url.clone();
    let storage = Storage::connect(&url, 5).await.expect("connect");
    ok(&url, &["migrate"]);
    ok(
        &url,
        &["account", "create", "acme", "--admin", "lin@acme.dev"],
    );
    ok(&url, &["person", "add", "acme", "ana@acme.dev"]);
    ok(&url, &["person", "add", "acme", "bo@acme.dev"]);
    let c = Central::serve(storage.clone(), Options::default()).await;
    let acct = storage.find_account("acme").await.expect("account");
    let enroll = |email: &'static str| {
        let url = url.clone();
        move || ok(&url, &["enroll-token", "acme", "--person", email])
    };
    let ana_laptop = c
        .enroll(acct, enroll("ana@acme.dev")().trim(), "ana-laptop")
        .await;
    let ana_desktop = c
        .enroll(acct, enroll("ana@acme.dev")().trim(), "ana-desktop")
        .await;
    let bo = c
        .enroll(acct, enroll("bo@acme.dev")().trim(), "bo-laptop")
        .await;
    let lin = c
        .enroll(acct, enroll("lin@acme.dev")().trim(), "lin-laptop")
        .await;
    Team {
        _db: db,
        c,
        storage,
        url,
        ana_laptop,
        ana_desktop,
        bo,
        lin,
    }
}

#[tokio::test]
async fn a_shared_project_reaches_the_team_with_its_author_and_a_personal_one_reaches_no_one_else()
{
    let t = team().await;
    let c = &t.c;
    let shared = ok(&t.url, &["project", "share", "acme", "github.com/acme/*"]);
    assert!(shared.contains("shared github.com/acme/*"), "{shared}");
    let billing = work(
        &t.ana_laptop,
        solaria_tests::records::project(),
        "ledger",
        "No ORM for billing",
    );
    let personal = work(&t.ana_laptop, dotfiles(), "zanzibar", "Zanzibar prompt");
    c.push_ok(&t.ana_laptop, &billing.records).await;
    c.push_ok(&t.ana_laptop, &personal.records).await;

    // Ana's own second machine sees both projects.
    let own = search_ids(c, &t.ana_desktop, "q=zanzibar").await;
    assert!(own.contains(&personal.observation), "{own:?}");
    let own_feed = feed(c, &t.ana_desktop, "knowledge").await;
    for id in billing.ids().into_iter().chain(personal.ids()) {
        assert!(own_feed.contains(&id), "her desktop pulls {id}");
    }

    // Bo sees the shared project, named as Ana's.
    let found: SearchResponse = get_ok(c, &t.bo, "/memory/search?q=ledger").await;
    let hit = found
        .hits
        .iter()
        .find(|h| h.id == billing.observation)
        .expect("the shared event is found");
    assert_eq!(hit.author.as_deref(), Some("ana"), "{hit:?}");
    assert_eq!(hit.machine_name, "ana-laptop");
    let context: Value = get_ok(c, &t.bo, "/memory/context/github.com%2Facme%2Fapi").await;
    let text = context["text"].as_str().expect("context text");
    assert!(text.contains("No ORM for billing"), "{text}");
    assert!(text.contains("@ana on ana-laptop"), "{text}");
    let machines: Vec<MachineName> = get_ok(c, &t.bo, "/memory/machines").await;
    let named = |name: &str| {
        machines
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name} in {machines:?}"))
            .person
            .clone()
    };
    assert_eq!(named("ana-laptop").as_deref(), Some("ana"));
    assert_eq!(named("bo-laptop"), None, "his own machine names no one");
    let mut mcp = Client::new(c, Some(&t.bo));
    mcp.initialize().await;
    let answer = mcp
        .call_ok("memory_search_remote", json!({"query": "ledger"}))
        .await;
    assert!(answer.contains("@ana on ana-laptop"), "{answer}");

    // Bo pulls the team's knowledge, sessions and summaries of it, not its raw
    // events unless he asks for them.
    let pulled = feed(c, &t.bo, "knowledge").await;
    for id in [
        billing.session,
        billing.summary,
        billing.decision,
        billing.iteration,
    ] {
        assert!(pulled.contains(&id), "bo pulls {id}");
    }
    assert!(
        !pulled.contains(&billing.observation),
        "events stay central"
    );
    let with_events = feed(c, &t.bo, "knowledge,team_observations").await;
    assert!(with_events.contains(&billing.observation));

    // The personal project, through every read path, reads as unknown.
    for id in personal.ids() {
        assert!(!pulled.contains(&id) && !with_events.contains(&id), "{id}");
    }
    for query in [
        "q=zanzibar",
        "q=zanzibar&project=dotfiles",
        "q=zanzibar&project=github.com%2Fana%2Fdotfiles",
        "q=zanzibar&machine=ana-laptop",
        "q=zanzibar&type=decision",
    ] {
        assert_eq!(
            search_ids(c, &t.bo, query).await,
            Vec::<Uuid>::new(),
            "{query}"
        );
    }
    for path in [
        "/memory/context/dotfiles".to_string(),
        "/memory/context/github.com%2Fana%2Fdotfiles".to_string(),
        format!("/memory/iteration?id={}", personal.iteration),
        "/memory/iteration?project=dotfiles".to_string(),
        "/memory/decisions?project=dotfiles".to_string(),
    ]
    .into_iter()
    .chain(
        personal
            .ids()
            .iter()
            .map(|id| format!("/memory/timeline/{id}")),
    ) {
        let (status, body) = get(c, &t.bo, &path).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    let decisions: Value = get_ok(c, &t.bo, "/memory/decisions?all=true").await;
    let listed = decisions.to_string();
    assert!(listed.contains(&billing.decision.to_string()), "{listed}");
    assert!(!listed.contains("Zanzibar"), "{listed}");
    let asked: Value = get_ok(c, &t.bo, "/memory/decisions?all=true&q=zanzibar").await;
    assert!(!asked.to_string().contains("Zanzibar"), "{asked}");
    let restored: RestorePage = get_ok(c, &t.bo, "/memory/restore?types=knowledge").await;
    let restored: HashSet<Uuid> = restored.records.iter().map(|r| r.id()).collect();
    assert!(restored.contains(&billing.decision));
    assert!(personal.ids().iter().all(|id| !restored.contains(id)));
    let ids: Vec<String> = personal.ids().iter().map(Uuid::to_string).collect();
    let (error, text) = mcp
        .call("memory_get_observations", json!({"ids": ids}))
        .await;
    assert!(error, "none of them is found: {text}");
    assert!(!text.contains("zanzibar"), "{text}");
    let (error, text) = mcp
        .call(
            "memory_timeline",
            json!({"id": personal.observation.to_string()}),
        )
        .await;
    assert!(error && !text.contains("zanzibar"), "{text}");
    let (error, text) = mcp
        .call("memory_get_context", json!({"project": "dotfiles"}))
        .await;
    assert!(error && !text.contains("zanzibar"), "{text}");
    let (_, text) = mcp
        .call(
            "memory_decisions",
            json!({"query": "zanzibar", "all": true}),
        )
        .await;
    assert!(!text.contains("Zanzibar"), "{text}");
    let (error, text) = mcp
        .call(
            "memory_get_iteration",
            json!({"id": personal.iteration.to_string()}),
        )
        .await;
    assert!(error && !text.contains("zanzibar"), "{text}");
    let text = mcp
        .call_ok("memory_search_remote", json!({"query": "zanzibar"}))
        .await;
    assert!(
        !text.contains("Zanzibar") && !text.contains("zanzibar prompt"),
        "{text}"
    );
    for path in [
        format!("/memory/records/{}", personal.observation),
        format!("/memory/sessions/{}", personal.session),
        "/memory/projects/dotfiles".to_string(),
    ] {
        let (status, body) = delete(c, &t.bo, &path).await;
        assert_eq!(status, 404, "{path}: {body}");
    }

    // Nor can Bo write over Ana's records: a personal one is refused, a shared
    // one keeps her version (his machine takes it back as a lost conflict).
    let mut over: Vec<WireRecord> = Vec::new();
    for r in personal.records.iter().chain(&billing.records) {
        over.push(rewritten(r, &t.bo, stamp(0)));
    }
    let outcomes = c.push_ok(&t.bo, &over).await;
    for o in &outcomes {
        match o {
            RecordOutcome::Rejected { id, reason } => {
                assert!(personal.ids().contains(id), "{id}: {reason}");
                assert!(reason.contains("another person"), "{reason}");
            }
            RecordOutcome::Stale { id, winner } => {
                assert!(billing.ids().contains(id), "{id}");
                assert_eq!(winner.machine_id(), t.ana_laptop.id, "hers stands");
            }
            RecordOutcome::Applied { id } => panic!("{id} was written over"),
        }
    }
    let still = feed(c, &t.ana_desktop, "knowledge").await;
    assert!(personal.ids().iter().all(|id| still.contains(id)));
    let written_by_bo: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM memory_observations_remote WHERE machine_id = $1)
              + (SELECT count(*) FROM memory_knowledge WHERE machine_id = $1)
              + (SELECT count(*) FROM memory_sessions WHERE machine_id = $1)",
    )
    .bind(t.bo.id.as_uuid())
    .fetch_one(t.storage.pool())
    .await
    .expect("count");
    assert_eq!(written_by_bo, 0, "nothing of Bo's landed on her records");

    // Roles: erasing a teammate's shared record, or the account, is an admin's act.
    let (status, body) = delete(c, &t.bo, &format!("/memory/records/{}", billing.decision)).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"].as_str().unwrap_or("").contains("admin"),
        "{body}"
    );
    let (status, body) = delete(c, &t.bo, "/memory/account").await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"].as_str().unwrap_or("").contains("admin"),
        "{body}"
    );
    let (status, _) = delete(
        c,
        &t.lin,
        &format!("/memory/records/{}", personal.observation),
    )
    .await;
    assert_eq!(
        status, 404,
        "an admin cannot reach a personal record either"
    );
    let (status, body) = delete(c, &t.lin, &format!("/memory/records/{}", billing.decision)).await;
    assert_eq!(status, 200, "an admin erases in shared projects: {body}");

    // Bo leaves: his machine is refused from its next request, and writes nothing.
    ok(&t.url, &["person", "remove", "acme", "bo@acme.dev"]);
    let late = observation(
        t.bo.id,
        solaria_shared::SessionId::new(),
        stamp(0),
        "after leaving",
    );
    assert_eq!(c.push(&t.bo, &[wire(late)]).await.status(), 403);
    let (status, _) = get(c, &t.bo, "/memory/search?q=ledger").await;
    assert_eq!(status, 403, "reads are refused too");
    let audit = ok(&t.url, &["audit", "acme"]);
    for action in [
        "account created",
        "person added",
        "project shared",
        "records erased",
        "person removed",
    ] {
        assert!(audit.contains(action), "{action}: {audit}");
    }
    assert!(audit.contains("github.com/acme/*"), "{audit}");
}

#[tokio::test]
async fn sharing_later_announces_what_was_written_before_and_unsharing_hides_it_again() {
    let t = team().await;
    let c = &t.c;
    let billing = work(
        &t.ana_laptop,
        solaria_tests::records::project(),
        "ledger",
        "No ORM for billing",
    );
    c.push_ok(&t.ana_laptop, &billing.records).await;
    // Before sharing, Bo's machine syncs and finds nothing of hers.
    let first: ChangesPage = get_ok(c, &t.bo, "/memory/changes?since=0&types=knowledge").await;
    assert!(first.changes.is_empty(), "{:?}", first.changes);
    assert!(search_ids(c, &t.bo, "q=ledger").await.is_empty());
    let cursor = first.next;

    let shared = ok(&t.url, &["project", "share", "acme", "github.com/acme/api"]);
    assert!(shared.contains("5 record(s)"), "{shared}");
    let again = ok(&t.url, &["project", "share", "acme", "github.com/acme/api"]);
    assert!(again.contains("shared already"), "{again}");
    let listed = ok(&t.url, &["project", "list", "acme"]);
    assert!(listed.contains("github.com/acme/api"), "{listed}");
    // His cursor had passed them: sharing announces them again.
    let next: ChangesPage = get_ok(
        c,
        &t.bo,
        &format!("/memory/changes?since={cursor}&types=knowledge"),
    )
    .await;
    let ids: HashSet<Uuid> = next.changes.iter().map(|ch| ch.record.id()).collect();
    assert!(ids.contains(&billing.decision), "{ids:?}");
    assert!(!search_ids(c, &t.bo, "q=ledger").await.is_empty());

    ok(
        &t.url,
        &["project", "unshare", "acme", "github.com/acme/api"],
    );
    assert!(search_ids(c, &t.bo, "q=ledger").await.is_empty());
    let e = solaria_tests::central::refused(
        &t.url,
        &["project", "unshare", "acme", "github.com/acme/api"],
    );
    assert!(e.contains("is not shared"), "{e}");
    let audit = ok(&t.url, &["audit", "acme"]);
    assert!(
        audit.contains("project shared") && audit.contains("project unshared"),
        "{audit}"
    );
}

#[tokio::test]
async fn a_member_who_sees_little_of_a_busy_account_walks_the_feed_in_bounded_pages() {
    let t = team().await;
    let c = &t.c;
    ok(&t.url, &["project", "share", "acme", "github.com/acme/*"]);
    // Ana writes much of her own; a little of it is shared.
    let mut s = session(t.ana_laptop.id, stamp(-60_000));
    s.project = dotfiles();
    let mut records = vec![wire(s.clone())];
    for n in 0..900 {
        let mut o = observation(t.ana_laptop.id, s.id, stamp(-50_000 + n), "tweak");
        o.project = dotfiles();
        records.push(wire(o));
    }
    c.push_ok(&t.ana_laptop, &records).await;
    let billing = work(
        &t.ana_laptop,
        solaria_tests::records::project(),
        "ledger",
        "No ORM for billing",
    );
    c.push_ok(&t.ana_laptop, &billing.records).await;

    // Pages of 10 look at no more than 80 positions of each table: Bo's walk
    // takes steps, some of them empty, and ends with exactly what he may see.
    let (mut since, mut pages, mut got) = (0, 0, HashSet::new());
    loop {
        let page: ChangesPage = get_ok(
            c,
            &t.bo,
            &format!("/memory/changes?since={since}&limit=10&types=knowledge"),
        )
        .await;
        pages += 1;
        assert!(page.next >= since, "the cursor never goes back");
        got.extend(page.changes.iter().map(|ch| ch.record.id()));
        since = page.next;
        if !page.more {
            break;
        }
    }
    assert!(pages > 1, "bounded steps, not one look at everything");
    let expected: HashSet<Uuid> = [
        billing.session,
        billing.summary,
        billing.decision,
        billing.iteration,
    ]
    .into_iter()
    .collect();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn a_vector_of_a_record_the_pusher_cannot_see_is_refused() {
    let t = team().await;
    let c = &t.c;
    let personal = work(&t.ana_laptop, dotfiles(), "zanzibar", "Zanzibar prompt");
    c.push_ok(&t.ana_laptop, &personal.records).await;
    let observation = personal
        .records
        .iter()
        .find(|r| r.id() == personal.observation)
        .expect("the event");
    let vector = solaria_shared::embedding::WireEmbedding::encode_as(
        personal.observation,
        observation.updated(),
        "test-model",
        &[0.5; 8],
        solaria_shared::embedding::VectorEncoding::F32,
    );
    let answer: SyncResponse = c
        .client
        .post(c.at("/memory/sync"))
        .bearer_auth(&t.bo.jwt)
        .json(&json!({"records": [], "embeddings": [vector]}))
        .send()
        .await
        .expect("push")
        .json()
        .await
        .expect("answer");
    assert_eq!(answer.embeddings_refused.len(), 1, "{answer:?}");
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM memory_vectors")
        .fetch_one(t.storage.pool())
        .await
        .expect("count");
    assert_eq!(stored, 0);
}

#[tokio::test]
async fn a_shared_pattern_means_the_same_to_postgresql_and_to_an_edge() {
    let c = Central::start().await;
    // The central service matches keys in SQL (`LIKE`); an edge, to say which of its
    // projects the team sees, with `solaria_shared::sharing`. They must agree.
    let cases = [
        ("github.com/acme/*", "github.com/acme/api"),
        ("github.com/acme/*", "github.com/acmeco/api"),
        ("github.com/acme/api", "github.com/acme/api2"),
        ("github.com/*/api", "github.com/acme/api"),
        ("*", "/home/ana/notes"),
        ("a*b*c", "acb"),
        ("a*b*c", "a-b-c"),
        ("github.com/acme/a_i", "github.com/acme/api"),
        ("github.com/acme/100%", "github.com/acme/100x"),
        ("C:\\work\\*", "C:\\work\\api"),
        ("C:\\work\\*", "C:/work/api"),
    ];
    for (pattern, key) in cases {
        let (_, like) = solaria_central::storage::like_pattern(pattern).expect("a valid pattern");
        let postgres: bool = sqlx::query_scalar("SELECT $1 LIKE $2")
            .bind(key)
            .bind(&like)
            .fetch_one(c.storage.pool())
            .await
            .expect("LIKE");
        assert_eq!(
            postgres,
            solaria_shared::sharing::matches(pattern, key),
            "{pattern} ~ {key}"
        );
    }
}
