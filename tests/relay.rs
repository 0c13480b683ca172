//! Hooks handed to the running daemon through its private socket (`solaria-hook`):
//! captured and answered by the daemon, captured by a `solaria hook` process when no
//! daemon listens (none started, or one killed with -9), never held up by a daemon
//! that does not answer, a request the daemon refuses (another version) run by
//! `solaria hook` instead, a malformed request logged and refused, and a second
//! daemon leaving the socket to the first. The spool: events a killed daemon left
//! captured by the next, one the store refused kept until it takes another, a file
//! that holds no event dropped, and a spool removed under a running daemon.

use serde_json::{Value, json};
use solaria_store::rusqlite;
use solaria_tests::binary;
use solaria_tests::daemon::*;
use solaria_tests::edge::Edge;
use solaria_tests::opencode as oc;
use solaria_tests::payloads::*;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn socket(edge: &Edge) -> PathBuf {
    edge.data().join("hooks.sock")
}

/// `solaria serve` on `edge`, once its hooks' socket listens.
fn relaying(edge: &Edge) -> Serve {
    relaying_with(edge, "")
}

/// The same with `extra` config.
fn relaying_with(edge: &Edge, extra: &str) -> Serve {
    let mut api = serve_with(edge, extra);
    wait_for(edge, &mut api.daemon, "the hooks' socket", || {
        socket(edge).exists().then_some(())
    });
    api
}

/// A copy of `solaria-hook` alone in a directory of `edge`'s: with no `solaria`
/// beside it, what it captures the daemon captured. The statically linked build
/// `deploy/install.sh` ships when `SOLARIA_TEST_HOOK_CLIENT` names it (`deploy/test.sh`
/// does), else this build's (in CI a missing one fails: `solaria_tests::require`).
fn lone_client(edge: &Edge) -> PathBuf {
    let dir = edge.root.path().join("lone");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let client = dir.join("solaria-hook");
    let built = match std::env::var_os("SOLARIA_TEST_HOOK_CLIENT").filter(|p| !p.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => {
            solaria_tests::require::missing(
                "SOLARIA_TEST_HOOK_CLIENT is not set",
                "set it to the output of `bash deploy/static-hook.sh debug`",
                "testing this build's solaria-hook instead of the static one",
            );
            binary("solaria-hook")
        }
    };
    std::fs::copy(&built, &client).expect("copy solaria-hook");
    client
}

/// Runs `client [--data-dir <edge's>] EVENT…` with `payload`, as Claude Code would.
fn hook(edge: &Edge, client: &Path, event: &[&str], payload: &Value) -> std::process::Output {
    let data = edge.data();
    let mut args = vec!["--data-dir", data.to_str().expect("utf-8")];
    args.extend_from_slice(event);
    edge.hook_program(client, &args, payload.to_string().as_bytes())
}

/// The hook of a Bash `ls` in session s-1, as Claude Code sends it.
fn ls_hook(edge: &Edge, client: &Path) -> std::process::Output {
    let call = tool(
        "s-1",
        &edge.project,
        "Bash",
        json!({"command": "ls"}),
        json!("a b"),
    );
    hook(edge, client, &["post-tool-use"], &call)
}

fn tool_titles(edge: &Edge) -> Vec<String> {
    edge.strings(
        "SELECT title FROM observations WHERE kind = 'tool_use' ORDER BY created_at, title",
    )
}

#[test]
fn a_running_daemon_captures_and_answers_the_hooks() {
    let edge = Edge::new("laptop");
    let _api = relaying(&edge);
    let mode = std::fs::metadata(socket(&edge))
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "only the memory's owner may connect");
    let client = lone_client(&edge);
    let p = edge.project.clone();

    hook(
        &edge,
        &client,
        &["session-start"],
        &session_start("s-1", &p),
    );
    hook(
        &edge,
        &client,
        &["user-prompt-submit"],
        &prompt("s-1", &p, "why does the zeppelin deploy time out?"),
    );
    hook(
        &edge,
        &client,
        &["post-tool-use"],
        &tool(
            "s-1",
            &p,
            "Bash",
            json!({"command": "cat deploy.log"}),
            json!({"stdout": "AWS key AKIAIOSFODNN7EXAMPLE rejected", "stderr": ""}),
        ),
    );
    hook(&edge, &client, &["stop"], &stop("s-1", &p));
    edge.settled();
    assert_eq!(edge.count("SELECT count(*) FROM observations"), 2);
    assert_eq!(
        edge.count("SELECT count(*) FROM sessions WHERE ended_at IS NOT NULL"),
        1,
        "Stop closed the session"
    );
    let stored = edge.strings("SELECT response FROM observations WHERE kind = 'tool_use'");
    assert!(
        stored[0].contains("[REDACTED:AWS_KEY]") && !stored[0].contains("AKIAIOSFODNN7EXAMPLE"),
        "the daemon redacts as a hook process does: {stored:?}"
    );

    // The next session's start is answered by the daemon: the context, as JSON.
    let out = hook(
        &edge,
        &client,
        &["session-start"],
        &session_start("s-2", &p),
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("SessionStart prints JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context text");
    assert!(context.contains("zeppelin"), "{context}");

    // OpenCode's events go the same way.
    hook(
        &edge,
        &client,
        &["opencode", "tool.execute.after"],
        &oc::tool_after(
            "ses_1",
            &p,
            "bash",
            json!({"command": "cargo test", "description": "Run the tests"}),
            "test result: ok",
            json!({"exit": 0}),
        ),
    );
    edge.settled();
    assert_eq!(
        edge.count("SELECT count(*) FROM sessions WHERE agent = 'opencode'"),
        1
    );
    assert_eq!(edge.hook_log(), "", "nothing went wrong");
    let doctor = edge.ok_in(edge.root.path(), &["doctor"]);
    assert!(
        doctor.contains(&format!(
            "hooks hand their events to it through {}",
            socket(&edge).display()
        )),
        "{doctor}"
    );
}

#[test]
fn with_no_daemon_listening_a_solaria_process_captures_the_event() {
    let edge = Edge::new("laptop");
    let client = binary("solaria-hook");
    let p = edge.project.clone();
    let bash = |n: u32| {
        tool(
            "s-1",
            &p,
            "Bash",
            json!({"command": format!("echo run {n}")}),
            json!({"stdout": "ok", "stderr": ""}),
        )
    };

    // No daemon was ever started.
    hook(&edge, &client, &["post-tool-use"], &bash(1));
    // A socket file nobody listens on any more.
    drop(UnixListener::bind(socket(&edge)).expect("bind"));
    hook(&edge, &client, &["post-tool-use"], &bash(2));
    // A daemon killed with -9 leaves its socket behind.
    let mut api = relaying(&edge);
    api.daemon.0.kill().expect("kill -9");
    api.daemon.0.wait().expect("reaped");
    assert!(socket(&edge).exists());
    hook(&edge, &client, &["post-tool-use"], &bash(3));
    assert_eq!(
        tool_titles(&edge),
        ["Bash: echo run 1", "Bash: echo run 2", "Bash: echo run 3"]
    );

    // The next daemon replaces the dead one's socket and takes the hooks again.
    let _api = relaying(&edge);
    hook(&edge, &lone_client(&edge), &["post-tool-use"], &bash(4));
    edge.settled();
    assert_eq!(tool_titles(&edge).len(), 4);
    assert_eq!(edge.hook_log(), "");
}

#[test]
fn a_daemon_that_does_not_answer_does_not_hold_the_agent() {
    let edge = Edge::new("laptop");
    std::fs::create_dir_all(edge.data()).expect("data dir");
    let listener = UnixListener::bind(socket(&edge)).expect("bind");
    // Takes the request and does not answer until told, as a daemon stuck on a
    // lock would not.
    let (release, released) = std::sync::mpsc::channel::<()>();
    let held = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        let mut request = Vec::new();
        stream.read_to_end(&mut request).expect("read");
        let _ = released.recv();
        request
    });
    let p = edge.project.clone();
    let data = edge.data();
    let mut child = edge
        .program_in(&binary("solaria-hook"), edge.root.path())
        .args(["--data-dir", data.to_str().expect("utf-8"), "post-tool-use"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn solaria-hook");
    let payload = tool("s-1", &p, "Bash", json!({"command": "ls"}), json!("a b"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.to_string().as_bytes())
        .expect("write the payload");
    // The daemon is released only after the hook returned: returning at all is
    // giving up on it (its own wait is 5 s, inside Claude Code's 10 s). The bound
    // only turns a hook that waits for ever into a failure: twelve times that wait.
    let out = solaria_tests::output_within(
        child,
        Duration::from_secs(60),
        "a hook whose daemon never answers",
    );
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "the hook contract: {out:?}"
    );
    let log = edge.hook_log();
    assert!(log.contains("relay the daemon did not answer"), "{log}");
    assert!(
        !edge.db_path().exists(),
        "not run a second time: the daemon had it and may yet capture it"
    );
    release.send(()).expect("release");
    let request = held.join().expect("listener");
    assert!(
        request.starts_with(b"solaria-relay 1 claude-code post-tool-use\n{"),
        "{}",
        String::from_utf8_lossy(&request)
    );
}

/// A daemon of another version on `edge`'s socket: it takes one connection, reads
/// it whole and answers that it does not take the request; the thread gives back
/// what it read.
fn refusing_daemon(edge: &Edge) -> std::thread::JoinHandle<Vec<u8>> {
    let listener = UnixListener::bind(socket(edge)).expect("bind");
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        let mut request = Vec::new();
        stream.read_to_end(&mut request).expect("read");
        // A client that only left a note has gone already.
        let _ = stream.write_all(b"\0solaria-relay refused\n");
        request
    })
}

#[test]
fn an_event_a_daemon_of_another_version_refuses_is_captured_by_solaria_hook() {
    let edge = Edge::new("laptop");
    std::fs::create_dir_all(edge.data()).expect("data dir");
    let refusing = refusing_daemon(&edge);
    let out = ls_hook(&edge, &binary("solaria-hook"));
    refusing.join().expect("listener");
    assert!(
        out.stdout.is_empty(),
        "the refusal is not printed to the agent"
    );
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
}

#[test]
fn a_spool_whose_daemon_is_gone_is_not_written_while_another_daemon_answers() {
    let edge = Edge::new("laptop");
    // A daemon of this version ran, and marked its spool, then died.
    drop(relaying(&edge));
    let _ = std::fs::remove_file(socket(&edge));
    // A daemon of an older version answers now: it knows no spool, and refuses
    // this client's requests.
    let refusing = refusing_daemon(&edge);
    let out = ls_hook(&edge, &binary("solaria-hook"));
    let request = refusing.join().expect("listener");
    assert!(out.status.success() && out.stdout.is_empty());
    assert!(
        request.starts_with(b"solaria-relay 1 claude-code post-tool-use\n"),
        "the event was asked of the daemon, not left in a spool it does not read: {:?}",
        String::from_utf8_lossy(&request[..request.len().min(60)])
    );
    assert_eq!(edge.spooled(), 0);
    // Refused, it was captured by the `solaria hook` beside the client.
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
}

#[test]
fn malformed_requests_are_logged_and_the_daemon_serves_on() {
    let edge = Edge::new("laptop");
    let _api = relaying(&edge);
    let mut raw = UnixStream::connect(socket(&edge)).expect("connect");
    raw.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("write");
    raw.shutdown(std::net::Shutdown::Write).expect("shutdown");
    let mut answer = Vec::new();
    raw.read_to_end(&mut answer).expect("read");
    assert_eq!(
        answer, b"\0solaria-relay refused\n",
        "a stranger is refused"
    );

    let client = lone_client(&edge);
    let data = edge.data();
    let out = edge.hook_program(
        &client,
        &["--data-dir", data.to_str().expect("utf-8"), "post-tool-use"],
        b"{not json",
    );
    assert!(out.stdout.is_empty());
    // A payload whose parse error serde_json would word by quoting it, and a payload
    // sent bare, without a header: neither reaches the log.
    let out = edge.hook_program(
        &client,
        &["--data-dir", data.to_str().expect("utf-8"), "post-tool-use"],
        format!(r#"{{"session_id": "s-1", "is_interrupt": "{TOKEN}"}}"#).as_bytes(),
    );
    assert!(out.stdout.is_empty());
    let mut bare = UnixStream::connect(socket(&edge)).expect("connect");
    bare.write_all(format!("{{\"prompt\": \"{TOKEN}\"}}\n").as_bytes())
        .expect("write");
    bare.shutdown(std::net::Shutdown::Write).expect("shutdown");
    let mut answer = Vec::new();
    bare.read_to_end(&mut answer).expect("read");
    assert_eq!(answer, b"\0solaria-relay refused\n");
    ls_hook(&edge, &client);
    edge.settled();
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
    let log = edge.hook_log();
    assert!(
        !log.contains(&TOKEN[4..]),
        "a payload's token in the log:\n{log}"
    );
    assert!(
        log.contains("relay not a hook request: a first line of 16 byte(s)"),
        "{log}"
    );
    assert!(
        log.contains("PostToolUse "),
        "the bad payload logged under its hook: {log}"
    );
    assert!(
        log.contains("PostToolUse payload is not valid JSON: a value of the wrong type"),
        "{log}"
    );
}

/// A token in payloads the daemon cannot read.
const TOKEN: &str = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";

#[test]
fn a_second_daemon_leaves_the_socket_to_the_first() {
    let edge = Edge::new("laptop");
    let _first = relaying(&edge);
    let mut second = spawn_serve(&edge);
    wait_for(&edge, &mut second, "the second daemon's word", || {
        serve_log(&edge)
            .contains("another daemon already takes the hooks")
            .then_some(())
    });
    drop(second);
    ls_hook(&edge, &lone_client(&edge));
    edge.settled();
    assert_eq!(
        tool_titles(&edge),
        ["Bash: ls"],
        "the first daemon still answers"
    );
}

#[test]
fn a_relayed_prompt_recalls_by_meaning_with_the_daemons_model() {
    let Some(model) = solaria_tests::semantic::minilm() else {
        return;
    };
    let edge = Edge::new("laptop");
    let staging = "deploy staging only from the release branch";
    edge.ok(&["remember", "-t", "preference", staging]);
    // The wait is a latency budget (benchmarked, not asserted here): generous, so a
    // loaded test machine still sees the model's answer.
    let with_model = format!(
        "[search]\nmodel_dir = '{}'\n[recall]\ndaemon_wait_ms = 2000\n",
        model.display()
    );
    edge.write_config(&with_model);
    edge.ok(&["embed"]);
    let _api = relaying_with(&edge, &with_model);
    // Shares one word with the preference: too few for recall by words.
    let paraphrase = "which branch may ship to the pre-production environment";
    // `solaria recall` waits for the daemon: once it answers by meaning, the model
    // is loaded.
    let v = edge.json(&edge.project, &["recall", "--json", paraphrase]);
    assert_eq!(v["by_meaning"], true, "{v}");
    let out = hook(
        &edge,
        &lone_client(&edge),
        &["user-prompt-submit"],
        &prompt("s-1", &edge.project, paraphrase),
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("the recall, as JSON");
    let told = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text");
    assert!(told.contains(staging), "{told}");
    assert_eq!(edge.hook_log(), "");
}

#[test]
fn the_daemon_moves_relayed_writes_into_the_database_file() {
    let edge = Edge::new("laptop");
    let _api = relaying(&edge);
    let p = edge.project.clone();
    let marker = "zq-relayed-marker-4711";
    hook(
        &edge,
        &lone_client(&edge),
        &["post-tool-use"],
        &tool(
            "s-1",
            &p,
            "Bash",
            json!({"command": format!("echo {marker}")}),
            json!({"stdout": marker, "stderr": ""}),
        ),
    );
    // The hooks' connection defers checkpoints and no connection closes, so only
    // the daemon's checkpointer can copy the write from the WAL into the file.
    let in_file = || {
        let bytes = std::fs::read(edge.db_path()).expect("read the database file");
        bytes.windows(marker.len()).any(|w| w == marker.as_bytes())
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !in_file() {
        assert!(Instant::now() < deadline, "the write never left the WAL");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_oversized_payload_is_logged_and_dropped_by_the_client_and_by_the_daemon() {
    let edge = Edge::new("laptop");
    let _api = relaying(&edge);
    let limit = 64 * 1024 * 1024;
    let mut huge = br#"{"session_id": "s-1", "tool_name": "Bash", "tool_response": ""#.to_vec();
    huge.resize(limit + 1, b'x');
    let data = edge.data();
    let out = edge.hook_program(
        &binary("solaria-hook"),
        &["--data-dir", data.to_str().expect("utf-8"), "post-tool-use"],
        &huge,
    );
    assert!(out.stdout.is_empty());
    let log = edge.hook_log();
    assert!(
        log.contains(&format!("PostToolUse payload larger than {limit} bytes")),
        "the client hands it to `solaria hook`, which refuses it: {log}"
    );
    // A client that does not keep to the limit: the daemon stops reading there.
    let mut raw = UnixStream::connect(socket(&edge)).expect("connect");
    raw.write_all(b"solaria-relay 1 claude-code post-tool-use\n")
        .expect("header");
    let _ = raw.write_all(&huge);
    let _ = raw.shutdown(std::net::Shutdown::Write);
    let mut answer = Vec::new();
    let _ = raw.read_to_end(&mut answer);
    assert!(answer.is_empty());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !edge.hook_log().contains("relay payload larger than") {
        assert!(Instant::now() < deadline, "{}", edge.hook_log());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(edge.count("SELECT count(*) FROM observations"), 0);
}

#[test]
fn a_hook_goes_once_its_event_is_spooled_and_nothing_spooled_is_lost_to_kill_9() {
    let edge = Edge::new("laptop");
    let mut api = relaying(&edge);
    let client = lone_client(&edge);
    let p = edge.project.clone();
    hook(
        &edge,
        &client,
        &["session-start"],
        &session_start("s-1", &p),
    );
    // Answered before it is written: written (and out of the spool) before the lock.
    edge.settled();
    let bash = |n: u32| {
        tool(
            "s-1",
            &p,
            "Bash",
            json!({"command": format!("echo spooled {n}")}),
            json!({"stdout": "ok", "stderr": ""}),
        )
    };
    // Someone else holds the store's write lock: the daemon cannot write.
    let holder = edge.db();
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    let before_hooks = solaria_shared::UnixMillis::now();
    for n in 1..=2 {
        let out = hook(&edge, &client, &["post-tool-use"], &bash(n));
        assert!(out.status.success() && out.stdout.is_empty());
    }
    assert_eq!(edge.spooled(), 2, "both acknowledged, neither written");
    // The daemon dies before it could write them.
    api.daemon.0.kill().expect("kill -9");
    api.daemon.0.wait().expect("reaped");
    holder.execute_batch("ROLLBACK").expect("release the lock");
    drop(holder);
    assert!(tool_titles(&edge).is_empty());
    let doctor = edge.ok_in(edge.root.path(), &["doctor"]);
    assert!(doctor.contains("2 hook event(s) wait in"), "{doctor}");

    // The next daemon captures them first, once each, at the time their hooks ran.
    let restarted = solaria_shared::UnixMillis::now();
    let _api = relaying(&edge);
    edge.settled();
    assert_eq!(
        tool_titles(&edge),
        ["Bash: echo spooled 1", "Bash: echo spooled 2"]
    );
    let times =
        edge.strings("SELECT CAST(created_at AS TEXT) FROM observations WHERE kind = 'tool_use'");
    for t in times {
        let t: i64 = t.parse().expect("millis");
        assert!(
            (before_hooks.0..restarted.0).contains(&t),
            "recorded when the hook ran, not when it was written: {t}"
        );
    }
    assert!(!edge.hook_log().contains("dropped"), "{}", edge.hook_log());
}

#[test]
fn without_a_spool_each_event_is_written_before_its_hook_returns() {
    let edge = Edge::new("laptop");
    std::fs::create_dir_all(edge.data()).expect("data dir");
    // Where the spool would go, a file: the daemon cannot spool.
    let spool =
        solaria_hook::spool::location(&edge.data(), Some(&edge.runtime_dir())).expect("location");
    std::fs::write(spool.parent().expect("user dir"), "").expect("block the spool");
    let _api = relaying(&edge);
    ls_hook(&edge, &lone_client(&edge));
    // No waiting: the hook returned after the write.
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
    let log = edge.hook_log();
    assert!(log.contains("cannot open the spool"), "{log}");
}

#[test]
fn a_hook_that_prints_nothing_writes_the_spool_itself_and_does_not_wait_for_the_daemon() {
    let edge = Edge::new("laptop");
    let api = relaying(&edge);
    let client = lone_client(&edge);
    let signal = |sig: &str| {
        let status = std::process::Command::new("kill")
            .args([sig, &api.daemon.0.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    };
    // A daemon that cannot run at all (stopped): it accepts no request, answers
    // nothing; a hook that asked it would wait 5 s and log that.
    signal("-STOP");
    let out = ls_hook(&edge, &client);
    let spooled = edge.spooled();
    signal("-CONT");
    assert!(out.status.success() && out.stdout.is_empty());
    assert_eq!(spooled, 1, "the hook wrote its event into the spool");
    assert!(
        !edge.hook_log().contains("did not answer"),
        "{}",
        edge.hook_log()
    );
    edge.settled();
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
}

/// The agent sessions the store holds, by the agent's ids.
fn agent_sessions(db: &rusqlite::Connection) -> Vec<String> {
    let mut query = db
        .prepare("SELECT agent_session_id FROM sessions ORDER BY agent_session_id")
        .expect("query sessions");
    query
        .query_map([], |r| r.get(0))
        .expect("sessions")
        .collect::<Result<_, _>>()
        .expect("session ids")
}

/// What a hook that prints told the agent (`additionalContext`).
fn told(out: std::process::Output) -> String {
    let v: Value = serde_json::from_slice(&out.stdout).expect("an answer, as JSON");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context text")
        .to_owned()
}

#[test]
fn hooks_that_print_are_answered_while_another_process_holds_the_store() {
    let edge = Edge::new("laptop");
    let preference = "deploy staging only from the release branch";
    edge.ok(&["remember", "-t", "preference", preference]);
    let _api = relaying(&edge);
    let client = lone_client(&edge);
    let p = edge.project.clone();
    hook(
        &edge,
        &client,
        &["session-start"],
        &session_start("s-0", &p),
    );
    // Captured after the session's start (one thread, in order): once it is out of
    // the spool, the daemon has finished writing s-0.
    hook(
        &edge,
        &client,
        &["post-tool-use"],
        &tool("s-0", &p, "Bash", json!({"command": "ls"}), json!("a b")),
    );
    edge.settled();
    // Someone else holds the write lock (a long sync, a prune): no event can be
    // written, but a context and a recall are only read.
    let holder = edge.db();
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    // Answered by the capture thread before it writes s-1's row, which then waits
    // on the lock (up to the store's 5 s busy timeout) ...
    let context = told(hook(
        &edge,
        &client,
        &["session-start"],
        &session_start("s-1", &p),
    ));
    assert!(context.contains(preference), "{context}");
    // ... so the prompts behind it are answered from a read of the store: a known
    // session's, and a session's whose first event this is.
    let asked = "which branch may deploy staging?";
    for session in ["s-0", "s-2"] {
        let recalled = told(hook(
            &edge,
            &client,
            &["user-prompt-submit"],
            &prompt(session, &p, asked),
        ));
        assert!(recalled.contains(preference), "{session}: {recalled}");
    }
    assert!(
        edge.hook_log()
            .contains("a hook is answered from a read of the store"),
        "{}",
        edge.hook_log()
    );
    assert_eq!(
        agent_sessions(&holder),
        ["s-0"],
        "nothing was written under the lock"
    );
    holder.execute_batch("ROLLBACK").expect("release the lock");
    // Every event is written once the lock is gone: the sessions and both prompts.
    let prompts = |db: &rusqlite::Connection| -> i64 {
        db.query_row(
            "SELECT count(*) FROM observations WHERE kind = 'prompt'",
            [],
            |r| r.get(0),
        )
        .expect("count prompts")
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while prompts(&holder) < 2 {
        assert!(Instant::now() < deadline, "the prompts were never written");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(agent_sessions(&holder), ["s-0", "s-1", "s-2"]);
}

/// Without a daemon, a `solaria hook` process that finds the store held by another
/// process (a long sync or prune) past its wait neither drops its event nor keeps
/// the agent waiting for the lock: the event waits in the spool, a hook that prints
/// is answered from a read, and the next hook that finds the store free captures
/// what waited, each event once.
#[test]
fn without_a_daemon_events_the_store_cannot_take_wait_in_the_spool() {
    let edge = Edge::new("laptop");
    let preference = "deploy staging only from the release branch";
    edge.ok(&["remember", "-t", "preference", preference]);
    let p = edge.project.clone();
    edge.hook("session-start", session_start("s-0", &p));
    let holder = edge.db();
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    // Held throughout: a hook that waited for it would give up and drop its event.
    edge.hook(
        "post-tool-use",
        tool("s-0", &p, "Bash", json!({"command": "ls"}), json!("a b")),
    );
    let recalled = told(edge.hook(
        "user-prompt-submit",
        prompt("s-0", &p, "which branch may deploy staging?"),
    ));
    assert!(recalled.contains(preference), "{recalled}");
    assert_eq!(edge.spooled(), 2, "both events wait: {}", edge.hook_log());
    assert!(
        edge.hook_log().contains("the event waits in the spool"),
        "{}",
        edge.hook_log()
    );
    holder.execute_batch("ROLLBACK").expect("release the lock");
    let doctor = edge.ok_in(edge.root.path(), &["doctor"]);
    assert!(doctor.contains("2 hook event(s) wait in"), "{doctor}");
    // The next hook writes its own event, then what waited.
    edge.hook(
        "post-tool-use",
        tool("s-0", &p, "Bash", json!({"command": "pwd"}), json!("/work")),
    );
    assert_eq!(edge.spooled(), 0, "{}", edge.hook_log());
    assert_eq!(tool_titles(&edge), ["Bash: ls", "Bash: pwd"]);
    assert_eq!(
        edge.strings("SELECT input FROM observations WHERE kind = 'prompt'"),
        ["which branch may deploy staging?"]
    );
}

/// Runs `send` (hooks that spool an event) while another connection holds the
/// store's write lock past the store's wait, until the daemon has given up on the
/// event; the lock is released before returning.
fn refused_by_the_store(edge: &Edge, api: &mut Serve, send: impl FnOnce()) {
    let holder = edge.db();
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    send();
    wait_for(edge, &mut api.daemon, "the store's refusal", || {
        edge.hook_log()
            .contains("the store did not take it; it stays in the spool")
            .then_some(())
    });
    holder.execute_batch("ROLLBACK").expect("release the lock");
}

#[test]
fn a_spooled_event_the_store_refuses_stays_until_the_store_takes_another() {
    let edge = Edge::new("laptop");
    let mut api = relaying(&edge);
    let client = lone_client(&edge);
    let p = edge.project.clone();
    let bash = |line: &str| {
        tool(
            "s-1",
            &p,
            "Bash",
            json!({ "command": line }),
            json!({"stdout": "ok", "stderr": ""}),
        )
    };
    refused_by_the_store(&edge, &mut api, || {
        hook(&edge, &client, &["post-tool-use"], &bash("echo first"));
    });
    assert_eq!(edge.spooled(), 1, "kept, not dropped");
    assert!(tool_titles(&edge).is_empty());
    // The store takes the next event, and then the one it refused.
    hook(&edge, &client, &["post-tool-use"], &bash("echo second"));
    edge.settled();
    assert_eq!(
        tool_titles(&edge),
        ["Bash: echo first", "Bash: echo second"],
        "{}",
        edge.hook_log()
    );
}

#[test]
fn an_answered_event_the_store_refuses_waits_in_the_spool() {
    let edge = Edge::new("laptop");
    let mut api = relaying(&edge);
    let client = lone_client(&edge);
    let p = edge.project.clone();
    refused_by_the_store(&edge, &mut api, || {
        let out = hook(
            &edge,
            &client,
            &["session-start"],
            &session_start("s-1", &p),
        );
        assert!(out.status.success());
    });
    assert_eq!(edge.spooled(), 1, "kept, not dropped");
    assert!(agent_sessions(&edge.db()).is_empty());
    // The store takes the next event, and then the session's start it refused.
    hook(
        &edge,
        &client,
        &["post-tool-use"],
        &tool("s-2", &p, "Bash", json!({"command": "ls"}), json!("a b")),
    );
    edge.settled();
    assert_eq!(agent_sessions(&edge.db()), ["s-1", "s-2"]);
}

#[test]
fn answered_events_are_not_lost_to_kill_9_before_they_are_written() {
    let edge = Edge::new("laptop");
    let db = held_by_a_killed_daemon(&edge);
    // The next daemon captures them first.
    let _api = relaying(&edge);
    edge.settled();
    assert_eq!(agent_sessions(&db), ["s-1"]);
    assert_eq!(
        edge.count("SELECT count(*) FROM observations WHERE kind = 'prompt'"),
        1
    );
}

/// With no daemon started again, the next hook process that writes captures what
/// the killed one held, after its own event.
#[test]
fn what_a_killed_daemon_held_is_captured_by_the_next_hook_process_without_a_daemon() {
    let edge = Edge::new("laptop");
    let db = held_by_a_killed_daemon(&edge);
    let p = edge.project.clone();
    edge.hook(
        "post-tool-use",
        tool("s-1", &p, "Bash", json!({"command": "ls"}), json!("a b")),
    );
    assert_eq!(edge.spooled(), 0, "{}", edge.hook_log());
    assert_eq!(agent_sessions(&db), ["s-1"]);
    assert_eq!(
        edge.strings("SELECT input FROM observations WHERE kind = 'prompt'"),
        ["where is the deploy script?"]
    );
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
}

/// With no daemon, the hook process that drains the spool drops a file that holds no
/// event (logged) and captures the events after it.
#[test]
fn without_a_daemon_a_spool_file_that_holds_no_event_is_dropped_and_the_rest_captured() {
    use solaria_hook::{protocol::Event, spool::Spool};
    let edge = Edge::new("laptop");
    let p = edge.project.clone();
    let spool = Spool::for_process(&edge.data(), Some(&edge.runtime_dir())).expect("spool");
    let stray = spool.dir().join("00000000000000000001-1-00000000.event");
    std::fs::write(&stray, "not a hook event\n").expect("a stray file");
    let left = tool("s-1", &p, "Bash", json!({"command": "ls"}), json!("a b"));
    let a_second_ago = solaria_shared::UnixMillis::now().0 - 1_000;
    spool
        .put(
            &Event::ClaudeCode("post-tool-use".into()),
            a_second_ago,
            left.to_string().as_bytes(),
        )
        .expect("an event left by a hook");
    edge.hook(
        "post-tool-use",
        tool("s-1", &p, "Bash", json!({"command": "pwd"}), json!("/work")),
    );
    assert_eq!(edge.spooled(), 0, "{}", edge.hook_log());
    assert!(!stray.exists());
    assert_eq!(tool_titles(&edge), ["Bash: ls", "Bash: pwd"]);
    let log = edge.hook_log();
    assert!(
        log.contains("is not a spooled hook event; dropped"),
        "{log}"
    );
}

/// A daemon answers a session's start and a prompt while another connection holds
/// the store's write lock, and is killed (-9) before it could write them; the lock is
/// then released. Returns a connection to the store, which holds neither event.
fn held_by_a_killed_daemon(edge: &Edge) -> rusqlite::Connection {
    let mut api = relaying(edge);
    let client = lone_client(edge);
    let p = edge.project.clone();
    let holder = edge.db();
    holder
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    // Both answered (the prompt from a read of the store: the capture thread waits
    // on the lock with the session's start), neither written.
    for (event, payload) in [
        ("session-start", session_start("s-1", &p)),
        (
            "user-prompt-submit",
            prompt("s-1", &p, "where is the deploy script?"),
        ),
    ] {
        let out = hook(edge, &client, &[event], &payload);
        assert!(out.status.success(), "{event}");
    }
    assert_eq!(edge.spooled(), 2, "both held until they are written");
    api.daemon.0.kill().expect("kill -9");
    api.daemon.0.wait().expect("reaped");
    holder.execute_batch("ROLLBACK").expect("release the lock");
    assert!(agent_sessions(&holder).is_empty());
    holder
}

#[test]
fn a_refused_event_is_tried_again_on_its_own_when_no_other_comes() {
    let edge = Edge::new("laptop");
    let mut api = relaying(&edge);
    refused_by_the_store(&edge, &mut api, || {
        ls_hook(&edge, &lone_client(&edge));
    });
    // No hook comes after it: the daemon tries it again by itself (after 10 s).
    wait_for(&edge, &mut api.daemon, "the kept event's capture", || {
        (edge.spooled() == 0).then_some(())
    });
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
}

/// The daemon's spool directory for `edge`.
fn spool_dir(edge: &Edge) -> PathBuf {
    solaria_hook::spool::location(&edge.data(), Some(&edge.runtime_dir())).expect("location")
}

#[test]
fn a_spool_file_that_holds_no_event_is_logged_and_dropped_and_the_rest_captured() {
    let edge = Edge::new("laptop");
    let _api = relaying(&edge);
    let stray = spool_dir(&edge).join("00000000000000000001-1-00000000.event");
    std::fs::write(&stray, "not a hook event\n").expect("a stray file");
    ls_hook(&edge, &lone_client(&edge));
    edge.settled();
    assert!(!stray.exists());
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
    let log = edge.hook_log();
    assert!(
        log.contains("is not a spooled hook event; dropped"),
        "{log}"
    );
}

#[test]
fn a_spool_gone_after_the_daemon_started_leaves_each_hook_waiting_for_its_write() {
    let edge = Edge::new("laptop");
    let _api = relaying(&edge);
    // Removed (a tmpfs cleaner, a user) and something else put in its place.
    let spool = spool_dir(&edge);
    std::fs::remove_dir_all(&spool).expect("remove the spool");
    std::fs::write(&spool, "").expect("a file in its place");
    let out = ls_hook(&edge, &lone_client(&edge));
    assert!(out.status.success() && out.stdout.is_empty());
    // No waiting: the hook returned after the write.
    assert_eq!(tool_titles(&edge), ["Bash: ls"]);
    let log = edge.hook_log();
    assert!(log.contains("cannot spool an event"), "{log}");
}
