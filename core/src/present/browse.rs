//! What the viewer lists besides search, records and knowledge: the projects with
//! their counts, a project's sessions, and each event as it is captured (the live
//! feed). Session and event lines are the shared renderer's, as in a context and a
//! timeline; a project's line is worded here.

use super::{MachineLabels, Reader};
use crate::store::browse::{FeedPosition, ProjectCounts};
use crate::store::injected::{Handed, Injection};
use crate::store::views::RecentSession;
use serde::Serialize;
use solaria_shared::render::{self, NAME_CHARS, field};
use solaria_shared::{Citation, ObservationId, Project, SessionId};

/// Every project of the memory, most recently active first.
#[derive(Debug, Clone)]
pub struct ProjectsPage {
    pub projects: Vec<ProjectRow>,
}

/// One project and what it holds.
#[derive(Debug, Clone)]
pub struct ProjectRow {
    pub counts: ProjectCounts,
    pub kept: Kept,
}

/// Where a project's records go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// Named in `[sync] local_only_projects`: it never leaves this machine.
    LocalOnly,
    /// One of the account's shared patterns matches it: the whole team sees it.
    Shared,
    /// The account shares it with no one else: only this person's machines see it.
    Personal,
    /// Not known: not logged in, or no sync has said what the account shares.
    Unknown,
}

impl ProjectRow {
    /// `api (github.com/acme/api): 3 sessions, 40 events (2 failed), 1 decision,
    /// 4 memories; last active 14:03`, then where it is kept (shared with the team,
    /// personal, local only) and whose records it holds besides this person's.
    pub fn line(&self, reader: Reader) -> String {
        let c = &self.counts;
        let failed = if c.failures > 0 {
            format!(" ({} failed)", c.failures)
        } else {
            String::new()
        };
        let last = c
            .last_activity
            .map(|t| format!("; last active {}", reader.when(t)))
            .unwrap_or_default();
        let teammates = if c.teammates.is_empty() {
            String::new()
        } else {
            let who: Vec<String> = c
                .teammates
                .iter()
                .map(|t| format!("@{}", field(t, NAME_CHARS)))
                .collect();
            format!("; with records of {}", who.join(", "))
        };
        let kept = match self.kept {
            Kept::LocalOnly => "; local only: never synced",
            Kept::Shared => "; shared with the team",
            Kept::Personal => "; personal",
            Kept::Unknown => "",
        };
        format!(
            "{} ({}): {}, {}{failed}, {}, {}{last}{kept}{teammates}",
            field(&c.project.name, NAME_CHARS),
            field(&c.project.key, 300),
            counted(c.sessions, "session"),
            counted(c.events, "event"),
            counted(c.decisions, "decision"),
            counted(c.memories, "memory"),
        )
    }
}

/// `1 session`, `3 sessions`, `2 memories`.
fn counted(n: i64, what: &str) -> String {
    match (n, what.strip_suffix('y')) {
        (1, _) => format!("1 {what}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {what}s"),
    }
}

/// A project's sessions in which something was captured, newest first.
#[derive(Debug, Clone)]
pub struct SessionsPage {
    pub project: Project,
    pub sessions: Vec<RecentSession>,
    pub machines: MachineLabels,
}

impl SessionsPage {
    /// Each session's line (as a context lists it, naming its agent), with its id.
    pub fn lines(&self, reader: Reader) -> Vec<(SessionId, String)> {
        let r = reader.render(&self.machines);
        self.sessions
            .iter()
            .map(|s| {
                (
                    s.session.id,
                    render::context::session_line(&s.line(), r, &self.machines, true),
                )
            })
            .collect()
    }
}

/// What the live feed sends an open page.
#[derive(Debug, Clone)]
pub enum Live {
    /// An event was captured.
    Event(LiveEvent),
    /// A session got its summary (at its end).
    Summary(LiveSummary),
}

impl Live {
    /// The server-sent event's name.
    pub fn name(&self) -> &'static str {
        match self {
            Live::Event(_) => "capture",
            Live::Summary(_) => "summary",
        }
    }

    /// Where the feed stands after it (a page resumes from here).
    pub fn position(&self) -> FeedPosition {
        match self {
            Live::Event(e) => e.position,
            Live::Summary(s) => s.position,
        }
    }

    /// What the page is sent, as JSON.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Live::Event(e) => serde_json::to_value(e),
            Live::Summary(s) => serde_json::to_value(s),
        }
        .unwrap_or_default()
    }
}

/// An event as the live feed sends it to an open page.
#[derive(Debug, Clone, Serialize)]
pub struct LiveEvent {
    #[serde(skip)]
    pub position: FeedPosition,
    pub id: ObservationId,
    pub session: SessionId,
    pub project_key: String,
    /// Its timeline line (the shared renderer's), for a person.
    pub line: String,
    pub failed: bool,
}

/// A session's summary as the live feed sends it.
#[derive(Debug, Clone, Serialize)]
pub struct LiveSummary {
    #[serde(skip)]
    pub position: FeedPosition,
    pub session: SessionId,
    /// Its text as a session's page shows it (one field, bounded).
    pub text: String,
}

/// The characters of a summary a session's page shows.
pub const SUMMARY_CHARS: usize = 4_000;

/// What a session was handed: each injection with a line per record it cited.
#[derive(Debug, Clone)]
pub struct HandedPage {
    pub injections: Vec<(Injection, Vec<HandedRecord>)>,
}

/// A record an agent was handed, as it reads now.
#[derive(Debug, Clone)]
pub struct HandedRecord {
    pub cite: Citation,
    /// Its line (the shared renderer's), or `None` once it is no longer in the
    /// memory (forgotten, pruned).
    pub line: Option<String>,
}

impl HandedRecord {
    /// Its line, or its citation and that it is gone.
    pub fn text(&self) -> String {
        self.line
            .clone()
            .unwrap_or_else(|| format!("{} (no longer in the memory)", self.cite))
    }
}

/// What an injection was: `14:03 context at the session's start (5 records)`,
/// `14:05 recalled for the prompt [O#…] (2 records)`.
pub fn injection_heading(i: &Injection, reader: Reader) -> String {
    let what = match i.handed {
        Handed::Context => "the context at the session's start".to_string(),
        Handed::Recall { prompt } => {
            format!("recalled for the prompt {}", Citation::observation(prompt))
        }
    };
    format!(
        "{} {what} ({} record{})",
        reader.when(i.at),
        i.cited.len(),
        if i.cited.len() == 1 { "" } else { "s" }
    )
}

/// Where a record was handed to an agent: `14:03 in the context of [S#…]`,
/// `14:05 recalled for the prompt [O#…] of [S#…]`.
pub fn handed_line(i: &Injection, reader: Reader) -> String {
    let session = Citation::session(i.session);
    match i.handed {
        Handed::Context => format!("{} in the context of {session}", reader.when(i.at)),
        Handed::Recall { prompt } => format!(
            "{} recalled for the prompt {} of {session}",
            reader.when(i.at),
            Citation::observation(prompt)
        ),
    }
}
