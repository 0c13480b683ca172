//! The one renderer: the text a person or an agent reads for a search hit, a
//! timeline, a record in full, a decision, an iteration and a context, written
//! here once for the edge (`solaria`, its MCP server, its hooks) and the central
//! service (its MCP server) alike. A caller names its reader ([`Reader`]: the
//! clock, and whether a person or an agent reads) and hands the records; the same
//! records read the same on both sides but for the clock.
//!
//! Everything shown is sanitized field by field (`sanitize.rs`: one line, no tag,
//! bounded, no `<private>` span) and what an agent is given sits in one data block
//! per injection (`frame.rs`): recorded data, never instructions.
//!
//! Files: `sanitize.rs`, `frame.rs`, `time.rs` (the clock), `json.rs` (a tool call
//! read line by line), `hits.rs` (the compact index), `timeline.rs`, `records.rs`
//! (records in full), `knowledge.rs` (knowledge lines, records, lists, iterations),
//! `context.rs` (the session-start context).

pub mod context;
pub mod frame;
pub mod hits;
pub mod json;
pub mod knowledge;
pub mod markdown;
pub mod records;
pub mod sanitize;
pub mod snippet;
pub mod time;
pub mod timeline;

pub use frame::DataBlock;

/// How a person calls each agent SOLARIA captures, by the name its sessions are
/// recorded under: the one table the context and `solaria doctor` read.
pub fn known_agent_name(agent: &str) -> Option<&'static str> {
    Some(match agent {
        "claude-code" => "Claude Code",
        "opencode" => "OpenCode",
        "codex" => "Codex CLI",
        "gemini" => "Gemini CLI",
        _ => return None,
    })
}
pub use sanitize::{clip, field};
pub use time::TimeStyle;

use crate::ids::MachineId;
use std::collections::{BTreeMap, HashMap};

/// Who reads the text: how times read, whether machines are always named, and
/// how next steps are put.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    pub time: TimeStyle,
    pub audience: Audience,
}

/// A person at a terminal, or an agent that cites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// A person at a terminal of `this_machine`: its own records carry no machine
    /// name, next steps are `solaria` commands.
    Person { this_machine: Option<MachineId> },
    /// An agent: every machine named, next steps are MCP tools.
    Agent,
}

impl Reader {
    /// An agent reading times in `time` (the edge: local, central: UTC).
    pub fn agent(time: TimeStyle) -> Reader {
        Reader {
            time,
            audience: Audience::Agent,
        }
    }

    /// Whether an agent reads.
    pub fn is_agent(self) -> bool {
        self.audience == Audience::Agent
    }

    /// ` @name` after a line, or nothing when a person reads about their own
    /// machine's record.
    pub fn machine(self, m: MachineId, names: &impl NameOf) -> String {
        self.placed(m, names, "")
    }

    /// Where a record was written, after its time: ` by @ana on laptop` when a
    /// teammate wrote it, ` on @desktop` for another machine of the reader's own
    /// person, nothing when a person reads about their own machine's record.
    pub fn written_at(self, m: MachineId, names: &impl NameOf) -> String {
        let before = match names.teammate_of(m) {
            Some(_) => " by",
            None => " on",
        };
        self.placed(m, names, before)
    }

    /// `{before} @name` (e.g. ` on @desktop`), or nothing when a person reads about
    /// their own machine's record.
    pub fn placed(self, m: MachineId, names: &impl NameOf, before: &str) -> String {
        match self.audience {
            Audience::Person {
                this_machine: Some(own),
            } if own == m => String::new(),
            _ => format!("{before} @{}", field(&names.name_of(m), NAME_CHARS)),
        }
    }

    /// How this reader sees what happened around a record.
    pub fn timeline_step(self) -> &'static str {
        match self.audience {
            Audience::Person { .. } => "`solaria timeline ID`",
            Audience::Agent => "memory_timeline ID",
        }
    }

    /// How this reader fetches full records.
    pub fn records_step(self) -> &'static str {
        match self.audience {
            Audience::Person { .. } => "`solaria show ID…`",
            Audience::Agent => "memory_get_observations [ID…]",
        }
    }
}

/// How the writer of a record is named after its `@`: its machine, and when a
/// teammate wrote it, the person first (`ana on laptop`, read `@ana on laptop`).
/// Records of the reader's own person name only the machine, as they always did.
pub fn author_label(machine: &str, person: Option<&str>) -> String {
    match person {
        Some(person) => format!("{person} on {machine}"),
        None => machine.to_string(),
    }
}

/// How a person is named in what is read: the name part of their email
/// (`ana@acme.com` reads `ana`).
pub fn person_handle(email: &str) -> &str {
    email.split('@').next().unwrap_or(email)
}

/// The most characters of a name (machine, project, agent) shown.
pub const NAME_CHARS: usize = 80;
/// The most characters of a title shown on an index or timeline line.
pub const TITLE_CHARS: usize = 200;

/// A machine's name by its id, as each side keeps them.
pub trait NameOf {
    /// The machine's name; its id when it has none.
    fn name_of(&self, m: MachineId) -> String;

    /// The handle of the teammate whose machine `m` is; `None` for a machine of the
    /// reader's own person, or one this side does not know as a teammate's.
    fn teammate_of(&self, _m: MachineId) -> Option<String> {
        None
    }
}

impl NameOf for BTreeMap<MachineId, String> {
    fn name_of(&self, m: MachineId) -> String {
        self.get(&m).cloned().unwrap_or_else(|| m.to_string())
    }
}

impl NameOf for HashMap<MachineId, String> {
    fn name_of(&self, m: MachineId) -> String {
        self.get(&m).cloned().unwrap_or_else(|| m.to_string())
    }
}
