//! Turning one hook event into the content of an observation: a title an agent can
//! scan, the files touched, whether it failed, and bounded, redacted text.

use serde_json::{Value, json};
use solaria_shared::private::bound_text;
use solaria_shared::redact::{redact, redact_json};
use solaria_shared::summary::one_line;

/// The content of one observation, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct Content {
    pub title: String,
    pub input: String,
    pub response: String,
    pub files: Vec<String>,
    pub metadata: Value,
    pub tags: Vec<String>,
}

/// Size limits for stored text.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_input_bytes: usize,
    pub max_response_bytes: usize,
}

const TITLE_CHARS: usize = 120;

/// Whether a tool call is SOLARIA looking at its own memory, which is not
/// captured (it would fill the memory with searches of the memory): a call of
/// its MCP tools (`mcp__solaria__*`, or the plugin's), Claude Code's `ToolSearch` lookups (the
/// agent finding those tools), and a Bash command that runs the `solaria` CLI
/// (its first word, after any `VAR=value`, is `solaria` or a path ending in
/// `/solaria`).
pub fn is_own_tool(tool: &str, input: &Value) -> bool {
    if solaria_hook::protocol::is_own_mcp_tool(tool) || tool == "ToolSearch" {
        return true;
    }
    if tool != "Bash" {
        return false;
    }
    let command = str_field(input, "command").unwrap_or("");
    let program = command
        .split_whitespace()
        .find(|word| !is_assignment(word))
        .unwrap_or("")
        .trim_matches(|c| c == '"' || c == '\'');
    program == "solaria" || program.ends_with("/solaria")
}

/// `NAME=value`, as a shell reads a variable set for one command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The content of a PostToolUse event. Secrets are redacted before anything else
/// happens to the text, so no later step (truncation included) can expose part of
/// one.
pub fn tool_use(
    tool: &str,
    mut input: Value,
    mut response: Value,
    tool_use_id: Option<&str>,
    cwd: Option<&str>,
    bounds: Bounds,
) -> Content {
    redact_json(&mut input);
    redact_json(&mut response);
    let files = files_of(tool, &input);
    let failed = looks_failed(tool, &response);
    let title = one_line(&tool_title(tool, &input, cwd), TITLE_CHARS);
    let (input_text, input_cut) = bound_json(input, bounds.max_input_bytes);
    let (response_text, response_cut) = bound_json(response, bounds.max_response_bytes);
    let mut metadata = json!({});
    if let Some(id) = tool_use_id {
        metadata["tool_use_id"] = json!(id);
    }
    if failed {
        metadata["error"] = json!(true);
    }
    if let Some(n) = input_cut {
        metadata["input_truncated_bytes"] = json!(n);
    }
    if let Some(n) = response_cut {
        metadata["response_truncated_bytes"] = json!(n);
    }
    if let Some(action) = file_action(tool) {
        metadata["file_action"] = json!(action);
    }
    let mut tags = language_tags(&files);
    if failed {
        tags.push("error".to_string());
    }
    Content {
        title,
        input: input_text,
        response: response_text,
        files,
        metadata,
        tags,
    }
}

impl Content {
    /// The content, noted as made on `branch` (the branch checked out where the
    /// event happened), when there is one.
    pub fn on_branch(mut self, branch: Option<&str>) -> Content {
        if let (Some(branch), Some(fields)) = (branch, self.metadata.as_object_mut()) {
            fields.insert("branch".into(), json!(branch));
        }
        self
    }
}

/// The content of a UserPromptSubmit event.
pub fn prompt(text: &str, bounds: Bounds) -> Content {
    let text = redact(text);
    let title = one_line(&text, TITLE_CHARS);
    let (input, cut) = bound_text(&text, bounds.max_input_bytes);
    let mut metadata = json!({});
    if let Some(n) = cut {
        metadata["input_truncated_bytes"] = json!(n);
    }
    Content {
        title,
        input,
        response: String::new(),
        files: Vec::new(),
        metadata,
        tags: Vec::new(),
    }
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn relative<'a>(path: &'a str, cwd: Option<&str>) -> &'a str {
    cwd.and_then(|c| path.strip_prefix(c.trim_end_matches('/')))
        .map(|p| p.trim_start_matches('/'))
        .filter(|p| !p.is_empty())
        .unwrap_or(path)
}

/// A one-line description of a tool call.
fn tool_title(tool: &str, input: &Value, cwd: Option<&str>) -> String {
    let path = str_field(input, "file_path")
        .or_else(|| str_field(input, "notebook_path"))
        .map(|p| relative(p, cwd));
    match tool {
        "Bash" => {
            let cmd = str_field(input, "command").unwrap_or("");
            match str_field(input, "description") {
                Some(d) => format!("Bash: {} — {d}", one_line(cmd, 70)),
                None => format!("Bash: {cmd}"),
            }
        }
        "Read" | "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => {
            format!("{tool} {}", path.unwrap_or("(no path)"))
        }
        "Grep" => format!(
            "Grep {:?} in {}",
            str_field(input, "pattern").unwrap_or(""),
            str_field(input, "path")
                .map(|p| relative(p, cwd))
                .unwrap_or(".")
        ),
        "Glob" => format!("Glob {}", str_field(input, "pattern").unwrap_or("")),
        // Codex CLI's file edits: one patch, perhaps over several files.
        "apply_patch" => {
            let files: Vec<&str> = patched_files(input)
                .into_iter()
                .map(|f| relative(f, cwd))
                .collect();
            match files.as_slice() {
                [] => "apply_patch".to_string(),
                files => format!("apply_patch {}", files.join(", ")),
            }
        }
        // OpenCode's failed model calls (`capture::opencode`).
        "SessionError" => format!(
            "Session error: {} {}",
            str_field(input, "name").unwrap_or("UnknownError"),
            str_field(input, "message").unwrap_or("")
        ),
        "WebFetch" => format!("WebFetch {}", str_field(input, "url").unwrap_or("")),
        "WebSearch" => format!("WebSearch {}", str_field(input, "query").unwrap_or("")),
        "Task" | "Agent" => format!(
            "{tool}: {}",
            str_field(input, "description")
                .or_else(|| str_field(input, "prompt"))
                .unwrap_or("")
        ),
        "TodoWrite" => {
            let todos = input.get("todos").and_then(Value::as_array);
            let open = todos.map_or(0, |t| {
                t.iter()
                    .filter(|x| str_field(x, "status") != Some("completed"))
                    .count()
            });
            format!(
                "TodoWrite: {} items, {open} open",
                todos.map_or(0, Vec::len)
            )
        }
        _ => {
            let name = match tool.strip_prefix("mcp__") {
                Some(rest) => rest.replacen("__", ".", 1),
                None => tool.to_string(),
            };
            let args = compact_args(input);
            if args.is_empty() {
                name
            } else {
                format!("{name} {args}")
            }
        }
    }
}

/// `key=value` pairs of an object's scalar fields, for titles.
fn compact_args(input: &Value) -> String {
    let Some(map) = input.as_object() else {
        return String::new();
    };
    map.iter()
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some(format!("{k}={}", one_line(s, 40))),
            Value::Number(n) => Some(format!("{k}={n}")),
            Value::Bool(b) => Some(format!("{k}={b}")),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a file tool did to its file.
fn file_action(tool: &str) -> Option<&'static str> {
    match tool {
        "Read" => Some("read"),
        "Edit" | "MultiEdit" | "NotebookEdit" | "apply_patch" => Some("edit"),
        "Write" => Some("write"),
        _ => None,
    }
}

/// The files a tool call names.
fn files_of(tool: &str, input: &Value) -> Vec<String> {
    if tool == "apply_patch" {
        return patched_files(input)
            .into_iter()
            .map(str::to_string)
            .collect();
    }
    ["file_path", "notebook_path"]
        .iter()
        .filter_map(|k| str_field(input, k))
        .map(str::to_string)
        .collect()
}

/// The files a Codex patch (`apply_patch`'s `command`, or its `input`) adds,
/// updates or deletes, from its `*** Add File:`-style headers, in order.
fn patched_files(input: &Value) -> Vec<&str> {
    let patch = str_field(input, "command")
        .or_else(|| str_field(input, "input"))
        .unwrap_or("");
    patch
        .lines()
        .filter_map(|line| {
            ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
                .iter()
                .find_map(|header| line.strip_prefix(header))
        })
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect()
}

/// Whether a tool response reports a failure. A heuristic: Claude Code does not
/// send exit codes, so errors are recognised by flags and by what tools print.
pub fn looks_failed(tool: &str, response: &Value) -> bool {
    if response.get("is_error").and_then(Value::as_bool) == Some(true)
        || response.get("interrupted").and_then(Value::as_bool) == Some(true)
        || str_field(response, "error").is_some()
    {
        return true;
    }
    let text = match response {
        Value::String(s) => s.as_str(),
        _ => "",
    };
    if text.starts_with("Error") || text.contains("<tool_use_error>") {
        return true;
    }
    if tool != "Bash" {
        return false;
    }
    let out = [str_field(response, "stdout"), str_field(response, "stderr")];
    out.iter().flatten().any(|s| {
        const MARKERS: &[&str] = &[
            "error[E",
            "error: ",
            "FAILED",
            "panicked at",
            "Traceback (most recent call last)",
            "command not found",
            "fatal: ",
            "npm ERR!",
        ];
        MARKERS.iter().any(|m| s.contains(m))
    })
}

fn language_tags(files: &[String]) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for f in files {
        let ext = f.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        let tag = match ext {
            "rs" => "rust",
            "py" => "python",
            "ts" | "tsx" => "typescript",
            "js" | "jsx" | "mjs" => "javascript",
            "go" => "go",
            "sql" => "sql",
            "md" => "docs",
            "toml" | "yaml" | "yml" | "json" | "env" => "config",
            _ => continue,
        };
        if !tags.iter().any(|t| t == tag) {
            tags.push(tag.to_string());
        }
    }
    tags
}

/// Serialises a JSON value within `max` bytes. Long strings inside are shortened
/// first (keeping their head and tail, so the JSON stays valid and the end of a
/// long command output, where errors usually are, survives); only if that is not
/// enough is the text itself cut. Returns the bytes left out, if any.
pub fn bound_json(mut value: Value, max: usize) -> (String, Option<usize>) {
    let text = value.to_string();
    if text.len() <= max {
        return (text, None);
    }
    let original = text.len();
    shorten_strings(&mut value, (max / 4).max(64));
    let text = value.to_string();
    if text.len() <= max {
        let cut = original - text.len();
        return (text, Some(cut));
    }
    let (text, _) = bound_text(&text, max);
    let cut = original.saturating_sub(text.len());
    (text, Some(cut))
}

fn shorten_strings(value: &mut Value, max: usize) {
    match value {
        Value::String(s) if s.len() > max => {
            *s = bound_text(s, max).0;
        }
        Value::Array(items) => items.iter_mut().for_each(|v| shorten_strings(v, max)),
        Value::Object(map) => map.values_mut().for_each(|v| shorten_strings(v, max)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: Bounds = Bounds {
        max_input_bytes: 1_000,
        max_response_bytes: 2_000,
    };

    #[test]
    fn solaria_looking_at_its_own_memory_is_recognised() {
        let bash = |c: &str| is_own_tool("Bash", &json!({"command": c}));
        assert!(is_own_tool("mcp__solaria__memory_search", &json!({})));
        assert!(is_own_tool(
            "mcp__plugin_solaria-memory_solaria__memory_search",
            &json!({})
        ));
        assert!(!is_own_tool(
            "mcp__plugin_other_solaria__memory_search",
            &json!({})
        ));
        assert!(!is_own_tool("mcp__solariax__memory_search", &json!({})));
        assert!(is_own_tool("ToolSearch", &json!({"query": "memory"})));
        assert!(bash("solaria search jwt"));
        assert!(bash("  /home/u/.local/bin/solaria status"));
        assert!(bash("SOLARIA_HOME=/tmp/x solaria stats"));
        assert!(bash("\"./target/debug/solaria\" show O#1"));
        assert!(!bash("cargo run -p solaria -- search"));
        assert!(!bash("solaria-central serve"));
        assert!(!bash("cd solaria && cargo test"));
        assert!(!bash("grep solaria README.md"));
        assert!(!is_own_tool("mcp__github__get_issue", &json!({})));
        assert!(!is_own_tool(
            "Read",
            &json!({"file_path": "/usr/bin/solaria"})
        ));
    }

    #[test]
    fn titles_say_what_happened() {
        let c = tool_use(
            "Edit",
            json!({"file_path": "/p/src/auth.rs", "old_string": "a", "new_string": "b"}),
            json!({"filePath": "/p/src/auth.rs"}),
            Some("toolu_1"),
            Some("/p"),
            BOUNDS,
        );
        assert_eq!(c.title, "Edit src/auth.rs");
        assert_eq!(c.files, vec!["/p/src/auth.rs"]);
        assert_eq!(c.metadata["file_action"], "edit");
        assert_eq!(c.tags, vec!["rust"]);
        let mcp = tool_use(
            "mcp__github__get_issue",
            json!({"owner": "acme", "number": 42}),
            json!([{"type": "text", "text": "issue"}]),
            None,
            None,
            BOUNDS,
        );
        assert_eq!(mcp.title, "github.get_issue number=42 owner=acme");
        // Codex's patches name their files in their headers.
        let patch = tool_use(
            "apply_patch",
            json!({"command": "*** Begin Patch\n*** Update File: /p/src/auth.rs\n@@\n-a\n+b\n*** Add File: docs/auth.md\n+# Auth\n*** End Patch\n"}),
            json!("Success. Updated the following files:\nM src/auth.rs"),
            Some("call_3"),
            Some("/p"),
            BOUNDS,
        );
        assert_eq!(patch.title, "apply_patch src/auth.rs, docs/auth.md");
        assert_eq!(patch.files, vec!["/p/src/auth.rs", "docs/auth.md"]);
        assert_eq!(patch.metadata["file_action"], "edit");
        assert_eq!(patch.tags, vec!["rust", "docs"]);
    }

    #[test]
    fn failing_commands_are_flagged() {
        let c = tool_use(
            "Bash",
            json!({"command": "cargo test"}),
            json!({"stdout": "test result: FAILED. 1 passed; 1 failed", "stderr": "", "interrupted": false}),
            None,
            None,
            BOUNDS,
        );
        assert_eq!(c.metadata["error"], true);
        assert!(c.tags.contains(&"error".to_string()));
        let ok = tool_use(
            "Bash",
            json!({"command": "ls"}),
            json!({"stdout": "src\n", "stderr": "", "interrupted": false}),
            None,
            None,
            BOUNDS,
        );
        assert!(ok.metadata.get("error").is_none());
    }

    #[test]
    fn big_responses_keep_head_and_tail_and_stay_json() {
        let stdout = format!(
            "FIRST LINE\n{}\nLAST LINE error[E0308]",
            "x".repeat(100_000)
        );
        let c = tool_use(
            "Bash",
            json!({"command": "cargo build"}),
            json!({"stdout": stdout, "stderr": ""}),
            None,
            None,
            BOUNDS,
        );
        assert!(c.response.len() <= 2_000 + 100, "{}", c.response.len());
        let back: Value = serde_json::from_str(&c.response).expect("still JSON");
        let kept = back["stdout"].as_str().expect("stdout kept");
        assert!(kept.starts_with("FIRST LINE") && kept.ends_with("LAST LINE error[E0308]"));
        assert!(c.metadata["response_truncated_bytes"].as_u64().expect("n") > 90_000);
    }

    #[test]
    fn bounding_never_splits_a_character() {
        let text = "ñ".repeat(5_000);
        let (out, cut) = bound_text(&text, 1_001);
        assert!(cut.is_some());
        assert!(out.starts_with('ñ') && out.ends_with('ñ'));
    }

    #[test]
    fn a_private_span_across_the_cut_stays_private() {
        use solaria_shared::private::strip_private;
        let text = format!(
            "intro {} <private>{} vault 7731 combination</private> outro",
            "a".repeat(1_000),
            "b".repeat(3_000)
        );
        let (out, cut) = bound_text(&text, 1_000);
        assert!(cut.is_some());
        assert!(out.contains("combination"), "the tail keeps the span's end");
        let sent = strip_private(&out);
        assert!(
            !sent.contains("combination") && !sent.contains("7731"),
            "{sent}"
        );
        assert!(sent.starts_with("intro") && sent.ends_with("[PRIVATE] outro"));
    }

    #[test]
    fn prompts_are_titled_by_their_first_line() {
        let c = prompt("Fix the refresh bug\nin src/auth", BOUNDS);
        assert_eq!(c.title, "Fix the refresh bug");
        assert_eq!(c.input, "Fix the refresh bug\nin src/auth");
    }
}
