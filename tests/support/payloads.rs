//! Claude Code-shaped hook payloads and project directories for the edge tests.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The real `solaria` binary, as a string for commands and settings text.
pub fn solaria() -> String {
    crate::binary("solaria").display().to_string()
}

/// A project directory that is a git clone of `remote` (or a plain directory).
pub fn project(parent: &Path, name: &str, remote: Option<&str>) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(dir.join("src")).expect("project dir");
    if let Some(url) = remote {
        std::fs::create_dir_all(dir.join(".git")).expect(".git");
        std::fs::write(
            dir.join(".git/config"),
            format!("[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"),
        )
        .expect("git config");
    }
    dir
}

/// The fields every Claude Code hook payload carries.
pub fn base(event: &str, session: &str, cwd: &Path) -> Value {
    json!({
        "session_id": session,
        "transcript_path": format!("/tmp/nonexistent/{session}.jsonl"),
        "cwd": cwd.display().to_string(),
        "hook_event_name": event,
        "permission_mode": "default",
    })
}

pub fn with(mut v: Value, extra: Value) -> Value {
    if let (Some(map), Value::Object(add)) = (v.as_object_mut(), extra) {
        map.extend(add);
    }
    v
}

pub fn session_start(session: &str, cwd: &Path) -> Value {
    with(
        base("SessionStart", session, cwd),
        json!({"source": "startup"}),
    )
}

pub fn prompt(session: &str, cwd: &Path, text: &str) -> Value {
    with(
        base("UserPromptSubmit", session, cwd),
        json!({"prompt": text}),
    )
}

pub fn tool(session: &str, cwd: &Path, name: &str, input: Value, response: Value) -> Value {
    with(
        base("PostToolUse", session, cwd),
        json!({
            "tool_name": name,
            "tool_input": input,
            "tool_response": response,
            "tool_use_id": format!("toolu_{}", uuid_like()),
        }),
    )
}

pub fn stop(session: &str, cwd: &Path) -> Value {
    with(
        base("Stop", session, cwd),
        json!({"stop_hook_active": false}),
    )
}

pub fn session_end(session: &str, cwd: &Path) -> Value {
    with(
        base("SessionEnd", session, cwd),
        json!({"reason": "prompt_input_exit"}),
    )
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{:016x}",
        N.fetch_add(1, Ordering::Relaxed) + std::process::id() as u64 * 1_000_000
    )
}
