//! Contradictions proposed, never silent: a decision or memory just written is set
//! beside the standing ones of its project close to it in subject (by words, and
//! by meaning when the daemon's model gives the new text's vector), and each such
//! pair is shown to the person with what they can do — supersede the old one,
//! keep both, or link them — and waits in `solaria review` until they choose.
//! Nothing is superseded here: only a person's or the writing agent's act does.
//! What "close" means is decided in [`close`], once.

use super::OpResult;
use crate::app::App;
use crate::store::both_ways::{self, BothWays};
use crate::store::close_pairs::{self as pstore, Close, Closeness, PendingPair};
use crate::store::rarity::Rarity;
use crate::store::search::{RecordType, SearchQuery};
use crate::store::{Store, knowledge as kstore};
use solaria_shared::{Knowledge, KnowledgeBody, KnowledgeId, KnowledgeKind, UnixMillis};

/// The most pairs one write proposes.
pub const MOST_PAIRS: usize = 3;
/// Candidates read before the rule, by words and by meaning each.
const CANDIDATES: usize = 10;
/// The least closeness, on recall's one score of words and meaning
/// (`RecallConfig::score`), at which two records of the same kind are proposed as
/// a pair: above recall's minimum, since a pair asks a person to act. "Store
/// sessions in Redis" and "Store sessions in PostgreSQL" share most of their
/// weighed words; "Store uploads in S3" shares one with either.
pub const MIN_CLOSENESS: f64 = 0.5;
/// The least closeness of a pair whose new record names an option the other set
/// aside (or the other way round): that alone says they are about one choice.
const MIN_CLOSENESS_NAMING_OPTION: f64 = 0.2;

/// The words that say what a record is about: a decision's title and choice, a
/// memory's content. The rationale and context would dilute the share.
fn subject(k: &Knowledge) -> Option<String> {
    match &k.body {
        KnowledgeBody::Decision(d) => Some(format!("{}. {}", d.title, d.chosen)),
        KnowledgeBody::Memory(m) => {
            Some(super::distill::without_proposal_mark(&m.content).to_string())
        }
        _ => None,
    }
}

/// Whether `found` is close enough to `record` to propose them as a pair, and how.
/// The one rule: same kind (only a record of its kind can supersede another),
/// both standing, and a closeness of at least [`MIN_CLOSENESS`], or of
/// [`MIN_CLOSENESS_NAMING_OPTION`] when one decision names an option the other set
/// aside.
/// Its score comes with it, to rank the pairs.
fn close(
    app: &App,
    record: &Knowledge,
    other: &Knowledge,
    found: &BothWays,
) -> Option<(f64, Closeness)> {
    if other.id == record.id || other.kind() != record.kind() || record.replaces() == Some(other.id)
    {
        return None;
    }
    let names_option = match (&record.body, &other.body) {
        (KnowledgeBody::Decision(new), KnowledgeBody::Decision(old)) => old
            .option_set_aside_in(&subject(record)?)
            .or_else(|| new.option_set_aside_in(&subject(other).unwrap_or_default()))
            .map(str::to_string),
        _ => None,
    };
    let score = app.config.recall.score(found.words, found.meaning);
    let least = if names_option.is_some() {
        MIN_CLOSENESS_NAMING_OPTION
    } else {
        MIN_CLOSENESS
    };
    (score >= least).then_some((
        score,
        Closeness {
            words: found.words,
            meaning: found.meaning,
            names_option,
        },
    ))
}

/// The standing records of `record`'s project close to it, closest first (those
/// naming a set-aside option before the rest), at most [`MOST_PAIRS`].
pub fn find(app: &App, store: &Store, record: &Knowledge) -> OpResult<Vec<Close>> {
    let (Some(text), Some(record_type)) = (subject(record), record_type_of(record.kind())) else {
        return Ok(Vec::new());
    };
    let conn = store.conn();
    let vector = meaning_of(app, store, &text);
    let query = SearchQuery {
        text: text.clone(),
        record_type: Some(record_type),
        limit: CANDIDATES,
        current_project: Some(record.project.key.clone()),
        ..SearchQuery::default()
    };
    let weights = Rarity::of(conn, &text)?;
    let found = both_ways::candidates(
        conn,
        &query,
        Some(&record.project.key),
        &weights,
        vector.as_deref(),
    )?;
    let now = UnixMillis::now();
    let mut out: Vec<(f64, Close)> = Vec::new();
    for f in &found {
        let Ok(id) = f.hit.id.parse::<KnowledgeId>() else {
            continue;
        };
        let Some(other) = kstore::get_knowledge(conn, id)? else {
            continue;
        };
        if !other.stands(now) || out.iter().any(|(_, c)| c.standing.id == other.id) {
            continue;
        }
        if let Some((score, closeness)) = close(app, record, &other, f) {
            out.push((
                score,
                Close {
                    standing: other,
                    closeness,
                },
            ));
        }
    }
    out.sort_by(|(a, x), (b, y)| {
        y.closeness
            .names_option
            .is_some()
            .cmp(&x.closeness.names_option.is_some())
            .then(b.total_cmp(a))
    });
    out.truncate(MOST_PAIRS);
    Ok(out.into_iter().map(|(_, c)| c).collect())
}

/// The pairs of `record` (just written) found and kept to review.
pub fn propose(app: &App, record: &Knowledge) -> OpResult<Vec<Close>> {
    let mut store = app.store()?;
    let close = find(app, &store, record)?;
    if close.is_empty() {
        return Ok(close);
    }
    let pairs: Vec<(KnowledgeId, Closeness)> = close
        .iter()
        .map(|c| (c.standing.id, c.closeness.clone()))
        .collect();
    store.write(|w| {
        pstore::propose(
            w.tx(),
            record.id,
            &record.project.key,
            UnixMillis::now(),
            &pairs,
        )
    })?;
    Ok(close)
}

fn record_type_of(kind: KnowledgeKind) -> Option<RecordType> {
    match kind {
        KnowledgeKind::Decision => Some(RecordType::Decision),
        KnowledgeKind::Memory => Some(RecordType::Memory),
        _ => None,
    }
}

/// `text`'s vector by the running daemon's model, when that model made the stored
/// vectors: a write never loads a model itself, so without a daemon the pairs are
/// found by words alone.
fn meaning_of(app: &App, store: &Store, text: &str) -> Option<Vec<f32>> {
    let index = crate::store::vectors::index_model(store.conn()).ok()??;
    let vector = super::daemon_client::embed(&app.paths, text)?;
    (vector.model == index.fingerprint).then_some(vector.values)
}

/// The pairs waiting in `project_key` (every project's when `None`), newest
/// first. A pair one of whose records no longer stands (superseded, retracted,
/// expired, forgotten) has been settled by that and is left out.
pub fn pending(store: &Store, project_key: Option<&str>) -> OpResult<Vec<PendingPair>> {
    let now = UnixMillis::now();
    let mut out = Vec::new();
    for p in pstore::pending(store.conn(), project_key)? {
        let (Some(record), Some(standing)) = (
            kstore::get_knowledge(store.conn(), p.record)?,
            kstore::get_knowledge(store.conn(), p.standing)?,
        ) else {
            continue;
        };
        if record.stands(now) && standing.stands(now) {
            out.push(PendingPair {
                record,
                standing,
                closeness: p.closeness,
            });
        }
    }
    Ok(out)
}

/// Keeps two records a write proposed as a pair, both standing (`solaria
/// keep-both A B`): a person's word that they do not contradict. Only the pair
/// is settled; neither record changes.
pub fn keep_both(app: &App, a: &str, b: &str) -> OpResult<(Knowledge, Knowledge)> {
    super::person_only(app, "keeping both", "solaria keep-both")?;
    let mut store = app.store()?;
    let first = super::reference::find_one(&store, a, None)?;
    let second = super::reference::find_one(&store, b, None)?;
    if !store.write(|w| pstore::settle(w.tx(), first.id, second.id))? {
        return Err(super::OpError::BadInput(format!(
            "{} and {} are not a pair waiting to be settled (`solaria review` lists them)",
            first.citation(),
            second.citation()
        )));
    }
    Ok((first, second))
}
