//! `solaria hook codex <event>`: Codex CLI's hooks. Codex runs the Claude Code
//! events SOLARIA listens to under the same names, with payloads of the same shape
//! (`session_id`, `cwd`, `transcript_path`, `prompt`, `tool_name`, `tool_input`,
//! `tool_response`) and reads the same `hookSpecificOutput` JSON, so its events go
//! through the one capture (`super::capture`) recorded as agent `codex`. Two
//! things differ, and are adapted here:
//!
//! - a shell command's `tool_response` is its output text alone, with no exit
//!   code: the code is read from the command's completed item in the session's
//!   rollout (`transcript_path`), so a failed command is flagged as one;
//! - a compaction is a SessionStart with `source` `compact`: the capture answers it
//!   with the context again, as for Claude Code.
//!
//! A prompt that calls SOLARIA's own skill (`$solaria-memory …`) is not captured,
//! as Claude Code's `/memory …` is not.

use super::payload::{self, Payload};
use super::{Capturing, HookError, transcript};
use crate::config::Env;
use serde_json::{Value, json};
use solaria_hook::protocol::{CODEX_EVENTS, Event, HookEvent, is_own_command};

/// The agent name recorded on sessions captured from Codex CLI.
pub const AGENT: &str = "codex";

/// Codex's name for its shell tool in hook payloads.
const SHELL_TOOL: &str = "Bash";

/// Runs one Codex hook through the hook contract (exit 0, nothing on stderr,
/// failures in the hook log).
pub fn run(event: &str, env: &Env) {
    let label = format!("codex {}", event.escape_debug());
    super::process::run_guarded(&label, env, Event::Codex(event.to_owned()));
}

/// The Codex event named by its `solaria hook codex` argument.
pub fn event(arg: &str) -> Option<HookEvent> {
    CODEX_EVENTS.into_iter().find(|e| e.arg() == arg)
}

/// One Codex hook event captured as `cx` says; what the hook prints (the
/// context at a session's start or compaction, a prompt's recall), as the JSON
/// Codex reads. The hook process and the daemon's relay both answer here.
pub fn handle(
    arg: &str,
    bytes: &[u8],
    cx: &mut Capturing<'_>,
) -> Result<Option<String>, HookError> {
    let hook =
        event(arg).ok_or_else(|| HookError::UnknownCodexEvent(arg.escape_debug().to_string()))?;
    let mut payload = payload::parse(bytes)?;
    match hook {
        HookEvent::PostToolUse => adapt_tool_response(&mut payload),
        HookEvent::UserPromptSubmit if payload.prompt.as_deref().is_some_and(is_own_command) => {
            payload.prompt = None;
        }
        _ => {}
    }
    let answer = super::Answering {
        name: hook.claude_name(),
        agent: AGENT,
    };
    answer.capture(hook, &payload, cx)
}

/// A shell command's output text becomes the response shape the capture reads
/// (`stdout`), with the exit code the rollout holds for it: a non-zero one marks
/// the call failed (`is_error`). Other tools' responses stay as they came.
fn adapt_tool_response(payload: &mut Payload) {
    if payload.tool_name.as_deref() != Some(SHELL_TOOL) {
        return;
    }
    let Some(Value::String(output)) = &payload.tool_response else {
        return;
    };
    let code = match (&payload.transcript_path, &payload.tool_use_id) {
        (Some(path), Some(call)) => transcript::codex_exit_code(path, call),
        _ => None,
    };
    let mut response = json!({ "stdout": output });
    if let Some(code) = code {
        response["exit_code"] = json!(code);
        if code != 0 {
            response["is_error"] = json!(true);
        }
    }
    payload.tool_response = Some(response);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell_call(output: &str, transcript: Option<&str>) -> Payload {
        Payload {
            session_id: "s".into(),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({"command": "cargo test"})),
            tool_response: Some(json!(output)),
            tool_use_id: Some("call_7".into()),
            transcript_path: transcript.map(str::to_owned),
            ..Payload::default()
        }
    }

    #[test]
    fn a_shell_commands_exit_code_comes_from_the_rollout() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rollout = dir.path().join("rollout.jsonl");
        std::fs::write(
            &rollout,
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"id":"call_7","exit_code":101}}}"#,
        )
        .expect("write");
        let mut failed = shell_call("error: could not compile", rollout.to_str());
        adapt_tool_response(&mut failed);
        assert_eq!(
            failed.tool_response,
            Some(json!({"stdout": "error: could not compile", "exit_code": 101, "is_error": true}))
        );
        // No rollout to read: the output alone, which the capture's own markers judge.
        let mut unknown = shell_call("ok", None);
        adapt_tool_response(&mut unknown);
        assert_eq!(unknown.tool_response, Some(json!({"stdout": "ok"})));
        // Another tool's response is left as it came.
        let mut patch = Payload {
            tool_name: Some("apply_patch".into()),
            ..shell_call("Success.", rollout.to_str())
        };
        adapt_tool_response(&mut patch);
        assert_eq!(patch.tool_response, Some(json!("Success.")));
    }

    #[test]
    fn only_the_events_codex_runs_are_taken() {
        assert_eq!(event("session-start"), Some(HookEvent::SessionStart));
        assert_eq!(event("post-tool-use"), Some(HookEvent::PostToolUse));
        assert_eq!(event("post-tool-use-failure"), None);
        assert_eq!(event("SessionStart"), None);
    }
}
