//! An MCP client of the central service's `/mcp` (streamable HTTP): JSON-RPC POSTs
//! as an MCP client sends them, with a machine's bearer JWT, answers read from JSON
//! or from server-sent events.

use crate::central::{Central, Machine};
use serde_json::{Value, json};

/// An MCP client of `/mcp` as one machine.
#[derive(Debug)]
pub struct Client<'a> {
    c: &'a Central,
    /// The bearer token sent (`None`: none, as an anonymous client).
    pub token: Option<String>,
    /// The MCP session the server gave at `initialize`.
    pub session: Option<String>,
    next_id: u64,
}

impl<'a> Client<'a> {
    pub fn new(c: &'a Central, m: Option<&Machine>) -> Client<'a> {
        Client {
            c,
            token: m.map(|m| m.jwt.clone()),
            session: None,
            next_id: 1,
        }
    }

    /// POSTs one JSON-RPC message as it is.
    pub async fn post(&self, body: &Value) -> reqwest::Response {
        let mut req = self
            .c
            .client
            .post(self.c.at("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        req.send().await.expect("POST /mcp")
    }

    /// A request and its JSON-RPC answer (from JSON or from SSE `data:` lines).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let r = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let status = r.status();
        if let Some(s) = r.headers().get("mcp-session-id") {
            self.session = Some(s.to_str().expect("session id").to_string());
        }
        let sse = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let body = r.text().await.expect("body");
        assert_eq!(status, 200, "{method}: {body}");
        let messages: Vec<Value> = if sse {
            body.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
                .collect()
        } else {
            vec![serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))]
        };
        messages
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("{method}: no answer with id {id} in {body}"))
    }

    pub async fn initialize(&mut self) -> Value {
        let init = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "central-mcp-test", "version": "0"}
                }),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        let r = self
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert!(
            r.status().is_success(),
            "initialized: {} {:?}",
            r.status(),
            r.text().await
        );
        init
    }

    /// A tool call: (is it a tool error, its text).
    pub async fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let v = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        let result = v.get("result").unwrap_or_else(|| panic!("{tool}: {v}"));
        let text = result["content"]
            .as_array()
            .expect("content")
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (result["isError"] == json!(true), text)
    }

    pub async fn call_ok(&mut self, tool: &str, arguments: Value) -> String {
        let (error, text) = self.call(tool, arguments.clone()).await;
        assert!(!error, "{tool} {arguments}: {text}");
        text
    }
}
