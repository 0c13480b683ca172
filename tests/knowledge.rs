//! Knowledge memory through the real binaries: decisions and memories recorded by
//! an agent (MCP) or a person (CLI), superseded never overwritten, linked both
//! ways, grouped in iterations, found by `why` on another machine after a sync
//! (real PostgreSQL behind TLS), with secrets and private spans kept out of it.

use serde_json::{Value, json};
use solaria_tests::central::Central;
use solaria_tests::edge::Edge;
use solaria_tests::git::{commit_all, git, long_history, repository};
use solaria_tests::mcp::McpStdio;

const SECRET: &str = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";

/// The decision id in a `Recorded [D#…] …` answer.
fn cited_id(text: &str, letter: char) -> String {
    let start = text
        .find(&format!("[{letter}#"))
        .unwrap_or_else(|| panic!("no [{letter}#…] in {text}"))
        + 3;
    let end = text[start..].find(']').expect("closing bracket") + start;
    text[start..end].to_string()
}

fn decide(edge: &Edge, args: &[&str]) -> Value {
    let mut all = vec!["decide", "--json"];
    all.extend_from_slice(args);
    edge.json(&edge.project, &all)
}

/// The records `solaria review --json` lists as changed since, by id.
fn review_ids(review: &Value) -> Vec<String> {
    review["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["record"]["id"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_an_agent_logs_on_one_machine_answers_why_on_the_other() {
    let (c, acct) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    laptop.enroll(&c, acct).await;
    desktop.enroll(&c, acct).await;

    let mut mcp = McpStdio::start(&laptop);
    mcp.initialize("claude-code");
    let answer = mcp.ok(
        "memory_log_decision",
        json!({
            "title": "No ORM for the billing tables",
            "context": "Billing queries need window functions <private>client is Initech</private>",
            "chosen": "Plain SQL with sqlx and compile-time checked queries",
            "alternatives": ["Diesel", "SeaORM"],
            "rationale": format!("An ORM hides the window functions we rely on; token {SECRET} was in the paste"),
            "impact": "high",
            "tags": ["billing", "database"]
        }),
    );
    assert!(answer.contains("\nRecorded [D#"), "{answer}");
    let id = cited_id(&answer, 'D');
    // The commit that implements it, named by its trailer (short id).
    let short = id.replace('-', "");
    let short = &short[short.len() - 12..];
    let logged = mcp.ok(
        "memory_log_commit",
        json!({
            "sha": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
            "message": format!("Query billing with sqlx\n\nDecision: D#{short}\n")
        }),
    );
    assert!(logged.contains("[C#a1b2c3d]"), "{logged}");
    let tools = mcp.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for tool in [
        "memory_log_decision",
        "memory_log_commit",
        "memory_remember",
        "memory_supersede",
        "memory_link",
        "memory_decisions",
        "memory_why",
        "memory_get_iteration",
        "memory_start_iteration",
        "memory_complete_iteration",
    ] {
        assert!(names.contains(&tool), "{tool} offered: {names:?}");
    }
    mcp.close();

    // No secret reaches this machine's file; the private span stays here only.
    let bytes = laptop.store_bytes();
    assert!(
        !String::from_utf8_lossy(&bytes).contains(SECRET),
        "the secret was redacted before the write"
    );

    laptop.ok(&["sync"]);
    let out = desktop.ok(&["sync"]);
    assert!(out.contains("pulled"), "{out}");

    let why = desktop.ok(&["why", "ORM", "billing"]);
    assert!(why.contains(&format!("[D#{id}]")), "{why}");
    assert!(
        why.contains("An ORM hides the window functions"),
        "rationale: {why}"
    );
    assert!(why.contains("Diesel; SeaORM"), "alternatives: {why}");
    assert!(why.contains("@laptop"), "the machine it came from: {why}");
    assert!(
        why.contains("implemented by [C#a1b2c3d] Query billing with sqlx"),
        "which commit implemented it, on the other machine: {why}"
    );
    assert!(
        !why.contains("Initech"),
        "the private span stayed home: {why}"
    );

    // PostgreSQL holds neither the secret nor the private span.
    let stored: Vec<String> = sqlx::query_scalar("SELECT body::text FROM memory_knowledge")
        .fetch_all(c.storage.pool())
        .await
        .expect("rows");
    assert_eq!(stored.len(), 2, "the decision and its commit: {stored:?}");
    assert!(
        stored
            .iter()
            .all(|b| !b.contains(SECRET) && !b.contains("Initech")),
        "{stored:?}"
    );
    assert!(
        stored.iter().any(|b| b.contains("window functions")),
        "{stored:?}"
    );

    // The agent on the desktop gets the same answer through MCP, cited.
    let mut mcp = McpStdio::start(&desktop);
    mcp.initialize("claude-code");
    let text = mcp.ok("memory_why", json!({"query": "why no ORM"}));
    assert!(
        text.contains(&format!("[D#{id}]")) && text.contains("rationale:"),
        "{text}"
    );
    let list = mcp.ok("memory_decisions", json!({}));
    assert!(list.contains("No ORM for the billing tables"), "{list}");
    mcp.close();
    c.stop().await;
}

#[test]
fn superseding_keeps_the_old_version_readable_and_out_of_the_way() {
    let edge = Edge::new("laptop");
    let first = decide(
        &edge,
        &[
            "--title",
            "Offset pagination",
            "--chosen",
            "LIMIT/OFFSET",
            "--rationale",
            "simplest",
        ],
    );
    let old = first["record"]["id"].as_str().expect("id").to_string();
    let out = edge.ok(&[
        "supersede",
        &format!("D#{old}"),
        "--title",
        "Keyset pagination",
        "--chosen",
        "WHERE id > last_seen ORDER BY id",
        "--rationale",
        "offset scans grow with the page number",
        "-a",
        "LIMIT/OFFSET",
    ]);
    assert!(out.contains("Recorded [D#"), "{out}");
    assert!(
        out.contains("[superseded]"),
        "the old version is shown as set aside: {out}"
    );

    let standing = edge.ok(&["decisions"]);
    assert!(standing.contains("Keyset pagination"), "{standing}");
    assert!(!standing.contains("Offset pagination"), "{standing}");
    let all = edge.ok(&["decisions", "--all"]);
    assert!(
        all.contains("Offset pagination") && all.contains("[superseded]"),
        "{all}"
    );

    // The old version is still readable in full, pointing to its successor.
    let shown = edge.ok(&["show", &format!("[D#{old}]")]);
    assert!(shown.contains("rationale: simplest"), "{shown}");
    assert!(shown.contains("superseded by: [D#"), "{shown}");
    // `why` puts the standing decision first.
    let why = edge.ok(&["why", "pagination"]);
    let keyset = why.find("Keyset pagination").expect("standing one");
    let offset = why.find("Offset pagination").unwrap_or(usize::MAX);
    assert!(keyset < offset, "{why}");
    // Superseding what is already superseded is refused, clearly.
    let again = edge.run(&["supersede", &old, "--title", "x", "--chosen", "y"]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("superseded already"),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_machines_superseding_the_same_decision_converge_with_a_conflict() {
    let (c, acct) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    laptop.enroll(&c, acct).await;
    desktop.enroll(&c, acct).await;
    let d = decide(&laptop, &["--title", "Cache", "--chosen", "none"]);
    let old = d["record"]["id"].as_str().expect("id").to_string();
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);

    // Both supersede it before either syncs; the laptop's edit is the later one
    // and reaches central first, so the desktop's loses when it arrives.
    desktop.ok(&[
        "supersede",
        &old,
        "--title",
        "Cache",
        "--chosen",
        "in-process LRU",
    ]);
    // The laptop's clock a little ahead: its edit is the later one, whatever the
    // scheduler does between the two commands.
    laptop.ok_ahead(&["supersede", &old, "--title", "Cache", "--chosen", "Redis"]);
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);
    laptop.ok(&["sync"]);

    let successor = |e: &Edge| {
        e.json(&e.project, &["show", "--json", &old])[0]["body"]["superseded_by"]
            .as_str()
            .expect("superseded_by")
            .to_string()
    };
    assert_eq!(
        successor(&laptop),
        successor(&desktop),
        "one winner everywhere"
    );
    let conflicts = desktop.ok(&["conflicts"]);
    assert!(
        conflicts.contains(&old) && conflicts.contains("knowledge"),
        "the losing edit is kept as a conflict: {conflicts}"
    );
    // Both new versions exist and are readable on both machines.
    for e in [&laptop, &desktop] {
        let all = e.ok(&["decisions", "--all"]);
        assert!(
            all.contains("Redis") && all.contains("in-process LRU"),
            "{all}"
        );
    }
    c.stop().await;
}

#[test]
fn unsure_memories_are_open_questions_and_links_read_both_ways() {
    let edge = Edge::new("laptop");
    let question = edge.json(
        &edge.project,
        &[
            "remember",
            "--json",
            "-c",
            "0.3",
            "the team may prefer tabs",
        ],
    );
    assert_eq!(question["record"]["body"]["confidence"], 0.3);
    edge.ok(&[
        "remember",
        "-c",
        "0.7",
        "-t",
        "preference",
        "likes small commits",
    ]);
    let stated = edge.json(
        &edge.project,
        &[
            "remember",
            "--json",
            "-t",
            "principle",
            "never break the hook contract",
        ],
    );
    let m = stated["record"]["id"].as_str().expect("id").to_string();

    let questions = edge.ok(&["questions"]);
    assert!(
        questions.contains("may prefer tabs") && questions.contains("open question"),
        "{questions}"
    );
    assert!(!questions.contains("small commits"), "{questions}");
    let unconfirmed = edge.ok(&["memories", "--unconfirmed"]);
    assert!(
        unconfirmed.contains("likes small commits") && unconfirmed.contains("to validate"),
        "{unconfirmed}"
    );
    assert!(!unconfirmed.contains("hook contract"), "{unconfirmed}");
    let principles = edge.ok(&["memories", "--type", "principle"]);
    assert!(principles.contains("hook contract"), "{principles}");
    assert!(!principles.contains("small commits"), "{principles}");
    let inferred_preferences = edge.ok(&["memories", "--unconfirmed", "-t", "preference"]);
    assert!(
        inferred_preferences.contains("small commits"),
        "{inferred_preferences}"
    );
    assert!(
        edge.ok(&["memories", "--unconfirmed", "-t", "principle"])
            .contains("No memories")
    );

    let d = decide(
        &edge,
        &["--title", "Hooks exit 0", "--chosen", "swallow every error"],
    );
    let d = d["record"]["id"].as_str().expect("id").to_string();
    edge.ok(&["link", &format!("[M#{m}]"), "supports", &format!("D#{d}")]);
    // Twice is one link.
    edge.ok(&["link", &m, "supports", &d]);
    assert_eq!(
        edge.count("SELECT count(*) FROM knowledge WHERE kind = 'link'"),
        1
    );
    let from_decision = edge.ok(&["show", &d]);
    assert!(
        from_decision.contains(&format!("supports (by) [M#{m}]")),
        "{from_decision}"
    );
    let from_memory = edge.ok(&["show", &m]);
    assert!(
        from_memory.contains(&format!("supports [D#{d}]")),
        "{from_memory}"
    );

    // Bad input: a clear error, nothing written.
    let before = edge.count("SELECT count(*) FROM knowledge");
    let bad = edge.run(&["remember", "-c", "1.5", "x"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("0.0 to 1.0"),
        "{bad:?}"
    );
    let no_choice = edge.run(&["decide", "--title", "Something"]);
    assert!(!no_choice.status.success());
    assert!(
        String::from_utf8_lossy(&no_choice.stderr).contains("`chosen` is required"),
        "{no_choice:?}"
    );
    assert_eq!(edge.count("SELECT count(*) FROM knowledge"), before);
}

#[test]
fn iterations_group_decisions_and_a_branch_starts_one() {
    let edge = Edge::new("laptop");
    let started = edge.json(
        &edge.project,
        &["iteration", "start", "--json", "-k", "fix", "Login", "loop"],
    );
    let i = started["record"]["id"].as_str().expect("id").to_string();
    edge.prompt("s1", "the login page loops forever");
    let retry = decide(&edge, &["--title", "Retry once", "--chosen", "one retry"]);
    let retry = retry["record"]["id"].as_str().expect("id").to_string();
    // Recorded while the agent's session was open: its timeline shows it.
    let timeline = edge.ok(&["timeline", &format!("[D#{retry}]")]);
    assert!(
        timeline.contains("the login page loops forever"),
        "{timeline}"
    );
    assert!(
        timeline.contains("recorded in this session:") && timeline.contains("decision: Retry once"),
        "{timeline}"
    );
    let only = edge.ok(&["timeline", "--type", "decision", &retry]);
    assert!(
        !only.contains("loops forever") && only.contains("Retry once"),
        "{only}"
    );
    let shown = edge.ok(&["iteration", "show"]);
    assert!(
        shown.contains("sessions (1): [S#"),
        "its session belongs to it by time: {shown}"
    );
    assert!(
        shown.contains(&format!("[I#{i}]")) && shown.contains("iteration (fix): Login loop"),
        "{shown}"
    );
    assert!(shown.contains("decision: Retry once"), "{shown}");
    assert!(shown.contains("event: started"), "{shown}");
    edge.ok(&["iteration", "complete", "--note", "fixed"]);
    let done = edge.ok(&["iteration", "show", &i]);
    assert!(
        done.contains("[completed]") && done.contains("event: completed fixed"),
        "{done}"
    );

    // No active iteration, on a feature branch: the branch's iteration holds the decision.
    std::fs::write(
        edge.project.join(".git/HEAD"),
        "ref: refs/heads/feat/keyset\n",
    )
    .expect("HEAD");
    decide(
        &edge,
        &["--title", "Cursor format", "--chosen", "base64 id"],
    );
    let inferred = edge.ok(&["iteration", "show"]);
    assert!(
        inferred.contains("iteration (feature): feat/keyset"),
        "{inferred}"
    );
    assert!(inferred.contains("Cursor format"), "{inferred}");
    // The same branch on another decision: the same iteration, not a new one.
    decide(&edge, &["--title", "Page size", "--chosen", "50"]);
    assert_eq!(
        edge.count("SELECT count(*) FROM knowledge WHERE kind = 'iteration'"),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_upgraded_from_the_first_release_reads_the_knowledge_it_was_not_sent() {
    let (c, acct) = Central::tls_with_account().await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    laptop.enroll(&c, acct).await;
    desktop.enroll(&c, acct).await;
    laptop.prompt("s1", "pick a queue");
    let d = decide(
        &laptop,
        &["--title", "Queue", "--chosen", "PostgreSQL SKIP LOCKED"],
    );
    let id = d["record"]["id"].as_str().expect("id").to_string();
    laptop.ok(&["sync"]);

    // What an edge of the first release saw: the feed without knowledge, its cursor
    // past the decision, no record of having asked for knowledge.
    desktop.ok(&["sync"]);
    let db = desktop.db();
    db.execute("DELETE FROM knowledge", [])
        .expect("as before the upgrade");
    db.execute("DELETE FROM sync_state WHERE key = 'feed_types'", [])
        .expect("state");
    drop(db);
    assert!(desktop.ok(&["decisions"]).contains("No decisions"));

    desktop.ok(&["sync"]);
    let after = desktop.ok(&["decisions"]);
    assert!(
        after.contains(&format!("[D#{id}]")),
        "re-read once after the upgrade: {after}"
    );
    c.stop().await;
}

#[test]
fn memories_live_as_long_as_their_type_and_an_expired_one_leaves_search_but_stays_readable() {
    let edge = Edge::new("laptop");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    let remember = |args: &[&str]| -> Value {
        let mut all = vec!["remember", "--json"];
        all.extend_from_slice(args);
        edge.json(&edge.project, &all)["record"].clone()
    };
    let days = |v: &Value| (v["body"]["expires_at"].as_i64().expect("expires") - now) / 86_400_000;
    let moment = remember(&["-t", "moment", "shipped the first beta today"]);
    assert!((29..=30).contains(&days(&moment)), "{moment}");
    let fact = remember(&["-t", "fact", "staging runs on two small VMs"]);
    assert!((179..=180).contains(&days(&fact)), "{fact}");
    let pref = remember(&["-t", "preference", "answers in Spanish"]);
    assert!(
        pref["body"]["expires_at"].is_null(),
        "preferences never expire: {pref}"
    );
    let kept = remember(&["-t", "fact", "--expires", "never", "the repo is a monorepo"]);
    assert!(kept["body"]["expires_at"].is_null(), "{kept}");

    let old = remember(&[
        "-t",
        "fact",
        "--expires",
        "2020-01-01",
        "the zeppelin cluster is in eu-west-1",
    ]);
    let id = old["id"].as_str().expect("id").to_string();
    assert!(
        edge.search("zeppelin").is_empty(),
        "an expired memory leaves search"
    );
    assert!(!edge.ok(&["memories"]).contains("zeppelin"));
    assert!(
        edge.ok(&["memories", "--all"]).contains("zeppelin"),
        "the audit trail keeps it"
    );
    assert!(edge.ok(&["show", &id]).contains("expires: 2020-01-01"));
    assert!(
        edge.ok(&["recall", "where is the zeppelin cluster"])
            .contains("Nothing would be added")
    );
    assert!(!edge.ok(&["context"]).contains("zeppelin"));
}

#[test]
fn confirming_a_proposed_memory_makes_it_stand_at_full_confidence() {
    let edge = Edge::new("laptop");
    let proposed = edge.json(
        &edge.project,
        &[
            "remember",
            "--json",
            "-t",
            "preference",
            "-c",
            "0.6",
            "--tag",
            "summarizer",
            "(proposed by the summarizer) run the migrations before the deploy",
        ],
    );
    let id = proposed["record"]["id"].as_str().expect("id").to_string();
    let unconfirmed = edge.ok(&["memories", "--unconfirmed"]);
    assert!(unconfirmed.contains(&id[id.len() - 12..]), "{unconfirmed}");

    let out = edge.json(&edge.project, &["confirm", "--json", &id]);
    let confirmed = out["record"]["id"].as_str().expect("id").to_string();
    assert_ne!(confirmed, id, "a new version, the old one kept");
    let unconfirmed = edge.ok(&["memories", "--unconfirmed"]);
    assert!(!unconfirmed.contains("run the migrations"), "{unconfirmed}");
    let listed = edge.ok(&["memories"]);
    assert!(
        listed.contains("run the migrations before the deploy")
            && !listed.contains("proposed by the summarizer"),
        "{listed}"
    );
    let row = edge.strings(&format!(
        "SELECT json_extract(body, '$.confidence') || ' ' || json_extract(body, '$.tags')
         FROM knowledge WHERE id = '{confirmed}'"
    ));
    assert_eq!(row, ["1.0 []"], "full confidence, no proposal tag");
    let old = edge.strings(&format!("SELECT status FROM knowledge WHERE id = '{id}'"));
    assert_eq!(old, ["superseded"]);

    // Edited while confirmed; and a decision is not a memory.
    let again = edge.json(
        &edge.project,
        &[
            "confirm",
            "--json",
            &confirmed,
            "--content",
            "run migrations first",
        ],
    );
    assert_eq!(
        again["record"]["body"]["content"], "run migrations first",
        "{again}"
    );
    // A decision is confirmed as it stands: changing its text is superseding it.
    let d = edge.decide_no_orm();
    let refused = edge.run(&["confirm", &d, "--content", "something else"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("to change what it says, supersede it"),
        "{refused:?}"
    );
    let held = edge.json(&edge.project, &["confirm", "--json", &d]);
    assert_eq!(held["record"]["body"]["status"], "active", "{held}");
    assert!(
        held["record"]["body"]["anchors"]["confirmed_at"].is_number(),
        "{held}"
    );
}

#[test]
fn a_decision_about_a_file_says_when_that_file_changed_until_a_person_confirms_it() {
    let edge = Edge::new("laptop");
    let repo = repository(&edge);
    std::fs::create_dir_all(repo.join("src/auth")).expect("dirs");
    let write = |path: &str, text: &str| std::fs::write(repo.join(path), text).expect("write");
    let commit = |message: &str| commit_all(&edge, &repo, message);
    write("src/auth/jwt.rs", "pub fn verify() {}\n");
    write("src/lib.rs", "pub mod auth;\n");
    commit("Start");
    // A session here tells the daemon where the project's repository is.
    edge.hook(
        "session-start",
        solaria_tests::payloads::session_start("s1", &repo),
    );
    let written = edge.json(
        &repo.join("src"),
        &[
            "decide",
            "--json",
            "--title",
            "Access tokens are short-lived JWTs",
            "--chosen",
            "15-minute JWTs with rotating refresh tokens",
            "--file",
            "auth/jwt.rs",
            "--symbol",
            "verify",
        ],
    );
    let id = written["record"]["id"].as_str().expect("id").to_string();
    let anchors = &written["record"]["body"]["anchors"];
    assert_eq!(anchors["files"], json!(["src/auth/jwt.rs"]), "{written}");
    assert_eq!(anchors["symbols"], json!(["verify"]), "{written}");
    let outside = edge.run_in(
        &repo,
        &[
            "decide",
            "--title",
            "t",
            "--chosen",
            "c",
            "--file",
            "../elsewhere.rs",
        ],
    );
    assert!(!outside.status.success());
    assert!(
        String::from_utf8_lossy(&outside.stderr).contains("outside the repository"),
        "{outside:?}"
    );

    // The commit that implements it (its trailer names it), then one elsewhere:
    // neither is news.
    let short = id.replace('-', "");
    write("src/auth/jwt.rs", "pub fn verify() { /* 15 minutes */ }\n");
    commit(&format!(
        "Short-lived tokens\n\nDecision: D#{}",
        &short[short.len() - 12..]
    ));
    write("src/lib.rs", "pub mod auth;\npub mod billing;\n");
    commit("Add billing");
    edge.ok_in(&repo, &["commits", "import"]);
    edge.ok(&["serve", "--once"]);
    let context_now = |session: &str| {
        let start = edge.hook(
            "session-start",
            solaria_tests::payloads::session_start(session, &repo),
        );
        String::from_utf8_lossy(&start.stdout).into_owned()
    };
    let fresh = context_now("s2");
    assert!(
        fresh.contains("Access tokens are short-lived JWTs"),
        "{fresh}"
    );
    assert!(!fresh.contains("changed since"), "{fresh}");
    // Two memories anchored by the path their text names.
    let remember = |text: &str| {
        let written = edge.json(&repo, &["remember", "--json", "-t", "fact", text]);
        assert_eq!(
            written["record"]["body"]["anchors"]["files"],
            json!(["src/auth/jwt.rs"]),
            "{written}"
        );
        written["record"]["id"].as_str().expect("id").to_string()
    };
    let wrong = remember("refresh tokens are checked in src/auth/jwt.rs");
    let holds = remember("src/auth/jwt.rs must never log a token");

    // A later change to the file is.
    write("src/auth/jwt.rs", "pub fn verify() { /* sessions */ }\n");
    let later = commit("Replace refresh flow");
    edge.ok(&["serve", "--once"]);
    let said = format!(
        "changed since: src/auth/jwt.rs changed in 1 commit since, latest {} \\\"Replace refresh flow\\\"",
        &later[..7]
    );
    let stale = context_now("s3");
    assert!(stale.contains(&said), "{said} in {stale}");
    let why = edge.ok_in(&repo, &["why", "access tokens"]);
    assert!(
        why.contains("changed since: src/auth/jwt.rs changed in 1 commit"),
        "{why}"
    );
    assert!(why.contains("files: src/auth/jwt.rs"), "{why}");
    let why = edge.ok_in(&repo, &["why", "never log a token"]);
    assert!(why.contains("changed since: src/auth/jwt.rs"), "{why}");

    // Deleted, it says so; `review` lists it with what to do.
    git(&edge, &repo, &["rm", "-q", "src/auth/jwt.rs"]);
    let removal = commit("Drop the JWT module");
    let review = edge.ok_in(&repo, &["review"]);
    assert!(
        review.contains("To review in github.com/acme/api: 3 record(s)"),
        "{review}"
    );
    assert!(
        review.contains(&format!("src/auth/jwt.rs deleted in {}", &removal[..7])),
        "{review}"
    );
    assert!(
        review.contains(&format!("solaria confirm {}", &short[short.len() - 12..])),
        "{review}"
    );

    // Forgotten, its mark goes with it; confirmed, each is anchored at HEAD (the
    // memory's new version too, though its file is gone): nothing to review,
    // nothing said.
    let marks = || edge.strings("SELECT knowledge_id FROM staleness ORDER BY 1");
    assert_eq!(marks().len(), 3, "{:?}", marks());
    edge.ok(&["forget", &wrong]);
    assert!(!marks().contains(&wrong), "{:?}", marks());
    assert_eq!(marks().len(), 2, "{:?}", marks());
    edge.ok_in(&repo, &["confirm", &holds]);
    edge.ok_in(&repo, &["confirm", &id]);
    let review = edge.ok_in(&repo, &["review"]);
    assert!(review.contains("Nothing to review"), "{review}");
    edge.ok(&["serve", "--once"]);
    let clear = context_now("s4");
    assert!(
        clear.contains("Access tokens are short-lived JWTs"),
        "{clear}"
    );
    assert!(!clear.contains("changed since"), "{clear}");
}

#[test]
fn a_session_in_a_worktree_gets_its_repository_s_memory_without_a_remote_too() {
    let edge = Edge::new("laptop");
    let repo = edge.root.path().join("work/tool");
    std::fs::create_dir_all(&repo).expect("repo dir");
    git(&edge, &repo, &["init", "-q", "-b", "main"]);
    git(&edge, &repo, &["config", "user.name", "Ada Lovelace"]);
    git(&edge, &repo, &["config", "user.email", "ada@example.com"]);
    git(
        &edge,
        &repo,
        &["commit", "-q", "--allow-empty", "-m", "start"],
    );
    edge.ok_in(
        &repo,
        &[
            "decide",
            "--title",
            "Flags are parsed with clap",
            "--chosen",
            "clap's derive API",
            "--rationale",
            "help texts stay beside the fields",
        ],
    );
    git(
        &edge,
        &repo,
        &["worktree", "add", "-q", "../tool-fix", "-b", "fix"],
    );
    let worktree = edge.root.path().join("work/tool-fix");

    let start = edge.hook(
        "session-start",
        solaria_tests::payloads::session_start("w1", &worktree),
    );
    let context = String::from_utf8_lossy(&start.stdout);
    assert!(context.contains("Flags are parsed with clap"), "{start:?}");
    assert!(
        edge.ok_in(&worktree, &["why", "clap"])
            .contains("Flags are parsed with clap")
    );

    // Each event notes the branch it happened on: the worktree's own.
    edge.hook(
        "user-prompt-submit",
        solaria_tests::payloads::prompt("w1", &worktree, "bump clap in the fix branch"),
    );
    edge.hook(
        "user-prompt-submit",
        solaria_tests::payloads::prompt("m1", &repo, "release notes for main"),
    );
    assert_eq!(
        edge.strings(
            "SELECT json_extract(metadata, '$.branch') FROM observations \
             WHERE kind = 'prompt' ORDER BY created_at, rowid"
        ),
        ["fix", "main"]
    );

    // A branch's context brings its own sessions forward: two sessions a context
    // here, three newer ones on main.
    edge.write_config("[context]\nmax_sessions = 2\n");
    for (n, session) in ["m2", "m3"].iter().enumerate() {
        let text = format!("main work, part {n}");
        edge.hook(
            "user-prompt-submit",
            solaria_tests::payloads::prompt(session, &repo, &text),
        );
    }
    let context_in = |dir: &std::path::Path, session: &str| {
        let start = edge.hook(
            "session-start",
            solaria_tests::payloads::session_start(session, dir),
        );
        String::from_utf8_lossy(&start.stdout).into_owned()
    };
    let on_fix = context_in(&worktree, "w2");
    assert!(on_fix.contains("bump clap in the fix branch"), "{on_fix}");
    let on_main = context_in(&repo, "m4");
    assert!(!on_main.contains("bump clap"), "{on_main}");
    assert!(on_main.contains("main work, part 1"), "{on_main}");

    // The worktree gone, what was written in it stays the repository's.
    edge.ok_in(
        &worktree,
        &["remember", "-t", "fact", "the fix branch pins clap 4.5"],
    );
    git(
        &edge,
        &repo,
        &["worktree", "remove", "--force", "../tool-fix"],
    );
    assert!(
        edge.ok_in(&repo, &["why", "clap"])
            .contains("pins clap 4.5")
    );
}

#[test]
fn anchors_in_odd_repositories_say_what_they_can_and_never_lose_the_record() {
    let edge = Edge::new("laptop");
    let repo = repository(&edge);
    let commit = |dir: &std::path::Path, message: &str| commit_all(&edge, dir, message);
    let decide_about = |dir: &std::path::Path, title: &str, file: &str| {
        let written = edge.json(
            dir,
            &[
                "decide", "--json", "--title", title, "--chosen", "it", "--file", file,
            ],
        );
        written["record"]["body"]["anchors"].clone()
    };

    // A repository with no commit yet: the record keeps its file, nothing is news.
    let anchors = decide_about(&repo, "Flags live in src/flags.rs", "src/flags.rs");
    assert_eq!(anchors["files"], json!(["src/flags.rs"]), "{anchors}");
    assert_eq!(anchors["head"], json!(""), "no HEAD to be at: {anchors}");
    let review = edge.ok_in(&repo, &["review"]);
    assert!(review.contains("Nothing to review"), "{review}");

    // A file named like a git option is a file: git is never handed it.
    std::fs::write(repo.join("--output=x"), "one\n").expect("write");
    commit(&repo, "Start");
    let review = edge.ok_in(&repo, &["review"]);
    assert!(
        review.contains("src/flags.rs no longer exists"),
        "never confirmed, a file not in the repository is said: {review}"
    );
    decide_about(&repo, "The odd file stays", "./--output=x");
    std::fs::write(repo.join("--output=x"), "two\n").expect("write");
    let changed = commit(&repo, "Change the odd file");
    let review = edge.ok_in(&repo, &["review"]);
    assert!(
        review.contains(&format!(
            "--output=x changed in 1 commit since, latest {}",
            &changed[..7]
        )),
        "{review}"
    );
    assert!(
        !repo.join("x").exists(),
        "git wrote no file named by the record"
    );

    // A shallow clone is read as far as it goes.
    let shallow = edge.root.path().join("work/shallow");
    let url = format!("file://{}", repo.display());
    git(
        &edge,
        edge.root.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().expect("utf8"),
        ],
    );
    git(&edge, &shallow, &["config", "user.name", "Ada Lovelace"]);
    git(
        &edge,
        &shallow,
        &["config", "user.email", "ada@example.com"],
    );
    git(
        &edge,
        &shallow,
        &["remote", "set-url", "origin", "git@github.com:acme/api.git"],
    );
    std::fs::write(shallow.join("--output=x"), "three\n").expect("write");
    let in_shallow = commit(&shallow, "Change it in the clone");
    let review = edge.ok_in(&shallow, &["review"]);
    assert!(
        review.contains(&format!("latest {}", &in_shallow[..7])),
        "{review}"
    );

    // Without git, review says why and the record is untouched.
    let out = edge
        .cmd_in(&repo)
        .env("PATH", edge.root.path().join("no-bin"))
        .args(["review"])
        .output()
        .expect("run solaria");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot run `git`"), "{err}");
    assert!(
        edge.ok_in(&repo, &["why", "odd file"])
            .contains("The odd file stays")
    );
}

/// Contradictions proposed, never silent: a decision close in subject to a standing
/// one is shown beside it with the three things a person can do, to a person at the
/// command line and to an agent through MCP; nothing changes until one of them
/// acts, `review` and the viewer's lists keep the pair until then, and each way of
/// settling it works once.
#[test]
fn a_decision_close_to_a_standing_one_is_proposed_as_a_pair_and_nothing_changes_until_someone_chooses()
 {
    let edge = Edge::new("laptop");
    let repo = repository(&edge);
    std::fs::write(repo.join("README.md"), "sessions\n").expect("write");
    commit_all(&edge, &repo, "Start");
    let decide_here = |args: &[&str]| -> Value {
        let mut all = vec!["decide", "--json"];
        all.extend_from_slice(args);
        edge.json(&repo, &all)
    };
    let short = |id: &str| id.replace('-', "")[20..].to_string();
    let redis = decide_here(&[
        "--title",
        "Store sessions in Redis",
        "--chosen",
        "Redis with a 24h TTL",
        "-a",
        "PostgreSQL table",
        "-r",
        "Expiry comes free",
        "--context",
        "Where web sessions live",
    ]);
    let redis_id = redis["record"]["id"].as_str().expect("id").to_string();
    assert!(
        redis.get("close").is_none(),
        "nothing to set it beside: {redis}"
    );
    let uploads = decide_here(&[
        "--title",
        "Store uploads in S3",
        "--chosen",
        "One S3 bucket per environment",
        "-r",
        "Cheap and durable",
    ]);
    assert!(uploads.get("close").is_none(), "another subject: {uploads}");

    // The decision that turns the first around names the option it set aside.
    let out = edge.ok_in(
        &repo,
        &[
            "decide",
            "--title",
            "Store sessions in PostgreSQL",
            "--chosen",
            "A sessions table in PostgreSQL",
            "-a",
            "Redis",
            "-r",
            "Sessions were lost on every Redis restart; one database to run",
        ],
    );
    let pg_id = cited_id(&out, 'D');
    let (pg, old) = (short(&pg_id), short(&redis_id));
    assert!(
        out.contains("close to it in subject; nothing changed"),
        "{out}"
    );
    assert!(
        out.contains(&format!("solaria supersede {old} --by {pg}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("solaria keep-both {pg} {old}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("solaria link {pg} related {old}")),
        "{out}"
    );
    assert!(
        !out.contains("Store uploads in S3"),
        "only the close one: {out}"
    );
    // Nothing was superseded: both stand.
    let standing = edge.standing_decisions(&repo);
    assert!(
        standing.contains(&redis_id) && standing.contains(&pg_id),
        "{standing:?}"
    );
    let review = edge.json(&repo, &["review", "--json"]);
    let pairs = review["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), 1, "{review}");
    assert_eq!(pairs[0]["record"]["id"], pg_id.as_str());
    assert_eq!(pairs[0]["standing"]["id"], redis_id.as_str());
    assert!(
        pairs[0]["closeness"]["names_option"].is_string(),
        "the option set aside is why: {review}"
    );
    let text = edge.ok_in(&repo, &["review"]);
    assert!(text.contains("Close pairs in"), "{text}");

    // An agent's write gets the pair in its answer, with the tools to settle it.
    let mut mcp = McpStdio::start_in(&edge, &repo);
    mcp.initialize("claude-code");
    let answer = mcp.ok(
        "memory_log_decision",
        json!({
            "title": "Store sessions in PostgreSQL with an expiry column",
            "chosen": "PostgreSQL sessions table with an expires_at column",
            "alternatives": ["Redis"],
            "rationale": "Expiry by a periodic delete"
        }),
    );
    let agent_id = cited_id(&answer, 'D');
    assert!(answer.contains("nothing was superseded"), "{answer}");
    assert!(
        answer.contains(&format!(
            "memory_supersede {{\"id\": \"{old}\", \"by\": \"{}\"}}",
            short(&agent_id)
        )),
        "{answer}"
    );
    // Keeping both is a person's word, not an agent's.
    let refused = edge
        .cmd_in(&repo)
        .env("CLAUDECODE", "1")
        .args(["keep-both", &agent_id, &redis_id])
        .output()
        .expect("run");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("a person's word"));
    // The agent settles its own pair by superseding through MCP.
    let superseded = mcp.ok("memory_supersede", json!({ "id": pg_id, "by": agent_id }));
    assert!(superseded.contains("[superseded]"), "{superseded}");
    mcp.close();

    // Bad choices are refused and change nothing.
    let note = edge.written_id(&repo, &["remember", "Idle sessions expire after a day"]);
    for (args, says) in [
        (
            vec!["supersede", &redis_id, "--by", &note],
            "a decision is superseded by a decision only",
        ),
        (
            vec![
                "supersede",
                &redis_id,
                "--by",
                "0192b2c3-0000-7000-8000-000000000001",
            ],
            "no record with id",
        ),
        (
            vec!["supersede", &old, "--by", &old],
            "cannot supersede itself",
        ),
        (
            vec!["supersede", &pg_id, "--by", &redis_id],
            "superseded already",
        ),
        (
            vec![
                "keep-both",
                &redis_id,
                uploads["record"]["id"].as_str().expect("id"),
            ],
            "not a pair waiting",
        ),
    ] {
        let out = edge.run_in(&repo, &args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let review = edge.json(&repo, &["review", "--json"]);
    let pairs = review["pairs"].as_array().expect("pairs");
    assert_eq!(
        pairs.len(),
        1,
        "the agent's decision beside Redis waits: {review}"
    );
    assert_eq!(pairs[0]["record"]["id"], agent_id.as_str());

    // A person keeps both: the pair goes, both stand.
    let kept = edge.ok_in(&repo, &["keep-both", &agent_id, &redis_id]);
    assert!(kept.contains("Kept both"), "{kept}");
    let review = edge.json(&repo, &["review", "--json"]);
    assert!(
        review["pairs"].as_array().expect("pairs").is_empty(),
        "{review}"
    );
    let why = edge.ok_in(&repo, &["why", "sessions"]);
    assert!(
        why.contains("Store sessions in Redis"),
        "still stands: {why}"
    );

    // A pair of memories, settled by linking them as related.
    let first = edge.json(
        &repo,
        &[
            "remember",
            "--json",
            "The staging database is reset every Monday at 06:00 UTC",
        ],
    );
    let second = edge.json(
        &repo,
        &[
            "remember",
            "--json",
            "The staging database is reset every Monday at 07:00 UTC since the move",
        ],
    );
    let close = second["close"].as_array().expect("a close memory");
    assert_eq!(
        close[0]["standing"]["id"], first["record"]["id"],
        "{second}"
    );
    let (a, b) = (
        second["record"]["id"].as_str().expect("id"),
        first["record"]["id"].as_str().expect("id"),
    );
    edge.ok_in(&repo, &["link", a, "related", b]);
    let review = edge.json(&repo, &["review", "--json"]);
    assert!(
        review["pairs"].as_array().expect("pairs").is_empty(),
        "{review}"
    );
    let shown = edge.ok_in(&repo, &["show", a]);
    assert!(shown.contains("related"), "{shown}");
}

/// A symbol is an anchor too: the files that hold it at `HEAD` are the record's,
/// so a change to one of them is news; a symbol no file holds any more is said;
/// confirming drops it. A symbol that looks like a git option is only ever a
/// pattern. An agent anchors through MCP's `files` and `symbols`.
#[test]
fn a_decision_about_a_symbol_follows_the_file_that_holds_it_and_says_when_it_is_gone() {
    let edge = Edge::new("laptop");
    let repo = repository(&edge);
    std::fs::create_dir_all(repo.join("src/auth")).expect("dirs");
    let write = |path: &str, text: &str| std::fs::write(repo.join(path), text).expect("write");
    let commit = |message: &str| commit_all(&edge, &repo, message);
    write("src/auth/tokens.rs", "pub fn verify_token() {}\n");
    write("README.md", "tokens\n");
    commit("Start");
    let written = edge.json(
        &repo,
        &[
            "decide",
            "--json",
            "--title",
            "Tokens are verified in one place",
            "--chosen",
            "Every request goes through one verifier",
            "--symbol",
            "verify_token",
            "--symbol=--output=pwned",
        ],
    );
    let id = written["record"]["id"].as_str().expect("id").to_string();
    assert_eq!(
        written["record"]["body"]["anchors"]["symbols"],
        json!(["verify_token", "--output=pwned"]),
        "{written}"
    );
    let review = edge.json(&repo, &["review", "--json"]);
    assert_eq!(review_ids(&review), vec![id.clone()], "{review}");
    let changed = &review["items"][0]["changed"];
    assert_eq!(
        changed["gone_symbols"],
        json!(["--output=pwned"]),
        "{review}"
    );
    assert_eq!(changed["commit_count"], 0, "{review}");
    assert!(!repo.join("pwned").exists(), "a pattern, never an option");

    // A change elsewhere is not news; a change to the file holding the symbol is.
    write("README.md", "tokens, verified\n");
    commit("Docs");
    let review = edge.json(&repo, &["review", "--json"]);
    assert_eq!(review["items"][0]["changed"]["commit_count"], 0, "{review}");
    write(
        "src/auth/tokens.rs",
        "pub fn verify_token() { /* audience */ }\n",
    );
    commit("Check the audience");
    let text = edge.ok_in(&repo, &["review"]);
    assert!(
        text.contains("src/auth/tokens.rs changed in 1 commit since")
            && text.contains("Check the audience"),
        "{text}"
    );

    // The function renamed: the symbol is found nowhere, and said so.
    write("src/auth/tokens.rs", "pub fn check_token() {}\n");
    commit("Rename the verifier");
    let text = edge.ok_in(&repo, &["review"]);
    assert!(
        text.contains("verify_token found nowhere in the code"),
        "{text}"
    );

    // Confirming drops the symbols no file holds; nothing is left to review.
    edge.ok_in(&repo, &["confirm", &id]);
    let shown = edge.json(&repo, &["show", "--json", &id]);
    let anchors = &shown[0]["body"]["anchors"];
    assert_eq!(anchors["symbols"], json!([]), "{shown}");
    let review = edge.json(&repo, &["review", "--json"]);
    assert!(review_ids(&review).is_empty(), "{review}");

    // An agent anchors a memory through MCP.
    let mut mcp = McpStdio::start_in(&edge, &repo);
    mcp.initialize("claude-code");
    let answer = mcp.ok(
        "memory_remember",
        json!({
            "content": "Token checks read the audience claim",
            "type": "fact",
            "confidence": 1.0,
            "files": ["src/auth/tokens.rs"],
            "symbols": ["check_token"]
        }),
    );
    mcp.close();
    let memory = cited_id(&answer, 'M');
    let shown = edge.json(&repo, &["show", "--json", &memory]);
    let anchors = &shown[0]["body"]["anchors"];
    assert_eq!(anchors["files"], json!(["src/auth/tokens.rs"]), "{shown}");
    assert_eq!(anchors["symbols"], json!(["check_token"]), "{shown}");
}

/// A decision that names no file borrows the files its session just edited; one
/// that names its files keeps only those; a file edited outside the repository
/// is never borrowed.
#[test]
fn a_decision_that_names_no_file_is_anchored_to_what_its_session_just_edited() {
    use solaria_tests::payloads::{session_start, tool};
    let edge = Edge::new("laptop");
    let repo = repository(&edge);
    std::fs::create_dir_all(repo.join("src")).expect("dirs");
    std::fs::write(repo.join("src/billing.rs"), "pub fn invoice() {}\n").expect("write");
    std::fs::write(repo.join("src/lib.rs"), "pub mod billing;\n").expect("write");
    commit_all(&edge, &repo, "Start");
    edge.hook("session-start", session_start("s1", &repo));
    let elsewhere = edge.home().join("notes.md");
    std::fs::write(&elsewhere, "x\n").expect("write");
    for (name, path) in [
        ("Read", repo.join("src/lib.rs")),
        ("Edit", repo.join("src/billing.rs")),
        ("Write", elsewhere.clone()),
    ] {
        edge.hook(
            "post-tool-use",
            tool(
                "s1",
                &repo,
                name,
                json!({"file_path": path.to_string_lossy()}),
                json!({"success": true}),
            ),
        );
    }
    let anchors_of = |args: &[&str]| -> Value {
        let mut all = vec!["decide", "--json"];
        all.extend_from_slice(args);
        edge.json(&repo, &all)["record"]["body"]["anchors"]["files"].clone()
    };
    let invoices = edge.json(
        &repo,
        &[
            "decide",
            "--json",
            "--title",
            "Invoices are immutable",
            "--chosen",
            "Credit notes",
        ],
    );
    assert_eq!(
        invoices["record"]["body"]["anchors"]["files"],
        json!(["src/billing.rs"]),
        "only what the session edited in the repository, not what it read: {invoices}"
    );
    let invoices = invoices["record"]["id"].as_str().expect("id").to_string();
    assert_eq!(
        anchors_of(&[
            "--title",
            "Modules are declared in one place",
            "--chosen",
            "lib.rs lists them",
            "--file",
            "src/lib.rs",
        ]),
        json!(["src/lib.rs"]),
        "a record that names its files keeps only those"
    );

    // A commit linked to the decision as implementing it is not news; the next is.
    let change = |text: &str, message: &str| -> String {
        std::fs::write(repo.join("src/billing.rs"), text).expect("write");
        git(&edge, &repo, &["commit", "-q", "-am", message]);
        git(&edge, &repo, &["rev-parse", "HEAD"]).trim().to_string()
    };
    let implementing = change("pub fn credit_note() {}\n", "Credit notes");
    edge.ok_in(&repo, &["commits", "import"]);
    edge.ok_in(&repo, &["link", &implementing, "implements", &invoices]);
    assert!(review_ids(&edge.json(&repo, &["review", "--json"])).is_empty());
    change("pub fn credit_note() { /* v2 */ }\n", "Credit notes v2");
    let review = edge.json(&repo, &["review", "--json"]);
    assert_eq!(review_ids(&review), vec![invoices.clone()], "{review}");
    assert_eq!(review["items"][0]["changed"]["commit_count"], 1, "{review}");

    // A name the text writes as code is a symbol when the code holds it.
    let named = edge.json(
        &repo,
        &[
            "remember",
            "--json",
            "Credit notes are made by `credit_note()`, never by `edit_invoice`",
        ],
    );
    assert_eq!(
        named["record"]["body"]["anchors"]["symbols"],
        json!(["credit_note"]),
        "{named}"
    );
}

/// A repository of 100,000 commits: one check reads the newest 20,000 and says
/// so; what changed since a record in them is found by history all the same.
#[test]
fn a_history_of_a_hundred_thousand_commits_is_read_as_far_as_the_bound_and_said() {
    let edge = Edge::new("laptop");
    let repo = repository(&edge);
    long_history(&edge, &repo, 100_000, 100);
    assert_eq!(
        git(&edge, &repo, &["rev-list", "--count", "HEAD"]).trim(),
        "100000"
    );
    let written = edge.json(
        &repo,
        &[
            "decide",
            "--json",
            "--title",
            "Module seven stays small",
            "--chosen",
            "Split it past 500 lines",
            "--file",
            "src/f7.rs",
        ],
    );
    let id = written["record"]["id"].as_str().expect("id").to_string();
    let review = edge.ok_in(&repo, &["review"]);
    assert!(review.contains("Nothing to review"), "{review}");
    assert!(
        review.contains("longer than 20000 commits, so only the newest were read"),
        "{review}"
    );
    std::fs::write(repo.join("src/f7.rs"), "// grown\n").expect("write");
    std::fs::write(repo.join("src/f8.rs"), "// grown\n").expect("write");
    git(&edge, &repo, &["commit", "-q", "-am", "Grow module seven"]);
    let review = edge.json(&repo, &["review", "--json"]);
    let items = review["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{review}");
    assert_eq!(items[0]["record"]["id"], id.as_str());
    assert_eq!(items[0]["changed"]["commit_count"], 1, "{review}");
    assert_eq!(
        items[0]["changed"]["files"],
        json!(["src/f7.rs"]),
        "{review}"
    );
    assert_eq!(review["history_cut"], 20_000, "{review}");
}
