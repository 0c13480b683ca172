//! `solaria mcp` over real stdio: the binary is spawned on a data dir filled by real
//! hook payloads and driven with newline-delimited JSON-RPC messages, as an MCP client
//! such as Claude Code sends them.

use serde_json::{Value, json};
use solaria_tests::edge::Edge;
use solaria_tests::mcp::{McpStdio, block_body};
use std::collections::HashMap;

/// A machine with one session: a prompt, a failing then passing `cargo test`, a stop.
fn edge_with_memory() -> Edge {
    let edge = Edge::new("laptop");
    let cwd = edge.project.display().to_string();
    edge.prompt("s1", "fix the flaky renew_jwt test");
    edge.hook(
        "post-tool-use",
        json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": "cargo test renew_jwt"},
            "tool_response": {"stdout": "test result: ok. 1 passed", "exit_code": 0}}),
    );
    edge.hook(
        "post-tool-use",
        json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "PostToolUse",
            "tool_name": "Edit", "tool_input": {"file_path": format!("{cwd}/src/auth.rs"),
            "old_string": "sleep(5)", "new_string": "advance(clock)"},
            "tool_response": {"success": true}}),
    );
    edge.hook(
        "stop",
        json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "Stop"}),
    );
    edge
}

#[test]
fn mcp_server_answers_every_tool_over_stdio() {
    let edge = edge_with_memory();
    let hits = edge.search("renew_jwt");
    let tool_use = hits
        .iter()
        .find(|h| h["type"] == "tool_use")
        .expect("the cargo test is found");
    let obs = tool_use["id"].as_str().expect("id").to_string();
    let session = tool_use["session_id"]
        .as_str()
        .expect("session")
        .to_string();

    let mut server = McpStdio::start(&edge);

    // initialize
    let init = server.initialize("mcp_stdio test");
    let result = &init["result"];
    assert_eq!(result["serverInfo"]["name"], "solaria", "{init}");
    assert!(result["capabilities"]["tools"].is_object(), "{init}");
    assert!(
        result["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("memory_search") && i.contains("memory_timeline")),
        "{init}"
    );

    // tools/list: every tool, with an input schema; the descriptions teach the workflow.
    let list = server.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let by_name: HashMap<&str, &Value> = tools
        .iter()
        .map(|t| (t["name"].as_str().expect("name"), t))
        .collect();
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
        let tool = by_name
            .get(name)
            .unwrap_or_else(|| panic!("{name} is listed: {list}"));
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() > 40),
            "{tool}"
        );
    }
    let search_schema = &by_name["memory_search"]["inputSchema"];
    assert_eq!(
        search_schema["required"],
        json!(["query"]),
        "{search_schema}"
    );
    for field in ["query", "project", "type", "since", "until", "limit"] {
        assert!(
            search_schema["properties"][field].is_object(),
            "{field}: {search_schema}"
        );
    }
    assert_eq!(
        by_name["memory_get_observations"]["inputSchema"]["required"],
        json!(["ids"])
    );
    let search_doc = by_name["memory_search"]["description"]
        .as_str()
        .expect("description");
    assert!(
        search_doc.contains("memory_timeline") && search_doc.contains("memory_get_observations"),
        "{search_doc}"
    );

    // memory_search: index lines with citation, time, machine.
    let text = server.ok("memory_search", json!({"query": "renew_jwt"}));
    assert!(text.contains(&format!("[O#{obs}]")), "{text}");
    assert!(text.contains("@laptop"), "{text}");
    assert!(text.contains("cargo test renew_jwt"), "{text}");
    let text = server.ok(
        "memory_search",
        json!({"query": "renew_jwt", "type": "prompt", "project": "api", "since": "7d", "limit": 5}),
    );
    assert!(text.contains(" prompt "), "{text}");
    assert!(!text.contains(&format!("[O#{obs}]")), "{text}");

    // memory_timeline: the anchor among its session's events.
    let text = server.ok(
        "memory_timeline",
        json!({"id": obs, "before": 2, "after": 2}),
    );
    assert!(text.contains(&format!("> [O#{obs}]")), "{text}");
    assert!(text.contains(&format!("[S#{session}]")), "{text}");
    assert!(text.contains("@laptop"), "{text}");
    let text = server.ok("memory_timeline", json!({"id": format!("[S#{session}]")}));
    assert!(text.contains("cargo test renew_jwt"), "{text}");

    // memory_get_observations: full records; unknown ids said so.
    let text = server.ok(
        "memory_get_observations",
        json!({"ids": [obs.clone(), "no-such-id"]}),
    );
    assert!(text.contains(&format!("[O#{obs}]")), "{text}");
    assert!(text.contains("tool: Bash"), "{text}");
    assert!(text.contains("test result: ok"), "{text}");
    assert!(text.contains("machine: @laptop"), "{text}");
    assert!(text.contains("no record with id \"no-such-id\""), "{text}");
    let unknown = "01900000-0000-7000-8000-000000000000";
    let text = server.err("memory_get_observations", json!({"ids": [unknown]}));
    assert!(
        text.contains(unknown) && text.contains("no record"),
        "{text}"
    );
    let text = server.err("memory_timeline", json!({"id": unknown}));
    assert!(text.contains("no record"), "{text}");
    server.err("memory_get_observations", json!({"ids": []}));

    // memory_get_context: the SessionStart text of the server's project.
    let text = server.ok("memory_get_context", json!({}));
    assert!(text.contains("[O#") || text.contains("[S#"), "{text}");
    let text = server.ok("memory_get_context", json!({"project": "api"}));
    assert!(text.contains("renew_jwt"), "{text}");
    let text = server.err("memory_get_context", json!({"project": "nope"}));
    assert!(text.contains("no project named"), "{text}");

    // memory_stats: counts, data dir, sync state, search modes.
    let text = server.ok("memory_stats", json!({}));
    let stats: Value = serde_json::from_str(&block_body(&text)).expect("stats are JSON");
    assert!(
        stats["observations"].as_i64().is_some_and(|n| n >= 3),
        "{stats}"
    );
    assert_eq!(stats["sessions"], 1, "{stats}");
    // No model installed here: words only, and the captured records wait for vectors.
    assert_eq!(stats["search"]["live_mode"], "lexical", "{stats}");
    assert_eq!(stats["search"]["model_installed"], false, "{stats}");
    assert!(
        stats["search"]["waiting"].as_i64().is_some_and(|n| n >= 3),
        "{stats}"
    );
    assert_eq!(stats["machine_name"], "laptop", "{stats}");
    assert_eq!(stats["data_dir"].as_str(), edge.data().to_str(), "{stats}");
    assert_eq!(stats["sync"]["logged_in"], false, "{stats}");

    // memory_sync_remote, not logged in: a clear tool error.
    let text = server.err("memory_sync_remote", json!({}));
    assert!(text.contains("solaria login"), "{text}");

    server.close();
}

#[test]
fn mcp_server_survives_bad_input() {
    let edge = edge_with_memory();
    let mut server = McpStdio::start(&edge);
    server.initialize("mcp_stdio test");

    // Bad arguments: a wrong type, a missing field, an unknown record type, a bad time.
    let (is_error, text) = server.call("memory_search", json!({"query": "x", "limit": "many"}));
    assert!(is_error, "{text}");
    let (is_error, text) = server.call("memory_search", json!({"project": "api"}));
    assert!(is_error && text.contains("query"), "{text}");
    let text = server.err("memory_search", json!({"query": "x", "type": "bogus"}));
    assert!(text.contains("unknown type"), "{text}");
    let text = server.err(
        "memory_search",
        json!({"query": "x", "since": "last blue moon"}),
    );
    assert!(text.contains("since"), "{text}");
    server.err("memory_search", json!({"query": "x", "limit": 0}));
    server.err("memory_timeline", json!({"id": "x", "before": 1000}));
    let (is_error, _) = server.call("memory_get_observations", json!({"ids": "not a list"}));
    assert!(is_error);
    // …and the server still answers.
    let text = server.ok("memory_search", json!({"query": "renew_jwt"}));
    assert!(text.contains("[O#"), "{text}");

    // Text that would be FTS5 syntax is searched as text.
    for q in ["NEAR(", "\"", "renew_jwt\" OR (", "title:*", "AND", "^-+*"] {
        server.ok("memory_search", json!({"query": q}));
    }
    let text = server.ok("memory_search", json!({"query": "NEAR( renew_jwt"}));
    assert!(text.contains("[O#"), "{text}");

    // An unknown tool is refused (protocol or tool error), the server goes on.
    let v = server.request(
        "tools/call",
        json!({"name": "memory_nope", "arguments": {}}),
    );
    assert!(
        v.get("error").is_some() || v["result"]["isError"] == true,
        "{v}"
    );

    // A malformed JSON-RPC line is ignored; the next request is answered.
    server.send_line("this is not json {");
    server.send_line("{\"jsonrpc\": \"2.0\", \"id\": ");
    let list = server.request("tools/list", json!({}));
    assert_eq!(
        list["result"]["tools"].as_array().map(Vec::len),
        Some(19),
        "{list}"
    );
    server.ok("memory_stats", json!({}));

    // Logged in to a server that does not answer: a tool error naming the server.
    // Port 1 is privileged, so no test's server can be listening there.
    let url = "http://127.0.0.1:1".to_string();
    std::fs::write(
        edge.data().join("credentials.json"),
        json!({"server": url, "machine_id": uuid::Uuid::now_v7().to_string(),
            "account_id": uuid::Uuid::new_v4().to_string(), "credential": "c"})
        .to_string(),
    )
    .expect("credentials");
    let text = server.err("memory_sync_remote", json!({}));
    assert!(text.contains(&url), "{text}");
    let stats: Value =
        serde_json::from_str(&block_body(&server.ok("memory_stats", json!({})))).expect("stats");
    assert_eq!(stats["sync"]["logged_in"], true, "{stats}");
    assert_eq!(stats["sync"]["server"], url.as_str(), "{stats}");
    assert_eq!(stats["sync"]["last_sync_status"], "failed", "{stats}");

    server.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_tools_reach_the_central_service() {
    use solaria_tests::central::Central;
    let c = Central::start_tls().await;
    let acct = c.account("acme").await;
    let laptop = edge_with_memory();
    laptop.enroll(&c, acct).await;
    laptop.ok(&["sync"]);

    let desktop = Edge::new("desktop");
    let mut server = McpStdio::start(&desktop);
    server.initialize("mcp_stdio test");
    let text = server.err("memory_search_remote", json!({"query": "renew_jwt"}));
    assert!(text.contains("solaria login"), "not logged in yet: {text}");
    desktop.enroll(&c, acct).await;

    let text = server.ok("memory_search_remote", json!({"query": "renew_jwt flaky"}));
    assert!(text.contains("[O#") && text.contains("@laptop"), "{text}");
    let text = server.ok("memory_search", json!({"query": "renew_jwt"}));
    assert!(
        !text.contains("[O#"),
        "nothing local before the restore: {text}"
    );
    let text = server.ok("memory_restore", json!({}));
    assert!(
        text.contains("pulled 5"),
        "session, 3 observations and the summary: {text}"
    );
    let text = server.ok("memory_search", json!({"query": "renew_jwt"}));
    assert!(
        text.contains("[O#") && text.contains("laptop"),
        "searchable offline now: {text}"
    );
    server.err("memory_search_remote", json!({"query": "x", "limit": 0}));
    server.close();

    // remote-config prints a working connection for the central MCP endpoint.
    let config = desktop.ok(&["mcp", "remote-config"]);
    let expected = format!(
        "claude mcp add --transport http solaria-remote {}/mcp",
        c.url
    );
    assert!(config.contains(&expected), "{config}");
    let token = config
        .split("Bearer ")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a token")
        .to_string();
    let r = c
        .client
        .post(c.at("/mcp"))
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "remote-config test", "version": "0"}}}),
        )
        .send()
        .await
        .expect("mcp request");
    assert_eq!(
        r.status(),
        200,
        "the printed token opens the remote MCP endpoint"
    );
}
