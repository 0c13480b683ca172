//! A stored tool input or response as lines to read. Tool calls are kept as the
//! agent's JSON, where a test run's output is one string with escaped line breaks:
//! shown as `key: value` lines, a string of several lines as an indented block
//! under its key (so the output reads line by line), nested fields indented, empty
//! strings and nulls left out. Other text is shown as it is.

use serde_json::Value;

/// `text` as lines to read (not yet sanitized: the caller shows them through
/// `sanitize::lines`).
pub fn readable(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => s,
        Ok(value @ (Value::Object(_) | Value::Array(_))) => {
            let mut out = String::new();
            fields(&value, 0, &mut out);
            out.truncate(out.trim_end().len());
            out
        }
        _ => text.to_string(),
    }
}

/// Appends `value`'s fields (or items) to `out`, each line indented by `indent`.
fn fields(value: &Value, indent: usize, out: &mut String) {
    let entries: Vec<(String, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (format!("{k}:"), v)).collect(),
        Value::Array(items) => items.iter().map(|v| ("-".to_string(), v)).collect(),
        _ => return,
    };
    let pad = " ".repeat(indent);
    for (label, v) in entries {
        match v {
            Value::Null => {}
            Value::String(s) if s.is_empty() => {}
            Value::String(s) if s.contains('\n') => {
                out.push_str(&format!("{pad}{label}\n"));
                for line in s.lines() {
                    out.push_str(&format!("{pad}  {line}\n"));
                }
            }
            Value::String(s) => out.push_str(&format!("{pad}{label} {s}\n")),
            Value::Object(m) if m.is_empty() => {}
            Value::Array(a) if a.is_empty() => {}
            Value::Object(_) | Value::Array(_) => {
                out.push_str(&format!("{pad}{label}\n"));
                fields(v, indent + 2, out);
            }
            other => out.push_str(&format!("{pad}{label} {other}\n")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_reads_line_by_line_and_plain_text_as_it_is() {
        let response = serde_json::json!({
            "stdout": "running 2 tests\ntest a ... ok\ntest b ... FAILED",
            "stderr": "",
            "interrupted": false,
            "file": {"filePath": "src/a.rs", "numLines": 2},
            "lines": ["-a", "+b"],
        });
        assert_eq!(
            readable(&response.to_string()),
            "file:\n  filePath: src/a.rs\n  numLines: 2\ninterrupted: false\nlines:\n  - -a\n  - +b\n\
             stdout:\n  running 2 tests\n  test a ... ok\n  test b ... FAILED"
        );
        assert_eq!(readable("fix the \\n bug"), "fix the \\n bug");
        assert_eq!(readable("\"quoted\""), "quoted");
        assert_eq!(readable("{not json"), "{not json");
    }
}
