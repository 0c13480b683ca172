//! Search through the real binary: any text is a valid query, filters are honoured,
//! ranking follows relevance × the ranking weights (docs/DESIGN.md).

use serde_json::{Value, json};
use solaria_tests::edge::Edge;
use solaria_tests::payloads::*;
use std::path::Path;

fn seed(m: &Edge, p: &Path, session: &str, texts: &[&str]) {
    for t in texts {
        m.hook("user-prompt-submit", prompt(session, p, t));
    }
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|h| h["title"].as_str().expect("title").to_string())
        .collect()
}

#[test]
fn weird_queries_never_error() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    seed(
        &m,
        &p,
        "s",
        &[
            "the refresh token AND the NEAR limit",
            "col:value OR NOT \"quoted\"",
        ],
    );
    let long = "x".repeat(10_000);
    let spaced = "refresh ".repeat(1_500);
    let weird: Vec<&str> = vec![
        "\"",
        "\"unterminated",
        "AND",
        "OR",
        "NOT",
        "a AND",
        "OR b",
        "NOT NOT",
        "*",
        "refresh*",
        "NEAR(",
        "NEAR(a b, 3)",
        "col:value",
        "title:refresh",
        "(",
        ")",
        "((",
        "^",
        "-",
        "+",
        ":",
        ";",
        "'",
        "\\",
        "🚀",
        "🚀 refresh 🔥",
        "日本語",
        "ñandú",
        "--",
        "--json",
        "{}",
        "[]",
        "%",
        "_",
        "a\"b\"c",
        "\u{7}",
        &long,
        &spaced,
        "   ",
        "refresh\ttoken",
        "'; DROP TABLE observations; --",
    ];
    for q in weird {
        let out = m.run_in(&p, &["search", "--json", "--", q]);
        assert!(
            out.status.success(),
            "query {:?} failed: {}",
            q.chars().take(40).collect::<String>(),
            String::from_utf8_lossy(&out.stderr)
        );
        let _: Value = serde_json::from_slice(&out.stdout).expect("json");
    }
    assert_eq!(
        m.count("SELECT count(*) FROM observations"),
        2,
        "nothing was harmed"
    );
    // Operators are searched as words: "NEAR" and "col:value" find their rows.
    let hits = m.json(&p, &["search", "--json", "NEAR"]);
    assert_eq!(ids(&hits), vec!["the refresh token AND the NEAR limit"]);
    let hits = m.json(&p, &["search", "--json", "col:value"]);
    assert_eq!(ids(&hits), vec!["col:value OR NOT \"quoted\""]);
}

#[test]
fn filters_are_honoured() {
    let m = Edge::new("test-machine");
    let api = project(m.root.path(), "api", Some("git@github.com:acme/api.git"));
    let web = project(m.root.path(), "web", Some("git@github.com:acme/web.git"));
    seed(&m, &api, "a", &["deploy pipeline for api"]);
    m.hook(
        "post-tool-use",
        tool(
            "a",
            &api,
            "Bash",
            json!({"command": "deploy pipeline run"}),
            json!({"stdout": "ok"}),
        ),
    );
    seed(&m, &web, "w", &["deploy pipeline for web"]);
    m.hook("stop", stop("a", &api));

    let all = m.json(&api, &["search", "--json", "deploy", "pipeline"]);
    assert_eq!(all.as_array().expect("array").len(), 4, "{all:#}");

    let only_web = m.json(&api, &["search", "--json", "--project", "web", "deploy"]);
    assert_eq!(ids(&only_web), vec!["deploy pipeline for web"]);
    let by_key = m.json(
        &api,
        &[
            "search",
            "--json",
            "--project",
            "github.com/acme/web",
            "deploy",
        ],
    );
    assert_eq!(ids(&by_key), ids(&only_web));

    let tools = m.json(&api, &["search", "--json", "--type", "tool_use", "deploy"]);
    assert_eq!(ids(&tools), vec!["Bash: deploy pipeline run"]);
    let summaries = m.json(&api, &["search", "--json", "--type", "summary", "deploy"]);
    assert_eq!(summaries.as_array().expect("array").len(), 1);
    assert_eq!(summaries[0]["type"], "summary");

    let limited = m.json(&api, &["search", "--json", "--limit", "2", "deploy"]);
    assert_eq!(limited.as_array().expect("array").len(), 2);

    // Age the api prompt by 10 days: since/until split the set.
    m.db()
        .execute("UPDATE observations SET created_at = created_at - 10*86400000 WHERE title = 'deploy pipeline for api'", [])
        .expect("age");
    let recent = m.json(
        &api,
        &[
            "search", "--json", "--since", "5d", "--type", "prompt", "deploy",
        ],
    );
    assert_eq!(ids(&recent), vec!["deploy pipeline for web"]);
    let old = m.json(&api, &["search", "--json", "--until", "5d", "deploy"]);
    assert_eq!(ids(&old), vec!["deploy pipeline for api"]);

    let mine = m.json(
        &api,
        &["search", "--json", "--machine", "test-machine", "deploy"],
    );
    assert_eq!(mine.as_array().expect("array").len(), 4, "by machine name");
    let id = mine[0]["machine_id"].as_str().expect("id").to_string();
    let by_id = m.json(&api, &["search", "--json", "--machine", &id, "deploy"]);
    assert_eq!(by_id.as_array().expect("array").len(), 4, "by machine id");
    let other = m.json(
        &api,
        &["search", "--json", "--machine", "desktop", "deploy"],
    );
    assert!(
        other.as_array().expect("array").is_empty(),
        "another machine wrote none"
    );

    let bad = m.run_in(&api, &["search", "--since", "yesterday", "deploy"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("7d"),
        "the error says what works"
    );
    let bad = m.run_in(&api, &["search", "--type", "decisions", "deploy"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("decision, memory, commit"),
        "the error lists the types: {bad:?}"
    );
}

#[test]
fn ranking_follows_relevance_and_the_weights() {
    let m = Edge::new("test-machine");
    let api = project(m.root.path(), "api", Some("git@github.com:acme/api.git"));
    let web = project(m.root.path(), "web", Some("git@github.com:acme/web.git"));
    // Same text in two projects: the current project ranks first (1.0 vs 0.4).
    seed(&m, &web, "w", &["cache invalidation strategy"]);
    seed(&m, &api, "a", &["cache invalidation strategy"]);
    let from_web = m.json(&web, &["search", "--json", "cache", "invalidation"]);
    assert_eq!(from_web[0]["project_name"], "web");
    let from_api = m.json(&api, &["search", "--json", "cache", "invalidation"]);
    assert_eq!(from_api[0]["project_name"], "api");
    assert!(from_api[0]["score"].as_f64() > from_api[1]["score"].as_f64());

    // Same project: last week beats last month beats older (1.0 > 0.8 > 0.6).
    seed(
        &m,
        &api,
        "b",
        &[
            "retry budget tuned",
            "retry budget raised",
            "retry budget lowered",
        ],
    );
    let db = m.db();
    db.execute("UPDATE observations SET created_at = created_at - 12*86400000 WHERE title = 'retry budget raised'", []).expect("age");
    db.execute("UPDATE observations SET created_at = created_at - 90*86400000 WHERE title = 'retry budget lowered'", []).expect("age");
    let hits = m.json(&api, &["search", "--json", "retry", "budget"]);
    assert_eq!(
        ids(&hits),
        vec![
            "retry budget tuned",
            "retry budget raised",
            "retry budget lowered"
        ]
    );

    // Matching every word beats matching some.
    seed(&m, &api, "c", &["token", "refresh token rotation"]);
    let hits = m.json(&api, &["search", "--json", "refresh", "token"]);
    assert_eq!(hits[0]["title"], "refresh token rotation");
    assert!(
        ids(&hits).contains(&"token".to_string()),
        "partial matches still listed"
    );

    // Identifiers are found as written.
    seed(&m, &api, "d", &["rename renew_jwt to refresh_session"]);
    let hits = m.json(&api, &["search", "--json", "renew_jwt"]);
    assert_eq!(hits[0]["title"], "rename renew_jwt to refresh_session");
}

#[test]
fn progressive_disclosure_index_timeline_show() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    m.hook("session-start", session_start("s", &p));
    for n in 0..12 {
        m.hook(
            "post-tool-use",
            tool(
                "s",
                &p,
                "Bash",
                json!({"command": format!("step {n}")}),
                json!({"stdout": format!("output of step {n}")}),
            ),
        );
    }
    m.hook("stop", stop("s", &p));
    let index = m.ok_in(&p, &["search", "step", "6"]);
    let first = index.lines().next().expect("a result line");
    assert!(
        first.starts_with("[O#") && first.contains("Bash: step 6") && first.contains("~"),
        "{first}"
    );
    let id = &first[3..39];

    let timeline = m.ok_in(&p, &["timeline", id, "--before", "2", "--after", "2"]);
    let shown: Vec<&str> = timeline
        .lines()
        .filter(|l| l.contains("Bash: step"))
        .collect();
    assert_eq!(shown.len(), 5, "{timeline}");
    assert!(
        shown[2].starts_with('>') && shown[2].contains("step 6"),
        "the anchor is marked: {timeline}"
    );
    assert!(
        timeline.contains("4 earlier event(s)") && timeline.contains("3 later event(s)"),
        "{timeline}"
    );

    let full = m.ok_in(&p, &["show", id]);
    assert!(
        full.contains("output of step 6") && full.contains("command: step 6"),
        "{full}"
    );
    let missing = m.run_in(&p, &["show", "0192f3e4-5b6c-7d8e-9f00-112233445566"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no record with id"));
    let garbage = m.run_in(&p, &["show", "nonsense"]);
    assert!(!garbage.status.success());
}

#[test]
fn an_identifier_repeated_in_many_newer_records_keeps_its_old_answer() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    // The answer, then more newer records with its error code than search reads
    // per term (200).
    seed(
        &m,
        &p,
        "a",
        &["E0506 in tiered_rebate: copy the amount out before assigning the total"],
    );
    let repeats: Vec<String> = (0..230)
        .map(|i| format!("cargo build {i} failed again with E0506 in crate{i}"))
        .collect();
    let repeats: Vec<&str> = repeats.iter().map(String::as_str).collect();
    seed(&m, &p, "b", &repeats);
    // Newer records with the detail word alone: without the error code, the answer
    // would only tie with them.
    seed(
        &m,
        &p,
        "c",
        &["tiered pricing idea one", "tiered pricing idea two"],
    );
    // `workaround` is in no record, so no record holds every word of the query.
    let hits = m.json(&p, &["search", "--json", "E0506 tiered workaround"]);
    assert_eq!(
        hits[0]["title"], "E0506 in tiered_rebate: copy the amount out before assigning the total",
        "{hits:#}"
    );
}

#[test]
fn a_path_is_found_by_any_part_of_it_before_and_after_the_daemon_indexes_its_pairs() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    seed(
        &m,
        &p,
        "a",
        &[
            "retry logic lives in src/quimo/ludalmo.rs now",
            "quimo and ludalmo are the two services we run",
        ],
    );
    let titles = |q: &str| ids(&m.json(&p, &["search", "--json", q]));
    let pairs_missing = || {
        m.db()
            .query_row(
                "SELECT count(*) FROM observations WHERE pairs IS NULL",
                [],
                |r| r.get::<_, i64>(0),
            )
            .expect("count")
    };
    let path = "retry logic lives in src/quimo/ludalmo.rs now";
    assert_eq!(pairs_missing(), 0, "written with their pairs");
    for q in ["src/quimo/ludalmo.rs", "ludalmo.rs", "quimo/ludalmo"] {
        assert_eq!(titles(q), [path], "{q}");
    }
    // A store upgraded from a version without pairs: its records have none until
    // the daemon gives them theirs, and search finds them by phrase meanwhile.
    m.db()
        .execute("UPDATE observations SET pairs = NULL", [])
        .expect("as before pairs");
    assert_eq!(titles("ludalmo.rs"), [path]);
    m.ok(&["serve", "--once"]);
    assert_eq!(pairs_missing(), 0, "the daemon indexed them");
    for q in ["src/quimo/ludalmo.rs", "ludalmo.rs", "quimo/ludalmo"] {
        assert_eq!(titles(q), [path], "{q}");
    }
    // The words alone still find both.
    assert_eq!(titles("quimo ludalmo").len(), 2);
}

#[test]
fn a_word_starting_a_line_of_a_command_output_is_found() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    // The agent sends the output as JSON; capture keeps it so, line breaks escaped.
    m.hook(
        "post-tool-use",
        tool(
            "a",
            &p,
            "Bash",
            json!({"command": "cargo test", "description": "Run the tests"}),
            json!({"stdout": "running 3 tests\nquimoflux failed in src/zenta/borro.rs\n\tvelunt: 3",
                   "stderr": "", "interrupted": false, "isImage": false}),
        ),
    );
    seed(
        &m,
        &p,
        "a",
        &["an unrelated prompt about quarterly reports"],
    );
    let titles = |q: &str| ids(&m.json(&p, &["search", "--json", q]));
    for q in ["quimoflux", "velunt", "zenta/borro.rs"] {
        assert_eq!(titles(q), ["Bash: cargo test — Run the tests"], "{q}");
    }
}

/// `solaria embed` on a machine with no model fails saying how to get one, and
/// changes nothing: the records are still found by words.
#[test]
fn embed_without_a_model_says_how_to_get_one_and_changes_nothing() {
    let m = Edge::new("test-machine");
    let p = m.project.clone();
    seed(&m, &p, "s1", &["rotate the refresh tokens on renewal"]);
    let out = m.run(&["embed"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("no embedding model in") && err.contains("solaria model install"),
        "{err}"
    );
    assert_eq!(m.search("refresh tokens").len(), 1);
}

#[test]
fn the_answer_ranks_above_to_do_lists_which_fold_into_one_line_and_each_hit_shows_its_words() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    let s = "s-fix";
    let file = p.join("src/auth/jwt.rs").display().to_string();
    m.hook(
        "post-tool-use",
        tool(
            s,
            &p,
            "Edit",
            json!({"file_path": file, "old_string": "fn renew(t: &Token)", "new_string": "fn renew_jwt(t: &RefreshToken) -> Result<Jwt> { rotate(t) }", "replace_all": false}),
            json!({"filePath": file}),
        ),
    );
    // The same task list, rewritten as the work goes on: every item names the fix.
    for open in 1..=4 {
        let todos: Vec<Value> = (1..=4)
            .map(|n| {
                json!({
                    "content": format!("renew_jwt step {n}: rotate the refresh token in renew_jwt"),
                    "status": if n <= open { "pending" } else { "completed" },
                    "activeForm": format!("Working on renew_jwt step {n}"),
                })
            })
            .collect();
        m.hook(
            "post-tool-use",
            tool(
                s,
                &p,
                "TodoWrite",
                json!({"todos": todos}),
                json!({"ok": true}),
            ),
        );
    }
    let v = m.json(&p, &["search", "renew_jwt", "--json"]);
    let hits = v.as_array().expect("hits");
    let titles = ids(&v);
    assert!(titles[0].starts_with("Edit"), "the edit first: {titles:?}");
    let to_do: Vec<&Value> = hits
        .iter()
        .filter(|h| {
            h["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("TodoWrite"))
        })
        .collect();
    assert_eq!(to_do.len(), 1, "one line for the list: {titles:?}");
    assert_eq!(to_do[0]["alike"], 3, "{}", to_do[0]);
    for h in hits {
        let snippet = h["snippet"].as_str().unwrap_or_default();
        assert!(snippet.contains("**renew_jwt**"), "{h}");
        assert!(
            !snippet.contains("\":") && !snippet.contains("\\n"),
            "what the call says, not its JSON: {snippet}"
        );
        assert_eq!(h["author"]["machine"], "test-machine", "{h}");
    }
    let text = m.ok_in(&p, &["search", "renew_jwt"]);
    assert!(text.contains("(+3 alike)"), "{text}");
    assert!(
        text.contains("fn **renew_jwt**(t: &RefreshToken)"),
        "{text}"
    );
}

/// A decision's snippet reads its fields apart (title, choice, reason, the
/// options set aside); a memory's and a prompt's say their text once, not their
/// title again.
#[test]
fn a_hit_reads_its_fields_apart_and_says_its_text_once() {
    let m = Edge::new("test-machine");
    let p = m.project.clone();
    m.ok_in(
        &p,
        &[
            "decide",
            "--title",
            "Ledger in PostgreSQL",
            "--chosen",
            "PostgreSQL",
            "-a",
            "MongoDB",
            "-r",
            "transactions across accounts",
        ],
    );
    m.ok_in(
        &p,
        &["remember", "the staging database is reset every Monday"],
    );
    let snippet_of = |query: &str| {
        let v = m.json(&p, &["search", query, "--json"]);
        assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
        v[0]["snippet"].as_str().expect("a snippet").to_string()
    };
    let decision = snippet_of("ledger mongodb");
    assert!(
        decision.contains(
            "**Ledger** in PostgreSQL · PostgreSQL · transactions across accounts · **MongoDB**"
        ),
        "{decision}"
    );
    let memory = snippet_of("staging");
    assert_eq!(memory.matches("**staging**").count(), 1, "{memory}");
    // A prompt's title is its text: said once too.
    m.prompt("s1", "why does the websocket reconnect loop drop messages");
    let prompt = snippet_of("websocket");
    assert_eq!(prompt.matches("**websocket**").count(), 1, "{prompt}");
}
