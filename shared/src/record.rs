//! The record types every node stores and syncs: sessions, observations
//! and summaries, each carrying the same sync envelope ([`RecordMeta`], in `envelope`).

use crate::citation::Citation;
use crate::envelope::{Project, RecordMeta};
use crate::ids::{ObservationId, SessionId, SummaryId};
use crate::knowledge::KnowledgeKind;
use crate::time::UnixMillis;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One agent conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: SessionId,
    pub meta: RecordMeta,
    pub project: Project,
    /// The agent's own id for the conversation (Claude Code's `session_id`).
    pub agent_session_id: String,
    pub cwd: String,
    /// Which agent produced it (`claude-code`).
    pub agent: String,
    /// How the session began (`startup`, `resume`, `clear`, `compact`).
    pub source: String,
    pub started_at: UnixMillis,
    pub ended_at: Option<UnixMillis>,
}

/// What kind of event an observation records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservationKind {
    /// A tool call with its input and response.
    ToolUse,
    /// A prompt the user submitted.
    Prompt,
    /// A note written on purpose (by the user or an agent).
    Note,
}

impl ObservationKind {
    /// The name used in storage, on the wire and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ObservationKind::ToolUse => "tool_use",
            ObservationKind::Prompt => "prompt",
            ObservationKind::Note => "note",
        }
    }
}

impl fmt::Display for ObservationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for an unknown observation kind.
#[derive(Debug, thiserror::Error)]
#[error("unknown observation kind `{0}` (expected tool_use, prompt or note)")]
pub struct ParseKindError(String);

impl FromStr for ObservationKind {
    type Err = ParseKindError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tool_use" | "tool" => Ok(ObservationKind::ToolUse),
            "prompt" => Ok(ObservationKind::Prompt),
            "note" => Ok(ObservationKind::Note),
            other => Err(ParseKindError(other.chars().take(40).collect())),
        }
    }
}

/// What a search hit or a type filter names: an observation of some kind, a
/// session summary, or a kind of knowledge. The edge and central search, filter
/// and cite by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordType {
    ToolUse,
    Prompt,
    Note,
    Summary,
    Decision,
    Memory,
    Commit,
    Iteration,
    Event,
}

impl RecordType {
    /// The name on the command line, on the wire and in query strings.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordType::ToolUse => "tool_use",
            RecordType::Prompt => "prompt",
            RecordType::Note => "note",
            RecordType::Summary => "summary",
            RecordType::Decision => "decision",
            RecordType::Memory => "memory",
            RecordType::Commit => "commit",
            RecordType::Iteration => "iteration",
            RecordType::Event => "event",
        }
    }

    /// Every type, in the documented order.
    pub const ALL: [RecordType; 9] = [
        RecordType::ToolUse,
        RecordType::Prompt,
        RecordType::Note,
        RecordType::Summary,
        RecordType::Decision,
        RecordType::Memory,
        RecordType::Commit,
        RecordType::Iteration,
        RecordType::Event,
    ];

    /// The observation kind this type selects (`None` for the other types).
    pub fn observation_kind(self) -> Option<ObservationKind> {
        match self {
            RecordType::ToolUse => Some(ObservationKind::ToolUse),
            RecordType::Prompt => Some(ObservationKind::Prompt),
            RecordType::Note => Some(ObservationKind::Note),
            _ => None,
        }
    }

    /// The knowledge kind this type selects (`None` for events of sessions).
    pub fn knowledge_kind(self) -> Option<KnowledgeKind> {
        match self {
            RecordType::Decision => Some(KnowledgeKind::Decision),
            RecordType::Memory => Some(KnowledgeKind::Memory),
            RecordType::Commit => Some(KnowledgeKind::Commit),
            RecordType::Iteration => Some(KnowledgeKind::Iteration),
            RecordType::Event => Some(KnowledgeKind::Event),
            _ => None,
        }
    }

    /// The type of a knowledge record of `kind` (links are not search results).
    pub fn of_knowledge(kind: KnowledgeKind) -> Option<RecordType> {
        RecordType::ALL
            .into_iter()
            .find(|t| t.knowledge_kind() == Some(kind))
    }

    /// How a record of this type is cited: an observation by its own id, a
    /// summary by its session (as everywhere a session is shown), knowledge by its
    /// id (a commit by its sha: `Knowledge::citation`, which search hits use).
    pub fn citation(self, id: impl fmt::Display, session_id: impl fmt::Display) -> Citation {
        use crate::citation::CitedKind;
        match self {
            RecordType::Summary => Citation::session(session_id),
            RecordType::ToolUse | RecordType::Prompt | RecordType::Note => {
                Citation::observation(id)
            }
            RecordType::Decision => Citation::new(CitedKind::Decision, id),
            RecordType::Memory => Citation::new(CitedKind::Memory, id),
            RecordType::Commit => Citation::new(CitedKind::Commit, id),
            RecordType::Iteration => Citation::new(CitedKind::Iteration, id),
            RecordType::Event => Citation::new(CitedKind::Event, id),
        }
    }
}

impl From<ObservationKind> for RecordType {
    fn from(kind: ObservationKind) -> Self {
        match kind {
            ObservationKind::ToolUse => RecordType::ToolUse,
            ObservationKind::Prompt => RecordType::Prompt,
            ObservationKind::Note => RecordType::Note,
        }
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for an unknown record type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown type `{0}` (expected tool_use, prompt, note, summary, decision, memory, commit, iteration or event)"
)]
pub struct ParseRecordTypeError(String);

impl FromStr for RecordType {
    type Err = ParseRecordTypeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if let Some(found) = RecordType::ALL.into_iter().find(|r| r.as_str() == t) {
            return Ok(found);
        }
        // Aliases of observation kinds (`tool` for `tool_use`).
        t.parse::<ObservationKind>()
            .map(RecordType::from)
            .map_err(|_| ParseRecordTypeError(t.chars().take(40).collect()))
    }
}

/// One captured event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub id: ObservationId,
    pub meta: RecordMeta,
    pub session_id: SessionId,
    pub project: Project,
    pub kind: ObservationKind,
    /// The tool's name for `tool_use` (`Bash`, `Edit`, `mcp__github__get_issue`, …).
    pub tool_name: Option<String>,
    /// A one-line title for indexes and context lines.
    pub title: String,
    /// The tool input or prompt text (JSON text for tool inputs), redacted.
    pub input: String,
    /// The tool response (JSON text), redacted and bounded.
    pub response: String,
    /// Files the event touched.
    pub files: Vec<String>,
    /// Extra facts (exit codes, error flags, tool_use_id, truncation).
    pub metadata: serde_json::Value,
    pub tags: Vec<String>,
    pub created_at: UnixMillis,
}

impl Observation {
    /// Whether the capture marked it failed (`metadata.error`: a command that exited
    /// non-zero, a tool that answered an error).
    pub fn failed(&self) -> bool {
        self.metadata
            .get("error")
            .and_then(serde_json::Value::as_bool)
            == Some(true)
    }
}

/// The summary of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub id: SummaryId,
    pub meta: RecordMeta,
    pub session_id: SessionId,
    pub project: Project,
    pub text: String,
    pub key_points: Vec<String>,
    pub tags: Vec<String>,
    pub observation_count: u32,
    pub created_at: UnixMillis,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_names() {
        for kind in [
            ObservationKind::ToolUse,
            ObservationKind::Prompt,
            ObservationKind::Note,
        ] {
            assert_eq!(kind.as_str().parse::<ObservationKind>().ok(), Some(kind));
            let json = serde_json::to_string(&kind).expect("serialises");
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        assert!("decision".parse::<ObservationKind>().is_err());
    }

    #[test]
    fn record_types_read_their_names_and_cite_summaries_by_session() {
        for t in [
            RecordType::ToolUse,
            RecordType::Prompt,
            RecordType::Note,
            RecordType::Summary,
        ] {
            assert_eq!(t.as_str().parse::<RecordType>(), Ok(t));
        }
        assert_eq!("tool".parse::<RecordType>(), Ok(RecordType::ToolUse));
        let e = "decisions".parse::<RecordType>().expect_err("unknown");
        assert!(
            e.to_string()
                .contains("tool_use, prompt, note, summary, decision")
        );
        assert_eq!("decision".parse::<RecordType>(), Ok(RecordType::Decision));
        assert_eq!(RecordType::Summary.citation("x", "s").to_string(), "[S#s]");
        assert_eq!(RecordType::Note.citation("x", "s").to_string(), "[O#x]");
    }
}
