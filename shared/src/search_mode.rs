//! How a search finds records: by words, by meaning, or both. A setting of the
//! edge's config (`[search] default_mode`), a choice of every search surface, and
//! a field of a search sent to the central service, so both sides read it here.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How a search finds records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Words only (FTS5).
    Lexical,
    /// Meaning only (nearest vectors).
    Semantic,
    /// Both, fused.
    Hybrid,
}

impl SearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Lexical => "lexical",
            SearchMode::Semantic => "semantic",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SearchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "lexical" => Ok(SearchMode::Lexical),
            "semantic" => Ok(SearchMode::Semantic),
            "hybrid" => Ok(SearchMode::Hybrid),
            other => Err(format!(
                "unknown search mode `{other}` (expected lexical, semantic or hybrid)"
            )),
        }
    }
}
