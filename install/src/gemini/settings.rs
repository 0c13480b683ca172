//! SOLARIA's entries in Gemini CLI's `settings.json`: its hook groups (one per
//! event, first in each event's list) and `mcpServers.solaria`, inserted into the
//! user's text and taken out of it in place (`crate::jsonc`), so the
//! user's bytes come back on uninstall.

use crate::InstallError;
use crate::jsonc::{Doc, Member};
use crate::managed::read_text;
use crate::quote;
use serde_json::{Value, json};
use solaria_hook::program::HookProgram;
use solaria_hook::protocol::{GEMINI_EVENTS, MCP_SERVER_NAME};
use std::path::Path;

/// Milliseconds Gemini waits for one of our hooks before it gives up on it.
pub const HOOK_TIMEOUT_MS: u64 = 10_000;

/// The name our hook entries carry (`solaria-<arg>`): how ours are told apart.
const NAME_PREFIX: &str = "solaria-";

/// What uninstall does to the settings.
pub(super) enum Edit {
    Write(String),
    Remove,
}

/// The group SOLARIA adds for the event `arg` (`after-tool`, …).
fn our_group(program: &HookProgram, arg: &str) -> Value {
    // Tool events match tool names by regular expression; lifecycle events by
    // exact value, where an empty matcher matches all.
    let matcher = if arg == "after-tool" { "*" } else { "" };
    json!({
        "matcher": matcher,
        "hooks": [{
            "name": format!("{NAME_PREFIX}{arg}"),
            "type": "command",
            "command": hook_command(program, arg),
            "timeout": HOOK_TIMEOUT_MS,
        }],
    })
}

/// The hook's command line. Gemini CLI stops the agent when a hook command fails,
/// and a binary that is gone (moved by an upgrade, removed by hand) fails before
/// the hook's own exit-0 rule can run: `|| true` keeps the agent going then.
fn hook_command(program: &HookProgram, arg: &str) -> String {
    let line = quote::command_line(&[program.command(), vec!["gemini", arg]].concat());
    format!("{line} || true")
}

/// Ours: a group whose hooks are all named as SOLARIA names its own.
fn is_our_group(group: &Value) -> bool {
    group["hooks"].as_array().is_some_and(|hooks| {
        !hooks.is_empty()
            && hooks.iter().all(|h| {
                h["name"].as_str().is_some_and(|n| {
                    n.strip_prefix(NAME_PREFIX)
                        .is_some_and(|arg| GEMINI_EVENTS.iter().any(|(a, _, _)| *a == arg))
                })
            })
    })
}

/// Ours: runs `<a solaria binary> mcp`.
fn is_our_server(entry: &Value) -> bool {
    let command = entry["command"].as_str().unwrap_or("");
    let name = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    entry["args"] == json!(["mcp"]) && name.starts_with("solaria")
}

fn our_server(exe: &str) -> Value {
    json!({ "command": exe, "args": ["mcp"] })
}

/// The settings' text, or `None` when there is no file.
fn read(path: &Path) -> Result<Option<String>, InstallError> {
    read_text(path, "JSON")
}

/// The parsed settings with the offset of the top-level `{`, their shape checked
/// where we edit.
fn parse(path: &Path, text: &str) -> Result<(Doc, usize), InstallError> {
    let doc = Doc::parse(text).map_err(|reason| InstallError::InvalidConfig {
        path: path.to_owned(),
        format: "JSON",
        reason: reason.to_string(),
    })?;
    let shape =
        |what: String, expected: &'static str, found: &Value| InstallError::UnexpectedShape {
            path: path.to_owned(),
            what,
            expected,
            found: crate::claude_code::json_kind(found),
        };
    if !doc.value.is_object() {
        return Err(shape("the top level".into(), "an object", &doc.value));
    }
    for key in ["hooks", "mcpServers"] {
        if let Some(v) = doc.value.get(key).filter(|v| !v.is_object()) {
            return Err(shape(format!("\"{key}\""), "an object", v));
        }
    }
    if let Some(hooks) = doc.value.get("hooks").and_then(Value::as_object) {
        for (_, name, _) in GEMINI_EVENTS {
            if let Some(v) = hooks.get(name).filter(|v| !v.is_array()) {
                return Err(shape(format!("\"hooks\".\"{name}\""), "an array", v));
            }
        }
    }
    let root = doc.root().unwrap_or(0);
    Ok((doc, root))
}

fn member<'a>(members: &'a [Member], key: &str) -> Option<&'a Member> {
    members.iter().find(|m| m.key == key)
}

/// `text` with `value` as member `key` of the object at `open` (none there yet).
fn with_member(doc: &Doc, open: usize, key: &str, value: &str, indent: &str) -> String {
    let sep = if doc.members(open).is_empty() {
        ""
    } else {
        ","
    };
    let key = Value::from(key);
    doc.inserted(open + 1, &format!("\n{indent}{key}: {value}{sep}"))
}

/// The settings at `path` with SOLARIA's entries for `exe`, whose hooks run
/// `program`; `None` when they already hold exactly those.
pub(super) fn with_ours(
    path: &Path,
    exe: &str,
    program: &HookProgram,
) -> Result<Option<String>, InstallError> {
    let original = read(path)?;
    let mut text = match &original {
        Some(text) if !text.trim().is_empty() => without_ours(path, text)?,
        _ => "{}\n".to_owned(),
    };
    let (doc, _) = parse(path, &text)?;
    if doc.value["mcpServers"].get(MCP_SERVER_NAME).is_some() {
        return Err(InstallError::ForeignMcpServer {
            path: path.to_owned(),
        });
    }
    for (arg, event, _) in GEMINI_EVENTS {
        let group = our_group(program, arg).to_string();
        let (doc, root) = parse(path, &text)?;
        let top = doc.members(root);
        text = match member(&top, "hooks") {
            None => with_member(
                &doc,
                root,
                "hooks",
                &format!(
                    "{{\n    {}: [\n      {group}\n    ]\n  }}",
                    Value::from(event)
                ),
                "  ",
            ),
            Some(hooks) => match member(&doc.members(hooks.value_start), event) {
                None => with_member(
                    &doc,
                    hooks.value_start,
                    event,
                    &format!("[\n      {group}\n    ]"),
                    "    ",
                ),
                Some(groups) => {
                    let sep = if doc.elements(groups.value_start).is_empty() {
                        ""
                    } else {
                        ","
                    };
                    doc.inserted(groups.value_start + 1, &format!("\n      {group}{sep}"))
                }
            },
        };
    }
    let (doc, root) = parse(path, &text)?;
    let entry = our_server(exe).to_string();
    let top = doc.members(root);
    text = match member(&top, "mcpServers") {
        None => with_member(
            &doc,
            root,
            "mcpServers",
            &format!("{{\n    \"{MCP_SERVER_NAME}\": {entry}\n  }}"),
            "  ",
        ),
        Some(servers) => with_member(&doc, servers.value_start, MCP_SERVER_NAME, &entry, "    "),
    };
    Ok((original.as_deref() != Some(text.as_str())).then_some(text))
}

/// `text` without SOLARIA's hook groups and MCP entry (an event's list, `hooks`
/// and `mcpServers` go too when ours were all they held).
fn without_ours(path: &Path, text: &str) -> Result<String, InstallError> {
    let mut text = text.to_owned();
    loop {
        let (doc, root) = parse(path, &text)?;
        let top = doc.members(root);
        let next = next_removal(&doc, &top);
        match next {
            Some(edited) => text = edited,
            None => return Ok(text),
        }
    }
}

/// The text with one of our entries (or a container they leave empty) removed;
/// `None` when none is left.
fn next_removal(doc: &Doc, top: &[Member]) -> Option<String> {
    let index = |key: &str| top.iter().position(|m| m.key == key);
    if let Some(h) = index("hooks") {
        let hooks = doc.members(top[h].value_start);
        for (e, event) in hooks.iter().enumerate() {
            let groups = doc.elements(event.value_start);
            let Some(values) = doc.value["hooks"][&event.key].as_array() else {
                continue;
            };
            if let Some(g) = values.iter().position(is_our_group) {
                return Some(if groups.len() == 1 {
                    if hooks.len() == 1 {
                        doc.without_member(top, h)
                    } else {
                        doc.without_member(&hooks, e)
                    }
                } else {
                    doc.without_member(&groups, g)
                });
            }
        }
    }
    if let Some(s) = index("mcpServers") {
        let servers = doc.members(top[s].value_start);
        if let Some(i) = servers.iter().position(|m| {
            m.key == MCP_SERVER_NAME && is_our_server(&doc.value["mcpServers"][MCP_SERVER_NAME])
        }) {
            return Some(if servers.len() == 1 {
                doc.without_member(top, s)
            } else {
                doc.without_member(&servers, i)
            });
        }
    }
    None
}

/// What uninstall does to the settings at `path`: `None` when ours are not there.
pub(super) fn without(path: &Path) -> Result<Option<Edit>, InstallError> {
    let Some(text) = read(path)? else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let edited = without_ours(path, &text)?;
    if edited == text {
        return Ok(None);
    }
    let rest = Doc::parse(&edited).map(|d| d.value).unwrap_or(Value::Null);
    if rest == json!({}) {
        return Ok(Some(Edit::Remove));
    }
    Ok(Some(Edit::Write(edited)))
}

/// Whether the settings hold any of SOLARIA's entries (for any solaria).
pub(super) fn has_ours(path: &Path) -> Result<bool, InstallError> {
    let Some(text) = read(path)? else {
        return Ok(false);
    };
    if text.trim().is_empty() {
        return Ok(false);
    }
    Ok(without_ours(path, &text)? != text)
}
