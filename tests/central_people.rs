//! The people of an account on a real central service (PostgreSQL, HTTP on
//! loopback, the real `solaria-central` binary for the operator's commands): every
//! machine is someone's; removing a person refuses their machines from the next
//! request and spends their tokens, `--erase` tombstones their personal records and
//! nothing else; an account keeps an admin; every administrative act is in the audit log;
//! and a server upgraded in place gives its machines of before a person, keeping
//! every record.

use solaria_central::storage::{MIGRATOR, Role, Storage};
use solaria_shared::wire::WireRecord;
use solaria_tests::central::{Central, Options, legacy_machine, legacy_records, ok, refused};
use solaria_tests::pg::fresh_database;
use solaria_tests::records::{observation, session, stamp, wire};

#[tokio::test]
async fn the_operator_manages_people_and_a_removed_persons_machines_are_refused_at_once() {
    let db = fresh_database().await;
    let storage = Storage::connect(&db.url, 5).await.expect("connect");
    let url = db.url.as_str();
    ok(url, &["migrate"]);
    let created = ok(
        url,
        &["account", "create", "acme", "--admin", "lin@acme.dev"],
    );
    assert!(
        created.contains("its first admin lin@acme.dev"),
        "{created}"
    );
    // With one person, a token needs no name; it is theirs.
    ok(url, &["enroll-token", "acme"]);
    let added = ok(url, &["person", "add", "acme", "ada@acme.dev"]);
    assert!(added.contains("added ada@acme.dev as member"), "{added}");
    // Now there are two: whose machine it is must be said, and said right.
    let e = refused(url, &["enroll-token", "acme"]);
    assert!(e.contains("--person EMAIL"), "{e}");
    let e = refused(url, &["enroll-token", "acme", "--person", "bob@acme.dev"]);
    assert!(e.contains("person bob@acme.dev not found"), "{e}");
    let e = refused(url, &["person", "add", "acme", "ADA@acme.dev"]);
    assert!(e.contains("already a person of this account"), "{e}");
    let e = refused(url, &["person", "add", "acme", "not an email"]);
    assert!(e.contains("is not an email address"), "{e}");
    let e = refused(
        url,
        &["person", "add", "acme", "x@acme.dev", "--role", "owner"],
    );
    assert!(e.contains("not a role: admin or member"), "{e}");

    let c = Central::serve(storage.clone(), Options::default()).await;
    let acct = storage.find_account("acme").await.expect("account");
    let token = ok(url, &["enroll-token", "acme", "--person", "ada@acme.dev"]);
    let laptop = c.enroll(acct, token.trim(), "ada-laptop").await;
    let spare = ok(url, &["enroll-token", "acme", "--person", "ada@acme.dev"]);
    let listed = ok(url, &["machines", "list", "acme"]);
    assert!(
        listed.contains("ada-laptop") && listed.contains("ada@acme.dev"),
        "each machine names its person: {listed}"
    );
    let s = session(laptop.id, stamp(0));
    let o = observation(laptop.id, s.id, stamp(1), "cargo test billing");
    c.push_ok(&laptop, &[wire(s.clone()), wire(o.clone())])
        .await;
    let people = ok(url, &["person", "list", "acme"]);
    assert!(
        people.contains("lin@acme.dev") && people.contains("admin"),
        "{people}"
    );
    assert!(people.contains("1 active machine(s)"), "{people}");

    // The last admin stays; a member goes, and their machine with them.
    let e = refused(url, &["person", "remove", "acme", "lin@acme.dev"]);
    assert!(e.contains("last admin"), "{e}");
    let removed = ok(url, &["person", "remove", "acme", "ada@acme.dev"]);
    assert!(
        removed.contains("1 machine(s) revoked, 1 unused enrollment token(s) spent"),
        "{removed}"
    );
    let later = observation(laptop.id, s.id, stamp(2), "written after the removal");
    let refused_push = c.push(&laptop, &[wire(later.clone())]).await;
    assert_eq!(
        refused_push.status(),
        403,
        "refused from the next request on"
    );
    let relogin = c
        .client
        .post(format!("{}/memory/token", c.url))
        .json(&serde_json::json!({"machine_id": laptop.id, "credential": laptop.credential}))
        .send()
        .await
        .expect("token request");
    assert_eq!(relogin.status(), 403, "its credential is refused too");
    let unused = c
        .client
        .post(format!("{}/memory/enroll", c.url))
        .json(&serde_json::json!({"token": spare.trim(), "name": "ada-desktop"}))
        .send()
        .await
        .expect("enroll request");
    assert_eq!(unused.status(), 401, "their unused token enrolls nothing");
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM memory_observations_remote WHERE title LIKE '%after the removal%'",
    )
    .fetch_one(storage.pool())
    .await
    .expect("count");
    assert_eq!(n, 0, "nothing written after the removal");
    let kept: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM memory_observations_remote WHERE id = $1 AND NOT deleted",
    )
    .bind(o.id.as_uuid())
    .fetch_one(storage.pool())
    .await
    .expect("count");
    assert_eq!(kept, 1, "what they wrote stays without --erase");
    let people = ok(url, &["person", "list", "acme"]);
    assert!(people.contains("removed"), "{people}");
    // An erasure asked for after they left: only what they wrote goes.
    let erased = ok(
        url,
        &["person", "remove", "acme", "ada@acme.dev", "--erase"],
    );
    assert!(
        erased.contains("had been removed already: 2 record(s) erased"),
        "{erased}"
    );
    let live: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM memory_observations_remote WHERE id = $1 AND NOT deleted",
    )
    .bind(o.id.as_uuid())
    .fetch_one(storage.pool())
    .await
    .expect("count");
    assert_eq!(live, 0, "erased");
    let e = refused(
        url,
        &["person", "remove", "acme", "bob@acme.dev", "--erase"],
    );
    assert!(e.contains("person bob@acme.dev not found"), "{e}");
    // Removed, the address may come back as a new person.
    ok(url, &["person", "add", "acme", "ada@acme.dev"]);

    let audit = ok(url, &["audit", "acme"]);
    let actions: Vec<&str> = [
        "account created",
        "person added",
        "person removed",
        "records erased",
        "person added",
    ]
    .to_vec();
    let mut at = 0;
    for action in actions {
        let found = audit[at..]
            .find(action)
            .unwrap_or_else(|| panic!("{action} after byte {at}: {audit}"));
        at += found + action.len();
    }
    assert!(audit.contains("operator ops"), "who did it: {audit}");
}

#[tokio::test]
async fn removing_a_person_with_erase_tombstones_their_personal_records_and_nothing_else() {
    let c = Central::start().await;
    let acct = c.account("acme").await;
    let ada = c.person(acct, "ada@acme.dev", Role::Member).await;
    let first_admin = c
        .storage
        .find_person(acct, "owner@acme")
        .await
        .expect("owner");
    c.storage
        .share_projects(acct, "github.com/acme/*", "test")
        .await
        .expect("share");
    let owner = c.machine_of(acct, first_admin, "owner-laptop").await;
    let theirs = c.machine_of(acct, ada, "ada-laptop").await;
    let s1 = session(owner.id, stamp(0));
    let mine = observation(owner.id, s1.id, stamp(1), "the owner's own work");
    // Ada's work for the team (a shared project) and her own (a personal one).
    let s2 = session(theirs.id, stamp(0));
    let for_the_team = observation(theirs.id, s2.id, stamp(1), "ada's shared fix");
    let notes = solaria_shared::Project {
        key: "github.com/ada/notes".into(),
        name: "notes".into(),
    };
    let mut s3 = session(theirs.id, stamp(0));
    s3.project = notes.clone();
    let mut gone = observation(theirs.id, s3.id, stamp(1), "ada's own notes");
    gone.project = notes;
    c.push_ok(&owner, &[wire(s1.clone()), wire(mine.clone())])
        .await;
    c.push_ok(
        &theirs,
        &[
            wire(s2.clone()),
            wire(for_the_team.clone()),
            wire(s3.clone()),
            wire(gone.clone()),
        ],
    )
    .await;

    let removal = c
        .storage
        .remove_person(acct, "ada@acme.dev", true, "test")
        .await
        .expect("remove");
    assert_eq!(removal.records_erased, 2, "{removal:?}");
    // What she wrote for the team stays the team's, with her name.
    let page = c.changes(&owner, 0).await;
    let live = |id: uuid::Uuid| {
        page.changes
            .iter()
            .find_map(|c| match &c.record {
                WireRecord::Observation(o) if *o.id.as_uuid() == id => Some(!o.meta.deleted),
                WireRecord::Session(s) if *s.id.as_uuid() == id => Some(!s.meta.deleted),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{id} is in the feed"))
    };
    assert!(live(*s2.id.as_uuid()), "her shared session is kept");
    assert!(
        live(*mine.id.as_uuid()) && live(*s1.id.as_uuid()),
        "the rest kept"
    );
    let text = |like: &'static str| {
        let pool = c.storage.pool().clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM memory_observations_remote WHERE title LIKE $1",
            )
            .bind(like)
            .fetch_one(&pool)
            .await
            .expect("count")
        }
    };
    assert_eq!(text("%ada's own notes%").await, 0, "her own words are gone");
    assert_eq!(text("%ada's shared fix%").await, 1);
    let audit = c.storage.audit_log(acct).await.expect("audit");
    let actions: Vec<&str> = audit.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "account created",
            "person added",
            "project shared",
            "person removed",
            "records erased"
        ]
    );
}

#[tokio::test]
async fn an_upgrade_in_place_gives_the_machines_of_before_a_person_and_keeps_every_record() {
    let db = fresh_database().await;
    let storage = Storage::connect(&db.url, 5).await.expect("connect");
    // The schema as the release before people left it (migrations 1 to 8), with a
    // machine, its records and an unused enrollment token in it.
    MIGRATOR
        .run_to(8, storage.pool())
        .await
        .expect("migrate to version 8");
    let (acct, id, credential) = legacy_machine(&storage, "acme", "laptop").await;
    let s = session(id, stamp(0));
    let o = observation(id, s.id, stamp(1), "cargo test billing");
    legacy_records(&storage, acct, &[wire(s.clone()), wire(o.clone())]).await;
    let token = solaria_central::secret::random_token("solenroll");
    sqlx::query(
        "INSERT INTO enrollment_tokens (id, account_id, token_hash, expires_at)
         VALUES ($1, $2, $3, now() + interval '1 hour')",
    )
    .bind(uuid::Uuid::now_v7())
    .bind(acct.0)
    .bind(solaria_central::secret::hash_token(&token))
    .execute(storage.pool())
    .await
    .expect("an old token");

    storage
        .migrate()
        .await
        .expect("migrate to the current version");
    let people = storage.list_people(acct).await.expect("people");
    assert_eq!(people.len(), 1, "{people:?}");
    assert_eq!(
        (people[0].email.as_str(), people[0].role),
        ("owner@acme", Role::Admin)
    );
    assert_eq!(people[0].active_machines, 1);
    let machines = storage.list_machines(acct).await.expect("machines");
    assert_eq!(machines[0].person, "owner@acme");

    let c = Central::serve(storage.clone(), Options::default()).await;
    // The same machine logs in again and finds what it pushed.
    let laptop = c.log_in(acct, id, credential).await;
    let page = c.changes(&laptop, 0).await;
    assert_eq!(page.changes.len(), 2, "{page:?}");
    // The token made before people belongs to the person made for them.
    let desktop = c.enroll(acct, &token, "desktop").await;
    let machines = storage.list_machines(acct).await.expect("machines");
    assert!(
        machines
            .iter()
            .any(|m| m.id == desktop.id && m.person == "owner@acme"),
        "{machines:?}"
    );
}
