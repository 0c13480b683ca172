//! How rare a prompt's words are in the whole store, and what share of that weight
//! a record holds: recall's score by words (`ops::recall`), one threshold for every
//! prompt.

use super::StoreError;
use super::held::held_share;
use super::search::{
    SearchQuery, Table, bm25_idf, doc_freq, newest_matches, query_terms, rowid_range, term_exprs,
};
use rusqlite::Connection;

/// How rare each term of a text ([`query_terms`]) is in the whole store, every
/// table and project (a word a developer types every day is common however few
/// decisions hold it), as bm25's inverse document frequency. A term no record
/// holds weighs as one that a single record holds: its rarity is unknown, and in
/// a small memory an unknown word would otherwise outweigh every known one.
#[derive(Debug, Clone, PartialEq)]
pub struct Rarity(Vec<f64>);

impl Rarity {
    /// The rarity of `text`'s terms in the store as it is now.
    pub fn of(conn: &Connection, text: &str) -> Result<Rarity, StoreError> {
        let terms = query_terms(text);
        let mut holding = vec![0.0; terms.len()];
        let mut rows = 0.0;
        let everything = SearchQuery::default();
        for table in Table::ALL {
            let Some((min_rowid, max_rowid)) = rowid_range(conn, table)? else {
                continue;
            };
            let table_rows = (max_rowid - min_rowid + 1) as f64;
            rows += table_rows;
            for (i, (expr, _)) in term_exprs(conn, table, &terms)?.iter().enumerate() {
                let expr = format!("{} : ({expr})", table.text_columns());
                let list = newest_matches(conn, table, &expr, &everything)?;
                holding[i] += doc_freq(&list, table_rows, max_rowid);
            }
        }
        Ok(Rarity(
            holding
                .into_iter()
                .map(|df| bm25_idf(df.max(1.0), rows).max(0.0))
                .collect(),
        ))
    }

    /// The share of the text's weight a record holds, 0..=1: the rarity of the
    /// terms it holds (bits of `held`; those in its title, `held_in_title`, count
    /// in full, others at half) over that of every term held in a title. What
    /// recall's minimum score is compared with.
    pub(super) fn share(&self, held: u32, held_in_title: u32) -> f64 {
        held_share(&self.0, held, held_in_title)
    }
}
