//! Many hook processes at once on one store (Claude Code runs hooks in parallel).

use serde_json::json;
use solaria_tests::edge::Edge;
use solaria_tests::payloads::*;
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn twenty_hooks_at_once_lose_nothing_even_on_a_fresh_store() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", None);
    // Start all twenty before any finishes: they race to create and migrate the store.
    let mut children = Vec::new();
    for n in 0..20 {
        let payload = tool(
            "parallel",
            &p,
            "Bash",
            json!({"command": format!("job {n}")}),
            json!({"stdout": format!("done {n}")}),
        );
        let child = Command::new(solaria())
            .args(["hook", "post-tool-use"])
            .env("SOLARIA_HOME", m.data_dir())
            .env("HOME", m.home())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        children.push((child, payload));
    }
    for (child, payload) in &mut children {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(payload.to_string().as_bytes())
            .expect("write");
    }
    for (child, _) in children {
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success() && out.stderr.is_empty());
    }
    assert_eq!(
        m.count("SELECT count(*) FROM observations"),
        20,
        "log: {}",
        m.hook_log()
    );
    assert_eq!(
        m.count("SELECT count(DISTINCT title) FROM observations"),
        20
    );
    assert_eq!(
        m.count("SELECT count(*) FROM sessions"),
        1,
        "one session, not one per racer"
    );
    assert_eq!(
        m.count("SELECT count(DISTINCT updated) FROM observations"),
        20,
        "distinct HLC stamps"
    );
    assert!(m.hook_log().is_empty(), "{}", m.hook_log());
}
