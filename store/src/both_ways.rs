//! A prompt's candidates for recall, each measured both ways: the share of the
//! prompt's words it holds and, when the prompt's vector is at hand, its
//! similarity in meaning. Found by either way, measured by both, so that recall
//! can weigh one score of the two (`solaria_shared::ranking::recall_score`).

use super::StoreError;
use super::hybrid::{self, key};
use super::rarity::Rarity;
use super::search::{self, Hit, Resolved, SearchQuery};
use super::vectors;
use rusqlite::Connection;
use std::collections::HashMap;

/// A candidate and how it matches the prompt.
#[derive(Debug, Clone)]
pub struct BothWays {
    pub hit: Hit,
    /// The share of the prompt's weighed words the record holds, 0..=1 (0 when it
    /// holds none of them, [`Rarity::share`]).
    pub words: f64,
    /// Its similarity in meaning measured from the model's centre
    /// ([`vectors::centred_cosine`]); `None` without the prompt's vector or the
    /// record's.
    pub meaning: Option<f64>,
}

/// The records of `q`'s filters (of the project `project_key` alone, when given)
/// that hold the most of the prompt's words, and with `vector` those nearest it in
/// meaning: at most `q.limit` of each, every one measured both ways. `weights` is
/// the prompt's [`Rarity`].
pub fn candidates(
    conn: &Connection,
    q: &SearchQuery,
    project_key: Option<&str>,
    weights: &Rarity,
    vector: Option<&[f32]>,
) -> Result<Vec<BothWays>, StoreError> {
    let limit = q.limit.clamp(1, 500);
    let Some(resolved) = Resolved::within(conn, q, project_key)? else {
        return Ok(Vec::new());
    };
    let vector = vector.filter(|v| !v.is_empty());
    let centre = vectors::centre(conn)?.unwrap_or_default();
    let similarity = |table, rowid| -> Result<Option<f64>, StoreError> {
        let (Some(v), Some(source)) = (vector, hybrid::source_of(table)) else {
            return Ok(None);
        };
        Ok(vectors::stored_vector(conn, source, rowid, v.len())?
            .map(|stored| vectors::centred_cosine(&stored, v, &centre)))
    };

    let mut lexical = search::lexical_candidates(conn, &resolved, limit)?;
    lexical.sort_by(|a, b| {
        b.hit
            .score
            .total_cmp(&a.hit.score)
            .then(b.hit.created_at.cmp(&a.hit.created_at))
    });
    lexical.truncate(limit);
    let mut out = Vec::new();
    let mut at: HashMap<(u8, i64), usize> = HashMap::new();
    for c in lexical {
        at.insert(key(&c), out.len());
        out.push(BothWays {
            words: weights.share(c.held, c.held_in_title),
            meaning: similarity(c.table, c.rowid)?,
            hit: c.hit,
        });
    }
    if let Some(v) = vector {
        let mut near = Vec::new();
        for n in hybrid::neighbours(conn, &resolved, v, limit)? {
            if let Some(s) = similarity(n.candidate.table, n.candidate.rowid)? {
                near.push((n.candidate, s));
            }
        }
        near.sort_by(|a, b| b.1.total_cmp(&a.1));
        near.truncate(limit);
        for (c, s) in near {
            match at.get(&key(&c)) {
                Some(&i) => out[i].meaning = Some(s),
                // Not among the records holding the most words: it holds none, or
                // fewer than `limit` others (its share is then taken as none).
                None => out.push(BothWays {
                    hit: c.hit,
                    words: 0.0,
                    meaning: Some(s),
                }),
            }
        }
    }
    Ok(out)
}
