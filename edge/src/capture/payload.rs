//! Claude Code hook payloads as they arrive on stdin. Unknown fields are ignored and
//! missing ones default, so a newer or older Claude Code never breaks capture.

use serde::Deserialize;
use serde_json::Value;

/// The union of the fields of every hook payload we read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Payload {
    pub session_id: String,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub hook_event_name: Option<String>,
    pub permission_mode: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<String>,
    pub model: Option<Value>,
    /// UserPromptSubmit.
    pub prompt: Option<String>,
    /// PostToolUse.
    pub tool_name: Option<String>,
    pub tool_input: Option<Value>,
    pub tool_response: Option<Value>,
    pub tool_use_id: Option<String>,
    /// PostToolUseFailure: the failure message and whether the user interrupted.
    pub error: Option<Value>,
    pub is_interrupt: Option<bool>,
    /// Stop.
    pub stop_hook_active: Option<bool>,
    pub last_assistant_message: Option<String>,
    /// SessionEnd.
    pub reason: Option<String>,
}

/// Why a payload was dropped.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    #[error("empty payload on stdin")]
    Empty,
    #[error("payload is not valid JSON: {0}")]
    Json(#[from] JsonFault),
    #[error("payload has no session_id")]
    NoSession,
}

/// Why a payload does not parse, and where, without a byte of it: serde_json's own
/// message quotes the input (`invalid type: string "ghp_…", expected a boolean`),
/// and a payload is prompts, commands and output not yet redacted, while the hook
/// log keeps whatever it is given. Every payload parse error reaches the log as one
/// of these (here and in `opencode.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at line {line}, column {column} (the payload is not logged)")]
pub struct JsonFault {
    kind: &'static str,
    line: usize,
    column: usize,
}

impl From<serde_json::Error> for JsonFault {
    fn from(e: serde_json::Error) -> JsonFault {
        use serde_json::error::Category;
        let kind = match e.classify() {
            Category::Syntax => "a syntax error",
            Category::Eof => "an unexpected end",
            Category::Data => "a value of the wrong type or shape",
            Category::Io => "a read error",
        };
        JsonFault {
            kind,
            line: e.line(),
            column: e.column(),
        }
    }
}

/// Parses a payload; it must at least name its session.
pub fn parse(bytes: &[u8]) -> Result<Payload, PayloadError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(PayloadError::Empty);
    }
    let payload: Payload = serde_json::from_slice(bytes).map_err(JsonFault::from)?;
    if payload.session_id.trim().is_empty() {
        return Err(PayloadError::NoSession);
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerates_unknown_and_missing_fields() {
        let p =
            parse(br#"{"session_id":"abc","hook_event_name":"Stop","brand_new_field":{"x":1}}"#)
                .expect("parses");
        assert_eq!(p.session_id, "abc");
        assert!(p.cwd.is_none());
    }

    #[test]
    fn refuses_what_cannot_be_captured() {
        assert!(matches!(parse(b"  \n"), Err(PayloadError::Empty)));
        assert!(matches!(parse(b"{not json"), Err(PayloadError::Json(_))));
        assert!(matches!(
            parse(b"{\"cwd\":\"/x\"}"),
            Err(PayloadError::NoSession)
        ));
        assert!(matches!(parse(b"[1,2]"), Err(PayloadError::Json(_))));
    }

    #[test]
    fn a_parse_error_says_what_and_where_but_quotes_nothing() {
        let token = format!("ghp_{}", "FAKEfake0123".repeat(3));
        for (bytes, kind) in [
            // A value of the wrong type: serde_json's message would quote it.
            (
                format!(r#"{{"session_id": "s", "is_interrupt": "{token}"}}"#),
                "a value of the wrong type or shape at line 1",
            ),
            (
                format!(r#"{{"session_id": 7, "prompt": "{token}"}}"#),
                "a value of the wrong type or shape at line 1",
            ),
            (
                format!("{{\"prompt\": \"{token}\" \"x\"}}"),
                "a syntax error at line 1",
            ),
            (
                format!("{{\"prompt\": \"{token}"),
                "an unexpected end at line 1",
            ),
        ] {
            let Err(e) = parse(bytes.as_bytes()) else {
                panic!("refused: {bytes}")
            };
            let message = e.to_string();
            assert!(message.contains(kind), "{message}");
            assert!(!message.contains("FAKEfake"), "{message}");
            assert!(!message.contains("session_id"), "{message}");
        }
    }
}
