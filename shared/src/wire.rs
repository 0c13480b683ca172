//! The sync protocol's wire types: what an edge sends and what the
//! central service answers. JSON over HTTPS; both sides use exactly these types.

use crate::embedding::{EmbeddingRefusal, WireEmbedding};
use crate::hlc::Hlc;
use crate::ids::MachineId;
use crate::knowledge::Knowledge;
use crate::record::{Observation, Session, Summary};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

fn map_project(p: &mut crate::envelope::Project, f: &mut dyn FnMut(&str) -> String) {
    p.key = f(&p.key);
    p.name = f(&p.name);
}

/// The most records one `POST /memory/sync` may carry.
pub const MAX_BATCH: usize = 1000;

/// The wire type of knowledge records. Added after the first release: a server
/// lists it in [`TokenResponse::types`] when it stores them, and an edge asks for
/// it (`types=knowledge` on the change feed and restore) when it reads them, so
/// that neither side ever sends the other a type it cannot parse.
pub const KNOWLEDGE_TYPE: &str = "knowledge";

/// Asked for beside the types on the change feed (`types=knowledge,team_observations`):
/// teammates' observations of shared projects too. Without it a machine pulls its
/// own person's observations only, and teammates' knowledge, sessions and summaries.
pub const TEAM_OBSERVATIONS: &str = "team_observations";

/// One record of any kind, tagged with its type. New kinds are new variants; the
/// envelope and the protocol stay the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WireRecord {
    Session(Session),
    Observation(Observation),
    Summary(Summary),
    /// Decisions, memories, links, commits, iterations and their events.
    Knowledge(Knowledge),
}

impl WireRecord {
    /// The record's global id.
    pub fn id(&self) -> Uuid {
        match self {
            WireRecord::Session(s) => *s.id.as_uuid(),
            WireRecord::Observation(o) => *o.id.as_uuid(),
            WireRecord::Summary(s) => *s.id.as_uuid(),
            WireRecord::Knowledge(k) => *k.id.as_uuid(),
        }
    }

    /// The project it belongs to.
    pub fn project(&self) -> &crate::envelope::Project {
        match self {
            WireRecord::Session(s) => &s.project,
            WireRecord::Observation(o) => &o.project,
            WireRecord::Summary(s) => &s.project,
            WireRecord::Knowledge(k) => &k.project,
        }
    }

    /// The session it names: a session its own id, an observation or a summary
    /// the session it belongs to, knowledge the session it was recorded in (if
    /// any). What the session rule (`sharing::may_name_session`) looks at.
    pub fn session(&self) -> Option<crate::ids::SessionId> {
        match self {
            WireRecord::Session(s) => Some(s.id),
            WireRecord::Observation(o) => Some(o.session_id),
            WireRecord::Summary(s) => Some(s.session_id),
            WireRecord::Knowledge(k) => k.session_id,
        }
    }

    /// The version stamp.
    pub fn updated(&self) -> Hlc {
        self.meta().updated
    }

    /// The machine that wrote this version.
    pub fn machine_id(&self) -> MachineId {
        self.meta().machine_id
    }

    /// The sync envelope.
    pub fn meta(&self) -> &crate::envelope::RecordMeta {
        match self {
            WireRecord::Session(s) => &s.meta,
            WireRecord::Observation(o) => &o.meta,
            WireRecord::Summary(s) => &s.meta,
            WireRecord::Knowledge(k) => &k.meta,
        }
    }

    /// Applies `text` to every text of the record that a person or an agent wrote
    /// or chose (the project's key and name, paths, titles, inputs, responses,
    /// lists) and `json` to its JSON fields (metadata), and neither to the envelope.
    /// The one list of such fields: the edge strips `<private>` spans with it before
    /// a push, and central strips and redacts with it on ingest.
    pub fn map_user_text(
        &mut self,
        text: &mut dyn FnMut(&str) -> String,
        json: &mut dyn FnMut(&mut serde_json::Value),
    ) {
        let list = |items: &mut Vec<String>, f: &mut dyn FnMut(&str) -> String| {
            for item in items.iter_mut() {
                *item = f(item);
            }
        };
        match self {
            WireRecord::Session(s) => {
                map_project(&mut s.project, text);
                s.cwd = text(&s.cwd);
            }
            WireRecord::Observation(o) => {
                map_project(&mut o.project, text);
                o.tool_name = o.tool_name.as_deref().map(&mut *text);
                o.title = text(&o.title);
                o.input = text(&o.input);
                o.response = text(&o.response);
                list(&mut o.files, text);
                list(&mut o.tags, text);
                json(&mut o.metadata);
            }
            WireRecord::Summary(s) => {
                map_project(&mut s.project, text);
                s.text = text(&s.text);
                list(&mut s.key_points, text);
                list(&mut s.tags, text);
            }
            WireRecord::Knowledge(k) => k.map_user_text(text),
        }
    }

    /// The record as it may cross a boundary whole (a push central stores, a
    /// file an edge exports or imports): every `<private>` span stripped, then
    /// every secret redacted, in every user-text field and JSON document.
    pub fn cleaned(mut self) -> WireRecord {
        self.map_user_text(
            &mut |text| crate::redact::redact(&crate::private::strip_private(text)).into_owned(),
            &mut |json| {
                crate::private::strip_private_json(json);
                crate::redact::redact_json(json);
            },
        );
        self
    }

    /// The type name as on the wire.
    pub fn type_name(&self) -> &'static str {
        match self {
            WireRecord::Session(_) => "session",
            WireRecord::Observation(_) => "observation",
            WireRecord::Summary(_) => "summary",
            WireRecord::Knowledge(_) => KNOWLEDGE_TYPE,
        }
    }
}

impl From<Session> for WireRecord {
    fn from(s: Session) -> Self {
        WireRecord::Session(s)
    }
}

impl From<Observation> for WireRecord {
    fn from(o: Observation) -> Self {
        WireRecord::Observation(o)
    }
}

impl From<Summary> for WireRecord {
    fn from(s: Summary) -> Self {
        WireRecord::Summary(s)
    }
}

impl From<Knowledge> for WireRecord {
    fn from(k: Knowledge) -> Self {
        WireRecord::Knowledge(k)
    }
}

/// `POST /memory/sync` request body.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncBatch {
    pub records: Vec<WireRecord>,
    /// Vectors of records (of this batch or pushed before), sent only to a server
    /// listing [`crate::embedding::EMBEDDINGS_CAPABILITY`]: a server without it
    /// refuses unknown fields, so the field is left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub embeddings: Vec<WireEmbedding>,
}

/// What happened to one pushed record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RecordOutcome {
    /// Stored (or already stored: a replay is harmless).
    Applied { id: Uuid },
    /// A newer version won; here it is (boxed: records are large, outcomes many).
    Stale { id: Uuid, winner: Box<WireRecord> },
    /// Refused, with the reason.
    Rejected { id: Uuid, reason: String },
}

/// `POST /memory/sync` response body, one outcome per record in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncResponse {
    pub results: Vec<RecordOutcome>,
    /// The server's clock, so an edge can merge it into its HLC.
    pub server_time: Hlc,
    /// Pushed vectors the server did not keep, with the reason (malformed, or
    /// made from a version that is not the record's current one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub embeddings_refused: Vec<EmbeddingRefusal>,
}

/// One entry of the change feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Position in the account's feed; strictly increasing in commit order.
    pub seq: i64,
    pub record: WireRecord,
}

/// `GET /memory/changes` response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangesPage {
    pub changes: Vec<Change>,
    /// Pass as `since` to continue; equal to the request's `since` when empty.
    pub next: i64,
    /// More changes are waiting beyond this page.
    pub more: bool,
    /// The vectors of this page's records made by the model the reader named
    /// (`embeddings=FINGERPRINT`), each for its record's version on the page;
    /// absent unless asked for, so older edges never see the field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub embeddings: Vec<WireEmbedding>,
}

/// `POST /memory/enroll` request: an enrollment token and a name for the machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnrollRequest {
    pub token: String,
    pub name: String,
    /// The id the machine already uses for its records (an edge has one from its
    /// first run); the server makes one up when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<MachineId>,
}

/// `POST /memory/enroll` response: the machine's identity and its credential
/// (shown once; the server keeps only a hash).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnrollResponse {
    pub machine_id: MachineId,
    pub account_id: Uuid,
    pub credential: String,
}

/// `POST /memory/token` request: exchange a machine credential for a short-lived JWT.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    pub machine_id: MachineId,
    pub credential: String,
}

/// `POST /memory/token` response.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenResponse {
    pub token: String,
    /// Unix seconds.
    pub expires_at: i64,
    /// The record types the server stores beyond the first release's three
    /// (sessions, observations, summaries): [`KNOWLEDGE_TYPE`]; and the
    /// capabilities it has beyond them ([`crate::embedding::EMBEDDINGS_CAPABILITY`]). A server of the
    /// first release sends none, and an edge then holds back the records of
    /// types it does not list (they wait, unpushed, until the server is upgraded).
    #[serde(default)]
    pub types: Vec<String>,
    /// The embedding models whose vectors the server keeps (fingerprints, its
    /// operator's list): an edge pushes only those, and a vector of another model
    /// stays on the machine that made it. `None` from a server that does not say
    /// (it takes what it takes, and answers each refusal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_models: Option<Vec<String>>,
}

/// The account's shared project patterns (`GET /memory/shared`): every project whose
/// key one of them matches (`crate::sharing::matches`) is seen by all its people;
/// every other project is personal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedProjects {
    pub patterns: Vec<String>,
}

/// Every error answer of the API.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApiErrorBody {
    /// A stable machine-readable code (`unauthorized`, `batch_too_large`, …).
    pub error: String,
    /// What happened and what to do next.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ObservationId, ObservationKind, Project, RecordMeta, SessionId, UnixMillis};

    /// An observation whose every text field is `text`.
    fn observation(kind: ObservationKind, text: &str) -> Observation {
        Observation {
            id: ObservationId::new(),
            meta: RecordMeta {
                machine_id: MachineId::new(),
                updated: Hlc::new(5, 1),
                deleted: false,
            },
            session_id: SessionId::new(),
            project: Project {
                key: text.into(),
                name: text.into(),
            },
            kind,
            tool_name: Some(text.into()),
            title: text.into(),
            input: text.into(),
            response: text.into(),
            files: vec![text.into()],
            metadata: serde_json::json!({"a": [text, {"b": text}], "n": 1}),
            tags: vec![text.into()],
            created_at: UnixMillis(1),
        }
    }

    #[test]
    fn records_are_tagged_by_type_on_the_wire() {
        let o = observation(ObservationKind::Prompt, "t");
        let rec = WireRecord::Observation(o.clone());
        let json = serde_json::to_value(&rec).expect("serialises");
        assert_eq!(json["type"], "observation");
        assert_eq!(json["kind"], "prompt");
        let back: WireRecord = serde_json::from_value(json).expect("parses");
        assert_eq!(back, rec);
        assert_eq!(back.id(), *o.id.as_uuid());
    }

    #[test]
    fn every_user_text_field_is_mapped_and_the_envelope_is_not() {
        let mark = "<private>secret</private>";
        let o = observation(ObservationKind::ToolUse, mark);
        let mut rec = WireRecord::Observation(o.clone());
        rec.map_user_text(&mut |t| t.replace(mark, "-"), &mut |v| {
            crate::private::strip_private_json(v)
        });
        let json = serde_json::to_string(&rec).expect("serialises");
        assert!(!json.contains("secret"), "{json}");
        assert_eq!(rec.id(), *o.id.as_uuid());
        assert_eq!(rec.updated(), o.meta.updated);
    }
}

// Cross-device queries: `GET /memory/search`, `/memory/context/{project}`,
// `/memory/timeline/{session}` and `/memory/restore`.

use crate::envelope::Project;
use crate::ids::{ObservationId, SessionId};
use crate::record::RecordType;
use crate::search_mode::SearchMode;
use crate::time::UnixMillis;

/// Hits a search returns unless asked otherwise.
pub const SEARCH_DEFAULT_LIMIT: usize = 20;
/// The most hits one search returns.
pub const SEARCH_MAX_LIMIT: usize = 100;
/// The default token budget of a context (about four characters per token).
pub const CONTEXT_DEFAULT_BUDGET: usize = 2000;
/// The largest token budget a context may ask for.
pub const CONTEXT_MAX_BUDGET: usize = 32_000;
/// Records a restore page holds unless asked otherwise.
pub const RESTORE_DEFAULT_LIMIT: usize = 500;
/// The most records one restore page holds.
pub const RESTORE_MAX_LIMIT: usize = 1000;

/// One search result: enough to cite it and to decide whether to fetch it whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The record's id (an observation's, a summary's, a knowledge record's).
    pub id: Uuid,
    #[serde(rename = "type")]
    pub hit_type: RecordType,
    /// How to cite it: `[O#id]` an observation, `[S#session]` a summary, `[D#id]`,
    /// `[M#id]`, `[C#sha7]`, `[I#id]`, `[E#id]` knowledge.
    pub cite: crate::Citation,
    pub title: String,
    /// The project key.
    pub project: String,
    pub project_name: String,
    /// The machine that last wrote the record, and its name.
    pub machine_id: MachineId,
    pub machine_name: String,
    /// The person who wrote it when that is not the searcher's own person (a
    /// teammate's record of a shared project): their handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The session the record belongs to; the nil UUID for knowledge recorded
    /// outside a session (kept a plain id so first-release edges still parse it).
    pub session_id: SessionId,
    pub created_at: UnixMillis,
    /// About how many tokens the full record costs to read (~4 characters a token).
    pub tokens: usize,
    /// Text relevance times the ranking weight (docs/DESIGN.md, Ranking); higher is better.
    pub score: f64,
    /// Where its text holds the query's words, marked (`render::snippet`); absent
    /// for a hit found by meaning alone, and from a server that does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// For a hit found by meaning alone, in a search that sent a query vector: its
    /// first sentences (`render::snippet::passages`). The service holds no model;
    /// the asker, who does, shows the one closest to the query as the snippet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<String>,
}

/// Whether hits matched every word of the query or, when nothing did, any of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchMode {
    All,
    Any,
}

/// The most dimensions a query vector may have.
pub const MAX_QUERY_DIMENSIONS: usize = 4096;

/// A query's embedding, sent with a search by meaning (`POST /memory/search`): the
/// fingerprint of the model that made it (the one vectors are pushed under) and its
/// values. The service compares it only with vectors of the same model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryVector {
    pub model: String,
    pub values: Vec<f32>,
}

/// `GET`/`POST /memory/search` response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResponse {
    /// The text searched for (the request's `q`, shortened if it was very long).
    pub query: String,
    /// `q` was longer than the server searches and was shortened.
    pub truncated: bool,
    pub matched: MatchMode,
    /// How the service searched: the mode asked for, or `lexical` when it could not
    /// search by meaning (then `notice` says why). Servers before search by meaning
    /// leave it out: words.
    #[serde(default = "lexical")]
    pub mode: SearchMode,
    /// What the caller should know about how the search ran (a mode it could not
    /// honour and why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Best first.
    pub hits: Vec<SearchHit>,
}

fn lexical() -> SearchMode {
    SearchMode::Lexical
}

/// `GET /memory/context/{project}` response body: the context text and what it cites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextResponse {
    pub project: Project,
    /// Markdown, one line per record, newest first, each citing `[S#session]` or
    /// `[O#id]`, its time (UTC) and its machine.
    pub text: String,
    /// The text's size in tokens (~4 characters a token); at most `budget`.
    pub tokens: usize,
    pub budget: usize,
    /// Sessions cited by `[S#…]` lines, in text order.
    pub sessions: Vec<SessionId>,
    /// Observations cited by `[O#…]` lines, in text order.
    pub observations: Vec<ObservationId>,
}

/// A machine of the account, by id and name (timelines; `GET /memory/machines`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineName {
    pub id: MachineId,
    pub name: String,
    /// Whose machine it is when not the reader's own person's: the teammate's
    /// handle (`render::person_handle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
}

impl MachineName {
    /// How a record it wrote names its writer (`render::author_label`).
    pub fn label(&self) -> String {
        crate::render::author_label(&self.name, self.person.as_deref())
    }

    /// Who wrote a record on it, as a JSON answer says it.
    pub fn author(&self) -> Author {
        Author {
            handle: self.person.clone(),
            machine: self.name.clone(),
        }
    }
}

/// Who wrote a record, as every JSON answer that carries a record says it (its
/// `author`): the machine, and the person's handle when a teammate wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Author {
    /// The teammate's handle (`ana`); absent for the reader's own person's records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// The machine's name.
    pub machine: String,
}

impl Author {
    /// Who wrote on machine `m` by `machines`' word: its name and a teammate's
    /// handle; [`Author::unnamed`] when `machines` does not name it.
    pub fn of(m: MachineId, machines: &[MachineName]) -> Author {
        machines
            .iter()
            .find(|n| n.id == m)
            .map(MachineName::author)
            .unwrap_or_else(|| Author::unnamed(m))
    }

    /// The writer on a machine the reader knows no name for: its id, no handle.
    pub fn unnamed(m: MachineId) -> Author {
        Author {
            handle: None,
            machine: m.to_string(),
        }
    }
}

/// A record whose writer can be named: the machine that wrote it.
pub trait Written: Serialize {
    fn machine_id(&self) -> MachineId;
}

macro_rules! written_by_meta {
    ($($record:ty),*) => {$(
        impl Written for $record {
            fn machine_id(&self) -> MachineId {
                self.meta.machine_id
            }
        }
    )*};
}
written_by_meta!(Knowledge, Observation, Session, Summary);

/// A record as a JSON answer carries it: its own fields, and beside them who
/// wrote it, so a script never resolves a machine id itself.
#[derive(Debug, Serialize)]
pub struct Authored<'a, T: Serialize> {
    #[serde(flatten)]
    pub record: &'a T,
    pub author: Author,
}

impl<'a, T: Written> Authored<'a, T> {
    /// `record` beside its author by `machines`' word.
    pub fn by(record: &'a T, machines: &[MachineName]) -> Self {
        Authored {
            record,
            author: Author::of(record.machine_id(), machines),
        }
    }
}

/// `records`, each beside its author by `machines`' word.
pub fn authored<'a, T: Written>(
    records: &'a [T],
    machines: &[MachineName],
) -> Vec<Authored<'a, T>> {
    records.iter().map(|r| Authored::by(r, machines)).collect()
}

/// Machines by id as the renderer names them: their labels, and whose a
/// teammate's machine is (so a line reads "by @ana on laptop").
impl crate::render::NameOf for std::collections::HashMap<MachineId, MachineName> {
    fn name_of(&self, m: MachineId) -> String {
        self.get(&m)
            .map(MachineName::label)
            .unwrap_or_else(|| m.to_string())
    }

    fn teammate_of(&self, m: MachineId) -> Option<String> {
        self.get(&m).and_then(|n| n.person.clone())
    }
}

/// `GET /memory/timeline/{session}` response body; each record is answered
/// beside its `author` (read back, the authors are left: `machines` names them).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TimelineResponse {
    pub session: Session,
    /// The session's live observations, oldest first.
    pub observations: Vec<Observation>,
    pub summary: Option<Summary>,
    /// The names of the machines the records above name.
    pub machines: Vec<MachineName>,
}

impl Serialize for TimelineResponse {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            session: Authored<'a, Session>,
            observations: Vec<Authored<'a, Observation>>,
            summary: Option<Authored<'a, Summary>>,
            machines: &'a [MachineName],
        }
        let m = &self.machines;
        Json {
            session: Authored::by(&self.session, m),
            observations: authored(&self.observations, m),
            summary: self.summary.as_ref().map(|s| Authored::by(s, m)),
            machines: m,
        }
        .serialize(s)
    }
}

/// `GET /memory/restore` response body: one page of the account's live records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestorePage {
    /// Records in change-feed order (knowledge records only when asked for with
    /// `types=knowledge`) (a session comes
    /// before the records its machine pushed after it). Tombstones are left out, so a
    /// page may hold fewer records than its limit (even none while `more` is true).
    pub records: Vec<WireRecord>,
    /// Pass as `since` to continue. It is a change-feed cursor: once `more` is
    /// false, `GET /memory/changes?since=next` carries on from here.
    pub next: i64,
    /// More records are waiting beyond this page.
    pub more: bool,
}
