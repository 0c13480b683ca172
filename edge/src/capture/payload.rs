//! Claude Code hook payloads as they arrive on stdin. Unknown fields are ignored and
//! missing ones default, so a newer or older Claude Code never breaks capture.

use serde::Deserialize;
use serde_json::Value;

/// The hook events SOLARIA handles, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PostToolUse,
    /// A tool call that failed (newer Claude Code sends these instead of PostToolUse).
    PostToolUseFailure,
    Stop,
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order `solaria hook --help` lists them.
    pub const ALL: [HookEvent; 6] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    /// Its `solaria hook` argument, as the installers write it.
    pub const fn arg(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::PostToolUse => "post-tool-use",
            HookEvent::PostToolUseFailure => "post-tool-use-failure",
            HookEvent::Stop => "stop",
            HookEvent::SessionEnd => "session-end",
        }
    }

    /// The event named by its `solaria hook` argument (`post-tool-use`, …). Matched
    /// here rather than through clap, which `solaria-hook` does not link.
    pub fn from_arg(arg: &str) -> Option<HookEvent> {
        Self::ALL.into_iter().find(|event| event.arg() == arg)
    }

    /// Whether Claude Code reads what the hook prints: SessionStart's context and
    /// a prompt's recall. The other events' hooks print nothing.
    pub fn prints(self) -> bool {
        matches!(self, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
    }

    /// Claude Code's name for the event (`hook_event_name`).
    pub const fn claude_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Stop => "Stop",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }
}

/// `solaria hook EVENT` takes the names of [`HookEvent::arg`].
impl clap::ValueEnum for HookEvent {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.arg()))
    }
}

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
    fn every_event_is_named_alike_on_the_command_line_and_in_the_relay() {
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::from_arg(event.arg()), Some(event));
            let parsed = <HookEvent as clap::ValueEnum>::from_str(event.arg(), false);
            assert_eq!(parsed, Ok(event));
        }
        assert_eq!(HookEvent::from_arg("PostToolUse"), None);
        assert_eq!(HookEvent::from_arg("post-tool"), None);
    }

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
