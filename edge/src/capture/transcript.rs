//! Reading the end of an agent's transcript (JSONL): for Claude Code the last
//! thing the assistant said (the outcome line of a session's summary), for Codex
//! CLI a command's exit code, which its hooks do not carry.

use solaria_shared::redact::redact;
use std::io::{Read, Seek, SeekFrom};

/// How much of the transcript's end is read; enough for the last turn, and cheap.
const TAIL_BYTES: u64 = 256 * 1024;

/// The last [`TAIL_BYTES`] of the transcript at `path`, as text.
fn tail(path: &str) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))
        .ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
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
