//! `solaria hook gemini <event>`: Gemini CLI's hooks, turned into the payloads
//! Claude Code's hooks send so that they go through the one capture
//! (`super::capture`), recorded as agent `gemini`. Gemini's payloads carry the same
//! `session_id`, `cwd` and `transcript_path`; what differs is adapted here:
//!
//! - its events: a prompt is BeforeAgent, a finished tool call AfterTool, a turn's
//!   end AfterAgent (whose `prompt_response` is the outcome);
//! - a prompt Gemini hands its hooks may begin with the context SOLARIA gave at the
//!   session's start (`<hook_context>…</hook_context>`): only the person's words are
//!   kept, never SOLARIA's own text fed back;
//! - its tools: `run_shell_command`, `write_file`, `replace`, `read_file` are
//!   recorded as Bash, Write, Edit and Read, with a command's exit code read from
//!   the text Gemini gives the model (`Exit Code: N`); MCP tools as
//!   `mcp__<server>__<tool>`;
//! - what it reads back: `hookSpecificOutput` under Gemini's event name;
//! - a compression: Gemini runs no SessionStart after one, and the context the
//!   session started with is summarised away with the rest; the next prompt whose
//!   transcript shows a compression since SOLARIA's context was last given gets the
//!   context again, before what it recalls.

use super::payload::{self, Payload};
use super::{Capturing, HookError, transcript};
use crate::config::Env;
use crate::context;
use serde_json::{Value, json};
use solaria_hook::protocol::{Event, GEMINI_COMMAND_MARKER, HookEvent, gemini_event};
use solaria_shared::render::context::CONTEXT_HEADING;

/// The agent name recorded on sessions captured from Gemini CLI.
pub const AGENT: &str = "gemini";

/// How Gemini wraps what hooks add to a prompt.
const CONTEXT_OPEN: &str = "<hook_context>";
const CONTEXT_CLOSE: &str = "</hook_context>";

/// Runs one Gemini hook through the hook contract (exit 0, nothing on stderr,
/// failures in the hook log).
pub fn run(event: &str, env: &Env) {
    let label = format!("gemini {}", event.escape_debug());
    super::process::run_guarded(&label, env, Event::Gemini(event.to_owned()));
}

/// One Gemini hook event captured as `cx` says; what the hook prints (the
/// context at a session's start, a prompt's recall), as the JSON Gemini reads.
pub fn handle(
    arg: &str,
    bytes: &[u8],
    cx: &mut Capturing<'_>,
) -> Result<Option<String>, HookError> {
    let (name, hook) = gemini_event(arg)
        .ok_or_else(|| HookError::UnknownGeminiEvent(arg.escape_debug().to_string()))?;
    let payload = adapt(hook, payload::parse(bytes)?, bytes);
    let context_again = hook == HookEvent::UserPromptSubmit
        && payload.transcript_path.as_deref().is_some_and(|path| {
            transcript::gemini_compressed_without_context(path, CONTEXT_HEADING)
        });
    if !context_again {
        let answer = super::Answering { name, agent: AGENT };
        return answer.capture(hook, &payload, cx);
    }
    // Answered once both are known: the context again, then what the prompt recalls.
    cx.slot.forget_early();
    let start = super::capture(HookEvent::SessionStart, &payload, AGENT, cx)?;
    let recalled = super::capture(hook, &payload, AGENT, cx)?;
    let both: Vec<String> = start.into_iter().chain(recalled).collect();
    Ok((!both.is_empty()).then(|| context::hook_output(name, &both.join("\n\n"))))
}

/// Gemini's payload for `hook` as Claude Code's (`raw` is the payload as sent,
/// for the fields Claude Code's payload does not have).
fn adapt(hook: HookEvent, mut payload: Payload, raw: &[u8]) -> Payload {
    match hook {
        HookEvent::UserPromptSubmit => {
            // `/solaria …` expanded: SOLARIA's own command, not the person's words.
            let own = payload
                .prompt
                .as_deref()
                .is_some_and(|p| p.contains(GEMINI_COMMAND_MARKER));
            payload.prompt = match own {
                true => None,
                false => payload.prompt.as_deref().map(persons_words),
            };
        }
        HookEvent::Stop => {
            let said = serde_json::from_slice::<Value>(raw)
                .ok()
                .and_then(|v| v.get("prompt_response")?.as_str().map(str::to_owned));
            payload.last_assistant_message = said.filter(|s| !s.trim().is_empty());
        }
        HookEvent::PostToolUse => adapt_tool(&mut payload),
        _ => {}
    }
    payload
}

/// A prompt without the hook context Gemini put before the person's words.
fn persons_words(prompt: &str) -> String {
    let mut rest = prompt.trim_start();
    while let Some(after) = rest.strip_prefix(CONTEXT_OPEN) {
        match after.find(CONTEXT_CLOSE) {
            Some(end) => rest = after[end + CONTEXT_CLOSE.len()..].trim_start(),
            None => break,
        }
    }
    rest.to_owned()
}

/// A Gemini tool call as the Claude Code tool it is, its response in the shape
/// the capture reads.
fn adapt_tool(payload: &mut Payload) {
    let name = payload.tool_name.clone().unwrap_or_default();
    let input = payload.tool_input.take().unwrap_or_default();
    let response = payload.tool_response.take().unwrap_or_default();
    let text = response
        .get("llmContent")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let error = response
        .get("error")
        .and_then(|e| e.get("message").or(Some(e)))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let (tool, input, mut response) = match name.as_str() {
        "run_shell_command" => {
            let code = exit_code(&text);
            let mut r = json!({ "stdout": shell_output(&text) });
            if let Some(code) = code {
                r["exit_code"] = json!(code);
                if code != 0 {
                    r["is_error"] = json!(true);
                }
            }
            let mut i = json!({ "command": input.get("command").cloned().unwrap_or_default() });
            if let Some(d) = input.get("description") {
                i["description"] = d.clone();
            }
            ("Bash".to_owned(), i, r)
        }
        "write_file" => ("Write".to_owned(), input, json!({ "message": text })),
        "replace" => ("Edit".to_owned(), input, json!({ "message": text })),
        "read_file" => {
            let path = input
                .get("file_path")
                .or_else(|| input.get("absolute_path"))
                .cloned()
                .unwrap_or_default();
            (
                "Read".to_owned(),
                json!({ "file_path": path }),
                json!({ "content": text }),
            )
        }
        other => (mcp_name(other), input, json!({ "output": text })),
    };
    if let Some(message) = error {
        response["error"] = json!(message);
    }
    payload.tool_name = Some(tool);
    payload.tool_input = Some(input);
    payload.tool_response = Some(response);
}

/// `mcp_<server>_<tool>` (Gemini's name for an MCP tool; a server's name holds no
/// `_`) as `mcp__<server>__<tool>`; any other name as it is.
fn mcp_name(tool: &str) -> String {
    match tool
        .strip_prefix("mcp_")
        .and_then(|rest| rest.split_once('_'))
    {
        Some((server, name)) if !server.is_empty() => format!("mcp__{server}__{name}"),
        _ => tool.to_owned(),
    }
}

/// The `Exit Code: N` line Gemini writes into a command's result when it failed.
fn exit_code(text: &str) -> Option<i64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Exit Code:"))
        .and_then(|n| n.trim().parse().ok())
}

/// What a command printed, from the result Gemini gives the model
/// (`<untrusted_context>\nOutput: …\nExit Code: …\nProcess Group PGID: …`).
fn shell_output(text: &str) -> String {
    let body = text
        .trim()
        .trim_start_matches("<untrusted_context>")
        .trim_end_matches("</untrusted_context>")
        .trim();
    let kept: Vec<&str> = body
        .lines()
        .filter(|l| !l.starts_with("Process Group PGID:"))
        .collect();
    let joined = kept.join("\n");
    joined
        .strip_prefix("Output:")
        .map_or(joined.clone(), |s| s.trim_start().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_keeps_the_persons_words_only() {
        assert_eq!(
            persons_words(
                "<hook_context># SOLARIA memory\n…</hook_context>\n\nfix the flaky upload"
            ),
            "fix the flaky upload"
        );
        assert_eq!(persons_words("just words"), "just words");
        // A person's own text that looks like the tag, unclosed, stays as typed.
        assert_eq!(persons_words("<hook_context> oops"), "<hook_context> oops");
        // `/solaria status` expanded is SOLARIA's own: nothing to capture.
        let raw = format!(
            r#"{{"session_id":"s","prompt":"<!-- {GEMINI_COMMAND_MARKER} -->\nSOLARIA Memory answered"}}"#
        );
        let p = adapt(
            HookEvent::UserPromptSubmit,
            payload::parse(raw.as_bytes()).expect("parses"),
            raw.as_bytes(),
        );
        assert_eq!(p.prompt, None);
    }

    fn tool_call(name: &str, input: Value, response: Value) -> Payload {
        let mut p = Payload {
            session_id: "s".into(),
            tool_name: Some(name.into()),
            tool_input: Some(input),
            tool_response: Some(response),
            ..Payload::default()
        };
        adapt_tool(&mut p);
        p
    }

    #[test]
    fn gemini_tools_are_captured_as_the_tools_they_are() {
        let failed = tool_call(
            "run_shell_command",
            json!({"command": "ls /nope", "description": "List"}),
            json!({"llmContent": "<untrusted_context>\nOutput: ls: cannot access '/nope'\nExit Code: 2\nProcess Group PGID: 9\n</untrusted_context>", "returnDisplay": "ls: cannot access '/nope'"}),
        );
        assert_eq!(failed.tool_name.as_deref(), Some("Bash"));
        assert_eq!(
            failed.tool_input,
            Some(json!({"command": "ls /nope", "description": "List"}))
        );
        assert_eq!(
            failed.tool_response,
            Some(
                json!({"stdout": "ls: cannot access '/nope'\nExit Code: 2", "exit_code": 2, "is_error": true})
            )
        );
        let ok = tool_call(
            "run_shell_command",
            json!({"command": "echo hi"}),
            json!({"llmContent": "<untrusted_context>\nOutput: hi\nProcess Group PGID: 9\n</untrusted_context>"}),
        );
        assert_eq!(ok.tool_response, Some(json!({"stdout": "hi"})));
        let write = tool_call(
            "write_file",
            json!({"file_path": "/p/notes.txt", "content": "x"}),
            json!({"llmContent": "Successfully created and wrote to new file: /p/notes.txt"}),
        );
        assert_eq!(write.tool_name.as_deref(), Some("Write"));
        let mcp = tool_call(
            "mcp_solaria_memory_search",
            json!({"query": "x"}),
            json!({"llmContent": "…"}),
        );
        assert_eq!(
            mcp.tool_name.as_deref(),
            Some("mcp__solaria__memory_search")
        );
        let broken = tool_call(
            "glob",
            json!({"pattern": "*"}),
            json!({"llmContent": "", "error": {"message": "no such dir", "type": "x"}}),
        );
        assert_eq!(
            broken.tool_response,
            Some(json!({"output": "", "error": "no such dir"}))
        );
    }

    #[test]
    fn a_turns_end_keeps_what_gemini_answered() {
        let raw = br#"{"session_id":"s","prompt":"p","prompt_response":"All done."}"#;
        let p = adapt(HookEvent::Stop, payload::parse(raw).expect("parses"), raw);
        assert_eq!(p.last_assistant_message.as_deref(), Some("All done."));
    }
}
