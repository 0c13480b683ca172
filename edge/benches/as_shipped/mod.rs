//! The retrieval evaluation as a user gets SOLARIA: the corpus embedded by the
//! daemon's own background passes under a configuration (the default, or an
//! `embeddings_days` bound), and both figures side by side with every record
//! embedded, kind by kind, hybrid against its best part.

use super::{
    AS_SHIPPED, DEFAULT_HYBRID, Evaluation, KINDS, LEXICAL, Query, Record, SEMANTIC, evaluate,
    load_corpus,
};
use solaria_edge::semantic;
use solaria_edge::store::Store;
use solaria_embed::Embedder;

/// The store a user of the default configuration (or of `embeddings_days`) holds
/// once the daemon has caught up: the corpus written, then the daemon's background
/// passes (`semantic::background_pass`, 20 s each) run until they make no more
/// vectors. No cached vector is used: what gets embedded is the daemon's choice.
/// Prints the default modes' table and returns it.
pub(super) fn as_a_user_gets_it(
    records: &[Record],
    queries: &[Query],
    model: &Embedder,
    embeddings_days: Option<i64>,
    unweighted: bool,
) -> Evaluation {
    let mut config = solaria_edge::config::Config::default();
    config.retention.embeddings_days = embeddings_days;
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("memory.db");
    let keys = load_corpus(&path, records);
    let mut store = Store::open(&path, "eval").expect("open");
    semantic::prepare_index(&mut store, model).expect("prepare");
    let (mut passes, mut embedded) = (0, 0);
    loop {
        let report = semantic::run_pass(
            &mut store,
            model,
            semantic::background_pass(&config),
            |_| {},
        )
        .expect("background pass");
        passes += 1;
        embedded += report.embedded;
        if report.remaining == 0 || report.embedded == 0 {
            break;
        }
    }
    println!(
        "\n#### As a user gets it: {}, daemon up ({passes} background passes made {embedded} vectors for {} records)\n",
        match embeddings_days {
            Some(days) => format!("`[retention] embeddings_days = {days}`"),
            None => "the default configuration".to_string(),
        },
        records.len()
    );
    evaluate(&store, queries, &keys, Some(model), AS_SHIPPED, unweighted)
}

/// Recall@5 of hybrid as a user gets it beside every record embedded, kind by kind,
/// and hybrid against the better of its parts (in each configuration).
pub(super) fn side_by_side(shipped: &Evaluation, every: &Evaluation) {
    let default = DEFAULT_HYBRID.label;
    let recall = |e: &Evaluation, label: &str, column: &str| -> f64 {
        e.rows
            .iter()
            .find(|(l, _)| *l == label)
            .and_then(|(_, scores)| scores.get(column))
            .map_or(0.0, |s| s.recall5 / s.n.max(1) as f64)
    };
    let best_part = |e: &Evaluation, column: &str| {
        recall(e, LEXICAL.label, column).max(recall(e, SEMANTIC.label, column))
    };
    println!("\n#### Both figures (recall@5)\n");
    println!(
        "| kind | hybrid as a user gets it | hybrid, every record embedded | difference | hybrid − best part, as a user | hybrid − best part, every record |"
    );
    println!("|---|---|---|---|---|---|");
    let (mut widest_gap, mut worst_shortfall) = (0.0_f64, 0.0_f64);
    let asked = |column: &str| {
        every
            .rows
            .iter()
            .any(|(_, scores)| scores.get(column).is_some_and(|s| s.n > 0))
    };
    for column in KINDS.iter().copied().chain(["all"]).filter(|c| asked(c)) {
        let (user, all) = (
            recall(shipped, default, column),
            recall(every, default, column),
        );
        let (short_user, short_all) = (
            user - best_part(shipped, column),
            all - best_part(every, column),
        );
        widest_gap = widest_gap.max((user - all).abs());
        worst_shortfall = worst_shortfall.min(short_user).min(short_all);
        println!(
            "| {column} | {user:.3} | {all:.3} | {:+.3} | {short_user:+.3} | {short_all:+.3} |",
            user - all
        );
    }
    let shortfall = if worst_shortfall < 0.0 {
        format!("{:.3}", -worst_shortfall)
    } else {
        "none (at or above it on every kind)".to_string()
    };
    println!(
        "\nWidest difference between the two figures: {widest_gap:.3}; hybrid's largest shortfall against its best part: {shortfall}."
    );
}
