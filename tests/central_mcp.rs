//! The central MCP endpoint (`/mcp`, streamable HTTP) over real HTTP on a fresh
//! PostgreSQL database: JSON-RPC POSTs as an MCP client sends them, with the machine's
//! bearer JWT — authentication before MCP, the four tools, their citations, and
//! account isolation (another account's ids read as not found).

use serde_json::{Value, json};
use solaria_tests::central::Central;
use solaria_tests::central_mcp::Client;
use solaria_tests::records::{observation, session, stamp, summary, wire};

#[tokio::test]
async fn mcp_over_http_is_authenticated_and_scoped_to_the_account() {
    let c = Central::start().await;
    let a = c.account("acme").await;
    let laptop = c.machine(a, "laptop").await;
    let desktop = c.machine(a, "desktop").await;
    let b = c.account("other").await;
    let intruder = c.machine(b, "intruder").await;

    // The desktop pushes a session; the laptop asks over MCP.
    let s = session(desktop.id, stamp(-3000));
    let o1 = observation(
        desktop.id,
        s.id,
        stamp(-2000),
        "cargo test flaky refresh token",
    );
    let o2 = observation(desktop.id, s.id, stamp(-1000), "git commit fix refresh");
    let sum = summary(
        desktop.id,
        s.id,
        stamp(-500),
        "Fixed the flaky refresh token test",
    );
    c.push_ok(
        &desktop,
        &[
            wire(s.clone()),
            wire(o1.clone()),
            wire(o2.clone()),
            wire(sum.clone()),
        ],
    )
    .await;

    // No token, a bad token: 401 JSON before MCP.
    for token in [None, Some("not-a-token".to_string())] {
        let mut anon = Client::new(&c, None);
        anon.token = token.clone();
        let r = anon
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
            .await;
        assert_eq!(r.status(), 401, "{token:?}");
        let err: Value = r.json().await.expect("JSON error");
        assert_eq!(err["error"], "unauthorized");
    }
    // No OAuth metadata is advertised.
    let r = c
        .client
        .get(c.at("/.well-known/oauth-protected-resource"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 404);

    let mut mcp = Client::new(&c, Some(&laptop));
    let init = mcp.initialize().await;
    assert_eq!(
        init["result"]["serverInfo"]["name"], "solaria-central",
        "{init}"
    );
    let tools = mcp.request("tools/list", json!({})).await;
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{tools}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "memory_decisions",
            "memory_get_context",
            "memory_get_iteration",
            "memory_get_observations",
            "memory_search_remote",
            "memory_timeline"
        ]
    );

    // Search finds the desktop's record, cited with time and machine.
    let found = mcp
        .call_ok("memory_search_remote", json!({"query": "flaky refresh"}))
        .await;
    assert!(found.contains(&format!("[O#{}]", o1.id)), "{found}");
    assert!(found.contains("@desktop"), "{found}");
    assert!(found.contains(" +00:00 "), "a UTC time: {found}");
    let filtered = mcp
        .call_ok(
            "memory_search_remote",
            json!({"query": "refresh", "machine": "laptop", "limit": 5}),
        )
        .await;
    assert!(!filtered.contains("[O#"), "{filtered}");
    let (error, text) = mcp
        .call("memory_search_remote", json!({"query": "x", "limit": 0}))
        .await;
    assert!(error && text.contains("limit"), "{text}");

    // Timeline by observation id (or citation) and by session id.
    let timeline = mcp
        .call_ok("memory_timeline", json!({"id": format!("[O#{}]", o2.id)}))
        .await;
    assert!(timeline.contains(&format!("[S#{}]", s.id)), "{timeline}");
    assert!(
        timeline.contains(&format!("\n> [O#{}]", o2.id)),
        "{timeline}"
    );
    assert!(
        timeline.contains(&format!("\n  [O#{}]", o1.id)),
        "{timeline}"
    );
    assert!(
        timeline.contains("Fixed the flaky refresh token test"),
        "{timeline}"
    );
    assert!(timeline.contains("desktop"), "{timeline}");
    let by_session = mcp
        .call_ok("memory_timeline", json!({"id": s.id.to_string()}))
        .await;
    assert!(
        by_session.contains(&format!("[O#{}]", o1.id)),
        "{by_session}"
    );

    // Full observations, unknown ids reported.
    let unknown = uuid::Uuid::now_v7();
    let full = mcp
        .call_ok(
            "memory_get_observations",
            json!({"ids": [o1.id.to_string(), format!("[O#{}]", o2.id), unknown.to_string()]}),
        )
        .await;
    assert!(full.contains(&format!("[O#{}]", o1.id)), "{full}");
    assert!(full.contains(&format!("[O#{}]", o2.id)), "{full}");
    assert!(
        full.contains("output of cargo test flaky refresh token"),
        "{full}"
    );
    assert!(full.contains(&format!("[S#{}]", s.id)), "{full}");
    assert!(full.contains("@desktop"), "{full}");
    assert!(
        full.contains(&format!("no record with id \"{unknown}\"")),
        "{full}"
    );

    // The project's context.
    let context = mcp
        .call_ok(
            "memory_get_context",
            json!({"project": "github.com/acme/api"}),
        )
        .await;
    assert!(context.contains(&format!("[S#{}]", s.id)), "{context}");
    assert!(context.contains("@desktop"), "{context}");
    let by_name = mcp
        .call_ok("memory_get_context", json!({"project": "api"}))
        .await;
    assert!(by_name.contains(&format!("[S#{}]", s.id)), "{by_name}");

    // Unknown ids: tool errors saying "not found".
    let (error, text) = mcp
        .call("memory_timeline", json!({"id": unknown.to_string()}))
        .await;
    assert!(error && text.contains("not found"), "{text}");
    let (error, text) = mcp.call("memory_timeline", json!({"id": "nonsense"})).await;
    assert!(error && text.contains("not a record id"), "{text}");

    // Account B with A's ids: exactly like unknown ones.
    let mut other = Client::new(&c, Some(&intruder));
    other.initialize().await;
    for id in [o1.id.to_string(), s.id.to_string(), sum.id.to_string()] {
        let (error, text) = other.call("memory_timeline", json!({"id": id})).await;
        assert!(error && text.contains("not found"), "{id}: {text}");
        assert!(
            !text.contains("desktop") && !text.contains("refresh"),
            "{text}"
        );
    }
    let (error, text) = other
        .call(
            "memory_get_observations",
            json!({"ids": [o1.id.to_string(), o2.id.to_string()]}),
        )
        .await;
    assert!(error && text.contains("no record with id"), "{text}");
    assert!(!text.contains("refresh"), "{text}");
    let (error, text) = other
        .call(
            "memory_get_context",
            json!({"project": "github.com/acme/api"}),
        )
        .await;
    assert!(error && text.contains("not found"), "{text}");
    let nothing = other
        .call_ok("memory_search_remote", json!({"query": "flaky refresh"}))
        .await;
    assert!(
        !nothing.contains("[O#") && !nothing.contains("[S#"),
        "{nothing}"
    );

    // A session id of one client is no key to another account's data.
    if let Some(session_id) = mcp.session.clone() {
        other.session = Some(session_id);
        let (error, text) = other
            .call("memory_timeline", json!({"id": o1.id.to_string()}))
            .await;
        assert!(error && text.contains("not found"), "{text}");
    }

    // A revoked machine is refused at once, before MCP.
    c.storage
        .revoke_machine(laptop.id, "test")
        .await
        .expect("revoke");
    let r = mcp
        .post(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {}}))
        .await;
    assert_eq!(r.status(), 403);
    let err: Value = r.json().await.expect("JSON error");
    assert_eq!(err["error"], "machine_revoked");
}

#[tokio::test]
async fn foreign_hosts_are_refused() {
    let c = Central::start().await;
    let a = c.account("acme").await;
    let m = c.machine(a, "laptop").await;
    let r = c
        .client
        .post(c.at("/mcp"))
        .bearer_auth(&m.jwt)
        .header("host", "evil.example.com")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}
            }})
            .to_string(),
        )
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 403, "{:?}", r.text().await);
}
