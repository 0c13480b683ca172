//! Helpers for the cross-component tests: locating the real binaries built by
//! cargo and replaying recorded Claude Code sessions through them; [`pg`] gives each
//! test a throwaway PostgreSQL database; [`edge`] drives an edge machine through the real
//! `solaria` binary; [`mcp`] speaks JSON-RPC to its `solaria mcp` over stdio;
//! [`semantic`] finds the embedding models and counts vectors; [`opencode`] has
//! OpenCode's plugin payloads and the setup a real OpenCode run needs; [`model`] is a
//! scripted model endpoint and [`agents`] runs the real coding agents against it;
//! [`require`] decides what a test does when a tool it needs is missing (skips
//! locally, fails in CI).

pub mod agents;
pub mod bench;
pub mod browser;
pub mod central;
pub mod central_mcp;
pub mod claude_mem;
pub mod daemon;
pub mod edge;
pub mod fault_proxy;
pub mod git;
pub mod isolation;
pub mod knowledge_set;
pub mod mcp;
pub mod mirror;
pub mod model;
pub mod opencode;
pub mod payloads;
pub mod pg;
pub mod records;
pub mod require;
pub mod semantic;
pub mod simulation;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// A binary of the workspace, built into the same target dir as this test.
/// `cargo test --workspace` builds it; run `cargo build` first when testing one package.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> → target/<profile>/<name>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile> dir");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace` (or `cargo test --workspace`) first",
        path.display()
    );
    path
}

/// Waits for `child` to end and collects its output. `bound` is only there so that
/// a child that never ends (the failure a test looks for) fails the test instead of
/// hanging the suite: make it a large multiple of the waits the child is meant to
/// keep, far beyond what any load could add, never a measure of speed. Past it the
/// child is killed and the test fails, naming `what`.
pub fn output_within(
    child: std::process::Child,
    bound: std::time::Duration,
    what: &str,
) -> std::process::Output {
    let pid = child.id();
    let (done, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match output.recv_timeout(bound) {
        Ok(out) => out.expect("wait for the child"),
        Err(_) => {
            // Not reaped yet (its waiter is blocked), so the id is still the child's.
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{what} had not ended after {bound:?}");
        }
    }
}

/// One line of a recorded session.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub event: String,
    pub payload: serde_json::Value,
}

/// Reads a recorded session, substituting the placeholders.
pub fn recorded_session(file: &str, cwd: &Path, session: &str, transcript: &Path) -> Vec<Recorded> {
    let path = workspace().join("deploy/demo/sessions").join(file);
    let text = std::fs::read_to_string(&path).expect("recorded session file");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let line = line
                .replace("__CWD__", &cwd.display().to_string())
                .replace("__TRANSCRIPT__", &transcript.display().to_string())
                .replace("__SESSION__", session);
            let v: serde_json::Value = serde_json::from_str(&line).expect("recorded line is JSON");
            Recorded {
                event: v["event"].as_str().expect("event").to_string(),
                payload: v["payload"].clone(),
            }
        })
        .collect()
}

/// Pipes one payload into `solaria hook EVENT` with the given data dir; checks the
/// hook contract (exit 0, silent stderr) and returns stdout.
pub fn run_hook(solaria: &Path, data_dir: &Path, home: &Path, r: &Recorded) -> Vec<u8> {
    let mut child = Command::new(solaria)
        .args(["hook", &r.event])
        .env("SOLARIA_HOME", data_dir)
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn solaria hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(r.payload.to_string().as_bytes())
        .expect("write payload");
    let out = child.wait_with_output().expect("hook finishes");
    assert!(out.status.success(), "hook {} failed: {out:?}", r.event);
    assert!(
        out.stderr.is_empty(),
        "hook {} wrote to stderr: {out:?}",
        r.event
    );
    out.stdout
}

/// Waits, up to a minute, until `done` holds (a condition outside the test's hands:
/// replication, a process reaching a point); panics saying `what` otherwise.
pub async fn until<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done().await {
        assert!(
            std::time::Instant::now() < deadline,
            "gave up waiting: {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
