//! `solaria hook opencode <event>`: OpenCode's plugin events turned into the
//! payloads Claude Code's hooks send, so both agents go through one capture
//! (`super::capture`) and their records read alike: the same sessions, prompts,
//! tool-use titles, files and summaries, under the same project key.
//!
//! The plugin (`crate::install::opencode::plugin`) forwards what OpenCode 1.18 hands it,
//! unchanged, as `{"cwd": …, "input": …, "output": …}` for its hooks
//! (`chat.message`, `tool.execute.after`) and `{"cwd": …, "properties": …}` for
//! bus events (`session.created`, `session.idle`, …); this module knows their
//! shapes. What it cannot use is an [`AdaptError`]: logged and dropped, exit 0.

use super::payload::{JsonFault, Payload};
use super::{Capturing, HookError};
use crate::config::Env;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use solaria_hook::protocol::{Event, HookEvent, MCP_SERVER_NAME, OPENCODE_COMMAND_MARKER};

/// The agent name recorded on sessions captured from OpenCode.
pub const AGENT: &str = "opencode";

/// The events `solaria hook opencode` understands, OpenCode's names (plus
/// `context`, the plugin asking for the session's context text).
pub const EVENTS: &[&str] = &[
    "session.created",
    "chat.message",
    "tool.execute.after",
    "message.part.updated",
    "session.error",
    "session.idle",
    "session.compacted",
    "session.deleted",
    "context",
];

/// What one OpenCode event becomes.
#[derive(Debug, Clone)]
pub enum Action {
    /// The same capture as this Claude Code hook event and payload.
    Capture(HookEvent, Payload),
    /// The plugin asks for the session's context: a SessionStart whose text is
    /// printed as it is.
    Context(Payload),
    /// Nothing to record, on purpose (an empty prompt, our own `/memory`).
    Ignore,
}

/// Why an OpenCode event was dropped.
#[derive(Debug, thiserror::Error)]
pub enum AdaptError {
    /// An event name this version does not handle.
    #[error("unexpected OpenCode event {0:?} (handled: {handled})", handled = EVENTS.join(", "))]
    UnknownEvent(String),
    /// Nothing on stdin.
    #[error("empty payload on stdin")]
    Empty,
    /// Not a JSON object (where and why, never what: see [`JsonFault`]).
    #[error("payload is not a JSON object: {0}")]
    Json(#[from] JsonFault),
    /// No session id anywhere in the payload.
    #[error("{0} payload names no session")]
    NoSession(&'static str),
    /// The event is known, but not in a shape we can record.
    #[error("{event} payload: {what}")]
    Shape {
        /// The event.
        event: &'static str,
        /// What is missing or wrong.
        what: &'static str,
    },
}

/// Runs one OpenCode event through the hook contract (exit 0, nothing on stderr,
/// failures in the hook log).
pub fn run(event: &str, env: &Env) {
    let label = format!("opencode {}", printable(event));
    super::process::run_guarded(&label, env, Event::OpenCode(event.to_owned()));
}

/// One OpenCode event captured as `cx` says; what to print: for
/// `chat.message` the recalled memory, which the plugin adds to that message, for
/// `context` the context text, which it adds to the system prompt (other events'
/// output it ignores). The hook process and the daemon's relay both answer here.
pub fn handle(
    event: &str,
    bytes: &[u8],
    cx: &mut Capturing<'_>,
) -> Result<Option<String>, HookError> {
    match adapt(event, bytes)? {
        Action::Capture(hook, payload) => Ok(super::capture(hook, &payload, AGENT, cx)?),
        Action::Context(payload) => Ok(super::capture(
            HookEvent::SessionStart,
            &payload,
            AGENT,
            cx,
        )?),
        Action::Ignore => Ok(None),
    }
}

/// What the plugin sends: the hook's `input`/`output`, or the bus event's
/// `properties`, with the directory OpenCode runs in.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Envelope {
    session_id: Option<String>,
    cwd: Option<String>,
    input: Value,
    output: Value,
    properties: Value,
    /// `session.idle`: the last text the assistant wrote (the plugin keeps it).
    last_assistant_message: Option<String>,
}

/// Maps one OpenCode event to the capture it stands for.
pub fn adapt(event: &str, bytes: &[u8]) -> Result<Action, AdaptError> {
    let Some(&name) = EVENTS.iter().find(|e| **e == event) else {
        return Err(AdaptError::UnknownEvent(printable(event)));
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(AdaptError::Empty);
    }
    let env: Envelope = serde_json::from_slice(bytes).map_err(JsonFault::from)?;
    let session_id = session_id(&env).ok_or(AdaptError::NoSession(name))?;
    let cwd = env
        .cwd
        .clone()
        .or_else(|| str_at(&env.properties, &["info", "directory"]).map(str::to_owned));
    let base = Payload {
        session_id,
        cwd,
        hook_event_name: Some(name.to_owned()),
        ..Payload::default()
    };
    let action = match name {
        "session.created" => {
            let subagent = env
                .properties
                .pointer("/info/parentID")
                .is_some_and(|p| !p.is_null());
            Action::Capture(
                HookEvent::SessionStart,
                Payload {
                    source: Some(if subagent { "subagent" } else { "startup" }.to_owned()),
                    ..base
                },
            )
        }
        "context" => Action::Context(Payload {
            source: Some("startup".to_owned()),
            ..base
        }),
        "chat.message" => match user_text(&env.output) {
            Some(text) if !text.contains(OPENCODE_COMMAND_MARKER) => Action::Capture(
                HookEvent::UserPromptSubmit,
                Payload {
                    prompt: Some(text),
                    ..base
                },
            ),
            _ => Action::Ignore,
        },
        "tool.execute.after" => tool_after(&env, base)?,
        "message.part.updated" => tool_error(&env, base)?,
        "session.error" => session_error(&env, base),
        "session.idle" | "session.compacted" => Action::Capture(
            HookEvent::Stop,
            Payload {
                last_assistant_message: env.last_assistant_message.clone(),
                ..base
            },
        ),
        "session.deleted" => Action::Capture(
            HookEvent::SessionEnd,
            Payload {
                reason: Some("deleted".to_owned()),
                ..base
            },
        ),
        _ => return Err(AdaptError::UnknownEvent(name.to_owned())),
    };
    Ok(action)
}

/// The session id, wherever this event carries it.
/// The OpenCode session an event's payload names, read as [`adapt`] reads it.
pub fn session_of(bytes: &[u8]) -> Option<String> {
    session_id(&serde_json::from_slice(bytes).ok()?)
}

fn session_id(env: &Envelope) -> Option<String> {
    let candidates = [
        env.session_id.as_deref(),
        str_at(&env.input, &["sessionID"]),
        str_at(&env.properties, &["sessionID"]),
        str_at(&env.properties, &["info", "id"]),
        str_at(&env.properties, &["part", "sessionID"]),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|s| !s.trim().is_empty())
        .map(str::to_owned)
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(v, |v, key| v.get(key))
        .and_then(Value::as_str)
}

/// The text the user typed: the message's text parts, without the ones OpenCode
/// adds itself (`synthetic`: attached file contents and the like) or ignores.
fn user_text(output: &Value) -> Option<String> {
    let parts = output.get("parts")?.as_array()?;
    let texts: Vec<&str> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter(|p| !flag(p, "synthetic") && !flag(p, "ignored"))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .filter(|t| !t.trim().is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool) == Some(true)
}

/// `tool.execute.after`: a tool call that finished. A shell command that exited
/// non-zero is a failure, as Claude Code reports it (`PostToolUseFailure`).
fn tool_after(env: &Envelope, base: Payload) -> Result<Action, AdaptError> {
    const EVENT: &str = "tool.execute.after";
    let tool = str_at(&env.input, &["tool"]).ok_or(AdaptError::Shape {
        event: EVENT,
        what: "no tool name",
    })?;
    let name = claude_tool_name(tool);
    let input = claude_tool_input(&name, env.input.get("args").cloned().unwrap_or(Value::Null));
    let call_id = str_at(&env.input, &["callID"]).map(str::to_owned);
    let output = env.output.get("output").cloned().unwrap_or(Value::Null);
    let metadata = env.output.get("metadata").cloned().unwrap_or(Value::Null);
    let exit = metadata.get("exit").and_then(Value::as_i64);
    let base = Payload {
        tool_name: Some(name.clone()),
        tool_input: Some(input),
        tool_use_id: call_id,
        ..base
    };
    if name == "Bash" {
        let text = output.as_str().unwrap_or_default();
        if let Some(code) = exit.filter(|c| *c != 0) {
            return Ok(Action::Capture(
                HookEvent::PostToolUseFailure,
                Payload {
                    error: Some(json!(format!("Exit code {code}\n{text}"))),
                    is_interrupt: Some(false),
                    ..base
                },
            ));
        }
        let response = json!({"stdout": text, "stderr": "", "interrupted": false});
        return Ok(Action::Capture(
            HookEvent::PostToolUse,
            Payload {
                tool_response: Some(response),
                ..base
            },
        ));
    }
    let mut response = Map::new();
    response.insert("output".into(), output);
    if let Some(title) = str_at(&env.output, &["title"]).filter(|t| !t.is_empty()) {
        response.insert("title".into(), json!(title));
    }
    if let Some(kept) = scalar_fields(&metadata) {
        response.insert("metadata".into(), kept);
    }
    Ok(Action::Capture(
        HookEvent::PostToolUse,
        Payload {
            tool_response: Some(Value::Object(response)),
            ..base
        },
    ))
}

/// The plain fields of a tool's metadata (exit codes, counts, a diff): its nested
/// objects repeat the whole file before and after an edit, too big to keep.
fn scalar_fields(metadata: &Value) -> Option<Value> {
    let map = metadata.as_object()?;
    let kept: Map<String, Value> = map
        .iter()
        .filter(|(k, v)| !v.is_object() && !v.is_array() && !v.is_null() && *k != "output")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!kept.is_empty()).then_some(Value::Object(kept))
}

/// `message.part.updated` for a tool part whose state is `error` (a tool that
/// threw: OpenCode does not run `tool.execute.after` for it). Other part updates
/// are not the plugin's to send.
fn tool_error(env: &Envelope, base: Payload) -> Result<Action, AdaptError> {
    const EVENT: &str = "message.part.updated";
    let part = env.properties.get("part").unwrap_or(&Value::Null);
    if str_at(part, &["type"]) != Some("tool")
        || str_at(part, &["state", "status"]) != Some("error")
    {
        return Err(AdaptError::Shape {
            event: EVENT,
            what: "not a failed tool call",
        });
    }
    let tool = str_at(part, &["tool"]).ok_or(AdaptError::Shape {
        event: EVENT,
        what: "no tool name",
    })?;
    let name = claude_tool_name(tool);
    let input = claude_tool_input(
        &name,
        part.pointer("/state/input").cloned().unwrap_or(Value::Null),
    );
    let error = str_at(part, &["state", "error"]).unwrap_or("tool failed");
    // OpenCode words a call the user stopped this way (MessageAbortedError).
    let interrupted = error.contains("aborted");
    Ok(Action::Capture(
        HookEvent::PostToolUseFailure,
        Payload {
            tool_name: Some(name),
            tool_input: Some(input),
            tool_use_id: str_at(part, &["callID"]).map(str::to_owned),
            error: Some(json!(error)),
            is_interrupt: Some(interrupted),
            ..base
        },
    ))
}

/// `session.error`: the model call failed (provider, quota, length, abort). Kept as
/// a failed call of the pseudo-tool `SessionError` so it shows in the session's
/// errors, its summary and the context, like a failed tool.
fn session_error(env: &Envelope, base: Payload) -> Action {
    let error = env.properties.get("error").unwrap_or(&Value::Null);
    let name = str_at(error, &["name"]).unwrap_or("UnknownError");
    let message = str_at(error, &["data", "message"]).unwrap_or("");
    Action::Capture(
        HookEvent::PostToolUseFailure,
        Payload {
            tool_name: Some(SESSION_ERROR_TOOL.to_owned()),
            tool_input: Some(json!({"name": name, "message": message})),
            error: Some(json!(format!("{name}: {message}"))),
            is_interrupt: Some(name == "MessageAbortedError"),
            ..base
        },
    )
}

/// The tool name a session error is recorded under.
pub const SESSION_ERROR_TOOL: &str = "SessionError";

/// Claude Code's name for an OpenCode tool, so titles, file lists, summaries and
/// searches read the same for both agents. SOLARIA's own MCP tools
/// (`solaria_<tool>` in OpenCode) become `mcp__solaria__<tool>`, which capture
/// recognises and skips.
pub fn claude_tool_name(tool: &str) -> String {
    let mapped = match tool {
        "bash" => "Bash",
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "multiedit" => "MultiEdit",
        "glob" => "Glob",
        "grep" => "Grep",
        "list" => "LS",
        "webfetch" => "WebFetch",
        "websearch" => "WebSearch",
        "todowrite" => "TodoWrite",
        "todoread" => "TodoRead",
        "task" => "Task",
        _ => {
            let own = format!("{}_", MCP_SERVER_NAME);
            return match tool.strip_prefix(&own) {
                Some(rest) => format!("mcp__{}__{rest}", MCP_SERVER_NAME),
                None => tool.to_owned(),
            };
        }
    };
    mapped.to_owned()
}

/// A built-in tool's arguments under Claude Code's keys (`filePath` →
/// `file_path`, `oldString` → `old_string`, …); other tools' are kept as they are.
fn claude_tool_input(claude_name: &str, args: Value) -> Value {
    let builtin = claude_name.chars().next().is_some_and(char::is_uppercase)
        && claude_name != SESSION_ERROR_TOOL;
    match args {
        Value::Object(map) if builtin => {
            Value::Object(map.into_iter().map(|(k, v)| (snake_case(&k), v)).collect())
        }
        other => other,
    }
}

fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// An event name as it can appear in the log: one short line.
fn printable(event: &str) -> String {
    let clean: String = event.chars().filter(|c| !c.is_control()).take(60).collect();
    if clean.is_empty() {
        "(no event)".to_owned()
    } else {
        clean
    }
}

#[cfg(test)]
mod tests;
