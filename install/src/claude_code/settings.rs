//! Reading and writing Claude Code's JSON files (settings.json, ~/.claude.json,
//! .mcp.json): a file we cannot parse is never overwritten.

use crate::InstallError;
use serde_json::{Map, Value};
use std::fs;
use std::io;
use std::path::Path;

/// Reads settings.json: `(object, existed)`. Missing or blank → empty object.
pub(super) fn read_settings(path: &Path) -> Result<(Map<String, Value>, bool), InstallError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Map::new(), false)),
        Err(source) => {
            return Err(InstallError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Ok((Map::new(), true));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| InstallError::InvalidConfig {
        path: path.to_owned(),
        format: "JSON",
        reason: e.to_string(),
    })?;
    match value {
        Value::Object(map) => {
            if let Some(hooks) = map.get("hooks").filter(|h| !h.is_object()) {
                return Err(shape_error(path, "\"hooks\"", "an object", hooks));
            }
            Ok((map, true))
        }
        other => Err(shape_error(path, "the top level", "an object", &other)),
    }
}

pub(super) fn render_settings(
    settings: Map<String, Value>,
    path: &Path,
) -> Result<String, InstallError> {
    let mut text = serde_json::to_string_pretty(&Value::Object(settings)).map_err(|e| {
        InstallError::Write {
            path: path.to_owned(),
            source: io::Error::other(e),
        }
    })?;
    text.push('\n');
    Ok(text)
}

pub(super) fn shape_error(
    path: &Path,
    what: &str,
    expected: &'static str,
    found: &Value,
) -> InstallError {
    InstallError::UnexpectedShape {
        path: path.to_owned(),
        what: what.to_owned(),
        expected,
        found: json_kind(found),
    }
}

pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
