//! Record vectors on the wire: a vector made on one machine travels beside its
//! record, so that another machine with the same model searches by meaning at
//! once instead of embedding everything again.
//!
//! A vector is derived data, never part of a record's last-write-wins content: it
//! names the record version it was made from ([`WireEmbedding::updated`]) and is
//! worth keeping only while that version is the record's current one. Both sides
//! check a vector with [`WireEmbedding::decode`] before they store it; a refused
//! vector never stops its record.

use crate::hlc::Hlc;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The capability a server lists in `TokenResponse::types` when it stores vectors
/// and serves them; an edge sends vectors only to such a server, and asks for
/// them (`embeddings=FINGERPRINT` on the change feed) only from it.
pub const EMBEDDINGS_CAPABILITY: &str = "embeddings";

/// The largest dimension accepted (sentence models use 384 to 1024).
pub const MAX_DIMENSION: usize = 4096;

/// The longest model fingerprint accepted.
pub const MAX_MODEL_LEN: usize = 200;

/// How far a vector's length may be from 1 (the models' vectors are normalised).
const NORM_TOLERANCE: f64 = 1e-3;

/// One record's vector as it travels: the model that made it, its dimension, the
/// record version it was made from, and the values as base64 of little-endian
/// 32-bit floats (exactly what the edge stores, so a pulled vector is the one the
/// sender searches with).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireEmbedding {
    /// The record's id.
    pub id: Uuid,
    /// The record's version stamp when its text was embedded.
    pub updated: Hlc,
    /// The model's fingerprint (`ModelInfo::fingerprint`: name, dimension, weights).
    pub model: String,
    pub dimension: usize,
    /// base64 (standard alphabet, padded) of `dimension` little-endian f32.
    pub data: String,
}

/// Why a vector was refused (its record is applied all the same).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbeddingError {
    #[error("the vector's model fingerprint is empty or longer than {MAX_MODEL_LEN} characters")]
    BadModel,
    #[error("the vector's dimension {0} is outside 1..={MAX_DIMENSION}")]
    BadDimension(usize),
    #[error("the vector's data is not base64: {0}")]
    NotBase64(String),
    #[error(
        "the vector holds {got} bytes where dimension {dimension} needs {}: truncated or corrupt",
        dimension * 4
    )]
    WrongLength { dimension: usize, got: usize },
    #[error("the vector holds a value that is not a finite number (at {0})")]
    NotFinite(usize),
    #[error("the vector's length is {0:.4}, not 1: it is not a normalised embedding")]
    NotUnit(f64),
}

/// A vector refused by the server on push: which record's, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingRefusal {
    pub id: Uuid,
    pub reason: String,
}

impl WireEmbedding {
    /// The wire form of `vector`, made from version `updated` of record `id`.
    pub fn encode(id: Uuid, updated: Hlc, model: &str, vector: &[f32]) -> WireEmbedding {
        let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        WireEmbedding {
            id,
            updated,
            model: model.to_string(),
            dimension: vector.len(),
            data: STANDARD.encode(bytes),
        }
    }

    /// The values, if the vector is well formed: a fingerprint, a plausible
    /// dimension, exactly `4 × dimension` bytes, every value finite, length ≈ 1.
    pub fn decode(&self) -> Result<Vec<f32>, EmbeddingError> {
        if self.model.is_empty() || self.model.len() > MAX_MODEL_LEN {
            return Err(EmbeddingError::BadModel);
        }
        if self.dimension == 0 || self.dimension > MAX_DIMENSION {
            return Err(EmbeddingError::BadDimension(self.dimension));
        }
        // Refuse an oversized text before decoding it.
        if self.data.len() > (self.dimension * 4).div_ceil(3) * 4 {
            return Err(EmbeddingError::WrongLength {
                dimension: self.dimension,
                got: self.data.len() / 4 * 3,
            });
        }
        let bytes = STANDARD
            .decode(&self.data)
            .map_err(|e| EmbeddingError::NotBase64(e.to_string()))?;
        if bytes.len() != self.dimension * 4 {
            return Err(EmbeddingError::WrongLength {
                dimension: self.dimension,
                got: bytes.len(),
            });
        }
        let values: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if let Some(at) = values.iter().position(|x| !x.is_finite()) {
            return Err(EmbeddingError::NotFinite(at));
        }
        let norm = values
            .iter()
            .map(|x| f64::from(*x) * f64::from(*x))
            .sum::<f64>()
            .sqrt();
        if (norm - 1.0).abs() > NORM_TOLERANCE {
            return Err(EmbeddingError::NotUnit(norm));
        }
        Ok(values)
    }

    /// Whether this vector was made by the model `model` of dimension `dimension`.
    pub fn is_of(&self, model: &str, dimension: usize) -> bool {
        self.model == model && self.dimension == dimension
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim).map(|i| ((i as f32) + 0.5).sin()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    fn wire(v: &[f32]) -> WireEmbedding {
        WireEmbedding::encode(Uuid::nil(), Hlc::new(5, 1), "m/384d/abc", v)
    }

    #[test]
    fn a_vector_survives_the_wire_bit_for_bit() {
        let v = unit(384);
        let w = wire(&v);
        assert_eq!(w.dimension, 384);
        assert_eq!(w.data.len(), 2048);
        let json = serde_json::to_string(&w).expect("serialises");
        let back: WireEmbedding = serde_json::from_str(&json).expect("parses");
        assert_eq!(back.decode().expect("valid"), v);
    }

    #[test]
    fn a_truncated_or_damaged_vector_is_refused_with_its_reason() {
        let v = unit(384);
        let mut short = wire(&v);
        short.data.truncate(2000);
        let err = short.decode().expect_err("truncated");
        assert!(err.to_string().contains("truncated or corrupt"), "{err}");

        let mut other_dim = wire(&v);
        other_dim.dimension = 768;
        assert!(matches!(
            other_dim.decode(),
            Err(EmbeddingError::WrongLength {
                dimension: 768,
                got: 1536
            })
        ));

        let mut garbage = wire(&v);
        garbage.data = "not base64 at all!".into();
        assert!(matches!(
            garbage.decode(),
            Err(EmbeddingError::NotBase64(_))
        ));

        let mut nan = v.clone();
        nan[7] = f32::NAN;
        assert_eq!(wire(&nan).decode(), Err(EmbeddingError::NotFinite(7)));

        let doubled: Vec<f32> = v.iter().map(|x| x * 2.0).collect();
        assert!(matches!(
            wire(&doubled).decode(),
            Err(EmbeddingError::NotUnit(_))
        ));

        let mut huge = wire(&v);
        huge.dimension = 1 << 20;
        assert!(matches!(
            huge.decode(),
            Err(EmbeddingError::BadDimension(_))
        ));
        let mut nameless = wire(&v);
        nameless.model.clear();
        assert_eq!(nameless.decode(), Err(EmbeddingError::BadModel));
    }
}
