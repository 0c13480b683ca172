//! Reading the end of an agent's transcript (JSONL): for Claude Code the last
//! thing the assistant said (the outcome line of a session's summary), for Codex
//! CLI a command's exit code, which its hooks do not carry, for Gemini CLI whether
//! it compressed the conversation since SOLARIA's context was last given.

use solaria_shared::redact::redact;
use std::io::{Read, Seek, SeekFrom};

/// How much of the transcript's end is read; enough for the last turn, and cheap.
const TAIL_BYTES: u64 = 256 * 1024;

/// How much is read to find Gemini's last compression: the history it rewrites
/// then is one line, which holds the summary and the turns it kept.
const COMPRESSION_TAIL_BYTES: u64 = 2 * 1024 * 1024;

/// What Gemini CLI puts after a compression's summary, in the history it rewrites
/// (`chatCompressionService`), as its model's turn: no model writes it.
const GEMINI_COMPRESSED: &str = "Got it. Thanks for the additional context!";

/// The last `bytes` of the transcript at `path`, as text.
fn tail_of(path: &str, bytes: u64) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(bytes))).ok()?;
    let mut out = Vec::new();
    file.take(bytes).read_to_end(&mut out).ok()?;
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// The last [`TAIL_BYTES`] of the transcript at `path`, as text.
fn tail(path: &str) -> Option<String> {
    tail_of(path, TAIL_BYTES)
}

/// Whether Gemini CLI compressed the conversation of the transcript at `path`
/// (replacing its history by a summary, and with it the context SOLARIA gave at the
/// session's start) and no SOLARIA context (`heading`) was given after that.
pub fn gemini_compressed_without_context(path: &str, heading: &str) -> bool {
    let Some(text) = tail_of(path, COMPRESSION_TAIL_BYTES) else {
        return false;
    };
    text.rfind(GEMINI_COMPRESSED)
        .is_some_and(|at| !text[at..].contains(heading))
}

/// The text of the last assistant message in the transcript, redacted.
pub fn last_assistant_text(path: &str) -> Option<String> {
    tail(path)?
        .lines()
        .rev()
        .find_map(assistant_text)
        .map(|t| redact(&t).into_owned())
}

/// The exit code of the command call `call_id` in a Codex CLI rollout: the
/// `exit_code` of its completed item (`event_msg` → `item_completed`).
pub fn codex_exit_code(path: &str, call_id: &str) -> Option<i64> {
    tail(path)?.lines().rev().find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let item = v.get("payload")?.get("item")?;
        if item.get("id")?.as_str()? != call_id {
            return None;
        }
        item.get("exit_code")?.as_i64()
    })
}

fn assistant_text(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v.get("type")?.as_str()? != "assistant" {
        return None;
    }
    let content = v.get("message")?.get("content")?;
    let text = match content {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
            .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_last_assistant_text_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        let lines = [
            r#"{"type":"user","message":{"role":"user","content":"fix it"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"First answer"}]}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Bash"},{"type":"text","text":"All 12 tests pass now."}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result"}]}}"#,
            "not json at all",
        ];
        std::fs::write(&path, lines.join("\n")).expect("write");
        assert_eq!(
            last_assistant_text(path.to_str().expect("utf8")).as_deref(),
            Some("All 12 tests pass now.")
        );
        assert_eq!(last_assistant_text("/nonexistent/t.jsonl"), None);
    }

    #[test]
    fn a_gemini_compression_is_seen_until_the_context_is_given_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("session.jsonl");
        let heading = "# SOLARIA memory: project";
        let start = r#"{"id":"1","type":"user","content":[{"text":"<hook_context># SOLARIA memory: project api (k)…</hook_context>\n\nfix it"}]}"#;
        let compressed = r#"{"$set":{"messages":[{"type":"user","content":[{"text":"<state_snapshot>…</state_snapshot>"}]},{"type":"gemini","content":"Got it. Thanks for the additional context!"},{"type":"user","content":[{"text":"and the tests"}]}]}}"#;
        let turn = r#"{"id":"3","type":"user","content":[{"text":"and now?"}]}"#;
        let given = r#"{"id":"4","type":"user","content":[{"text":"next"},{"text":"<hook_context># SOLARIA memory: project api (k)…</hook_context>"}]}"#;
        let at = |lines: &[&str]| {
            std::fs::write(&path, lines.join("\n")).expect("write");
            gemini_compressed_without_context(path.to_str().expect("utf8"), heading)
        };
        assert!(!at(&[start]), "no compression yet");
        assert!(
            at(&[start, compressed]),
            "compressed: the start's context is gone"
        );
        assert!(at(&[start, compressed, turn]));
        assert!(
            !at(&[start, compressed, turn, given]),
            "given again after it"
        );
        assert!(!gemini_compressed_without_context("/nonexistent", heading));
    }

    #[test]
    fn finds_a_codex_commands_exit_code_by_its_call() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rollout.jsonl");
        let completed = |id: &str, code: i64| {
            format!(
                r#"{{"type":"event_msg","payload":{{"type":"item_completed","item":{{"type":"CommandExecution","id":"{id}","command":["/bin/bash","-lc","x"],"exit_code":{code}}}}}}}"#
            )
        };
        let lines = [
            completed("call_1", 0),
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_2","output":"Process exited with code 2"}}"#.to_string(),
            completed("call_2", 2),
            "not json".to_string(),
        ];
        std::fs::write(&path, lines.join("\n")).expect("write");
        let path = path.to_str().expect("utf8");
        assert_eq!(codex_exit_code(path, "call_1"), Some(0));
        assert_eq!(codex_exit_code(path, "call_2"), Some(2));
        assert_eq!(codex_exit_code(path, "call_3"), None);
        assert_eq!(codex_exit_code("/nonexistent", "call_1"), None);
    }
}
