//! The endpoint's Gemini API (`POST /v1beta/models/<model>:generateContent` and
//! `:streamGenerateContent?alt=sse`), which Gemini CLI speaks. A step's tool call
//! becomes a `functionCall` part, its text a `text` part. Gemini's side requests
//! get short texts: the model router (a JSON answer is asked for) a simple
//! complexity, a compression its summary.

use super::{Request, Shared, Step, record};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;

/// Where the Gemini API is served: one route, the model and method in the last
/// segment (`gemini-3.8-flash:streamGenerateContent`).
pub(super) const ROUTE: &str = "/v1beta/models/{call}";

/// Whether `path` is a Gemini API call.
pub(super) fn is_gemini(path: &str) -> bool {
    path.starts_with("/v1beta/models/") && path.contains("enerateContent")
}

/// The number of `functionResponse` parts in `body`'s contents.
pub(super) fn outputs(body: &Value) -> usize {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["parts"].as_array())
        .flatten()
        .filter(|p| p.get("functionResponse").is_some())
        .count()
}

pub(super) async fn answer(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let path = uri.path().to_string();
    let body = record(&shared, &path, &body);
    let request = Request {
        path: path.clone(),
        body,
    };
    let part = if request.body["generationConfig"]["responseMimeType"] == "application/json" {
        json!({"text": json!({"complexity_reasoning": "a scripted turn", "complexity_score": 1}).to_string()})
    } else if !request.offers_tools() {
        json!({"text": "<state_snapshot>A scripted session.</state_snapshot>"})
    } else {
        match shared
            .script
            .get(outputs(&request.body))
            .cloned()
            .unwrap_or_else(|| Step::text("Done."))
        {
            Step::Hang => return std::future::pending().await,
            Step::Text(text) => json!({"text": text}),
            Step::Tool { name, input } => json!({"functionCall": {"name": name, "args": input}}),
        }
    };
    let tokens = shared.tokens_for(&request);
    let answer = json!({
        "candidates": [{
            "content": {"role": "model", "parts": [part]},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {
            "promptTokenCount": tokens,
            "candidatesTokenCount": 5,
            "totalTokenCount": tokens + 5,
        },
        "modelVersion": "scripted",
    });
    if path.contains(":streamGenerateContent") {
        (
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            format!("data: {answer}\n\n"),
        )
            .into_response()
    } else {
        axum::Json(answer).into_response()
    }
}
