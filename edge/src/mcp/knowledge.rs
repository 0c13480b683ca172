//! The knowledge tools of the MCP server: record decisions and memories, supersede
//! and link them, run iterations, and ask why. Each parses its arguments into an
//! operation's request (`crate::ops::knowledge`) and answers with cited lines.
//! `memory_decisions` and `memory_get_iteration` take the central service's
//! arguments (`solaria_shared::mcp`) and answer in its layout.

use super::Memory;
use crate::ops::knowledge::{
    self as ops, DecisionRequest, Expiry, ListRequest, MemoryRequest, Replacement, Scope,
    WhyRequest,
};
use crate::ops::{OpError, input};
use crate::present::Reader;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData as McpError, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use solaria_shared::UnixMillis;
use solaria_shared::knowledge::{Band, KnowledgeKind};
use solaria_shared::mcp::{
    DECISIONS_DEFAULT_LIMIT, DECISIONS_MAX_LIMIT, DecisionsParams, IterationParams,
};

/// `memory_log_decision` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DecisionParams {
    /// A short title: what was decided ("Keyset pagination for the orders API").
    pub title: String,
    /// The option chosen.
    pub chosen: String,
    /// The problem the decision answers.
    #[serde(default)]
    pub context: Option<String>,
    /// The options considered and not taken.
    #[serde(default)]
    pub alternatives: Option<Vec<String>>,
    /// Why this option over the others: the reason a later reader needs.
    #[serde(default)]
    pub rationale: Option<String>,
    /// `low`, `medium` (default), `high` or `critical`.
    #[serde(default)]
    pub impact: Option<String>,
    /// The phase of the work (design, implementation, review…).
    #[serde(default)]
    pub phase: Option<String>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// The iteration it belongs to (default: the active one, or the git branch's).
    #[serde(default)]
    pub iteration: Option<String>,
    /// The project (default: the current directory's).
    #[serde(default)]
    pub project: Option<String>,
    /// Files of the repository it speaks of (from the repository's top, or the
    /// current directory): it is flagged when they change. Paths named in the
    /// text are found anyway.
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// Functions, types or other names in the code it speaks of.
    #[serde(default)]
    pub symbols: Option<Vec<String>>,
}

impl DecisionParams {
    fn request(self) -> Result<DecisionRequest, OpError> {
        Ok(DecisionRequest {
            scope: Scope {
                project: input::given(self.project),
            },
            title: self.title,
            context: self.context.unwrap_or_default(),
            chosen: self.chosen,
            alternatives: self.alternatives.unwrap_or_default(),
            rationale: self.rationale.unwrap_or_default(),
            impact: input::parsed("impact", self.impact)?,
            phase: self.phase.unwrap_or_default(),
            tags: self.tags.unwrap_or_default(),
            iteration: input::given(self.iteration),
            anchors: crate::ops::anchors::Requested {
                files: self.files.unwrap_or_default(),
                symbols: self.symbols.unwrap_or_default(),
            },
        })
    }
}

/// `memory_remember` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RememberParams {
    /// `fact`, `preference`, `relationship`, `principle`, `commitment`, `moment`, `skill` or `pattern`.
    #[serde(rename = "type")]
    pub memory_type: String,
    /// What to remember, in one or two sentences.
    pub content: String,
    /// 0.0–1.0: ≥ 0.95 the user said it; 0.80–0.94 strongly implied; 0.50–0.79 inferred (kept, marked
    /// for the user to validate); below 0.50 it is kept as an open question, not a memory. Default 1.0.
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// When it stops holding: `2026-12-31` or `never`. Default: by type (a moment 30
    /// days, a commitment 90, a fact 180; preferences, principles, relationships,
    /// skills and patterns never).
    #[serde(default)]
    pub expires: Option<String>,
    /// The project (default: the current directory's).
    #[serde(default)]
    pub project: Option<String>,
    /// Files of the repository it speaks of (from the repository's top, or the
    /// current directory): it is flagged when they change. Paths named in the
    /// text are found anyway.
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// Functions, types or other names in the code it speaks of.
    #[serde(default)]
    pub symbols: Option<Vec<String>>,
}

impl RememberParams {
    fn request(self) -> Result<MemoryRequest, OpError> {
        let confidence = self
            .confidence
            .map(|c| {
                solaria_shared::knowledge::Confidence::new(c)
                    .map_err(|e| OpError::BadInput(format!("`confidence`: {e}")))
            })
            .transpose()?;
        Ok(MemoryRequest {
            scope: Scope {
                project: input::given(self.project),
            },
            memory_type: input::parsed("type", Some(self.memory_type))?.unwrap_or_default(),
            content: self.content,
            confidence,
            tags: self.tags.unwrap_or_default(),
            expiry: match input::given(self.expires) {
                Some(t) if t.trim().eq_ignore_ascii_case("never") => Expiry::Never,
                other => input::when("expires", other, UnixMillis::now())?
                    .map_or(Expiry::ByType, Expiry::At),
            },
            anchors: crate::ops::anchors::Requested {
                files: self.files.unwrap_or_default(),
                symbols: self.symbols.unwrap_or_default(),
            },
        })
    }
}

/// `memory_supersede` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SupersedeParams {
    /// The decision (`[D#…]`) or memory (`[M#…]`) that no longer holds.
    pub id: String,
    /// For a decision: the new version's title, chosen option and rationale (and the
    /// optional fields of memory_log_decision).
    #[serde(default)]
    pub decision: Option<DecisionParams>,
    /// For a memory: the new version.
    #[serde(default)]
    pub memory: Option<RememberParams>,
    /// Instead of a new version: a record already written that replaces it (one
    /// your write was told is close to it).
    #[serde(default)]
    pub by: Option<String>,
}

/// `memory_link` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LinkParams {
    /// The record the link starts from (`[D#…]`, `[M#…]`, `[C#sha]`, `[I#…]`).
    pub from: String,
    /// `implements`, `reverts`, `relates`, `supports`, `contradicts`, `depends_on`, `related` or `supersedes`.
    pub relation: String,
    /// The record it points to.
    pub to: String,
    #[serde(default)]
    pub note: Option<String>,
}

/// `memory_why` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WhyParams {
    /// What the decision was about: a few keywords ("ORM billing tables", "keyset pagination").
    pub query: String,
    #[serde(default)]
    pub project: Option<String>,
    /// Most decisions and memories (default 5).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `memory_start_iteration` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct StartIterationParams {
    /// What the work is.
    pub title: String,
    /// `feature` (default), `fix`, `spike`, `refactor`, `ship` or `audit`.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub project: Option<String>,
}

/// `memory_complete_iteration` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CompleteIterationParams {
    /// The iteration (`[I#…]`); default: the project's active one.
    #[serde(default)]
    pub id: Option<String>,
    /// It was abandoned rather than completed.
    #[serde(default)]
    pub abandoned: Option<bool>,
    /// What came of it.
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub project: Option<String>,
}

/// `memory_log_commit` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CommitParams {
    /// The commit's sha (full, or abbreviated when the repository is on this machine).
    pub sha: String,
    /// Its message, when git cannot tell (the repository is not here); git's own wins.
    #[serde(default)]
    pub message: Option<String>,
    /// The decisions it implements (`D#…`, full or short ids), besides its `Decision:` trailers.
    #[serde(default)]
    pub decision_ids: Option<Vec<String>>,
    /// The iteration it belongs to (default: the active one, or the branch's).
    #[serde(default)]
    pub iteration: Option<String>,
    #[serde(default)]
    pub project: Option<String>,
}

/// The records of one kind (and confidence band) a `DecisionsParams` asks for:
/// standing ones (all with `all`), matching `query` when given.
fn listing(
    app: &crate::app::App,
    p: DecisionsParams,
    what: &'static str,
    kind: KnowledgeKind,
    band: Option<Band>,
) -> Result<crate::present::knowledge::KnowledgeList, OpError> {
    ops::listing(
        app,
        &ListRequest {
            project: input::given(p.project),
            kinds: vec![kind],
            all: p.all.unwrap_or(false),
            band,
            memory_type: None,
            query: input::given(p.query),
            limit: input::bounded(
                "limit",
                p.limit,
                DECISIONS_DEFAULT_LIMIT,
                1..=DECISIONS_MAX_LIMIT,
            )?,
        },
        what,
    )
}

fn written(app: &crate::app::App, w: ops::Written) -> Result<String, OpError> {
    Ok(ops::page(app, w)?.text(Reader::Agent))
}

#[tool_router(router = knowledge_router, vis = "pub(super)")]
impl Memory {
    #[tool(
        description = "Record a decision: a choice between alternatives made for a reason (a library, a data \
model, an API shape, a trade-off), with the options not taken and the rationale, so later sessions on any \
machine can answer \"why is it like this?\". Log it when you or the user choose one option over others; do not \
log routine steps, facts without a choice, or plans not yet decided (use memory_remember for facts and \
preferences). Returns the decision's citation [D#id] (put `Decision: D#<id>` in the commit message that \
implements it to link the commit)."
    )]
    async fn memory_log_decision(
        &self,
        Parameters(p): Parameters<DecisionParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| written(app, ops::log_decision(app, &p.request()?)?))
            .await
    }

    #[tool(
        description = "Remember curated knowledge about the user or the project: a fact, a preference (\"uses \
tabs\"), a principle, a commitment, a relationship, a skill, a pattern or a moment. Give a confidence: what the \
user stated is 1.0; what you infer is lower, and below 0.5 it is kept as an open question for the user instead \
of a memory. Do not store secrets. Returns the memory's citation [M#id]."
    )]
    async fn memory_remember(
        &self,
        Parameters(p): Parameters<RememberParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| written(app, ops::remember(app, &p.request()?)?))
            .await
    }

    #[tool(
        description = "Replace a decision or a memory that no longer holds with a new version: never edit, \
supersede. Give `decision` (for a [D#…]) or `memory` (for a [M#…]) with the new content, or `by`: a record \
already written that replaces it (when your write was told the two are close). The old version stays readable, \
marked superseded and pointing to the new one."
    )]
    async fn memory_supersede(
        &self,
        Parameters(p): Parameters<SupersedeParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let replacement = match (p.decision, p.memory, p.by) {
                (None, None, Some(by)) => {
                    return written(app, ops::supersede_by(app, &p.id, &by)?);
                }
                (Some(d), None, None) => Replacement::Decision(d.request()?),
                (None, Some(m), None) => Replacement::Memory(m.request()?),
                _ => {
                    return Err(OpError::BadInput(
                        "give exactly one of `decision` (for a [D#…]), `memory` (for a [M#…]) \
                         or `by` (a record already written that replaces it)"
                            .into(),
                    ));
                }
            };
            written(app, ops::supersede(app, &p.id, &replacement)?)
        })
        .await
    }

    #[tool(
        description = "Link two knowledge records: a commit `implements` a decision, a decision `depends_on` \
another, a memory `supports` or `contradicts` a decision… Links are listed from both ends (memory_get_observations \
on either)."
    )]
    async fn memory_link(
        &self,
        Parameters(p): Parameters<LinkParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let relation = input::parsed("relation", Some(p.relation))?.unwrap_or_default();
            let w = ops::link(app, &p.from, relation, &p.to, &p.note.unwrap_or_default())?;
            Ok(
                format!("Linked {} {relation} {}\n", p.from.trim(), p.to.trim())
                    + &written(app, w)?,
            )
        })
        .await
    }

    #[tool(
        description = "Record a git commit and the decisions it implements. Commits made through the Bash tool \
are captured automatically (with their `Decision: D#…` trailers): call this only for a commit made elsewhere, or \
to link an existing commit to decisions. Recording the same sha twice changes nothing new."
    )]
    async fn memory_log_commit(
        &self,
        Parameters(p): Parameters<CommitParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let request = crate::ops::commits::CommitRequest {
                scope: Scope {
                    project: input::given(p.project),
                },
                sha: p.sha,
                message: input::given(p.message),
                decisions: p.decision_ids.unwrap_or_default(),
                iteration: input::given(p.iteration),
                branch: None,
            };
            Ok(crate::ops::commits::log_commit(app, &request)?.text())
        })
        .await
    }

    #[tool(
        description = "The decisions recorded on this machine and pulled from the others, each in full: [D#id], \
time, machine, project, status, title, context, the option chosen, the alternatives set aside, rationale and \
supersession. Those that stand, newest first, unless `all` is true; `project` keeps one project; `query` keeps \
those matching some words, best match first. For the commits and records linked to one, pass its [D#id] to \
memory_get_observations; memory_why searches decisions and memories by topic."
    )]
    async fn memory_decisions(
        &self,
        Parameters(p): Parameters<DecisionsParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let list = listing(app, p, "decisions", KnowledgeKind::Decision, None)?;
            Ok(list.full_text(Reader::Agent))
        })
        .await
    }

    #[tool(
        description = "Why is something the way it is? Searches decisions and memories first and answers with \
each in full (context, chosen, alternatives, rationale, status) and the commits and records linked to it, then \
the past events that mention the words. Says plainly when the memory holds nothing."
    )]
    async fn memory_why(
        &self,
        Parameters(p): Parameters<WhyParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let (answer, machines) = ops::why(
                app,
                &WhyRequest {
                    query: p.query,
                    project: input::given(p.project),
                    limit: p.limit.unwrap_or(0),
                },
            )?;
            Ok(answer.text(Reader::Agent, &machines))
        })
        .await
    }

    #[tool(
        description = "Open questions: what was too unsure to remember (confidence below 0.5), to ask the user \
about when relevant; and memories inferred but not confirmed when `unconfirmed` is true."
    )]
    async fn memory_questions(
        &self,
        Parameters(p): Parameters<DecisionsParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let list = listing(
                app,
                p,
                "open questions",
                KnowledgeKind::Memory,
                Some(Band::OpenQuestion),
            )?;
            Ok(list.text(Reader::Agent))
        })
        .await
    }

    #[tool(
        description = "An iteration (a unit of work: feature, fix, spike, refactor, ship, audit) with its \
decisions, commits and events in order. Without `id`: the project's active iteration, else its latest."
    )]
    async fn memory_get_iteration(
        &self,
        Parameters(p): Parameters<IterationParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let page = ops::get_iteration(
                app,
                &Scope {
                    project: input::given(p.project),
                },
                p.id.as_deref(),
            )?;
            Ok(page.text(Reader::Agent))
        })
        .await
    }

    #[tool(
        description = "Start an iteration: a unit of work the next decisions and commits belong to. Start one \
when the user begins a distinct feature, fix or spike; complete it with memory_complete_iteration. (Without one, \
work on a git branch other than main belongs to the branch's iteration.)"
    )]
    async fn memory_start_iteration(
        &self,
        Parameters(p): Parameters<StartIterationParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let kind = input::parsed("kind", p.kind)?.unwrap_or_default();
            let w = ops::start_iteration(
                app,
                &Scope {
                    project: input::given(p.project),
                },
                kind,
                &p.title,
                &p.description.unwrap_or_default(),
            )?;
            written(app, w)
        })
        .await
    }

    #[tool(
        description = "Complete (or, with `abandoned`, abandon) the project's active iteration or the one named, \
with a note on what came of it."
    )]
    async fn memory_complete_iteration(
        &self,
        Parameters(p): Parameters<CompleteIterationParams>,
    ) -> Result<CallToolResult, McpError> {
        self.blocking(move |app| {
            let w = ops::complete_iteration(
                app,
                &Scope {
                    project: input::given(p.project),
                },
                p.id.as_deref(),
                p.abandoned.unwrap_or(false),
                &p.note.unwrap_or_default(),
            )?;
            written(app, w)
        })
        .await
    }
}
