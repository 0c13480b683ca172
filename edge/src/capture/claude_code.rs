//! Claude Code's hooks: `solaria hook <event>` with the hook's JSON on stdin,
//! captured as it comes (the payload shape every other agent's adapter maps to)
//! and answered with the `hookSpecificOutput` JSON Claude Code reads.

use super::{Answering, Capturing, HookError, payload, process};
use crate::config::Env;
use solaria_hook::protocol::{Event, HookEvent, is_own_command};

/// The agent name recorded on sessions captured by these hooks.
pub const AGENT: &str = "claude-code";

/// Runs one Claude Code hook. Never fails and never panics outward: what goes
/// wrong is logged.
pub fn run(event: HookEvent, env: &Env) {
    process::run_guarded(
        event.claude_name(),
        env,
        Event::ClaudeCode(event.arg().to_owned()),
    );
}

/// One Claude Code hook event's payload, captured as `cx` says; what the hook
/// prints (Claude Code's `hookSpecificOutput` JSON), if anything. The hook process
/// and the daemon's relay (`crate::relay`) both answer through this.
pub fn handle(
    event: HookEvent,
    bytes: &[u8],
    cx: &mut Capturing<'_>,
) -> Result<Option<String>, HookError> {
    let mut payload = payload::parse(bytes)?;
    if event == HookEvent::UserPromptSubmit && payload.prompt.as_deref().is_some_and(is_own_command)
    {
        payload.prompt = None;
    }
    let answer = Answering {
        name: event.claude_name(),
        agent: AGENT,
    };
    answer.capture(event, &payload, cx)
}
