//! Shared helpers for the edge's behaviour tests: a throwaway machine (its own
//! SOLARIA_HOME), the real `solaria` binary, and Claude Code-shaped payloads.

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

/// The real binary under test.
pub fn solaria() -> &'static str {
    env!("CARGO_BIN_EXE_solaria")
}

/// One simulated machine: a private data dir and a HOME of its own.
pub struct Machine {
    pub root: TempDir,
}

impl Machine {
    pub fn new() -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(root.path().join("home")).expect("home");
        let m = Machine { root };
        m.write_config("");
        // systemd is outside this test: a recorder stands in for `systemctl`
        // (`systemctl_calls`), failing like a machine without a user manager when
        // `systemctl.fail` exists.
        let recorder = m.root.path().join("systemctl");
        std::fs::write(
            &recorder,
            format!(
                "#!/bin/sh\necho \"$*\" >> '{root}/systemctl.log'\n\
                 if [ -e '{root}/systemctl.fail' ]; then echo 'Failed to connect to bus: No medium found' >&2; exit 1; fi\n",
                root = m.root.path().display()
            ),
        )
        .expect("systemctl recorder");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&recorder, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        m
    }

    /// The `systemctl` command lines `solaria` ran, in order.
    pub fn systemctl_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.root.path().join("systemctl.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// Writes `config.toml` (this machine is always named `test-machine`).
    pub fn write_config(&self, toml: &str) {
        std::fs::create_dir_all(self.data_dir()).expect("data dir");
        let text = format!("machine_name = \"test-machine\"\n{toml}");
        std::fs::write(self.data_dir().join("config.toml"), text).expect("config");
    }

    fn command(&self, cwd: &Path) -> Command {
        let mut cmd = Command::new(solaria());
        cmd.current_dir(cwd)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("SOLARIA_HOME", self.data_dir())
            .env("SOLARIA_SYSTEMCTL", self.root.path().join("systemctl"))
            .env("TZ", "UTC");
        cmd
    }

    /// Runs `solaria hook <event>` with `stdin` and checks the hook contract:
    /// exit 0 and nothing on stderr.
    pub fn hook_raw(&self, event: &str, stdin: &[u8]) -> Output {
        let mut child = self
            .command(self.root.path())
            .args(["hook", event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn solaria hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin)
            .expect("write payload");
        let out = child.wait_with_output().expect("hook finishes");
        assert!(out.status.success(), "hooks always exit 0: {out:?}");
        assert!(
            out.stderr.is_empty(),
            "hooks never print to stderr: {out:?}"
        );
        out
    }

    pub fn hook(&self, event: &str, payload: &Value) -> Output {
        self.hook_raw(event, payload.to_string().as_bytes())
    }

    /// Runs a CLI command in `cwd`; returns the output whatever the status.
    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Output {
        self.command(cwd).args(args).output().expect("run solaria")
    }

    /// Runs a CLI command that must succeed; returns its stdout.
    pub fn ok(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self.run_in(cwd, args);
        assert!(
            out.status.success(),
            "solaria {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf8 stdout")
    }

    /// Runs a CLI command with `--json` output and parses it.
    pub fn json(&self, cwd: &Path, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(cwd, args)).expect("json output")
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir().join("memory.db")
    }

    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.db_path()).expect("open store")
    }

    /// The raw bytes of the store, its WAL and shared-memory files.
    pub fn store_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        for suffix in ["", "-wal", "-shm"] {
            let p = PathBuf::from(format!("{}{suffix}", self.db_path().display()));
            if let Ok(b) = std::fs::read(p) {
                bytes.extend(b);
            }
        }
        bytes
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.db().query_row(sql, [], |r| r.get(0)).expect("count")
    }

    pub fn hook_log(&self) -> String {
        std::fs::read_to_string(self.data_dir().join("logs/hooks.log")).unwrap_or_default()
    }
}

/// A project directory that is a git clone of `remote` (or a plain directory).
pub fn project(parent: &Path, name: &str, remote: Option<&str>) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(dir.join("src")).expect("project dir");
    if let Some(url) = remote {
        std::fs::create_dir_all(dir.join(".git")).expect(".git");
        std::fs::write(
            dir.join(".git/config"),
            format!("[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"),
        )
        .expect("git config");
    }
    dir
}

/// The fields every Claude Code hook payload carries.
pub fn base(event: &str, session: &str, cwd: &Path) -> Value {
    json!({
        "session_id": session,
        "transcript_path": format!("/tmp/nonexistent/{session}.jsonl"),
        "cwd": cwd.display().to_string(),
        "hook_event_name": event,
        "permission_mode": "default",
    })
}

pub fn with(mut v: Value, extra: Value) -> Value {
    if let (Some(map), Value::Object(add)) = (v.as_object_mut(), extra) {
        map.extend(add);
    }
    v
}

pub fn session_start(session: &str, cwd: &Path) -> Value {
    with(
        base("SessionStart", session, cwd),
        json!({"source": "startup"}),
    )
}

pub fn prompt(session: &str, cwd: &Path, text: &str) -> Value {
    with(
        base("UserPromptSubmit", session, cwd),
        json!({"prompt": text}),
    )
}

pub fn tool(session: &str, cwd: &Path, name: &str, input: Value, response: Value) -> Value {
    with(
        base("PostToolUse", session, cwd),
        json!({
            "tool_name": name,
            "tool_input": input,
            "tool_response": response,
            "tool_use_id": format!("toolu_{}", uuid_like()),
        }),
    )
}

pub fn stop(session: &str, cwd: &Path) -> Value {
    with(
        base("Stop", session, cwd),
        json!({"stop_hook_active": false}),
    )
}

pub fn session_end(session: &str, cwd: &Path) -> Value {
    with(
        base("SessionEnd", session, cwd),
        json!({"reason": "prompt_input_exit"}),
    )
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{:016x}",
        N.fetch_add(1, Ordering::Relaxed) + std::process::id() as u64 * 1_000_000
    )
}
