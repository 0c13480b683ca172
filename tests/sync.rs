//! Two edge machines and a central service: the real `solaria` binary on each side
//! of TLS on loopback, a real PostgreSQL behind the server. What one machine captures
//! becomes searchable on the other after a sync; deletions travel; private spans and
//! refused machines stay out; a server outage loses nothing.

use serde_json::{Value, json};
use solaria_tests::binary;
use solaria_tests::central::{Central, Options};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// One edge machine: its own data dir and HOME, driven through the real binary.
struct Edge {
    root: tempfile::TempDir,
    project: PathBuf,
}

impl Edge {
    fn new(name: &str) -> Edge {
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
        Edge { root, project }
    }

    fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new(binary("solaria"));
        c.current_dir(&self.project)
            .env("SOLARIA_HOME", self.data())
            .env("HOME", self.root.path().join("home"));
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run solaria")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "solaria {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf8")
    }

    fn hook(&self, event: &str, payload: Value) {
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

    fn prompt(&self, session: &str, text: &str) {
        let cwd = self.project.display().to_string();
        self.hook("user-prompt-submit", json!({"session_id": session, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": text}));
    }

    fn search(&self, q: &str) -> Vec<Value> {
        let out = self.ok(&["search", "--json", q]);
        serde_json::from_str::<Vec<Value>>(&out).expect("json")
    }

    fn login(&self, c: &Central, token: &str, ca: &Path) {
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

async fn enroll_token(c: &Central, account: solaria_central::storage::AccountId) -> String {
    c.storage
        .create_enrollment_token(account, std::time::Duration::from_secs(600))
        .await
        .expect("token")
}

fn write_ca(c: &Central, dir: &Path) -> PathBuf {
    let path = dir.join("ca.pem");
    std::fs::write(&path, c.ca_pem.as_deref().expect("tls server")).expect("ca");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_one_machine_captures_the_other_finds_after_a_sync() {
    let c = Central::start_with(Options {
        tls: true,
        ..Options::default()
    })
    .await;
    let acct = c.account("acme").await;
    let laptop = Edge::new("laptop");
    let desktop = Edge::new("desktop");
    let ca = write_ca(&c, laptop.root.path());
    laptop.login(&c, &enroll_token(&c, acct).await, &ca);
    desktop.login(&c, &enroll_token(&c, acct).await, &ca);

    laptop.prompt(
        "s1",
        "rotate refresh tokens in renew_jwt <private>my home is 12 Calle Mayor</private>",
    );
    let cwd = laptop.project.display().to_string();
    laptop.hook("post-tool-use", json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": "cargo test renew_jwt"}, "tool_response": {"stdout": "test result: ok"}}));
    laptop.hook(
        "stop",
        json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "Stop"}),
    );

    let out = laptop.ok(&["sync"]);
    assert!(
        out.contains("pushed 4"),
        "session, prompt, tool call, summary: {out}"
    );
    let again = laptop.ok(&["sync"]);
    assert!(
        again.contains("pushed 0"),
        "nothing new, nothing re-sent: {again}"
    );

    let out = desktop.ok(&["sync"]);
    assert!(out.contains("pulled 4"), "{out}");
    let hits = desktop.search("renew_jwt");
    assert!(hits.len() >= 2, "{hits:?}");
    let index = desktop.ok(&["search", "renew_jwt"]);
    assert!(
        index.contains("@laptop"),
        "labelled with the machine's name: {index}"
    );
    let context = desktop.ok(&["context"]);
    assert!(
        context.contains("(laptop)") && context.contains("renew_jwt"),
        "{context}"
    );

    // The private span stayed on the laptop: searchable there, absent from PostgreSQL
    // and from the desktop.
    assert!(
        !laptop.search("Calle").is_empty(),
        "the private span is searchable where it was typed"
    );
    assert!(desktop.search("Calle").is_empty());
    let central_text: Vec<String> =
        sqlx::query_scalar("SELECT title || input || response FROM memory_observations_remote")
            .fetch_all(c.storage.pool())
            .await
            .expect("rows");
    assert!(
        central_text.iter().all(|t| !t.contains("Calle Mayor")),
        "{central_text:?}"
    );

    // A deletion on the laptop disappears from the desktop's searches.
    let id = laptop.search("cargo")[0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    laptop.ok(&["forget", &id]);
    laptop.ok(&["sync"]);
    desktop.ok(&["sync"]);
    assert!(
        desktop
            .search("cargo")
            .iter()
            .all(|h| h["id"] != id.as_str()),
        "tombstone applied"
    );

    let slash = desktop.ok(&["slash", "sync"]);
    assert!(
        slash.contains("Synced with") && slash.contains("pushed 0"),
        "/memory sync: {slash}"
    );
    let status = desktop.ok(&["status"]);
    assert!(
        status.contains(&c.url) && status.contains("success") && status.contains("pending:    0"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_edits_converge_to_the_same_winner_and_the_loser_is_told() {
    let c = Central::start_with(Options {
        tls: true,
        ..Options::default()
    })
    .await;
    let acct = c.account("acme").await;
    let a = Edge::new("a");
    let b = Edge::new("b");
    let ca = write_ca(&c, a.root.path());
    a.login(&c, &enroll_token(&c, acct).await, &ca);
    b.login(&c, &enroll_token(&c, acct).await, &ca);
    a.prompt("s", "shared decision about caching");
    a.ok(&["sync"]);
    b.ok(&["sync"]);
    let id = b.search("caching")[0]["id"]
        .as_str()
        .expect("id")
        .to_string();

    // Both machines forget the same record without syncing in between; b acts last.
    a.ok(&["forget", &id]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let session = b.search("caching")[0]["session_id"]
        .as_str()
        .expect("s")
        .to_string();
    b.ok(&["forget", "--session", &session]);
    b.ok(&["sync"]);
    let out = a.ok(&["sync"]);
    assert!(
        out.contains("conflicts 1"),
        "a's change lost and a is told: {out}"
    );
    let conflicts = a.ok(&["conflicts"]);
    assert!(
        conflicts.contains(&id) && conflicts.contains("lost to b"),
        "{conflicts}"
    );
    b.ok(&["sync"]);

    let version = |e: &Edge| -> (i64, String, i64) {
        rusqlite::Connection::open(e.data().join("memory.db"))
            .expect("db")
            .query_row(
                "SELECT updated, machine_id, deleted FROM observations WHERE id = ?1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("row")
    };
    assert_eq!(
        version(&a),
        version(&b),
        "both machines hold the same winner"
    );
    let status = a.ok(&["status"]);
    assert!(status.contains("conflicts:  1"), "{status}");
    a.ok(&["conflicts", "--ack"]);
    assert!(a.ok(&["status"]).contains("conflicts:  0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outages_and_revocation_fail_clearly_and_lose_nothing() {
    let c = Central::start_with(Options {
        tls: true,
        ..Options::default()
    })
    .await;
    let acct = c.account("acme").await;
    let a = Edge::new("a");
    let ca = write_ca(&c, a.root.path());
    a.login(&c, &enroll_token(&c, acct).await, &ca);
    a.prompt("s", "before the outage");
    a.ok(&["sync"]);

    // Server down: capture goes on, the sync fails with the reason, nothing is lost.
    let storage = c.storage.clone();
    let url = c.url.clone();
    c.stop().await;
    a.prompt("s", "during the outage");
    let out = a.run(&["sync"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the server"), "{err}");
    assert!(
        a.ok(&["status"]).contains("failed"),
        "the failure is visible"
    );
    assert_eq!(a.search("outage").len(), 2, "captured offline");

    // The server comes back on the same port and database: the next sync catches up.
    let port: u16 = url.rsplit(':').next().expect("port").parse().expect("port");
    let c = Central::serve_on(
        storage,
        Options {
            tls: true,
            ..Options::default()
        },
        port,
    )
    .await;
    std::fs::write(
        a.data().join("server-ca.pem"),
        c.ca_pem.as_deref().expect("ca"),
    )
    .expect("new ca");
    let out = a.ok(&["sync"]);
    assert!(out.contains("pushed 1"), "{out}");
    assert_eq!(c.count("memory_observations_remote").await, 2);

    // Revoked: refused with a clear message.
    let machine: String = sqlx::query_scalar("SELECT id::text FROM memory_machines")
        .fetch_one(c.storage.pool())
        .await
        .expect("machine");
    c.storage
        .revoke_machine(machine.parse().expect("id"))
        .await
        .expect("revoke");
    let out = a.run(&["sync"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("revoked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let not_logged = Edge::new("x");
    let out = not_logged.run(&["sync"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("solaria login"));
}
