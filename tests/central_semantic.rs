//! The central service searches by meaning on pgvector: a machine sends its query's
//! vector, the service ranks the records the person may see by it, within the
//! filters, and for hybrid blends it with the words; an edited or erased record's
//! old vector never answers; a service whose PostgreSQL has no pgvector answers by
//! words and says so, and vectors still travel.
//!
//! The service-level tests use vectors of 8 dimensions made here; the behaviour
//! tests drive the real binaries with multilingual-e5-small
//! (`SOLARIA_TEST_MULTILINGUAL_MODEL_DIR`) and, for the service without pgvector,
//! the plain cluster (`SOLARIA_TEST_PLAIN_DATABASE_URL`, `tests/support/pg.rs`).

use serde_json::{Value, json};
use solaria_central::storage::{Role, Storage};
use solaria_shared::embedding::WireEmbedding;
use solaria_shared::wire::{SearchResponse, WireRecord};
use solaria_shared::{Observation, ObservationKind, Project, SearchMode};
use solaria_tests::central::{Central, Machine, Options, delete};
use solaria_tests::edge::Edge;
use solaria_tests::mcp::McpStdio;
use solaria_tests::pg::{fresh_database, fresh_plain_database};
use solaria_tests::records::{observation, session, stamp};
use solaria_tests::semantic::{
    configure_model, copy_model, corrupt_weights, laptop_and_desktop, minilm, multilingual, queued,
};
use std::path::Path;

const MODEL: &str = "test-model/8d";

/// A unit vector at `angle` (radians) from the query [`ahead`], turned in the plane
/// of the axis `axis`.
fn at_angle(angle: f32, axis: usize) -> Vec<f32> {
    let mut v = vec![0.0; 8];
    v[0] = angle.cos();
    v[axis] = angle.sin();
    v
}

fn ahead() -> Vec<f32> {
    at_angle(0.0, 1)
}

/// A note of `project` by `m`, its vector at `angle`.
struct Note {
    project: &'static str,
    text: String,
    kind: ObservationKind,
    vector: Vec<f32>,
}

fn note(project: &'static str, text: &str, vector: Vec<f32>) -> Note {
    Note {
        project,
        text: text.into(),
        kind: ObservationKind::ToolUse,
        vector,
    }
}

/// Pushes `notes` (in one session) with their vectors (none for an empty one);
/// their records, in order.
async fn push(c: &Central, m: &Machine, notes: Vec<Note>) -> Vec<Observation> {
    let s = session(m.id, stamp(-60_000));
    let mut records: Vec<WireRecord> = vec![s.clone().into()];
    let mut embeddings = Vec::new();
    let mut pushed = Vec::new();
    for (i, n) in notes.into_iter().enumerate() {
        let mut o = observation(m.id, s.id, stamp(-50_000 + i as i64), &n.text);
        o.project = Project {
            key: n.project.into(),
            name: n.project.rsplit('/').next().unwrap_or(n.project).into(),
        };
        o.kind = n.kind;
        if !n.vector.is_empty() {
            embeddings.push(WireEmbedding::encode(
                *o.id.as_uuid(),
                o.meta.updated,
                MODEL,
                &n.vector,
            ));
        }
        pushed.push(o.clone());
        records.push(o.into());
    }
    let r = c
        .client
        .post(c.at("/memory/sync"))
        .bearer_auth(&m.jwt)
        .json(&json!({"records": records, "embeddings": embeddings}))
        .send()
        .await
        .expect("push");
    assert_eq!(r.status(), 200);
    let answer: Value = r.json().await.expect("sync answer");
    assert!(
        answer.get("embeddings_refused").is_none(),
        "every vector kept: {answer}"
    );
    pushed
}

fn id(o: &Observation) -> uuid::Uuid {
    *o.id.as_uuid()
}

/// `POST /memory/search` with `body`: the status and the response.
async fn post_search(c: &Central, m: &Machine, body: &Value) -> reqwest::Response {
    c.client
        .post(c.at("/memory/search"))
        .bearer_auth(&m.jwt)
        .json(body)
        .send()
        .await
        .expect("search")
}

/// `POST /memory/search` with `extra` fields beside the query text, answered 200.
async fn ask(c: &Central, m: &Machine, q: &str, extra: Value) -> SearchResponse {
    let mut body = json!({"q": q, "limit": 10});
    for (k, v) in extra.as_object().expect("fields") {
        body[k] = v.clone();
    }
    let r = post_search(c, m, &body).await;
    assert_eq!(r.status(), 200, "{body}");
    r.json().await.expect("search answer")
}

fn by_meaning(mode: &str, extra: Value) -> Value {
    let mut body = json!({"mode": mode, "vector": {"model": MODEL, "values": ahead()}});
    for (k, v) in extra.as_object().expect("fields") {
        body[k] = v.clone();
    }
    body
}

fn ids(answer: &SearchResponse) -> Vec<uuid::Uuid> {
    answer.hits.iter().map(|h| h.id).collect()
}

/// More records nearer the query than one HNSW walk collects.
const CROWD: usize = 260;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn central_ranks_by_meaning_what_the_person_may_see_within_the_filters() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let ana = c.machine(acct, "ana-laptop").await;
    let bob_person = c.person(acct, "bob@acme.test", Role::Member).await;
    let bob = c.machine_of(acct, bob_person, "bob-laptop").await;
    let globex = c.account("globex").await;
    let other = c.machine(globex, "globex-laptop").await;

    // Ana: a crowd in one project, near the query; one record of another project and
    // one note, both far from it; one record that holds the query's words, far too.
    let mut mine = vec![
        note(
            "github.com/acme/billing",
            "billing export",
            at_angle(1.0, 2),
        ),
        note(
            "github.com/acme/api",
            "flaky upload retries",
            at_angle(1.2, 3),
        ),
        Note {
            kind: ObservationKind::Note,
            ..note("github.com/acme/api", "a note far away", at_angle(1.1, 4))
        },
    ];
    for i in 0..CROWD {
        let angle = 0.05 + 0.4 * i as f32 / CROWD as f32;
        mine.push(note(
            "github.com/acme/api",
            &format!("crowd {i}"),
            at_angle(angle, 1 + i % 7),
        ));
    }
    let mine = push(&c, &ana, mine).await;
    let (billing, words, far_note, nearest) =
        (id(&mine[0]), id(&mine[1]), id(&mine[2]), id(&mine[3]));
    // What Ana may never see, right on the query: Bob's personal project and
    // another account's record. Bob also has a record farther than Ana's crowd.
    let bobs = push(
        &c,
        &bob,
        vec![
            note("github.com/bob/secret", "bob's secret", ahead()),
            note(
                "github.com/bob/secret",
                "bob's far record",
                at_angle(1.3, 5),
            ),
        ],
    )
    .await;
    let bobs = [id(&bobs[0]), id(&bobs[1])];
    let globex_one = push(
        &c,
        &other,
        vec![note("github.com/acme/api", "globex", ahead())],
    )
    .await;
    let globex_one = [id(&globex_one[0])];

    let all = ask(&c, &ana, "anything", by_meaning("semantic", json!({}))).await;
    assert_eq!(all.mode, SearchMode::Semantic, "{:?}", all.notice);
    assert_eq!(all.notice, None);
    assert_eq!(all.hits.len(), 10);
    assert_eq!(all.hits[0].id, nearest, "the nearest first: {:?}", all.hits);
    for hidden in [bobs[0], globex_one[0]] {
        assert!(!ids(&all).contains(&hidden), "{:?}", all.hits);
    }
    // Bob finds his own, the far one too: Ana's personal records, nearer, neither
    // answer nor take the places of his.
    let bob_sees = ask(&c, &bob, "anything", by_meaning("semantic", json!({}))).await;
    assert_eq!(ids(&bob_sees), bobs.to_vec());

    // Filters apply inside the vector query: a project or a type that the crowd
    // outnumbers still has its records found.
    let project = ask(
        &c,
        &ana,
        "anything",
        by_meaning("semantic", json!({"project": "github.com/acme/billing"})),
    )
    .await;
    assert_eq!(ids(&project), vec![billing]);
    let notes = ask(
        &c,
        &ana,
        "anything",
        by_meaning("semantic", json!({"type": "note"})),
    )
    .await;
    assert_eq!(ids(&notes), vec![far_note]);

    // Hybrid: the record holding the words comes first although meaning alone
    // puts it last.
    let semantic = ask(
        &c,
        &ana,
        "flaky upload retries",
        by_meaning("semantic", json!({})),
    )
    .await;
    assert!(!ids(&semantic).contains(&words));
    let hybrid = ask(
        &c,
        &ana,
        "flaky upload retries",
        by_meaning("hybrid", json!({})),
    )
    .await;
    assert_eq!(hybrid.mode, SearchMode::Hybrid);
    assert_eq!(hybrid.hits[0].id, words, "{:?}", hybrid.hits);
    assert_eq!(
        hybrid.hits[1].id, nearest,
        "then by meaning: {:?}",
        hybrid.hits
    );

    // A new version of a record (pushed without a vector) and an erased record:
    // their old vectors answer no more.
    let mut edited = mine[0].clone();
    edited.meta.updated = stamp(1000);
    edited.input = json!({"command": "billing export, edited"}).to_string();
    c.push_ok(&ana, &[edited.into()]).await;
    let project = ask(
        &c,
        &ana,
        "anything",
        by_meaning("semantic", json!({"project": "github.com/acme/billing"})),
    )
    .await;
    assert_eq!(
        ids(&project),
        Vec::<uuid::Uuid>::new(),
        "{:?}",
        project.hits
    );
    let (status, _) = delete(&c, &ana, &format!("/memory/records/{nearest}")).await;
    assert_eq!(status, 200);
    let all = ask(&c, &ana, "anything", by_meaning("semantic", json!({}))).await;
    assert!(!ids(&all).contains(&nearest), "{:?}", all.hits);

    // What cannot run by meaning runs by words, and says why.
    let no_vector = ask(&c, &ana, "flaky upload", json!({"mode": "semantic"})).await;
    assert_eq!(no_vector.mode, SearchMode::Lexical);
    assert!(
        no_vector
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("needs the query's vector")),
        "{:?}",
        no_vector.notice
    );
    assert_eq!(ids(&no_vector), vec![words]);
    let unknown = ask(
        &c,
        &ana,
        "flaky",
        json!({"mode": "hybrid", "vector": {"model": "another", "values": ahead()}}),
    )
    .await;
    assert_eq!(unknown.mode, SearchMode::Lexical);
    assert!(
        unknown
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("no record here has a vector of the model another"))
    );
    let short = ask(
        &c,
        &ana,
        "flaky",
        json!({"mode": "semantic", "vector": {"model": MODEL, "values": [1.0, 0.0]}}),
    )
    .await;
    assert!(
        short
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("8 dimensions here")),
        "{:?}",
        short.notice
    );
    for (body, why) in [
        (
            json!({"q": "x", "mode": "semantic", "vector": {"model": MODEL, "values": []}}),
            "an empty vector is refused",
        ),
        (
            json!({"q": "x", "mode": "fuzzy"}),
            "an unknown mode is refused",
        ),
    ] {
        assert_eq!(post_search(&c, &ana, &body).await.status(), 400, "{why}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_pushed_without_a_vector_keeps_its_place_by_words_in_a_hybrid_search() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let ana = c.machine(acct, "ana-laptop").await;
    // The best match by words was pushed without a vector (its machine had no
    // model then); thirty weaker matches by words mean the query exactly.
    let mut notes = vec![note(
        "github.com/acme/api",
        "invoice exporter crashes",
        Vec::new(),
    )];
    for i in 0..30 {
        notes.push(note(
            "github.com/acme/api",
            &format!(
                "the invoice exporter screen {i} crashes the layout of wide tables in reports"
            ),
            ahead(),
        ));
    }
    for i in 0..30 {
        notes.push(note(
            "github.com/acme/api",
            &format!("gardening {i}"),
            at_angle(1.3, 2),
        ));
    }
    let pushed = push(&c, &ana, notes).await;
    let q = "invoice exporter crashes";
    let words = ask(&c, &ana, q, json!({"mode": "lexical"})).await;
    assert_eq!(words.hits[0].id, id(&pushed[0]), "{:?}", words.hits);
    let hybrid = ask(&c, &ana, q, by_meaning("hybrid", json!({}))).await;
    assert_eq!(hybrid.mode, SearchMode::Hybrid, "{:?}", hybrid.notice);
    assert_eq!(
        hybrid.hits[0].id,
        id(&pushed[0]),
        "first by words and without a vector, first in hybrid too: {:?}",
        hybrid.hits
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_kept_before_pgvector_are_indexed_at_the_next_start() {
    let db = fresh_database().await;
    let storage = Storage::connect(&db.url, 10).await.expect("connect");
    storage.migrate().await.expect("migrate");
    // The database of a service that ran before the server had pgvector.
    sqlx::raw_sql("ALTER TABLE memory_vectors DROP COLUMN embedding; DROP EXTENSION vector")
        .execute(storage.pool())
        .await
        .expect("without pgvector");
    let before = Storage::connect(&db.url, 10).await.expect("connect");
    assert!(!before.meaning().is_on());
    let c = Central::serve(before, Options::default()).await;
    let acct = c.account("acme").await;
    let laptop = c.machine(acct, "laptop").await;
    let pushed = push(
        &c,
        &laptop,
        vec![
            note("github.com/acme/api", "far", at_angle(1.0, 2)),
            note("github.com/acme/api", "nearest", at_angle(0.1, 3)),
            note("github.com/acme/api", "middle", at_angle(0.5, 4)),
        ],
    )
    .await;
    let by_words = ask(&c, &laptop, "anything", by_meaning("semantic", json!({}))).await;
    assert_eq!(by_words.mode, SearchMode::Lexical);
    c.stop().await;

    // The server gains pgvector; the service starts again.
    let after = Storage::connect(&db.url, 10).await.expect("connect");
    after.migrate().await.expect("migrate");
    assert!(after.meaning().is_on(), "{}", after.meaning().line());
    let kept: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM memory_vectors WHERE embedding IS NOT NULL AND data IS NULL",
    )
    .fetch_one(after.pool())
    .await
    .expect("count");
    assert_eq!(
        kept, 3,
        "every vector moved into the indexed column, one copy"
    );
    let c = Central::serve(after, Options::default()).await;
    let laptop = c.log_in(acct, laptop.id, laptop.credential).await;
    let found = ask(&c, &laptop, "anything", by_meaning("semantic", json!({}))).await;
    assert_eq!(found.mode, SearchMode::Semantic, "{:?}", found.notice);
    assert_eq!(
        ids(&found),
        vec![id(&pushed[1]), id(&pushed[2]), id(&pushed[0])]
    );
    // And they still travel to the account's other machines.
    let desktop = c.machine(acct, "desktop").await;
    let page = c
        .client
        .get(c.at(&format!("/memory/changes?since=0&embeddings={MODEL}")))
        .bearer_auth(&desktop.jwt)
        .send()
        .await
        .expect("changes");
    let page: Value = page.json().await.expect("page");
    assert_eq!(
        page["embeddings"].as_array().map(Vec::len),
        Some(3),
        "{page}"
    );
}

/// The record a question in Spanish must find.
const CAMERA: &str = "the mobile app crashes when the camera permission is denied";
/// The same problem asked in Spanish: no word in common with [`CAMERA`].
const CAMERA_IN_SPANISH: &str = "el teléfono se cuelga si el usuario rechaza el acceso a las fotos";

/// English prompts on unrelated topics, [`CAMERA`] among them.
fn english_work(edge: &Edge) {
    for p in [
        "upgrade tokio to 1.40 and fix the deprecation warnings",
        "add rate limiting to the login endpoint to stop brute force password guessing",
        CAMERA,
        "add an index on orders.created_at, the monthly report query does a full table scan",
        "cache the exchange rates for an hour instead of fetching them per request",
    ] {
        edge.prompt("s1", p);
    }
}

/// A central service over TLS, and a laptop and a desktop of one account with the
/// model in `model`: the laptop's [`english_work`] embedded and pushed.
async fn english_work_on_central(model: &Path) -> (Central, Edge, Edge) {
    let c = Central::start_tls().await;
    let (laptop, desktop) = laptop_and_desktop(&c, model).await;
    english_work(&laptop);
    laptop.ok(&["embed"]);
    laptop.ok(&["sync"]);
    (c, laptop, desktop)
}

/// `solaria search --remote --json --mode MODE Q`: the hits' titles and stderr.
fn remote_titles(edge: &Edge, mode: &str, q: &str) -> (Vec<String>, String) {
    let out = edge.run(&["search", "--remote", "--json", "--mode", mode, q]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json hits");
    let titles = hits
        .iter()
        .map(|h| h["title"].as_str().unwrap_or_default().to_string())
        .collect();
    (titles, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_in_spanish_finds_english_records_on_central_by_meaning() {
    let Some(model) = multilingual() else { return };
    let (c, laptop, desktop) = english_work_on_central(&model).await;
    // Another account's machine holds a near twin of the record.
    let globex = c.account("globex").await;
    let stranger = Edge::new("stranger");
    stranger.enroll(&c, globex).await;
    configure_model(&stranger, &model);
    stranger.prompt(
        "g1",
        "GLOBEX: the phone app crashes when camera access is denied",
    );
    stranger.ok(&["embed"]);
    stranger.ok(&["sync"]);

    // The desktop holds nothing of it: only central can answer.
    let (titles, _) = remote_titles(&desktop, "semantic", CAMERA_IN_SPANISH);
    assert_eq!(
        titles.first().map(String::as_str),
        Some(CAMERA),
        "{titles:?}"
    );
    assert!(titles.iter().all(|t| !t.contains("GLOBEX")), "{titles:?}");
    let (titles, _) = remote_titles(&desktop, "hybrid", CAMERA_IN_SPANISH);
    assert_eq!(
        titles.first().map(String::as_str),
        Some(CAMERA),
        "{titles:?}"
    );
    let (titles, _) = remote_titles(&desktop, "lexical", CAMERA_IN_SPANISH);
    assert!(
        !titles.iter().any(|t| t == CAMERA),
        "no word in common: {titles:?}"
    );
    // The index a person reads says how it searched.
    let index = desktop.ok(&[
        "search",
        "--remote",
        "--mode",
        "semantic",
        CAMERA_IN_SPANISH,
    ]);
    assert!(index.contains("semantic"), "{index}");
    // An agent asks through the desktop's MCP server, naming no mode: it searches
    // by meaning with the model this machine keeps, as the CLI does.
    let mut mcp = McpStdio::start(&desktop);
    mcp.initialize("claude-code");
    let answer = mcp.ok("memory_search_remote", json!({"query": CAMERA_IN_SPANISH}));
    let first = answer
        .lines()
        .find(|l| l.contains("[O#"))
        .unwrap_or_else(|| panic!("a hit: {answer}"));
    assert!(first.contains(CAMERA), "found by meaning first: {answer}");
    assert!(!answer.contains("GLOBEX"), "{answer}");
    mcp.close();

    // Forgotten on the laptop and synced: its vector answers no more.
    let id: String = laptop
        .db()
        .query_row(
            "SELECT id FROM observations WHERE title = ?1",
            [CAMERA],
            |r| r.get(0),
        )
        .expect("stored");
    laptop.ok(&["forget", &id]);
    laptop.ok(&["sync"]);
    let (titles, _) = remote_titles(&desktop, "semantic", CAMERA_IN_SPANISH);
    assert!(!titles.iter().any(|t| t == CAMERA), "{titles:?}");

    desktop.ok(&["sync"]);
    let status = desktop.ok(&["status"]);
    assert!(
        status.contains("central:    search by meaning: on (pgvector 0."),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_by_meaning_reaches_what_retention_removed_here() {
    let Some(model) = multilingual() else { return };
    let (c, acct) = Central::tls_with_account().await;
    let edge = Edge::new("laptop");
    edge.enroll(&c, acct).await;
    configure_model(&edge, &model);
    edge.old_prompts(&[(60, CAMERA), (2, "upgrade tokio to 1.40 this week")]);
    edge.ok(&["embed"]);
    edge.ok(&["sync"]);
    let out = edge.ok(&["prune"]);
    assert!(out.contains("Removed 1 observation(s)"), "{out}");

    let out = edge.ok(&["search", "--json", "--mode", "semantic", CAMERA_IN_SPANISH]);
    let hits: Vec<Value> = serde_json::from_str(&out).expect("json");
    let camera = hits
        .iter()
        .find(|h| h["title"] == CAMERA)
        .unwrap_or_else(|| panic!("the pruned record, found by meaning on the server: {hits:?}"));
    assert_eq!(camera["remote"], true, "{camera}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_central_service_without_pgvector_answers_by_words_and_says_so() {
    let Some(model) = minilm() else { return };
    let db = fresh_plain_database().await;
    let storage = Storage::connect(&db.url, 10).await.expect("connect");
    storage.migrate().await.expect("migrate");
    assert!(!storage.meaning().is_on());
    let c = Central::serve(
        storage,
        Options {
            tls: true,
            ..Options::default()
        },
    )
    .await;
    let ready = c.client.get(c.at("/readyz")).send().await.expect("readyz");
    assert_eq!(ready.status(), 200);
    let body = ready.text().await.expect("body");
    assert!(
        body.contains("search by meaning: off (the PostgreSQL server has no pgvector extension"),
        "{body}"
    );

    let (laptop, desktop) = laptop_and_desktop(&c, &model).await;
    english_work(&laptop);
    laptop.ok(&["embed"]);
    let out = laptop.ok(&["sync"]);
    assert!(
        out.contains("Vectors: pushed"),
        "vectors are kept all the same: {out}"
    );
    // They still travel: the desktop searches by meaning locally without embedding.
    desktop.ok(&["restore"]);
    assert_eq!(queued(&desktop), 0);

    let (titles, stderr) = remote_titles(&desktop, "semantic", "camera permission");
    assert!(titles.iter().any(|t| t == CAMERA), "by words: {titles:?}");
    assert!(
        stderr.contains("searched by words: the PostgreSQL server has no pgvector extension"),
        "{stderr}"
    );
    desktop.ok(&["sync"]);
    let status = desktop.ok(&["status"]);
    assert!(
        status.contains("central:    search by meaning: off ("),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_search_with_a_broken_model_runs_by_words_unless_meaning_was_asked() {
    let Some(model) = minilm() else { return };
    let (c, acct) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    laptop.enroll(&c, acct).await;
    let installed = tempfile::tempdir().expect("tempdir");
    copy_model(&model, installed.path());
    configure_model(&laptop, installed.path());
    english_work(&laptop);
    laptop.ok(&["sync"]);
    corrupt_weights(installed.path());

    // No mode asked: hybrid was the default, the model fails, words answer.
    let out = laptop.run(&["search", "--remote", "--json", "camera permission"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json hits");
    assert_eq!(hits.first().and_then(|h| h["title"].as_str()), Some(CAMERA));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("searched by words only") && stderr.contains("solaria model install"),
        "{stderr}"
    );
    // Meaning asked for: the failure, and what mends it.
    let out = laptop.run(&[
        "search",
        "--remote",
        "--mode",
        "semantic",
        "camera permission",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("solaria model install"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_search_by_meaning_has_the_running_daemon_embed_its_query() {
    let Some(model) = multilingual() else { return };
    let (_central, _laptop, desktop) = english_work_on_central(&model).await;

    // No daemon: the search loads the model for one query, and says so.
    let (titles, said) = remote_titles(&desktop, "semantic", CAMERA_IN_SPANISH);
    assert_eq!(
        titles.first().map(String::as_str),
        Some(CAMERA),
        "{titles:?}"
    );
    assert!(said.contains("no daemon answered"), "{said}");

    // The desktop's daemon keeps its own copy of the model loaded.
    let own = desktop.root.path().join("model");
    copy_model(&model, &own);
    // The daemon and its API are driven by blocking clients.
    tokio::task::block_in_place(|| {
        let serve = solaria_tests::daemon::serve_with(
            &desktop,
            &format!("[search]\nmodel_dir = '{}'", own.display()),
        );
        let (titles, said) = remote_titles(&desktop, "semantic", CAMERA_IN_SPANISH);
        assert_eq!(
            titles.first().map(String::as_str),
            Some(CAMERA),
            "{titles:?}"
        );
        assert!(!said.contains("no daemon answered"), "{said}");
        // With the weights on disk broken (same fingerprint), only the daemon's
        // loaded model can embed the query: the search still finds by meaning.
        corrupt_weights(&own);
        let (titles, said) = remote_titles(&desktop, "semantic", CAMERA_IN_SPANISH);
        assert_eq!(titles.first().map(String::as_str), Some(CAMERA), "{said}");
        // The endpoint itself: a vector of the model's dimensions, a clear 400 for none.
        let embed = |body: Value| {
            solaria_tests::daemon::answer(
                serve
                    .authed(reqwest::Method::POST, "/api/embed")
                    .json(&body),
            )
        };
        let (status, vector) = embed(json!({"text": CAMERA_IN_SPANISH}));
        assert_eq!(status, 200, "{vector}");
        assert_eq!(
            vector["values"].as_array().map(Vec::len),
            Some(384),
            "{vector}"
        );
        let (status, empty) = embed(json!({"text": "  "}));
        assert_eq!(status, 400, "{empty}");
        let (status, long) = embed(json!({"text": "x".repeat(1_001)}));
        assert_eq!(status, 400, "{long}");
        let (status, odd) = embed(json!({"text": "ok", "model": "other"}));
        assert_eq!(status, 400, "an unknown field is refused: {odd}");
        drop(serve);
    });
    // Without it, the search loads the broken weights itself, and fails plainly.
    let out = desktop.run(&[
        "search",
        "--remote",
        "--mode",
        "semantic",
        CAMERA_IN_SPANISH,
    ]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("solaria model install"),
        "says how to mend it: {said}"
    );
}

/// The sentence of [`crate::semantic::THREE_THINGS`] a search for "authentication
/// broke" should show.
const LOGIN_SENTENCE: &str = "After the upgrade the login page refused every password.";

/// The snippet of the first hit of `search --remote --mode semantic Q`, which must
/// not pass on the sentences the service sent.
fn first_remote_snippet(edge: &Edge, q: &str) -> String {
    let out = edge.run(&["search", "--remote", "--json", "--mode", "semantic", q]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let hits: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json hits");
    assert!(hits.iter().all(|h| h.get("passages").is_none()), "{hits:?}");
    hits.first()
        .and_then(|h| h["snippet"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Central holds no model: a hit it finds by meaning alone comes with its first
/// sentences, and the edge that asked shows the one closest to the query, by the
/// model it loaded or by its daemon's (`POST /api/closest`, which refuses what it
/// cannot weigh).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_hit_found_by_meaning_shows_its_sentence_closest_to_the_query() {
    let Some(model) = minilm() else { return };
    let c = Central::start_tls().await;
    let (laptop, desktop) = laptop_and_desktop(&c, &model).await;
    laptop.prompt("s1", crate::semantic::THREE_THINGS);
    laptop.ok(&["embed"]);
    laptop.ok(&["sync"]);

    assert_eq!(
        first_remote_snippet(&desktop, "authentication broke"),
        LOGIN_SENTENCE,
        "chosen by the model the search loaded"
    );
    tokio::task::block_in_place(|| {
        let serve = solaria_tests::daemon::serve_with(
            &desktop,
            &format!("[search]\nmodel_dir = '{}'", model.display()),
        );
        let closest = |body: Value| {
            solaria_tests::daemon::answer(
                serve
                    .authed(reqwest::Method::POST, "/api/closest")
                    .json(&body),
            )
        };
        let (status, vector) = solaria_tests::daemon::answer(
            serve
                .authed(reqwest::Method::POST, "/api/embed")
                .json(&json!({"text": "when do we eat"})),
        );
        assert_eq!(status, 200, "{vector}");
        let sentences = json!([
            "The login page refused every password.",
            "Lunch is at noon."
        ]);
        let (status, chosen) = closest(json!({"vector": vector, "lists": [sentences, []]}));
        assert_eq!(status, 200, "{chosen}");
        assert_eq!(chosen, json!([1, null]));
        let long = "word ".repeat(81);
        let (status, too_long) = closest(json!({"vector": vector, "lists": [[long]]}));
        assert_eq!(
            status, 400,
            "a sentence longer than any search sends: {too_long}"
        );
        let seven = vec!["one more sentence"; 7];
        let (status, many) = closest(json!({"vector": vector, "lists": [seven]}));
        assert_eq!(status, 400, "more sentences than a search weighs: {many}");
        let mut other = vector.clone();
        other["model"] = json!("another-model/384");
        let (status, foreign) = closest(json!({"vector": other, "lists": [sentences]}));
        assert_eq!(status, 400, "another model's vector: {foreign}");
        let (status, odd) = closest(json!({"vector": vector, "lists": [], "k": 1}));
        assert_eq!(status, 400, "an unknown field is refused: {odd}");
        assert_eq!(
            first_remote_snippet(&desktop, "authentication broke"),
            LOGIN_SENTENCE,
            "chosen by the daemon's model"
        );
        drop(serve);
    });
}
