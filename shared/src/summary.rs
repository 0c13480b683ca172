//! The default summarizer: deterministic and offline. From a session's observations
//! it states the request, the files touched, the commands run, the errors met and
//! the outcome — what the next session needs to pick up the thread. A leaf: pure text
//! rules over records, used by the edge's capture (Stop) and its store (re-summarising
//! after a forget).

use crate::{Observation, ObservationKind};
use serde_json::Value;

/// The first line of `text`, at most `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or("").trim();
    if line.chars().count() <= max {
        return line.to_string();
    }
    let mut out: String = line.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A summary before it becomes a record.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub text: String,
    pub key_points: Vec<String>,
    pub tags: Vec<String>,
}

const LIST_MAX: usize = 6;

/// Summarises a session's observations (oldest first). `outcome` is the agent's
/// last message, when known.
pub fn summarize(observations: &[Observation], outcome: Option<&str>) -> Draft {
    let prompts: Vec<&Observation> = observations
        .iter()
        .filter(|o| o.kind == ObservationKind::Prompt)
        .collect();
    let mut edited: Vec<String> = Vec::new();
    let mut read: Vec<String> = Vec::new();
    let mut commands: Vec<(String, usize)> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut tags: Vec<String> = Vec::new();
    for o in observations
        .iter()
        .filter(|o| o.kind == ObservationKind::ToolUse)
    {
        let action = o.metadata.get("file_action").and_then(Value::as_str);
        for f in &o.files {
            let short = short_path(f);
            let list = if action == Some("read") {
                &mut read
            } else {
                &mut edited
            };
            if !list.contains(&short) {
                list.push(short);
            }
        }
        if o.tool_name.as_deref() == Some("Bash") {
            let cmd = serde_json::from_str::<Value>(&o.input)
                .ok()
                .and_then(|v| {
                    v.get("command")
                        .and_then(Value::as_str)
                        .map(|c| one_line(c, 60))
                })
                .unwrap_or_default();
            if !cmd.is_empty() {
                match commands.iter_mut().find(|(c, _)| *c == cmd) {
                    Some((_, n)) => *n += 1,
                    None => commands.push((cmd, 1)),
                }
            }
        }
        if o.failed() {
            errors.push(one_line(&o.title, 70));
        }
        for t in &o.tags {
            if t != "error" && !tags.contains(t) {
                tags.push(t.clone());
            }
        }
    }
    // Files read and then edited count as edited.
    read.retain(|f| !edited.contains(f));

    let mut key_points = Vec::new();
    if let Some(first) = prompts.first() {
        key_points.push(format!("Request: {}", one_line(&first.input, 200)));
    }
    if prompts.len() > 1 {
        key_points.push(format!(
            "Follow-ups: {}",
            list(
                prompts[1..]
                    .iter()
                    .map(|p| one_line(&p.input, 60))
                    .collect()
            )
        ));
    }
    if !edited.is_empty() {
        key_points.push(format!("Changed: {}", list(edited)));
    }
    if !read.is_empty() {
        key_points.push(format!("Read: {}", list(read)));
    }
    if !commands.is_empty() {
        let shown = commands
            .into_iter()
            .map(|(c, n)| {
                if n > 1 {
                    format!("`{c}` ×{n}")
                } else {
                    format!("`{c}`")
                }
            })
            .collect();
        key_points.push(format!("Ran: {}", list(shown)));
    }
    if !errors.is_empty() {
        let n = errors.len();
        key_points.push(format!("Errors ({n}): {}", list(errors)));
    }
    match outcome.map(|o| one_line(o, 200)).filter(|o| !o.is_empty()) {
        Some(o) => key_points.push(format!("Outcome: {o}")),
        None if observations.is_empty() => key_points.push("Outcome: nothing captured".into()),
        None => {}
    }
    if !tags.is_empty() || !key_points.is_empty() {
        tags.sort();
    }
    Draft {
        text: key_points.join(" | "),
        key_points,
        tags,
    }
}

fn list(mut items: Vec<String>) -> String {
    let extra = items.len().saturating_sub(LIST_MAX);
    items.truncate(LIST_MAX);
    let mut text = items.join(", ");
    if extra > 0 {
        text.push_str(&format!(" (+{extra} more)"));
    }
    text
}

/// The last two path components: enough to recognise a file, short in context.
fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hlc, MachineId, ObservationId, Project, RecordMeta, SessionId, UnixMillis};
    use serde_json::json;

    fn obs(
        kind: ObservationKind,
        tool: Option<&str>,
        title: &str,
        input: &str,
        files: &[&str],
        meta: Value,
    ) -> Observation {
        Observation {
            id: ObservationId::new(),
            meta: RecordMeta {
                machine_id: MachineId::new(),
                updated: Hlc::default(),
                deleted: false,
            },
            session_id: SessionId::new(),
            project: Project {
                key: "k".into(),
                name: "n".into(),
            },
            kind,
            tool_name: tool.map(str::to_string),
            title: title.into(),
            input: input.into(),
            response: String::new(),
            files: files.iter().map(|f| f.to_string()).collect(),
            metadata: meta,
            tags: vec!["rust".into()],
            created_at: UnixMillis(0),
        }
    }

    #[test]
    fn states_request_files_commands_errors_and_outcome() {
        let session = vec![
            obs(
                ObservationKind::Prompt,
                None,
                "Fix refresh",
                "Fix the token refresh bug",
                &[],
                json!({}),
            ),
            obs(
                ObservationKind::ToolUse,
                Some("Read"),
                "Read src/auth.rs",
                "{}",
                &["/p/src/auth.rs"],
                json!({"file_action": "read"}),
            ),
            obs(
                ObservationKind::ToolUse,
                Some("Read"),
                "Read src/lib.rs",
                "{}",
                &["/p/src/lib.rs"],
                json!({"file_action": "read"}),
            ),
            obs(
                ObservationKind::ToolUse,
                Some("Edit"),
                "Edit src/auth.rs",
                "{}",
                &["/p/src/auth.rs"],
                json!({"file_action": "edit"}),
            ),
            obs(
                ObservationKind::ToolUse,
                Some("Bash"),
                "Bash: cargo test",
                r#"{"command":"cargo test"}"#,
                &[],
                json!({"error": true}),
            ),
            obs(
                ObservationKind::ToolUse,
                Some("Bash"),
                "Bash: cargo test",
                r#"{"command":"cargo test"}"#,
                &[],
                json!({}),
            ),
        ];
        let d = summarize(&session, Some("All tests pass."));
        assert_eq!(d.key_points[0], "Request: Fix the token refresh bug");
        assert!(d.text.contains("Changed: src/auth.rs"), "{}", d.text);
        assert!(d.text.contains("Read: src/lib.rs"), "{}", d.text);
        assert!(
            !d.text.contains("Read: src/auth.rs"),
            "edited files are not listed as read"
        );
        assert!(d.text.contains("`cargo test` ×2"), "{}", d.text);
        assert!(
            d.text.contains("Errors (1): Bash: cargo test"),
            "{}",
            d.text
        );
        assert!(d.text.ends_with("Outcome: All tests pass."), "{}", d.text);
        assert_eq!(d.tags, vec!["rust"]);
        assert_eq!(
            summarize(&session, None),
            summarize(&session, None),
            "deterministic"
        );
    }
}
