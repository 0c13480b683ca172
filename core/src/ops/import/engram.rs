//! `solaria import engram FILE|DIR`: engram's memory read into this machine's
//! records, from its export (`engram export`: one JSON document of sessions,
//! observations and prompts) or from the chunks its git sync commits
//! (`.engram/manifest.json` and `.engram/chunks/<id>.jsonl.gz`, each a gzipped
//! document of the same lists). An observation becomes what its type says:
//! `decision` a decision; `preference`, `policy` and `pattern` memories of those
//! kinds; `architecture`, `config`, `discovery`, `learning`, `manual` and `fact`
//! facts; anything else (a bug fix, a command, a session summary…) a note of
//! its session. Memories are an agent's, as engram's are: at most 0.79
//! confident, and the ones about how to work are proposals until a person
//! confirms them. An observation keeps its topic key as a tag and takes its id
//! from it (engram rewrites a topic in place), so a revised topic updates its
//! record here.

use super::{Incoming, Owner, ProjectNames, stable_id};
use crate::app::App;
use crate::ops::{OpError, OpResult};
use serde::Deserialize;
use serde_json::json;
use solaria_shared::knowledge::{
    Confidence, Decision, Knowledge, KnowledgeBody, KnowledgeId, Memory, MemoryType, WrittenBy,
};
use solaria_shared::text::clip_line;
use solaria_shared::wire::WireRecord;
use solaria_shared::{
    Hlc, MachineId, Observation, ObservationId, ObservationKind, Project, RecordMeta, Session,
    SessionId, Summary, SummaryId, UnixMillis,
};
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

const SOURCE: &str = "engram";
const TITLE_CHARS: usize = 120;
/// The largest chunk read, unpacked: a bigger one is not engram's.
const MAX_CHUNK_BYTES: u64 = 512 * 1024 * 1024;

/// engram's lists, in an export or a chunk (Go writes an empty list as `null`).
#[derive(Debug, Default, Deserialize)]
struct Lists {
    #[serde(default, deserialize_with = "null_as_empty")]
    sessions: Vec<EngramSession>,
    #[serde(default, deserialize_with = "null_as_empty")]
    observations: Vec<EngramObservation>,
    #[serde(default, deserialize_with = "null_as_empty")]
    prompts: Vec<EngramPrompt>,
    /// Changes a newer engram syncs beside the lists; not applied here.
    #[serde(default, deserialize_with = "null_as_empty")]
    mutations: Vec<serde_json::Value>,
}

fn null_as_empty<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

#[derive(Debug, Clone, Deserialize)]
struct EngramSession {
    id: String,
    #[serde(default)]
    project: String,
    #[serde(default)]
    directory: String,
    started_at: String,
    #[serde(default)]
    ended_at: Option<String>,
    #[serde(default)]
    summary: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct EngramObservation {
    id: i64,
    #[serde(default)]
    sync_id: Option<String>,
    session_id: String,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    topic_key: Option<String>,
    created_at: String,
    #[serde(default)]
    deleted_at: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct EngramPrompt {
    id: i64,
    #[serde(default)]
    sync_id: Option<String>,
    session_id: String,
    content: String,
    created_at: String,
}

/// An export's header: what makes a JSON document engram's.
#[derive(Debug, Deserialize)]
struct Export {
    version: String,
    #[serde(flatten)]
    lists: Lists,
}

/// The manifest of engram's git sync.
#[derive(Debug, Deserialize)]
struct Manifest {
    version: i64,
    #[serde(default, deserialize_with = "null_as_empty")]
    chunks: Vec<ChunkEntry>,
}

#[derive(Debug, Deserialize)]
struct ChunkEntry {
    id: String,
}

fn refuse(path: &Path, why: impl std::fmt::Display) -> OpError {
    OpError::BadInput(format!("{}: {why}; nothing was imported", path.display()))
}

/// A time as engram writes it: SQLite's `2026-02-28 21:16:30` (UTC), or RFC 3339.
fn time(text: &str) -> Option<UnixMillis> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(UnixMillis(t.timestamp_millis()));
    }
    [
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
    ]
    .iter()
    .find_map(|f| chrono::NaiveDateTime::parse_from_str(text, f).ok())
    .map(|t| UnixMillis(t.and_utc().timestamp_millis()))
}

/// engram's export at `path`.
fn read_export(path: &Path) -> OpResult<Lists> {
    let text = std::fs::read(path).map_err(|e| refuse(path, format!("cannot read it ({e})")))?;
    let export: Export = serde_json::from_slice(&text).map_err(|e| {
        refuse(
            path,
            format!("not an engram export (`engram export` writes one): {e}"),
        )
    })?;
    if !export.version.starts_with("0.") {
        return Err(refuse(
            path,
            format!(
                "an engram export of version {}, and this SOLARIA reads version 0.x",
                export.version
            ),
        ));
    }
    Ok(export.lists)
}

/// The chunks engram's git sync committed under `dir` (the repository, or its
/// `.engram` directory), in the manifest's order, as one set of lists: a later
/// chunk's version of a record replaces an earlier one's.
fn read_chunks(dir: &Path) -> OpResult<Lists> {
    let base = if dir.join("manifest.json").is_file() {
        dir.to_path_buf()
    } else {
        dir.join(".engram")
    };
    let manifest_path = base.join("manifest.json");
    let text = std::fs::read(&manifest_path).map_err(|_| {
        refuse(
            dir,
            "not engram's sync directory: no manifest.json in it or in its .engram",
        )
    })?;
    let manifest: Manifest = serde_json::from_slice(&text)
        .map_err(|e| refuse(&manifest_path, format!("not engram's manifest: {e}")))?;
    if !(1..=2).contains(&manifest.version) {
        return Err(refuse(
            &manifest_path,
            format!(
                "engram's sync manifest version {}, and this SOLARIA reads versions 1 and 2",
                manifest.version
            ),
        ));
    }
    let mut all = Lists::default();
    for entry in &manifest.chunks {
        if !entry.id.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(refuse(
                &manifest_path,
                format!("chunk id {:?} is not a name", entry.id),
            ));
        }
        let path = base.join("chunks").join(format!("{}.jsonl.gz", entry.id));
        let file = std::fs::File::open(&path)
            .map_err(|e| refuse(&path, format!("the manifest names it, but {e}")))?;
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(file)
            .take(MAX_CHUNK_BYTES)
            .read_to_end(&mut text)
            .map_err(|e| refuse(&path, format!("not a gzipped chunk: {e}")))?;
        let chunk: Lists = serde_json::from_slice(&text)
            .map_err(|e| refuse(&path, format!("not an engram chunk: {e}")))?;
        all.sessions.extend(chunk.sessions);
        all.observations.extend(chunk.observations);
        all.prompts.extend(chunk.prompts);
        all.mutations.extend(chunk.mutations);
    }
    Ok(all)
}

/// What an observation's type makes of it here.
enum Becomes {
    Decision,
    Memory(MemoryType),
    Note,
}

fn becomes(kind: &str) -> Becomes {
    match kind {
        "decision" => Becomes::Decision,
        "preference" => Becomes::Memory(MemoryType::Preference),
        "policy" => Becomes::Memory(MemoryType::Principle),
        "pattern" => Becomes::Memory(MemoryType::Pattern),
        "architecture" | "config" | "discovery" | "learning" | "manual" | "fact" => {
            Becomes::Memory(MemoryType::Fact)
        }
        _ => Becomes::Note,
    }
}

fn meta(machine: MachineId) -> RecordMeta {
    RecordMeta {
        machine_id: machine,
        updated: Hlc::default(),
        deleted: false,
    }
}

/// Reads `path` (an export file, or a directory of sync chunks) whole; nothing
/// is written.
pub fn read(app: &App, path: &Path) -> OpResult<Incoming> {
    let lists = if path.is_dir() {
        read_chunks(path)?
    } else {
        read_export(path)?
    };
    let store = app.store()?;
    let machine = store.machine_id();
    let mut projects = ProjectNames::new(&store, app.current_project());
    let mut incoming = Incoming {
        source: SOURCE.to_string(),
        path: path.display().to_string(),
        owner: Owner::ThisMachine,
        ..Incoming::default()
    };
    if !lists.mutations.is_empty() {
        incoming.skipped.push(format!(
            "{} sync mutations: changes engram applies to its own database, not read here",
            lists.mutations.len()
        ));
    }

    // The last version of each session, observation and prompt (chunks repeat them).
    let sessions = latest_of(lists.sessions, |s| s.id.clone());
    let mut by_session: HashMap<String, (SessionId, Project)> = HashMap::new();
    let mut summaries = Vec::new();
    for s in &sessions {
        let Some(started) = time(&s.started_at) else {
            return Err(refuse(
                path,
                format!(
                    "session {}: started_at {:?} is not a time",
                    s.id, s.started_at
                ),
            ));
        };
        // The directory, when it is on this machine, says the project exactly.
        let project = if !s.directory.is_empty() && Path::new(&s.directory).is_dir() {
            crate::project::detect(Path::new(&s.directory))
        } else {
            projects.of(&s.project)?
        };
        let id = SessionId::from_uuid(stable_id(SOURCE, &["session", &s.id]));
        by_session.insert(s.id.clone(), (id, project.clone()));
        incoming.records.push(WireRecord::Session(Session {
            id,
            meta: meta(machine),
            project: project.clone(),
            agent_session_id: s.id.clone(),
            cwd: s.directory.clone(),
            agent: SOURCE.to_string(),
            source: SOURCE.to_string(),
            started_at: started,
            ended_at: s.ended_at.as_deref().and_then(time),
        }));
        if let Some(text) = s
            .summary
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            summaries.push(Summary {
                id: SummaryId::from_uuid(stable_id(SOURCE, &["summary", &s.id])),
                meta: meta(machine),
                session_id: id,
                project,
                text: text.to_string(),
                key_points: Vec::new(),
                tags: vec![SOURCE.to_string()],
                observation_count: 0,
                created_at: s.ended_at.as_deref().and_then(time).unwrap_or(started),
            });
        }
    }

    for p in latest_of(lists.prompts, prompt_key) {
        let Some((session, project)) = by_session.get(&p.session_id).cloned() else {
            incoming.skipped.push(format!(
                "prompt {}: it names session {}, which the file does not hold",
                p.id, p.session_id
            ));
            continue;
        };
        let Some(at) = time(&p.created_at) else {
            return Err(refuse(
                path,
                format!(
                    "prompt {}: created_at {:?} is not a time",
                    p.id, p.created_at
                ),
            ));
        };
        let key = prompt_key(&p);
        incoming.records.push(WireRecord::Observation(Observation {
            id: ObservationId::from_uuid(stable_id(SOURCE, &["prompt", &key])),
            meta: meta(machine),
            session_id: session,
            project,
            kind: ObservationKind::Prompt,
            tool_name: None,
            title: clip_line(&p.content, TITLE_CHARS),
            input: p.content,
            response: String::new(),
            files: Vec::new(),
            metadata: json!({"imported_from": SOURCE, "engram": {"prompt": p.id}}),
            tags: Vec::new(),
            created_at: at,
        }));
    }

    // Observations: the latest of each (a topic is rewritten in place).
    for o in latest_of(lists.observations, identity) {
        if o.deleted_at.is_some() {
            incoming.skipped.push(format!(
                "observation {} ({}): deleted in engram",
                o.id, o.title
            ));
            continue;
        }
        let Some(at) = time(&o.created_at) else {
            return Err(refuse(
                path,
                format!(
                    "observation {}: created_at {:?} is not a time",
                    o.id, o.created_at
                ),
            ));
        };
        let session = by_session.get(&o.session_id).cloned();
        let project = match (&o.project, &session) {
            (Some(name), _) if !name.is_empty() => projects.of(name)?,
            (_, Some((_, p))) => p.clone(),
            _ => {
                incoming.skipped.push(format!(
                    "observation {}: no project, and its session {} is not in the file",
                    o.id, o.session_id
                ));
                continue;
            }
        };
        let record = observation(&o, identity(&o), at, project, session.map(|s| s.0), machine);
        match record {
            Some(r) => incoming.records.push(r),
            None => incoming.skipped.push(format!(
                "observation {}: a note of session {}, which the file does not hold",
                o.id, o.session_id
            )),
        }
    }
    incoming
        .records
        .extend(summaries.into_iter().map(WireRecord::Summary));
    Ok(incoming)
}

/// `items` with one of each `key`, its last version, in the order each key first
/// came (chunks repeat a record, the later copy standing).
fn latest_of<T>(items: Vec<T>, key: impl Fn(&T) -> String) -> Vec<T> {
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        let k = key(&item);
        match at.get(&k) {
            Some(&i) => out[i] = item,
            None => {
                at.insert(k, out.len());
                out.push(item);
            }
        }
    }
    out
}

/// What names a prompt across engram's copies: its sync id, else its row.
fn prompt_key(p: &EngramPrompt) -> String {
    p.sync_id
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("{}/{}", p.session_id, p.id))
}

/// What names an observation across engram's copies: its topic within its
/// project and scope, else its sync id, else its row.
fn identity(o: &EngramObservation) -> String {
    match (&o.topic_key, &o.sync_id) {
        (Some(topic), _) if !topic.is_empty() => format!(
            "topic/{}/{}/{topic}",
            o.project.as_deref().unwrap_or(""),
            o.scope
        ),
        (_, Some(sync)) if !sync.is_empty() => format!("sync/{sync}"),
        _ => format!("row/{}/{}", o.session_id, o.id),
    }
}

fn observation(
    o: &EngramObservation,
    key: String,
    at: UnixMillis,
    project: Project,
    session: Option<SessionId>,
    machine: MachineId,
) -> Option<WireRecord> {
    let mut tags = vec![SOURCE.to_string(), o.kind.clone()];
    if let Some(topic) = o.topic_key.as_deref().filter(|t| !t.is_empty()) {
        tags.push(format!("topic:{topic}"));
    }
    if o.scope == "personal" {
        tags.push("scope:personal".to_string());
    }
    let knowledge = |body: KnowledgeBody| {
        WireRecord::Knowledge(Knowledge {
            id: KnowledgeId::from_uuid(stable_id(SOURCE, &["observation", &key])),
            meta: meta(machine),
            project: project.clone(),
            session_id: session,
            written_by: WrittenBy::Agent(SOURCE.to_string()),
            created_at: at,
            body,
        })
    };
    let title = if o.title.trim().is_empty() {
        clip_line(&o.content, TITLE_CHARS)
    } else {
        o.title.clone()
    };
    Some(match becomes(&o.kind) {
        Becomes::Decision => knowledge(KnowledgeBody::Decision(Decision {
            title: title.clone(),
            chosen: title,
            rationale: o.content.clone(),
            decided_at: at,
            tags,
            ..Decision::default()
        })),
        Becomes::Memory(memory_type) => knowledge(KnowledgeBody::Memory(Memory {
            memory_type,
            content: if o.title.trim().is_empty() {
                o.content.clone()
            } else {
                format!("{}: {}", o.title, o.content)
            },
            confidence: Confidence::STATED.as_written_by(&WrittenBy::Agent(SOURCE.to_string())),
            tags,
            ..Memory::default()
        })),
        Becomes::Note => WireRecord::Observation(Observation {
            id: ObservationId::from_uuid(stable_id(SOURCE, &["observation", &key])),
            meta: meta(machine),
            session_id: session?,
            project,
            kind: ObservationKind::Note,
            tool_name: o.tool_name.clone().filter(|t| !t.is_empty()),
            title: clip_line(&format!("{}: {title}", o.kind), TITLE_CHARS),
            input: o.content.clone(),
            response: String::new(),
            files: Vec::new(),
            metadata: json!({"imported_from": SOURCE, "engram": {"observation": o.id, "type": o.kind}}),
            tags,
            created_at: at,
        }),
    })
}
