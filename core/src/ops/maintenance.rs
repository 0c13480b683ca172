//! Upkeep asked for by hand: the sync conflicts to review (`solaria conflicts`),
//! retention applied now (`solaria prune`) and the embedding pass in the foreground
//! (`solaria embed`), as typed results `crate::present::maintenance` words.

use super::{MachineNames, OpError, OpResult};
use crate::app::App;
use crate::present::maintenance::{ConflictsPage, EmbedReport, PruneReport};
use crate::semantic::{self, PassOptions, PassReport};
use crate::store::vectors::{self, EmbedBound};
use crate::store::{retention, sync as store_sync};
use solaria_shared::UnixMillis;
use std::time::{Duration, Instant};

/// The conflicts recorded here, newest first; `all` includes those already seen.
pub fn conflicts(app: &App, all: bool) -> OpResult<ConflictsPage> {
    let store = app.store()?;
    let conflicts = store_sync::conflicts(store.conn(), all)?;
    let mut names = MachineNames::new(&store);
    let winners = conflicts
        .iter()
        .map(|c| {
            c.winner_machine
                .parse()
                .map(|m| names.name(m))
                .unwrap_or_default()
        })
        .collect();
    Ok(ConflictsPage {
        conflicts,
        winners,
        now: UnixMillis::now(),
    })
}

/// Marks conflicts as seen (every one when `ids` is empty); how many were marked.
pub fn acknowledge_conflicts(app: &App, ids: &[i64]) -> OpResult<usize> {
    Ok(app.store()?.write(|w| w.acknowledge_conflicts(ids))?)
}

/// Applies the retention policy now, or (`dry_run`) says what it would remove.
pub fn prune(app: &App, dry_run: bool) -> OpResult<PruneReport> {
    let retention = app.retention();
    let pruned = if !retention.is_on() {
        None
    } else {
        let now = UnixMillis::now();
        let mut store = app.store()?;
        Some(if dry_run {
            retention::plan(&store, &retention, now)?
        } else {
            retention::prune(&mut store, &retention, now)?
        })
    };
    Ok(PruneReport {
        retention,
        pruned,
        dry_run,
    })
}

/// Makes the vectors records wait for, within `budget`; `all` also embeds records
/// older than `[retention] embeddings_days` when it is set. `progress` sees each batch's running count.
pub fn embed(
    app: &App,
    all: bool,
    budget: Option<Duration>,
    progress: impl FnMut(&PassReport),
) -> OpResult<EmbedReport> {
    let model = semantic::load_model(&app.config, &app.paths)
        .map_err(semantic::SemanticError::from)?
        .ok_or_else(|| OpError::NoModel(semantic::model_dir(&app.config, &app.paths)))?;
    let mut store = app.store()?;
    if all {
        // Records past the embeddings' retention left the queue without a vector.
        vectors::queue_missing(&mut store)?;
    }
    let started = Instant::now();
    let options = PassOptions {
        batch: app.config.search.embed_batch,
        bound: if all {
            EmbedBound::Every
        } else {
            semantic::embed_bound(&app.config)
        },
        budget: budget.unwrap_or(Duration::from_secs(u64::MAX / 4)),
    };
    let pass = semantic::run_pass(&mut store, &model, options, progress)?;
    Ok(EmbedReport {
        pass,
        took: started.elapsed(),
    })
}
