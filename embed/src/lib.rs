//! Sentence embeddings in process: a BERT-family sentence-transformers model read
//! from a directory (no download, no sidecar), pooled and L2-normalised.
//!
//! The model is whatever the directory holds: dimension from `config.json`, pooling
//! from `1_Pooling/config.json`, sequence limit from `sentence_bert_config.json`, so
//! swapping all-MiniLM-L6-v2 for a multilingual model of the same family is a
//! matter of pointing at another directory. [`ModelInfo::fingerprint`] changes when
//! the model does, which is how the store knows its vectors are stale.

mod bert;
mod files;
mod model;

pub use files::{MODEL_FILES, ModelFiles, ModelStatus};
pub use model::{Embedder, ModelInfo, Pooling, describe};

/// Errors of loading a model or embedding text.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model file {path} is missing (run `solaria model install`)")]
    Missing { path: std::path::PathBuf },
    #[error("cannot read {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid model configuration: {reason}")]
    BadConfig {
        path: std::path::PathBuf,
        reason: String,
    },
    #[error("unsupported model: {0}")]
    Unsupported(String),
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// The weights do not load (corrupt, truncated, wrong shapes) or a computation
    /// failed. Not marked as the source: candle's message already carries its
    /// cause, and error chains would print it two or three times.
    #[error("the model's weights do not load or run: {0}")]
    Model(candle_core::Error),
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> EmbedError {
        EmbedError::Model(e)
    }
}

/// Cosine similarity of two vectors (the dot product, for normalised ones).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}
