//! One edge machine for every edge test: a data dir and HOME of its own, a project
//! with a git remote, driven through the real `solaria` binary.

use crate::binary;
use crate::central::Central;
use serde_json::{Value, json};
use solaria_central::storage::{AccountId, PersonId};
use solaria_store::rusqlite;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// How far ahead [`Edge::ok_ahead`] sets a machine's clock: half the offset a sync
/// takes for measurement noise, so no sync corrects it or warns of it, and far more
/// than the milliseconds between two commands.
pub const AHEAD_MS: i64 = solaria_shared::hlc::CLOCK_NOISE_MS / 2;

/// One edge machine: its own data dir and HOME, driven through the real binary.
/// The one harness of every edge test (capture, search, install, sync, the local
/// API, MCP): `solaria` runs with a clean environment (PATH, HOME, SOLARIA_HOME, a
/// recorder for `systemctl`, TZ=UTC, and [`Edge::env`]).
#[derive(Debug)]
pub struct Edge {
    pub root: tempfile::TempDir,
    /// The project the commands run in (remote `git@github.com:acme/api.git`).
    pub project: PathBuf,
    /// Extra environment for every command (e.g. `SOLARIA_CLOCK_SKEW_MS`).
    pub env: Vec<(String, String)>,
    name: String,
    /// Its `XDG_RUNTIME_DIR`: in memory (`/dev/shm`) where there is one, as a user
    /// session's is.
    run: tempfile::TempDir,
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
        let run = tempfile::Builder::new()
            .prefix("solaria-test-run")
            .tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir_in(root.path()))
            .expect("runtime dir");
        let edge = Edge {
            root,
            project,
            env: Vec::new(),
            name: name.to_string(),
            run,
        };
        edge.write_config("");
        // systemd is outside the tests: a recorder stands in for `systemctl`
        // (`systemctl_calls`), failing like a machine without a user manager when
        // `systemctl.fail` exists.
        let recorder = edge.root.path().join("systemctl");
        std::fs::write(
            &recorder,
            format!(
                "#!/bin/sh\necho \"$*\" >> '{root}/systemctl.log'\n\
                 if [ -e '{root}/systemctl.fail' ]; then echo 'Failed to connect to bus: No medium found' >&2; exit 1; fi\n",
                root = edge.root.path().display()
            ),
        )
        .expect("systemctl recorder");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&recorder, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        edge
    }

    /// The machine's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The data dir (`SOLARIA_HOME`).
    pub fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    /// The data dir (`SOLARIA_HOME`).
    pub fn data_dir(&self) -> PathBuf {
        self.data()
    }

    /// This machine's HOME.
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// Writes `config.toml`: this machine's name, then `toml`.
    pub fn write_config(&self, toml: &str) {
        std::fs::create_dir_all(self.data()).expect("data dir");
        let text = format!("machine_name = \"{}\"\n{toml}", self.name);
        std::fs::write(self.data().join("config.toml"), text).expect("config");
    }

    /// The `systemctl` command lines `solaria` ran, in order.
    pub fn systemctl_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.root.path().join("systemctl.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The store's file.
    pub fn db_path(&self) -> PathBuf {
        self.data().join("memory.db")
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

    /// Whether `text` is anywhere in the store's files (database, WAL, shared
    /// memory): where a secret must never be.
    pub fn stores(&self, text: &str) -> bool {
        self.store_bytes()
            .windows(text.len())
            .any(|w| w == text.as_bytes())
    }

    /// The captured tool calls, oldest first, as `tool title error` (`error` 1 when
    /// the capture marked it failed, else 0).
    pub fn tool_calls(&self) -> Vec<String> {
        self.strings(
            "SELECT tool_name || ' ' || title || ' ' || coalesce(json_extract(metadata, '$.error'), 0) \
             FROM observations WHERE kind = 'tool_use' ORDER BY updated",
        )
    }

    /// One number from the store.
    pub fn count(&self, sql: &str) -> i64 {
        self.db().query_row(sql, [], |r| r.get(0)).expect("count")
    }

    /// The first column of every row `sql` selects from the store, as text.
    pub fn strings(&self, sql: &str) -> Vec<String> {
        self.db()
            .prepare(sql)
            .expect("prepare")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    /// What the hooks logged.
    pub fn hook_log(&self) -> String {
        std::fs::read_to_string(self.data().join("logs/hooks.log")).unwrap_or_default()
    }

    /// This machine's `XDG_RUNTIME_DIR`, where its daemon spools hook events: the
    /// test's own, so that it sees the spool and no other test does.
    pub fn runtime_dir(&self) -> PathBuf {
        self.run.path().to_path_buf()
    }

    /// The hook events a daemon acknowledged and has not captured yet (its spool).
    pub fn spooled(&self) -> usize {
        solaria_hook::spool::Spool::waiting(&self.data(), Some(&self.runtime_dir()))
    }

    /// Waits until the running daemon has captured every hook event it acknowledged
    /// (its hooks return before their event is written). Panics after 20 s.
    pub fn settled(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while self.spooled() > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the daemon left {} acknowledged event(s) uncaptured",
                self.spooled()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// A connection to this machine's store (WAL: reading beside a running
    /// `solaria` is fine), with what reading its full-text indexes takes.
    pub fn db(&self) -> rusqlite::Connection {
        let db = rusqlite::Connection::open(self.db_path()).expect("open the store");
        db.busy_timeout(std::time::Duration::from_secs(5))
            .expect("a busy timeout");
        solaria_edge::store::register_sql(&db).expect("the store's SQL functions");
        db
    }

    /// `solaria` with this machine's environment, in its project.
    pub fn cmd(&self) -> Command {
        self.cmd_in(&self.project)
    }

    /// `solaria` with this machine's environment, in `cwd`.
    pub fn cmd_in(&self, cwd: &Path) -> Command {
        self.program_in(&binary("solaria"), cwd)
    }

    /// `program` with this machine's environment, in `cwd`.
    pub fn program_in(&self, program: &Path, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(cwd)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("SOLARIA_HOME", self.data())
            .env("XDG_RUNTIME_DIR", self.runtime_dir())
            .env("SOLARIA_SYSTEMCTL", self.root.path().join("systemctl"))
            .env("TZ", "UTC")
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }

    /// Runs `solaria ARGS` in the project; the output whatever the status.
    pub fn run(&self, args: &[&str]) -> Output {
        self.run_in(&self.project, args)
    }

    /// Runs `solaria ARGS` in `cwd`; the output whatever the status.
    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Output {
        self.cmd_in(cwd).args(args).output().expect("run solaria")
    }

    /// Runs `solaria ARGS` in the project, which must succeed; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.ok_in(&self.project, args)
    }

    /// Runs `solaria ARGS` in `cwd`, which must succeed; its stdout.
    pub fn ok_in(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self.run_in(cwd, args);
        assert!(
            out.status.success(),
            "solaria {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf8")
    }

    /// Runs `solaria ARGS` in the project, which must fail; what it said on stderr.
    pub fn refused(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            !out.status.success(),
            "solaria {args:?} should fail: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Runs `solaria ARGS` in the project like [`Edge::ok`], with this machine's
    /// clock ahead by [`AHEAD_MS`]: what it writes is stamped after every write made
    /// before it, here or on a machine whose clock is right. So a test says which of
    /// two edits is the later one instead of sleeping between them and hoping the
    /// clock moved.
    pub fn ok_ahead(&self, args: &[&str]) -> String {
        let out = self
            .cmd()
            .env("SOLARIA_CLOCK_SKEW_MS", AHEAD_MS.to_string())
            .args(args)
            .output()
            .expect("run solaria");
        assert!(
            out.status.success(),
            "solaria {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf8")
    }

    /// Runs `solaria ARGS` (with `--json` among them) in `cwd` and parses it.
    pub fn json(&self, cwd: &Path, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok_in(cwd, args)).expect("json output")
    }

    /// Records, in the project, the decision several tests ask about ("No ORM for
    /// the billing tables", chosen plain SQL through sqlx, because billing reports
    /// need window functions an ORM hides); its id.
    pub fn decide_no_orm(&self) -> String {
        self.written_id(
            &self.project,
            &[
                "decide",
                "--title",
                "No ORM for the billing tables",
                "--chosen",
                "plain SQL through sqlx",
                "--rationale",
                "billing reports need window functions an ORM hides",
            ],
        )
    }

    /// The ids of the decisions that stand in `cwd`'s project, newest first
    /// (`solaria decisions --json`).
    pub fn standing_decisions(&self, cwd: &Path) -> Vec<String> {
        let list = self.json(cwd, &["decisions", "--json"]);
        list.as_array()
            .unwrap_or_else(|| panic!("a list of decisions: {list}"))
            .iter()
            .filter_map(|d| d["id"].as_str().map(str::to_string))
            .collect()
    }

    /// Runs a knowledge write (`decide …`, `remember …`: `args` without `--json`)
    /// in `cwd`; the id of the record it wrote.
    pub fn written_id(&self, cwd: &Path, args: &[&str]) -> String {
        let mut with_json = args.to_vec();
        with_json.insert(1.min(with_json.len()), "--json");
        let written = self.json(cwd, &with_json);
        written["record"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("{args:?} wrote a record: {written}"))
            .to_string()
    }

    /// Runs `solaria hook EVENT` with `stdin` and checks the hook contract: exit 0
    /// and nothing on stderr.
    pub fn hook_raw(&self, event: &str, stdin: &[u8]) -> Output {
        self.hook_args(&["hook", event], stdin)
    }

    /// Runs `solaria ARGS` (a hook: `hook …`) with `stdin` from outside the
    /// project, and checks the hook contract: exit 0 and nothing on stderr.
    pub fn hook_args(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.hook_with(self.cmd_in(self.root.path()), args, stdin)
    }

    /// Runs `program ARGS` (a hook command such as `solaria-hook …`) with this
    /// machine's environment and `stdin`, from outside the project, and checks the
    /// hook contract: exit 0 and nothing on stderr.
    pub fn hook_program(&self, program: &Path, args: &[&str], stdin: &[u8]) -> Output {
        self.hook_with(self.program_in(program, self.root.path()), args, stdin)
    }

    /// Runs `command ARGS` with `stdin` and checks the hook contract.
    pub fn hook_with(&self, mut command: Command, args: &[&str], stdin: &[u8]) -> Output {
        let mut child = command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn solaria hook");
        std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), stdin)
            .expect("write payload");
        let out = child.wait_with_output().expect("hook finishes");
        assert!(out.status.success(), "hooks always exit 0: {out:?}");
        assert!(
            out.stderr.is_empty(),
            "hooks never print to stderr: {out:?}"
        );
        out
    }

    /// Pipes `payload` into `solaria hook EVENT` (the hook contract checked).
    pub fn hook(&self, event: &str, payload: impl std::borrow::Borrow<Value>) -> Output {
        self.hook_raw(event, payload.borrow().to_string().as_bytes())
    }

    /// A prompt typed in agent session `session`.
    pub fn prompt(&self, session: &str, text: &str) {
        let cwd = self.project.display().to_string();
        self.hook(
            "user-prompt-submit",
            json!({"session_id": session, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": text}),
        );
    }

    /// Prompts in their own sessions, each made `days` old (creation times
    /// rewritten in the store: the hooks stamp records with the time they run).
    pub fn old_prompts(&self, ages: &[(i64, &str)]) {
        const DAY_MS: i64 = 86_400_000;
        let now = solaria_shared::UnixMillis::now().0;
        for (n, (days, text)) in ages.iter().enumerate() {
            self.prompt(&format!("old-{n}"), text);
            let db = self.db();
            let when = now - days * DAY_MS;
            for sql in [
                "UPDATE observations SET created_at = ?1 WHERE title = ?2",
                "UPDATE sessions SET started_at = ?1 WHERE id IN (SELECT session_id FROM observations WHERE title = ?2)",
            ] {
                db.execute(sql, rusqlite::params![when, text]).expect("age");
            }
        }
    }

    /// `solaria search --json Q`.
    pub fn search(&self, q: &str) -> Vec<Value> {
        let out = self.ok(&["search", "--json", q]);
        serde_json::from_str::<Vec<Value>>(&out).expect("json")
    }

    /// `solaria login` to `c` with an enrollment token, trusting the CA at `ca`.
    pub fn login(&self, c: &Central, token: &str, ca: &Path) {
        self.login_to(&c.url, token, ca);
    }

    /// `solaria login` to the service at `url` with an enrollment token, trusting the
    /// CA at `ca`.
    pub fn login_to(&self, url: &str, token: &str, ca: &Path) {
        self.ok(&[
            "login",
            url,
            "--token",
            token,
            "--ca-cert",
            ca.to_str().expect("path"),
        ]);
    }
}

impl Edge {
    /// Points this machine at another replica of the service it logged in to, as a
    /// load balancer would: the server its login saved is rewritten (its credential
    /// is good with every replica, which share the database and the signing key).
    pub fn point_at(&self, url: &str) {
        let path = self.data_dir().join("credentials.json");
        let mut saved: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("credentials")).expect("json");
        saved["server"] = Value::String(url.to_string());
        std::fs::write(&path, serde_json::to_vec(&saved).expect("json")).expect("write");
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

impl Edge {
    /// Enrolls this machine as one of `person`'s in `account` of the TLS server `c`.
    pub async fn enroll_as(&self, c: &Central, account: AccountId, person: PersonId) {
        let ca = write_ca(c, self.root.path());
        let token = c
            .storage
            .enrollment_token_for(account, person, std::time::Duration::from_secs(600))
            .await
            .expect("token");
        self.login(c, &token, &ca);
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
