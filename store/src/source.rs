//! Which of the store's tables a vector belongs to: the `source` column of the
//! vector queue, the vec0 tables that hold each one's vectors, and how each is
//! named. `gist` (what is embedded) and `vectors` (where it is kept) both speak of it.

/// Which table a vector belongs to (the `source` column of the queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    Observations,
    Summaries,
    /// Decisions, memories, commits and iterations (not links or events).
    Knowledge,
}

impl Source {
    pub const ALL: [Source; 3] = [Source::Observations, Source::Summaries, Source::Knowledge];

    pub(super) fn code(self) -> i64 {
        match self {
            Source::Observations => 0,
            Source::Summaries => 1,
            Source::Knowledge => 2,
        }
    }

    pub(super) fn from_code(code: i64) -> Option<Source> {
        match code {
            0 => Some(Source::Observations),
            1 => Some(Source::Summaries),
            2 => Some(Source::Knowledge),
            _ => None,
        }
    }

    /// The vec0 table holding this source's first-pass keys (sign bits).
    pub fn vector_table(self) -> &'static str {
        match self {
            Source::Observations => "observation_vectors",
            Source::Summaries => "summary_vectors",
            Source::Knowledge => "knowledge_vectors",
        }
    }

    /// The plain table holding this source's float vectors, by record rowid: a
    /// B-tree point lookup is what rescoring needs (a vec0 lookup reads its chunk).
    pub fn float_table(self) -> &'static str {
        match self {
            Source::Observations => "observation_embeddings",
            Source::Summaries => "summary_embeddings",
            Source::Knowledge => "knowledge_embeddings",
        }
    }

    pub(super) fn base(self) -> &'static str {
        match self {
            Source::Observations => "observations",
            Source::Summaries => "summaries",
            Source::Knowledge => "knowledge",
        }
    }

    /// Which live records of the table are embedded (the queue's triggers agree).
    pub(super) fn embedded_sql(self) -> &'static str {
        match self {
            Source::Observations | Source::Summaries => "deleted = 0",
            Source::Knowledge => "deleted = 0 AND kind NOT IN ('link', 'event')",
        }
    }
}
