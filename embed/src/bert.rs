//! A BERT encoder laid out for short inputs on the CPU: the forward pass that turns
//! token ids into token vectors.
//!
//! Why not `candle-transformers`' `BertModel`: a search query is a dozen tokens, and
//! at that size its layout, not the arithmetic, set the cost. It multiplies by each
//! weight matrix transposed on the fly (the matrix multiply then repacks the whole
//! matrix on every call), broadcasts the weights over the batch, and computes the
//! exact GELU with a scalar `erf` per element. Here every weight is stored once,
//! transposed and contiguous; the query, key and value projections are one
//! multiplication with the 1/√d attention scale folded into the query weights; and
//! GELU uses a rational approximation of `erf` (error < 1e-7) that vectorises.
//! The same model embeds a query about twice as fast with the same vectors
//! (docs/BENCHMARKS.md; `embed/tests/known_pairs.rs` checks the reference values).

use crate::EmbedError;
use candle_core::{D, DType, Device, Tensor};
use candle_nn::VarBuilder;
use serde::Deserialize;

/// The parts of a Hugging Face BERT `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_activation")]
    pub hidden_act: String,
    #[serde(default = "default_positions")]
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub pad_token_id: usize,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

fn default_activation() -> String {
    "gelu".into()
}
fn default_positions() -> usize {
    512
}
fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}

/// The feed-forward activation, from `hidden_act`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activation {
    /// `gelu`: x·Φ(x) with the exact normal CDF (BERT, MiniLM, e5).
    Gelu,
    /// `gelu_new` / `gelu_pytorch_tanh`: the tanh approximation.
    GeluTanh,
    Relu,
}

impl Activation {
    fn parse(name: &str) -> Result<Activation, EmbedError> {
        match name {
            "gelu" => Ok(Activation::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Activation::GeluTanh),
            "relu" => Ok(Activation::Relu),
            other => Err(EmbedError::Unsupported(format!("hidden_act {other:?}"))),
        }
    }

    fn apply(self, xs: Tensor) -> candle_core::Result<Tensor> {
        match self {
            Activation::Gelu => gelu_exact(xs),
            Activation::GeluTanh => xs.gelu(),
            Activation::Relu => xs.relu(),
        }
    }
}

/// x·W + b with W stored as (inputs, outputs), contiguous.
struct Dense {
    weight: Tensor,
    bias: Tensor,
}

impl Dense {
    /// Loads a PyTorch `Linear` (weight stored as (outputs, inputs)).
    fn load(vb: &VarBuilder, inputs: usize, outputs: usize) -> candle_core::Result<Dense> {
        let weight = vb.get((outputs, inputs), "weight")?;
        let bias = vb.get(outputs, "bias")?;
        Dense::from_pytorch(weight, bias)
    }

    fn from_pytorch(weight: Tensor, bias: Tensor) -> candle_core::Result<Dense> {
        Ok(Dense {
            weight: weight.t()?.contiguous()?,
            bias,
        })
    }

    /// `xs`: (rows, inputs) → (rows, outputs).
    fn forward(&self, xs: &Tensor) -> candle_core::Result<Tensor> {
        xs.matmul(&self.weight)?.broadcast_add(&self.bias)
    }
}

struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl LayerNorm {
    fn load(vb: &VarBuilder, size: usize, eps: f64) -> candle_core::Result<LayerNorm> {
        Ok(LayerNorm {
            weight: vb.get(size, "weight")?,
            bias: vb.get(size, "bias")?,
            eps: eps as f32,
        })
    }

    fn forward(&self, xs: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm(xs, &self.weight, &self.bias, self.eps)
    }
}

struct Layer {
    /// Query, key and value in one (hidden, 3·hidden) matrix; the query part is
    /// pre-scaled by 1/√(head size).
    qkv: Dense,
    attention_out: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
}

/// A loaded BERT encoder (embeddings and layers; no pooler, no heads).
pub(crate) struct Encoder {
    word_embeddings: Tensor,
    position_embeddings: Tensor,
    /// Row 0 of the token-type table: every input here is a single segment.
    segment_embedding: Tensor,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
    max_positions: usize,
    activation: Activation,
}

impl Encoder {
    /// Loads the weights of a `BertModel` checkpoint (names with or without `bert.`).
    pub(crate) fn load(vb: VarBuilder, config: &BertConfig) -> Result<Encoder, EmbedError> {
        if let Some(kind) = config.position_embedding_type.as_deref()
            && kind != "absolute"
        {
            return Err(EmbedError::Unsupported(format!(
                "position_embedding_type {kind:?}"
            )));
        }
        let activation = Activation::parse(&config.hidden_act)?;
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(EmbedError::Unsupported(format!(
                "{hidden} hidden units in {heads} attention heads"
            )));
        }
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let emb = vb.pp("embeddings");
        let word_embeddings = emb.get((config.vocab_size, hidden), "word_embeddings.weight")?;
        let position_embeddings = emb.get(
            (config.max_position_embeddings, hidden),
            "position_embeddings.weight",
        )?;
        let segment_embedding = emb
            .get(
                (config.type_vocab_size, hidden),
                "token_type_embeddings.weight",
            )?
            .get(0)?;
        let embedding_norm = LayerNorm::load(&emb.pp("LayerNorm"), hidden, config.layer_norm_eps)?;
        let scale = 1.0 / ((hidden / heads) as f64).sqrt();
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let vb = vb.pp(format!("encoder.layer.{i}"));
                let own = vb.pp("attention.self");
                let part = |name: &str| -> candle_core::Result<(Tensor, Tensor)> {
                    let vb = own.pp(name);
                    Ok((vb.get((hidden, hidden), "weight")?, vb.get(hidden, "bias")?))
                };
                let (qw, qb) = part("query")?;
                let (kw, kb) = part("key")?;
                let (vw, vb_) = part("value")?;
                let qkv = Dense::from_pytorch(
                    Tensor::cat(&[(qw * scale)?, kw, vw], 0)?,
                    Tensor::cat(&[(qb * scale)?, kb, vb_], 0)?,
                )?;
                Ok(Layer {
                    qkv,
                    attention_out: Dense::load(&vb.pp("attention.output.dense"), hidden, hidden)?,
                    attention_norm: LayerNorm::load(
                        &vb.pp("attention.output.LayerNorm"),
                        hidden,
                        config.layer_norm_eps,
                    )?,
                    intermediate: Dense::load(
                        &vb.pp("intermediate.dense"),
                        hidden,
                        config.intermediate_size,
                    )?,
                    output: Dense::load(&vb.pp("output.dense"), config.intermediate_size, hidden)?,
                    output_norm: LayerNorm::load(
                        &vb.pp("output.LayerNorm"),
                        hidden,
                        config.layer_norm_eps,
                    )?,
                })
            })
            .collect::<candle_core::Result<Vec<Layer>>>()?;
        Ok(Encoder {
            word_embeddings,
            position_embeddings,
            segment_embedding,
            embedding_norm,
            layers,
            heads,
            hidden,
            max_positions: config.max_position_embeddings,
            activation,
        })
    }

    /// Token vectors for `rows` sequences of `width` tokens: `ids` and `mask` are
    /// row-major (rows × width), mask 1 for a token and 0 for padding.
    /// Returns (rows, width, hidden).
    pub(crate) fn forward(
        &self,
        ids: &[u32],
        mask: &[u32],
        rows: usize,
        width: usize,
        device: &Device,
    ) -> Result<Tensor, EmbedError> {
        if width > self.max_positions {
            return Err(EmbedError::Unsupported(format!(
                "{width} tokens (the model has {} positions)",
                self.max_positions
            )));
        }
        let hidden = self.hidden;
        let ids = Tensor::from_slice(ids, rows * width, device)?;
        let embedded = self
            .word_embeddings
            .index_select(&ids, 0)?
            .reshape((rows, width, hidden))?
            .broadcast_add(&self.position_embeddings.narrow(0, 0, width)?)?
            .broadcast_add(&self.segment_embedding)?;
        let mut xs = self
            .embedding_norm
            .forward(&embedded)?
            .reshape((rows * width, hidden))?;
        // Padding gets a large negative score before the softmax; a lone sequence has none.
        let additive_mask = if mask.iter().all(|&m| m != 0) {
            None
        } else {
            let values: Vec<f32> = mask
                .iter()
                .map(|&m| if m == 0 { f32::MIN } else { 0.0 })
                .collect();
            Some(Tensor::from_vec(values, (rows, 1, 1, width), device)?)
        };
        for layer in &self.layers {
            xs = self.layer(layer, &xs, additive_mask.as_ref(), rows, width)?;
        }
        Ok(xs.reshape((rows, width, hidden))?)
    }

    fn layer(
        &self,
        layer: &Layer,
        xs: &Tensor,
        additive_mask: Option<&Tensor>,
        rows: usize,
        width: usize,
    ) -> candle_core::Result<Tensor> {
        let (hidden, heads) = (self.hidden, self.heads);
        let head_size = hidden / heads;
        // (rows·width, 3·hidden) → (3, rows, heads, width, head_size)
        let qkv = layer
            .qkv
            .forward(xs)?
            .reshape((rows, width, 3, heads, head_size))?
            .permute((2, 0, 3, 1, 4))?
            .contiguous()?;
        let (query, key, value) = (qkv.get(0)?, qkv.get(1)?, qkv.get(2)?);
        let scores = query.matmul(&key.t()?)?;
        let scores = match additive_mask {
            Some(mask) => scores.broadcast_add(mask)?,
            None => scores,
        };
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = weights
            .matmul(&value)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((rows * width, hidden))?;
        let attended = layer
            .attention_norm
            .forward(&(layer.attention_out.forward(&context)? + xs)?)?;
        let inner = self
            .activation
            .apply(layer.intermediate.forward(&attended)?)?;
        layer
            .output_norm
            .forward(&(layer.output.forward(&inner)? + &attended)?)
    }
}

/// x·Φ(x) = x/2 · (1 + erf(x/√2)), elementwise.
fn gelu_exact(xs: Tensor) -> candle_core::Result<Tensor> {
    let shape = xs.shape().clone();
    let device = xs.device().clone();
    let mut values = xs.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()?;
    for v in values.iter_mut() {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
    Tensor::from_vec(values, shape, &device)
}

/// erf as a rational function of x² on [-4, 4] (erf is ±1 to f32 precision
/// beyond): the approximation Eigen and XLA use for float, absolute error below
/// 1e-7, branch-free so the loop above vectorises.
#[inline]
fn erf(x: f32) -> f32 {
    const P: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const Q: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = P[0];
    for c in &P[1..] {
        p = p * x2 + c;
    }
    let mut q = Q[0];
    for c in &Q[1..] {
        q = q * x2 + c;
    }
    x * p / q
}

/// Mean of the token vectors of each row, padding excluded: (rows, width, hidden)
/// → (rows, hidden).
pub(crate) fn mean_pool(
    tokens: &Tensor,
    mask: &[u32],
    device: &Device,
) -> candle_core::Result<Tensor> {
    let (rows, width, _) = tokens.dims3()?;
    let weights: Vec<f32> = mask.iter().map(|&m| f32::from(m != 0)).collect();
    let weights = Tensor::from_vec(weights, (rows, width, 1), device)?;
    let summed = tokens.broadcast_mul(&weights)?.sum(1)?;
    let counts = weights.sum(1)?.clamp(1e-9, f64::MAX)?;
    summed.broadcast_div(&counts)
}

/// Each row scaled to unit length.
pub(crate) fn normalise(xs: &Tensor) -> candle_core::Result<Tensor> {
    let norms = xs
        .sqr()?
        .sum_keepdim(D::Minus1)?
        .sqrt()?
        .clamp(1e-12, f64::MAX)?;
    xs.broadcast_div(&norms)
}

#[cfg(test)]
mod tests {
    use super::erf;

    #[test]
    fn erf_matches_reference_values() {
        // erf values from tables (Abramowitz & Stegun 7.1), to 9 digits.
        for (x, want) in [
            (0.0f32, 0.0f64),
            (0.1, 0.112_462_916),
            (0.5, 0.520_499_878),
            (1.0, 0.842_700_793),
            (1.5, 0.966_105_146),
            (2.0, 0.995_322_265),
            (3.0, 0.999_977_910),
            (6.0, 1.0),
        ] {
            let got = f64::from(erf(x));
            assert!((got - want).abs() < 3e-7, "erf({x}) = {got} not {want}");
            assert!((f64::from(erf(-x)) + want).abs() < 3e-7, "erf is odd");
        }
    }
}
