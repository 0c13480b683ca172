//! Hook end to end (store one observation, hook process included,
//! p95 < 10 ms), the same for a `git commit` run through Bash (the observation
//! and the commit record, its sha made full from the repository's files), and
//! SessionStart context, against a store of 100k observations; and the same
//! capture and context through `solaria-hook` to a running daemon (`relay`) on a
//! second copy of that store.
//! Baselines from the same run: starting a do-nothing process (`/bin/true`),
//! `solaria --version` (our process start without touching the store) and, when
//! Node.js is installed, `node -e ''` — the floor under any hook written in
//! JavaScript (claude-mem's are), before it does any work.
//!
//!     cargo build --release -p solaria-hook && cargo bench -p solaria-edge --bench hook
//!
//! With `SOLARIA_BENCH_HOOK_CLIENT` naming a statically linked `solaria-hook`
//! (`deploy/static-hook.sh release` prints one), that client is measured too, in
//! the same run. A relayed capture is answered before it is written, so each
//! relayed call is followed by a short untimed pause, as hooks are in an agent.

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
    // A second copy of the store, served by a daemon that takes the hooks' events.
    let (relay_dir, relay_path) = store_copy(100_000);
    let relay_home = relay_dir.path();
    std::fs::write(relay_home.join("config.toml"), "[serve]\nhttp_port = 0\n").expect("config");
    let mut daemon = Command::new(solaria)
        .args(["serve", "--every", "86400", "--embed-every", "3600"])
        .env("SOLARIA_HOME", relay_home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("solaria serve");
    let socket = relay_home.join("hooks.sock");
    let waited = Instant::now();
    while !socket.exists() {
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "no hooks' socket"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // `solaria-hook` is its own package's binary, built beside `solaria`.
    let client_path = Path::new(env!("CARGO_BIN_EXE_solaria")).with_file_name("solaria-hook");
    assert!(
        client_path.is_file(),
        "build the hook client first: cargo build --release -p solaria-hook"
    );
    let client = client_path.to_str().expect("utf-8");
    let static_client = std::env::var("SOLARIA_BENCH_HOOK_CLIENT").ok();
    let mut relayed_static = Vec::new();
    // The daemon writes an acknowledged event after answering: let it, untimed.
    let pause = || std::thread::sleep(Duration::from_millis(5));
    let relay_dir_arg = relay_home.to_str().expect("utf-8");
    let mut relayed = Vec::new();
    let mut relayed_start = Vec::new();
    // OpenCode's plugin: the same tool call as OpenCode hands it over.
    let opencode = |n: usize| {
        json!({
            "cwd": cwd,
            "input": {"tool": "bash", "sessionID": "ses_bench", "callID": format!("call_{n}"),
                      "args": {"command": format!("cargo test case_{n}"), "description": "Run the tests"}},
            "output": {"title": "Run the tests", "output": "running 12 tests\n".to_string() + &"test auth::refresh ... ok\n".repeat(40), "metadata": {"exit": 0}},
        })
        .to_string()
    };
    let mut opencode_process = Vec::new();
    let mut opencode_relayed = Vec::new();
    let repo = CommitRepo::new(RUNS + 5);
    let start = json!({"session_id": "bench-start", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"}).to_string();

    let node = Command::new("node")
        .args(["-e", ""])
        .status()
        .is_ok_and(|s| s.success());
    let mut node_start = Vec::new();
    let mut baseline = Vec::new();
    let mut version = Vec::new();
    let mut hook = Vec::new();
    let mut commit_hook = Vec::new();
    let mut session_start = Vec::new();
    for n in 0..5 {
        spawn(
            solaria,
            &["hook", "post-tool-use"],
            home,
            Some(payload(0).as_bytes()),
        );
        spawn(
            solaria,
            &["hook", "post-tool-use"],
            home,
            Some(repo.payload(RUNS + n).as_bytes()),
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
        commit_hook.push(spawn(
            solaria,
            &["hook", "post-tool-use"],
            home,
            Some(repo.payload(n).as_bytes()),
        ));
        relayed.push(spawn(
            client,
            &["--data-dir", relay_dir_arg, "post-tool-use"],
            relay_home,
            Some(payload(n).as_bytes()),
        ));
        pause();
        if let Some(static_client) = &static_client {
            relayed_static.push(spawn(
                static_client,
                &["--data-dir", relay_dir_arg, "post-tool-use"],
                relay_home,
                Some(payload(n).as_bytes()),
            ));
            pause();
        }
        if n % 2 == 0 {
            opencode_process.push(spawn(
                solaria,
                &["hook", "opencode", "tool.execute.after"],
                home,
                Some(opencode(n).as_bytes()),
            ));
            opencode_relayed.push(spawn(
                client,
                &[
                    "--data-dir",
                    relay_dir_arg,
                    "opencode",
                    "tool.execute.after",
                ],
                relay_home,
                Some(opencode(n).as_bytes()),
            ));
            pause();
        }
        if n % 4 == 0 {
            relayed_start.push(spawn(
                client,
                &["--data-dir", relay_dir_arg, "session-start"],
                relay_home,
                Some(start.as_bytes()),
            ));
            session_start.push(spawn(
                solaria,
                &["hook", "session-start"],
                home,
                Some(start.as_bytes()),
            ));
        }
    }
    // Every acknowledged event written before the daemon stops.
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from);
    let spooled = || solaria_hook::spool::Spool::waiting(relay_home, runtime_dir.as_deref());
    let waited = Instant::now();
    while spooled() > 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "spool not drained"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
    let relay_store = Store::open(&relay_path, "bench").expect("open");
    let relayed_count: i64 = relay_store
        .conn()
        .query_row("SELECT count(*) FROM observations WHERE session_id IN (SELECT id FROM sessions WHERE agent_session_id = 'bench-hook-session')", [], |r| r.get(0))
        .expect("count");
    assert_eq!(
        relayed_count as usize,
        RUNS * if static_client.is_some() { 2 } else { 1 },
        "the daemon stored every relayed event"
    );
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

    let commits: i64 = store
        .conn()
        .query_row(
            "SELECT count(*) FROM knowledge WHERE kind = 'commit'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(
        commits as usize,
        RUNS + 5,
        "every commit hook stored its commit"
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
    let c = summarize(&mut commit_hook);
    row(
        "solaria hook post-tool-use, a git commit (+ commit record)",
        c,
    );
    println!(
        "commit capture / plain capture: p50 {:.2}, p95 {:.2}",
        c.p50.as_secs_f64() / h.p50.as_secs_f64(),
        c.p95.as_secs_f64() / h.p95.as_secs_f64()
    );
    row(
        "solaria hook session-start (context JSON)",
        summarize(&mut session_start),
    );
    row(
        "solaria-hook post-tool-use, daemon running (relayed)",
        summarize(&mut relayed),
    );
    if static_client.is_some() {
        row(
            "solaria-hook post-tool-use, daemon running, static client",
            summarize(&mut relayed_static),
        );
    }
    row(
        "solaria-hook session-start, daemon running (relayed)",
        summarize(&mut relayed_start),
    );
    row(
        "OpenCode tool.execute.after: solaria hook opencode",
        summarize(&mut opencode_process),
    );
    row(
        "OpenCode tool.execute.after: solaria-hook, daemon running",
        summarize(&mut opencode_relayed),
    );

    // The context builder alone, in process, for a busy project: outside a
    // repository, and on a branch (its sessions brought forward), interleaved.
    let cfg = ContextConfig::default();
    let busy = project(0);
    let (mut ctx, mut on_branch) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        for (branch, times) in [(None, &mut ctx), (Some("main"), &mut on_branch)] {
            let t = Instant::now();
            let text =
                context::build(&store, (&busy, branch), &cfg, UnixMillis::now()).expect("context");
            times.push(t.elapsed());
            std::hint::black_box(text);
        }
    }
    row(
        "context::build, busiest project (in process)",
        summarize(&mut ctx),
    );
    row(
        "context::build, busiest project, on a branch",
        summarize(&mut on_branch),
    );
}

/// A real repository with one commit per hook run (made once, before timing),
/// and the PostToolUse payload of each `git commit` as Claude Code sends it.
struct CommitRepo {
    _dir: tempfile::TempDir,
    cwd: String,
    /// (abbreviated sha, subject) of each commit, oldest first.
    commits: Vec<(String, String)>,
}

impl CommitRepo {
    fn new(count: usize) -> CommitRepo {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", dir.path())
                .output()
                .expect("git");
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        git(&["init", "-q", "-b", "feat/keyset-pages"]);
        git(&["config", "user.name", "Bench"]);
        git(&["config", "user.email", "bench@example.com"]);
        git(&["remote", "add", "origin", "git@github.com:acme/bench.git"]);
        let mut commits = Vec::new();
        for n in 0..count {
            let subject = format!("Keyset pagination, step {n}");
            git(&["commit", "-q", "--allow-empty", "-m", &subject]);
            let sha = git(&["rev-parse", "--short", "HEAD"]).trim().to_string();
            commits.push((sha, subject));
        }
        let cwd = dir.path().display().to_string();
        CommitRepo {
            _dir: dir,
            cwd,
            commits,
        }
    }

    /// Commit `n` as the agent made it: a heredoc message with a body and a
    /// trailer, git's summary line in the output. All but the last are found
    /// among the loose objects, not at HEAD: the slower of the two look-ups.
    fn payload(&self, n: usize) -> String {
        let (sha, subject) = &self.commits[n];
        let command = format!(
            "git add -A && git commit -m \"$(cat <<'EOF'\n{subject}\n\nOffsets skipped rows under concurrent inserts.\n\nDecision: D#0123456789ab\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\""
        );
        json!({
            "session_id": "bench-commit-session",
            "transcript_path": "/tmp/none.jsonl",
            "cwd": self.cwd,
            "hook_event_name": "PostToolUse",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "Commit the change"},
            "tool_response": {"stdout": format!("[feat/keyset-pages {sha}] {subject}\n 2 files changed, 40 insertions(+), 3 deletions(-)\n"), "stderr": "", "interrupted": false},
            "tool_use_id": format!("toolu_commit_{n}"),
        })
        .to_string()
    }
}
