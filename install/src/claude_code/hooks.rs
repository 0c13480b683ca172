//! SOLARIA's entries in Claude Code's `hooks`: which events, the command each
//! runs, and how our entries are told from everyone else's.

use super::settings::shape_error;
use super::{HOOK_TIMEOUT_SECS, InstallError};
use crate::quote;
use serde_json::{Map, Value};
use solaria_hook::program::{HookProgram, is_our_command};
use solaria_hook::protocol::HookEvent as Event;
use std::path::Path;

/// One Claude Code hook event that SOLARIA listens to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEvent {
    /// The event name in settings.json.
    pub name: &'static str,
    /// The argument of `solaria hook <arg>`.
    pub arg: &'static str,
    /// The group's matcher, if any.
    pub matcher: Option<&'static str>,
}

/// The hooks SOLARIA installs. SessionStart has no matcher so that it also fires on
/// resume, `/clear` and compaction, when the context must be injected again.
pub const HOOK_EVENTS: [HookEvent; 6] = [
    hook(Event::SessionStart, None),
    hook(Event::UserPromptSubmit, None),
    hook(Event::PostToolUse, Some("*")),
    hook(Event::PostToolUseFailure, Some("*")),
    hook(Event::Stop, None),
    hook(Event::SessionEnd, None),
];

/// The entry for `event`, named as the capture code names it.
const fn hook(event: Event, matcher: Option<&'static str>) -> HookEvent {
    HookEvent {
        name: event.claude_name(),
        arg: event.arg(),
        matcher,
    }
}

/// The hook command for `event`: `<exe> hook <arg>` or `<solaria-hook> --data-dir
/// <dir> <arg>`, paths shell-quoted when needed.
pub fn hook_command(program: &HookProgram, event: &HookEvent) -> String {
    quote::command_line(&[program.command(), vec![event.arg]].concat())
}

pub(super) fn desired_group(program: &HookProgram, event: &HookEvent) -> Value {
    let mut hook = Map::new();
    hook.insert("type".into(), Value::from("command"));
    hook.insert("command".into(), Value::from(hook_command(program, event)));
    hook.insert("timeout".into(), Value::from(HOOK_TIMEOUT_SECS));
    let mut group = Map::new();
    if let Some(matcher) = event.matcher {
        group.insert("matcher".into(), Value::from(matcher));
    }
    group.insert("hooks".into(), Value::Array(vec![Value::Object(hook)]));
    Value::Object(group)
}

pub(super) fn add_hooks(
    settings: &mut Map<String, Value>,
    program: &HookProgram,
    path: &Path,
) -> Result<(), InstallError> {
    let desired: Vec<(&str, Value)> = HOOK_EVENTS
        .iter()
        .map(|e| (e.name, desired_group(program, e)))
        .collect();
    let exe = match program {
        HookProgram::Solaria(exe) => exe.as_str(),
        HookProgram::Relay { client, .. } => client.as_str(),
    };
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(shape_error(path, "\"hooks\"", "an object", hooks));
    };
    for (name, _) in &desired {
        if let Some(found) = hooks.get(*name).filter(|v| !v.is_array()) {
            return Err(shape_error(
                path,
                &format!("\"hooks\".\"{name}\""),
                "an array",
                found,
            ));
        }
    }
    let kept = remove_ours(hooks, Some(exe), &desired);
    for (name, group) in desired {
        if kept.iter().any(|k| k == name) {
            continue;
        }
        let groups = hooks
            .entry(name)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(groups) = groups {
            groups.push(group);
        }
    }
    Ok(())
}

pub(super) fn remove_hooks(
    settings: &mut Map<String, Value>,
    path: &Path,
) -> Result<(), InstallError> {
    let Some(hooks) = settings.get_mut("hooks") else {
        return Ok(());
    };
    let Value::Object(map) = hooks else {
        return Err(shape_error(path, "\"hooks\"", "an object", hooks));
    };
    let before = map.clone();
    remove_ours(map, None, &[]);
    if map.is_empty() && *map != before {
        settings.remove("hooks");
    }
    Ok(())
}

/// Removes our hook commands from every event array of `hooks`, dropping groups and
/// event arrays that become empty through that. The first group of an event that is
/// already exactly its `desired` group is kept in place, so a re-install does not
/// reorder the file; the names of those events are returned.
pub(super) fn remove_ours(
    hooks: &mut Map<String, Value>,
    exe: Option<&str>,
    desired: &[(&str, Value)],
) -> Vec<String> {
    let mut kept = Vec::new();
    let mut emptied = Vec::new();
    for (name, groups) in hooks.iter_mut() {
        let Value::Array(groups) = groups else {
            continue;
        };
        let want = desired.iter().find(|(n, _)| n == name).map(|(_, g)| g);
        let mut keep_done = false;
        let mut touched = false;
        let mut result = Vec::with_capacity(groups.len());
        for mut group in groups.drain(..) {
            if !keep_done && want == Some(&group) {
                keep_done = true;
                result.push(group);
                continue;
            }
            if let Some(Value::Array(entries)) = group.get_mut("hooks") {
                let before = entries.len();
                entries.retain(|entry| !is_our_entry(entry, exe));
                if entries.len() != before {
                    touched = true;
                    if entries.is_empty() {
                        continue;
                    }
                }
            }
            result.push(group);
        }
        *groups = result;
        if keep_done {
            kept.push(name.clone());
        }
        if touched && groups.is_empty() {
            emptied.push(name.clone());
        }
    }
    for name in emptied {
        hooks.remove(&name);
    }
    kept
}

pub(super) fn is_our_entry(entry: &Value, exe: Option<&str>) -> bool {
    entry
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_our_command(c, exe))
}
