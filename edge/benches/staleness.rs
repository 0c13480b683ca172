//! Staleness at scale: 10,000 memories anchored to the files of a repository of
//! 50,000 commits, checked by the daemon's own operation (`ops::staleness::check`:
//! one `git log`, one `git ls-tree`, the graph, the table written), beside the
//! bare `git log` it reads in the same run (the baseline its ratio is taken to).
//! Then the SessionStart hook in that repository with what the check found in
//! the table, interleaved with the same hook with the table empty: the cost the
//! hook pays for saying "changed since".
//!
//! The repository is made with `git fast-import` (2,000 files, each commit
//! changing one, one second apart and ending now), the memories through the
//! store API the hooks use, each anchored to one to three files at a commit of
//! the history.
//!
//!     cargo build --release -p solaria-edge --bins
//!     cargo bench -p solaria-edge --bench staleness

use solaria_store::rusqlite;
mod support;

use solaria_edge::ops::staleness;
use solaria_edge::store::Store;
use solaria_shared::anchors::Anchors;
use solaria_shared::knowledge::{Confidence, Memory, MemoryType};
use solaria_shared::{KnowledgeBody, KnowledgeId, UnixMillis};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

const COMMITS: usize = 50_000;
const FILES: usize = 2_000;
const MEMORIES: usize = 10_000;
const CHECK_RUNS: usize = 5;
const HOOK_RUNS: usize = 40;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {:?}", out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn file_name(i: usize) -> String {
    format!("src/m{}/f{}.rs", i % 40, i)
}

/// One file of a fast-import commit: file `f` with `body`.
fn file_change(input: &mut impl Write, f: usize, body: &str) {
    writeln!(
        input,
        "M 644 inline {}\ndata {}\n{body}",
        file_name(f),
        body.len()
    )
    .expect("write");
}

/// A repository of [`COMMITS`] commits at `dir`, each changing one of [`FILES`]
/// files (a few busy, most quiet), one second apart and ending now.
fn repository(dir: &Path) -> Vec<String> {
    git(dir, &["init", "-q", "-b", "main"]);
    git(
        dir,
        &[
            "remote",
            "add",
            "origin",
            "git@github.com:bench/staleness.git",
        ],
    );
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("fast-import");
    let mut input = std::io::BufWriter::new(child.stdin.take().expect("stdin"));
    let end = UnixMillis::now().0 / 1000;
    let start = end - COMMITS as i64;
    let mut rng = Rng::new(11);
    for c in 0..COMMITS {
        let at = start + c as i64;
        let message = format!("change {c}: {}", sentence(&mut rng, 5));
        writeln!(input, "commit refs/heads/main\nmark :{}", c + 1).expect("write");
        writeln!(input, "committer Bench <bench@example.com> {at} +0000").expect("write");
        writeln!(input, "data {}\n{message}", message.len()).expect("write");
        if c == 0 {
            // Every file exists from the first commit.
            for f in 0..FILES {
                file_change(&mut input, f, &format!("pub fn f{f}() {{}}\n"));
            }
        } else {
            writeln!(input, "from :{c}").expect("write");
            let f = rng.zipf(FILES);
            file_change(&mut input, f, &format!("pub fn f{f}() {{ {c} }}\n"));
        }
    }
    drop(input);
    assert!(child.wait().expect("fast-import").success());
    git(dir, &["checkout", "-q", "main"]);
    git(dir, &["log", "--format=%H", "--reverse"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// [`MEMORIES`] memories of `project`, each anchored to one to three files at a
/// commit of `history`.
fn add_memories(store: &mut Store, project: &solaria_shared::Project, history: &[String]) {
    let mut rng = Rng::new(5);
    store
        .write(|w| {
            for _ in 0..MEMORIES {
                let files = (0..1 + rng.below(3))
                    .map(|_| file_name(rng.zipf(FILES)))
                    .collect();
                let body = KnowledgeBody::Memory(Memory {
                    memory_type: MemoryType::Fact,
                    content: sentence(&mut rng, 15),
                    confidence: Confidence::STATED,
                    anchors: Anchors {
                        files,
                        head: history[rng.below(history.len())].clone(),
                        ..Anchors::default()
                    },
                    ..Memory::default()
                });
                w.record_knowledge(KnowledgeId::new(), project, None, body)?;
            }
            Ok(())
        })
        .expect("memories");
}

/// `solaria hook session-start` in `cwd`; its wall time.
fn session_start(home: &Path, cwd: &Path, n: usize) -> Duration {
    let payload = serde_json::json!({
        "session_id": format!("bench-{n}"),
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": "startup"
    })
    .to_string();
    hook_process(home, Some(cwd), "session-start", &payload)
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_path_buf();
    // With SOLARIA_BENCH_KEEP the repository and the store stay, for a profiler.
    let _removed_at_the_end = match std::env::var_os("SOLARIA_BENCH_KEEP") {
        Some(_) => {
            eprintln!("kept in {}", dir.keep().display());
            None
        }
        None => Some(dir),
    };
    let repo = root.join("repo");
    let home = root.join("home");
    std::fs::create_dir_all(&repo).expect("repo");
    std::fs::create_dir_all(&home).expect("home");
    let t = Instant::now();
    let history = repository(&repo);
    eprintln!(
        "{} commits over {FILES} files in {:.1} s",
        history.len(),
        t.elapsed().as_secs_f64()
    );
    let project = solaria_edge::project::detect(&repo);
    let mut store = Store::open(&home.join("memory.db"), "bench").expect("open");
    let t = Instant::now();
    add_memories(&mut store, &project, &history);
    eprintln!(
        "{MEMORIES} anchored memories in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    header(&format!(
        "staleness of {MEMORIES} memories, {COMMITS} commits (the check reads at most {})",
        staleness::MAX_COMMITS_READ
    ));
    let (mut bare, mut checks) = (Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..CHECK_RUNS {
        let t = Instant::now();
        let limit = format!("--max-count={}", staleness::MAX_COMMITS_READ);
        git(
            &repo,
            &[
                "log",
                "--topo-order",
                "--no-merges",
                "-M",
                "--name-status",
                "--format=%x00%H %P%x00%an%x00%ct%x00%s%x00",
                &limit,
            ],
        );
        bare.push(t.elapsed());
        let t = Instant::now();
        last = Some(staleness::check(&mut store, &project, &repo).expect("check"));
        checks.push(t.elapsed());
    }
    let b = summarize(&mut bare);
    let c = summarize(&mut checks);
    row("git log it reads (baseline)", b);
    row("staleness check (log, ls-tree, graph, table)", c);
    let last = last.expect("a check");
    println!(
        "\ncheck / bare git log: p50 {:.2}×, p95 {:.2}×; {} anchored, {} changed since, {} commits read",
        c.p50.as_secs_f64() / b.p50.as_secs_f64(),
        c.p95.as_secs_f64() / b.p95.as_secs_f64(),
        last.anchored,
        last.stale,
        last.commits_read
    );
    drop(store);

    // The hook reads what the check found; the same hook with the table emptied
    // (saved and put back between runs), interleaved.
    let db = home.join("memory.db");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch("CREATE TABLE saved AS SELECT * FROM staleness")
        .expect("save");
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for n in 0..HOOK_RUNS + 3 {
        conn.execute_batch("DELETE FROM staleness").expect("empty");
        let w_o = session_start(&home, &repo, 2 * n);
        conn.execute_batch("INSERT INTO staleness SELECT * FROM saved")
            .expect("fill");
        let w = session_start(&home, &repo, 2 * n + 1);
        if n >= 3 {
            with.push(w);
            without.push(w_o);
        }
    }
    header("SessionStart in that repository");
    let wo = summarize(&mut without);
    let wi = summarize(&mut with);
    row("session-start, staleness table empty", wo);
    row("session-start, what the check found", wi);
    println!(
        "\nwith / without: p50 {:.2}×, p95 {:.2}×",
        wi.p50.as_secs_f64() / wo.p50.as_secs_f64(),
        wi.p95.as_secs_f64() / wo.p95.as_secs_f64()
    );
}
