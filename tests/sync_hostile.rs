//! A hostile machine of one's own account: it runs modified software, so its store
//! says whatever it likes, and everything it pushes reaches the account's other
//! machines. Two real edges and a real central: a commit record whose sha is a git
//! option (`--output=FILE`) is refused by central with its reason; one that got past
//! central anyway (stored by an older server) is not applied by the victim's pull;
//! and one already in the victim's store (applied by an older edge) is never given
//! to git by the completion pass. No file appears in the victim's HOME.

use solaria_store::rusqlite;
use solaria_tests::central::Central;
use solaria_tests::edge::Edge;
use solaria_tests::git::{self, git};
use solaria_tests::payloads::session_start;
use std::path::{Path, PathBuf};

const SESSION: &str = "6c1d3e0f-0000-4000-8000-0000000000e1";

/// A real repository of the project `github.com/acme/api` on `m`, with one commit.
fn repository(m: &Edge) -> PathBuf {
    let dir = git::repository(m);
    std::fs::write(dir.join("README.md"), "api\n").expect("file");
    git(m, &dir, &["add", "-A"]);
    git(m, &dir, &["commit", "-q", "-m", "First"]);
    dir
}

/// What git would have written in the victim's `~/.config` (`FILE^{commit}`).
fn written(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("the directory exists")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The hostile commit row of `m`'s store, as central's table keeps a record.
struct Row {
    id: uuid::Uuid,
    machine: uuid::Uuid,
    updated: i64,
    session: Option<uuid::Uuid>,
    title: String,
    text: String,
    body: String,
    created_at: i64,
}

fn hostile_row(m: &Edge) -> Row {
    let uuid = |s: String| uuid::Uuid::parse_str(&s).expect("a uuid");
    m.db()
        .query_row(
            "SELECT id, machine_id, updated, session_id, title, text, body, created_at
             FROM knowledge WHERE kind = 'commit'",
            [],
            |r| {
                Ok(Row {
                    id: uuid(r.get(0)?),
                    machine: uuid(r.get(1)?),
                    updated: r.get(2)?,
                    session: r.get::<_, Option<String>>(3)?.map(uuid),
                    title: r.get(4)?,
                    text: r.get(5)?,
                    body: r.get(6)?,
                    created_at: r.get(7)?,
                })
            },
        )
        .expect("the hostile commit")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_whose_sha_is_a_git_option_is_refused_everywhere_and_never_reaches_git() {
    let (c, acct) = Central::tls_with_account().await;
    let attacker = Edge::new("attacker");
    let victim = Edge::new("victim");
    attacker.enroll(&c, acct).await;
    victim.enroll(&c, acct).await;

    // The victim works in a real repository: the completion pass runs git in the
    // directory of the session that captured a commit.
    let repo = repository(&victim);
    let config = victim.home().join(".config");
    std::fs::create_dir_all(&config).expect("~/.config");
    victim.hook("session-start", session_start(SESSION, &repo));
    victim.ok(&["sync"]);

    // The attacker learns the victim's session from the feed, logs a commit and
    // rewrites it in its own store: the sha becomes an option naming a file in the
    // victim's HOME, the session the victim's.
    attacker.ok(&["sync"]);
    let sessions = attacker.strings(&format!(
        "SELECT id FROM sessions WHERE cwd = '{}'",
        repo.display()
    ));
    assert_eq!(sessions.len(), 1, "the victim's session was pulled");
    let honest = "0123456789abcdef0123456789abcdef01234567";
    attacker.ok(&["commits", "log", honest, "--message", "Harmless"]);
    let hostile = format!("--output={}", config.join("x").display());
    let edited = attacker
        .db()
        .execute(
            "UPDATE knowledge SET sha = ?1, body = json_set(body, '$.sha', ?1), session_id = ?2
             WHERE kind = 'commit'",
            rusqlite::params![hostile, sessions[0]],
        )
        .expect("edit the store");
    assert_eq!(edited, 1);

    // Central refuses it with its reason, and the pushing edge shows it.
    let pushed = attacker.run(&["sync"]);
    assert!(!pushed.status.success(), "a refused record fails the sync");
    let out = String::from_utf8_lossy(&pushed.stdout);
    let row = hostile_row(&attacker);
    assert!(
        out.contains(&format!("refused by the server: {}: commit sha", row.id))
            && out.contains(&hostile)
            && out.contains("not a full object name"),
        "{out}"
    );
    let on_central: i64 =
        sqlx::query_scalar("SELECT count(*) FROM memory_knowledge WHERE kind = 'commit'")
            .fetch_one(c.storage.pool())
            .await
            .expect("count");
    assert_eq!(on_central, 0, "central kept nothing");

    // An older server had kept it, as it kept every record of its machines: the
    // victim's pull does not apply it, says why, and goes on.
    let seq: i64 = sqlx::query_scalar(
        "UPDATE accounts SET change_seq = change_seq + 1 WHERE id = $1 RETURNING change_seq",
    )
    .bind(acct.0)
    .fetch_one(c.storage.pool())
    .await
    .expect("seq");
    sqlx::query(
        "INSERT INTO memory_knowledge (account_id, id, machine_id, updated, deleted, seq,
             project_key, project_name, session_id, kind, status, title, search_text, body,
             created_at)
         VALUES ($1, $2, $3, $4, false, $5, 'github.com/acme/api', 'api', $6, 'commit',
             'active', $7, $8, $9::jsonb, $10)",
    )
    .bind(acct.0)
    .bind(row.id)
    .bind(row.machine)
    .bind(row.updated)
    .bind(seq)
    .bind(row.session)
    .bind(&row.title)
    .bind(&row.text)
    .bind(&row.body)
    .bind(row.created_at)
    .execute(c.storage.pool())
    .await
    .expect("stored as an older server would have");
    let out = victim.ok(&["sync"]);
    assert!(
        out.contains(&format!("pulled but not applied: {}: commit sha", row.id))
            && out.contains(&hostile),
        "{out}"
    );
    assert_eq!(
        victim.count("SELECT count(*) FROM knowledge WHERE kind = 'commit'"),
        0
    );
    let again = victim.ok(&["sync"]);
    assert!(
        !again.contains("not applied"),
        "the cursor moved past it: {again}"
    );
    let done = victim.json(&repo, &["commits", "complete", "--json"]);
    assert_eq!(done["completed"], 0, "{done}");
    assert!(written(&config).is_empty(), "{:?}", written(&config));

    // An older edge had applied it: the completion pass refuses it before git runs.
    let db = victim.db();
    db.execute(
        "ATTACH DATABASE ?1 AS attacker",
        [attacker.db_path().display().to_string()],
    )
    .expect("attach");
    db.execute(
        "INSERT INTO main.knowledge SELECT * FROM attacker.knowledge WHERE kind = 'commit'",
        [],
    )
    .expect("copied as an older edge stored it");
    drop(db);
    let done = victim.json(&repo, &["commits", "complete", "--json"]);
    assert_eq!(done["completed"], 0, "{done}");
    let skipped = done["skipped"].to_string();
    assert!(
        skipped.contains(&format!("{}: refused, not given to git", row.id))
            && skipped.contains("not a full object name"),
        "{done}"
    );
    assert!(
        written(&config).is_empty(),
        "git wrote {:?}",
        written(&config)
    );
    c.stop().await;
}
