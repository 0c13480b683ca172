//! Knowledge records: what was decided and why, curated memories, the links
//! between them, commits, iterations (units of work) and their events. They travel
//! in the same envelope as every other record ([`RecordMeta`]) as one wire type,
//! `knowledge`, whose `body` says the kind; the rules that read them (titles, search
//! text, confidence bands, supersession, short ids, stable ids) live here, once.

use crate::anchors::Anchors;
use crate::citation::{Citation, CitedKind};
use crate::envelope::{Project, RecordMeta};
use crate::ids::{MachineId, SessionId};
use crate::text::clip_line;
use crate::time::UnixMillis;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

crate::ids::uuid_newtype!(
    /// One knowledge record (decision, memory, link, commit, iteration or event).
    KnowledgeId
);

impl KnowledgeId {
    /// The id every machine derives for the same `name` in the same project, so two
    /// machines that capture the same commit (or link the same pair) write one
    /// record, not two: a UUIDv5 in a namespace of our own.
    pub fn stable(project_key: &str, name: &str) -> KnowledgeId {
        const NAMESPACE: Uuid = Uuid::from_u128(0x5f1a_7e3b_0c4d_4e2f_9a8b_6c5d_4e3f_2a1b);
        KnowledgeId::from_uuid(Uuid::new_v5(
            &NAMESPACE,
            format!("{project_key}\n{name}").as_bytes(),
        ))
    }

    /// The short form people type (`D#…` trailers, `solaria show`): the id's last
    /// [`SHORT_ID_CHARS`] hex digits. A UUIDv7 begins with its creation time, so
    /// records made within the same minute share a prefix; its tail is random.
    pub fn short(&self) -> String {
        let hex = self.as_uuid().simple().to_string();
        hex[hex.len() - SHORT_ID_CHARS..].to_string()
    }
}

/// Hex digits of a short id.
pub const SHORT_ID_CHARS: usize = 12;

/// Declares a string enum (the first variant is the default) with its names,
/// `Display`, `FromStr` (listing the names when a value is wrong) and serde in
/// snake case.
macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $first:ident => $first_text:literal $(, $variant:ident => $text:literal)* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            #[default]
            $first,
            $($variant),*
        }

        impl $name {
            /// Every value, in the documented order.
            pub const ALL: &'static [$name] = &[$name::$first, $($name::$variant),*];

            /// The name on the wire, in storage and on the command line.
            pub fn as_str(self) -> &'static str {
                match self {
                    $name::$first => $first_text,
                    $($name::$variant => $text),*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ParseNameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let t = s.trim().to_ascii_lowercase().replace('-', "_");
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == t)
                    .ok_or_else(|| ParseNameError {
                        what: $what,
                        input: s.chars().take(40).collect(),
                        expected: $name::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", "),
                    })
            }
        }
    };
}

/// A value that is not one of a list's names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{input}` (expected one of: {expected})")]
pub struct ParseNameError {
    what: &'static str,
    input: String,
    expected: String,
}

named_enum!(
    /// The kind of a knowledge record (the `kind` of its body on the wire).
    KnowledgeKind, "knowledge kind", {
        Decision => "decision",
        Memory => "memory",
        Link => "link",
        Commit => "commit",
        Iteration => "iteration",
        Event => "event",
    }
);

named_enum!(
    /// How far a decision reaches.
    Impact, "impact", {
        Medium => "medium",
        Low => "low",
        High => "high",
        Critical => "critical",
    }
);

named_enum!(
    /// Whether a decision or a memory still stands. Superseded and retracted
    /// records stay readable (the audit trail) but leave context and `why`.
    Standing, "status", {
        Active => "active",
        Superseded => "superseded",
        Retracted => "retracted",
    }
);

named_enum!(
    /// What a curated memory holds.
    MemoryType, "memory type", {
        Fact => "fact",
        Preference => "preference",
        Relationship => "relationship",
        Principle => "principle",
        Commitment => "commitment",
        Moment => "moment",
        Skill => "skill",
        Pattern => "pattern",
    }
);

impl MemoryType {
    /// How long a memory of this type holds unless told otherwise, in days; `None`
    /// until it is superseded or forgotten. What happened (a moment) fades first,
    /// then what was promised (a commitment), then facts about the world; who the
    /// user is and how they work (preferences, principles, relationships, skills,
    /// patterns) does not expire.
    pub fn default_lifetime_days(self) -> Option<i64> {
        match self {
            MemoryType::Moment => Some(30),
            MemoryType::Commitment => Some(90),
            MemoryType::Fact => Some(180),
            MemoryType::Preference
            | MemoryType::Relationship
            | MemoryType::Principle
            | MemoryType::Skill
            | MemoryType::Pattern => None,
        }
    }

    /// Whether a memory of this type tells an agent how to behave (principles,
    /// preferences, patterns, skills): written by an agent, it is a proposal until
    /// a person confirms it (`solaria confirm`).
    pub fn guides_behaviour(self) -> bool {
        matches!(
            self,
            MemoryType::Principle
                | MemoryType::Preference
                | MemoryType::Pattern
                | MemoryType::Skill
        )
    }
}

named_enum!(
    /// How two knowledge records relate (`from` → `to`).
    LinkKind, "link kind", {
        Relates => "relates",
        Implements => "implements",
        Reverts => "reverts",
        Supports => "supports",
        Contradicts => "contradicts",
        DependsOn => "depends_on",
        Related => "related",
        Supersedes => "supersedes",
    }
);

named_enum!(
    /// The kind of work an iteration is.
    IterationKind, "iteration kind", {
        Feature => "feature",
        Fix => "fix",
        Spike => "spike",
        Refactor => "refactor",
        Ship => "ship",
        Audit => "audit",
    }
);

named_enum!(
    /// What happened to an iteration.
    EventKind, "event", {
        Started => "started",
        PhaseCompleted => "phase_completed",
        Completed => "completed",
        Abandoned => "abandoned",
        Note => "note",
    }
);

named_enum!(
    /// Where an iteration stands.
    IterationStatus, "iteration status", {
        Active => "active",
        Completed => "completed",
        Abandoned => "abandoned",
    }
);

/// How sure the memory is of a curated memory, 0.0–1.0; decides its [`Band`].
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Confidence(f64);

/// A confidence outside 0.0–1.0 (or not a number).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("confidence must be a number from 0.0 to 1.0, not {0}")]
pub struct ConfidenceError(String);

impl Confidence {
    /// A stated fact: the default when nobody says otherwise.
    pub const STATED: Confidence = Confidence(1.0);

    /// The most an agent may claim: inferred, to be validated by a person. What an
    /// agent remembers it may have read in a web page or a file; only a person's
    /// word (`solaria confirm`) makes it stated.
    pub const AGENT_MAX: Confidence = Confidence(0.79);

    /// This confidence as `writer` may set it: capped at [`Confidence::AGENT_MAX`]
    /// unless a person writes.
    pub fn as_written_by(self, writer: &WrittenBy) -> Confidence {
        if writer.is_person() {
            self
        } else {
            Confidence(self.0.min(Self::AGENT_MAX.0))
        }
    }

    /// The confidence `value`, refused outside 0.0–1.0.
    pub fn new(value: f64) -> Result<Confidence, ConfidenceError> {
        if (0.0..=1.0).contains(&value) {
            Ok(Confidence(value))
        } else {
            Err(ConfidenceError(value.to_string()))
        }
    }

    /// The number.
    pub fn value(self) -> f64 {
        self.0
    }

    /// What the number means (the one place that draws the lines):
    /// ≥ 0.95 stated, 0.80–0.94 strongly implied, 0.50–0.79 inferred (to be
    /// validated), below 0.50 an open question rather than a memory.
    pub fn band(self) -> Band {
        match self.0 {
            c if c >= 0.95 => Band::Stated,
            c if c >= 0.80 => Band::StronglyImplied,
            c if c >= 0.50 => Band::Inferred,
            _ => Band::OpenQuestion,
        }
    }
}

impl Default for Confidence {
    fn default() -> Self {
        Confidence::STATED
    }
}

impl<'de> Deserialize<'de> for Confidence {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Confidence, D::Error> {
        Confidence::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl FromStr for Confidence {
    type Err = ConfidenceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| ConfidenceError(s.chars().take(20).collect()))?;
        Confidence::new(v)
    }
}

/// What a confidence means for a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    Stated,
    StronglyImplied,
    /// Kept, and marked for the user to validate.
    Inferred,
    /// Too unsure to be a memory: listed as a question to answer.
    OpenQuestion,
}

impl Band {
    /// What a line says of a memory in this band (nothing for a stated one).
    pub fn note(self) -> &'static str {
        match self {
            Band::Stated => "",
            Band::StronglyImplied => " (strongly implied)",
            Band::Inferred => " (inferred: to validate)",
            Band::OpenQuestion => " (open question)",
        }
    }
}

/// A choice between alternatives, with the reason.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Decision {
    pub title: String,
    /// The problem the decision answers.
    pub context: String,
    pub chosen: String,
    /// The options not taken.
    pub alternatives: Vec<String>,
    pub rationale: String,
    pub impact: Impact,
    pub phase: String,
    pub decided_at: UnixMillis,
    pub iteration: Option<KnowledgeId>,
    pub tags: Vec<String>,
    pub status: Standing,
    /// The earlier decision this one replaces.
    pub supersedes: Option<KnowledgeId>,
    /// The later decision that replaced this one (set with `status: superseded`).
    pub superseded_by: Option<KnowledgeId>,
    /// The code it speaks of (absent on the wire when it names none).
    #[serde(skip_serializing_if = "Anchors::is_empty")]
    pub anchors: Anchors,
}

/// The most words an option can have and still be named in passing: a name
/// ("diesel", "sea-orm", "long-lived refresh tokens"), not a sentence. A hyphenated
/// compound counts once; "of", "por" and their like not at all.
const NAMEABLE_OPTION_WORDS: usize = 3;
/// Other words a prompt may put among an option's own ("should refresh tokens
/// *be* long-lived").
const OPTION_SLACK: usize = 2;

impl Decision {
    /// The first option this decision set aside that `text` names: each of its
    /// words, in any order and form (English and Spanish stems, `crate::words`),
    /// close together, with at least one word of three letters or more. A prompt
    /// proposing a rejected option again is what a decision's memory exists for,
    /// however little else of it the prompt shares.
    pub fn option_set_aside_in(&self, text: &str) -> Option<&str> {
        let said = crate::words::words(text);
        self.alternatives.iter().map(String::as_str).find(|option| {
            let named_terms = option
                .split_whitespace()
                .filter(|chunk| chunk.chars().any(char::is_alphanumeric))
                .filter(|chunk| !crate::words::is_stopword(chunk))
                .count();
            let named: Vec<_> = crate::words::words(option)
                .into_iter()
                .filter(|w| !w.is_stopword())
                .collect();
            named_terms <= NAMEABLE_OPTION_WORDS
                && named.iter().any(|w| w.text.chars().count() >= 3)
                && crate::words::holds_close(&said, &named, OPTION_SLACK)
        })
    }
}

/// A curated memory (fact, preference, principle…), or an open question when its
/// confidence is below 0.5.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Memory {
    pub memory_type: MemoryType,
    pub content: String,
    pub confidence: Confidence,
    pub tags: Vec<String>,
    /// After this it leaves search and context (it stays in the audit trail).
    pub expires_at: Option<UnixMillis>,
    pub status: Standing,
    pub supersedes: Option<KnowledgeId>,
    pub superseded_by: Option<KnowledgeId>,
    /// The code it speaks of (absent on the wire when it names none).
    #[serde(skip_serializing_if = "Anchors::is_empty")]
    pub anchors: Anchors,
}

/// A typed relation between two knowledge records.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Link {
    pub from: Option<KnowledgeId>,
    pub to: Option<KnowledgeId>,
    pub relation: LinkKind,
    pub note: String,
}

/// A git commit of the project.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Commit {
    /// The full sha (unique in the project: the record's id derives from it);
    /// [`check_commit_sha`] says what it may be. A string checked where records
    /// cross a border (central's ingest, an edge's pull, the edge before git), not
    /// a newtype that refuses to parse: a record that fails to parse fails its
    /// whole batch or page, and an erased commit carries an empty sha.
    pub sha: String,
    pub message: String,
    pub author: String,
    pub branch: String,
    pub files: Vec<String>,
    pub insertions: u64,
    pub deletions: u64,
    pub committed_at: UnixMillis,
    /// The decisions it implements (from `Decision: D#…` trailers or by hand).
    pub decisions: Vec<KnowledgeId>,
    pub iteration: Option<KnowledgeId>,
    /// Author and file statistics are filled in (`git show --numstat`); false
    /// while only what the commit's own output said is known.
    pub complete: bool,
}

/// Whether `sha` is a commit's full object name: 40 (SHA-1) or 64 (SHA-256)
/// lowercase hex digits, as git prints `%H`. Nothing else names a commit in a
/// record: not an abbreviation (it may name another object tomorrow), not a
/// revision expression (`^`, `~`, `..`, `@{…}`), and never an option (`-…`).
pub fn is_full_sha(sha: &str) -> bool {
    (sha.len() == 40 || sha.len() == 64)
        && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why a commit record's sha is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "commit sha {shown:?} is not a full object name (40 or 64 lowercase hex digits); \
     a commit record names its commit by its full sha only"
)]
pub struct BadCommitSha {
    /// The refused value, cut to its first 80 characters.
    shown: String,
}

/// The one rule for a commit record's sha ([`is_full_sha`]), with the reason when
/// it is broken. Central refuses a pushed record that breaks it, an edge neither
/// stores nor applies one, and nothing that breaks it is handed to git: a machine
/// of the account cannot make another run `git show --output=…`.
pub fn check_commit_sha(sha: &str) -> Result<(), BadCommitSha> {
    if is_full_sha(sha) {
        return Ok(());
    }
    Err(BadCommitSha {
        shown: sha.chars().take(80).collect(),
    })
}

/// A unit of work: a feature, a fix, a spike…
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Iteration {
    pub title: String,
    pub iteration_kind: IterationKind,
    pub description: String,
    pub status: IterationStatus,
    pub started_at: UnixMillis,
    pub completed_at: Option<UnixMillis>,
    /// The git branch it was inferred from, when it was not started by hand.
    pub branch: String,
}

/// One entry of an iteration's timeline.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Event {
    pub iteration: Option<KnowledgeId>,
    pub event: EventKind,
    pub detail: String,
    pub at: UnixMillis,
}

/// A knowledge record's own fields, by kind. An erased record keeps its kind and
/// has every field empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KnowledgeBody {
    Decision(Decision),
    Memory(Memory),
    Link(Link),
    Commit(Commit),
    Iteration(Iteration),
    Event(Event),
}

impl KnowledgeBody {
    /// Its kind.
    pub fn kind(&self) -> KnowledgeKind {
        match self {
            KnowledgeBody::Decision(_) => KnowledgeKind::Decision,
            KnowledgeBody::Memory(_) => KnowledgeKind::Memory,
            KnowledgeBody::Link(_) => KnowledgeKind::Link,
            KnowledgeBody::Commit(_) => KnowledgeKind::Commit,
            KnowledgeBody::Iteration(_) => KnowledgeKind::Iteration,
            KnowledgeBody::Event(_) => KnowledgeKind::Event,
        }
    }

    /// A body of `kind` with every field empty: what an erased record carries.
    pub fn erased(kind: KnowledgeKind) -> KnowledgeBody {
        match kind {
            KnowledgeKind::Decision => KnowledgeBody::Decision(Decision::default()),
            KnowledgeKind::Memory => KnowledgeBody::Memory(Memory::default()),
            KnowledgeKind::Link => KnowledgeBody::Link(Link::default()),
            KnowledgeKind::Commit => KnowledgeBody::Commit(Commit::default()),
            KnowledgeKind::Iteration => KnowledgeBody::Iteration(Iteration::default()),
            KnowledgeKind::Event => KnowledgeBody::Event(Event::default()),
        }
    }

    /// Reads the fields of `kind` from their JSON object (as stored, without the
    /// `kind` tag).
    pub fn from_fields(
        kind: KnowledgeKind,
        fields: serde_json::Value,
    ) -> Result<KnowledgeBody, serde_json::Error> {
        Ok(match kind {
            KnowledgeKind::Decision => KnowledgeBody::Decision(serde_json::from_value(fields)?),
            KnowledgeKind::Memory => KnowledgeBody::Memory(serde_json::from_value(fields)?),
            KnowledgeKind::Link => KnowledgeBody::Link(serde_json::from_value(fields)?),
            KnowledgeKind::Commit => KnowledgeBody::Commit(serde_json::from_value(fields)?),
            KnowledgeKind::Iteration => KnowledgeBody::Iteration(serde_json::from_value(fields)?),
            KnowledgeKind::Event => KnowledgeBody::Event(serde_json::from_value(fields)?),
        })
    }

    /// The fields as a JSON object without the `kind` tag (as stored).
    pub fn fields(&self) -> serde_json::Value {
        let value = match self {
            KnowledgeBody::Decision(d) => serde_json::to_value(d),
            KnowledgeBody::Memory(m) => serde_json::to_value(m),
            KnowledgeBody::Link(l) => serde_json::to_value(l),
            KnowledgeBody::Commit(c) => serde_json::to_value(c),
            KnowledgeBody::Iteration(i) => serde_json::to_value(i),
            KnowledgeBody::Event(e) => serde_json::to_value(e),
        };
        value.unwrap_or(serde_json::Value::Null)
    }
}

/// Who wrote a knowledge record: said wherever the record is shown, and an agent's
/// memory about how to behave stays a proposal until a person confirms it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WrittenBy {
    /// A person, at the command line (or a record written before this was kept).
    #[default]
    Person,
    /// An agent, through SOLARIA's MCP tools, by the name its client gave (may be
    /// empty).
    Agent(String),
    /// The session summarizer's proposal.
    Summarizer,
}

impl WrittenBy {
    /// Whether a person wrote it (or a person confirmed it).
    pub fn is_person(&self) -> bool {
        *self == WrittenBy::Person
    }
}

/// `person`, `summarizer`, `agent` or `agent:<name>`: how it is stored and sent.
impl fmt::Display for WrittenBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WrittenBy::Person => f.write_str("person"),
            WrittenBy::Summarizer => f.write_str("summarizer"),
            WrittenBy::Agent(name) if name.is_empty() => f.write_str("agent"),
            WrittenBy::Agent(name) => write!(f, "agent:{name}"),
        }
    }
}

impl FromStr for WrittenBy {
    type Err = ParseNameError;

    fn from_str(s: &str) -> Result<WrittenBy, ParseNameError> {
        match s {
            "" | "person" => Ok(WrittenBy::Person),
            "summarizer" => Ok(WrittenBy::Summarizer),
            "agent" => Ok(WrittenBy::Agent(String::new())),
            other => match other.strip_prefix("agent:") {
                Some(name) => Ok(WrittenBy::Agent(name.chars().take(80).collect())),
                None => Err(ParseNameError {
                    what: "writer",
                    input: other.chars().take(80).collect(),
                    expected: "person, summarizer, agent or agent:NAME".into(),
                }),
            },
        }
    }
}

impl Serialize for WrittenBy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for WrittenBy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<WrittenBy, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One knowledge record: the envelope, where it belongs, and its body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knowledge {
    pub id: KnowledgeId,
    pub meta: RecordMeta,
    pub project: Project,
    /// The agent session it was recorded in, if any.
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Who wrote it (a record from before this was kept reads as a person's).
    #[serde(default, skip_serializing_if = "WrittenBy::is_person")]
    pub written_by: WrittenBy,
    pub created_at: UnixMillis,
    pub body: KnowledgeBody,
}

/// Characters of a commit message's first line used as its title.
const TITLE_CHARS: usize = 120;

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    line.chars().take(TITLE_CHARS).collect()
}

/// Characters of a rationale or a memory's content in a [`Knowledge::gist`].
const GIST_CHARS: usize = 160;

impl Knowledge {
    /// A new record written by `machine` at `updated`.
    pub fn new(
        id: KnowledgeId,
        machine_id: MachineId,
        updated: crate::hlc::Hlc,
        project: Project,
        session_id: Option<SessionId>,
        body: KnowledgeBody,
    ) -> Knowledge {
        Knowledge {
            id,
            meta: RecordMeta {
                machine_id,
                updated,
                deleted: false,
            },
            project,
            session_id,
            written_by: WrittenBy::Person,
            created_at: UnixMillis(updated.physical_ms() as i64),
            body,
        }
    }

    /// Its kind.
    pub fn kind(&self) -> KnowledgeKind {
        self.body.kind()
    }

    /// Why no store may keep this version, if none may: a commit whose sha breaks
    /// [`check_commit_sha`] (an erased commit carries none, and may). Central
    /// refuses such a pushed record with this reason; an edge does not apply
    /// such a pulled one.
    pub fn refused_because(&self) -> Option<String> {
        match &self.body {
            KnowledgeBody::Commit(c) if !(self.meta.deleted && c.sha.is_empty()) => {
                check_commit_sha(&c.sha).err().map(|e| e.to_string())
            }
            _ => None,
        }
    }

    /// How it is cited: `[D#id]`, `[M#id]`, `[C#sha7]`, `[I#id]`, `[E#id]`; a link
    /// is cited as the record it starts from.
    pub fn citation(&self) -> Citation {
        let id = self.id.to_string();
        match &self.body {
            KnowledgeBody::Decision(_) => Citation::new(CitedKind::Decision, id),
            KnowledgeBody::Memory(_) => Citation::new(CitedKind::Memory, id),
            KnowledgeBody::Commit(c) if !c.sha.is_empty() => {
                Citation::new(CitedKind::Commit, &c.sha)
            }
            KnowledgeBody::Commit(_) => Citation::new(CitedKind::Commit, id),
            KnowledgeBody::Iteration(_) => Citation::new(CitedKind::Iteration, id),
            KnowledgeBody::Event(_) => Citation::new(CitedKind::Event, id),
            KnowledgeBody::Link(_) => Citation::new(CitedKind::Link, id),
        }
    }

    /// A one-line title for lists, hits and context lines.
    pub fn title(&self) -> String {
        match &self.body {
            KnowledgeBody::Decision(d) => d.title.clone(),
            KnowledgeBody::Memory(m) => first_line(&m.content),
            KnowledgeBody::Link(l) => format!(
                "{} {} {}",
                l.from.map(|i| i.short()).unwrap_or_default(),
                l.relation,
                l.to.map(|i| i.short()).unwrap_or_default()
            ),
            KnowledgeBody::Commit(c) => first_line(&c.message),
            KnowledgeBody::Iteration(i) => i.title.clone(),
            KnowledgeBody::Event(e) => format!("{} {}", e.event, first_line(&e.detail)),
        }
    }

    /// What the record says, on one line, for lists, answers and contexts on both
    /// sides: a decision with what was chosen and why, a memory with its type and
    /// how sure it is, and so on (without citation, time or status).
    pub fn gist(&self) -> String {
        match &self.body {
            KnowledgeBody::Decision(d) => {
                let mut s = format!("decision: {} — chose {}", d.title, clip_line(&d.chosen, 80));
                if !d.rationale.is_empty() {
                    s.push_str(&format!(" (why: {})", clip_line(&d.rationale, GIST_CHARS)));
                }
                s
            }
            KnowledgeBody::Memory(m) => format!(
                "{}: {}{}",
                m.memory_type,
                clip_line(&m.content, GIST_CHARS),
                m.confidence.band().note()
            ),
            KnowledgeBody::Commit(c) => {
                let mut s = format!("commit: {}", self.title());
                if !c.branch.is_empty() {
                    s.push_str(&format!(" ({})", c.branch));
                }
                s
            }
            KnowledgeBody::Iteration(i) => format!("iteration ({}): {}", i.iteration_kind, i.title),
            KnowledgeBody::Event(_) => format!("event: {}", self.title().trim_end()),
            KnowledgeBody::Link(l) => format!("link: {}", l.relation),
        }
    }

    /// The text full-text search indexes (beside the title): every field a person
    /// would search by.
    pub fn search_text(&self) -> String {
        let mut parts: Vec<&str> = Vec::new();
        match &self.body {
            KnowledgeBody::Decision(d) => {
                parts.extend([d.context.as_str(), &d.chosen, &d.rationale, &d.phase]);
                parts.extend(d.alternatives.iter().map(String::as_str));
                parts.extend(d.tags.iter().map(String::as_str));
                parts.extend(d.anchors.files.iter().map(String::as_str));
                parts.extend(d.anchors.symbols.iter().map(String::as_str));
            }
            KnowledgeBody::Memory(m) => {
                parts.push(m.memory_type.as_str());
                parts.push(&m.content);
                parts.extend(m.tags.iter().map(String::as_str));
                parts.extend(m.anchors.files.iter().map(String::as_str));
                parts.extend(m.anchors.symbols.iter().map(String::as_str));
            }
            KnowledgeBody::Link(l) => parts.push(&l.note),
            KnowledgeBody::Commit(c) => {
                parts.extend([c.sha.as_str(), &c.message, &c.author, &c.branch]);
                parts.extend(c.files.iter().map(String::as_str));
            }
            KnowledgeBody::Iteration(i) => {
                parts.extend([i.iteration_kind.as_str(), &i.description, &i.branch]);
            }
            KnowledgeBody::Event(e) => parts.push(&e.detail),
        }
        parts.retain(|p| !p.is_empty());
        parts.join("\n")
    }

    /// The status lists filter by: `active`, `superseded`, `retracted` (decisions,
    /// memories), `completed`, `abandoned` (iterations); `active` for the rest.
    pub fn status(&self) -> &'static str {
        match &self.body {
            KnowledgeBody::Decision(d) => d.status.as_str(),
            KnowledgeBody::Memory(m) => m.status.as_str(),
            KnowledgeBody::Iteration(i) => i.status.as_str(),
            _ => "active",
        }
    }

    /// Whether it stands at `now`: not erased, not superseded or retracted, not
    /// expired. Only standing knowledge reaches context, recall and `why`.
    pub fn stands(&self, now: UnixMillis) -> bool {
        !self.meta.deleted && !self.expired(now) && status_stands(self.status())
    }

    /// Whether its lifetime is over at `now` (a memory past its `expires_at`). An
    /// expired memory leaves search, recall and context; it stays readable (`show`,
    /// `memories --all`) until it is forgotten.
    pub fn expired(&self, now: UnixMillis) -> bool {
        matches!(&self.body, KnowledgeBody::Memory(m) if m.expires_at.is_some_and(|at| at <= now))
    }

    /// The same record erased: envelope kept, every field of the body emptied.
    pub fn erased(&self) -> KnowledgeBody {
        KnowledgeBody::erased(self.kind())
    }

    /// Applies `f` to every text a person or an agent wrote (see
    /// `WireRecord::map_user_text`), never to ids, enums or numbers.
    pub fn map_user_text(&mut self, f: &mut dyn FnMut(&str) -> String) {
        self.project.key = f(&self.project.key);
        self.project.name = f(&self.project.name);
        let list = |items: &mut Vec<String>, f: &mut dyn FnMut(&str) -> String| {
            for item in items.iter_mut() {
                *item = f(item);
            }
        };
        match &mut self.body {
            KnowledgeBody::Decision(d) => {
                for field in [
                    &mut d.title,
                    &mut d.context,
                    &mut d.chosen,
                    &mut d.rationale,
                    &mut d.phase,
                ] {
                    *field = f(field);
                }
                list(&mut d.alternatives, f);
                list(&mut d.tags, f);
                list(&mut d.anchors.files, f);
                list(&mut d.anchors.symbols, f);
            }
            KnowledgeBody::Memory(m) => {
                m.content = f(&m.content);
                list(&mut m.tags, f);
                list(&mut m.anchors.files, f);
                list(&mut m.anchors.symbols, f);
            }
            KnowledgeBody::Link(l) => l.note = f(&l.note),
            KnowledgeBody::Commit(c) => {
                for field in [&mut c.message, &mut c.author, &mut c.branch] {
                    *field = f(field);
                }
                list(&mut c.files, f);
            }
            KnowledgeBody::Iteration(i) => {
                for field in [&mut i.title, &mut i.description, &mut i.branch] {
                    *field = f(field);
                }
            }
            KnowledgeBody::Event(e) => e.detail = f(&e.detail),
        }
    }

    /// The code this decision or memory speaks of (`None` for other kinds).
    pub fn anchors(&self) -> Option<&Anchors> {
        match &self.body {
            KnowledgeBody::Decision(d) => Some(&d.anchors),
            KnowledgeBody::Memory(m) => Some(&m.anchors),
            _ => None,
        }
    }

    /// The record this live decision or memory replaces (`supersedes`).
    pub fn replaces(&self) -> Option<KnowledgeId> {
        if self.meta.deleted {
            return None;
        }
        match &self.body {
            KnowledgeBody::Decision(d) => d.supersedes,
            KnowledgeBody::Memory(m) => m.supersedes,
            _ => None,
        }
    }

    /// **Supersession across people**, the one rule: a live decision or memory
    /// that names this one in `supersedes` supersedes it, even when its author
    /// cannot write this one (a teammate's record of a shared project). Each store
    /// applies the mark to the record as it holds it, without a new version, when
    /// either of the two arrives, so every node that holds both shows this one
    /// superseded by `by`, with its own author still on it. Only a standing
    /// decision or memory of the same kind is marked; `true` when it changed.
    pub fn mark_superseded_by(&mut self, by: &Knowledge) -> bool {
        if self.meta.deleted || by.kind() != self.kind() || by.replaces() != Some(self.id) {
            return false;
        }
        let (status, superseded_by) = match &mut self.body {
            KnowledgeBody::Decision(d) => (&mut d.status, &mut d.superseded_by),
            KnowledgeBody::Memory(m) => (&mut m.status, &mut m.superseded_by),
            _ => return false,
        };
        if *status != Standing::Active {
            return false;
        }
        *status = Standing::Superseded;
        *superseded_by = Some(by.id);
        true
    }

    /// The knowledge records this one points at (supersession, links, a commit's
    /// decisions, the iteration it belongs to).
    pub fn references(&self) -> Vec<KnowledgeId> {
        let mut out = Vec::new();
        match &self.body {
            KnowledgeBody::Decision(d) => {
                out.extend(d.iteration);
                out.extend(d.supersedes);
                out.extend(d.superseded_by);
            }
            KnowledgeBody::Memory(m) => {
                out.extend(m.supersedes);
                out.extend(m.superseded_by);
            }
            KnowledgeBody::Link(l) => {
                out.extend(l.from);
                out.extend(l.to);
            }
            KnowledgeBody::Commit(c) => {
                out.extend(c.decisions.iter().copied());
                out.extend(c.iteration);
            }
            KnowledgeBody::Iteration(_) => {}
            KnowledgeBody::Event(e) => out.extend(e.iteration),
        }
        out
    }
}

/// Whether a record whose [`Knowledge::status`] is `status` still stands: only a
/// superseded or retracted decision or memory does not (an iteration that ended
/// still stands: it is history, not a withdrawn claim). Stores that keep the
/// status as a column decide with this too.
pub fn status_stands(status: &str) -> bool {
    status != Standing::Superseded.as_str() && status != Standing::Retracted.as_str()
}

/// The decision ids named by `Decision:` trailers of a commit message
/// (`Decision: D#<id>`, `Decision: [D#<short id>]`, several per line or per
/// message): full ids or short ids, as written, for the store to resolve.
pub fn decision_trailers(message: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in message.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        if key != "decision" && key != "decisions" && key != "implements" {
            continue;
        }
        for word in value.split([',', ' ', '\t']) {
            let w = word.trim().trim_start_matches('[').trim_end_matches(']');
            let id = w
                .strip_prefix("D#")
                .or_else(|| w.strip_prefix("d#"))
                .unwrap_or(w);
            let hexish = id.len() >= 8 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
            if hexish && !out.iter().any(|o: &String| o == id) {
                out.push(id.to_ascii_lowercase());
            }
        }
    }
    out
}

/// The iteration kind a branch name suggests (`fix/…` a fix, `spike/…` a spike…);
/// a feature otherwise.
pub fn iteration_kind_of_branch(branch: &str) -> IterationKind {
    let head = branch
        .split(['/', '-', '_'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match head.as_str() {
        "fix" | "bugfix" | "hotfix" | "bug" => IterationKind::Fix,
        "spike" | "experiment" | "poc" => IterationKind::Spike,
        "refactor" | "cleanup" => IterationKind::Refactor,
        "release" | "ship" => IterationKind::Ship,
        "audit" | "security" => IterationKind::Audit,
        _ => IterationKind::Feature,
    }
}

/// Whether a branch is a trunk, not a unit of work (no iteration is inferred
/// from it).
pub fn is_trunk(branch: &str) -> bool {
    matches!(
        branch,
        "" | "main" | "master" | "trunk" | "develop" | "dev" | "HEAD"
    )
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::hlc::Hlc;

    #[test]
    fn a_prompt_names_an_option_set_aside_only_as_whole_words() {
        let d = Decision {
            alternatives: vec![
                "diesel".into(),
                "sea-orm".into(),
                "go".into(),
                "an ORM that generates the whole schema from the models".into(),
            ],
            ..Decision::default()
        };
        let named = |text: &str| d.option_set_aside_in(text);
        assert_eq!(
            named("let's add Diesel as an ORM for the invoice tables"),
            Some("diesel")
        );
        assert_eq!(named("try SEA-ORM instead?"), Some("sea-orm"));
        assert_eq!(named("the sea is calm, no orm"), None, "not close together");
        assert_eq!(named("dieselpunk art for the landing page"), None);
        assert_eq!(
            named("let's go home"),
            None,
            "a two-letter option is too common"
        );
        assert_eq!(
            named("an ORM that generates the whole schema from the models"),
            None,
            "a sentence is not a name"
        );
    }

    #[test]
    fn a_prompt_names_an_option_in_any_order_and_form_even_inside_a_longer_prompt() {
        let d = Decision {
            alternatives: vec![
                "long-lived refresh tokens".into(),
                "código OTP por SMS".into(),
                "sliding expiry only".into(),
            ],
            ..Decision::default()
        };
        let named = |text: &str| d.option_set_aside_in(text);
        assert_eq!(
            named("should refresh tokens be long-lived?"),
            Some("long-lived refresh tokens")
        );
        assert_eq!(
            named("what if the refresh token lived long"),
            Some("long-lived refresh tokens")
        );
        assert_eq!(
            named("para el segundo factor, ¿mandamos un código OTP por SMS al móvil del usuario?"),
            Some("código OTP por SMS")
        );
        assert_eq!(
            named("los códigos OTP irán por SMS"),
            Some("código OTP por SMS")
        );
        assert_eq!(
            named("refresh the dashboard; tokens of the long-lived session are fine"),
            None,
            "the words, not close together"
        );
        assert_eq!(named("rotate refresh tokens on renewal"), None);
    }

    fn record(body: KnowledgeBody) -> Knowledge {
        Knowledge::new(
            KnowledgeId::new(),
            MachineId::new(),
            Hlc::new(1_700_000_000_000, 0),
            Project {
                key: "github.com/acme/api".into(),
                name: "api".into(),
            },
            None,
            body,
        )
    }

    #[test]
    fn a_decision_that_names_another_in_supersedes_marks_it_and_nothing_else() {
        let decision = |supersedes: Option<KnowledgeId>| {
            record(KnowledgeBody::Decision(Decision {
                title: "Page size".into(),
                supersedes,
                ..Decision::default()
            }))
        };
        let mut old = decision(None);
        let newer = decision(Some(old.id));
        let unrelated = decision(Some(KnowledgeId::new()));
        assert!(!old.mark_superseded_by(&unrelated));
        assert!(old.mark_superseded_by(&newer));
        assert_eq!(old.status(), "superseded");
        assert!(old.references().contains(&newer.id));
        assert!(!old.mark_superseded_by(&newer), "once");
        // An erased replacement, or a memory, supersedes no decision.
        let mut other = decision(None);
        let mut erased = decision(Some(other.id));
        erased.meta.deleted = true;
        assert!(!other.mark_superseded_by(&erased));
        let memory = record(KnowledgeBody::Memory(Memory {
            supersedes: Some(other.id),
            ..Memory::default()
        }));
        assert!(!other.mark_superseded_by(&memory));
        assert_eq!(other.status(), "active");
    }

    #[test]
    fn confidence_bands_follow_the_documented_lines() {
        let band = |v: f64| Confidence::new(v).expect("in range").band();
        assert_eq!(band(1.0), Band::Stated);
        assert_eq!(band(0.95), Band::Stated);
        assert_eq!(band(0.94), Band::StronglyImplied);
        assert_eq!(band(0.80), Band::StronglyImplied);
        assert_eq!(band(0.79), Band::Inferred);
        assert_eq!(band(0.50), Band::Inferred);
        assert_eq!(band(0.49), Band::OpenQuestion);
        assert!(Confidence::new(1.2).is_err());
        assert!(Confidence::new(f64::NAN).is_err());
        assert!("-0.1".parse::<Confidence>().is_err());
        let bad: Result<Memory, _> = serde_json::from_str(r#"{"confidence": 3}"#);
        assert!(bad.is_err(), "out of range on the wire is refused");
    }

    #[test]
    fn bodies_round_trip_on_the_wire_tagged_by_kind() {
        let k = record(KnowledgeBody::Decision(Decision {
            title: "No ORM".into(),
            chosen: "sqlx".into(),
            alternatives: vec!["diesel".into(), "sea-orm".into()],
            ..Decision::default()
        }));
        let json = serde_json::to_value(&k).expect("serialises");
        assert_eq!(json["body"]["kind"], "decision");
        let back: Knowledge = serde_json::from_value(json).expect("parses");
        assert_eq!(back, k);
        let fields = k.body.fields();
        assert!(fields.get("kind").is_none());
        let again = KnowledgeBody::from_fields(KnowledgeKind::Decision, fields).expect("fields");
        assert_eq!(again, k.body);
        // An erased body is an empty object of the same kind.
        let erased = KnowledgeBody::from_fields(KnowledgeKind::Memory, serde_json::json!({}))
            .expect("empty fields parse");
        assert_eq!(erased, KnowledgeBody::erased(KnowledgeKind::Memory));
    }

    #[test]
    fn names_parse_leniently_and_list_the_choices_when_wrong() {
        assert_eq!("depends-on".parse::<LinkKind>(), Ok(LinkKind::DependsOn));
        assert_eq!("HIGH".parse::<Impact>(), Ok(Impact::High));
        let e = "huge".parse::<Impact>().expect_err("unknown");
        assert!(e.to_string().contains("medium, low, high, critical"), "{e}");
        for k in KnowledgeKind::ALL {
            assert_eq!(k.as_str().parse::<KnowledgeKind>(), Ok(*k));
        }
    }

    #[test]
    fn commits_are_cited_by_sha_and_get_one_id_per_project_and_sha() {
        let sha = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
        let k = record(KnowledgeBody::Commit(Commit {
            sha: sha.into(),
            message: "Keyset pagination\n\nDecision: D#0123456789ab".into(),
            ..Commit::default()
        }));
        assert_eq!(k.citation().to_string(), "[C#a1b2c3d]");
        assert_eq!(k.title(), "Keyset pagination");
        let a = KnowledgeId::stable("github.com/acme/api", sha);
        assert_eq!(a, KnowledgeId::stable("github.com/acme/api", sha));
        assert_ne!(a, KnowledgeId::stable("github.com/acme/web", sha));
    }

    #[test]
    fn a_commit_sha_is_a_full_lowercase_hex_object_name_and_nothing_else() {
        let sha1 = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
        let sha256 = "0123456789abcdef".repeat(4);
        for good in [sha1, sha256.as_str()] {
            assert!(is_full_sha(good), "{good}");
            assert_eq!(check_commit_sha(good), Ok(()));
        }
        for bad in [
            "A1B2C3D4E5F60718293A4B5C6D7E8F9012345678",
            "a1b2c3d",
            &sha1[..39],
            &format!("{sha1}0"),
            "",
            "--output=/home/ada/.config/x",
            "-a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
            &format!("{}^", &sha1[..39]),
            "a1b2c3d4e5f60718293a..4b5c6d7e8f901234567",
            "a1b2c3d4e5f60718293a 4b5c6d7e8f901234567",
            &format!(" {sha1}"),
            "g1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
        ] {
            assert!(!is_full_sha(bad), "{bad:?}");
            let e = check_commit_sha(bad).expect_err(bad);
            assert!(e.to_string().contains("not a full object name"), "{e}");
        }
        let long = format!("--output={}", "x".repeat(500));
        let shown = check_commit_sha(&long).expect_err("an option").to_string();
        assert!(shown.len() < 300, "the refused value is cut: {shown}");
    }

    #[test]
    fn a_commit_record_with_another_sha_is_refused_and_an_erased_one_is_not() {
        let commit = |sha: &str| {
            record(KnowledgeBody::Commit(Commit {
                sha: sha.into(),
                ..Commit::default()
            }))
        };
        assert_eq!(
            commit("a1b2c3d4e5f60718293a4b5c6d7e8f9012345678").refused_because(),
            None
        );
        let hostile = commit("--output=/home/ada/.config/x");
        let reason = hostile.refused_because().expect("refused");
        assert!(reason.contains("--output=/home/ada/.config/x"), "{reason}");
        assert!(
            commit("").refused_because().is_some(),
            "a live commit names one"
        );
        let mut erased = commit("");
        erased.meta.deleted = true;
        assert_eq!(erased.refused_because(), None, "a tombstone carries no sha");
        let mut erased_hostile = hostile.clone();
        erased_hostile.meta.deleted = true;
        assert!(erased_hostile.refused_because().is_some());
        let memory = record(KnowledgeBody::Memory(Memory::default()));
        assert_eq!(memory.refused_because(), None);
    }

    #[test]
    fn trailers_name_decisions_by_full_or_short_id() {
        let id = KnowledgeId::new();
        let msg = format!(
            "Add keyset pagination\n\nBody text: not a trailer\nDecision: D#{id}\nDecision: [D#{}], D#zz\n",
            id.short()
        );
        assert_eq!(decision_trailers(&msg), vec![id.to_string(), id.short()]);
        assert!(decision_trailers("Fix: typo in docs").is_empty());
    }

    #[test]
    fn user_text_is_mapped_and_ids_are_not() {
        let mut k = record(KnowledgeBody::Decision(Decision {
            title: "t <private>x</private>".into(),
            context: "<private>x</private>".into(),
            alternatives: vec!["<private>x</private>".into()],
            supersedes: Some(KnowledgeId::new()),
            ..Decision::default()
        }));
        let before = k.references();
        k.map_user_text(&mut |t| t.replace("<private>x</private>", ""));
        let json = serde_json::to_string(&k).expect("serialises");
        assert!(!json.contains("private"), "{json}");
        assert_eq!(k.references(), before);
    }

    #[test]
    fn only_active_unexpired_knowledge_stands() {
        let now = UnixMillis(1_000);
        let memory = |status, expires_at| {
            record(KnowledgeBody::Memory(Memory {
                content: "tabs".into(),
                status,
                expires_at,
                ..Memory::default()
            }))
        };
        assert!(memory(Standing::Active, None).stands(now));
        assert!(memory(Standing::Active, Some(UnixMillis(2_000))).stands(now));
        assert!(!memory(Standing::Active, Some(UnixMillis(500))).stands(now));
        assert!(!memory(Standing::Superseded, None).stands(now));
    }

    #[test]
    fn branches_suggest_an_iteration_kind_and_trunks_none() {
        assert_eq!(
            iteration_kind_of_branch("fix/login-loop"),
            IterationKind::Fix
        );
        assert_eq!(
            iteration_kind_of_branch("keyset-pagination"),
            IterationKind::Feature
        );
        assert!(is_trunk("main"));
        assert!(!is_trunk("feat/x"));
    }
}
