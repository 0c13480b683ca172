//! SOLARIA's MCP server in OpenCode's config: `"mcp": {"solaria": {"type":
//! "local", "command": [exe, "mcp"], "enabled": true}}`, inserted into and removed
//! from the user's text (`jsonc.rs`), never re-rendered.

use crate::InstallError;
use crate::claude_code::MCP_SERVER_NAME;
use crate::jsonc::{Doc, Member};
use crate::managed::read_text;
use serde_json::{Value, json};
use std::path::Path;

/// The `$schema` a config we create starts with; a config holding nothing else
/// once our entry is gone is one we created, and is removed.
const SCHEMA: &str = "https://opencode.ai/config.json";

/// What uninstall does to the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Edit {
    /// Write this text.
    Write(String),
    /// Remove the file (we created it and it holds nothing else).
    Remove,
}

/// Our entry for `exe`, on one line.
fn entry(exe: &str) -> Value {
    json!({"type": "local", "command": [exe, "mcp"], "enabled": true})
}

/// Ours: a local server running `<a solaria binary> mcp`.
fn is_ours(entry: &Value) -> bool {
    let Some(command) = entry.get("command").and_then(Value::as_array) else {
        return false;
    };
    let program = command.first().and_then(Value::as_str).unwrap_or("");
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    command.len() == 2 && command.get(1) == Some(&json!("mcp")) && name.starts_with("solaria")
}

/// The config's text, or `None` when there is no file.
fn read(path: &Path) -> Result<Option<String>, InstallError> {
    read_text(path, "JSON/JSONC")
}

/// The parsed config with the offset of its top-level `{`; `None` for a blank file.
fn parse(path: &Path, text: &str) -> Result<Option<(Doc, usize)>, InstallError> {
    if text.trim_start_matches('\u{feff}').trim().is_empty() {
        return Ok(None);
    }
    let doc = Doc::parse(text).map_err(|reason| InstallError::InvalidConfig {
        path: path.to_owned(),
        format: "JSON/JSONC",
        reason: reason.to_string(),
    })?;
    if !doc.value.is_object() {
        return Err(shape(path, "the top level", &doc.value));
    }
    if let Some(mcp) = doc.value.get("mcp").filter(|m| !m.is_object()) {
        return Err(shape(path, "\"mcp\"", mcp));
    }
    let root = doc.root().unwrap_or(0);
    Ok(Some((doc, root)))
}

fn shape(path: &Path, what: &'static str, found: &Value) -> InstallError {
    InstallError::UnexpectedShape {
        path: path.to_owned(),
        what: what.to_owned(),
        expected: "an object",
        found: crate::claude_code::json_kind(found),
    }
}

fn member<'a>(members: &'a [Member], key: &str) -> Option<(usize, &'a Member)> {
    members.iter().enumerate().find(|(_, m)| m.key == key)
}

/// The config's new text with our entry for `exe`, or `None` when it is already
/// there as it should be.
pub(super) fn with_mcp(path: &Path, exe: &str) -> Result<Option<String>, InstallError> {
    let ours = entry(exe);
    let entry_text = ours.to_string();
    let Some(text) = read(path)? else {
        return Ok(Some(created(&entry_text)));
    };
    let Some((doc, root)) = parse(path, &text)? else {
        return Ok(Some(created(&entry_text)));
    };
    let top = doc.members(root);
    let Some((_, mcp)) = member(&top, "mcp") else {
        let sep = if top.is_empty() { "" } else { "," };
        let insert = format!("\n  \"mcp\": {{\n    \"{MCP_SERVER_NAME}\": {entry_text}\n  }}{sep}");
        return Ok(Some(doc.inserted(root + 1, &insert)));
    };
    let servers = doc.members(mcp.value_start);
    match member(&servers, MCP_SERVER_NAME) {
        Some((_, m)) => {
            let current = &doc.value["mcp"][MCP_SERVER_NAME];
            if !is_ours(current) {
                return Err(InstallError::ForeignMcpServer {
                    path: path.to_owned(),
                });
            }
            if *current == ours {
                return Ok(None);
            }
            Ok(Some(doc.replaced(m.value_start, m.value_end, &entry_text)))
        }
        None => {
            let sep = if servers.is_empty() { "" } else { "," };
            let insert = format!("\n    \"{MCP_SERVER_NAME}\": {entry_text}{sep}");
            Ok(Some(doc.inserted(mcp.value_start + 1, &insert)))
        }
    }
}

/// The config we create when the user has none.
fn created(entry_text: &str) -> String {
    format!(
        "{{\n  \"$schema\": \"{SCHEMA}\",\n  \"mcp\": {{\n    \"{MCP_SERVER_NAME}\": {entry_text}\n  }}\n}}\n"
    )
}

/// What uninstall does to the config: `None` when our entry is not there.
pub(super) fn without_mcp(path: &Path) -> Result<Option<Edit>, InstallError> {
    let Some(text) = read(path)? else {
        return Ok(None);
    };
    let Some((doc, root)) = parse(path, &text)? else {
        return Ok(None);
    };
    let top = doc.members(root);
    let Some((mcp_index, mcp)) = member(&top, "mcp") else {
        return Ok(None);
    };
    let servers = doc.members(mcp.value_start);
    let Some((index, _)) = member(&servers, MCP_SERVER_NAME) else {
        return Ok(None);
    };
    if !is_ours(&doc.value["mcp"][MCP_SERVER_NAME]) {
        return Ok(None);
    }
    let edited = if servers.len() == 1 {
        doc.without_member(&top, mcp_index)
    } else {
        doc.without_member(&servers, index)
    };
    let rest = Doc::parse(&edited).map(|d| d.value).unwrap_or(Value::Null);
    if rest == json!({"$schema": SCHEMA}) {
        return Ok(Some(Edit::Remove));
    }
    Ok(Some(Edit::Write(edited)))
}

/// Whether the config holds our entry (for any solaria executable).
pub(super) fn has_our_entry(path: &Path) -> Result<bool, InstallError> {
    let Some(text) = read(path)? else {
        return Ok(false);
    };
    let Some((doc, _)) = parse(path, &text)? else {
        return Ok(false);
    };
    Ok(doc
        .value
        .get("mcp")
        .and_then(|m| m.get(MCP_SERVER_NAME))
        .is_some_and(is_ours))
}
