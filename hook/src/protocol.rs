//! What a hook and the daemon say to each other on the socket, and the names both
//! ends (and the installers that write the hook entries) must agree on: the agents'
//! events, the socket's place, the MCP server's name.
//!
//! The exchange, one event a connection: the client writes the line
//! `solaria-relay 1 <agent> <event>\n` and the payload, then closes its writing
//! half; the daemon answers the bytes to print (often none) and closes, or answers
//! [`REFUSED`] to a request it does not take (a client newer than the daemon), which
//! the client then runs in a `solaria hook` process itself. A hook that wrote its
//! event into the spool itself sends only [`SPOOLED_NOTE`].

use std::path::{Path, PathBuf};

/// The small hook client's file name, beside `solaria`.
pub const RELAY_CLIENT: &str = "solaria-hook";

/// The name SOLARIA's MCP server is registered under in every agent's config; an
/// agent's own tool calls to it (`mcp__solaria__…`, `solaria_…`) are not captured.
pub const MCP_SERVER_NAME: &str = "solaria";

/// The name of SOLARIA's Claude Code plugin (`deploy/claude-plugin/`), whose MCP
/// server Claude Code names `plugin_<plugin>_<server>`.
pub const CLAUDE_PLUGIN_NAME: &str = "solaria-memory";

/// Whether `tool`, as Claude Code, Codex or Gemini name an MCP tool
/// (`mcp__<server>__<tool>`), is one of SOLARIA's own: registered by an installer
/// or by the plugin.
pub fn is_own_mcp_tool(tool: &str) -> bool {
    tool.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .is_some_and(|(server, _)| {
            server == MCP_SERVER_NAME
                || server
                    .strip_prefix("plugin_")
                    .and_then(|s| s.strip_prefix(CLAUDE_PLUGIN_NAME))
                    .and_then(|s| s.strip_prefix('_'))
                    == Some(MCP_SERVER_NAME)
        })
}

/// The name of the command SOLARIA gives Claude Code: `/memory` as the installer
/// writes it, `/solaria-memory:memory` as the plugin's.
pub const CLAUDE_COMMAND_NAME: &str = "memory";

/// The name of the skill SOLARIA gives Codex CLI, called as `$solaria-memory`.
pub const CODEX_SKILL_NAME: &str = "solaria-memory";

/// Whether a prompt runs SOLARIA's own command in Claude Code or Codex CLI, which
/// hand the prompt hook the command as typed (`/solaria-memory:memory status`,
/// `$solaria-memory search flaky upload`): a request to SOLARIA, not the person's
/// words about their work, so it is neither captured nor recalled against.
/// (OpenCode's and Gemini CLI's arrive expanded, and are known by their markers.)
pub fn is_own_command(prompt: &str) -> bool {
    let Some(first) = prompt.split_whitespace().next() else {
        return false;
    };
    if let Some(skill) = first.strip_prefix('$') {
        return skill == CODEX_SKILL_NAME;
    }
    let Some(name) = first.strip_prefix('/') else {
        return false;
    };
    let of_plugin = name
        .strip_prefix(CLAUDE_PLUGIN_NAME)
        .and_then(|rest| rest.strip_prefix(':'));
    name == CLAUDE_COMMAND_NAME || of_plugin == Some(CLAUDE_COMMAND_NAME)
}

/// Text that marks the expansion of OpenCode's `/memory` command, which the
/// installer writes: a prompt holding it is SOLARIA's own command, not something the
/// user wrote, and is not captured.
pub const OPENCODE_COMMAND_MARKER: &str = "solaria-managed: opencode command";

/// Text that marks Gemini CLI's `/solaria` command, which the installer writes: a
/// prompt holding it is SOLARIA's own command's expansion, not the person's words,
/// and is not captured.
pub const GEMINI_COMMAND_MARKER: &str = "solaria-managed: gemini command";

/// The socket's file name in the data dir.
pub const SOCKET_FILE: &str = "hooks.sock";

/// The first word of a request's header line, and the protocol's version.
const MAGIC: &str = "solaria-relay 1";

/// Whether `line` is a line of this protocol, of any version (its first word is
/// the protocol's): one that is not may be anything, a payload sent bare included.
pub fn is_relay_line(line: &[u8]) -> bool {
    line.starts_with(b"solaria-relay ")
}

/// The daemon's answer to a request it does not take (another protocol version, an
/// event it does not know): the client then runs the event in a `solaria hook`
/// process of its own version. It starts with a NUL byte, which no hook output does.
pub const REFUSED: &[u8] = b"\0solaria-relay refused\n";

/// What a hook sends, and closes, after writing its event into the spool itself:
/// the daemon then captures what the spool holds.
pub const SPOOLED_NOTE: &str = "solaria-relay 1 spooled\n";

/// The longest header line the daemon reads.
pub const MAX_HEADER_BYTES: usize = 256;

/// The largest payload a hook reads from stdin or relays; beyond it the event is
/// dropped (and logged).
pub const MAX_PAYLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// Where the daemon of `data_dir` listens for hooks.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SOCKET_FILE)
}

/// The Claude Code hook events SOLARIA handles, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PostToolUse,
    /// A tool call that failed (newer Claude Code sends these instead of PostToolUse).
    PostToolUseFailure,
    Stop,
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order `solaria hook --help` lists them.
    pub const ALL: [HookEvent; 6] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Stop,
        HookEvent::SessionEnd,
    ];

    /// Its `solaria hook` argument, as the installers write it.
    pub const fn arg(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::PostToolUse => "post-tool-use",
            HookEvent::PostToolUseFailure => "post-tool-use-failure",
            HookEvent::Stop => "stop",
            HookEvent::SessionEnd => "session-end",
        }
    }

    /// The event named by its `solaria hook` argument (`post-tool-use`, …).
    pub fn from_arg(arg: &str) -> Option<HookEvent> {
        Self::ALL.into_iter().find(|event| event.arg() == arg)
    }

    /// Whether Claude Code reads what the hook prints: SessionStart's context and
    /// a prompt's recall. The other events' hooks print nothing.
    pub fn prints(self) -> bool {
        matches!(self, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
    }

    /// Claude Code's name for the event (`hook_event_name`).
    pub const fn claude_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Stop => "Stop",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }
}

/// The Claude Code events whose hooks Codex CLI also runs, under the same names
/// and with payloads of the same shape (`solaria hook codex <arg>`). Codex has no
/// PostToolUseFailure: a failed tool call is a PostToolUse too.
pub const CODEX_EVENTS: [HookEvent; 5] = [
    HookEvent::SessionStart,
    HookEvent::UserPromptSubmit,
    HookEvent::PostToolUse,
    HookEvent::Stop,
    HookEvent::SessionEnd,
];

/// Gemini CLI's hook events SOLARIA listens to, by their `solaria hook gemini`
/// argument and Gemini's own name, with the Claude Code event each is captured as:
/// a prompt is BeforeAgent, a finished tool call AfterTool, a turn's end AfterAgent.
pub const GEMINI_EVENTS: [(&str, &str, HookEvent); 5] = [
    ("session-start", "SessionStart", HookEvent::SessionStart),
    ("before-agent", "BeforeAgent", HookEvent::UserPromptSubmit),
    ("after-tool", "AfterTool", HookEvent::PostToolUse),
    ("after-agent", "AfterAgent", HookEvent::Stop),
    ("session-end", "SessionEnd", HookEvent::SessionEnd),
];

/// The Gemini event named by its `solaria hook gemini` argument: Gemini's name for
/// it, and the Claude Code event it is captured as.
pub fn gemini_event(arg: &str) -> Option<(&'static str, HookEvent)> {
    GEMINI_EVENTS
        .into_iter()
        .find(|(a, _, _)| *a == arg)
        .map(|(_, name, event)| (name, event))
}

/// Whether OpenCode's plugin reads what `event`'s hook prints: the session's
/// context and a message's recall.
pub fn opencode_prints(event: &str) -> bool {
    matches!(event, "session.created" | "context" | "chat.message")
}

/// Whose event a request carries, and the name the hook gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A Claude Code hook, by its `solaria hook` argument (`post-tool-use`, …).
    ClaudeCode(String),
    /// An OpenCode plugin event, by OpenCode's name (`tool.execute.after`, …).
    OpenCode(String),
    /// A Codex CLI hook, by its `solaria hook codex` argument (`post-tool-use`, …).
    Codex(String),
    /// A Gemini CLI hook, by its `solaria hook gemini` argument (`after-tool`, …).
    Gemini(String),
}

impl Event {
    /// The header line that opens a request for this event.
    pub fn header(&self) -> String {
        match self {
            Event::ClaudeCode(name) => format!("{MAGIC} claude-code {name}\n"),
            Event::OpenCode(name) => format!("{MAGIC} opencode {name}\n"),
            Event::Codex(name) => format!("{MAGIC} codex {name}\n"),
            Event::Gemini(name) => format!("{MAGIC} gemini {name}\n"),
        }
    }

    /// The event a header line names; `None` for anything else.
    pub fn parse_header(line: &str) -> Option<Event> {
        let rest = line.strip_suffix('\n')?.strip_prefix(MAGIC)?;
        let mut words = rest.split(' ').skip(1);
        let (agent, name) = (words.next()?, words.next()?);
        if words.next().is_some() || name.is_empty() {
            return None;
        }
        match agent {
            "claude-code" => Some(Event::ClaudeCode(name.to_owned())),
            "opencode" => Some(Event::OpenCode(name.to_owned())),
            "codex" => Some(Event::Codex(name.to_owned())),
            "gemini" => Some(Event::Gemini(name.to_owned())),
            _ => None,
        }
    }

    /// Whether the agent reads what this event's hook prints (a context, a
    /// recall): such an event is captured before it is answered; the others are
    /// answered once spooled (`spool.rs`).
    pub fn prints(&self) -> bool {
        match self {
            Event::ClaudeCode(name) | Event::Codex(name) => {
                HookEvent::from_arg(name).is_some_and(HookEvent::prints)
            }
            Event::OpenCode(name) => opencode_prints(name),
            Event::Gemini(name) => gemini_event(name).is_some_and(|(_, e)| e.prints()),
        }
    }

    /// The `solaria hook …` arguments that capture this event in a process.
    pub fn hook_args(&self) -> Vec<&str> {
        match self {
            Event::ClaudeCode(name) => vec!["hook", name],
            Event::OpenCode(name) => vec!["hook", "opencode", name],
            Event::Codex(name) => vec!["hook", "codex", name],
            Event::Gemini(name) => vec!["hook", "gemini", name],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_solarias_own_command_is_taken_for_it() {
        for own in [
            "/memory status",
            "  /solaria-memory:memory search refresh tokens",
            "/memory",
            "$solaria-memory search flaky upload",
        ] {
            assert!(is_own_command(own), "{own}");
        }
        for theirs in [
            "memory status",
            "/memorize this",
            "/other-plugin:memory status",
            "/solaria-memory:memoryx",
            "why does /memory status fail?",
            "$solaria-memoryx",
            "$HOME is unset",
            "",
        ] {
            assert!(!is_own_command(theirs), "{theirs}");
        }
    }

    #[test]
    fn headers_read_back_as_the_event_they_name() {
        for event in [
            Event::ClaudeCode("post-tool-use".into()),
            Event::OpenCode("tool.execute.after".into()),
            Event::Codex("session-start".into()),
            Event::Gemini("after-tool".into()),
        ] {
            assert_eq!(Event::parse_header(&event.header()), Some(event));
        }
    }

    #[test]
    fn anything_but_a_header_is_refused() {
        for line in [
            "",
            "solaria-relay 1 claude-code post-tool-use",
            "solaria-relay 2 claude-code post-tool-use\n",
            "solaria-relay 1 cursor stop\n",
            "solaria-relay 1 claude-code \n",
            "solaria-relay 1 claude-code stop extra\n",
            "GET / HTTP/1.1\n",
        ] {
            assert_eq!(Event::parse_header(line), None, "{line:?}");
        }
        assert!(is_relay_line(
            b"solaria-relay 2 claude-code post-tool-use\n"
        ));
        assert!(!is_relay_line(b"{\"session_id\": \"s\"}\n"));
        assert!(!is_relay_line(b"GET / HTTP/1.1\n"));
    }

    #[test]
    fn only_the_events_whose_output_an_agent_reads_print() {
        let printing: Vec<&str> = HookEvent::ALL
            .into_iter()
            .filter(|e| e.prints())
            .map(HookEvent::arg)
            .collect();
        assert_eq!(printing, ["session-start", "user-prompt-submit"]);
        assert!(Event::OpenCode("chat.message".into()).prints());
        assert!(!Event::OpenCode("tool.execute.after".into()).prints());
        assert!(Event::Codex("user-prompt-submit".into()).prints());
        assert!(!Event::Codex("post-tool-use".into()).prints());
        assert!(Event::Gemini("before-agent".into()).prints());
        assert!(!Event::Gemini("after-tool".into()).prints());
        assert!(!Event::ClaudeCode("unknown".into()).prints());
    }
}
