//! A scripted model endpoint for the real agents: a small HTTP server on 127.0.0.1
//! that speaks the Anthropic Messages API, OpenAI's Responses API (`responses.rs`,
//! for Codex CLI) and the Gemini API (`gemini.rs`, for Gemini CLI), streamed as
//! server-sent events, and answers each request of the agent loop with the next
//! step of a script, so a real Claude Code, OpenCode, Codex or Gemini session runs
//! offline, deterministically, and every request it sent can be inspected
//! afterwards.
//!
//! The agent loop sends the whole conversation each time, so the number of tool
//! results in a request (`tool_result` blocks, `*_output` items, `functionResponse`
//! parts) says how many
//! scripted tool calls already ran: that number is the index of the step to answer
//! with. Requests that offer no tools are the agent's side requests (titles,
//! summaries, compactions): they get a short text.

mod gemini;
mod responses;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// One answer of the model in the agent loop.
#[derive(Debug, Clone)]
pub enum Step {
    /// Call the tool `name` with `input` (stop reason `tool_use`).
    Tool { name: String, input: Value },
    /// Answer with this text and end the turn (stop reason `end_turn`).
    Text(String),
    /// Never answer: the connection stays open until the server is dropped (a model
    /// endpoint that hangs).
    Hang,
}

impl Step {
    /// A tool call.
    pub fn tool(name: &str, input: Value) -> Step {
        Step::Tool {
            name: name.to_string(),
            input,
        }
    }

    /// A final text.
    pub fn text(text: &str) -> Step {
        Step::Text(text.to_string())
    }
}

/// One request the agent sent: its path and its body (JSON, or the raw text as a
/// JSON string when it was not JSON).
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub body: Value,
}

impl Request {
    /// Whether this request belongs to the agent loop (it offers tools).
    pub fn offers_tools(&self) -> bool {
        self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }

    /// Whether it is a Responses API request (Codex's).
    fn is_responses(&self) -> bool {
        self.path == responses::PATH
    }

    /// The number of tool results in the conversation it carries.
    pub fn tool_results(&self) -> usize {
        if self.is_responses() {
            return responses::outputs(&self.body);
        }
        if gemini::is_gemini(&self.path) {
            return gemini::outputs(&self.body);
        }
        self.tool_result_blocks().len()
    }

    /// Every `tool_result` block of the conversation, in order.
    pub fn tool_result_blocks(&self) -> Vec<&Value> {
        let messages = self.body["messages"].as_array().map(Vec::as_slice);
        messages
            .unwrap_or_default()
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_result")
            .collect()
    }

    /// The system prompt's text alone (where SOLARIA must never put its memory).
    pub fn system_text(&self) -> String {
        let mut out = String::new();
        collect_text(&self.body["system"], &mut out);
        out
    }

    /// All the text the request carries (system prompt and messages, or
    /// instructions and input), for asserting that something reached the model.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in [
            "system",
            "messages",
            "instructions",
            "input",
            "systemInstruction",
            "contents",
        ] {
            collect_text(&self.body[part], &mut out);
        }
        out
    }
}

fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| collect_text(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_text(i, out)),
        _ => {}
    }
}

#[derive(Debug)]
struct Shared {
    script: Vec<Step>,
    /// The input tokens each answer reports having read (a high count makes an
    /// agent compact its conversation).
    input_tokens: u64,
    /// Report `input_tokens` on the first answer of the agent loop only, and 10
    /// on every other.
    once: bool,
    reported: std::sync::atomic::AtomicBool,
    requests: Mutex<Vec<Request>>,
    /// Paths we do not serve, in order (each answered 404).
    unknown: Mutex<Vec<String>>,
}

impl Shared {
    /// The input tokens the answer to `request` reports.
    fn tokens_for(&self, request: &Request) -> u64 {
        if !self.once {
            return self.input_tokens;
        }
        if request.offers_tools() && !self.reported.swap(true, Ordering::Relaxed) {
            self.input_tokens
        } else {
            10
        }
    }
}

/// The running endpoint. Dropping it stops the server and every connection,
/// including the ones a [`Step::Hang`] holds open.
#[derive(Debug)]
pub struct ModelServer {
    /// The base URL, `http://127.0.0.1:PORT` (Claude Code's `ANTHROPIC_BASE_URL`;
    /// OpenCode's `baseURL` is this plus `/v1`).
    pub url: String,
    shared: Arc<Shared>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl ModelServer {
    /// Starts an endpoint on a free port of 127.0.0.1 that plays `script`.
    pub fn start(script: Vec<Step>) -> ModelServer {
        Self::start_reporting(script, 10)
    }

    /// [`ModelServer::start`], each answer reporting `input_tokens` read.
    pub fn start_reporting(script: Vec<Step>, input_tokens: u64) -> ModelServer {
        Self::start_with(script, input_tokens, false)
    }

    /// [`ModelServer::start`], the first answer of the agent loop reporting
    /// `input_tokens` read (an agent that compacts above its window then does so
    /// once), every other answer 10.
    pub fn start_overflowing_once(script: Vec<Step>, input_tokens: u64) -> ModelServer {
        Self::start_with(script, input_tokens, true)
    }

    fn start_with(script: Vec<Step>, input_tokens: u64, once: bool) -> ModelServer {
        let shared = Arc::new(Shared {
            script,
            input_tokens,
            once,
            reported: std::sync::atomic::AtomicBool::new(false),
            requests: Mutex::new(Vec::new()),
            unknown: Mutex::new(Vec::new()),
        });
        // Its own runtime on its own threads: the tests that use it are synchronous
        // and block on the agent process, and dropping the runtime ends every task.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("model server runtime");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .route("/v1/messages/count_tokens", post(count_tokens))
            .route(responses::PATH, post(responses::answer))
            .route(gemini::ROUTE, post(gemini::answer))
            .fallback(unknown)
            .with_state(shared.clone());
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            let _ = axum::serve(listener, app).await;
        });
        ModelServer {
            url,
            shared,
            runtime: Some(runtime),
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// The requests of the agent loop (`/v1/messages`, `/v1/responses` or a Gemini
    /// call, offering tools), in order.
    pub fn turns(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| {
                (r.path == "/v1/messages" || r.is_responses() || gemini::is_gemini(&r.path))
                    && r.offers_tools()
            })
            .collect()
    }

    /// Paths the agent asked for that this endpoint does not serve.
    pub fn unknown_paths(&self) -> Vec<String> {
        self.shared.unknown.lock().expect("lock").clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

fn record(shared: &Shared, path: &str, body: &Bytes) -> Value {
    let body = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    shared.requests.lock().expect("lock").push(Request {
        path: path.to_string(),
        body: body.clone(),
    });
    body
}

async fn messages(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body = record(&shared, "/v1/messages", &body);
    let request = Request {
        path: "/v1/messages".to_string(),
        body,
    };
    let step = if request.offers_tools() {
        let next = request.tool_results();
        shared
            .script
            .get(next)
            .cloned()
            .unwrap_or_else(|| Step::text("Done."))
    } else {
        Step::text("Scripted session")
    };
    let model = request.body["model"].as_str().unwrap_or("claude-scripted");
    // Ids unique across sessions and servers, as the real API's are: a memory may
    // tell tool calls apart by them.
    let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let id = format!("msg_scripted_{}_{n}", std::process::id());
    let (block, stop_reason) = match step {
        Step::Hang => return std::future::pending().await,
        Step::Text(text) => (json!({"type": "text", "text": text}), "end_turn"),
        Step::Tool { name, input } => {
            let tool_id = format!("toolu_scripted_{}_{n}", std::process::id());
            let block = json!({"type": "tool_use", "id": tool_id, "name": name, "input": input});
            (block, "tool_use")
        }
    };
    let tokens = shared.tokens_for(&request);
    if request.body["stream"] == true {
        stream(&id, model, block, stop_reason, tokens)
    } else {
        let message = json!({
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop_reason, "stop_sequence": null,
            "usage": {"input_tokens": tokens, "output_tokens": 5},
        });
        axum::Json(message).into_response()
    }
}

/// The Messages API's stream for one content block: the block starts empty and its
/// text or tool input arrives as one delta, as the real API sends it.
fn stream(id: &str, model: &str, block: Value, stop_reason: &str, input_tokens: u64) -> Response {
    let (empty, delta) = if block["type"] == "text" {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": block["text"]}),
        )
    } else {
        let mut empty = block.clone();
        empty["input"] = json!({});
        let input = block["input"].to_string();
        (
            empty,
            json!({"type": "input_json_delta", "partial_json": input}),
        )
    };
    let events = [
        json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": empty}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    event_stream(&events)
}

/// `events` as a server-sent event stream, each named by its `type`.
fn event_stream(events: &[Value]) -> Response {
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect();
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn count_tokens(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    record(&shared, "/v1/messages/count_tokens", &body);
    axum::Json(json!({"input_tokens": 100})).into_response()
}

/// Anything else is logged and answered 404 at once, so the agent never waits on it.
async fn unknown(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let path = uri.path().to_string();
    record(&shared, &path, &body);
    shared.unknown.lock().expect("lock").push(path.clone());
    let error = json!({"type": "error", "error": {"type": "not_found_error", "message": format!("{path} is not scripted")}});
    (StatusCode::NOT_FOUND, axum::Json(error)).into_response()
}
