//! A rolling upgrade of the central service: the release before the newest schema
//! change (`deploy/previous-release.sh` builds it from this repository's history)
//! serves beside this one on the database this one migrated, both taking edges'
//! syncs, until the old one is stopped; and every migration since the rule was
//! written only adds to the schema, so that this keeps holding.

use solaria_tests::central::{JWT_SECRET, Replica, ok, test_tls};
use solaria_tests::edge::Edge;
use solaria_tests::pg::fresh_database;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Names the previous release's `solaria-central`, when `deploy/test.sh` built it.
const PREVIOUS_VAR: &str = "SOLARIA_TEST_PREVIOUS_CENTRAL";

/// The last migration written before the expand/contract rule: those up to it were
/// released one at a time, with every replica stopped.
const LAST_BEFORE_THE_RULE: u32 = 12;

/// The previous release's binary: from `SOLARIA_TEST_PREVIOUS_CENTRAL`, else built
/// (once, cached) by `deploy/previous-release.sh`.
fn previous_release() -> PathBuf {
    if let Ok(path) = std::env::var(PREVIOUS_VAR)
        && !path.trim().is_empty()
    {
        return PathBuf::from(path.trim());
    }
    let script = solaria_tests::workspace().join("deploy/previous-release.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .expect("run deploy/previous-release.sh");
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success() && !path.is_empty(),
        "deploy/previous-release.sh failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(path)
}

/// `solaria-central ARGS` of `program` against `database`: its standard output.
fn operator(program: &Path, database: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SOLARIA_DATABASE_URL", database)
        .env("SOLARIA_JWT_SECRET", JWT_SECRET)
        .output()
        .expect("run solaria-central");
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether `edge`'s own store finds `text` (its own or pulled from central).
fn knows(edge: &Edge, text: &str) -> bool {
    edge.search(text)
        .iter()
        .any(|hit| hit.to_string().contains(text))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_previous_release_serves_beside_this_one_on_the_schema_this_one_migrated() {
    let old = previous_release();
    let new = solaria_tests::binary("solaria-central");
    let db = fresh_database().await;
    let (tls, ca_pem) = test_tls();
    let ca = tls.path().join("ca.pem");
    std::fs::write(&ca, ca_pem).expect("ca");

    // Before the upgrade: the old release alone, with a machine syncing to it.
    operator(&old, &db.url, &["migrate"]);
    operator(
        &old,
        &db.url,
        &["account", "create", "acme", "--admin", "lin@acme.dev"],
    );
    let before = Replica::serve(&old, &db.url, tls.path()).await;
    let laptop = Edge::new("laptop");
    laptop.login_to(
        &before.url,
        operator(&old, &db.url, &["enroll-token", "acme"]).trim(),
        &ca,
    );
    laptop.prompt("s-laptop", "zeppelin hangar before the upgrade");
    laptop.ok(&["sync"]);

    // The upgrade: this release migrates while the old one serves, then starts; an
    // old replica that restarts meanwhile starts on the migrated schema too.
    ok(&db.url, &["migrate"]);
    let after = Replica::serve(&new, &db.url, tls.path()).await;
    let old_again = Replica::serve(&old, &db.url, tls.path()).await;
    before.stop().await;

    let desktop = Edge::new("desktop");
    desktop.login_to(
        &after.url,
        ok(&db.url, &["enroll-token", "acme"]).trim(),
        &ca,
    );
    desktop.prompt("s-desktop", "airship mooring during the upgrade");
    desktop.ok(&["sync"]);
    // The laptop still syncs to an old replica: it writes on the new schema, and
    // pulls what the new release took.
    laptop.prompt("s-laptop", "zeppelin inspection on the old replica");
    laptop.point_at(&old_again.url);
    laptop.ok(&["sync"]);
    assert!(
        knows(&laptop, "airship mooring"),
        "the old replica serves what the new one took"
    );
    desktop.ok(&["sync"]);
    assert!(
        knows(&desktop, "zeppelin inspection"),
        "the new replica serves what the old one took on its schema"
    );
    assert!(knows(&desktop, "zeppelin hangar"));

    // The old release stopped: the new one serves everything, to both machines.
    old_again.stop().await;
    laptop.point_at(&after.url);
    laptop.prompt("s-laptop", "dirigible after the upgrade");
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);
    assert!(knows(&desktop, "dirigible after"));
    after.stop().await;
}

#[test]
fn every_migration_since_the_rule_only_adds_to_the_schema() {
    // What the previous release, serving beside a new one, would break on: a table
    // or column gone or renamed, a type changed, a column newly required. A later
    // release contracts what an earlier one stopped using, with a line
    // `-- contract: <the release that stopped using it>` saying so.
    let forbidden = [
        "DROP TABLE",
        "DROP COLUMN",
        "RENAME",
        " TYPE ",
        "SET NOT NULL",
        "DROP DEFAULT",
    ];
    let dir = solaria_tests::workspace().join("migrations/central");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("migrations") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some(number) = name.split('_').next().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if number <= LAST_BEFORE_THE_RULE {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(&path).expect("migration");
        if text
            .lines()
            .any(|l| l.trim_start().starts_with("-- contract:"))
        {
            continue;
        }
        let statements: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .collect::<Vec<_>>()
            .join(" ")
            .to_uppercase();
        for word in forbidden {
            assert!(
                !statements.contains(word),
                "{name} contracts the schema ({word}) without a `-- contract:` line: \
                 the previous release serves beside it during an upgrade"
            );
        }
        for added in statements.split("ADD COLUMN").skip(1) {
            let column = added.split(',').next().unwrap_or(added);
            assert!(
                !column.contains("NOT NULL") || column.contains("DEFAULT"),
                "{name} adds a required column without a default: the previous release's \
                 inserts would fail"
            );
        }
    }
    assert!(checked > 0, "no migration since the rule was written");
}
