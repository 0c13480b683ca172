//! No secret reaches the disk: one of every pattern family planted in every text
//! field of every event, then the raw bytes of the store, its WAL and shared memory
//! are searched for them.

use serde_json::{Value, json};
use solaria_tests::edge::Edge;
use solaria_tests::payloads::*;

/// (what the secret is, the text planted, the part that must never be on disk)
fn secrets() -> Vec<(&'static str, String, String)> {
    let key_body = "MIIEowIBAAKCAQEAzFAKEFAKEFAKEprivatekeymaterialFAKE0123456789";
    let mut v = vec![
        ("aws access key", "AKIAZ7FAKEEXAMPLE123".to_string(), "AKIAZ7FAKEEXAMPLE123"),
        ("anthropic key", "sk-ant-api03-FAKEfakeFAKEfakeFAKEfakeFAKE0123456789-abc".into(), "FAKEfakeFAKEfakeFAKEfakeFAKE0123456789"),
        ("openai key", "sk-proj-FAKEabcdefghijklmnopqrstuvwxyz0123".into(), "FAKEabcdefghijklmnopqrstuvwxyz0123"),
        ("github pat", "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345".into(), "FAKEabcdefghijklmnopqrstuvwxyz012345"),
        ("github fine-grained", "github_pat_11FAKEFAKE0123456789_abcdefghijklmnopqrstuvwxyzFAKE".into(), "11FAKEFAKE0123456789_abcdefghij"),
        ("slack token", "xoxb-123456789012-FAKEfakeFAKEfake".into(), "123456789012-FAKEfakeFAKEfake"),
        ("slack webhook", "https://hooks.slack.com/services/T0FAKE000/B0FAKE000/FAKEfakeFAKEfakeFAKEfake".into(), "FAKEfakeFAKEfakeFAKEfake"),
        ("google key", "AIzaSyFAKE-FAKE_FAKEFAKEFAKEFAKE0123456".into(), "SyFAKE-FAKE_FAKEFAKEFAKEFAKE0123456"),
        ("sendgrid key", "SG.FAKEfakeFAKEfakeFAKEfa.FAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfakeFAK".into(), "FAKEfakeFAKEfakeFAKEfa"),
        ("private key", format!("-----BEGIN RSA PRIVATE KEY-----\n{key_body}\nFAKEline2FAKEline2FAKEline2\n-----END RSA PRIVATE KEY-----"), key_body),
        ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmYWtlLXVzZXIiLCJleHAiOjF9.FAKEsigFAKEsigFAKEsig0123456789".into(), "eyJzdWIiOiJmYWtlLXVzZXIiLCJleHAiOjF9"),
        ("connection string", "postgres://admin:FakeDbPassw0rd2026@db.internal:5432/app".into(), "FakeDbPassw0rd2026"),
        ("discord webhook", "https://discord.com/api/webhooks/123456789012345678/FAKEfakeFAKEfakeFAKEfake_0123".into(), "FAKEfakeFAKEfakeFAKEfake_0123"),
        ("hardcoded credential", "api_key = \"FAKEhardcodedValue2026\"".into(), "FAKEhardcodedValue2026"),
        ("stripe key", "sk_live_FAKEfakeFAKEfake0123456789".into(), "FAKEfakeFAKEfake0123456789"),
        ("gitlab token", "glpat-FAKEfakeFAKE0123456789".into(), "FAKEfakeFAKE0123456789"),
        ("npm token", "npm_FAKEfakeFAKEfakeFAKEfake0123456789ab".into(), "FAKEfakeFAKEfakeFAKEfake0123456789"),
        ("hugging face token", "hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake".into(), "FAKEfakeFAKEfakeFAKEfakeFAKEfake"),
        ("azure account key", "AccountName=acct;AccountKey=FAKEfakeFAKEfake0123456789abcdef+/FAKE==".into(), "FAKEfakeFAKEfake0123456789abcdef"),
        ("authorization header", "Authorization: Bearer ya29.FAKEfakeFAKEfake.FAKEtoken".into(), "FAKEfakeFAKEfake.FAKEtoken"),
        ("mysql password", "mysql -u app -pFakeMyPw db".into(), "FakeMyPw"),
    ]
    .into_iter()
    .map(|(n, s, c)| (n, s, c.to_string()))
    .collect::<Vec<_>>();
    v.push((
        "password assignment",
        "password: 'FakePassw0rdInYaml'".into(),
        "FakePassw0rdInYaml".into(),
    ));
    v
}

#[test]
fn no_secret_of_any_family_reaches_the_store_or_its_wal() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", Some("git@github.com:acme/api.git"));
    let transcript = m.root.path().join("transcript.jsonl");
    let mut all = String::new();
    for (_, secret, _) in secrets() {
        all.push_str(&secret);
        all.push('\n');
    }
    let line = json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": format!("Done. For the record: {all}")}]}});
    std::fs::write(&transcript, format!("{line}\n")).expect("transcript");

    for (i, (name, secret, _)) in secrets().iter().enumerate() {
        let s = format!("session-{i}");
        let with_transcript = |mut v: Value| {
            v["transcript_path"] = json!(transcript.display().to_string());
            v
        };
        m.hook("session-start", with_transcript(session_start(&s, &p)));
        m.hook(
            "user-prompt-submit",
            prompt(&s, &p, &format!("use {secret} for the {name}")),
        );
        // Every text field of a tool call: command, description, file content,
        // old/new strings, stdout, stderr, nested response blocks, object keys' values.
        m.hook("post-tool-use", tool(&s, &p, "Bash",
            json!({"command": format!("export TOKEN='{secret}' && deploy"), "description": format!("deploy with {secret}")}),
            json!({"stdout": format!("using {secret}\nok"), "stderr": format!("warn: {secret}"), "interrupted": false})));
        m.hook("post-tool-use", tool(&s, &p, "Write",
            json!({"file_path": p.join(".env").display().to_string(), "content": format!("KEY={secret}\n")}),
            json!({"type": "create", "filePath": p.join(".env").display().to_string(), "content": format!("KEY={secret}\n"), "structuredPatch": [{"lines": [format!("+KEY={secret}")]}]})));
        m.hook("post-tool-use", tool(&s, &p, "Edit",
            json!({"file_path": p.join("src/config.rs").display().to_string(), "old_string": "let k = \"\";", "new_string": format!("let k = \"{secret}\";")}),
            json!({"oldString": "", "newString": secret, "originalFile": format!("// {secret}")})));
        m.hook("post-tool-use", tool(&s, &p, "mcp__vault__read",
            json!({"path": "secret/app", "note": secret}),
            json!([{"type": "text", "text": json!({"data": {"value": secret, "api_key": secret}}).to_string()}])));
        let mut fail = base("PostToolUseFailure", &s, &p);
        fail["tool_name"] = json!("Bash");
        fail["tool_input"] =
            json!({"command": format!("curl -H 'Authorization: Bearer {secret}' https://api")});
        fail["error"] = json!(format!("401 for {secret}"));
        m.hook("post-tool-use-failure", &fail);
        let mut stop_payload = with_transcript(stop(&s, &p));
        stop_payload["last_assistant_message"] = json!(format!("I used {secret}."));
        m.hook("stop", &stop_payload);
        m.hook("session-end", with_transcript(session_end(&s, &p)));
    }
    assert!(
        m.hook_log().is_empty(),
        "every event captured: {}",
        m.hook_log()
    );
    assert_eq!(
        m.count("SELECT count(*) FROM observations"),
        6 * secrets().len() as i64
    );

    // Read the bytes while the WAL still holds the writes (no checkpoint yet) …
    let check = |bytes: &[u8], when: &str| {
        let text = String::from_utf8_lossy(bytes);
        for (name, _, core) in secrets() {
            assert!(!text.contains(&core), "{name} found on disk {when}");
        }
        assert!(text.contains("[REDACTED:"), "markers are stored instead");
    };
    check(&m.store_bytes(), "in the store or its WAL");
    // … and after everything has been checkpointed into the main file.
    m.db()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .expect("checkpoint");
    check(&m.store_bytes(), "after a checkpoint");
    // The CLI never shows one either.
    let shown = m.ok_in(&p, &["search", "--json", "deploy"]);
    for (name, _, core) in secrets() {
        assert!(!shown.contains(&core), "{name} in search output");
    }
}

/// A payload that does not parse is dropped and logged by what is wrong with it and
/// where, never by what it holds: serde_json's own message quotes the input
/// (`invalid type: string "ghp_…"`), and a payload is not yet redacted.
#[test]
fn a_payload_that_does_not_parse_leaves_no_secret_in_the_hook_log() {
    let m = Edge::new("test-machine");
    let token = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";
    let wrong_type = format!(r#"{{"session_id": "s-1", "is_interrupt": "{token}"}}"#);
    let bare = format!(r#""{token}""#);
    let cut_short = format!(r#"{{"session_id": "s-1", "prompt": "{token}"#);
    m.hook_raw("post-tool-use-failure", wrong_type.as_bytes());
    m.hook_raw("user-prompt-submit", bare.as_bytes());
    m.hook_raw("user-prompt-submit", cut_short.as_bytes());
    m.hook_args(&["hook", "opencode", "session.idle"], bare.as_bytes());
    let log = m.hook_log();
    assert_eq!(log.lines().count(), 4, "every drop is logged:\n{log}");
    assert!(
        !log.contains("FAKEabcdef"),
        "the token is in the log:\n{log}"
    );
    assert!(
        log.contains("payload is not valid JSON: a value of the wrong type or shape at line 1")
            && log.contains("an unexpected end at line 1")
            && log.contains("payload is not a JSON object: a value of the wrong type"),
        "what and where are: {log}"
    );
    assert!(!m.db_path().exists() || m.count("SELECT count(*) FROM observations") == 0);
}

/// A secret can be an object's key as well as a value (a map of tokens a tool read,
/// an MCP call's arguments): it is redacted there too, before the first write.
#[test]
fn a_secret_as_an_object_key_never_reaches_the_store_or_its_wal() {
    let m = Edge::new("test-machine");
    let p = project(m.root.path(), "api", Some("git@github.com:acme/api.git"));
    let token = "ghp_KEYSabcdefghijklmnopqrstuvwxyz012345";
    let aws = "AKIAZ7FAKEKEYEXAMPLE";
    m.hook("session-start", session_start("s-keys", &p));
    m.hook(
        "post-tool-use",
        tool(
            "s-keys",
            &p,
            "mcp__vault__write",
            json!({"entries": {token: "ci deploys", aws: {"region": "eu-west-1"}}}),
            json!({"written": {token: true}}),
        ),
    );
    assert!(m.hook_log().is_empty(), "captured: {}", m.hook_log());
    assert_eq!(m.count("SELECT count(*) FROM observations"), 1);
    let check = |when: &str| {
        let bytes = m.store_bytes();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(&token[4..]),
            "the token key is on disk {when}"
        );
        assert!(!text.contains(aws), "the AWS key id is on disk {when}");
        assert!(text.contains("[REDACTED:GITHUB_TOKEN]"), "a marker instead");
    };
    check("in the store or its WAL");
    m.db()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .expect("checkpoint");
    check("after a checkpoint");
    // What the keys held is still there, under the markers.
    let input = m.strings("SELECT input FROM observations").join("");
    assert!(
        input.contains("ci deploys") && input.contains("eu-west-1"),
        "{input}"
    );
}
