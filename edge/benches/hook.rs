//! Hook end to end (store one observation, hook process included,
//! p95 < 10 ms) and SessionStart context, against a store of 100k observations.
//! Baselines from the same run: starting a do-nothing process (`/bin/true`),
//! `solaria --version` (our process start without touching the store) and, when
//! Node.js is installed, `node -e ''` — the floor under any hook written in
//! JavaScript (claude-mem's are), before it does any work.
//!
//!     cargo bench -p solaria-edge --bench hook

mod support;

use serde_json::json;
use solaria_edge::config::ContextConfig;
use solaria_edge::context;
use solaria_edge::store::Store;
use solaria_shared::UnixMillis;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

const RUNS: usize = 200;

fn spawn(program: &str, args: &[&str], home: &Path, stdin: Option<&[u8]>) -> Duration {
    let t = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .env("SOLARIA_HOME", home)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    if let Some(bytes) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(bytes)
            .expect("write");
    }
    let status = child.wait().expect("wait");
    let elapsed = t.elapsed();
    assert!(status.success());
    elapsed
}

fn main() {
    let solaria = env!("CARGO_BIN_EXE_solaria");
    let (dir, path) = store_copy(100_000);
    let home = dir.path();
    assert_eq!(path, home.join("memory.db"));
    let cwd = "/work/bench-project";
    let payload = |n: usize| {
        json!({
            "session_id": "bench-hook-session",
            "transcript_path": "/tmp/none.jsonl",
            "cwd": cwd,
            "hook_event_name": "PostToolUse",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_input": {"command": format!("cargo test case_{n}"), "description": "Run the tests"},
            "tool_response": {"stdout": "running 12 tests\n".to_string() + &"test auth::refresh ... ok\n".repeat(40), "stderr": "", "interrupted": false},
            "tool_use_id": format!("toolu_{n}"),
        })
        .to_string()
    };
    let start = json!({"session_id": "bench-start", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"}).to_string();

    let node = Command::new("node")
        .args(["-e", ""])
        .status()
        .is_ok_and(|s| s.success());
    let mut node_start = Vec::new();
    let mut baseline = Vec::new();
    let mut version = Vec::new();
    let mut hook = Vec::new();
    let mut session_start = Vec::new();
    for _ in 0..5 {
        spawn(
            solaria,
            &["hook", "post-tool-use"],
            home,
            Some(payload(0).as_bytes()),
        );
    }
    // Interleaved so that machine noise hits every case alike.
    for n in 0..RUNS {
        baseline.push(spawn("/bin/true", &[], home, None));
        version.push(spawn(solaria, &["--version"], home, None));
        if node && n % 4 == 0 {
            node_start.push(spawn("node", &["-e", ""], home, None));
        }
        hook.push(spawn(
            solaria,
            &["hook", "post-tool-use"],
            home,
            Some(payload(n).as_bytes()),
        ));
        if n % 4 == 0 {
            session_start.push(spawn(
                solaria,
                &["hook", "session-start"],
                home,
                Some(start.as_bytes()),
            ));
        }
    }
    let store = Store::open(&path, "bench").expect("open");
    let stored: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM observations WHERE session_id IN (SELECT id FROM sessions WHERE agent_session_id = 'bench-hook-session')", [], |r| r.get(0))
        .expect("count");
    assert_eq!(
        stored as usize,
        RUNS + 5,
        "every hook stored its observation"
    );

    header("hook processes, store of 100k observations (process start included)");
    row("baseline: /bin/true", summarize(&mut baseline));
    row("baseline: solaria --version", summarize(&mut version));
    if node {
        row(
            "reference: node -e '' (a JS hook's floor)",
            summarize(&mut node_start),
        );
    }
    let h = summarize(&mut hook);
    row("solaria hook post-tool-use (store one)", h);
    row(
        "solaria hook session-start (context JSON)",
        summarize(&mut session_start),
    );

    // The context builder alone, in process, for a busy project.
    let cfg = ContextConfig::default();
    let busy = project(0);
    let mut ctx = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let text = context::build(&store, &busy, &cfg, UnixMillis::now()).expect("context");
        ctx.push(t.elapsed());
        std::hint::black_box(text);
    }
    row(
        "context::build, busiest project (in process)",
        summarize(&mut ctx),
    );
}
