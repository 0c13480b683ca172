//! One edge machine for the sync tests: a data dir and HOME of its own, a project
//! with a git remote, driven through the real `solaria` binary.

use crate::binary;
use crate::central::Central;
use serde_json::{Value, json};
use solaria_central::storage::AccountId;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// One edge machine: its own data dir and HOME, driven through the real binary.
#[derive(Debug)]
pub struct Edge {
    pub root: tempfile::TempDir,
    /// The project the commands run in (remote `git@github.com:acme/api.git`).
    pub project: PathBuf,
    /// Extra environment for every command (e.g. `SOLARIA_CLOCK_SKEW_MS`).
    pub env: Vec<(String, String)>,
}

impl Edge {
    /// A machine named `name`, with an empty data dir.
    pub fn new(name: &str) -> Edge {
        let root = tempfile::tempdir().expect("tempdir");
        let project = root.path().join("api");
        std::fs::create_dir_all(project.join(".git")).expect("repo");
        std::fs::write(
            project.join(".git/config"),
            "[remote \"origin\"]\n\turl = git@github.com:acme/api.git\n",
        )
        .expect("git config");
        std::fs::create_dir_all(root.path().join("home")).expect("home");
        std::fs::create_dir_all(root.path().join("data")).expect("data");
        std::fs::write(
            root.path().join("data/config.toml"),
            format!("machine_name = \"{name}\"\n"),
        )
        .expect("config");
        Edge {
            root,
            project,
            env: Vec::new(),
        }
    }

    /// The data dir (`SOLARIA_HOME`).
    pub fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    /// A connection to this machine's store (WAL: reading beside a running
    /// `solaria` is fine).
    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.data().join("memory.db")).expect("open the store")
    }

    /// `solaria` with this machine's environment, in its project.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(binary("solaria"));
        c.current_dir(&self.project)
            .env("SOLARIA_HOME", self.data())
            .env("HOME", self.root.path().join("home"))
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run solaria")
    }

    /// Runs `solaria ARGS`, which must succeed; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "solaria {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf8")
    }

    /// Pipes `payload` into `solaria hook EVENT`.
    pub fn hook(&self, event: &str, payload: Value) {
        let mut child = self
            .cmd()
            .args(["hook", event])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("hook");
        std::io::Write::write_all(
            &mut child.stdin.take().expect("stdin"),
            payload.to_string().as_bytes(),
        )
        .expect("write");
        assert!(child.wait().expect("wait").success());
    }

    /// A prompt typed in agent session `session`.
    pub fn prompt(&self, session: &str, text: &str) {
        let cwd = self.project.display().to_string();
        self.hook(
            "user-prompt-submit",
            json!({"session_id": session, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": text}),
        );
    }

    /// `solaria search --json Q`.
    pub fn search(&self, q: &str) -> Vec<Value> {
        let out = self.ok(&["search", "--json", q]);
        serde_json::from_str::<Vec<Value>>(&out).expect("json")
    }

    /// `solaria login` to `c` with an enrollment token, trusting the CA at `ca`.
    pub fn login(&self, c: &Central, token: &str, ca: &Path) {
        self.ok(&[
            "login",
            &c.url,
            "--token",
            token,
            "--ca-cert",
            ca.to_str().expect("path"),
        ]);
    }
}

impl Edge {
    /// Enrolls this machine in `account` of the TLS server `c` (trusting its CA) and
    /// logs it in, as a user would with `solaria login`.
    pub async fn enroll(&self, c: &Central, account: AccountId) {
        let ca = write_ca(c, self.root.path());
        self.login(c, &enroll_token(c, account).await, &ca);
    }
}

/// A fresh enrollment token of `account`.
pub async fn enroll_token(c: &Central, account: AccountId) -> String {
    c.storage
        .create_enrollment_token(account, std::time::Duration::from_secs(600))
        .await
        .expect("token")
}

/// Writes the CA certificate of a TLS server `c` to `dir/ca.pem`.
pub fn write_ca(c: &Central, dir: &Path) -> PathBuf {
    let path = dir.join("ca.pem");
    std::fs::write(&path, c.ca_pem.as_deref().expect("tls server")).expect("ca");
    path
}
