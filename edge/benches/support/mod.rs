//! Shared by the benchmarks: a deterministic, realistic corpus of coding-agent
//! activity written through the real store API, cached between runs, and a tiny
//! statistics helper (median and p95 of repeated measurements).
#![allow(dead_code)]

use serde_json::json;
use solaria_edge::store::Store;
use solaria_shared::{
    Observation, ObservationId, ObservationKind, Project, RecordMeta, Session, SessionId,
    UnixMillis,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bump when the generator changes, so cached stores are rebuilt.
const CORPUS_VERSION: u32 = 3;
pub const PROJECTS: usize = 20;
const OBS_PER_SESSION: usize = 60;
const DAYS: i64 = 60;

/// A small deterministic PRNG (xorshift64*), so every run builds the same corpus.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Roughly Zipf-distributed index in `0..n`: a few values are very common.
    pub fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        ((n as f64).powf(u) as usize).saturating_sub(1).min(n - 1)
    }
    pub fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SYLLABLES: &[&str] = &[
    "ka", "to", "ri", "mo", "sen", "dal", "vex", "lu", "pra", "zen", "qui", "bor", "fi", "nak",
    "tal", "gro", "mi", "sha", "pel", "dor",
];
/// Words every agent transcript is full of: what makes ranking expensive.
pub const COMMON: &[&str] = &[
    "error", "src", "test", "cargo", "build", "fn", "let", "use", "mod", "return", "ok", "file",
    "line", "warning", "the", "to", "a", "in", "for", "config", "run", "update", "fix", "add",
];
const COMMANDS: &[&str] = &[
    "cargo test",
    "cargo build",
    "cargo clippy --all-targets",
    "git status",
    "git diff --stat",
    "npm test",
    "pytest -x",
    "ls src",
    "grep -rn TODO src",
    "cargo fmt --all",
    "docker compose up -d",
    "make check",
];

/// A pseudo-word of the project vocabulary; rank 0 is the most common.
pub fn word(rank: usize) -> String {
    let mut w = String::new();
    let mut r = rank + 7;
    for _ in 0..(2 + rank % 3) {
        w.push_str(SYLLABLES[r % SYLLABLES.len()]);
        r /= SYLLABLES.len();
        r += 3;
    }
    w
}

/// An identifier (`word_word`), like the names agents search for.
pub fn ident(rng: &mut Rng) -> String {
    format!("{}_{}", word(rng.zipf(5_000)), word(rng.zipf(5_000)))
}

pub fn sentence(rng: &mut Rng, words: usize) -> String {
    (0..words)
        .map(|_| {
            if rng.below(3) == 0 {
                COMMON[rng.zipf(COMMON.len())].to_string()
            } else {
                word(rng.zipf(20_000))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn observation(
    rng: &mut Rng,
    session: &Session,
    me: solaria_shared::MachineId,
    at: i64,
    n: usize,
) -> Observation {
    let module = word(rng.zipf(300));
    let file = format!("src/{module}/{}.rs", word(rng.zipf(2_000)));
    let (kind, tool, title, input, response, files) = match n % 10 {
        0 => {
            let text = format!("{} {}", sentence(rng, 20), ident(rng));
            (
                ObservationKind::Prompt,
                None,
                text.chars().take(100).collect(),
                text,
                String::new(),
                vec![],
            )
        }
        1..=3 => {
            let cmd = rng.pick(COMMANDS).to_string();
            let out = format!(
                "   Compiling {module} v0.1.0\n{}\nerror[E0308]: mismatched types in {}\n{}",
                sentence(rng, 30),
                ident(rng),
                sentence(rng, 30)
            );
            let resp = json!({"stdout": out, "stderr": "", "interrupted": false}).to_string();
            (
                ObservationKind::ToolUse,
                Some("Bash"),
                format!("Bash: {cmd}"),
                json!({"command": cmd}).to_string(),
                resp,
                vec![],
            )
        }
        4..=6 => {
            let content = format!("pub fn {}() {{ {} }}", ident(rng), sentence(rng, 50));
            let resp =
                json!({"type": "text", "file": {"filePath": file, "content": content}}).to_string();
            (
                ObservationKind::ToolUse,
                Some("Read"),
                format!("Read {file}"),
                json!({"file_path": file}).to_string(),
                resp,
                vec![file.clone()],
            )
        }
        _ => {
            let new = format!("fn {}() {{ {} }}", ident(rng), sentence(rng, 25));
            let inp =
                json!({"file_path": file, "old_string": sentence(rng, 10), "new_string": new})
                    .to_string();
            (
                ObservationKind::ToolUse,
                Some("Edit"),
                format!("Edit {file}"),
                inp,
                json!({"filePath": file}).to_string(),
                vec![file.clone()],
            )
        }
    };
    Observation {
        id: ObservationId::new(),
        meta: RecordMeta {
            machine_id: me,
            updated: Default::default(),
            deleted: false,
        },
        session_id: session.id,
        project: session.project.clone(),
        kind,
        tool_name: tool.map(str::to_string),
        title,
        input,
        response,
        files,
        metadata: json!({}),
        tags: vec!["rust".into()],
        created_at: UnixMillis(at),
    }
}

/// The project of index `i`.
pub fn project(i: usize) -> Project {
    Project {
        key: format!("github.com/bench/project-{i}"),
        name: format!("project-{i}"),
    }
}

/// Fills `path` with `count` observations (in sessions of 60, over 60 days, 20
/// projects), through the same store API the hooks use.
pub fn generate(path: &Path, count: usize) {
    let mut store = Store::open(path, "bench").expect("open store");
    let me = store.machine_id();
    let mut rng = Rng::new(42);
    let now = UnixMillis::now().0;
    let span = DAYS * 86_400_000;
    let sessions = count.div_ceil(OBS_PER_SESSION);
    let mut written = 0;
    for s in 0..sessions {
        let start = now - span + (span / sessions as i64) * s as i64;
        store
            .write(|w| {
                let stamp = w.tick();
                let session = Session {
                    id: SessionId::new(),
                    meta: RecordMeta {
                        machine_id: me,
                        updated: stamp,
                        deleted: false,
                    },
                    project: project(rng.zipf(PROJECTS)),
                    agent_session_id: format!("bench-{s}"),
                    cwd: "/work".into(),
                    agent: "claude-code".into(),
                    source: "startup".into(),
                    started_at: UnixMillis(start),
                    ended_at: None,
                };
                w.insert_session(&session)?;
                for n in 0..OBS_PER_SESSION.min(count - written) {
                    let mut o = observation(&mut rng, &session, me, start + n as i64 * 20_000, n);
                    o.meta.updated = w.tick();
                    w.insert_observation(&o)?;
                }
                Ok(())
            })
            .expect("write session");
        written += OBS_PER_SESSION.min(count - written);
    }
    store
        .conn()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA optimize;")
        .expect("checkpoint");
}

/// A cached store of `count` observations (built on first use), copied to a fresh
/// temporary directory so a benchmark may write to it.
pub fn store_copy(count: usize) -> (tempfile::TempDir, PathBuf) {
    let cache_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/bench-data")
        .join(format!("v{CORPUS_VERSION}-{count}"));
    let cached = cache_dir.join("memory.db");
    if !cached.exists() {
        std::fs::create_dir_all(&cache_dir).expect("cache dir");
        let building = cache_dir.join("building.db");
        let _ = std::fs::remove_file(&building);
        eprintln!(
            "building a store of {count} observations (cached in {})…",
            cache_dir.display()
        );
        let t = std::time::Instant::now();
        generate(&building, count);
        std::fs::rename(&building, &cached).expect("publish cache");
        eprintln!("  built in {:.1} s", t.elapsed().as_secs_f64());
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("memory.db");
    std::fs::copy(&cached, &copy).expect("copy store");
    (dir, copy)
}

/// Median and 95th percentile of a set of measurements.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub n: usize,
    pub p50: Duration,
    pub p95: Duration,
    pub max: Duration,
}

pub fn summarize(samples: &mut [Duration]) -> Summary {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    Summary {
        n: samples.len(),
        p50: at(0.5),
        p95: at(0.95),
        max: at(1.0),
    }
}

pub fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

/// One row of a results table.
pub fn row(label: &str, s: Summary) {
    println!(
        "| {label:<44} | {:>6} | {:>9} ms | {:>9} ms | {:>9} ms |",
        s.n,
        ms(s.p50),
        ms(s.p95),
        ms(s.max)
    );
}

pub fn header(title: &str) {
    println!("\n{title}\n");
    println!(
        "| {:<44} | {:>6} | {:>12} | {:>12} | {:>12} |",
        "case", "n", "p50", "p95", "max"
    );
    println!(
        "|{:-<46}|{:->8}|{:->14}|{:->14}|{:->14}|",
        "", "", "", "", ""
    );
}

/// Embeds every record of `store` that waits for a vector, with `model`, in one
/// pass (no time budget, no age bound): what the evaluations measure against.
pub fn embed_every(
    store: &mut Store,
    model: &solaria_embed::Embedder,
) -> solaria_edge::semantic::PassReport {
    solaria_edge::semantic::run_pass(
        store,
        model,
        solaria_edge::semantic::PassOptions {
            batch: 32,
            bound: solaria_edge::store::vectors::EmbedBound::Every,
            budget: Duration::from_secs(3600),
        },
        |_| {},
    )
    .expect("embedding pass")
}

/// Runs the `solaria` binary's `hook EVENT` with `payload` on stdin, in `cwd`
/// (this process's directory when `None`), on the store at `home`; its wall time.
pub fn hook_process(home: &Path, cwd: Option<&Path>, event: &str, payload: &str) -> Duration {
    use std::io::Write;
    let t = std::time::Instant::now();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_solaria"));
    command
        .args(["hook", event])
        .env("SOLARIA_HOME", home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn().expect("spawn the hook");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload.as_bytes());
    }
    child.wait().expect("hook");
    t.elapsed()
}
