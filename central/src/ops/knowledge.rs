//! Knowledge read back: the account's decisions (`GET /memory/decisions`, the
//! `memory_decisions` tool) and an iteration with what was recorded in it
//! (`GET /memory/iteration`, `memory_get_iteration`). A project is named by its key
//! or its name; another account's ids and projects read like unknown ones.

use super::{Caller, OpError, given};
use crate::storage::{DecisionQuery, IterationQuery, Storage};
use serde::{Deserialize, Serialize};
use solaria_shared::wire::{Authored, MachineName, authored};
use solaria_shared::{Citation, Knowledge, KnowledgeBody, MachineId, Session, UnixMillis};
use uuid::Uuid;

use solaria_shared::mcp::{DECISIONS_DEFAULT_LIMIT, DECISIONS_MAX_LIMIT};
/// The longest query text, in characters.
const MAX_QUERY_CHARS: usize = 500;

/// A decision list as asked: `GET /memory/decisions?project=&all=&q=&limit=`.
#[derive(Debug, Default, Deserialize)]
pub struct DecisionsParams {
    /// Only this project (key or name).
    pub project: Option<String>,
    /// Superseded and retracted decisions too (default: only active ones).
    #[serde(default)]
    pub all: bool,
    /// Only decisions matching these words (English or Spanish), best first.
    pub q: Option<String>,
    /// Clamped to `1..=DECISIONS_MAX_LIMIT`.
    pub limit: Option<usize>,
}

/// The decisions of a list, newest (or best matching) first, and the names of the
/// machines that wrote them; each decision is answered beside its `author`.
#[derive(Debug, Clone)]
pub struct DecisionsAnswer {
    pub decisions: Vec<Knowledge>,
    pub machines: Vec<MachineName>,
}

impl Serialize for DecisionsAnswer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            decisions: Vec<Authored<'a, Knowledge>>,
            machines: &'a [MachineName],
        }
        Json {
            decisions: authored(&self.decisions, &self.machines),
            machines: &self.machines,
        }
        .serialize(s)
    }
}

/// An iteration as asked: `GET /memory/iteration?id=&project=`: by id (or
/// `[I#…]` citation), else the active (or latest) iteration of the project.
#[derive(Debug, Default, Deserialize)]
pub struct IterationParams {
    pub id: Option<String>,
    pub project: Option<String>,
}

/// An iteration with the decisions, commits and events recorded in it (oldest
/// first), the sessions of its project meanwhile, and the names of the machines
/// that wrote them; each record is answered beside its `author`.
#[derive(Debug, Clone)]
pub struct IterationAnswer {
    pub iteration: Knowledge,
    pub decisions: Vec<Knowledge>,
    pub commits: Vec<Knowledge>,
    pub events: Vec<Knowledge>,
    pub machines: Vec<MachineName>,
    /// The project's sessions started while it ran (from its start to its end, or
    /// to now): its page lists them; the REST answer keeps its first shape.
    pub sessions: Vec<Session>,
}

impl Serialize for IterationAnswer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            iteration: Authored<'a, Knowledge>,
            decisions: Vec<Authored<'a, Knowledge>>,
            commits: Vec<Authored<'a, Knowledge>>,
            events: Vec<Authored<'a, Knowledge>>,
            machines: &'a [MachineName],
        }
        let m = &self.machines;
        Json {
            iteration: Authored::by(&self.iteration, m),
            decisions: authored(&self.decisions, m),
            commits: authored(&self.commits, m),
            events: authored(&self.events, m),
            machines: m,
        }
        .serialize(s)
    }
}

impl IterationAnswer {
    /// Its decisions, commits and events in one list, oldest first, as its page
    /// shows them.
    pub fn members(&self) -> Vec<Knowledge> {
        let mut all: Vec<Knowledge> = self
            .decisions
            .iter()
            .chain(&self.commits)
            .chain(&self.events)
            .cloned()
            .collect();
        all.sort_by_key(|k| (k.created_at, *k.id.as_uuid()));
        all
    }
}

/// The caller's live decisions.
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn decisions(
    storage: &Storage,
    caller: Caller,
    p: DecisionsParams,
) -> Result<DecisionsAnswer, OpError> {
    let project_keys = match given(p.project) {
        None => None,
        Some(name) => Some(project_keys(storage, caller, &name).await?),
    };
    let text = given(p.q).map(|q| {
        q.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(MAX_QUERY_CHARS)
            .collect::<String>()
    });
    let query = DecisionQuery {
        project_keys,
        all: p.all,
        text,
        limit: p
            .limit
            .unwrap_or(DECISIONS_DEFAULT_LIMIT)
            .clamp(1, DECISIONS_MAX_LIMIT),
    };
    let decisions = storage.decisions(caller.viewer(), &query).await?;
    let machines = names(storage, caller, decisions.iter()).await?;
    Ok(DecisionsAnswer {
        decisions,
        machines,
    })
}

/// An iteration of the caller's account with its decisions, commits and events.
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn iteration(
    storage: &Storage,
    caller: Caller,
    p: IterationParams,
) -> Result<IterationAnswer, OpError> {
    let which = match (given(p.id), given(p.project)) {
        (Some(id), _) => IterationQuery::Id(parse_knowledge_id(&id)?),
        (None, Some(project)) => {
            IterationQuery::Project(project_keys(storage, caller, &project).await?)
        }
        (None, None) => {
            return Err(OpError::Invalid(
                "name the iteration by `id`, or a `project` for its active (or latest) iteration"
                    .into(),
            ));
        }
    };
    let found = storage
        .iteration(caller.viewer(), &which)
        .await?
        .ok_or_else(|| {
            OpError::NotFound(match &which {
                IterationQuery::Id(id) => format!("iteration {id} not found"),
                IterationQuery::Project(_) => "this project has no iteration".into(),
            })
        })?;
    let all = std::iter::once(&found.iteration)
        .chain(&found.decisions)
        .chain(&found.commits)
        .chain(&found.events);
    let machines = names(storage, caller, all).await?;
    let sessions = match &found.iteration.body {
        KnowledgeBody::Iteration(i) => {
            storage
                .sessions_between(
                    caller.viewer(),
                    &found.iteration.project.key,
                    i.started_at,
                    i.completed_at.unwrap_or_else(UnixMillis::now),
                )
                .await?
        }
        _ => Vec::new(),
    };
    Ok(IterationAnswer {
        sessions,
        iteration: found.iteration,
        decisions: found.decisions,
        commits: found.commits,
        events: found.events,
        machines,
    })
}

/// The keys of the caller's project named `name` (key or name); not found when it
/// names none.
async fn project_keys(
    storage: &Storage,
    caller: Caller,
    name: &str,
) -> Result<Vec<String>, OpError> {
    let keys: Vec<String> = storage
        .resolve_project(caller.viewer(), name)
        .await?
        .into_iter()
        .map(|p| p.key)
        .collect();
    if keys.is_empty() {
        let shown: String = name.chars().take(80).collect();
        return Err(OpError::NotFound(format!(
            "no project {shown:?} in this account (give its key, e.g. github.com/acme/api, or its name)"
        )));
    }
    Ok(keys)
}

/// The id in an id or a citation (`[I#…]`, `D#…`).
pub fn parse_knowledge_id(raw: &str) -> Result<Uuid, OpError> {
    let cited = Citation::parse_lenient(raw).ok().flatten();
    let t = cited.as_ref().map_or(raw, |c| c.id.as_str());
    Uuid::parse_str(t.trim()).map_err(|_| {
        let shown: String = raw.chars().take(80).collect();
        OpError::Invalid(format!(
            "`{shown}` is not a record id: expected a UUID or a citation such as [I#0192f3e4-5b6c-7d8e-9f00-112233445566]"
        ))
    })
}

/// The machines that wrote `records`, sorted by id, with whose they are.
async fn names(
    storage: &Storage,
    caller: Caller,
    records: impl Iterator<Item = &Knowledge>,
) -> Result<Vec<MachineName>, OpError> {
    let ids: Vec<MachineId> = records.map(|k| k.meta.machine_id).collect();
    Ok(storage.machine_names(caller.viewer(), &ids).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_bare_or_cited() {
        let id = Uuid::now_v7();
        for raw in [id.to_string(), format!("[I#{id}]"), format!("D#{id}")] {
            assert_eq!(parse_knowledge_id(&raw).ok(), Some(id), "{raw}");
        }
        assert!(parse_knowledge_id("[I#nope]").is_err());
    }
}
