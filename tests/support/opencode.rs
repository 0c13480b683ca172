//! OpenCode on the edge: the payloads SOLARIA's plugin forwards to `solaria hook
//! opencode <event>` (shaped as OpenCode 1.18 hands them to plugins), and
//! [`install_for_opencode`], the setup a test running the real `opencode` CLI
//! needs.

use crate::edge::Edge;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Pipes `payload` into `solaria hook opencode EVENT` (the hook contract checked:
/// exit 0, nothing on stderr).
pub fn hook(m: &Edge, event: &str, payload: &Value) -> Output {
    m.hook_args(&["hook", "opencode", event], payload.to_string().as_bytes())
}

fn dir(cwd: &Path) -> String {
    cwd.display().to_string()
}

/// `session.created` (a bus event).
pub fn session_created(session: &str, cwd: &Path) -> Value {
    json!({"cwd": dir(cwd), "properties": {"sessionID": session, "info": {
        "id": session, "slug": "brave-otter", "projectID": "prj_4f2a", "directory": dir(cwd),
        "title": "New session - 2026-11-24T06:00:00.000Z", "version": "1.18.33",
        "time": {"created": 1_795_500_000_000_i64, "updated": 1_795_500_000_000_i64}}}})
}

/// `chat.message`: what the user typed, with a synthetic part OpenCode adds itself.
pub fn chat_message(session: &str, cwd: &Path, text: &str) -> Value {
    json!({"cwd": dir(cwd),
    "input": {"sessionID": session, "agent": "build",
              "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
              "messageID": "msg_a1"},
    "output": {"parts": [
        {"type": "text", "text": text},
        {"type": "text", "text": "Called the Read tool with the following input: {}", "synthetic": true}
    ]}})
}

/// `tool.execute.after` of OpenCode tool `tool` (lower case) with its `args`,
/// `output` text and `metadata`.
pub fn tool_after(
    session: &str,
    cwd: &Path,
    tool: &str,
    args: Value,
    output: &str,
    metadata: Value,
) -> Value {
    json!({"cwd": dir(cwd),
        "input": {"tool": tool, "sessionID": session, "callID": format!("call_{tool}_1"), "args": args},
        "output": {"title": tool, "output": output, "metadata": metadata}})
}

/// `message.part.updated` for a tool call that threw (OpenCode skips
/// `tool.execute.after` then).
pub fn tool_error(session: &str, cwd: &Path, tool: &str, input: Value, error: &str) -> Value {
    json!({"cwd": dir(cwd), "properties": {"part": {
        "id": "prt_9", "sessionID": session, "messageID": "msg_b2", "type": "tool",
        "callID": "call_err_1", "tool": tool,
        "state": {"status": "error", "input": input, "error": error,
                  "time": {"start": 1_795_500_000_000_i64, "end": 1_795_500_000_100_i64}}}}})
}

/// `session.error`: the provider refused.
pub fn session_error(session: &str, cwd: &Path, message: &str) -> Value {
    json!({"cwd": dir(cwd), "properties": {"sessionID": session, "error": {
        "name": "APIError", "data": {"message": message, "statusCode": 529, "isRetryable": true}}}})
}

/// `session.idle`, with the assistant's last text the plugin kept.
pub fn session_idle(session: &str, cwd: &Path, last_text: &str) -> Value {
    json!({"cwd": dir(cwd), "properties": {"sessionID": session}, "last_assistant_message": last_text})
}

/// `context`: the plugin asking for the session's context text.
pub fn context_request(session: &str, cwd: &Path) -> Value {
    json!({"cwd": dir(cwd), "session_id": session})
}

/// What a real OpenCode run needs once SOLARIA is installed for it.
#[derive(Debug, Clone)]
pub struct OpenCodeSetup {
    /// Where the plugin was written.
    pub plugin: PathBuf,
    /// The config holding the `solaria` MCP entry (write your provider entry into
    /// it before or after: the installer keeps other keys byte for byte).
    pub config: PathBuf,
    /// Environment for `opencode` (add PATH): HOME and XDG dirs inside the machine,
    /// `SOLARIA_HOME` so the plugin's `solaria` writes this machine's store, and
    /// `PWD` = the project (OpenCode takes its project from `$PWD`).
    pub env: Vec<(String, String)>,
}

/// Installs SOLARIA for OpenCode on machine `m` exactly as a user would
/// (`solaria install opencode --scope user --no-service`, with
/// `XDG_CONFIG_HOME=<home>/.config`) and returns what `opencode run` needs:
/// start it in `m.project` with [`OpenCodeSetup::env`].
///
/// Seen with OpenCode 1.18.33 and a scripted Anthropic endpoint: put the provider
/// (`"provider": {"anthropic": {"options": {"baseURL": …, "apiKey": …}}}`, `"model"`)
/// and `"permission": {"edit": "allow", "bash": "allow"}` in `<project>/opencode.json`
/// (project config merges over the user config that holds `mcp.solaria`); on its
/// first start OpenCode `npm install`s `@opencode-ai/plugin` into the config dir (the
/// registry must be reachable; our plugin does not import it). Run it in its own
/// process group and kill the group on timeout. The plugin's forwards of
/// `session.idle` are detached: poll the store briefly after `opencode run` exits.
pub fn install_for_opencode(m: &Edge) -> OpenCodeSetup {
    let config_home = m.home().join(".config");
    let mut cmd = m.cmd_in(&m.project);
    cmd.env("XDG_CONFIG_HOME", &config_home)
        .args(["install", "opencode", "--no-service"]);
    let out = cmd.output().expect("run solaria install opencode");
    assert!(
        out.status.success(),
        "solaria install opencode: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = config_home.join("opencode");
    let s = |p: &Path| p.display().to_string();
    OpenCodeSetup {
        plugin: base.join("plugins/solaria.js"),
        config: base.join("opencode.json"),
        env: vec![
            ("HOME".into(), s(&m.home())),
            ("XDG_CONFIG_HOME".into(), s(&config_home)),
            ("XDG_DATA_HOME".into(), s(&m.home().join(".local/share"))),
            ("XDG_CACHE_HOME".into(), s(&m.home().join(".cache"))),
            ("XDG_STATE_HOME".into(), s(&m.home().join(".local/state"))),
            ("SOLARIA_HOME".into(), s(&m.data())),
            ("PWD".into(), s(&m.project)),
        ],
    }
}
