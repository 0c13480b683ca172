//! Commits as knowledge: captured by the PostToolUse hook (no process: sha,
//! branch and message from the command and git's output), logged by hand
//! (`solaria commits log`, `memory_log_commit`), imported from `git log`, and
//! completed later by the daemon (author, files, line counts from `git show`).
//!
//! One rule for all four ([`store_commit`]): a commit's id derives from its
//! project and full sha (`KnowledgeId::stable`), so capturing it again, on any
//! machine, finds the same record; the new facts are merged into it and nothing
//! is written unless something changed. `Decision: D#…` trailers link the commit
//! to the decisions they name; a trailer that names none is reported, never an
//! error. Every text passes the secret redactor before it is stored.

use super::gitlog::{self, GitCommit, GitError};
use super::input::{clip, given};
use super::knowledge::{MAX_FIELD_CHARS, Scope, branch_at, iteration_for, project_of};
use super::reference::find_one;
use super::repository::{project_at, repository_of_project};
use super::{OpError, OpResult};
use crate::app::App;
use crate::gitdir;
use crate::present::commits::{CommitLine, CompletionReport, ImportReport, LoggedCommit, Outcome};
use crate::store::knowledge as kstore;
use crate::store::{Store, StoreError, Writer, commits as cstore, records};
use solaria_shared::knowledge::{Commit, check_commit_sha, decision_trailers};
use solaria_shared::private::cut_middle;
use solaria_shared::redact::redact;
use solaria_shared::{
    Knowledge, KnowledgeBody, KnowledgeId, KnowledgeKind, Project, SessionId, UnixMillis,
};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The most commits one import reads (the newest ones).
pub const IMPORT_MAX: usize = 10_000;
/// Commits written per transaction during an import: hooks wait for no longer.
const IMPORT_BATCH: usize = 100;
/// The most pending commits one completion pass looks at.
const COMPLETION_BATCH: usize = 200;

/// `solaria commits log`, `memory_log_commit`: a commit named by hand.
#[derive(Debug, Clone, Default)]
pub struct CommitRequest {
    pub scope: Scope,
    /// Full or abbreviated (an abbreviated sha needs the repository here).
    pub sha: String,
    /// Used when git cannot tell (the repository is not on this machine); git's
    /// own message wins when it can.
    pub message: Option<String>,
    /// Decisions the commit implements (`D#…`, short or full ids), besides its
    /// trailers. An unknown one is an error: a person typed it.
    pub decisions: Vec<String>,
    /// The iteration it belongs to; inferred (active one, or the branch's) when `None`.
    pub iteration: Option<String>,
    /// The branch it was made on; the checkout's when `None`.
    pub branch: Option<String>,
}

/// The id of the commit `sha` in `project`: the same on every machine.
pub fn commit_id(project_key: &str, sha: &str) -> KnowledgeId {
    KnowledgeId::stable(project_key, &format!("commit:{sha}"))
}

/// What [`store_commit`] did.
#[derive(Debug, Clone)]
pub struct Stored {
    pub record: Knowledge,
    pub outcome: Outcome,
    /// Trailer references that named no decision (or more than one).
    pub unresolved: Vec<String>,
}

/// Stores the commit `c` of `project` (its `sha` full): a new record, or the
/// known one with what `c` adds (statistics, decisions). Writes nothing when
/// nothing is new. `infer_iteration`: a new record joins the active iteration or
/// its branch's (not for imported history, which predates them).
pub fn store_commit(
    w: &mut Writer<'_>,
    project: &Project,
    session: Option<SessionId>,
    mut c: Commit,
    infer_iteration: bool,
) -> Result<Stored, StoreError> {
    clean(&mut c);
    let (linked, unresolved) = resolve_trailers(w, project, &c.message)?;
    for id in linked {
        if !c.decisions.contains(&id) {
            c.decisions.push(id);
        }
    }
    let id = commit_id(&project.key, &c.sha);
    if let Some(existing) = kstore::get_knowledge(w.tx(), id)? {
        // An erased commit stays erased: capturing it again is not asking back.
        // A teammate's stays as they recorded it (only its author changes it).
        let theirs = crate::store::records::teammate(w.tx(), existing.meta.machine_id)?.is_some();
        let merged = match &existing.body {
            KnowledgeBody::Commit(old) if !existing.meta.deleted && !theirs => merge(old, &c),
            _ => None,
        };
        let Some(merged) = merged else {
            return Ok(Stored {
                record: existing,
                outcome: Outcome::Known,
                unresolved,
            });
        };
        let record = w.revise_knowledge(&existing, KnowledgeBody::Commit(merged))?;
        return Ok(Stored {
            record,
            outcome: Outcome::Updated,
            unresolved,
        });
    }
    if infer_iteration && c.iteration.is_none() {
        // The iteration it starts, if any, is recorded with its own event.
        c.iteration = iteration_for(w, project, None, Some(&c.branch))?.0;
    }
    let stamp = w.tick();
    let committed_at = c.committed_at;
    let mut record = Knowledge::new(
        id,
        w.machine_id(),
        stamp,
        project.clone(),
        session,
        KnowledgeBody::Commit(c),
    );
    record.written_by = w.writer().clone();
    // A commit is placed in time by when it was made (an import of old history
    // lists in history's order, not all at the minute of the import).
    if committed_at.0 > 0 {
        record.created_at = committed_at;
    }
    w.put_knowledge(&record)?;
    Ok(Stored {
        record,
        outcome: Outcome::New,
        unresolved,
    })
}

/// Redacts every text of `c` and bounds its message (keeping `<private>` spans
/// whole across the cut).
fn clean(c: &mut Commit) {
    c.sha = c.sha.trim().to_ascii_lowercase();
    let message = redact(c.message.trim_end()).into_owned();
    c.message = if message.len() > MAX_FIELD_CHARS {
        let cut = cut_middle(
            &message,
            MAX_FIELD_CHARS * 2 / 3,
            message.len() - MAX_FIELD_CHARS / 3,
        );
        format!(
            "{}\n[… {} bytes omitted …]\n{}",
            cut.head, cut.omitted, cut.tail
        )
    } else {
        message
    };
    for text in [&mut c.author, &mut c.branch] {
        *text = redact(text).into_owned();
    }
    for file in &mut c.files {
        *file = redact(file).into_owned();
    }
}

/// The known commit `old` with what `new` adds; `None` when it adds nothing.
fn merge(old: &Commit, new: &Commit) -> Option<Commit> {
    let mut m = old.clone();
    if new.complete && !old.complete {
        // git's account (author, statistics, the full message) replaces what
        // the hook could read from the command line.
        m.author = new.author.clone();
        m.files = new.files.clone();
        m.insertions = new.insertions;
        m.deletions = new.deletions;
        m.committed_at = new.committed_at;
        if !new.message.is_empty() {
            m.message = new.message.clone();
        }
        m.complete = true;
    }
    if m.message.is_empty() {
        m.message = new.message.clone();
    }
    if m.branch.is_empty() {
        m.branch = new.branch.clone();
    }
    for d in &new.decisions {
        if !m.decisions.contains(d) {
            m.decisions.push(*d);
        }
    }
    if m.iteration.is_none() {
        m.iteration = new.iteration;
    }
    (m != *old).then_some(m)
}

/// The decisions `message`'s trailers name (one each, preferring the project's
/// own when a short id is ambiguous), and the references that named none.
fn resolve_trailers(
    w: &Writer<'_>,
    project: &Project,
    message: &str,
) -> Result<(Vec<KnowledgeId>, Vec<String>), StoreError> {
    let mut linked = Vec::new();
    let mut unresolved = Vec::new();
    for reference in decision_trailers(message) {
        let mut found = kstore::find_knowledge(w.tx(), &reference, Some(KnowledgeKind::Decision))?;
        if found.len() > 1 {
            found.retain(|k| k.project.key == project.key);
        }
        match found.as_slice() {
            [one] => linked.push(one.id),
            _ => unresolved.push(reference),
        }
    }
    Ok((linked, unresolved))
}

/// A commit as git tells it (complete), on `branch`.
fn from_git(g: GitCommit, branch: &str) -> Commit {
    Commit {
        sha: g.sha,
        message: g.message,
        author: g.author,
        branch: branch.to_string(),
        files: g.files,
        insertions: g.insertions,
        deletions: g.deletions,
        committed_at: g.committed_at,
        decisions: Vec::new(),
        iteration: None,
        complete: true,
    }
}

fn git_error(e: GitError) -> OpError {
    OpError::BadInput(e.to_string())
}

/// Records the commit a request names. With the repository here (the current
/// directory is in the project), git fills in everything; otherwise the sha
/// must be full and the record waits for a machine that has the repository.
pub fn log_commit(app: &App, request: &CommitRequest) -> OpResult<LoggedCommit> {
    let mut store = app.store()?;
    let project = project_of(app, &store, &request.scope)?;
    super::knowledge::writable(app, &project)?;
    let sha = request.sha.trim().to_ascii_lowercase();
    if !gitdir::is_sha(&sha) {
        return Err(OpError::BadInput(format!(
            "`sha` must be 7 to 64 hex digits, not {:?}",
            clip(&request.sha)
        )));
    }
    let here = std::env::current_dir()
        .ok()
        .and_then(|cwd| gitdir::locate(&cwd))
        .filter(|dirs| {
            let p = crate::project::detect(&dirs.work);
            p.key == project.key || project_at(&dirs.work).key == project.key
        });
    // The checkout's branch is the commit's only if the commit is its HEAD (an
    // older commit may have been made anywhere).
    let branch = given(request.branch.clone())
        .or_else(|| {
            let dirs = here.as_ref()?;
            dirs.head_sha()
                .filter(|head| head.starts_with(&sha))
                .and_then(|_| branch_at(&dirs.work))
        })
        .unwrap_or_default();
    let known = here
        .as_ref()
        .and_then(|dirs| gitlog::show(&dirs.work, &sha).ok());
    let mut commit = match known {
        Some(g) => from_git(g, &branch),
        None => {
            let full = match here.as_ref().and_then(|d| d.full_sha(&sha)) {
                Some(full) => full,
                None if sha.len() == 40 || sha.len() == 64 => sha.clone(),
                None => {
                    return Err(OpError::BadInput(format!(
                        "{sha} is abbreviated and no repository of {} here knows it; \
                         give the full sha, or run this in the repository",
                        project.name
                    )));
                }
            };
            Commit {
                sha: full,
                message: request.message.clone().unwrap_or_default(),
                branch,
                committed_at: UnixMillis::now(),
                ..Commit::default()
            }
        }
    };
    // Full by now (git's own, or completed from the repository's files); the
    // shared rule says so once more before anything is stored.
    check_commit_sha(&commit.sha).map_err(|e| OpError::BadInput(e.to_string()))?;
    for reference in &request.decisions {
        let d = find_one(&store, reference, Some(KnowledgeKind::Decision))?;
        if !commit.decisions.contains(&d.id) {
            commit.decisions.push(d.id);
        }
    }
    if let Some(r) = given(request.iteration.clone()) {
        commit.iteration = Some(find_one(&store, &r, Some(KnowledgeKind::Iteration))?.id);
    }
    let session = kstore::open_session(store.conn(), &project.key, store.machine_id())?;
    let stored = store.write(|w| store_commit(w, &project, session, commit, true))?;
    Ok(LoggedCommit {
        outcome: stored.outcome,
        commit: line_of(&store, &stored.record)?,
        unresolved: stored.unresolved,
    })
}

/// Imports the history of the repository `dir` is in (newest [`IMPORT_MAX`]
/// commits, made since `since` when given): one `git log` process, then each
/// commit stored as [`store_commit`] does, so a second import writes nothing.
pub fn import(app: &App, since: Option<UnixMillis>, dir: &Path) -> OpResult<ImportReport> {
    let dirs = gitdir::locate(dir).ok_or_else(|| {
        OpError::BadInput(format!(
            "{} is not in a git repository; run `solaria commits import` in the project's repository",
            dir.display()
        ))
    })?;
    let project = project_at(&dirs.work);
    let history = gitlog::log(&dirs.work, since, IMPORT_MAX).map_err(git_error)?;
    let mut report = ImportReport {
        project: project.name.clone(),
        read: history.len(),
        capped: history.len() == IMPORT_MAX,
        ..ImportReport::default()
    };
    let mut store = app.store()?;
    // Oldest first, so that records made in one batch list in history's order.
    let oldest_first: Vec<GitCommit> = history.into_iter().rev().collect();
    for batch in oldest_first.chunks(IMPORT_BATCH) {
        let results = store.write(|w| {
            batch
                .iter()
                .map(|g| store_commit(w, &project, None, from_git(g.clone(), ""), false))
                .collect::<Result<Vec<_>, _>>()
        })?;
        for s in results {
            match s.outcome {
                Outcome::New => report.imported += 1,
                Outcome::Updated => report.updated += 1,
                Outcome::Known => report.known += 1,
            }
            // A known commit's trailers were reported when it was recorded.
            if s.outcome != Outcome::Known {
                report.unresolved.extend(
                    s.unresolved
                        .iter()
                        .map(|r| format!("{} names D#{r}", s.record.citation())),
                );
            }
        }
    }
    Ok(report)
}

/// Completes captured commits (author, files, line counts, the full message)
/// from `git show`, where their repository is on this machine: the directory of
/// the session that captured them, if it is still the commit's project. A
/// commit that cannot be completed here is added to `tried` and not looked at
/// again by the same caller (the daemon keeps the set; another machine, or a
/// later import, may complete it). Costs one query when nothing waits.
pub fn complete_pending(app: &App, tried: &mut HashSet<KnowledgeId>) -> OpResult<CompletionReport> {
    let mut store = app.store()?;
    let pending = cstore::pending_commits(store.conn(), COMPLETION_BATCH)?;
    let mut report = CompletionReport::default();
    for k in pending {
        if tried.contains(&k.id) {
            report.waiting += 1;
            continue;
        }
        let KnowledgeBody::Commit(c) = &k.body else {
            continue;
        };
        // Checked again here, whatever stored it (a pulled record an older edge
        // applied, a row written by hand): a sha that is not a full object name
        // never reaches git, where `--output=…` would be an option.
        if let Err(e) = check_commit_sha(&c.sha) {
            tried.insert(k.id);
            report.waiting += 1;
            report
                .skipped
                .push(format!("{}: refused, not given to git: {e}", k.id));
            continue;
        }
        let answer = match repository_of(&store, &k)? {
            Some(dir) => gitlog::show(&dir, &c.sha).map_err(|e| e.to_string()),
            None => Err("its repository is not on this machine".to_string()),
        };
        // Stored shas are full: git naming another commit means the record is not
        // this repository's.
        let answer = answer.and_then(|g| {
            if g.sha == c.sha {
                Ok(g)
            } else {
                Err(format!("git answered for another commit ({})", g.sha))
            }
        });
        let g = match answer {
            Ok(g) => g,
            Err(e) => {
                tried.insert(k.id);
                report.waiting += 1;
                report.skipped.push(format!("{}: {e}", k.citation()));
                continue;
            }
        };
        let branch = c.branch.clone();
        let stored = store
            .write(|w| store_commit(w, &k.project, k.session_id, from_git(g, &branch), false))?;
        report.unresolved.extend(
            stored
                .unresolved
                .iter()
                .map(|r| format!("{} names D#{r}", stored.record.citation())),
        );
        report.completed += 1;
    }
    Ok(report)
}

/// The working tree the session that captured `k` ran in, if it is on this
/// machine and still holds `k`'s project.
fn repository_of(store: &Store, k: &Knowledge) -> Result<Option<PathBuf>, StoreError> {
    let Some(session) = k.session_id else {
        return Ok(None);
    };
    let Some(session) = records::get_session(store.conn(), session)? else {
        return Ok(None);
    };
    if session.meta.machine_id != store.machine_id() || session.cwd.is_empty() {
        return Ok(None);
    }
    Ok(repository_of_project(Path::new(&session.cwd), &k.project).map(|d| d.work))
}

/// Commits of a project (or of every project), newest first.
pub fn list(app: &App, project: Option<String>, limit: usize) -> OpResult<Vec<CommitLine>> {
    let request = super::knowledge::ListRequest {
        project,
        kinds: vec![KnowledgeKind::Commit],
        limit,
        ..Default::default()
    };
    let found = super::knowledge::list(app, &request)?;
    let store = app.store()?;
    found.iter().map(|k| line_of(&store, k)).collect()
}

/// `k` as a listed commit, with the decisions it implements.
fn line_of(store: &Store, k: &Knowledge) -> OpResult<CommitLine> {
    let mut decisions = Vec::new();
    if let KnowledgeBody::Commit(c) = &k.body {
        for id in &c.decisions {
            if let Some(d) = kstore::get_knowledge(store.conn(), *id)?
                && !d.meta.deleted
            {
                decisions.push(d);
            }
        }
    }
    Ok(CommitLine::new(k, &decisions))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn project() -> Project {
        Project {
            key: "github.com/acme/api".into(),
            name: "api".into(),
        }
    }

    fn captured(message: &str) -> Commit {
        Commit {
            sha: SHA.into(),
            message: message.into(),
            branch: "main".into(),
            committed_at: UnixMillis(1_700_000_000_000),
            ..Commit::default()
        }
    }

    fn put(store: &mut Store, c: Commit) -> Stored {
        store
            .write(|w| store_commit(w, &project(), None, c, false))
            .expect("stored")
    }

    #[test]
    fn a_commit_seen_again_writes_nothing_and_completion_writes_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("store");
        let first = put(&mut store, captured("Pages"));
        assert_eq!(first.outcome, Outcome::New);
        assert_eq!(first.record.id, commit_id("github.com/acme/api", SHA));
        let again = put(&mut store, captured("Pages"));
        assert_eq!(again.outcome, Outcome::Known);
        assert_eq!(again.record.meta.updated, first.record.meta.updated);

        let complete = Commit {
            author: "Ada".into(),
            files: vec!["src/page.rs".into()],
            insertions: 3,
            complete: true,
            branch: String::new(),
            ..captured("Pages\n\nWhy: offsets skip rows.")
        };
        let done = put(&mut store, complete.clone());
        assert_eq!(done.outcome, Outcome::Updated);
        let KnowledgeBody::Commit(c) = &done.record.body else {
            panic!("a commit");
        };
        assert_eq!(
            (c.author.as_str(), c.insertions, c.branch.as_str()),
            ("Ada", 3, "main"),
            "git's statistics, the captured branch kept"
        );
        assert_eq!(c.message, "Pages\n\nWhy: offsets skip rows.");
        assert_eq!(put(&mut store, complete).outcome, Outcome::Known);
        let rows: i64 = store
            .conn()
            .query_row("SELECT count(*) FROM knowledge", [], |r| r.get(0))
            .expect("count");
        assert_eq!(rows, 1);
    }

    #[test]
    fn secrets_are_redacted_before_the_row_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("store");
        let stored = put(&mut store, captured("Rotate AKIAIOSFODNN7EXAMPLE now"));
        let back = kstore::get_knowledge(store.conn(), stored.record.id)
            .expect("read")
            .expect("there");
        let KnowledgeBody::Commit(c) = back.body else {
            panic!("a commit");
        };
        assert!(!c.message.contains("AKIAIOSFODNN7EXAMPLE"), "{}", c.message);
        assert!(c.message.contains("[REDACTED"), "{}", c.message);
    }

    #[test]
    fn an_unknown_trailer_is_reported_not_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("store");
        let stored = put(&mut store, captured("Pages\n\nDecision: D#ffffffffffff"));
        assert_eq!(stored.outcome, Outcome::New);
        assert_eq!(stored.unresolved, vec!["ffffffffffff".to_string()]);
    }
}
