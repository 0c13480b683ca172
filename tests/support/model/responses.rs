//! The endpoint's OpenAI Responses API (`POST /v1/responses`, streamed), which
//! Codex CLI speaks. A step's tool call becomes the item Codex expects for that
//! tool: `exec_command` and other functions a `function_call` (JSON-string
//! arguments), `apply_patch` with a string input a `custom_tool_call` (the patch
//! itself), `tool_search` a client-side `tool_search_call`, and `mcp__<server>__<tool>`
//! a `function_call` of `<tool>` in the namespace `mcp__<server>` (how Codex calls
//! an MCP tool it found by searching).
//!
//! A compaction takes the tool outputs out of the conversation, so the count that
//! picks the next step starts again from nothing: a request that carries Codex's
//! compaction summary gets the script's last words instead of its first call.

use super::{NEXT_ID, Request, Shared, Step, record};
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Where the Responses API is served.
pub(super) const PATH: &str = "/v1/responses";

/// How Codex's compaction summary opens, in the conversation after it.
const COMPACTED: &str = "Another language model started to solve this problem";

/// The number of tool outputs (items whose type ends in `_output`) in `body`'s input.
pub(super) fn outputs(body: &Value) -> usize {
    items(body)
        .iter()
        .filter(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
        .count()
}

fn items(body: &Value) -> &[Value] {
    body["input"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether `body`'s conversation went through a compaction.
fn compacted(body: &Value) -> bool {
    let mut text = String::new();
    super::collect_text(&body["input"], &mut text);
    text.contains(COMPACTED)
}

pub(super) async fn answer(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body = record(&shared, PATH, &body);
    let request = Request {
        path: PATH.to_string(),
        body,
    };
    let last_words = || match shared.script.last() {
        Some(Step::Text(text)) => Step::text(text),
        _ => Step::text("Done."),
    };
    let step = if !request.offers_tools() {
        Step::text("Summary: a scripted session.")
    } else if compacted(&request.body) {
        last_words()
    } else {
        shared
            .script
            .get(outputs(&request.body))
            .cloned()
            .unwrap_or_else(|| Step::text("Done."))
    };
    let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let id = format!("scripted_{}_{n}", std::process::id());
    let item = match step {
        Step::Hang => return std::future::pending().await,
        Step::Text(text) => json!({
            "type": "message", "id": format!("msg_{id}"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
        Step::Tool { name, input } => call(&name, input, &id),
    };
    let tokens = shared.tokens_for(&request);
    let usage = json!({
        "input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens + 5,
    });
    let response_id = format!("resp_{id}");
    let events = [
        json!({"type": "response.created", "response": {"id": response_id}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"id": response_id, "usage": usage}}),
    ];
    super::event_stream(&events)
}

/// The output item that calls tool `name` with `input`.
fn call(name: &str, input: Value, id: &str) -> Value {
    let call_id = format!("call_{id}");
    if name == "tool_search" {
        return json!({
            "type": "tool_search_call", "id": format!("ts_{id}"), "call_id": call_id,
            "status": "completed", "execution": "client", "arguments": input,
        });
    }
    if let Value::String(patch) = &input {
        return json!({
            "type": "custom_tool_call", "id": format!("ctc_{id}"), "call_id": call_id,
            "status": "completed", "name": name, "input": patch,
        });
    }
    let mut item = json!({
        "type": "function_call", "id": format!("fc_{id}"), "call_id": call_id,
        "status": "completed", "name": name, "arguments": input.to_string(),
    });
    if let Some((namespace, tool)) = name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        item["namespace"] = json!(format!("mcp__{namespace}"));
        item["name"] = json!(tool);
    }
    item
}
