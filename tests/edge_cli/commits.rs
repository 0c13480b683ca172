//! Commits through the real binary and a real git repository: a `git commit`
//! run by the agent's Bash tool is captured by the PostToolUse hook from its real
//! output (once, however often it is seen), linked to the decision its trailer
//! names, completed with author and line counts later, imported from history
//! without duplicates, and never stored with a secret from its message.

use serde_json::Value;
use solaria_tests::edge::Edge;
use solaria_tests::git::{self, bash, git, repository};
use solaria_tests::payloads::*;
use std::path::Path;

const SESSION: &str = "6c1d3e0f-0000-4000-8000-0000000000c1";

/// The PostToolUse payload of a Bash call that ran `command` and printed `stdout`.
fn bash_payload(dir: &Path, command: &str, stdout: &str) -> Value {
    git::bash_payload(SESSION, dir, command, stdout)
}

/// Writes `lines` lines to `path` under `dir`.
fn write(dir: &Path, path: &str, lines: usize) {
    let text: String = (0..lines).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join(path), text).expect("write file");
}

fn commits(m: &Edge, dir: &Path) -> Vec<Value> {
    m.json(dir, &["commits", "--json"])
        .as_array()
        .expect("a list")
        .clone()
}

fn head(m: &Edge, dir: &Path) -> String {
    git(m, dir, &["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn a_commit_made_through_bash_is_captured_once_with_its_whole_message() {
    let m = Edge::new("laptop");
    let dir = repository(&m);
    write(&dir, "src/page.rs", 3);
    let command = "git add -A && git commit -m \"$(cat <<'EOF'\nKeyset pagination for /items\n\nOffsets skipped rows under concurrent inserts.\nEOF\n)\"";
    let stdout = bash(&m, &dir, command);
    assert!(stdout.contains("[main (root-commit) "), "{stdout}");
    let payload = bash_payload(&dir, command, &stdout);
    m.hook("post-tool-use", &payload);
    m.hook("post-tool-use", &payload);

    let list = commits(&m, &dir);
    assert_eq!(list.len(), 1, "the same commit seen twice is one record");
    let c = &list[0];
    assert_eq!(c["sha"], head(&m, &dir));
    assert_eq!(c["branch"], "main");
    assert_eq!(c["subject"], "Keyset pagination for /items");
    assert_eq!(
        c["message"],
        "Keyset pagination for /items\n\nOffsets skipped rows under concurrent inserts."
    );
    assert_eq!(c["complete"], false, "statistics wait for the daemon");
    assert_eq!(
        m.count("SELECT count(*) FROM observations"),
        2,
        "the Bash calls themselves are still observed"
    );
    let text = m.ok_in(&dir, &["commits"]);
    let sha7 = &head(&m, &dir)[..7];
    assert!(
        text.contains(&format!(
            "[C#{sha7}] Keyset pagination for /items — main, statistics pending"
        )),
        "{text}"
    );
    assert!(m.hook_log().is_empty(), "{}", m.hook_log());
}

#[test]
fn a_decision_trailer_links_the_commit_and_an_unknown_one_is_only_noted() {
    let m = Edge::new("laptop");
    let dir = repository(&m);
    let decided = m.json(
        &dir,
        &[
            "decide",
            "--title",
            "Keyset pagination",
            "--chosen",
            "keyset on (created_at, id)",
            "--json",
        ],
    );
    let decision = decided["record"]["id"].as_str().expect("decision id");
    let short = &decision.replace('-', "")[20..];
    write(&dir, "src/page.rs", 2);
    let command = format!(
        "git add -A && git commit -m 'Use keyset pages' -m 'Decision: D#{short}' --trailer 'Decision: D#ffffffffffff'"
    );
    let stdout = bash(&m, &dir, &command);
    m.hook("post-tool-use", bash_payload(&dir, &command, &stdout));

    let list = commits(&m, &dir);
    assert_eq!(list.len(), 1);
    let linked: Vec<&str> = list[0]["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(linked, vec![decision], "the trailer's decision, only");
    let sha7 = &head(&m, &dir)[..7];
    let text = m.ok_in(&dir, &["commits"]);
    assert!(text.contains(&format!("linked [D#{short}]")), "{text}");
    let shown = m.ok_in(&dir, &["show", &format!("D#{short}")]);
    assert!(
        shown.contains(&format!("implemented by [C#{sha7}] Use keyset pages")),
        "the decision shows its commit: {shown}"
    );
    assert!(
        m.hook_log().contains("D#ffffffffffff names no decision"),
        "the unknown trailer is noted: {}",
        m.hook_log()
    );
}

#[test]
fn importing_history_twice_records_each_commit_once() {
    let m = Edge::new("laptop");
    let dir = repository(&m);
    for (n, subject) in ["One", "Two", "Three"].iter().enumerate() {
        write(&dir, &format!("src/f{n}.rs"), n + 1);
        git(&m, &dir, &["add", "-A"]);
        let date = format!("2026-01-0{}T10:00:00Z", n + 1);
        let out = git::command(&m, &dir)
            .args(["commit", "-q", "-m", subject])
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .expect("git commit");
        assert!(out.status.success(), "{out:?}");
    }
    let first = m.json(&dir, &["commits", "import", "--json"]);
    assert_eq!(
        (first["imported"].as_u64(), first["known"].as_u64()),
        (Some(3), Some(0))
    );
    let second = m.json(&dir, &["commits", "import", "--json"]);
    assert_eq!(
        (second["imported"].as_u64(), second["known"].as_u64()),
        (Some(0), Some(3)),
        "a second import records nothing new"
    );
    assert_eq!(
        m.count("SELECT count(*) FROM knowledge WHERE kind = 'commit'"),
        3
    );
    let list = commits(&m, &dir);
    let subjects: Vec<&str> = list.iter().filter_map(|c| c["subject"].as_str()).collect();
    assert_eq!(subjects, vec!["Three", "Two", "One"], "newest first");
    assert_eq!(list[0]["insertions"], 3);
    assert_eq!(list[0]["author"], "Ada Lovelace");
    assert_eq!(list[0]["complete"], true);
    let since = m.json(
        &dir,
        &["commits", "import", "--since", "2026-01-02", "--json"],
    );
    assert_eq!(since["read"], 2, "--since limits what git lists");
}

#[test]
fn completion_fills_in_author_and_line_counts_of_a_captured_commit() {
    let m = Edge::new("laptop");
    let dir = repository(&m);
    m.hook("session-start", session_start(SESSION, &dir));
    write(&dir, "src/page.rs", 5);
    write(&dir, "README.md", 2);
    let command = "git add -A && git commit -m 'Pages'";
    let stdout = bash(&m, &dir, command);
    m.hook("post-tool-use", bash_payload(&dir, command, &stdout));
    let before = commits(&m, &dir);
    assert_eq!(before[0]["complete"], false);
    assert_eq!(before[0]["author"], "");

    let report = m.json(&dir, &["commits", "complete", "--json"]);
    assert_eq!(report["completed"], 1, "{report}");
    let after = commits(&m, &dir);
    assert_eq!(after.len(), 1);
    let c = &after[0];
    assert_eq!(c["complete"], true);
    assert_eq!(c["author"], "Ada Lovelace");
    assert_eq!(
        (c["insertions"].as_u64(), c["deletions"].as_u64()),
        (Some(7), Some(0))
    );
    let mut files: Vec<&str> = c["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    files.sort();
    assert_eq!(files, vec!["README.md", "src/page.rs"]);
    let text = m.ok_in(&dir, &["commits"]);
    assert!(text.contains("Pages — main, Ada Lovelace, +7 −0"), "{text}");
    let again = m.json(&dir, &["commits", "complete", "--json"]);
    assert_eq!(again["completed"], 0, "nothing waits any more");
}

#[test]
fn a_secret_in_a_commit_message_never_reaches_the_store() {
    let m = Edge::new("laptop");
    let dir = repository(&m);
    m.hook("session-start", session_start(SESSION, &dir));
    let key = "AKIAIOSFODNN7EXAMPLE";
    write(&dir, "src/aws.rs", 1);
    let command = format!("git add -A && git commit -m 'Rotate the key {key}' -m 'It leaked.'");
    let stdout = bash(&m, &dir, &command);
    assert!(stdout.contains(key), "git printed it: {stdout}");
    m.hook("post-tool-use", bash_payload(&dir, &command, &stdout));
    m.json(&dir, &["commits", "complete", "--json"]);
    m.json(&dir, &["commits", "import", "--json"]);

    let list = commits(&m, &dir);
    assert_eq!(list.len(), 1);
    let message = list[0]["message"].as_str().expect("message");
    assert!(message.starts_with("Rotate the key [REDACTED"), "{message}");
    assert!(message.contains("It leaked."), "{message}");
    assert!(!m.stores(key), "the key is nowhere in the store's files");
}
