//! A raw MCP client over stdio: spawns `solaria mcp` for an [`Edge`] and speaks
//! newline-delimited JSON-RPC to it, as Claude Code does.

use crate::edge::Edge;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// How long [`McpStdio`] waits for an answer, or for the exit after
/// [`McpStdio::close`], unless told otherwise with [`McpStdio::with_timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A running `solaria mcp` and the messages it has sent. Killed when dropped, if
/// still running.
#[derive(Debug)]
pub struct McpStdio {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    /// Answers read while waiting for another id.
    received: HashMap<u64, Value>,
    next_id: u64,
    timeout: Duration,
}

impl McpStdio {
    /// Spawns `solaria mcp` with `edge`'s environment; nothing is sent yet (see
    /// [`McpStdio::initialize`]). Its stdout must hold only JSON-RPC messages.
    pub fn start(edge: &Edge) -> McpStdio {
        Self::start_in(edge, &edge.project)
    }

    /// [`McpStdio::start`] with the server's working directory `cwd` (its project).
    pub fn start_in(edge: &Edge, cwd: &std::path::Path) -> McpStdio {
        let mut child = edge
            .cmd_in(cwd)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn solaria mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout holds only JSON-RPC ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        McpStdio {
            child,
            stdin,
            rx,
            received: HashMap::new(),
            next_id: 1,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Waits up to `timeout` for each answer and for the exit after close.
    pub fn with_timeout(mut self, timeout: Duration) -> McpStdio {
        self.timeout = timeout;
        self
    }

    /// The MCP handshake as client `client`: `initialize`, then
    /// `notifications/initialized`. The whole answer to `initialize`.
    pub fn initialize(&mut self, client: &str) -> Value {
        let v = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": client, "version": "0"}}),
        );
        self.notify("notifications/initialized");
        v
    }

    /// Writes `line` and a newline as is: the way to send malformed input.
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// Sends a notification (no params, no answer).
    pub fn notify(&mut self, method: &str) {
        self.send_line(&json!({"jsonrpc": "2.0", "method": method}).to_string());
    }

    /// Sends a request and waits for the answer with its id (the whole message).
    /// Panics when none comes within the timeout, so a hung server fails the test.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        loop {
            if let Some(v) = self.received.remove(&id) {
                return v;
            }
            let v = self
                .rx
                .recv_timeout(self.timeout)
                .unwrap_or_else(|e| panic!("no answer to {method} #{id}: {e}"));
            if let Some(n) = v.get("id").and_then(Value::as_u64) {
                self.received.insert(n, v);
            }
        }
    }

    /// Calls a tool: whether it is a tool error, and its text. Panics on a protocol
    /// error (an answer without a result, or a result without content).
    pub fn call(&mut self, name: &str, arguments: Value) -> (bool, String) {
        let v = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let result = v
            .get("result")
            .unwrap_or_else(|| panic!("{name} answered with no result: {v}"));
        let text = result["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{name} answered no content: {v}"))
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (result["isError"].as_bool() == Some(true), text)
    }

    /// Calls a tool, which must succeed; its text.
    pub fn ok(&mut self, name: &str, arguments: Value) -> String {
        let (is_error, text) = self.call(name, arguments.clone());
        assert!(!is_error, "{name} {arguments} failed: {text}");
        text
    }

    /// Calls a tool, which must answer a tool error; its text.
    pub fn err(&mut self, name: &str, arguments: Value) -> String {
        let (is_error, text) = self.call(name, arguments.clone());
        assert!(is_error, "{name} {arguments} should fail: {text}");
        text
    }

    /// Closes stdin: the server must end cleanly within the timeout.
    pub fn close(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "solaria mcp ended with {status}");
                return;
            }
            assert!(
                Instant::now() < deadline,
                "solaria mcp did not end when its stdin closed"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for McpStdio {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What one data block of a tool's answer holds: the lines between its label and
/// its closing tag (e.g. `memory_stats`' JSON). Panics when `text` has no block.
pub fn block_body(text: &str) -> String {
    let open = text
        .find("<solaria-memory-data id=\"")
        .unwrap_or_else(|| panic!("no data block: {text}"));
    let rest = &text[open..];
    let label_end = rest
        .match_indices('\n')
        .nth(1)
        .map(|(i, _)| i + 1)
        .unwrap_or_else(|| panic!("no label: {text}"));
    let body = &rest[label_end..];
    let close = body
        .find("</solaria-memory-data id=\"")
        .unwrap_or_else(|| panic!("an unclosed block: {text}"));
    body[..close].to_string()
}
