//! Loads a model directory and prints what it is, a few similarities, and timings.
//!
//! ```text
//! cargo run -q -p solaria-embed --example similarity -- DIR [--dump FILE]
//! ```
//!
//! `--dump FILE` writes every text fed to the model (prompt prefix included) with
//! its vector, as JSON, to compare with another implementation.

use solaria_embed::{Embedder, Pooling, cosine};
use std::path::PathBuf;
use std::time::Instant;

/// English sentences and their Spanish translations, index for index.
const PAIRS: &[(&str, &str)] = &[
    (
        "The cat sits on the mat.",
        "El gato está sentado en la alfombra.",
    ),
    (
        "Where is the train station?",
        "¿Dónde está la estación de tren?",
    ),
    ("I like programming in Rust.", "Me gusta programar en Rust."),
    (
        "The meeting was moved to Thursday afternoon.",
        "La reunión se trasladó al jueves por la tarde.",
    ),
    (
        "My doctor told me to drink more water.",
        "Mi médico me dijo que bebiera más agua.",
    ),
];

/// Six more texts, to make a batch of sixteen with the pairs.
const MORE: &[&str] = &[
    "The invoice for March is still unpaid.",
    "Backups run every night at two o'clock.",
    "She planted tomatoes and basil in the garden.",
    "El servidor se reinició después de la actualización.",
    "Necesito renovar mi pasaporte antes de viajar.",
    "The quarterly report shows revenue grew by 12%.",
];

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let mut dump = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dump" => dump = Some(PathBuf::from(args.next().ok_or("--dump needs a file")?)),
            _ if dir.is_none() => dir = Some(PathBuf::from(arg)),
            _ => return Err(format!("unexpected argument {arg}").into()),
        }
    }
    let dir = dir.ok_or("usage: similarity MODEL_DIR [--dump FILE]")?;
    let mut fed: Vec<(String, Vec<f32>)> = Vec::new();

    let start = Instant::now();
    let model = Embedder::load(&dir)?;
    let load_ms = ms(start);
    let info = model.info();
    println!("model       {}", info.name);
    println!("dir         {}", dir.display());
    println!(
        "dimension   {}   pooling {}   max tokens {}",
        info.dimension,
        match info.pooling {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
        },
        info.max_tokens
    );
    println!(
        "prefixes    query {:?}   document {:?}",
        info.query_prefix, info.document_prefix
    );
    println!("fingerprint {}", info.fingerprint);
    println!("load        {load_ms:.0} ms");

    // The sentence-transformers reference pair, texts as they are (no prefix).
    let known = ["A man is eating food.", "A man is eating a piece of bread."];
    let v = model.embed(&known)?;
    let norm = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    println!(
        "\nknown pair  cos = {:.4}   (|v| = {norm:.4}; all-MiniLM-L6-v2 gives 0.755)",
        cosine(&v[0], &v[1])
    );
    fed.extend(known.iter().map(|t| t.to_string()).zip(v));

    // Translations against unrelated pairs, both embedded as stored texts.
    let en: Vec<&str> = PAIRS.iter().map(|p| p.0).collect();
    let es: Vec<&str> = PAIRS.iter().map(|p| p.1).collect();
    let ven = model.embed_documents(&en)?;
    let ves = model.embed_documents(&es)?;
    println!("\nEN/ES (as documents)          translation   unrelated (mean of the others)");
    let (mut same_sum, mut other_sum, mut others) = (0.0, 0.0, 0);
    let mut worst_margin = f32::MAX;
    for (i, (e, _)) in PAIRS.iter().enumerate() {
        let same = cosine(&ven[i], &ves[i]);
        let unrelated: Vec<f32> = (0..PAIRS.len())
            .filter(|&j| j != i)
            .map(|j| cosine(&ven[i], &ves[j]))
            .collect();
        let best_other = unrelated.iter().copied().fold(f32::MIN, f32::max);
        let mean_other = unrelated.iter().sum::<f32>() / unrelated.len() as f32;
        worst_margin = worst_margin.min(same - best_other);
        same_sum += same;
        other_sum += unrelated.iter().sum::<f32>();
        others += unrelated.len();
        println!("  {e:<44.44} {same:>6.3}   {mean_other:>6.3} (max {best_other:.3})");
    }
    println!(
        "  mean: translation {:.3}, unrelated {:.3}; smallest margin translation - best unrelated {worst_margin:+.3}",
        same_sum / PAIRS.len() as f32,
        other_sum / others as f32
    );
    let prefix = &info.document_prefix;
    fed.extend(en.iter().map(|t| format!("{prefix}{t}")).zip(ven));
    fed.extend(es.iter().map(|t| format!("{prefix}{t}")).zip(ves));

    // An English query against Spanish documents.
    let query = "how do I get to the railway station";
    let q = model.embed_query(query)?;
    let docs: Vec<&str> = es.iter().copied().chain(MORE.iter().copied()).collect();
    let vd = model.embed_documents(&docs)?;
    let mut ranked: Vec<(f32, &str)> = vd
        .iter()
        .map(|d| cosine(&q, d))
        .zip(docs.iter().copied())
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!(
        "\nquery {query:?} (embed_query) against {} documents:",
        docs.len()
    );
    for (score, text) in ranked.iter().take(3) {
        println!("  {score:.3}  {text}");
    }
    fed.push((format!("{}{query}", info.query_prefix), q));

    // Timings: one batch of sixteen stored texts, then one query.
    let batch: Vec<&str> = en
        .iter()
        .chain(es.iter())
        .chain(MORE.iter())
        .copied()
        .collect();
    assert_eq!(batch.len(), 16);
    let start = Instant::now();
    model.embed_documents(&batch)?;
    let first = ms(start);
    let start = Instant::now();
    model.embed_documents(&batch)?;
    let second = ms(start);
    let start = Instant::now();
    model.embed_query(query)?;
    let single = ms(start);
    println!(
        "\ntiming      load {load_ms:.0} ms; batch of 16 documents {first:.0} ms (again {second:.0} ms); one query {single:.0} ms"
    );

    if let Some(path) = dump {
        let json: Vec<serde_json::Value> = fed
            .iter()
            .map(|(t, v)| serde_json::json!({ "text": t, "vector": v }))
            .collect();
        std::fs::write(&path, serde_json::to_string(&json)?)?;
        println!("dumped {} vectors to {}", fed.len(), path.display());
    }
    Ok(())
}
