//! SOLARIA's entry among Claude Code's MCP servers (`mcpServers.solaria`).

use super::InstallError;
use super::settings::shape_error;
use serde_json::{Map, Value};
use std::path::Path;

/// The name SOLARIA's MCP server is registered under.
pub use solaria_hook::protocol::MCP_SERVER_NAME;

/// `mcpServers.solaria = { type: stdio, command: exe, args: ["mcp"] }`, unless a
/// server of that name that is not ours is there.
pub(super) fn add_mcp_server(
    config: &mut Map<String, Value>,
    exe: &str,
    path: &Path,
) -> Result<(), InstallError> {
    let servers = config
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(shape_error(path, "\"mcpServers\"", "an object", servers));
    };
    if servers
        .get(MCP_SERVER_NAME)
        .is_some_and(|e| !is_our_mcp_server(e))
    {
        return Err(InstallError::ForeignMcpServer {
            path: path.to_owned(),
        });
    }
    servers.insert(
        MCP_SERVER_NAME.to_string(),
        serde_json::json!({ "type": "stdio", "command": exe, "args": ["mcp"], "env": {} }),
    );
    Ok(())
}

/// Removes our MCP server entry (and `mcpServers` if that leaves it empty).
pub(super) fn remove_mcp_server(config: &mut Map<String, Value>) {
    let Some(Value::Object(servers)) = config.get_mut("mcpServers") else {
        return;
    };
    if servers.get(MCP_SERVER_NAME).is_some_and(is_our_mcp_server) {
        servers.remove(MCP_SERVER_NAME);
        if servers.is_empty() {
            config.remove("mcpServers");
        }
    }
}

/// Ours: runs `<a solaria binary> mcp` (any install path or build name).
pub(super) fn is_our_mcp_server(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let args_ok = entry.get("args") == Some(&serde_json::json!(["mcp"]));
    let name = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    args_ok && name.starts_with("solaria")
}
