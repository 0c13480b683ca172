//! The trust Codex CLI asks of a hook before it runs it: a table
//! `[hooks.state."<file>:<event>:<group>:<handler>"]` in the user's `config.toml`
//! whose `trusted_hash` is the SHA-256 of the hook's definition. A hook whose
//! definition changes (its command, timeout or matcher) is untrusted again, so
//! every install writes the hashes of what it writes.

use serde_json::Value;
use sha2::{Digest, Sha256};
use solaria_hook::protocol::HookEvent;
use std::collections::BTreeMap;
use std::path::Path;

/// The event's name in trust keys: `session_start`, `post_tool_use`, ….
fn snake(event: HookEvent) -> String {
    let mut out = String::new();
    for (i, c) in event.claude_name().chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The key of the trust of handler `handler` of group `group` of `event` in the
/// hooks file `file`.
pub fn state_key(file: &Path, event: HookEvent, group: usize, handler: usize) -> String {
    format!("{}:{}:{group}:{handler}", file.display(), snake(event))
}

/// The hash Codex records for a group of one command hook with no matcher:
/// SHA-256 of the group's canonical JSON (keys sorted, no spaces).
pub fn trusted_hash(event: HookEvent, command: &str, timeout_secs: u64) -> String {
    let handler: BTreeMap<&str, Value> = BTreeMap::from([
        ("async", Value::Bool(false)),
        ("command", Value::from(command)),
        ("timeout", Value::from(timeout_secs)),
        ("type", Value::from("command")),
    ]);
    let group: BTreeMap<&str, Value> = BTreeMap::from([
        ("event_name", Value::from(snake(event))),
        ("hooks", serde_json::json!([handler])),
    ]);
    let canonical = serde_json::to_string(&group).unwrap_or_default();
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_keys_are_codexs_own() {
        // Recorded by Codex 0.169 itself for a hook a person trusted in it.
        assert_eq!(
            trusted_hash(
                HookEvent::SessionStart,
                "/tmp/work/agents-scratch/hook.sh SessionStart",
                10
            ),
            "sha256:88e24ae4c536cdb7695d3d5f121487ebe798422d323e63b5a423bb528097746f"
        );
        assert_eq!(
            state_key(
                Path::new("/home/me/.codex/config.toml"),
                HookEvent::UserPromptSubmit,
                2,
                0
            ),
            "/home/me/.codex/config.toml:user_prompt_submit:2:0"
        );
        assert_eq!(snake(HookEvent::PostToolUse), "post_tool_use");
    }
}
