//! The OpenCode adapter on the payloads OpenCode 1.18's plugin API hands over.

use super::*;

fn adapted(event: &str, payload: Value) -> (HookEvent, Payload) {
    match adapt(event, payload.to_string().as_bytes()) {
        Ok(Action::Capture(hook, p)) => (hook, p),
        other => panic!("{event}: expected a capture, got {other:?}"),
    }
}

#[test]
fn file_tools_read_like_claude_codes() {
    let (hook, p) = adapted(
        "tool.execute.after",
        json!({
            "cwd": "/w/api",
            "input": {"tool": "edit", "sessionID": "ses_1", "callID": "call_1",
                      "args": {"filePath": "/w/api/src/lib.rs", "oldString": "a", "newString": "b"}},
            "output": {"title": "src/lib.rs", "output": "Edit applied successfully.",
                       "metadata": {"diff": "-a\n+b", "filediff": {"before": "a", "after": "b"}}}
        }),
    );
    assert_eq!(hook, HookEvent::PostToolUse);
    assert_eq!(p.session_id, "ses_1");
    assert_eq!(p.tool_name.as_deref(), Some("Edit"));
    let input = p.tool_input.expect("input");
    assert_eq!(input["file_path"], "/w/api/src/lib.rs");
    assert_eq!(input["old_string"], "a");
    let response = p.tool_response.expect("response");
    assert_eq!(response["metadata"]["diff"], "-a\n+b");
    assert!(
        response["metadata"].get("filediff").is_none(),
        "whole files are not kept"
    );
    assert_eq!(p.tool_use_id.as_deref(), Some("call_1"));
}

#[test]
fn a_command_that_exits_non_zero_is_a_failure() {
    let (hook, p) = adapted(
        "tool.execute.after",
        json!({
            "input": {"tool": "bash", "sessionID": "ses_1", "callID": "c",
                      "args": {"command": "cargo test", "description": "Run tests"}},
            "output": {"title": "cargo test", "output": "error[E0308]: mismatched types",
                       "metadata": {"exit": 101, "output": "error[E0308]: mismatched types"}}
        }),
    );
    assert_eq!(hook, HookEvent::PostToolUseFailure);
    assert_eq!(p.tool_name.as_deref(), Some("Bash"));
    let error = p.error.expect("error");
    assert!(
        error
            .as_str()
            .is_some_and(|e| e.starts_with("Exit code 101"))
    );
    let (ok, p) = adapted(
        "tool.execute.after",
        json!({"input": {"tool": "bash", "sessionID": "s", "args": {"command": "ls"}},
               "output": {"output": "src\n", "metadata": {"exit": 0}}}),
    );
    assert_eq!(ok, HookEvent::PostToolUse);
    assert_eq!(p.tool_response.expect("response")["stdout"], "src\n");
}

#[test]
fn solarias_own_mcp_tools_keep_their_mark() {
    assert_eq!(
        claude_tool_name("solaria_memory_search"),
        "mcp__solaria__memory_search"
    );
    assert_eq!(claude_tool_name("github_get_issue"), "github_get_issue");
    assert_eq!(claude_tool_name("list"), "LS");
}

#[test]
fn the_user_text_of_a_message_is_the_prompt() {
    let (hook, p) = adapted(
        "chat.message",
        json!({
            "input": {"sessionID": "ses_9", "agent": "build"},
            "output": {"message": {"id": "msg_1", "role": "user", "sessionID": "ses_9"},
                       "parts": [
                           {"type": "text", "text": "Fix the refresh bug"},
                           {"type": "text", "text": "<file contents>", "synthetic": true},
                           {"type": "file", "url": "file:///x"}
                       ]}
        }),
    );
    assert_eq!(hook, HookEvent::UserPromptSubmit);
    assert_eq!(p.prompt.as_deref(), Some("Fix the refresh bug"));
    let ours = json!({"input": {"sessionID": "s"}, "output": {"parts": [
        {"type": "text", "text": format!("<!-- {OPENCODE_COMMAND_MARKER} -->\nSOLARIA answered")}]}});
    assert!(matches!(
        adapt("chat.message", ours.to_string().as_bytes()),
        Ok(Action::Ignore)
    ));
}

#[test]
fn session_events_find_their_session() {
    let (hook, p) = adapted(
        "session.created",
        json!({"properties": {"sessionID": "ses_2", "info": {"id": "ses_2", "directory": "/w/api", "title": "New session"}}}),
    );
    assert_eq!(hook, HookEvent::SessionStart);
    assert_eq!(p.cwd.as_deref(), Some("/w/api"));
    let (hook, _) = adapted(
        "session.deleted",
        json!({"properties": {"info": {"id": "ses_2"}}}),
    );
    assert_eq!(hook, HookEvent::SessionEnd);
    let (hook, p) = adapted(
        "session.idle",
        json!({"properties": {"sessionID": "ses_2"}, "last_assistant_message": "Done."}),
    );
    assert_eq!(hook, HookEvent::Stop);
    assert_eq!(p.last_assistant_message.as_deref(), Some("Done."));
    let (hook, p) = adapted(
        "session.error",
        json!({"properties": {"sessionID": "ses_2", "error": {"name": "APIError", "data": {"message": "overloaded"}}}}),
    );
    assert_eq!(hook, HookEvent::PostToolUseFailure);
    assert_eq!(p.tool_name.as_deref(), Some(SESSION_ERROR_TOOL));
}

#[test]
fn what_cannot_be_recorded_is_an_error_that_says_why() {
    let err = |event: &str, bytes: &[u8]| match adapt(event, bytes) {
        Err(e) => e.to_string(),
        Ok(a) => panic!("{event}: {a:?}"),
    };
    assert!(err("message.updated", b"{}").contains("unexpected OpenCode event"));
    assert!(err("session.idle", b"").contains("empty"));
    assert!(err("session.idle", b"{not json").contains("not a JSON object"));
    assert!(err("session.idle", b"[1]").contains("not a JSON object"));
    assert!(err("session.idle", b"{\"properties\": {}}").contains("names no session"));
    assert!(
        err("tool.execute.after", b"{\"input\": {\"sessionID\": \"s\"}}").contains("no tool name")
    );
    assert!(
        err(
            "message.part.updated",
            br#"{"properties": {"part": {"type": "text", "sessionID": "s"}}}"#
        )
        .contains("not a failed tool call")
    );
    assert_eq!(printable("a\nb\u{7}c"), "abc");
}

#[test]
fn the_events_whose_output_the_plugin_reads_are_the_ones_that_print() {
    // One payload each event adapts into a capture (or the context).
    let samples = [
        (
            "session.created",
            json!({"properties": {"info": {"id": "s"}}}),
        ),
        (
            "chat.message",
            json!({"input": {"sessionID": "s"}, "output": {"parts": [{"type": "text", "text": "hi"}]}}),
        ),
        (
            "tool.execute.after",
            json!({"input": {"sessionID": "s", "tool": "bash"}, "output": {"output": "ok", "metadata": {"exit": 0}}}),
        ),
        (
            "session.error",
            json!({"properties": {"sessionID": "s", "error": {"name": "APIError"}}}),
        ),
        ("session.idle", json!({"properties": {"sessionID": "s"}})),
        (
            "session.compacted",
            json!({"properties": {"sessionID": "s"}}),
        ),
        (
            "session.deleted",
            json!({"properties": {"info": {"id": "s"}}}),
        ),
        ("context", json!({"session_id": "s"})),
    ];
    for (event, payload) in samples {
        let printed = match adapt(event, payload.to_string().as_bytes()) {
            Ok(Action::Capture(hook, _)) => hook.prints(),
            Ok(Action::Context(_)) => true,
            other => panic!("{event}: {other:?}"),
        };
        assert_eq!(
            solaria_hook::protocol::opencode_prints(event),
            printed,
            "{event}"
        );
    }
    assert!(!solaria_hook::protocol::opencode_prints(
        "message.part.updated"
    ));
}
