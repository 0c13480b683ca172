//! A team through the real `solaria` binaries: Ana and Bo, each with their own
//! machine, on one TLS central service with `github.com/acme/*` shared. Bo's
//! machine pulls Ana's decisions of the shared project and names them as hers
//! everywhere it shows them; it never holds her personal project; her raw events
//! stay on the server until Bo asks for them; and his machine refuses to change
//! what she wrote instead of stalling its sync on it.

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
    assert!(why.contains("@ana on ana-laptop"), "{why}");
    let found = bo.ok_in(&bo.project, &["search", "billing ORM"]);
    assert!(found.contains("@ana on ana-laptop"), "{found}");

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

    // What she wrote is hers to change: his machine says so and writes nothing.
    for args in [
        vec!["forget", decision.as_str()],
        vec![
            "supersede",
            decision.as_str(),
            "--title",
            "An ORM after all",
            "--chosen",
            "diesel",
            "--rationale",
            "fewer hand-written queries",
        ],
    ] {
        let out = bo.run(&args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("written by @ana on ana-laptop") && err.contains("only its author"),
            "{err}"
        );
    }
    let report = bo.ok(&["sync"]);
    assert!(!report.contains("rejected"), "nothing stalls: {report}");
    ana.ok(&["sync"]);
    let still = ana.ok(&["why", "ORM", "billing"]);
    assert!(
        still.contains("No ORM for the billing tables") && !still.contains("forgotten"),
        "{still}"
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
