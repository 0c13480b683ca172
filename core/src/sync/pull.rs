//! Pull, as the sync guide names it: the account's change feed since the last
//! pull, a page at a time, each applied with last-write-wins in the transaction
//! that moves the pull cursor, with the vectors that come beside the records.

use super::{FEED_TYPES_KEY, PULL_PAGE, Progress, Server, SyncError, SyncReport};
use crate::store::Store;
use crate::store::sync::{self as store_sync, PULL_CURSOR_KEY, PUSH_CURSOR_KEY};
use crate::store::{vectors, vectors_wire};
use solaria_shared::wire::WireRecord;

/// Pulls the feed to its end; how many records it erased here.
pub(super) fn changes(
    store: &mut Store,
    server: &Server<'_>,
    report: &mut SyncReport,
    progress: &mut impl FnMut(Progress),
) -> Result<usize, SyncError> {
    // A machine that pulled asking for other types than it asks for now (an edge
    // of the first release, since upgraded, which knew no knowledge records;
    // `team_observations` just turned on) reads the feed once more from the start:
    // its cursor went past what the server left out for it. Re-applying what it
    // already holds changes nothing (last write wins).
    let feed_types = server.options.feed_types();
    let knew_types =
        store_sync::state(store.conn(), FEED_TYPES_KEY)?.as_deref() == Some(feed_types.as_str());
    if server.stores_knowledge && !knew_types {
        store.write(|w| w.set_state(PULL_CURSOR_KEY, "0"))?;
    }
    let mut erased = 0;
    // Vectors are asked for by this index's model (the caller readied the index
    // for the installed model); another model's are never sent, nor stored.
    let index = if server.stores_vectors {
        vectors::index_model(store.conn())?
    } else {
        None
    };
    let centre = vectors::centre(store.conn())?.unwrap_or_default();
    let asked_vectors = index
        .as_ref()
        .map(|m| (m.fingerprint.as_str(), server.vector_encoding));
    loop {
        server.check_time()?;
        let since = store_sync::cursor(store.conn(), PULL_CURSOR_KEY)?;
        let page =
            server
                .client
                .changes(&server.jwt, since, PULL_PAGE, &feed_types, asked_vectors)?;
        let records: Vec<WireRecord> = page.changes.into_iter().map(|c| c.record).collect();
        let push_cursor = store_sync::cursor(store.conn(), PUSH_CURSOR_KEY)?;
        let (applied, pulled) = store.write(|w| {
            let applied = w.apply_remote(&records, push_cursor)?;
            w.count_foreign(applied.foreign)?;
            let pulled = match &index {
                Some(model) => {
                    vectors_wire::store_pulled(w.tx(), model, &centre, &page.embeddings)?
                }
                None => vectors_wire::Pulled::default(),
            };
            w.set_state(PULL_CURSOR_KEY, &page.next.to_string())?;
            Ok((applied, pulled))
        })?;
        report.vectors_pulled += pulled.stored;
        report.vectors_refused.extend(pulled.refused);
        report.pulled += applied.stored;
        report.conflicts += applied.conflicts;
        erased += applied.erased;
        report.refused_pulled.extend(applied.refused);
        progress(Progress::Pulled {
            done: report.pulled,
        });
        if !page.more {
            break;
        }
    }
    if server.stores_knowledge && !knew_types {
        store.write(|w| w.set_state(FEED_TYPES_KEY, &feed_types))?;
    }
    Ok(erased)
}
