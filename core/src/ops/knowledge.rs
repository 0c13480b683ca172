//! Knowledge as people and agents record and read it: log a decision, remember a
//! fact or a preference (an open question when unsure), supersede either (the old
//! version stays readable), link two records, start and complete iterations, and
//! list what stands. The rules of what a record means live in
//! `solaria_shared::knowledge`; here they are applied to this machine's store.

use super::input::{clip, given};
use super::reference::find_one;
use super::{OpError, OpResult};
use crate::app::App;
use crate::present::MachineLabels;
use crate::present::knowledge::{
    IterationPage, KnowledgeList, RelatedPage, WhyAnswer, WrittenPage,
};
use crate::store::knowledge::{self as kstore, KnowledgeFilter};
use crate::store::search::{self, RecordType, SearchQuery};
use crate::store::{Store, StoreError, Writer};
use solaria_shared::knowledge::{
    Band, Confidence, Decision, Event, EventKind, Impact, Iteration, IterationKind,
    IterationStatus, Link, LinkKind, Memory, MemoryType, Standing, is_trunk,
    iteration_kind_of_branch,
};
use solaria_shared::{
    Knowledge, KnowledgeBody, KnowledgeId, KnowledgeKind, MachineId, Project, UnixMillis,
};
use std::path::Path;

/// The longest text a knowledge field keeps (characters); longer is cut.
pub const MAX_FIELD_CHARS: usize = 8_000;
/// The most items a list field (alternatives, tags) keeps.
pub const MAX_LIST_ITEMS: usize = 32;

/// Where a record is written: its project (named, or the current directory's)
/// and the git branch there (to infer an iteration).
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// A project as `--project` names it; the current directory's when `None`.
    pub project: Option<String>,
}

/// `solaria decide`, `memory_log_decision`.
#[derive(Debug, Clone, Default)]
pub struct DecisionRequest {
    pub scope: Scope,
    pub title: String,
    pub context: String,
    pub chosen: String,
    pub alternatives: Vec<String>,
    pub rationale: String,
    pub impact: Option<Impact>,
    pub phase: String,
    pub tags: Vec<String>,
    /// The iteration it belongs to (a reference); the active one (or the
    /// branch's) when `None`.
    pub iteration: Option<String>,
    /// The files and symbols it speaks of, beyond those its text names.
    pub anchors: super::anchors::Requested,
}

/// `solaria remember`, `memory_remember`.
#[derive(Debug, Clone, Default)]
pub struct MemoryRequest {
    pub scope: Scope,
    pub memory_type: MemoryType,
    pub content: String,
    pub confidence: Option<Confidence>,
    pub tags: Vec<String>,
    pub expiry: Expiry,
    /// The files and symbols it speaks of, beyond those its text names.
    pub anchors: super::anchors::Requested,
}

/// When a memory stops holding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Expiry {
    /// Its type's lifetime (`MemoryType::default_lifetime_days`).
    #[default]
    ByType,
    Never,
    At(UnixMillis),
}

/// What superseding replaces an old decision or memory with.
#[derive(Debug, Clone)]
pub enum Replacement {
    Decision(DecisionRequest),
    Memory(MemoryRequest),
}

/// A record written, with what it changed.
#[derive(Debug, Clone)]
pub struct Written {
    pub record: Knowledge,
    /// Records updated alongside (the superseded version; an inferred iteration).
    pub touched: Vec<Knowledge>,
    /// Standing records close to a new one in subject, proposed as pairs for a
    /// person to settle (`super::close_pairs`).
    pub close: Vec<crate::store::close_pairs::Close>,
}

impl Written {
    fn new(record: Knowledge, touched: Vec<Knowledge>) -> Written {
        Written {
            record,
            touched,
            close: Vec::new(),
        }
    }
}

fn field(name: &str, text: &str) -> OpResult<String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(OpError::BadInput(format!("`{name}` is required")));
    }
    Ok(cut(t))
}

fn cut(text: &str) -> String {
    text.trim().chars().take(MAX_FIELD_CHARS).collect()
}

fn list_field(items: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items.iter().map(|i| cut(i)).filter(|i| !i.is_empty()) {
        if !out.contains(&item) && out.len() < MAX_LIST_ITEMS {
            out.push(item);
        }
    }
    out
}

/// The project a scope names: the memory's project for a name, else the
/// current directory's (which the memory may not know yet).
pub fn project_of(app: &App, store: &Store, scope: &Scope) -> OpResult<Project> {
    match given(scope.project.clone()) {
        Some(name) => super::project::resolve(store, &name)?
            .into_iter()
            .next()
            .ok_or_else(|| OpError::BadInput(format!("no project named {:?}", clip(&name)))),
        None => Ok(app.current_project()),
    }
}

/// A teammate's record (pulled from a shared project) is theirs to change: `act`
/// on it is refused, saying whose it is. The central service would keep their
/// version anyway; this says so before anything is written.
pub(crate) fn own_record(store: &Store, machine: MachineId, cite: &str, act: &str) -> OpResult<()> {
    match crate::store::records::teammate(store.conn(), machine)? {
        None => Ok(()),
        Some(_) => Err(OpError::BadInput(format!(
            "{cite} was written by @{}: only its author changes it, so it cannot be {act} \
             here; record your own and cite it",
            crate::store::records::machine_name(store.conn(), machine)
        ))),
    }
}

/// An agent writes only into the project of its session (the directory its MCP
/// server or its shell runs in): a record it wrote into another project would be
/// handed to sessions it never took part in. A person may write anywhere.
pub(crate) fn writable(app: &App, project: &Project) -> OpResult<()> {
    if !app.agent_writes() {
        return Ok(());
    }
    let own = app.current_project();
    if project.key == own.key {
        return Ok(());
    }
    Err(OpError::BadInput(format!(
        "an agent may write only into the project of its session ({}), not into {}; \
         a person can, at the command line",
        own.key, project.key
    )))
}

/// The git branch checked out in `dir`, if it is a repository (reads `.git/HEAD`
/// directly: no process, so it is cheap enough for any surface).
pub fn branch_at(dir: &Path) -> Option<String> {
    let mut d = Some(dir);
    while let Some(here) = d {
        let git = here.join(".git");
        let head_file = if git.is_dir() {
            git.join("HEAD")
        } else if git.is_file() {
            // A worktree: `.git` names the real git dir.
            let text = std::fs::read_to_string(&git).ok()?;
            let target = text.trim().strip_prefix("gitdir:")?.trim().to_string();
            Path::new(&target).join("HEAD")
        } else {
            d = here.parent();
            continue;
        };
        let head = std::fs::read_to_string(head_file).ok()?;
        return head
            .trim()
            .strip_prefix("ref: refs/heads/")
            .map(str::to_string);
    }
    None
}

/// The iteration a new record of `project` belongs to: the one named; else the
/// project's active iteration; else, on a git branch that is not a trunk, the
/// branch's iteration (started now if there is none yet; every machine derives
/// the same id for it, so they share one). `None` on a trunk with nothing active.
/// Also returns the iteration it started, if it did.
pub(crate) fn iteration_for(
    w: &mut Writer<'_>,
    project: &Project,
    named: Option<KnowledgeId>,
    branch: Option<&str>,
) -> Result<(Option<KnowledgeId>, Option<Knowledge>), StoreError> {
    if named.is_some() {
        return Ok((named, None));
    }
    if let Some(active) = kstore::active_iteration(w.tx(), &project.key)? {
        return Ok((Some(active.id), None));
    }
    let Some(branch) = branch.filter(|b| !is_trunk(b)) else {
        return Ok((None, None));
    };
    let id = KnowledgeId::stable(&project.key, &format!("branch:{branch}"));
    if let Some(existing) = kstore::get_knowledge(w.tx(), id)? {
        // The branch's iteration was completed: the work goes on without one.
        return Ok((
            (!existing.meta.deleted && existing.status() == IterationStatus::Active.as_str())
                .then_some(id),
            None,
        ));
    }
    let now = UnixMillis(w.tick().physical_ms() as i64);
    let iteration = w.record_knowledge(
        id,
        project,
        None,
        KnowledgeBody::Iteration(Iteration {
            title: branch.to_string(),
            iteration_kind: iteration_kind_of_branch(branch),
            description: format!("Inferred from the git branch {branch}"),
            status: IterationStatus::Active,
            started_at: now,
            completed_at: None,
            branch: branch.to_string(),
        }),
    )?;
    record_event(
        w,
        &iteration,
        EventKind::Started,
        "inferred from the git branch",
    )?;
    Ok((Some(id), Some(iteration)))
}

/// The iteration a request names, resolved before writing.
fn named_iteration(store: &Store, reference: Option<&str>) -> OpResult<Option<KnowledgeId>> {
    match reference.filter(|r| !r.trim().is_empty()) {
        Some(r) => Ok(Some(find_one(store, r, Some(KnowledgeKind::Iteration))?.id)),
        None => Ok(None),
    }
}

fn record_event(
    w: &mut Writer<'_>,
    iteration: &Knowledge,
    event: EventKind,
    detail: &str,
) -> Result<Knowledge, StoreError> {
    let at = UnixMillis(w.tick().physical_ms() as i64);
    w.record_knowledge(
        KnowledgeId::new(),
        &iteration.project,
        None,
        KnowledgeBody::Event(Event {
            iteration: Some(iteration.id),
            event,
            detail: cut(detail),
            at,
        }),
    )
}

fn decision_body(r: &DecisionRequest, now: UnixMillis) -> OpResult<Decision> {
    Ok(Decision {
        title: field("title", &r.title)?,
        context: cut(&r.context),
        chosen: field("chosen", &r.chosen)?,
        alternatives: list_field(&r.alternatives),
        rationale: cut(&r.rationale),
        impact: r.impact.unwrap_or_default(),
        phase: cut(&r.phase),
        decided_at: now,
        iteration: None,
        tags: list_field(&r.tags),
        status: Standing::Active,
        supersedes: None,
        superseded_by: None,
        anchors: Default::default(),
    })
}

fn memory_body(r: &MemoryRequest, now: UnixMillis) -> OpResult<Memory> {
    let expires_at = match r.expiry {
        Expiry::ByType => r
            .memory_type
            .default_lifetime_days()
            .map(|days| UnixMillis(now.0 + days * 86_400_000)),
        Expiry::Never => None,
        Expiry::At(at) => Some(at),
    };
    Ok(Memory {
        memory_type: r.memory_type,
        content: field("content", &r.content)?,
        confidence: r.confidence.unwrap_or_default(),
        tags: list_field(&r.tags),
        expires_at,
        status: Standing::Active,
        supersedes: None,
        superseded_by: None,
        anchors: Default::default(),
    })
}

/// A new version speaks of the code the old one did unless it names its own.
fn carry_anchors(
    old: &solaria_shared::anchors::Anchors,
    asked: &super::anchors::Requested,
    new: &mut solaria_shared::anchors::Anchors,
) {
    if asked.files.is_empty() {
        for f in &old.files {
            new.add_file(f.clone());
        }
    }
    if asked.symbols.is_empty() {
        for s in &old.symbols {
            new.add_symbol(s.clone());
        }
    }
}

/// `d` anchored to the code of `project` it speaks of (`super::anchors`).
fn anchor_decision(project: &Project, r: &DecisionRequest, d: &mut Decision) -> OpResult<()> {
    let texts = [d.title.as_str(), &d.context, &d.chosen, &d.rationale];
    d.anchors = super::anchors::for_new_record(project, &r.anchors, &texts)?;
    Ok(())
}

/// `m` anchored to the code of `project` it speaks of (`super::anchors`).
fn anchor_memory(project: &Project, r: &MemoryRequest, m: &mut Memory) -> OpResult<()> {
    m.anchors = super::anchors::for_new_record(project, &r.anchors, &[m.content.as_str()])?;
    Ok(())
}

/// The files `session` edited just before now, for a record that names none
/// (`super::anchors::add_session_edits`).
fn borrow_session_edits(
    store: &Store,
    project: &Project,
    session: Option<solaria_shared::SessionId>,
    anchors: &mut solaria_shared::anchors::Anchors,
) -> OpResult<()> {
    let Some(session) = session.filter(|_| anchors.files.is_empty()) else {
        return Ok(());
    };
    let since = UnixMillis(UnixMillis::now().0 - super::anchors::SESSION_EDITS_WINDOW_MS);
    let edited = crate::store::records::files_edited(store.conn(), session, since, 50)?;
    super::anchors::add_session_edits(project, anchors, &edited);
    Ok(())
}

/// Records a decision in its project (and iteration).
pub fn log_decision(app: &App, request: &DecisionRequest) -> OpResult<Written> {
    let mut store = app.store()?;
    let project = project_of(app, &store, &request.scope)?;
    writable(app, &project)?;
    let now = UnixMillis::now();
    let mut body = decision_body(request, now)?;
    anchor_decision(&project, request, &mut body)?;
    let branch = branch_for(&request.scope);
    let named = named_iteration(&store, request.iteration.as_deref())?;
    let session = kstore::open_session(store.conn(), &project.key, store.machine_id())?;
    borrow_session_edits(&store, &project, session, &mut body.anchors)?;
    let mut written = store.write(|w| {
        let (iteration, inferred) = iteration_for(w, &project, named, branch.as_deref())?;
        body.iteration = iteration;
        let record = w.record_knowledge(
            KnowledgeId::new(),
            &project,
            session,
            KnowledgeBody::Decision(body),
        )?;
        Ok(Written::new(record, inferred.into_iter().collect()))
    })?;
    drop(store);
    written.close = super::close_pairs::propose(app, &written.record)?;
    Ok(written)
}

/// Records a curated memory; below 0.5 confidence it is an open question.
pub fn remember(app: &App, request: &MemoryRequest) -> OpResult<Written> {
    let mut store = app.store()?;
    let project = project_of(app, &store, &request.scope)?;
    writable(app, &project)?;
    let mut body = memory_body(request, UnixMillis::now())?;
    anchor_memory(&project, request, &mut body)?;
    body.confidence = body.confidence.as_written_by(&app.writer);
    let session = kstore::open_session(store.conn(), &project.key, store.machine_id())?;
    borrow_session_edits(&store, &project, session, &mut body.anchors)?;
    let record = store.write(|w| {
        w.record_knowledge(
            KnowledgeId::new(),
            &project,
            session,
            KnowledgeBody::Memory(body),
        )
    })?;
    drop(store);
    let mut written = Written::new(record, Vec::new());
    written.close = super::close_pairs::propose(app, &written.record)?;
    Ok(written)
}

/// Replaces a decision or a memory with a new version: the new record points to
/// the old (`supersedes`), the old one is marked superseded and points to the new
/// (`superseded_by`). Nothing is overwritten; both stay readable. A teammate's
/// record keeps its author: only the new record is written, and its pointer marks
/// the old one on every node.
pub fn supersede(app: &App, old: &str, replacement: &Replacement) -> OpResult<Written> {
    replace(app, old, replacement, Confirming::No)
}

/// Whether a new version is a person's word that the old one holds (`confirm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Confirming {
    Yes,
    No,
}

/// [`supersede`]; a confirmation also marks the new version's anchors confirmed,
/// so a file gone before it is no longer news.
fn replace(
    app: &App,
    old: &str,
    replacement: &Replacement,
    confirming: Confirming,
) -> OpResult<Written> {
    let mut store = app.store()?;
    let want = match replacement {
        Replacement::Decision(_) => KnowledgeKind::Decision,
        Replacement::Memory(_) => KnowledgeKind::Memory,
    };
    let previous = find_one(&store, old, Some(want))?;
    // A teammate's record is never written here: the new one names it, and that
    // marks it superseded on every node (`Knowledge::mark_superseded_by`).
    let theirs = crate::store::records::teammate(store.conn(), previous.meta.machine_id)?.is_some();
    writable(app, &previous.project)?;
    if !previous.stands(UnixMillis::now()) {
        return Err(OpError::BadInput(format!(
            "{} is {} already; supersede the version that stands",
            previous.citation(),
            previous.status()
        )));
    }
    let now = UnixMillis::now();
    let new_id = KnowledgeId::new();
    let (new_body, old_body) = match (replacement, &previous.body) {
        (Replacement::Decision(r), KnowledgeBody::Decision(d)) => {
            let mut next = decision_body(r, now)?;
            anchor_decision(&previous.project, r, &mut next)?;
            carry_anchors(&d.anchors, &r.anchors, &mut next.anchors);
            next.supersedes = Some(previous.id);
            next.iteration = d.iteration;
            let mut old = d.clone();
            old.status = Standing::Superseded;
            old.superseded_by = Some(new_id);
            (KnowledgeBody::Decision(next), KnowledgeBody::Decision(old))
        }
        (Replacement::Memory(r), KnowledgeBody::Memory(m)) => {
            let mut next = memory_body(r, now)?;
            anchor_memory(&previous.project, r, &mut next)?;
            carry_anchors(&m.anchors, &r.anchors, &mut next.anchors);
            if confirming == Confirming::Yes {
                next.anchors = super::anchors::confirmed(&previous.project, next.anchors, now);
            }
            next.confidence = next.confidence.as_written_by(&app.writer);
            next.supersedes = Some(previous.id);
            let mut old = m.clone();
            old.status = Standing::Superseded;
            old.superseded_by = Some(new_id);
            (KnowledgeBody::Memory(next), KnowledgeBody::Memory(old))
        }
        _ => {
            return Err(OpError::BadInput(format!(
                "{} is a {}, not a {want}",
                previous.citation(),
                previous.kind()
            )));
        }
    };
    let session = kstore::open_session(store.conn(), &previous.project.key, store.machine_id())?;
    Ok(store.write(|w| {
        let record = w.record_knowledge(new_id, &previous.project, session, new_body)?;
        if theirs {
            return Ok(Written::new(record, Vec::new()));
        }
        let old = w.revise_knowledge(&previous, old_body)?;
        Ok(Written::new(record, vec![old]))
    })?)
}

/// Confirms a decision or a memory (`solaria confirm`). A memory gets a new
/// version in its place that stands at full confidence — the user's word — with
/// its text as it was or as `content` says, and without the summarizer's proposal
/// mark and tag when it was one. A decision is said to hold still: it is
/// re-anchored where the repository's `HEAD` is now, so what changed in its code
/// before is no longer news. Either way the "changed since" mark is cleared.
pub fn confirm(app: &App, id: &str, content: Option<String>) -> OpResult<Written> {
    super::person_only(app, "confirming", "solaria confirm")?;
    let previous = {
        let store = app.store()?;
        find_one(&store, id, None)?
    };
    if let KnowledgeBody::Decision(d) = &previous.body {
        return reconfirm_decision(app, &previous, d, content);
    }
    let KnowledgeBody::Memory(m) = &previous.body else {
        return Err(OpError::BadInput(format!(
            "{} is a {}, not a decision or a memory",
            previous.citation(),
            previous.kind()
        )));
    };
    let content = match content {
        Some(c) => c,
        None => super::distill::without_proposal_mark(&m.content).to_string(),
    };
    let tags = m
        .tags
        .iter()
        .filter(|t| t.as_str() != super::distill::PROPOSAL_TAG)
        .cloned()
        .collect();
    replace(
        app,
        id,
        &Replacement::Memory(MemoryRequest {
            scope: Scope::default(),
            memory_type: m.memory_type,
            content,
            confidence: Some(Confidence::STATED),
            tags,
            expiry: Expiry::ByType,
            anchors: Default::default(),
        }),
        Confirming::Yes,
    )
}

/// A decision confirmed where it stands: the same record, re-anchored at `HEAD`.
fn reconfirm_decision(
    app: &App,
    previous: &Knowledge,
    d: &Decision,
    content: Option<String>,
) -> OpResult<Written> {
    if content.is_some() {
        return Err(OpError::BadInput(format!(
            "{} is a decision: to change what it says, supersede it \
             (`solaria supersede {}`)",
            previous.citation(),
            previous.id.short()
        )));
    }
    let now = UnixMillis::now();
    if !previous.stands(now) {
        return Err(OpError::BadInput(format!(
            "{} is {}; confirm the version that stands",
            previous.citation(),
            previous.status()
        )));
    }
    let mut store = app.store()?;
    own_record(
        &store,
        previous.meta.machine_id,
        &previous.citation().to_string(),
        "confirmed",
    )?;
    let mut body = d.clone();
    body.anchors = super::anchors::confirmed(&previous.project, body.anchors, now);
    let record = store.write(|w| {
        let record = w.revise_knowledge(previous, KnowledgeBody::Decision(body))?;
        crate::store::staleness::clear(w.tx(), record.id)?;
        Ok(record)
    })?;
    Ok(Written::new(record, Vec::new()))
}

/// Marks `old` superseded by `new`, a record already written (`solaria supersede
/// OLD --by NEW`): what a person does when a write proposed the two as a pair and
/// the new one holds. `new` is this machine's own standing record of the same
/// kind and project, replacing nothing yet; it gets a version that points to
/// `old`, and that pointer marks `old` on every node (a teammate's too).
pub fn supersede_by(app: &App, old: &str, new: &str) -> OpResult<Written> {
    let mut store = app.store()?;
    let previous = find_one(&store, old, None)?;
    let next = find_one(&store, new, None)?;
    writable(app, &previous.project)?;
    let now = UnixMillis::now();
    if previous.id == next.id {
        return Err(OpError::BadInput("a record cannot supersede itself".into()));
    }
    if next.kind() != previous.kind() {
        return Err(OpError::BadInput(format!(
            "{} is a {}: a {} is superseded by a {} only",
            next.citation(),
            next.kind(),
            previous.kind(),
            previous.kind()
        )));
    }
    if next.project.key != previous.project.key {
        return Err(OpError::BadInput(format!(
            "{} is of project {}, {} of {}: a record supersedes one of its own project",
            next.citation(),
            next.project.key,
            previous.citation(),
            previous.project.key
        )));
    }
    for k in [&previous, &next] {
        if !k.stands(now) {
            return Err(OpError::BadInput(format!(
                "{} is {} already; only standing records are set one over the other",
                k.citation(),
                k.status()
            )));
        }
    }
    if let Some(replaced) = next.replaces() {
        return Err(OpError::BadInput(format!(
            "{} already supersedes {}; supersede {} with a new version instead \
             (`solaria supersede {} …`)",
            next.citation(),
            replaced.short(),
            previous.citation(),
            previous.id.short()
        )));
    }
    own_record(
        &store,
        next.meta.machine_id,
        &next.citation().to_string(),
        "set over another",
    )?;
    let body = match next.body.clone() {
        KnowledgeBody::Decision(mut d) => {
            d.supersedes = Some(previous.id);
            KnowledgeBody::Decision(d)
        }
        KnowledgeBody::Memory(mut m) => {
            m.supersedes = Some(previous.id);
            KnowledgeBody::Memory(m)
        }
        _ => {
            return Err(OpError::BadInput(format!(
                "{} is a {}: only decisions and memories supersede",
                next.citation(),
                next.kind()
            )));
        }
    };
    Ok(store.write(|w| {
        crate::store::close_pairs::settle(w.tx(), previous.id, next.id)?;
        let record = w.revise_knowledge(&next, body)?;
        let old = kstore::get_knowledge(w.tx(), previous.id)?;
        Ok(Written::new(record, old.into_iter().collect()))
    })?)
}

/// Links two knowledge records (`from` `relation` `to`). Linking the same pair
/// the same way twice, on any machine, makes one link.
pub fn link(app: &App, from: &str, relation: LinkKind, to: &str, note: &str) -> OpResult<Written> {
    let mut store = app.store()?;
    let a = find_one(&store, from, None)?;
    let b = find_one(&store, to, None)?;
    writable(app, &a.project)?;
    writable(app, &b.project)?;
    if a.id == b.id {
        return Err(OpError::BadInput(
            "a record cannot be linked to itself".into(),
        ));
    }
    let id = KnowledgeId::stable(
        &a.project.key,
        &format!("link:{}:{relation}:{}", a.id, b.id),
    );
    let body = KnowledgeBody::Link(Link {
        from: Some(a.id),
        to: Some(b.id),
        relation,
        note: cut(note),
    });
    let record = store.write(|w| {
        // Linking two records a write set side by side is one way a person settles them.
        crate::store::close_pairs::settle(w.tx(), a.id, b.id)?;
        match kstore::get_knowledge(w.tx(), id)? {
            Some(existing) if !existing.meta.deleted => Ok(existing),
            _ => w.record_knowledge(id, &a.project, None, body),
        }
    })?;
    Ok(Written::new(record, Vec::new()))
}

/// `solaria iteration start`, `memory_start_iteration`.
pub fn start_iteration(
    app: &App,
    scope: &Scope,
    kind: IterationKind,
    title: &str,
    description: &str,
) -> OpResult<Written> {
    let mut store = app.store()?;
    let project = project_of(app, &store, scope)?;
    writable(app, &project)?;
    let title = field("title", title)?;
    let branch = branch_for(scope).unwrap_or_default();
    store
        .write(|w| {
            let now = UnixMillis(w.tick().physical_ms() as i64);
            let record = w.record_knowledge(
                KnowledgeId::new(),
                &project,
                None,
                KnowledgeBody::Iteration(Iteration {
                    title,
                    iteration_kind: kind,
                    description: cut(description),
                    status: IterationStatus::Active,
                    started_at: now,
                    completed_at: None,
                    branch,
                }),
            )?;
            let event = record_event(w, &record, EventKind::Started, "")?;
            Ok(Written::new(record, vec![event]))
        })
        .map_err(OpError::from)
}

/// Completes (or abandons) an iteration: the named one, else the project's active one.
pub fn complete_iteration(
    app: &App,
    scope: &Scope,
    reference: Option<&str>,
    abandoned: bool,
    note: &str,
) -> OpResult<Written> {
    let mut store = app.store()?;
    let iteration = match given(reference.map(str::to_string)) {
        Some(r) => find_one(&store, &r, Some(KnowledgeKind::Iteration))?,
        None => {
            let project = project_of(app, &store, scope)?;
            kstore::active_iteration(store.conn(), &project.key)?.ok_or_else(|| {
                OpError::BadInput(format!(
                    "no active iteration in {}; name one (`solaria iteration show` lists the latest)",
                    project.name
                ))
            })?
        }
    };
    own_record(
        &store,
        iteration.meta.machine_id,
        &iteration.citation().to_string(),
        "ended",
    )?;
    writable(app, &iteration.project)?;
    let KnowledgeBody::Iteration(mut body) = iteration.body.clone() else {
        return Err(OpError::BadInput(format!(
            "{} is not an iteration",
            iteration.citation()
        )));
    };
    if body.status != IterationStatus::Active {
        return Err(OpError::BadInput(format!(
            "{} is {} already",
            iteration.citation(),
            body.status
        )));
    }
    let (status, event) = if abandoned {
        (IterationStatus::Abandoned, EventKind::Abandoned)
    } else {
        (IterationStatus::Completed, EventKind::Completed)
    };
    store
        .write(|w| {
            body.status = status;
            body.completed_at = Some(UnixMillis(w.tick().physical_ms() as i64));
            let record = w.revise_knowledge(&iteration, KnowledgeBody::Iteration(body))?;
            let e = record_event(w, &record, event, note)?;
            Ok(Written::new(record, vec![e]))
        })
        .map_err(OpError::from)
}

/// The named iteration, else the project's active one, else its latest.
pub fn get_iteration(app: &App, scope: &Scope, reference: Option<&str>) -> OpResult<IterationPage> {
    let store = app.store()?;
    let iteration = match given(reference.map(str::to_string)) {
        Some(r) => find_one(&store, &r, Some(KnowledgeKind::Iteration))?,
        None => {
            let project = project_of(app, &store, scope)?;
            match kstore::active_iteration(store.conn(), &project.key)? {
                Some(i) => i,
                None => kstore::latest_iteration(store.conn(), &project.key)?.ok_or_else(|| {
                    OpError::NotFound(vec![format!("an iteration of {}", project.name)])
                })?,
            }
        }
    };
    let members = kstore::members_of_iteration(store.conn(), &iteration)?;
    let sessions = match &iteration.body {
        KnowledgeBody::Iteration(i) => kstore::sessions_between(
            store.conn(),
            &iteration.project.key,
            i.started_at,
            i.completed_at.unwrap_or_else(UnixMillis::now),
        )?,
        _ => Vec::new(),
    };
    let machines = labels(&store, std::iter::once(&iteration).chain(&members));
    Ok(IterationPage {
        iteration,
        members,
        sessions,
        machines,
    })
}

/// What a knowledge listing asks for.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    /// One project (as `--project` names it); every project when `None`.
    pub project: Option<String>,
    pub kinds: Vec<KnowledgeKind>,
    /// Superseded, retracted and expired records too.
    pub all: bool,
    /// Only memories in this confidence band (open questions, or to validate).
    pub band: Option<Band>,
    /// Only memories of this type (facts, preferences…).
    pub memory_type: Option<MemoryType>,
    /// Only records matching these words, best match first (the store's search).
    pub query: Option<String>,
    pub limit: usize,
}

/// The names of the machines that wrote `records` (and this machine's id).
pub(crate) fn labels<'a>(
    store: &Store,
    records: impl IntoIterator<Item = &'a Knowledge>,
) -> MachineLabels {
    let mut names = super::MachineNames::new(store);
    for k in records {
        names.name(k.meta.machine_id);
    }
    names.labels()
}

/// The page of what a write did, with the names of the machines it shows.
pub fn page(app: &App, written: Written) -> OpResult<WrittenPage> {
    let store = app.store()?;
    let machines = labels(
        &store,
        std::iter::once(&written.record)
            .chain(&written.touched)
            .chain(written.close.iter().map(|c| &c.standing)),
    );
    Ok(WrittenPage {
        record: written.record,
        touched: written.touched,
        close: written.close,
        machines,
    })
}

/// A listing of knowledge records, newest first, named `what` (`decisions`…).
pub fn listing(app: &App, request: &ListRequest, what: &'static str) -> OpResult<KnowledgeList> {
    let records = list(app, request)?;
    let machines = labels(&app.store()?, &records);
    Ok(KnowledgeList {
        what,
        records,
        machines,
        relations: Default::default(),
    })
}

/// [`listing`], with each record's links both ways (what implements a decision,
/// what it supersedes or relates to): the viewer's lists.
pub fn listing_related(
    app: &App,
    request: &ListRequest,
    what: &'static str,
) -> OpResult<KnowledgeList> {
    let mut list = listing(app, request, what)?;
    let store = app.store()?;
    for k in &list.records {
        let r = related(&store, k.clone())?;
        list.relations.insert(k.id, (r.links, r.others));
    }
    Ok(list)
}

/// Knowledge records, newest first (best match first with `query`).
pub fn list(app: &App, request: &ListRequest) -> OpResult<Vec<Knowledge>> {
    if let Some(text) = given(request.query.clone()) {
        return matching(app, request, &text);
    }
    let store = app.store()?;
    let projects = match given(request.project.clone()) {
        Some(p) => Some(
            super::project::resolve(&store, &p)?
                .into_iter()
                .map(|p| p.key)
                .collect(),
        ),
        None => None,
    };
    let filter = KnowledgeFilter {
        kinds: request.kinds.clone(),
        projects,
        include_inactive: request.all,
        limit: if request.narrows_memories() {
            0
        } else {
            request.limit
        },
    };
    let mut found = kstore::list_knowledge(store.conn(), &filter, UnixMillis::now())?;
    if request.narrows_memories() {
        found.retain(|k| request.wants_memory(k));
        if request.limit > 0 {
            found.truncate(request.limit);
        }
    }
    Ok(found)
}

impl ListRequest {
    /// Whether memories are narrowed by band or type (after the store's listing).
    fn narrows_memories(&self) -> bool {
        self.band.is_some() || self.memory_type.is_some()
    }

    /// Whether `k` passes the band and type asked for (anything, when none is).
    fn wants_memory(&self, k: &Knowledge) -> bool {
        if !self.narrows_memories() {
            return true;
        }
        matches!(&k.body, KnowledgeBody::Memory(m)
            if self.band.is_none_or(|band| m.confidence.band() == band)
                && self.memory_type.is_none_or(|t| m.memory_type == t))
    }
}

/// How many search hits are read per record a matching list may hold: superseded
/// versions and other bands are dropped after the search.
const CANDIDATES_PER_RECORD: usize = 4;
/// The most hits a matching list reads (the store's search reads no more).
const MAX_CANDIDATES: usize = 500;

/// The records of `request`'s kinds that match `text`, best match first: the
/// store's search (any text is a valid query), then the list's filters.
fn matching(app: &App, request: &ListRequest, text: &str) -> OpResult<Vec<Knowledge>> {
    let store = app.store()?;
    if let Some(p) = given(request.project.clone()) {
        super::project::resolve(&store, &p)?;
    }
    let limit = if request.limit == 0 {
        MAX_CANDIDATES
    } else {
        request.limit
    };
    let candidates = limit
        .saturating_mul(CANDIDATES_PER_RECORD)
        .min(MAX_CANDIDATES);
    let now = UnixMillis::now();
    let mut hits = Vec::new();
    for kind in &request.kinds {
        let Some(record_type) = RecordType::of_knowledge(*kind) else {
            continue;
        };
        hits.extend(search::search(
            store.conn(),
            &SearchQuery {
                text: text.to_string(),
                project: given(request.project.clone()),
                record_type: Some(record_type),
                limit: candidates,
                current_project: Some(app.current_project().key),
                ..SearchQuery::default()
            },
        )?);
    }
    search::sort_hits(&mut hits);
    let mut found: Vec<Knowledge> = Vec::new();
    for hit in hits {
        let Ok(id) = hit.id.parse::<KnowledgeId>() else {
            continue;
        };
        let Some(k) = kstore::get_knowledge(store.conn(), id)? else {
            continue;
        };
        if (request.all || k.stands(now))
            && request.wants_memory(&k)
            && !found.iter().any(|f| f.id == k.id)
        {
            found.push(k);
        }
        if found.len() == limit {
            break;
        }
    }
    Ok(found)
}

/// A record with the records linked to it (both ways) and, for a superseded
/// record, the chain of versions.
#[derive(Debug, Clone)]
pub struct Related {
    pub record: Knowledge,
    pub links: Vec<Knowledge>,
    /// The other ends of `links` (and of commits' decisions), by id.
    pub others: Vec<Knowledge>,
}

/// `record` with its links, both ways.
pub fn related(store: &Store, record: Knowledge) -> OpResult<Related> {
    let links = kstore::links_of(store.conn(), &record)?;
    let mut others: Vec<Knowledge> = Vec::new();
    for l in &links {
        for id in l.references() {
            if id != record.id
                && !others.iter().any(|o| o.id == id)
                && let Some(k) = kstore::get_knowledge(store.conn(), id)?
                && !k.meta.deleted
            {
                others.push(k);
            }
        }
    }
    Ok(Related {
        record,
        links,
        others,
    })
}

/// The branch to infer an iteration from: the current directory's, unless the
/// scope names another project.
fn branch_for(scope: &Scope) -> Option<String> {
    if given(scope.project.clone()).is_some() {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    branch_at(&cwd)
}

/// `solaria why QUERY`, `memory_why`.
#[derive(Debug, Clone, Default)]
pub struct WhyRequest {
    pub query: String,
    /// One project (as `--project` names it); every project when `None`.
    pub project: Option<String>,
    /// The most decisions and memories answered (default [`WHY_DEFAULT`]).
    pub limit: usize,
}

/// Decisions and memories a `why` answers with unless asked otherwise.
pub const WHY_DEFAULT: usize = 5;
/// Events listed after the knowledge.
const WHY_HISTORY: usize = 3;

/// Why something is the way it is: the decisions and memories the words find
/// (standing ones first: superseded versions rank low), each with what
/// implements or relates to it, then the events that mention the words. Words
/// only, so it answers at once and the same on every machine.
pub fn why(app: &App, request: &WhyRequest) -> OpResult<(WhyAnswer, MachineLabels)> {
    let text = request.query.trim();
    if text.is_empty() {
        return Err(OpError::BadInput(
            "`query` is required: say what the decision was about".into(),
        ));
    }
    let limit = super::input::bounded(
        "limit",
        Some(request.limit).filter(|l| *l > 0),
        WHY_DEFAULT,
        1..=50,
    )?;
    let store = app.store()?;
    if let Some(p) = given(request.project.clone()) {
        super::project::resolve(&store, &p)?;
    }
    let current = app.current_project().key;
    let query = |record_type: Option<RecordType>, n: usize| SearchQuery {
        text: text.to_string(),
        project: given(request.project.clone()),
        record_type,
        limit: n,
        current_project: Some(current.clone()),
        ..SearchQuery::default()
    };
    let mut hits = Vec::new();
    for t in [RecordType::Decision, RecordType::Memory] {
        hits.extend(search::search(store.conn(), &query(Some(t), limit))?);
    }
    search::sort_hits(&mut hits);
    hits.truncate(limit);
    let mut names = super::MachineNames::new(&store);
    let mut knowledge = Vec::new();
    for hit in &hits {
        let Ok(id) = hit.id.parse::<KnowledgeId>() else {
            continue;
        };
        if let Some(k) = kstore::get_knowledge(store.conn(), id)? {
            let r = related(&store, k)?;
            for m in std::iter::once(&r.record)
                .chain(&r.links)
                .chain(&r.others)
                .map(|k| k.meta.machine_id)
            {
                names.name(m);
            }
            knowledge.push(RelatedPage {
                changed_since: crate::store::staleness::of_record(store.conn(), r.record.id)?,
                record: r.record,
                links: r.links,
                linked: r.others,
                machines: names.labels_so_far(),
            });
        }
    }
    let history_hits: Vec<_> = search::search(store.conn(), &query(None, WHY_HISTORY * 4))?
        .into_iter()
        .filter(|h| h.record_type.knowledge_kind().is_none())
        .take(WHY_HISTORY)
        .collect();
    let history =
        super::search::with_snippets(&store, super::search::cite(&store, history_hits), text)?;
    Ok((
        WhyAnswer {
            query: text.chars().take(200).collect(),
            knowledge,
            history,
        },
        names.labels(),
    ))
}
