//! `why` over a store of 100k observations and 10k decisions (plus 2k memories),
//! through the real operation (`ops::knowledge::why`: decisions and memories by
//! their words, each with its links, then the events), beside a plain lexical
//! search of the same words in the same run (the baseline the ratio is taken to).
//!
//!     cargo bench -p solaria-edge --bench knowledge

mod support;

use solaria_edge::app::App;
use solaria_edge::config::Env;
use solaria_edge::ops::knowledge::{self, WhyRequest};
use solaria_edge::store::Store;
use solaria_edge::store::search::{self, SearchQuery};
use solaria_shared::knowledge::{Confidence, Decision, Impact, Memory, MemoryType, Standing};
use solaria_shared::{KnowledgeBody, KnowledgeId, UnixMillis};
use std::time::{Duration, Instant};
use support::*;

const OBSERVATIONS: usize = 100_000;
const DECISIONS: usize = 10_000;
const MEMORIES: usize = 2_000;
const RUNS: usize = 60;

/// Adds decisions and memories in the corpus's vocabulary, spread over its projects.
fn add_knowledge(store: &mut Store) {
    let mut rng = Rng::new(7);
    store
        .write(|w| {
            for i in 0..DECISIONS {
                let p = project(rng.zipf(PROJECTS));
                let body = KnowledgeBody::Decision(Decision {
                    title: format!("{} {}", word(rng.zipf(5_000)), word(rng.zipf(5_000))),
                    context: sentence(&mut rng, 25),
                    chosen: sentence(&mut rng, 6),
                    alternatives: vec![sentence(&mut rng, 4), sentence(&mut rng, 4)],
                    rationale: sentence(&mut rng, 30),
                    impact: Impact::ALL[i % Impact::ALL.len()],
                    decided_at: UnixMillis::now(),
                    // One in ten was superseded: it stays, ranked low.
                    status: if i % 10 == 0 {
                        Standing::Superseded
                    } else {
                        Standing::Active
                    },
                    ..Decision::default()
                });
                w.record_knowledge(KnowledgeId::new(), &p, None, body)?;
            }
            for i in 0..MEMORIES {
                let p = project(rng.zipf(PROJECTS));
                let body = KnowledgeBody::Memory(Memory {
                    memory_type: MemoryType::ALL[i % MemoryType::ALL.len()],
                    content: sentence(&mut rng, 20),
                    confidence: Confidence::new(0.4 + (i % 7) as f64 * 0.1).unwrap_or_default(),
                    ..Memory::default()
                });
                w.record_knowledge(KnowledgeId::new(), &p, None, body)?;
            }
            Ok(())
        })
        .expect("write knowledge");
}

fn main() {
    let (dir, path) = store_copy(OBSERVATIONS);
    let mut store = Store::open(&path, "bench").expect("open");
    let t = Instant::now();
    add_knowledge(&mut store);
    eprintln!(
        "added {DECISIONS} decisions and {MEMORIES} memories in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let app = App::load(&Env {
        solaria_home: Some(dir.path().to_path_buf()),
        ..Env::default()
    })
    .expect("app");
    let queries = [
        ("rare word", word(4_000)),
        ("mid-frequency word", word(60)),
        ("common word (error)", "error".to_string()),
        (
            "question with stopwords",
            format!("why did we choose {}", word(300)),
        ),
        ("two words", format!("{} {}", word(30), word(900))),
        ("no match", "zzqqxxyy".to_string()),
    ];
    header(&format!(
        "why vs plain search, {OBSERVATIONS} observations + {DECISIONS} decisions + {MEMORIES} memories"
    ));
    let (mut all_why, mut all_search) = (Vec::new(), Vec::new());
    for (label, q) in &queries {
        let request = WhyRequest {
            query: q.clone(),
            project: None,
            limit: 5,
        };
        let plain = SearchQuery {
            text: q.clone(),
            limit: 20,
            current_project: Some(project(0).key),
            ..SearchQuery::default()
        };
        for _ in 0..3 {
            knowledge::why(&app, &request).expect("why");
        }
        let (mut why_samples, mut search_samples): (Vec<Duration>, Vec<Duration>) =
            (Vec::new(), Vec::new());
        // Interleaved, so noise hits both alike.
        for _ in 0..RUNS {
            let t = Instant::now();
            std::hint::black_box(knowledge::why(&app, &request).expect("why"));
            why_samples.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(search::search(store.conn(), &plain).expect("search"));
            search_samples.push(t.elapsed());
        }
        all_why.extend(&why_samples);
        all_search.extend(&search_samples);
        row(&format!("why: {label}"), summarize(&mut why_samples));
        row(&format!("search: {label}"), summarize(&mut search_samples));
    }
    let w = summarize(&mut all_why);
    let s = summarize(&mut all_search);
    row("why: ALL QUERIES", w);
    row("search: ALL QUERIES", s);
    println!(
        "\nratio why/search: p50 {:.2}×, p95 {:.2}×",
        w.p50.as_secs_f64() / s.p50.as_secs_f64(),
        w.p95.as_secs_f64() / s.p95.as_secs_f64()
    );
}
