//! `why` over a store of 100k observations and 10k decisions (plus 2k memories),
//! through the real operation (`ops::knowledge::why`: decisions and memories by
//! their words, each with its links, then the events), beside a plain lexical
//! search of the same words in the same run (the baseline the ratio is taken to).
//!
//! Then the hook processes on the same store: UserPromptSubmit (capture + recall:
//! a prompt that touches decisions, one that touches nothing) and SessionStart
//! (the knowledge-first context), beside PostToolUse (capture only) as the
//! baseline of the same run.
//!
//! With `SOLARIA_BENCH_MODEL=<model dir>`, the prompt hooks again with the daemon
//! running (`solaria serve`, the model loaded): recall by meaning and words through
//! `POST /api/recall`. Every record gets a vector first — synthetic ones, near the
//! model's centre, through the real queue (embedding 112k records for real takes
//! hours; the search costs the same whatever the vectors say).
//!
//!     cargo bench -p solaria-edge --bench knowledge
//!     SOLARIA_BENCH_MODEL=~/.cache/solaria/models/multilingual-e5-small \
//!         cargo bench -p solaria-edge --bench knowledge

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
    drop(store);
    hooks(dir.path(), "hook processes, no daemon");
    if let Some(model) = std::env::var_os("SOLARIA_BENCH_MODEL") {
        with_daemon(dir.path(), &path, std::path::Path::new(&model));
    }
}

/// Gives every record a vector (synthetic, see the module's doc), starts the daemon
/// with `model`, waits until it recalls by meaning, and times the hooks again.
fn with_daemon(home: &std::path::Path, path: &std::path::Path, model_dir: &std::path::Path) {
    use solaria_edge::store::vectors;
    let model = solaria_embed::Embedder::load(model_dir).expect("load the model");
    let mut store = Store::open(path, "bench").expect("open");
    solaria_edge::semantic::prepare_index(&mut store, &model).expect("prepare");
    let centre = vectors::centre(store.conn())
        .expect("centre")
        .expect("a centre");
    let mut rng = Rng::new(7);
    let t = Instant::now();
    loop {
        let work = vectors::next_work(store.conn(), 2_000, UnixMillis(0)).expect("work");
        if work.is_empty() {
            break;
        }
        let made: Vec<Vec<f32>> = work
            .iter()
            .filter(|w| w.text.is_some())
            .map(|_| {
                let mut v: Vec<f32> = centre
                    .iter()
                    .map(|c| c + ((rng.below(2001) as f32 / 1000.0) - 1.0) * 0.05)
                    .collect();
                let norm = v
                    .iter()
                    .map(|x| x * x)
                    .sum::<f32>()
                    .sqrt()
                    .max(f32::EPSILON);
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect();
        vectors::complete(&mut store, &work, &made).expect("store vectors");
    }
    eprintln!(
        "{} vectors stored in {:.1} s",
        vectors::stored(store.conn()).expect("stored"),
        t.elapsed().as_secs_f64()
    );
    drop(store);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[search]\nmodel_dir = '{}'\n[serve]\nhttp_port = {port}\n",
            model_dir.display()
        ),
    )
    .expect("config");
    let mut daemon = std::process::Command::new(env!("CARGO_BIN_EXE_solaria"))
        .args(["serve", "--every", "3600", "--embed-every", "3600"])
        .env("SOLARIA_HOME", home)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the daemon");
    // Ready when `solaria recall` is answered by meaning (the model is loaded).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_solaria"))
            .args(["recall", "--json", "warm up the model"])
            .env("SOLARIA_HOME", home)
            .output()
            .expect("recall");
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if answer["by_meaning"] == true {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the daemon never recalled by meaning"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    hooks(
        home,
        "hook processes, the daemon running (recall by meaning and words)",
    );
    let _ = daemon.kill();
    let _ = daemon.wait();
}

/// `solaria hook EVENT` with `payload` on stdin; its wall time.
fn hook(home: &std::path::Path, event: &str, payload: &str) -> Duration {
    hook_process(home, None, event, payload)
}

fn hooks(home: &std::path::Path, title: &str) {
    let cwd = "/work/bench-project";
    let event = |session: String, name: &str, extra: serde_json::Value| {
        let mut v = serde_json::json!({"session_id": session, "cwd": cwd, "hook_event_name": name});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v.to_string()
    };
    let (mut plain, mut related, mut unrelated, mut start) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for n in 0..RUNS + 3 {
        // A new session each time: nothing is "already recalled".
        let s = format!("bench-{n}");
        let tool = event(
            s.clone(),
            "PostToolUse",
            serde_json::json!({"tool_name": "Bash",
            "tool_input": {"command": format!("cargo test case_{n}")}, "tool_response": {"stdout": "ok"}}),
        );
        let touch = event(
            s.clone(),
            "UserPromptSubmit",
            serde_json::json!({
            "prompt": format!("should we revisit {} {} for this", word(n % 50 + 1), word(n % 50 + 2))}),
        );
        let none = event(
            s.clone(),
            "UserPromptSubmit",
            serde_json::json!({
            "prompt": "zzqqxx yyvvww qqzzkk"}),
        );
        let begin = event(s, "SessionStart", serde_json::json!({"source": "startup"}));
        let (p, r, u, b) = (
            hook(home, "post-tool-use", &tool),
            hook(home, "user-prompt-submit", &touch),
            hook(home, "user-prompt-submit", &none),
            hook(home, "session-start", &begin),
        );
        if n >= 3 {
            plain.push(p);
            related.push(r);
            unrelated.push(u);
            start.push(b);
        }
    }
    header(&format!(
        "{title}, 100k observations + 10k decisions + 2k memories"
    ));
    let p = summarize(&mut plain);
    let r = summarize(&mut related);
    row("post-tool-use (capture only, baseline)", p);
    row("user-prompt-submit, prompt touching decisions", r);
    row(
        "user-prompt-submit, prompt touching nothing",
        summarize(&mut unrelated),
    );
    row(
        "session-start (knowledge-first context)",
        summarize(&mut start),
    );
    println!(
        "\nrecall prompt / plain capture: p50 {:.2}×, p95 {:.2}×",
        r.p50.as_secs_f64() / p.p50.as_secs_f64(),
        r.p95.as_secs_f64() / p.p95.as_secs_f64()
    );
}
