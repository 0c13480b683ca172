//! The daemon's local HTTP API through the real `solaria serve` binary over real
//! HTTP on loopback: the bearer token and its 0600 file, search of captured
//! prompts, clear 400/404/409 answers, stats and status, the sync trigger, and a
//! listener on 127.0.0.1 only. Build the binary first (`cargo build -p solaria-edge`).

use reqwest::StatusCode;
use serde_json::Value;
use solaria_tests::daemon::*;
use solaria_tests::edge::Edge;
use solaria_tests::mcp::{McpStdio, block_body};
use solaria_tests::semantic::{copy_model, corrupt_weights, minilm};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

const MACHINE: &str = "laptop";

/// A machine whose memory holds one prompt.
fn edge_with_a_prompt() -> Edge {
    let edge = Edge::new(MACHINE);
    edge.prompt(
        "s-1",
        "why does the flaky zeppelin checkout test time out on CI?",
    );
    edge
}

fn error_of(body: &Value) -> &str {
    body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error message: {body}"))
}

#[test]
fn requests_need_the_right_bearer_token_but_health_does_not() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);
    let url = api.url("/api/stats");

    let (status, body) = answer(api.http.get(&url));
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(error_of(&body).contains("Authorization: Bearer"), "{body}");

    let wrong = format!("{}x", &api.token[..api.token.len() - 1]);
    for request in [
        api.http.get(&url).bearer_auth(&wrong),
        api.http.get(&url).bearer_auth(""),
        api.http.get(&url).basic_auth("me", Some(&api.token)),
        api.http
            .get(&url)
            .header("Authorization", api.token.as_str()),
    ] {
        let response = request.send().expect("answers");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert!(response.headers().contains_key("www-authenticate"));
        let text = response.text().expect("body");
        assert!(
            !text.contains(&api.token),
            "an answer never holds the token"
        );
        assert!(serde_json::from_str::<Value>(&text).is_ok(), "{text}");
    }
    // Every endpoint but health is behind the token, the sync trigger too.
    for path in [
        "/api/search?q=zeppelin",
        "/api/timeline/x",
        "/api/context?project=api",
        "/api/status",
    ] {
        let (status, _) = answer(api.http.get(api.url(path)));
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
    }
    let (status, _) = answer(api.http.post(api.url("/api/sync")));
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (status, body) = api.get("/api/stats");
    assert_eq!(status, StatusCode::OK, "{body}");

    let (status, body) = answer(api.http.get(api.url("/api/health")));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "ok");
    let text = body.to_string();
    assert!(
        !text.contains("zeppelin") && !text.contains(MACHINE) && !text.contains("data"),
        "health says nothing private: {text}"
    );
    assert!(
        !serve_log(&edge).contains(&api.token),
        "the token is never logged"
    );
}

#[test]
fn the_token_file_is_private_and_kept_across_restarts() {
    let edge = edge_with_a_prompt();
    let path = edge.data().join("api-token");
    let first = serve(&edge);
    let mode = std::fs::metadata(&path)
        .expect("token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the token file is the owner's only");
    assert_eq!(first.token.len(), 64);
    assert!(first.token.bytes().all(|b| b.is_ascii_hexdigit()));
    let addr_mode = std::fs::metadata(edge.data().join("serve.addr"))
        .expect("addr file")
        .permissions()
        .mode();
    assert_eq!(addr_mode & 0o777, 0o600);
    let token = first.token.clone();
    drop(first);

    let second = serve(&edge);
    assert_eq!(second.token, token, "a restart keeps the token");
    let (status, _) = second.get("/api/status");
    assert_eq!(status, StatusCode::OK);
    drop(second);

    // A token others could read is retired, not served.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let third = serve(&edge);
    assert_ne!(third.token, token);
    let mode = std::fs::metadata(&path)
        .expect("token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let (status, _) = answer(third.http.get(third.url("/api/status")).bearer_auth(&token));
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "the old token no longer works"
    );
    assert!(
        serve_log(&edge).contains("other users"),
        "{}",
        serve_log(&edge)
    );
}

#[test]
fn search_finds_a_captured_prompt_by_its_words() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);

    let (status, body) = api.get("/api/search?q=zeppelin+checkout");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["mode"], "lexical", "no model installed: words only");
    let hits = body["hits"].as_array().expect("hits");
    assert_eq!(hits.len(), 1, "{body}");
    let hit = &hits[0];
    assert_eq!(hit["type"], "prompt");
    assert!(
        hit["title"].as_str().expect("title").contains("zeppelin"),
        "{hit}"
    );
    assert_eq!(hit["project_name"], "api");
    assert_eq!(hit["machine_name"], MACHINE);
    let id = hit["id"].as_str().expect("id");
    assert_eq!(hit["cite"], format!("[O#{id}]"));

    // Filters reach the store.
    let (_, body) = api.get("/api/search?q=zeppelin&type=prompt&project=api&since=1d&limit=5");
    assert_eq!(body["hits"].as_array().expect("hits").len(), 1, "{body}");
    let (_, body) = api.get("/api/search?q=zeppelin&type=tool_use");
    assert_eq!(body["hits"].as_array().expect("hits").len(), 0, "{body}");
    // An unknown project is an error, not an empty answer (tests/nothing_lost.rs).
    let (status, body) = api.get("/api/search?q=zeppelin&project=elsewhere");
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // An explicit lexical mode; FTS syntax is searched as text, never an error.
    let (status, body) = api.get("/api/search?q=zeppelin+OR+%22NEAR(%2A&mode=lexical");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["mode"], "lexical");

    // The timeline of the hit: its session, the hit as anchor.
    let (status, body) = api.get(&format!("/api/timeline/{id}"));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["anchor"], id);
    assert_eq!(body["entries"][0]["id"], id);
    assert_eq!(body["session"]["project"]["name"], "api");

    // Semantic search without a model is a clear refusal, not a crash; so is
    // asking this daemon to weigh a remote hit's sentences.
    let (status, body) = api.get("/api/search?q=zeppelin&mode=semantic");
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(error_of(&body).contains("solaria model install"), "{body}");
    let (status, body) = answer(api.authed(reqwest::Method::POST, "/api/closest").json(
        &serde_json::json!({"vector": {"model": "m", "values": [0.5]}, "lists": [["a b c"]]}),
    ));
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "no_model", "{body}");
}

#[test]
fn bad_input_is_a_clear_400() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);
    let cases = [
        ("/api/search?q=x&mode=fuzzy", "`mode`"),
        ("/api/search?q=x&limit=0", "`limit`"),
        ("/api/search?q=x&limit=101", "`limit`"),
        ("/api/search?q=x&limit=ten", "`limit`"),
        ("/api/search?q=x&limit=-1", "`limit`"),
        ("/api/search", "`q`"),
        ("/api/search?q=++", "`q`"),
        ("/api/search?q=x&type=poem", "`type`"),
        ("/api/search?q=x&since=yesterday-ish", "`since`"),
        ("/api/search?q=x&lmit=5", "lmit"),
        ("/api/timeline/x?before=51", "`before`"),
        ("/api/context", "`project`"),
    ];
    for (path, names) in cases {
        let (status, body) = api.get(path);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert!(error_of(&body).contains(names), "{path}: {body}");
        assert_eq!(body["code"], "bad_request", "{path}");
    }
    let long = "a".repeat(1_001);
    let (status, body) = api.get(&format!("/api/search?q={long}"));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // After all that the server still answers.
    let (status, _) = api.get("/api/search?q=zeppelin");
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn unknown_ids_projects_and_endpoints_are_404() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);
    for id in [
        "0190b5a8-7d3c-7a3e-9f00-000000000000",
        "not-an-id",
        "%5BO%23nothing%5D",
    ] {
        let (status, body) = api.get(&format!("/api/timeline/{id}"));
        assert_eq!(status, StatusCode::NOT_FOUND, "{id}: {body}");
        assert!(error_of(&body).contains("no record"), "{body}");
    }
    let (status, body) = api.get("/api/context?project=nowhere");
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(error_of(&body).contains("nowhere"), "{body}");
    let (status, body) = api.get("/api/nothing-here");
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = api.post("/api/stats");
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");

    // The project that exists has its context.
    let (status, body) = api.get("/api/context?project=api");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["project"]["name"], "api");
    assert!(
        body["context"]
            .as_str()
            .expect("context")
            .contains("zeppelin"),
        "{body}"
    );
    assert!(body["tokens"].as_u64().expect("tokens") > 0);
}

#[test]
fn stats_and_status_report_the_search_and_sync_state() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);
    let (status, stats) = api.get("/api/stats");
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["observations"], 1, "{stats}");
    assert_eq!(stats["machine_name"], MACHINE);
    assert_eq!(stats["search"]["live_mode"], "lexical", "{stats}");
    assert_eq!(stats["search"]["model_installed"], false);
    assert!(stats["search"]["vectors"].is_i64(), "{stats}");
    assert_eq!(stats["sync"]["logged_in"], false);

    let (status, body) = api.get("/api/status");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["server"].is_null(), "{body}");
    assert_eq!(body["machine_name"], MACHINE);
    assert!(body["pending"].as_i64().expect("pending") >= 1, "{body}");
    assert_eq!(body["conflicts"], 0);
}

#[test]
fn a_sync_when_not_logged_in_is_a_clear_error() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);
    let (status, body) = api.post("/api/sync");
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "not_logged_in");
    assert!(error_of(&body).contains("solaria login"), "{body}");
    let (status, body) = api.get("/api/sync");
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
}

/// The sockets listening on `port` in `/proc/net/FILE` (Linux), as local
/// addresses in the kernel's hex form.
fn listeners(file: &str, port: u16) -> Vec<String> {
    let text = std::fs::read_to_string(format!("/proc/net/{file}")).unwrap_or_default();
    let port_hex = format!(":{port:04X}");
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state) = (fields.get(1)?, fields.get(3)?);
            (local.ends_with(&port_hex) && *state == "0A").then(|| local.to_string())
        })
        .collect()
}

#[test]
fn the_api_listens_on_loopback_only() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);
    assert_eq!(api.addr.ip().to_string(), "127.0.0.1");
    let port = api.addr.port();
    assert_eq!(
        listeners("tcp", port),
        vec![format!("0100007F:{port:04X}")],
        "one listener, on 127.0.0.1"
    );
    assert!(listeners("tcp6", port).is_empty(), "no IPv6 listener");
    // Another loopback address is not 127.0.0.1: a wildcard bind would answer it.
    let other: SocketAddr = format!("127.0.0.2:{port}").parse().expect("addr");
    assert!(
        TcpStream::connect_timeout(&other, Duration::from_secs(2)).is_err(),
        "127.0.0.2 must not reach the API"
    );
    let (status, _) = answer(api.http.get(api.url("/api/health")));
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn a_busy_port_is_logged_and_the_daemon_keeps_running() {
    let edge = edge_with_a_prompt();
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port();
    configure_port(&edge, port);
    let mut daemon = spawn_serve(&edge);
    wait_for(&edge, &mut daemon, "the busy port in serve.log", || {
        serve_log(&edge)
            .contains("local API not started")
            .then_some(())
    });
    let log = serve_log(&edge);
    assert!(
        log.contains(&format!("127.0.0.1:{port}")) && log.contains("busy"),
        "{log}"
    );
    // It goes on to its next duty, the hooks' socket (`wait_for` fails if it ends).
    wait_for(
        &edge,
        &mut daemon,
        "the daemon going on without its API",
        || {
            let log = serve_log(&edge);
            (log.contains("hooks relayed through") || log.contains("hooks not relayed"))
                .then_some(())
        },
    );
    let alive = daemon.0.try_wait().expect("try_wait").is_none();
    assert!(alive, "the daemon goes on without its API:\n{log}");
    assert!(
        !edge.data().join("serve.addr").exists(),
        "no address is advertised"
    );
    drop(taken);
}

#[test]
fn a_daemon_asked_for_any_port_says_which_it_took() {
    let edge = edge_with_a_prompt();
    configure_any_port(&edge, "");
    let mut api = serve_as_configured(&edge);
    assert_ne!(api.addr.port(), 0, "a real port in serve.addr");
    let line = format!("local API on http://{} ", api.addr);
    wait_for(&edge, &mut api.daemon, "the address in serve.log", || {
        serve_log(&edge).contains(&line).then_some(())
    });
    let (status, body) = api.get("/api/status");
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[test]
fn port_0_turns_the_api_off() {
    let edge = edge_with_a_prompt();
    configure_port(&edge, 0);
    let mut daemon = spawn_serve(&edge);
    wait_for(&edge, &mut daemon, "the API off in serve.log", || {
        serve_log(&edge).contains("local API off").then_some(())
    });
    drop(daemon);
    assert!(!edge.data().join("serve.addr").exists());
    assert!(
        !edge.data().join("api-token").exists(),
        "no token without an API"
    );
}

/// While `solaria serve` runs, `solaria search` uses the model the daemon keeps
/// loaded instead of loading it for one query. Shown by damaging the weights in
/// place after the daemon loaded them: only a process that loads them now fails.
#[test]
fn the_cli_searches_with_the_daemons_loaded_model() {
    let Some(model) = minilm() else { return };
    let edge = Edge::new(MACHINE);
    let installed = tempfile::tempdir().expect("tempdir");
    copy_model(&model, installed.path());
    std::fs::write(
        edge.data().join("config.toml"),
        format!(
            "machine_name = \"{MACHINE}\"\n\n[serve]\nhttp_port = \"any\"\n\n[search]\nmodel_dir = '{}'\n",
            installed.path().display()
        ),
    )
    .expect("config");
    edge.prompt(
        "s1",
        "renew_jwt refreshes the access token before each request",
    );
    edge.prompt("s1", "the camera permission dialog crashes the android app");
    edge.ok(&["embed"]);
    let api = serve_as_configured(&edge);
    let (status, body) = api.get("/api/search?q=token+refresh&mode=hybrid");
    assert_eq!(status, StatusCode::OK, "{body}");

    corrupt_weights(installed.path());
    let question = "keeping users signed in when their credentials expire";
    let out = edge.ok(&["search", "--mode", "hybrid", "--json", question]);
    let hits: Vec<Value> = serde_json::from_str(&out).expect("json");
    assert!(
        hits[0]["title"]
            .as_str()
            .is_some_and(|t| t.contains("renew_jwt")),
        "{hits:?}"
    );
    let text = edge.ok(&["search", "--mode", "hybrid", question]);
    assert!(
        text.contains("renew_jwt") && text.contains("hybrid search"),
        "{text}"
    );

    // The daemon gone (its address file left behind), the CLI loads the model
    // itself: the damaged weights fail now, and a search without --mode still
    // answers by words.
    drop(api);
    let out = edge.run(&["search", "--mode", "hybrid", question]);
    assert!(!out.status.success());
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(error.contains("solaria model install"), "{error}");
    let text = edge.ok(&["search", "renew_jwt"]);
    assert!(
        text.contains("renew_jwt") && text.contains("lexical search"),
        "{text}"
    );
}

/// The citations at the start of an MCP text's lines, in order (`[O#…]`, `[S#…]`).
fn cited_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start_matches(['>', ' ']);
            let end = l.find(']')?;
            (l.starts_with("[O#") || l.starts_with("[S#")).then(|| l[..=end].to_string())
        })
        .collect()
}

fn cites_of(hits: &Value) -> Vec<String> {
    hits.as_array()
        .expect("hits")
        .iter()
        .map(|h| h["cite"].as_str().expect("cite").to_string())
        .collect()
}

#[test]
fn the_cli_mcp_and_local_api_answer_alike() {
    let edge = Edge::new(MACHINE);
    let cwd = edge.project.display().to_string();
    edge.prompt("s-1", "deploy the billing api to staging");
    // Four commands, not alike (hits alike would fold into one line).
    for step in ["build", "migrate", "upload", "restart"] {
        edge.hook(
            "post-tool-use",
            serde_json::json!({"session_id": "s-1", "cwd": cwd, "hook_event_name": "PostToolUse",
                "tool_name": "Bash", "tool_input": {"command": format!("deploy {step}")},
                "tool_response": {"stdout": format!("deploy {step} done")}}),
        );
    }
    edge.hook(
        "stop",
        serde_json::json!({"session_id": "s-1", "cwd": cwd, "hook_event_name": "Stop",
            "last_assistant_message": "deployed to staging"}),
    );
    let api = serve(&edge);
    let mut mcp = McpStdio::start(&edge);
    mcp.initialize("surfaces-test");

    // The same hits, in the same order.
    let cli_hits: Value =
        serde_json::from_str(&edge.ok(&["search", "--json", "--mode", "lexical", "deploy"]))
            .expect("cli json");
    let (status, api_hits) = api.get("/api/search?q=deploy&mode=lexical");
    assert_eq!(status, StatusCode::OK, "{api_hits}");
    let mcp_hits = mcp.ok(
        "memory_search",
        serde_json::json!({"query": "deploy", "mode": "lexical"}),
    );
    let cited = cites_of(&cli_hits);
    assert!(cited.len() >= 5, "{cli_hits}");
    assert_eq!(cites_of(&api_hits["hits"]), cited);
    assert_eq!(cited_lines(&mcp_hits), cited, "{mcp_hits}");

    // The same timeline around an observation.
    let anchor = cli_hits
        .as_array()
        .expect("hits")
        .iter()
        .find(|h| h["type"] == "tool_use")
        .expect("a tool use")["id"]
        .as_str()
        .expect("id")
        .to_string();
    let entries = |t: &Value| -> Vec<String> {
        t["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|o| format!("[O#{}]", o["id"].as_str().expect("id")))
            .collect()
    };
    let cli_timeline: Value = serde_json::from_str(&edge.ok(&[
        "timeline", &anchor, "--json", "--before", "2", "--after", "2",
    ]))
    .expect("timeline json");
    let (status, api_timeline) = api.get(&format!("/api/timeline/{anchor}?before=2&after=2"));
    assert_eq!(status, StatusCode::OK, "{api_timeline}");
    let mcp_timeline = mcp.ok(
        "memory_timeline",
        serde_json::json!({"id": anchor, "before": 2, "after": 2}),
    );
    let window = entries(&cli_timeline);
    assert!(
        window.len() >= 3 && window.contains(&format!("[O#{anchor}]")),
        "{cli_timeline}"
    );
    assert_eq!(entries(&api_timeline), window);
    let mcp_window: Vec<String> = cited_lines(&mcp_timeline)
        .into_iter()
        .filter(|c| c.starts_with("[O#"))
        .collect();
    assert_eq!(mcp_window, window, "{mcp_timeline}");

    // The same record in full.
    let shown: Value =
        serde_json::from_str(&edge.ok(&["show", "--json", &anchor])).expect("show json");
    let record = &shown[0];
    let full = mcp.ok(
        "memory_get_observations",
        serde_json::json!({"ids": [anchor]}),
    );
    assert!(full.contains(&format!("[O#{anchor}]")), "{full}");
    assert!(
        full.contains(record["title"].as_str().expect("title")),
        "{full}"
    );
    let human = edge.ok(&["show", &anchor]);
    assert!(human.contains(record["title"].as_str().expect("title")));

    // The same counts and sync state.
    let cli_stats: Value =
        serde_json::from_str(&edge.ok(&["stats", "--json"])).expect("stats json");
    let (status, api_stats) = api.get("/api/stats");
    assert_eq!(status, StatusCode::OK, "{api_stats}");
    let mcp_stats: Value =
        serde_json::from_str(&block_body(&mcp.ok("memory_stats", serde_json::json!({}))))
            .expect("mcp stats");
    for key in ["sessions", "observations", "summaries", "pending_push"] {
        assert_eq!(api_stats[key], cli_stats[key], "{key}");
        assert_eq!(mcp_stats[key], cli_stats[key], "{key}");
    }
    assert_eq!(cli_stats["observations"], 5, "{cli_stats}");
    assert_eq!(api_stats["sync"], cli_stats["sync"]);
    assert_eq!(mcp_stats["sync"], cli_stats["sync"]);
    mcp.close();
}

#[test]
fn a_killed_sync_reads_as_interrupted_on_every_status_surface() {
    let edge = edge_with_a_prompt();
    // A "server" that accepts connections and never answers: the sync hangs.
    let silent = TcpListener::bind("127.0.0.1:0").expect("listener");
    let server = format!("http://{}", silent.local_addr().expect("addr"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().flatten() {
            held.push(stream);
        }
    });
    std::fs::write(
        edge.data().join("credentials.json"),
        serde_json::json!({
            "server": server,
            "machine_id": "0192f3e4-5b6c-7d8e-9f00-112233445566",
            "account_id": "0192f3e4-5b6c-7d8e-9f00-112233445567",
            "credential": "not-a-real-credential",
        })
        .to_string(),
    )
    .expect("credentials");
    let status_of = |json: &str| -> Value { serde_json::from_str(json).expect("json") };

    let mut sync = edge
        .cmd()
        .arg("sync")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn solaria sync");
    let deadline = Instant::now() + Duration::from_secs(30);
    while status_of(&edge.ok(&["status", "--json"]))["last_sync_status"] != "interrupted" {
        assert!(Instant::now() < deadline, "the sync never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    sync.kill().expect("kill -9");
    sync.wait().expect("reaped");

    let cli = status_of(&edge.ok(&["status", "--json"]));
    assert_eq!(cli["last_sync_status"], "interrupted", "{cli}");
    let stats = status_of(&edge.ok(&["stats", "--json"]));
    assert_eq!(stats["sync"]["last_sync_status"], "interrupted", "{stats}");
    let mut mcp = McpStdio::start(&edge);
    mcp.initialize("status-test");
    let mcp_stats = status_of(&block_body(&mcp.ok("memory_stats", serde_json::json!({}))));
    assert_eq!(
        mcp_stats["sync"]["last_sync_status"], "interrupted",
        "{mcp_stats}"
    );
    mcp.close();
    let api = serve(&edge);
    let (_, api_status) = api.get("/api/status");
    assert_eq!(
        api_status["last_sync_status"], "interrupted",
        "{api_status}"
    );
    let (_, api_stats) = api.get("/api/stats");
    assert_eq!(
        api_stats["sync"]["last_sync_status"], "interrupted",
        "{api_stats}"
    );
    assert_eq!(api_status["last_sync_at"], cli["last_sync_at"]);
}

/// A listener that is not the daemon (another local user's, on the port a stale
/// `serve.addr` names): answers health with our version and no proof, and a fake
/// hit to any search; records every request it gets.
fn impostor() -> (SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let addr = listener.local_addr().expect("addr");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 8192];
            let n = stream.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).to_string();
            let body = if request.starts_with("GET /api/health") {
                serde_json::json!({"status": "ok", "service": "solaria",
                    "version": env!("CARGO_PKG_VERSION")})
                .to_string()
            } else {
                serde_json::json!({"query": "x", "mode": "semantic", "hits": [
                    {"cite": "[O#0192f3e4-5b6c-7d8e-9f00-112233445566]",
                     "id": "0192f3e4-5b6c-7d8e-9f00-112233445566", "type": "prompt",
                     "title": "IMPOSTOR HIT", "project": "p", "project_name": "p",
                     "machine_id": "m", "session_id": "s", "created_at": 1, "tokens": 1,
                     "score": 9.0, "machine_name": "m", "this_machine": true}]})
                .to_string()
            };
            log.lock().expect("lock").push(request);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (addr, seen)
}

#[test]
fn a_stale_address_never_gets_the_token() {
    let edge = edge_with_a_prompt();
    // A daemon ran once: its token file is there; its address now names a stranger.
    drop(serve(&edge));
    let token = std::fs::read_to_string(edge.data().join("api-token"))
        .expect("token")
        .trim()
        .to_string();
    let (addr, seen) = impostor();
    std::fs::write(edge.data().join("serve.addr"), format!("{addr}\n")).expect("addr");

    // A search that wants the model asks a running daemon first.
    let out = edge.run(&["search", "--mode", "semantic", "zeppelin"]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(!printed.contains("IMPOSTOR"), "{printed}");
    let seen = seen.lock().expect("lock");
    assert!(!seen.is_empty(), "the client did try the address");
    assert!(
        seen.iter().all(|r| !r.contains(&token)),
        "the token went to a listener that could not prove it holds it: {seen:?}"
    );
    assert!(
        seen.iter().all(|r| !r.starts_with("GET /api/search")),
        "{seen:?}"
    );
}

#[test]
fn a_stopped_daemon_removes_its_address_file() {
    let edge = edge_with_a_prompt();
    let mut api = serve(&edge);
    let addr_file = edge.data().join("serve.addr");
    assert!(addr_file.exists());
    let pid = api.daemon.0.id().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let exited = loop {
        if let Ok(Some(status)) = api.daemon.0.try_wait() {
            break status;
        }
        assert!(Instant::now() < deadline, "solaria serve ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exited.success(), "{exited}");
    assert!(!addr_file.exists(), "the address outlived its daemon");
}

/// Another name for this port (DNS rebinding: a web page points a name of its own
/// at 127.0.0.1) is refused before anything else, even with the right token;
/// the loopback names, with or without the port, are answered.
#[test]
fn a_foreign_host_is_refused_even_with_the_token() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);
    let port = api.addr.port();
    for (path, host) in [
        ("/api/stats", "evil.example".to_string()),
        ("/api/search?q=zeppelin", format!("evil.example:{port}")),
        ("/api/health", format!("localhost.evil.example:{port}")),
        ("/api/nowhere", "evil.example".to_string()),
    ] {
        let (status, body) = answer(
            api.authed(reqwest::Method::GET, path)
                .header("Host", host.as_str()),
        );
        assert_eq!(
            status,
            StatusCode::MISDIRECTED_REQUEST,
            "{path} {host}: {body}"
        );
        assert_eq!(body["code"], "wrong_host", "{body}");
        assert!(
            error_of(&body).contains("127.0.0.1, localhost or [::1]"),
            "{body}"
        );
        assert!(!body.to_string().contains("zeppelin"), "{body}");
    }
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_string(),
    ] {
        let (status, body) = answer(
            api.authed(reqwest::Method::GET, "/api/stats")
                .header("Host", host.as_str()),
        );
        assert_eq!(status, StatusCode::OK, "{host}: {body}");
    }
}

/// A listener on the port a stale `serve.addr` names that redirects the health
/// check to the real daemon (which proves it holds the token) and records whatever
/// else it gets.
fn redirector(daemon: SocketAddr) -> (SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let addr = listener.local_addr().expect("addr");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 8192];
            let n = stream.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).to_string();
            let target = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            log.lock().expect("lock").push(request.clone());
            let _ = if target.starts_with("/api/health") {
                write!(
                    stream,
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://{daemon}{target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                let body = r#"{"query": "x", "mode": "semantic", "hits": []}"#;
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            };
        }
    });
    (addr, seen)
}

#[test]
fn a_redirect_from_a_stale_address_is_not_followed() {
    let edge = edge_with_a_prompt();
    let api = serve(&edge);
    let (addr, seen) = redirector(api.addr);
    std::fs::write(edge.data().join("serve.addr"), format!("{addr}\n")).expect("addr");

    // A search that wants the model asks the daemon at that address first.
    edge.run(&["search", "--mode", "semantic", "zeppelin"]);
    let seen = seen.lock().expect("lock");
    assert!(!seen.is_empty(), "the client did try the address");
    assert!(
        seen.iter().all(|r| !r.contains(&api.token)),
        "the token went to the listener that only passed the real daemon's proof on: {seen:?}"
    );
    assert!(
        seen.iter().all(|r| r.starts_with("GET /api/health")),
        "{seen:?}"
    );
}
