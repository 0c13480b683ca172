//! The optional model summarizer (`[summarizer]`), through the real `solaria serve
//! --once` on real stores: small shell scripts stand in for the model program (one
//! that answers, one that fails, one that hangs, one that prints garbage) and a
//! loopback server for the Anthropic API. What must hold: a good answer replaces
//! the summary and leaves unconfirmed proposals; any failure leaves the
//! deterministic summary and the session closed, and is not retried; the spend cap
//! stops calls and says so; no secret or private text reaches the model or, from its
//! answer, the store.

use serde_json::{Value, json};
use solaria_tests::daemon::serve_log;
use solaria_tests::edge::Edge;
use solaria_tests::payloads;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A key the user pastes into a prompt: redacted at capture, never in a prompt.
const AWS_KEY: &str = "AKIAZ7FAKEEXAMPLE123";
/// A token the model puts in its answer: redacted before it is stored.
const GITHUB_TOKEN: &str = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";

/// A good answer of the expected shape (a secret inside, to be redacted).
fn good_answer() -> Value {
    json!({
        "summary": format!("Fixed the token refresh loop by retrying once; pushed with {GITHUB_TOKEN}."),
        "key_points": ["refresh retries once", "tests pass"],
        "decisions": [{
            "title": "Retry the refresh once",
            "chosen": "a single retry",
            "rationale": "the second failure is never transient",
            "alternatives": ["exponential backoff"]
        }],
        "memories": [{"type": "preference", "text": "the user wants small diffs"}]
    })
}

/// Writes a summarizer script into the edge's root; returns the `command` TOML
/// value that runs it (no shell: `sh` and the script's path).
fn script(edge: &Edge, name: &str, body: &str) -> String {
    let path = edge.root.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
    format!("[\"sh\", \"{}\"]", path.display())
}

/// A script that saves its prompt, counts its calls, and prints `answer`.
fn answering(edge: &Edge, answer: &str) -> String {
    let root = edge.root.path().display();
    script(
        edge,
        "answer.sh",
        &format!(
            "cat > '{root}/prompt.txt'\necho call >> '{root}/calls'\ncat <<'EOF'\n{answer}\nEOF"
        ),
    )
}

fn calls(edge: &Edge) -> usize {
    std::fs::read_to_string(edge.root.path().join("calls"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// `[summarizer]` on with `command` and `extra` keys; sessions are taken at once.
fn configure(edge: &Edge, command: &str, extra: &str) {
    edge.write_config(&format!(
        "[summarizer]\nenabled = true\ncommand = {command}\nquiet_secs = 0\ntimeout_secs = 5\n{extra}\n[serve]\nhttp_port = 0\n"
    ));
}

/// A short closed session: a prompt (with a secret and a private span), a command,
/// Stop and SessionEnd. Returns the store's session id.
fn session(edge: &Edge, agent_id: &str, topic: &str) -> String {
    let cwd = edge.project.clone();
    edge.hook("session-start", payloads::session_start(agent_id, &cwd));
    edge.hook(
        "user-prompt-submit",
        payloads::prompt(
            agent_id,
            &cwd,
            &format!(
                "fix the {topic} loop; the key is {AWS_KEY} <private>vault code 7731</private>"
            ),
        ),
    );
    edge.hook(
        "post-tool-use",
        payloads::tool(
            agent_id,
            &cwd,
            "Bash",
            json!({"command": "cargo test -p auth"}),
            json!({"stdout": "test result: ok", "stderr": "", "interrupted": false}),
        ),
    );
    edge.hook("stop", payloads::stop(agent_id, &cwd));
    edge.hook("session-end", payloads::session_end(agent_id, &cwd));
    edge.strings(&format!(
        "SELECT id FROM sessions WHERE agent_session_id = '{agent_id}'"
    ))
    .pop()
    .expect("the session is stored")
}

fn summary_text(edge: &Edge, session: &str) -> String {
    edge.strings(&format!(
        "SELECT text FROM summaries WHERE session_id = '{session}'"
    ))
    .pop()
    .expect("the session has a summary")
}

/// How the session's attempt ended, and why (`None`: not tried).
fn attempt(edge: &Edge, session: &str) -> Option<(String, String)> {
    edge.db()
        .query_row(
            "SELECT outcome, reason FROM distill_runs WHERE session_id = ?1",
            [session],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok()
}

fn closed(edge: &Edge, session: &str) -> bool {
    edge.count(&format!(
        "SELECT count(*) FROM sessions WHERE id = '{session}' AND ended_at IS NOT NULL"
    )) == 1
}

fn once(edge: &Edge) -> Duration {
    let start = Instant::now();
    edge.ok(&["serve", "--once"]);
    start.elapsed()
}

fn stats(edge: &Edge) -> Value {
    edge.json(&edge.project, &["stats", "--json"])["summarizer"].clone()
}

#[test]
fn off_by_default_nothing_is_sent() {
    let edge = Edge::new("laptop");
    let command = answering(&edge, &good_answer().to_string());
    edge.write_config(&format!(
        "[summarizer]\ncommand = {command}\nquiet_secs = 0\n[serve]\nhttp_port = 0\n"
    ));
    let s = session(&edge, "s-off", "refresh");
    let before = summary_text(&edge, &s);
    once(&edge);
    assert_eq!(calls(&edge), 0, "not enabled: never called");
    assert_eq!(summary_text(&edge, &s), before);
    assert!(
        edge.ok(&["stats"]).contains("summarizer:    off"),
        "{}",
        edge.ok(&["stats"])
    );
}

#[test]
fn a_good_answer_replaces_the_summary_and_leaves_unconfirmed_proposals() {
    let edge = Edge::new("laptop");
    configure(&edge, &answering(&edge, &good_answer().to_string()), "");
    let s = session(&edge, "s-good", "refresh");
    let deterministic = summary_text(&edge, &s);
    assert!(deterministic.contains("Request:"), "{deterministic}");
    let (summary_id, version): (String, i64) = edge
        .db()
        .query_row(
            "SELECT id, updated FROM summaries WHERE session_id = ?1",
            [&s],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("summary");

    once(&edge);
    assert_eq!(calls(&edge), 1);
    let text = summary_text(&edge, &s);
    assert!(
        text.starts_with("Fixed the token refresh loop by retrying once"),
        "{text}"
    );
    let (id, updated): (String, i64) = edge
        .db()
        .query_row(
            "SELECT id, updated FROM summaries WHERE session_id = ?1",
            [&s],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("summary");
    assert_eq!(id, summary_id, "the same summary record, a new version");
    assert!(updated > version, "stamped anew, so it syncs by LWW");
    assert!(closed(&edge, &s));

    // What the model was sent: the session, without the secret or the private span.
    let prompt =
        std::fs::read_to_string(edge.root.path().join("prompt.txt")).expect("prompt saved");
    assert!(prompt.contains("fix the refresh loop"), "{prompt}");
    assert!(prompt.contains("cargo test -p auth"), "{prompt}");
    assert!(!prompt.contains(AWS_KEY), "{prompt}");
    assert!(
        !prompt.contains("7731") && !prompt.contains("vault"),
        "{prompt}"
    );
    // What it answered is redacted before it is stored.
    let bytes = String::from_utf8_lossy(&edge.store_bytes()).into_owned();
    assert!(
        !bytes.contains(&GITHUB_TOKEN[4..]),
        "the token reached the store"
    );
    assert!(!bytes.contains(AWS_KEY));

    // The proposals: unconfirmed memories of the session, marked as the summarizer's.
    let listed = edge.ok(&["memories", "--unconfirmed"]);
    assert!(
        listed.contains(
            "(proposed by the summarizer) decision: Retry the refresh once — chose a single retry"
        ),
        "{listed}"
    );
    assert!(
        listed.contains("(proposed by the summarizer) the user wants small diffs"),
        "{listed}"
    );
    assert_eq!(
        edge.count(&format!(
            "SELECT count(*) FROM knowledge WHERE session_id = '{s}' AND deleted = 0"
        )),
        2
    );
    let decisions = edge.ok(&["decisions"]);
    assert!(
        !decisions.contains("Retry the refresh once"),
        "a proposal is no standing decision: {decisions}"
    );

    let st = stats(&edge);
    assert_eq!(st["summarized"], 1, "{st}");
    assert!(st["tokens_today"].as_u64().expect("tokens") > 0, "{st}");
    let text = edge.ok(&["stats"]);
    assert!(text.contains("1 session(s) summarized"), "{text}");
    assert!(text.contains("tokens today (UTC) (estimated)"), "{text}");
    assert!(
        serve_log(&edge).contains("summarized"),
        "{}",
        serve_log(&edge)
    );

    // Tried once as it stands: another round sends nothing.
    once(&edge);
    assert_eq!(
        calls(&edge),
        1,
        "the model's summary is not summarized again"
    );
}

/// The summarizer's proposals are read out of a session's events: forgetting the
/// session forgets them too, tombstones like the rest, and leaves no copy in the
/// file. A proposal someone confirmed is theirs now, and stays.
#[test]
fn forgetting_a_session_forgets_what_the_summarizer_proposed_from_it() {
    let edge = Edge::new("laptop");
    configure(&edge, &answering(&edge, &good_answer().to_string()), "");
    let s = session(&edge, "s-forget", "refresh");
    once(&edge);
    let proposals = |live: bool| {
        edge.count(&format!(
            "SELECT count(*) FROM knowledge WHERE session_id = '{s}' AND deleted = {}",
            if live { 0 } else { 1 }
        ))
    };
    assert_eq!(proposals(true), 2, "{}", serve_log(&edge));
    let preference = edge
        .strings("SELECT id FROM knowledge WHERE text LIKE '%small diffs%'")
        .pop()
        .expect("the proposed preference");
    edge.ok(&["confirm", &preference]);

    let out = edge.ok(&["forget", "--session", &s]);
    assert!(
        out.contains("2 decision(s)/memor(y/ies)/other knowledge"),
        "both proposals (the confirmed one's earlier version too) are forgotten: {out}"
    );
    assert_eq!(proposals(true), 0);
    assert_eq!(proposals(false), 2, "tombstones, which sync like the rest");
    let unconfirmed = edge.ok(&["memories", "--unconfirmed"]);
    assert!(
        !unconfirmed.contains("Retry the refresh once"),
        "{unconfirmed}"
    );
    let kept = edge.ok(&["memories"]);
    assert!(
        kept.contains("the user wants small diffs"),
        "the confirmed memory stays: {kept}"
    );
    let bytes = String::from_utf8_lossy(&edge.store_bytes()).into_owned();
    assert!(
        !bytes.contains("Retry the refresh once"),
        "the proposal's text is still in the file"
    );
}

/// Runs one round with `command` over a new session; asserts the deterministic
/// summary stays, the session stays closed and the attempt failed with a reason
/// containing `why`.
fn fails(edge: &Edge, agent_id: &str, command: &str, why: &str) -> Duration {
    configure(edge, command, "");
    let s = session(edge, agent_id, agent_id);
    let deterministic = summary_text(edge, &s);
    let took = once(edge);
    assert_eq!(summary_text(edge, &s), deterministic, "{agent_id}");
    assert!(closed(edge, &s), "{agent_id}");
    let (outcome, reason) = attempt(edge, &s).expect("tried");
    assert_eq!(outcome, "failed", "{agent_id}: {reason}");
    assert!(reason.contains(why), "{agent_id}: {reason}");
    assert!(serve_log(edge).contains(why), "{}", serve_log(edge));
    took
}

fn process_alive(pid: &str) -> bool {
    // A killed process may linger as a zombie until its new parent reaps it.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

#[test]
fn a_failing_hanging_or_garbled_summarizer_leaves_the_deterministic_summary() {
    let edge = Edge::new("laptop");
    let root = edge.root.path().display().to_string();

    let exits = script(
        &edge,
        "exit.sh",
        "cat >/dev/null\necho 'model unavailable' >&2\nexit 1",
    );
    fails(&edge, "s-exit", &exits, "model unavailable");

    // The script and what it started are killed at the timeout (5 s). Left alone
    // they would run for ten minutes: the bound on the round is far from that and
    // far above anything load adds to a 5 s timeout, so it fails only a round that
    // waited for them.
    let hangs = script(
        &edge,
        "hang.sh",
        &format!("sleep 600 &\necho $! > '{root}/sleep.pid'\nwait"),
    );
    let took = fails(
        &edge,
        "s-hang",
        &hangs,
        "ran longer than 5 s and was stopped",
    );
    assert!(took < Duration::from_secs(120), "{took:?}");
    let pid = std::fs::read_to_string(edge.root.path().join("sleep.pid")).expect("pid");
    // A process is killed when the signal is delivered, not when `kill` returns.
    let deadline = Instant::now() + Duration::from_secs(60);
    while process_alive(pid.trim()) {
        assert!(
            Instant::now() < deadline,
            "the hanging script's child was killed with it"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let garbage = answering(&edge, "Sure! Here is your summary: it went well.");
    fails(&edge, "s-garbage", &garbage, "not a JSON object");

    let wrong = answering(
        &edge,
        r#"{"summary": "ok", "memories": [{"type": "gossip", "text": "x"}]}"#,
    );
    fails(&edge, "s-shape", &wrong, "unknown");

    // None is tried again, even once a good summarizer is configured.
    let before = calls(&edge);
    configure(&edge, &answering(&edge, &good_answer().to_string()), "");
    once(&edge);
    assert_eq!(calls(&edge), before, "failed sessions are not retried");

    let text = edge.ok(&["stats"]);
    assert!(text.contains("4 failed"), "{text}");
    assert!(text.contains("last failure:"), "{text}");
    assert!(
        edge.count("SELECT count(*) FROM knowledge") == 0,
        "a failed answer proposes nothing"
    );
}

#[test]
fn the_spend_cap_stops_calls_and_says_so() {
    let edge = Edge::new("laptop");
    let command = answering(&edge, &good_answer().to_string());
    // Room for the good answer (about 100 tokens) and no more.
    configure(&edge, &command, "max_answer_tokens = 120\n");
    let first = session(&edge, "s-first", "refresh");
    once(&edge);
    assert_eq!(attempt(&edge, &first).expect("tried").0, "summarized");
    let used = stats(&edge)["tokens_today"].as_u64().expect("tokens");

    // A daily cap the next call cannot fit in: it is not made.
    configure(
        &edge,
        &command,
        &format!(
            "max_answer_tokens = 120\nmax_tokens_per_day = {}\n",
            used + 10
        ),
    );
    let second = session(&edge, "s-second", "logout");
    let deterministic = summary_text(&edge, &second);
    once(&edge);
    assert_eq!(calls(&edge), 1, "the capped session was not sent");
    assert_eq!(summary_text(&edge, &second), deterministic);
    let (outcome, reason) = attempt(&edge, &second).expect("recorded");
    assert_eq!(outcome, "capped");
    assert!(reason.contains("the daily cap stopped it"), "{reason}");
    assert!(
        serve_log(&edge).contains("not sent: the daily cap stopped it"),
        "{}",
        serve_log(&edge)
    );
    let text = edge.ok(&["stats"]);
    assert!(text.contains("1 stopped by a spend cap"), "{text}");
    assert!(
        text.contains("last stop:") && text.contains("daily cap"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{used} / {} tokens today", used + 10)),
        "{text}"
    );

    // A per-session cap below what any prompt takes: nothing is sent either.
    configure(&edge, &command, "max_tokens_per_session = 50\n");
    let third = session(&edge, "s-third", "signup");
    once(&edge);
    assert_eq!(calls(&edge), 1);
    let (outcome, reason) = attempt(&edge, &third).expect("recorded");
    assert_eq!(outcome, "capped");
    assert!(reason.contains("per-session cap"), "{reason}");
}

/// What a run really cost, as the program reports it (`claude -p --output-format
/// json` reads its own cached prompt, tens of thousands of tokens, however short
/// the session), is what the caps count: the next call does not fit and is not made.
#[test]
fn the_usage_a_program_reports_is_counted_and_stops_the_next_call() {
    let edge = Edge::new("laptop");
    let envelope = json!({
        "type": "result", "subtype": "success", "is_error": false,
        "result": good_answer().to_string(),
        "usage": {"input_tokens": 12, "output_tokens": 350,
                  "cache_creation_input_tokens": 40_000, "cache_read_input_tokens": 60_000}
    });
    configure(
        &edge,
        &answering(&edge, &envelope.to_string()),
        "max_tokens_per_day = 100000\n",
    );
    let first = session(&edge, "s-first", "refresh");
    once(&edge);
    assert_eq!(attempt(&edge, &first).expect("tried").0, "summarized");
    let st = stats(&edge);
    assert_eq!(st["tokens_today"], 100_362, "the program's own count: {st}");
    assert_eq!(st["tokens_today_counted"], true, "{st}");

    let second = session(&edge, "s-second", "logout");
    let deterministic = summary_text(&edge, &second);
    once(&edge);
    assert_eq!(calls(&edge), 1, "the next call was not made");
    assert_eq!(summary_text(&edge, &second), deterministic);
    let (outcome, reason) = attempt(&edge, &second).expect("recorded");
    assert_eq!(outcome, "capped");
    assert!(
        reason.contains("the daily cap stopped it: 100362 of 100000 tokens used today"),
        "{reason}"
    );
}

/// `max_answer_tokens` bounds what is read back, not only what the API is asked
/// for: a longer answer is refused, and what it cost is counted.
#[test]
fn an_answer_longer_than_max_answer_tokens_is_refused_and_counted() {
    let edge = Edge::new("laptop");
    let mut long = good_answer();
    long["summary"] = json!("Fixed the refresh loop. ".repeat(60));
    configure(
        &edge,
        &answering(&edge, &long.to_string()),
        "max_answer_tokens = 200\n",
    );
    let s = session(&edge, "s-long", "refresh");
    let deterministic = summary_text(&edge, &s);
    once(&edge);
    assert_eq!(summary_text(&edge, &s), deterministic);
    let (outcome, reason) = attempt(&edge, &s).expect("tried");
    assert_eq!(outcome, "failed");
    assert!(
        reason.contains("more than the 200 allowed ([summarizer] max_answer_tokens)"),
        "{reason}"
    );
    assert_eq!(edge.count("SELECT count(*) FROM knowledge"), 0);
    let spent = stats(&edge)["tokens_today"].as_u64().expect("tokens");
    assert!(spent > 200, "the long answer is counted: {spent}");
}

/// A loopback stand-in for the Messages API: answers every POST with `status`
/// and `body`, recording each request's head and body.
struct Api {
    url: String,
    requests: std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>,
}

fn api(status: u16, body: Value) -> Api {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut bytes = vec![0; length];
            let _ = reader.read_exact(&mut bytes);
            let request = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            seen.lock().expect("lock").push((head, request));
            let text = body.to_string();
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    Api { url, requests }
}

fn api_config(edge: &Edge, url: &str) {
    edge.write_config(&format!(
        "[summarizer]\nenabled = true\napi = \"anthropic\"\napi_key_env = \"SOLARIA_TEST_MODEL_KEY\"\n\
         model = \"test-haiku\"\nbase_url = \"{url}\"\nquiet_secs = 0\ntimeout_secs = 10\n\
         max_answer_tokens = 700\n[serve]\nhttp_port = 0\n"
    ));
}

const API_KEY: &str = "sk-ant-api03-TESTtestTESTtestTESTtestTESTtest0123456789-xyz";

#[test]
fn the_anthropic_api_is_called_with_the_key_and_its_usage_is_counted() {
    let mut edge = Edge::new("laptop");
    edge.env
        .push(("SOLARIA_TEST_MODEL_KEY".into(), API_KEY.into()));
    let server = api(
        200,
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "test-haiku",
            "content": [{"type": "text", "text": good_answer().to_string()}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 321, "output_tokens": 54,
                      "cache_creation_input_tokens": 1000, "cache_read_input_tokens": 2000}
        }),
    );
    api_config(&edge, &server.url);
    let s = session(&edge, "s-api", "refresh");
    once(&edge);
    assert!(
        summary_text(&edge, &s).starts_with("Fixed the token refresh loop"),
        "{}",
        serve_log(&edge)
    );
    let requests = server.requests.lock().expect("lock").clone();
    assert_eq!(requests.len(), 1);
    let (head, body) = &requests[0];
    let head = head.to_ascii_lowercase();
    assert!(head.starts_with("post /v1/messages "), "{head}");
    assert!(head.contains(&format!("x-api-key: {}", API_KEY.to_ascii_lowercase())));
    assert!(head.contains("anthropic-version: 2023-06-01"), "{head}");
    assert_eq!(body["model"], "test-haiku");
    assert_eq!(body["max_tokens"], 700);
    let sent = body["messages"][0]["content"].as_str().expect("prompt");
    assert!(sent.contains("fix the refresh loop") && !sent.contains(AWS_KEY));
    assert!(!sent.contains("7731"));

    let st = stats(&edge);
    assert_eq!(
        st["tokens_today"], 3_375,
        "the API's own count, its prompt cache included: {st}"
    );
    assert_eq!(st["tokens_today_counted"], true);
    let text = edge.ok(&["stats"]);
    assert!(text.contains("the Anthropic API (test-haiku)"), "{text}");
    assert!(!text.contains("(estimated)"), "{text}");
    for place in [
        serve_log(&edge),
        text,
        String::from_utf8_lossy(&edge.store_bytes()).into_owned(),
    ] {
        assert!(!place.contains("TESTtestTESTtest"), "the key leaked");
    }
}

#[test]
fn an_api_error_or_a_missing_key_leaves_the_deterministic_summary() {
    let mut edge = Edge::new("laptop");
    let server = api(
        529,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    api_config(&edge, &server.url);
    let s = session(&edge, "s-nokey", "refresh");
    let deterministic = summary_text(&edge, &s);
    once(&edge);
    assert_eq!(summary_text(&edge, &s), deterministic);
    let (outcome, reason) = attempt(&edge, &s).expect("tried");
    assert_eq!(outcome, "failed");
    assert!(
        reason.contains("SOLARIA_TEST_MODEL_KEY is not set in the daemon's environment"),
        "{reason}"
    );
    assert!(server.requests.lock().expect("lock").is_empty());

    edge.env
        .push(("SOLARIA_TEST_MODEL_KEY".into(), API_KEY.into()));
    let s = session(&edge, "s-overloaded", "logout");
    let deterministic = summary_text(&edge, &s);
    once(&edge);
    assert_eq!(summary_text(&edge, &s), deterministic);
    let (_, reason) = attempt(&edge, &s).expect("tried");
    assert!(
        reason.contains("the API answered 529: Overloaded"),
        "{reason}"
    );
}

/// A session started in one project that moved (`cd`) into a local-only one is
/// still summarized, from the events of its own project: nothing said or run in
/// the local-only project reaches the model.
#[test]
fn the_events_of_a_local_only_project_a_session_moved_into_are_never_sent() {
    let edge = Edge::new("laptop");
    configure(
        &edge,
        &answering(&edge, &good_answer().to_string()),
        "[sync]\nlocal_only_projects = [\"diary\"]",
    );
    let (api, diary) = (
        edge.project.clone(),
        payloads::project(
            edge.root.path(),
            "diary",
            Some("git@github.com:me/diary.git"),
        ),
    );
    let id = "s-moved";
    edge.hook("session-start", payloads::session_start(id, &api));
    edge.hook(
        "user-prompt-submit",
        payloads::prompt(id, &api, "fix the refresh loop in the auth client"),
    );
    edge.hook(
        "user-prompt-submit",
        payloads::prompt(
            id,
            &diary,
            "draft the letter to Marguerite about the orchard",
        ),
    );
    edge.hook(
        "post-tool-use",
        payloads::tool(
            id,
            &diary,
            "Bash",
            json!({"command": "cat letters/marguerite.md"}),
            json!({"stdout": "Dear Marguerite, the orchard", "stderr": "", "interrupted": false}),
        ),
    );
    edge.hook(
        "post-tool-use",
        payloads::tool(
            id,
            &api,
            "Bash",
            json!({"command": "cargo test -p auth"}),
            json!({"stdout": "test result: ok", "stderr": "", "interrupted": false}),
        ),
    );
    edge.hook("stop", payloads::stop(id, &api));
    edge.hook("session-end", payloads::session_end(id, &api));
    let s = edge
        .strings(&format!(
            "SELECT id FROM sessions WHERE agent_session_id = '{id}'"
        ))
        .pop()
        .expect("the session is stored");
    assert!(!summary_text(&edge, &s).contains("Marguerite"));

    once(&edge);
    assert_eq!(calls(&edge), 1, "the session is summarized");
    let prompt =
        std::fs::read_to_string(edge.root.path().join("prompt.txt")).expect("prompt saved");
    assert!(
        prompt.contains("fix the refresh loop") && prompt.contains("cargo test -p auth"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("Marguerite") && !prompt.contains("orchard"),
        "{prompt}"
    );
}

/// The summarizer's agent run (`claude -p` with SOLARIA's hooks installed) is not
/// captured: its hooks see `SOLARIA_NO_CAPTURE`.
#[test]
fn hooks_under_the_summarizer_capture_nothing() {
    let mut edge = Edge::new("laptop");
    edge.env.push(("SOLARIA_NO_CAPTURE".into(), "1".into()));
    let cwd: PathBuf = edge.project.clone();
    edge.hook("session-start", payloads::session_start("s-child", &cwd));
    edge.hook(
        "user-prompt-submit",
        payloads::prompt("s-child", &cwd, "summarize this session"),
    );
    edge.hook("stop", payloads::stop("s-child", &cwd));
    assert!(
        !Path::new(&edge.db_path()).exists() || edge.count("SELECT count(*) FROM sessions") == 0,
        "nothing captured"
    );
}
