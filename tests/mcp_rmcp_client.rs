//! Both MCP servers driven by the official SDK's own client (rmcp): `solaria mcp`
//! over stdio as a child process, and the central service's `/mcp` over streamable
//! HTTP with a machine token — initialize, list tools, call them, errors included.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use solaria_tests::binary;
use solaria_tests::central::{Central, Options};
use solaria_tests::edge::Edge;
use solaria_tests::records::{observation, session, stamp, wire};

fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&r.content)
        .ok()
        .and_then(|v| {
            v.as_array().map(|blocks| {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_string))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_client_drives_the_stdio_server() {
    let edge = Edge::new("laptop");
    edge.prompt("s1", "rotate refresh tokens in renew_jwt");
    let mut cmd = tokio::process::Command::new(binary("solaria"));
    cmd.arg("mcp")
        .current_dir(&edge.project)
        .env("SOLARIA_HOME", edge.data())
        .env("HOME", edge.root.path().join("home"));
    let client = ().serve(TokioChildProcess::new(cmd).expect("spawn")).await.expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    for name in [
        "memory_search",
        "memory_timeline",
        "memory_get_observations",
        "memory_get_context",
        "memory_stats",
        "memory_sync_remote",
        "memory_search_remote",
        "memory_restore",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    let found = client
        .call_tool(
            CallToolRequestParams::new("memory_search")
                .with_arguments(args(json!({"query": "renew_jwt"})).expect("obj")),
        )
        .await
        .expect("call");
    assert_ne!(found.is_error, Some(true));
    let listing = text(&found);
    assert!(
        listing.contains("[O#") && listing.contains("renew_jwt"),
        "{listing}"
    );
    let id = listing
        .split("[O#")
        .nth(1)
        .map(|r| r[..36].to_string())
        .expect("an id");
    let full = client
        .call_tool(
            CallToolRequestParams::new("memory_get_observations")
                .with_arguments(args(json!({"ids": [id]})).expect("obj")),
        )
        .await
        .expect("call");
    assert!(
        text(&full).contains("rotate refresh tokens"),
        "{}",
        text(&full)
    );
    let weird = client
        .call_tool(
            CallToolRequestParams::new("memory_search")
                .with_arguments(args(json!({"query": "NEAR( \" AND"})).expect("obj")),
        )
        .await
        .expect("call");
    assert_ne!(
        weird.is_error,
        Some(true),
        "FTS syntax is searched as text: {}",
        text(&weird)
    );
    let unknown = client
        .call_tool(
            CallToolRequestParams::new("memory_timeline").with_arguments(
                args(json!({"id": "0192f3e4-5b6c-7d8e-9f00-112233445566"})).expect("obj"),
            ),
        )
        .await
        .expect("call");
    assert_eq!(unknown.is_error, Some(true));
    let call = |name: &'static str, a: Value| {
        let mut params = CallToolRequestParams::new(name);
        if let Some(obj) = args(a) {
            params = params.with_arguments(obj);
        }
        client.call_tool(params)
    };
    let around = call("memory_timeline", json!({"id": id}))
        .await
        .expect("call");
    assert!(
        text(&around).contains("rotate refresh tokens"),
        "{}",
        text(&around)
    );
    let context = call("memory_get_context", json!({})).await.expect("call");
    assert!(
        text(&context).contains("[S#") && text(&context).contains("rotate refresh tokens"),
        "the session, by its first prompt: {}",
        text(&context)
    );
    let bad = call("memory_search", json!({"query": 42})).await;
    assert!(
        bad.is_err() || bad.is_ok_and(|r| r.is_error == Some(true)),
        "a wrong type is refused"
    );
    for offline in [
        "memory_sync_remote",
        "memory_search_remote",
        "memory_restore",
    ] {
        let a = if offline == "memory_search_remote" {
            json!({"query": "x"})
        } else {
            json!({})
        };
        let r = call(offline, a).await.expect("call");
        assert_eq!(r.is_error, Some(true), "{offline} without a server");
        assert!(
            text(&r).contains("solaria login"),
            "{offline}: {}",
            text(&r)
        );
    }
    let stats = client
        .call_tool(CallToolRequestParams::new("memory_stats"))
        .await
        .expect("call");
    assert!(text(&stats).contains("observations"), "{}", text(&stats));
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_client_drives_the_central_endpoint_within_its_account() {
    let c = Central::start_with(Options::default()).await;
    let acme = c.account("acme").await;
    let other = c.account("other").await;
    let a = c.machine(acme, "desktop").await;
    let b = c.machine(other, "intruder").await;
    let s = session(a.id, stamp(0));
    let o = observation(a.id, s.id, stamp(1), "migrate the sessions table");
    c.push_ok(&a, &[wire(s.clone()), wire(o.clone())]).await;

    let connect = |jwt: String| {
        let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", c.url))
            .auth_header(jwt);
        ().serve(StreamableHttpClientTransport::from_config(config))
    };
    let client = connect(a.jwt.clone()).await.expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "memory_decisions",
            "memory_get_context",
            "memory_get_iteration",
            "memory_get_observations",
            "memory_search_remote",
            "memory_timeline",
        ],
        "the read tools, knowledge included"
    );
    let found = client
        .call_tool(
            CallToolRequestParams::new("memory_search_remote")
                .with_arguments(args(json!({"query": "migrate sessions"})).expect("obj")),
        )
        .await
        .expect("call");
    assert!(text(&found).contains(&o.id.to_string()), "{}", text(&found));
    let call = |name: &'static str, a: Value| {
        client.call_tool(CallToolRequestParams::new(name).with_arguments(args(a).expect("obj")))
    };
    let timeline = call("memory_timeline", json!({"id": o.id.to_string()}))
        .await
        .expect("call");
    assert!(
        text(&timeline).contains("migrate the sessions table"),
        "{}",
        text(&timeline)
    );
    let full = call(
        "memory_get_observations",
        json!({"ids": [o.id.to_string()]}),
    )
    .await
    .expect("call");
    assert!(text(&full).contains("output of migrate"), "{}", text(&full));
    let context = call("memory_get_context", json!({"project": "api"}))
        .await
        .expect("call");
    assert!(
        text(&context).contains(&format!("[S#{}]", s.id)),
        "{}",
        text(&context)
    );
    let unknown = call(
        "memory_timeline",
        json!({"id": "0192f3e4-5b6c-7d8e-9f00-112233445566"}),
    )
    .await
    .expect("call");
    assert_eq!(unknown.is_error, Some(true));
    client.cancel().await.expect("close");

    // Another account's machine: the same id is simply not found.
    let intruder = connect(b.jwt.clone()).await.expect("initialize");
    let peek = intruder
        .call_tool(
            CallToolRequestParams::new("memory_get_observations")
                .with_arguments(args(json!({"ids": [o.id.to_string()]})).expect("obj")),
        )
        .await
        .expect("call");
    assert_eq!(peek.is_error, Some(true));
    assert!(!text(&peek).contains("migrate"), "{}", text(&peek));
    intruder.cancel().await.expect("close");
}
