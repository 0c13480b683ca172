//! `solaria import claude-mem [DB]`: claude-mem's database read into this
//! machine's records. Its sessions become sessions; its user prompts, prompt
//! observations; its observations (a type, a title, a narrative, facts,
//! concepts, files), notes titled by their type; its summaries, one summary per
//! session. Every record keeps claude-mem's times and says where it came from
//! (a session's source `claude-mem`, an observation's `metadata.imported_from`),
//! and takes an id derived from its row, so an import run again finds it.

use super::{Incoming, Owner, ProjectNames, stable_id};
use crate::app::App;
use crate::ops::{OpError, OpResult};
use crate::store::claude_mem::{self as db, ClaudeMemDb};
use serde_json::{Value, json};
use solaria_shared::text::clip_line;
use solaria_shared::wire::WireRecord;
use solaria_shared::{
    Hlc, MachineId, Observation, ObservationId, ObservationKind, Project, RecordMeta, Session,
    SessionId, Summary, SummaryId, UnixMillis,
};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What an import from claude-mem is called in reports and records.
const SOURCE: &str = "claude-mem";

/// Characters of a title, as capture keeps them.
const TITLE_CHARS: usize = 120;

/// Where claude-mem keeps its database: `$CLAUDE_MEM_DATA_DIR/claude-mem.db`,
/// else `~/.claude-mem/claude-mem.db`.
pub fn default_path() -> Option<PathBuf> {
    let dir = match std::env::var_os("CLAUDE_MEM_DATA_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".claude-mem"),
    };
    Some(dir.join("claude-mem.db"))
}

/// The agent a claude-mem session's platform names, as SOLARIA names it.
fn agent(platform: &str) -> String {
    match platform {
        "claude" | "" => "claude-code".to_string(),
        other => other.to_string(),
    }
}

/// A JSON array of strings as claude-mem writes it; a value that is not one is
/// taken as a single item, as claude-mem itself reads its older rows.
fn list(value: &Option<String>) -> Vec<String> {
    let Some(text) = value.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
        return Vec::new();
    };
    match serde_json::from_str::<Vec<Value>>(text) {
        Ok(items) => items
            .into_iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s),
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .filter(|s| !s.trim().is_empty())
            .collect(),
        Err(_) => vec![text.to_string()],
    }
}

/// The envelope of a record read here: this machine's; its stamp is drawn when
/// it is written (`Writer::import_own`).
fn meta(machine: MachineId) -> RecordMeta {
    RecordMeta {
        machine_id: machine,
        updated: Hlc::default(),
        deleted: false,
    }
}

fn given(text: &Option<String>) -> Option<&str> {
    text.as_deref().map(str::trim).filter(|t| !t.is_empty())
}

/// Reads `path` whole; nothing is written.
pub fn read(app: &App, path: &Path) -> OpResult<Incoming> {
    let store = app.store()?;
    let current = app.current_project();
    let refuse = |e: db::ClaudeMemError| {
        OpError::BadInput(format!("{}: {e}; nothing was imported", path.display()))
    };
    let source = ClaudeMemDb::open(path).map_err(refuse)?;
    let sessions = source.sessions().map_err(refuse)?;
    let prompts = source.prompts().map_err(refuse)?;
    let observations = source.observations().map_err(refuse)?;
    let summaries = source.summaries().map_err(refuse)?;

    let machine = store.machine_id();
    let mut projects = ProjectNames::new(&store, current);
    let mut incoming = Incoming {
        source: SOURCE.to_string(),
        path: path.display().to_string(),
        owner: Owner::ThisMachine,
        ..Incoming::default()
    };
    // claude-mem's session rows by their ids, and by the ids its rows name.
    let mut by_row: HashMap<i64, SessionId> = HashMap::new();
    let mut by_content: HashMap<String, SessionId> = HashMap::new();
    let mut by_memory: HashMap<String, (SessionId, Project)> = HashMap::new();
    let mut events: HashMap<SessionId, u32> = HashMap::new();
    let mut project_of: HashMap<SessionId, Project> = HashMap::new();
    for s in &sessions {
        let id = SessionId::from_uuid(stable_id(
            SOURCE,
            &["session", &s.platform_source, &s.content_session_id],
        ));
        let project = projects.of(&s.project)?;
        by_row.insert(s.row, id);
        project_of.insert(id, project.clone());
        by_content.entry(s.content_session_id.clone()).or_insert(id);
        if let Some(memory) = &s.memory_session_id {
            by_memory.insert(memory.clone(), (id, project.clone()));
        }
        incoming.records.push(WireRecord::Session(Session {
            id,
            meta: meta(machine),
            project,
            agent_session_id: s.content_session_id.clone(),
            cwd: String::new(),
            agent: agent(&s.platform_source),
            source: SOURCE.to_string(),
            started_at: UnixMillis(s.started_at_ms),
            ended_at: s.completed_at_ms.map(UnixMillis),
        }));
    }

    for p in &prompts {
        let session = p
            .session_row
            .and_then(|r| by_row.get(&r))
            .or_else(|| by_content.get(&p.content_session_id));
        let Some(&session) = session else {
            incoming.skipped.push(format!(
                "user_prompts row {}: it names no session of the database",
                p.row
            ));
            continue;
        };
        let Some(project) = project_of.get(&session).cloned() else {
            continue;
        };
        *events.entry(session).or_default() += 1;
        incoming.records.push(WireRecord::Observation(Observation {
            id: ObservationId::from_uuid(stable_id(
                SOURCE,
                &["prompt", &session.to_string(), &p.prompt_number.to_string()],
            )),
            meta: meta(machine),
            session_id: session,
            project,
            kind: ObservationKind::Prompt,
            tool_name: None,
            title: clip_line(&p.text, TITLE_CHARS),
            input: p.text.clone(),
            response: String::new(),
            files: Vec::new(),
            metadata: json!({"imported_from": SOURCE, "claude_mem": {"user_prompt": p.row}}),
            tags: Vec::new(),
            created_at: UnixMillis(p.created_at_ms),
        }));
    }

    for o in &observations {
        let Some((session, _)) = by_memory.get(&o.memory_session_id).cloned() else {
            incoming.skipped.push(format!(
                "observations row {}: it names no session of the database",
                o.row
            ));
            continue;
        };
        *events.entry(session).or_default() += 1;
        incoming.records.push(WireRecord::Observation(observation(
            o,
            session,
            machine,
            &mut projects,
        )?));
    }

    // SOLARIA keeps one summary a session: claude-mem's several, in order, as one.
    let mut by_session: Vec<(SessionId, Vec<&db::Summary>)> = Vec::new();
    let mut at: HashMap<SessionId, usize> = HashMap::new();
    for s in &summaries {
        let Some((session, _)) = by_memory.get(&s.memory_session_id) else {
            incoming.skipped.push(format!(
                "session_summaries row {}: it names no session of the database",
                s.row
            ));
            continue;
        };
        match at.get(session) {
            Some(&i) => by_session[i].1.push(s),
            None => {
                at.insert(*session, by_session.len());
                by_session.push((*session, vec![s]));
            }
        }
    }
    for (session, parts) in by_session {
        let count = events.get(&session).copied().unwrap_or(0);
        incoming.records.push(WireRecord::Summary(summary(
            session,
            machine,
            &parts,
            count,
            &mut projects,
        )?));
    }
    Ok(incoming)
}

fn observation(
    o: &db::Observation,
    session: SessionId,
    machine: MachineId,
    projects: &mut ProjectNames<'_>,
) -> OpResult<Observation> {
    let facts = list(&o.facts);
    let concepts = list(&o.concepts);
    let read = list(&o.files_read);
    let modified = list(&o.files_modified);
    let title = given(&o.title)
        .or(given(&o.subtitle))
        .or(given(&o.narrative))
        .or(given(&o.text))
        .unwrap_or("(untitled)");
    let mut body: Vec<String> = Vec::new();
    body.extend(given(&o.subtitle).map(str::to_string));
    body.extend(given(&o.narrative).map(str::to_string));
    body.extend(given(&o.text).map(str::to_string));
    if !facts.is_empty() {
        let lines: Vec<String> = facts.iter().map(|f| format!("- {f}")).collect();
        body.push(format!("Facts:\n{}", lines.join("\n")));
    }
    let mut files: BTreeSet<String> = read.iter().cloned().collect();
    files.extend(modified.iter().cloned());
    let mut tags = vec![o.kind.clone()];
    tags.extend(concepts.into_iter().filter(|c| *c != o.kind));
    Ok(Observation {
        id: ObservationId::from_uuid(stable_id(
            SOURCE,
            &["observation", &o.memory_session_id, &o.row.to_string()],
        )),
        meta: meta(machine),
        session_id: session,
        project: projects.of(&o.project)?,
        kind: ObservationKind::Note,
        tool_name: None,
        title: clip_line(&format!("{}: {title}", o.kind), TITLE_CHARS),
        input: body.join("\n\n"),
        response: String::new(),
        files: files.into_iter().collect(),
        metadata: json!({
            "imported_from": SOURCE,
            "claude_mem": {
                "observation": o.row,
                "type": o.kind,
                "files_read": read,
                "files_modified": modified,
                "prompt_number": o.prompt_number,
            }
        }),
        tags,
        created_at: UnixMillis(o.created_at_ms),
    })
}

fn summary(
    session: SessionId,
    machine: MachineId,
    parts: &[&db::Summary],
    events: u32,
    projects: &mut ProjectNames<'_>,
) -> OpResult<Summary> {
    let last = parts
        .last()
        .copied()
        .ok_or_else(|| OpError::BadInput("a session's summaries are empty".to_string()))?;
    let mut key_points = Vec::new();
    for p in parts {
        for (label, text) in [
            ("Investigated", &p.investigated),
            ("Learned", &p.learned),
            ("Completed", &p.completed),
            ("Next steps", &p.next_steps),
            ("Notes", &p.notes),
        ] {
            if let Some(text) = given(text) {
                key_points.push(format!("{label}: {text}"));
            }
        }
    }
    let requests: Vec<&str> = parts.iter().filter_map(|p| given(&p.request)).collect();
    let text = match requests.as_slice() {
        [] => key_points.first().cloned().unwrap_or_default(),
        many => format!("Request: {}", many.join(" / ")),
    };
    Ok(Summary {
        id: SummaryId::from_uuid(stable_id(SOURCE, &["summary", &session.to_string()])),
        meta: meta(machine),
        session_id: session,
        project: projects.of(&last.project)?,
        text,
        key_points,
        tags: vec![SOURCE.to_string()],
        observation_count: events,
        created_at: UnixMillis(last.created_at_ms),
    })
}
