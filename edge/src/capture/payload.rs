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
    Json(#[from] serde_json::Error),
    #[error("payload has no session_id")]
    NoSession,
}

/// Parses a payload; it must at least name its session.
pub fn parse(bytes: &[u8]) -> Result<Payload, PayloadError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(PayloadError::Empty);
    }
    let payload: Payload = serde_json::from_slice(bytes)?;
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
}
