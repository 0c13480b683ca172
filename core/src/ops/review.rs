//! `solaria review` and the viewer's "To review": what a person should look at
//! again — standing decisions and memories whose code changed since they were
//! written or confirmed (`super::staleness`), and pairs of a new record and a
//! standing one close to it in subject (`super::close_pairs`) — each with what
//! they can do about it.

use super::OpResult;
use super::close_pairs;
use crate::app::App;
use crate::present::knowledge::{ReviewPage, ToReview};
use crate::store::close_pairs::PendingPair;
use crate::store::knowledge as kstore;
use crate::store::staleness as sstore;
use solaria_shared::UnixMillis;

/// Which projects a review covers.
#[derive(Debug, Clone, Default)]
pub enum ReviewScope {
    /// The current directory's project (the CLI without `--project`).
    #[default]
    Current,
    /// A project as `--project` names it.
    Named(String),
    /// Every project (the viewer without a project).
    Every,
}

/// What to review in `scope`, newest first. Run in a project's repository, its
/// git is asked first (so the list is as of `HEAD`); elsewhere it is what the
/// daemon last found.
pub fn review(app: &App, scope: &ReviewScope) -> OpResult<ReviewPage> {
    let mut store = app.store()?;
    let project = match scope {
        ReviewScope::Every => None,
        ReviewScope::Current => Some(app.current_project()),
        ReviewScope::Named(name) => Some(super::knowledge::project_of(
            app,
            &store,
            &super::knowledge::Scope {
                project: Some(name.clone()),
            },
        )?),
    };
    let here = project.as_ref().and_then(|p| {
        let dir = std::env::current_dir().ok()?;
        super::repository::repository_of_project(&dir, p).map(|repo| (p, repo))
    });
    let checked_now = match here {
        Some((p, repo)) => Some(super::staleness::check(&mut store, p, &repo.work)?),
        None => None,
    };
    let key = project.as_ref().map(|p| p.key.as_str());
    let now = UnixMillis::now();
    let mut names = super::MachineNames::new(&store);
    let mut items = Vec::new();
    for (id, changed) in sstore::of_projects(store.conn(), key)? {
        if let Some(k) = kstore::get_knowledge(store.conn(), id)?
            && k.stands(now)
        {
            names.name(k.meta.machine_id);
            items.push(ToReview { record: k, changed });
        }
    }
    items.sort_by_key(|i| std::cmp::Reverse(i.record.created_at));
    let pairs: Vec<PendingPair> = close_pairs::pending(&store, key)?;
    for p in &pairs {
        names.name(p.record.meta.machine_id);
        names.name(p.standing.meta.machine_id);
    }
    Ok(ReviewPage {
        project,
        history_cut: checked_now
            .as_ref()
            .filter(|c| c.cut_short())
            .map(|c| c.commits_read),
        head: checked_now.map(|c| c.head),
        items,
        pairs,
        machines: names.labels(),
    })
}
