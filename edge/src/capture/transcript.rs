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
///
/// Read backwards a [`TAIL_BYTES`] chunk at a time, at most
/// [`COMPRESSION_TAIL_BYTES`]: whichever of the two comes last in the file decides.
/// A short session, a headless run (its first prompt holds the start's context) or
/// a session that was given the context again ends in the last chunk; a long
/// interactive session never compressed still reads up to the cap.
pub fn gemini_compressed_without_context(path: &str, heading: &str) -> bool {
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return false;
    };
    // Chunks overlap by a marker's length, so none is missed across a boundary.
    let overlap = GEMINI_COMPRESSED.len().max(heading.len()) as u64;
    let floor = len.saturating_sub(COMPRESSION_TAIL_BYTES);
    let mut end = len;
    while end > floor {
        let start = end.saturating_sub(TAIL_BYTES).max(floor);
        let mut chunk = Vec::new();
        let read = file
            .seek(SeekFrom::Start(start))
            .and_then(|_| (&mut file).take(end - start).read_to_end(&mut chunk));
        if read.is_err() {
            return false;
        }
        let text = String::from_utf8_lossy(&chunk);
        match (text.rfind(GEMINI_COMPRESSED), text.rfind(heading)) {
            (Some(ack), Some(given)) => return ack > given,
            (Some(_), None) => return true,
            (None, Some(_)) => return false,
            (None, None) => {}
        }
        if start == floor {
            break;
        }
        end = start + overlap;
    }
    false
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
        // Far apart, across chunks: a compression followed by a long turn.
        let filler = format!(
            r#"{{"id":"5","type":"gemini","content":"{}"}}"#,
            "x".repeat(600_000)
        );
        assert!(
            at(&[start, compressed, &filler, turn]),
            "the ack, then much later nothing"
        );
        assert!(
            !at(&[start, compressed, &filler, given, &filler]),
            "given since"
        );
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
