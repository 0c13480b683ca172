//! Record builders for tests: sessions, observations and summaries stamped by a
//! given machine at a given HLC time.

use solaria_shared::knowledge::Decision;
use solaria_shared::wire::WireRecord;
use solaria_shared::{
    Hlc, KnowledgeBody, MachineId, Observation, ObservationId, ObservationKind, Project,
    RecordMeta, Session, SessionId, Summary, SummaryId, UnixMillis,
};

/// A stamp `ms` milliseconds after the current wall clock (negative: before).
pub fn stamp(offset_ms: i64) -> Hlc {
    Hlc::new((UnixMillis::now().0 + offset_ms).max(0) as u64, 0)
}

pub fn project() -> Project {
    Project {
        key: "github.com/acme/api".into(),
        name: "api".into(),
    }
}

pub fn session(machine: MachineId, updated: Hlc) -> Session {
    Session {
        id: SessionId::new(),
        meta: RecordMeta {
            machine_id: machine,
            updated,
            deleted: false,
        },
        project: project(),
        agent_session_id: format!("cc-{}", uuid::Uuid::new_v4()),
        cwd: "/work/api".into(),
        agent: "claude-code".into(),
        source: "startup".into(),
        started_at: UnixMillis::now(),
        ended_at: None,
    }
}

pub fn observation(
    machine: MachineId,
    session: SessionId,
    updated: Hlc,
    text: &str,
) -> Observation {
    Observation {
        id: ObservationId::new(),
        meta: RecordMeta {
            machine_id: machine,
            updated,
            deleted: false,
        },
        session_id: session,
        project: project(),
        kind: ObservationKind::ToolUse,
        tool_name: Some("Bash".into()),
        title: format!("Bash: {text}"),
        input: serde_json::json!({"command": text}).to_string(),
        response: serde_json::json!({"stdout": format!("output of {text}")}).to_string(),
        files: vec!["/work/api/src/auth.rs".into()],
        metadata: serde_json::json!({"tool_use_id": "toolu_1"}),
        tags: vec!["rust".into()],
        created_at: UnixMillis::now(),
    }
}

pub fn summary(machine: MachineId, session: SessionId, updated: Hlc, text: &str) -> Summary {
    Summary {
        id: SummaryId::new(),
        meta: RecordMeta {
            machine_id: machine,
            updated,
            deleted: false,
        },
        session_id: session,
        project: project(),
        text: text.into(),
        key_points: vec![format!("Request: {text}")],
        tags: vec!["rust".into()],
        observation_count: 1,
        created_at: UnixMillis::now(),
    }
}

/// A decision's body: `chosen` for `rationale`, over two alternatives.
pub fn decision(title: &str, chosen: &str, rationale: &str) -> KnowledgeBody {
    KnowledgeBody::Decision(Decision {
        title: title.into(),
        context: format!("What to do about {title}"),
        chosen: chosen.into(),
        alternatives: vec!["do nothing".into(), "ask again later".into()],
        rationale: rationale.into(),
        ..Decision::default()
    })
}

/// Wraps any record for the wire.
pub fn wire(r: impl Into<WireRecord>) -> WireRecord {
    r.into()
}
