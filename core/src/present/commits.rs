//! Commits as people and agents read them: one line each
//! (`[C#sha7] subject — branch, author, +ins −del, linked [D#…]`), and what an
//! import, a completion pass or a commit logged by hand did.

use serde::Serialize;
use solaria_shared::citation::CitedKind;
use solaria_shared::{Citation, Knowledge, KnowledgeBody, KnowledgeId, UnixMillis};
use std::fmt::Write;

/// A decision a commit implements.
#[derive(Debug, Clone, Serialize)]
pub struct LinkedDecision {
    pub id: KnowledgeId,
    /// The short id people type (`D#<short>` in a trailer).
    pub short: String,
    pub title: String,
}

/// One commit, with the decisions it implements.
#[derive(Debug, Clone, Serialize)]
pub struct CommitLine {
    pub id: KnowledgeId,
    /// `[C#sha7]`.
    pub citation: Citation,
    pub sha: String,
    pub subject: String,
    pub message: String,
    pub project: String,
    /// Empty when made on a detached HEAD, or imported from history.
    pub branch: String,
    /// Empty until completed.
    pub author: String,
    pub insertions: u64,
    pub deletions: u64,
    pub files: Vec<String>,
    pub committed_at: UnixMillis,
    /// Author and statistics are known (false until the daemon reads them).
    pub complete: bool,
    pub iteration: Option<KnowledgeId>,
    pub decisions: Vec<LinkedDecision>,
}

impl CommitLine {
    /// The commit record `k` with the (live) decisions it names.
    pub fn new(k: &Knowledge, decisions: &[Knowledge]) -> CommitLine {
        let empty = solaria_shared::knowledge::Commit::default();
        let c = match &k.body {
            KnowledgeBody::Commit(c) => c,
            _ => &empty,
        };
        CommitLine {
            id: k.id,
            citation: k.citation(),
            sha: c.sha.clone(),
            subject: k.title(),
            message: c.message.clone(),
            project: k.project.name.clone(),
            branch: c.branch.clone(),
            author: c.author.clone(),
            insertions: c.insertions,
            deletions: c.deletions,
            files: c.files.clone(),
            committed_at: c.committed_at,
            complete: c.complete,
            iteration: c.iteration,
            decisions: decisions
                .iter()
                .map(|d| LinkedDecision {
                    id: d.id,
                    short: d.id.short(),
                    title: d.title(),
                })
                .collect(),
        }
    }

    /// `[C#sha7] subject — branch, author, +ins −del, linked [D#…]`.
    pub fn text(&self) -> String {
        let mut facts: Vec<String> = Vec::new();
        if !self.branch.is_empty() {
            facts.push(self.branch.clone());
        }
        if self.complete {
            if !self.author.is_empty() {
                facts.push(self.author.clone());
            }
            facts.push(format!("+{} −{}", self.insertions, self.deletions));
        } else {
            facts.push("statistics pending".into());
        }
        if !self.decisions.is_empty() {
            let cited: Vec<String> = self
                .decisions
                .iter()
                .map(|d| Citation::new(CitedKind::Decision, &d.short).to_string())
                .collect();
            facts.push(format!("linked {}", cited.join(" ")));
        }
        format!("{} {} — {}", self.citation, self.subject, facts.join(", "))
    }
}

/// A list of commits, one line each.
pub fn list_text(lines: &[CommitLine]) -> String {
    if lines.is_empty() {
        return "No commits recorded yet. They are captured when the agent commits; \
                `solaria commits import` reads the repository's history.\n"
            .into();
    }
    let mut out = String::new();
    for l in lines {
        let _ = writeln!(out, "{}", l.text());
    }
    out
}

/// Whether storing a commit made a record, changed one, or found it known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    New,
    Updated,
    Known,
}

/// A commit logged by hand.
#[derive(Debug, Clone, Serialize)]
pub struct LoggedCommit {
    pub outcome: Outcome,
    pub commit: CommitLine,
    /// Trailer references that named no decision.
    pub unresolved: Vec<String>,
}

impl LoggedCommit {
    pub fn text(&self) -> String {
        let what = match self.outcome {
            Outcome::New => "Logged",
            Outcome::Updated => "Updated",
            Outcome::Known => "Already known, unchanged:",
        };
        let mut out = format!("{what} {}\n", self.commit.text());
        for r in &self.unresolved {
            let _ = writeln!(
                out,
                "note: the trailer D#{r} names no decision (or several); it is not linked"
            );
        }
        out
    }
}

/// What `solaria commits import` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    pub project: String,
    /// Commits git listed.
    pub read: usize,
    /// New records.
    pub imported: usize,
    /// Known records that gained something (statistics, a decision).
    pub updated: usize,
    /// Known records left as they were.
    pub known: usize,
    /// `[C#sha7] names D#ref` for each trailer that named no decision.
    pub unresolved: Vec<String>,
    /// Only the newest `ops::commits::IMPORT_MAX` were read.
    pub capped: bool,
}

impl ImportReport {
    pub fn text(&self) -> String {
        let mut out = format!(
            "Imported {} new commit(s) of {} ({} already known{}).\n",
            self.imported,
            self.project,
            self.known,
            if self.updated > 0 {
                format!(", {} completed or newly linked", self.updated)
            } else {
                String::new()
            }
        );
        if self.capped {
            let _ = writeln!(
                out,
                "Only the newest {} commits were read; use --since to import an older range.",
                self.read
            );
        }
        for u in &self.unresolved {
            let _ = writeln!(out, "note: {u}, which is no decision here; not linked");
        }
        out
    }
}

/// What a completion pass did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompletionReport {
    /// Commits that gained author and statistics.
    pub completed: usize,
    /// Commits still waiting (their repository is not here, or git failed).
    pub waiting: usize,
    /// Why each commit tried in this pass was left waiting.
    pub skipped: Vec<String>,
    /// `[C#sha7] names D#ref` for each trailer that named no decision.
    pub unresolved: Vec<String>,
}

impl CompletionReport {
    pub fn text(&self) -> String {
        let mut out = format!(
            "Completed {} commit(s); {} still waiting.\n",
            self.completed, self.waiting
        );
        for s in &self.skipped {
            let _ = writeln!(out, "  {s}");
        }
        for u in &self.unresolved {
            let _ = writeln!(out, "note: {u}, which is no decision here; not linked");
        }
        out
    }
}
