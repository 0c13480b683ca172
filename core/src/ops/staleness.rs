//! Which anchored decisions and memories speak of code that changed since they
//! were written or last confirmed: one `git log` and one `git ls-tree` per
//! project, bounded in commits, run by the daemon (and by `solaria review`),
//! never on a hook's path. The result is stored (`store::staleness`) for the
//! context, `why` and review to read.
//!
//! A record's anchored files are the ones it names (`Anchors::files`) and those of
//! the commits that implement it. A commit is news to a record when it changed
//! one of those files and is neither an ancestor of the commit `HEAD` was at when
//! the record was written or confirmed nor of a commit implementing it: history,
//! not clocks, decides. When that commit is not in the history read (older, or
//! another machine's), the commit's time against the record's does.

use super::gitlog::{self, Change, GitError};
use super::{OpError, OpResult};
use crate::gitdir;
use crate::store::Store;
use crate::store::knowledge::{self as kstore, KnowledgeFilter};
use crate::store::staleness as sstore;
use solaria_shared::anchors::{
    ChangeCommit, GoneFile, MAX_COMMITS_KEPT, Staleness, check_anchor_file, check_anchor_symbol,
};
use solaria_shared::redact::redact;
use solaria_shared::{Knowledge, KnowledgeBody, KnowledgeId, KnowledgeKind, Project, UnixMillis};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// The most commits one check reads: a history longer than this since the
/// oldest anchored record is read up to here.
pub const MAX_COMMITS_READ: usize = 20_000;
/// The most distinct symbols one check looks for.
pub const MAX_SYMBOLS_LOOKED: usize = 500;
/// A symbol held by more files than this names no place in particular: it
/// anchors none of them.
pub const MAX_FILES_PER_SYMBOL: usize = 10;
/// The most decisions and memories of a project one check weighs, newest first.
pub const MAX_RECORDS_WEIGHED: usize = 20_000;
/// Commits of a project read for their links to decisions, newest first.
const COMMITS_WEIGHED: usize = 5_000;
/// How far before the oldest record the history is read: a commit a little
/// older than the record may still be where `HEAD` was when it was written.
const CLOCK_MARGIN_MS: i64 = 86_400_000;

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub head: String,
    /// Records with anchored files.
    pub anchored: usize,
    /// Of those, the ones whose code changed since.
    pub stale: usize,
    /// Commits read.
    pub commits_read: usize,
}

impl Checked {
    /// Whether the history since the oldest anchored record was longer than
    /// [`MAX_COMMITS_READ`]: only the newest commits were read, and a record whose
    /// commit is older than those is judged by the commits' dates.
    pub fn cut_short(&self) -> bool {
        self.commits_read >= MAX_COMMITS_READ
    }
}

fn git_error(e: GitError) -> OpError {
    OpError::BadInput(format!("cannot check what changed in the code: {e}"))
}

/// One record's anchors as the check uses them.
struct Anchored<'a> {
    record: &'a Knowledge,
    files: Vec<String>,
    /// The symbols it names (`check_anchor_symbol`).
    symbols: Vec<String>,
    /// Of those, the ones no file at `HEAD` holds.
    symbols_gone: Vec<String>,
    /// Where `HEAD` was when it was written or confirmed (may be empty).
    head: &'a str,
    /// The commits that implement it.
    implemented_by: Vec<&'a str>,
    /// Its time: when it was written, or last confirmed.
    since: UnixMillis,
    /// A person said it holds at some point.
    confirmed: bool,
}

/// Works out which of `project`'s standing decisions and memories speak of code
/// changed since, in the repository at `work`, and stores it (replacing what was
/// known for the project).
pub fn check(store: &mut Store, project: &Project, work: &Path) -> OpResult<Checked> {
    let dirs = gitdir::locate(work).ok_or_else(|| {
        OpError::BadInput(format!(
            "{} is not in a git repository: anchors are checked against its history",
            work.display()
        ))
    })?;
    let head = dirs.head_sha().unwrap_or_default();
    let now = UnixMillis::now();
    let list = |kinds: &[KnowledgeKind], limit| {
        let filter = KnowledgeFilter::standing_in(&project.key, kinds, limit);
        kstore::list_knowledge(store.conn(), &filter, now)
    };
    let records = list(
        &[KnowledgeKind::Decision, KnowledgeKind::Memory],
        MAX_RECORDS_WEIGHED,
    )?;
    let commits = list(&[KnowledgeKind::Commit], COMMITS_WEIGHED)?;
    let links = list(&[KnowledgeKind::Link], COMMITS_WEIGHED)?;
    let mut anchored = anchored(&records, &commits, &links);
    let mut stale = BTreeMap::new();
    let mut commits_read = 0;
    if let Some(oldest) = anchored.iter().map(|a| a.since).min()
        && !head.is_empty()
    {
        let history = gitlog::changes_since(
            &dirs.work,
            UnixMillis(oldest.0 - CLOCK_MARGIN_MS),
            MAX_COMMITS_READ,
        )
        .map_err(git_error)?;
        let tree = gitlog::files_at_head(&dirs.work).map_err(git_error)?;
        locate_symbols(&dirs.work, &mut anchored)?;
        commits_read = history.len();
        let graph = Graph::new(&history);
        for a in &anchored {
            let s = staleness_of(a, &graph, &tree);
            if s.is_stale() {
                stale.insert(a.record.id, s);
            }
        }
    }
    let report = Checked {
        head: head.clone(),
        anchored: anchored.len(),
        stale: stale.len(),
        commits_read,
    };
    store.write(|w| sstore::replace_project(w.tx(), &project.key, &head, now, &stale))?;
    Ok(report)
}

/// The records that speak of files, with the commits implementing them: those
/// whose trailers name them, and those linked to them as implementing them.
fn anchored<'a>(
    records: &'a [Knowledge],
    commits: &'a [Knowledge],
    links: &[Knowledge],
) -> Vec<Anchored<'a>> {
    let mut implementing: HashMap<KnowledgeId, Vec<&'a solaria_shared::knowledge::Commit>> =
        HashMap::new();
    let mut by_id: HashMap<KnowledgeId, &'a solaria_shared::knowledge::Commit> = HashMap::new();
    for k in commits {
        if let KnowledgeBody::Commit(c) = &k.body {
            by_id.insert(k.id, c);
            for d in &c.decisions {
                implementing.entry(*d).or_default().push(c);
            }
        }
    }
    for l in links {
        if let KnowledgeBody::Link(link) = &l.body
            && link.relation == solaria_shared::knowledge::LinkKind::Implements
            && let (Some(from), Some(to)) = (link.from, link.to)
            && let Some(c) = by_id.get(&from)
        {
            let list = implementing.entry(to).or_default();
            if !list.iter().any(|x| x.sha == c.sha) {
                list.push(c);
            }
        }
    }
    let mut out = Vec::new();
    for record in records {
        let Some(anchors) = record.anchors() else {
            continue;
        };
        let by = implementing
            .get(&record.id)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut files: Vec<String> = Vec::new();
        // Checked again whatever wrote them (a record pulled from elsewhere): only
        // paths inside the repository are looked for.
        let named = anchors
            .files
            .iter()
            .chain(by.iter().flat_map(|c| c.files.iter()));
        for f in named.filter_map(|f| check_anchor_file(f).ok()) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
        let mut symbols: Vec<String> = Vec::new();
        for sym in anchors
            .symbols
            .iter()
            .filter_map(|s| check_anchor_symbol(s).ok())
        {
            if !symbols.contains(&sym) {
                symbols.push(sym);
            }
        }
        if files.is_empty() && symbols.is_empty() {
            continue;
        }
        out.push(Anchored {
            record,
            files,
            symbols,
            symbols_gone: Vec::new(),
            head: &anchors.head,
            implemented_by: by.iter().map(|c| c.sha.as_str()).collect(),
            since: anchors.confirmed_at.unwrap_or(record.created_at),
            confirmed: anchors.confirmed_at.is_some(),
        });
    }
    out
}

/// Each record's symbols looked for at `HEAD` (one `git grep` for them all, at
/// most [`MAX_SYMBOLS_LOOKED`]): the files that hold a symbol join the record's
/// files, unless it is in so many that it names no place in particular; a symbol
/// found nowhere is said.
fn locate_symbols(work: &Path, anchored: &mut [Anchored<'_>]) -> OpResult<()> {
    let mut wanted: Vec<String> = Vec::new();
    for sym in anchored.iter().flat_map(|a| a.symbols.iter()) {
        if wanted.len() < MAX_SYMBOLS_LOOKED && !wanted.contains(sym) {
            wanted.push(sym.clone());
        }
    }
    let found = gitlog::symbol_files(work, &wanted).map_err(git_error)?;
    for a in anchored.iter_mut() {
        for sym in a.symbols.iter().filter(|s| wanted.contains(s)) {
            match found.get(sym) {
                None => a.symbols_gone.push(sym.clone()),
                Some(files) if files.len() <= MAX_FILES_PER_SYMBOL => {
                    for f in files {
                        if !a.files.contains(f) {
                            a.files.push(f.clone());
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// The commits read, as a graph of their parents (within what was read), with
/// the commits that touched each path (changed it, deleted it or renamed it away).
struct Graph<'a> {
    commits: &'a [Change],
    index: HashMap<&'a str, usize>,
    parents: Vec<Vec<usize>>,
    /// Newest first, as the log reads.
    by_path: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Graph<'a> {
    fn new(commits: &'a [Change]) -> Graph<'a> {
        let index: HashMap<&str, usize> = commits
            .iter()
            .enumerate()
            .map(|(i, c)| (c.sha.as_str(), i))
            .collect();
        let parents = commits
            .iter()
            .map(|c| {
                c.parents
                    .iter()
                    .filter_map(|p| index.get(p.as_str()).copied())
                    .collect()
            })
            .collect();
        let mut by_path: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, c) in commits.iter().enumerate() {
            for f in &c.files {
                by_path.entry(f.path.as_str()).or_default().push(i);
            }
        }
        Graph {
            commits,
            index,
            parents,
            by_path,
        }
    }

    /// The commits read that touched `path`, newest first.
    fn touching(&self, path: &str) -> &[usize] {
        self.by_path.get(path).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The commits read that `starts` (and each of them) descend from.
    fn ancestors(&self, starts: impl Iterator<Item = usize>) -> Vec<bool> {
        let mut seen = vec![false; self.commits.len()];
        let mut stack: Vec<usize> = starts.collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            stack.extend(self.parents[i].iter().copied().filter(|p| !seen[*p]));
        }
        seen
    }
}

fn staleness_of(a: &Anchored<'_>, graph: &Graph<'_>, tree: &HashSet<String>) -> Staleness {
    let implementing: HashSet<&str> = a.implemented_by.iter().copied().collect();
    let mut touching: Vec<usize> = a
        .files
        .iter()
        .flat_map(|f| graph.touching(f).iter().copied())
        .filter(|i| !implementing.contains(graph.commits[*i].sha.as_str()))
        .collect();
    touching.sort_unstable();
    touching.dedup();
    let gone: Vec<&String> = a.files.iter().filter(|f| !tree.contains(*f)).collect();
    // A symbol gone before a person confirmed the record was dropped from it then
    // (`super::anchors::confirmed`): one missing now is news.
    let mut s = Staleness {
        gone_symbols: a.symbols_gone.clone(),
        ..Staleness::default()
    };
    if touching.is_empty() && gone.is_empty() {
        return s;
    }
    let known_starts: Vec<usize> = std::iter::once(a.head)
        .chain(a.implemented_by.iter().copied())
        .filter_map(|sha| graph.index.get(sha).copied())
        .collect();
    let head_read = graph.index.contains_key(a.head);
    let known = graph.ancestors(known_starts.into_iter());
    // Commit times are in seconds: one made in the record's own second counts.
    let since_second = a.since.0 - a.since.0.rem_euclid(1000);
    let is_news =
        |i: usize| !known[i] && (head_read || graph.commits[i].committed_at.0 >= since_second);
    let news: Vec<usize> = touching.into_iter().filter(|i| is_news(*i)).collect();
    s.files = a
        .files
        .iter()
        .filter(|f| graph.touching(f).iter().any(|i| news.contains(i)))
        .cloned()
        .collect();
    s.commit_count = news.len();
    s.commits = news
        .iter()
        .take(MAX_COMMITS_KEPT)
        .map(|i| &graph.commits[*i])
        .map(|c| ChangeCommit {
            sha: c.sha.clone(),
            subject: redact(&c.subject).into_owned(),
            author: redact(&c.author).into_owned(),
            at: c.committed_at,
        })
        .collect();
    for path in gone {
        // The newest commit read that removed it says how.
        let removal = graph.touching(path).iter().find_map(|i| {
            graph.commits[*i]
                .files
                .iter()
                .find(|f| &f.path == path && matches!(f.status, 'D' | 'R'))
                .map(|f| (*i, f))
        });
        // Gone before a person confirmed the record is not news; gone before it
        // was written, and never confirmed, is said (a name that may be wrong).
        if !a.confirmed || removal.is_some_and(|(i, _)| is_news(i)) {
            s.gone.push(GoneFile {
                path: path.clone(),
                renamed_to: removal.and_then(|(_, f)| f.renamed_to.clone()),
                by: removal.map(|(i, _)| graph.commits[i].sha.clone()),
            });
        }
    }
    s
}

/// Sessions' directories looked at for a project's repository, newest first.
const DIRS_LOOKED_AT: usize = 200;

/// What the daemon last checked each project at (`HEAD` and its knowledge's
/// stamp), so a project neither committed to nor written to is not asked again.
#[derive(Debug, Default)]
pub struct Memo {
    seen: HashMap<String, (String, (i64, i64))>,
}

/// Checks every project this machine worked in whose repository is still here
/// and has moved since `memo` saw it; one line per check, or per failure.
pub fn check_due(store: &mut Store, memo: &mut Memo) -> OpResult<Vec<String>> {
    let dirs = sstore::session_dirs(store.conn(), store.machine_id(), DIRS_LOOKED_AT)?;
    let mut done: HashSet<String> = HashSet::new();
    let mut lines = Vec::new();
    for (project, cwd) in dirs {
        if done.contains(&project.key) {
            continue;
        }
        let Some(repo) = super::repository::repository_of_project(Path::new(&cwd), &project) else {
            continue;
        };
        done.insert(project.key.clone());
        let stamp = (
            repo.head_sha().unwrap_or_default(),
            sstore::knowledge_stamp(store.conn(), &project.key)?,
        );
        if memo.seen.get(&project.key) == Some(&stamp) {
            continue;
        }
        // Whatever the outcome, not asked again until something moves: a broken
        // repository is not re-read every pass.
        memo.seen.insert(project.key.clone(), stamp);
        match check(store, &project, &repo.work) {
            Ok(c) if c.anchored > 0 => lines.push(format!(
                "{}: {} of {} anchored record(s) changed since ({} commit(s) read)",
                project.key, c.stale, c.anchored, c.commits_read
            )),
            Ok(_) => {}
            Err(e) => lines.push(format!("{}: {e}", project.key)),
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use solaria_shared::hlc::Hlc;
    use solaria_shared::knowledge::Decision;
    use solaria_shared::{MachineId, Project};

    fn change(sha: &str, parent: &str, at_s: i64, path: &str, status: char) -> Change {
        Change {
            sha: sha.into(),
            parents: vec![parent.into()],
            author: "Ada".into(),
            committed_at: UnixMillis(at_s * 1000),
            subject: format!("touch {path}"),
            files: vec![gitlog::FileChange {
                path: path.into(),
                status,
                renamed_to: None,
            }],
        }
    }

    fn decision(written_at: i64) -> Knowledge {
        let mut k = Knowledge::new(
            KnowledgeId::new(),
            MachineId::new(),
            Hlc::new(written_at as u64, 0),
            Project {
                key: "k".into(),
                name: "k".into(),
            },
            None,
            KnowledgeBody::Decision(Decision::default()),
        );
        k.created_at = UnixMillis(written_at);
        k
    }

    #[test]
    fn history_not_the_clock_says_what_came_after_a_record() {
        // Newest first: c3 (a clock an hour behind) and c2 came after the record,
        // written at c1; c0 before it, with a clock a day ahead.
        let history = vec![
            change("c3", "c2", 1_000, "src/a.rs", 'M'),
            change("c2", "c1", 5_000, "src/b.rs", 'M'),
            change("c1", "c0", 4_000, "src/c.rs", 'M'),
            change("c0", "", 90_000, "src/a.rs", 'M'),
        ];
        let graph = Graph::new(&history);
        let record = decision(4_500_000);
        let tree: HashSet<String> = ["src/a.rs", "src/c.rs"].map(String::from).into();
        let anchored = |head: &'static str, implemented_by: Vec<&'static str>| Anchored {
            record: &record,
            files: vec!["src/a.rs".into(), "src/b.rs".into()],
            symbols: Vec::new(),
            symbols_gone: Vec::new(),
            head,
            implemented_by,
            since: record.created_at,
            confirmed: false,
        };
        let s = staleness_of(&anchored("c1", vec![]), &graph, &tree);
        assert_eq!(s.commit_count, 2, "{s:?}");
        assert_eq!(s.commits[0].sha, "c3");
        assert_eq!(s.files, vec!["src/a.rs", "src/b.rs"]);
        assert_eq!(
            s.gone.first().map(|g| g.path.as_str()),
            Some("src/b.rs"),
            "never confirmed, a file not at HEAD is said"
        );
        // What implements it is not news, nor is what came before that.
        let s = staleness_of(&anchored("c1", vec!["c2"]), &graph, &tree);
        assert_eq!(
            s.commits.iter().map(|c| c.sha.as_str()).collect::<Vec<_>>(),
            ["c3"]
        );
        let s = staleness_of(&anchored("c1", vec!["c3"]), &graph, &tree);
        assert_eq!(s.commit_count, 0, "{s:?}");
        // Where HEAD was is unknown here: the clocks decide, c0's included.
        let s = staleness_of(&anchored("elsewhere", vec![]), &graph, &tree);
        assert_eq!(
            s.commits.iter().map(|c| c.sha.as_str()).collect::<Vec<_>>(),
            ["c2", "c0"]
        );
    }
}
