//! A team through the real `solaria` binaries: Ana and Bo, each with their own
//! machine, on one TLS central service with `github.com/acme/*` shared. Bo's
//! machine pulls Ana's decisions of the shared project and names them as hers
//! everywhere it shows them; it never holds her personal project; her raw events
//! stay on the server until Bo asks for them; his machine refuses to erase what
//! she wrote, and supersedes her decision with one of his own that every machine
//! then shows in its place, hers kept with her name.

use solaria_central::storage::Role;
use solaria_tests::central::Central;
use solaria_tests::edge::Edge;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammates_decision_reaches_the_next_session_named_as_theirs() {
    let (c, acct) = Central::tls_with_account().await;
    let ana_id = c.person(acct, "ana@acme.dev", Role::Member).await;
    let bo_id = c.person(acct, "bo@acme.dev", Role::Member).await;
    c.storage
        .share_projects(acct, "github.com/acme/*", "test")
        .await
        .expect("share");
    let ana = Edge::new("ana-laptop");
    let bo = Edge::new("bo-laptop");
    ana.enroll_as(&c, acct, ana_id).await;
    bo.enroll_as(&c, acct, bo_id).await;

    let decision = ana.decide_no_orm();
    ana.prompt("s1", "tune the quokka cache eviction");
    let dotfiles = ana.root.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).expect("dotfiles");
    ana.ok_in(
        &dotfiles,
        &[
            "decide",
            "--title",
            "Zanzibar prompt theme",
            "--chosen",
            "a two-line prompt",
            "--rationale",
            "long paths",
        ],
    );
    ana.ok(&["sync"]);
    bo.ok(&["sync"]);

    // Ana's shared decision is in Bo's next session, named as hers.
    let context = bo.ok_in(&bo.project, &["context"]);
    assert!(
        context.contains("No ORM for the billing tables"),
        "{context}"
    );
    assert!(context.contains("@ana on ana-laptop"), "{context}");
    let why = bo.ok(&["why", "ORM", "billing"]);
    assert!(why.contains(" by @ana on ana-laptop"), "{why}");
    assert!(
        !why.contains(" on @ana on "),
        "written by her, not on her: {why}"
    );
    let found = bo.ok_in(&bo.project, &["search", "billing ORM"]);
    assert!(found.contains("@ana on ana-laptop"), "{found}");
    // A script is told who wrote each record, without resolving machine ids.
    let hers = serde_json::json!({"handle": "ana", "machine": "ana-laptop"});
    let why = bo.json(&bo.project, &["why", "--json", "ORM", "billing"]);
    assert_eq!(why["knowledge"][0]["author"], hers, "{why}");
    let found = bo.json(&bo.project, &["search", "--json", "billing ORM"]);
    assert!(
        found
            .as_array()
            .expect("hits")
            .iter()
            .any(|h| h["author"] == hers),
        "{found}"
    );
    let listed = bo.json(&bo.project, &["decisions", "--json"]);
    assert_eq!(listed[0]["author"], hers, "{listed}");
    let own = ana.json(&ana.project, &["decisions", "--json"]);
    assert_eq!(
        own[0]["author"],
        serde_json::json!({"machine": "ana-laptop"}),
        "her own: no handle needed"
    );

    // Her personal project never reaches his machine; her raw events stay on the
    // server, where a remote search finds them.
    assert_eq!(
        bo.count("SELECT count(*) FROM knowledge WHERE title LIKE '%Zanzibar%'"),
        0
    );
    assert_eq!(
        bo.count("SELECT count(*) FROM observations WHERE title LIKE '%quokka%'"),
        0
    );
    let remote = bo.ok(&["search", "--remote", "quokka"]);
    assert!(remote.contains("@ana on ana-laptop"), "{remote}");
    let remote = bo.ok(&["search", "--remote", "Zanzibar"]);
    assert!(!remote.contains("Zanzibar prompt"), "{remote}");

    // What she wrote is hers to erase: his machine says so and writes nothing.
    let out = bo.run(&["forget", decision.as_str()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("written by @ana on ana-laptop") && err.contains("only its author"),
        "{err}"
    );
    // He supersedes it with a decision of his own: hers stays, with her name,
    // marked superseded by his on every machine.
    let replaced = bo.json(
        &bo.project,
        &[
            "supersede",
            decision.as_str(),
            "--json",
            "--title",
            "Diesel for the billing tables",
            "--chosen",
            "diesel",
            "--rationale",
            "the reports moved to the warehouse",
        ],
    );
    let newer = replaced["record"]["id"].as_str().expect("id").to_string();
    let report = bo.ok(&["sync"]);
    assert!(!report.contains("rejected"), "nothing stalls: {report}");
    ana.ok(&["sync"]);
    for (who, edge) in [("bo", &bo), ("ana", &ana)] {
        let why = edge.ok(&["why", "billing", "tables"]);
        assert!(
            why.contains("Diesel for the billing tables"),
            "{who}: {why}"
        );
        let context = edge.ok_in(&edge.project, &["context"]);
        assert!(
            context.contains("Diesel for the billing tables")
                && !context.contains("No ORM for the billing tables"),
            "{who}: only the standing decision is in the context: {context}"
        );
    }
    let hers = ana.ok(&["show", &decision]);
    assert!(
        hers.contains("superseded") && hers.contains(&newer[..8]),
        "{hers}"
    );
    let his_on_hers = ana.ok(&["why", "billing", "tables"]);
    assert!(his_on_hers.contains("@bo on bo-laptop"), "{his_on_hers}");
    let (writer, status): (String, String) = sqlx::query_as(
        "SELECT m.machine_name, k.status FROM memory_knowledge k
         JOIN memory_machines m ON m.id = k.machine_id WHERE k.id = $1::uuid",
    )
    .bind(&decision)
    .fetch_one(c.storage.pool())
    .await
    .expect("her decision on the server");
    assert_eq!(
        (writer.as_str(), status.as_str()),
        ("ana-laptop", "superseded"),
        "still hers, superseded by his"
    );

    // Asked for, her events of the shared project come too.
    bo.write_config("[sync]\nteam_observations = true\n");
    bo.ok(&["sync"]);
    assert_eq!(
        bo.count("SELECT count(*) FROM observations WHERE title LIKE '%quokka%'"),
        1
    );
    assert_eq!(
        bo.count("SELECT count(*) FROM knowledge WHERE title LIKE '%Zanzibar%'"),
        0
    );
}
