//! A real git repository on an [`Edge`], free of the user's and the system's git
//! configuration, and a command run in it as an agent's Bash tool runs it.

use crate::edge::Edge;
use crate::payloads::tool;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `git` in `dir` as `m`, not yet run.
pub fn command(m: &Edge, dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("HOME", m.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C");
    c
}

/// `git ARGS` in `dir` as `m`; its stdout. Panics when git fails.
pub fn git(m: &Edge, dir: &Path, args: &[&str]) -> String {
    let out = command(m, dir).args(args).output().expect("run git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("utf8")
}

/// Stages everything in `dir` and commits it as `message`; the new commit's sha.
pub fn commit_all(m: &Edge, dir: &Path, message: &str) -> String {
    git(m, dir, &["add", "-A"]);
    git(m, dir, &["commit", "-q", "-m", message]);
    git(m, dir, &["rev-parse", "HEAD"]).trim().to_string()
}

/// An empty repository of the project `github.com/acme/api` at `work/api` under
/// `m`'s root, on branch `main`, with its own author.
pub fn repository(m: &Edge) -> PathBuf {
    let dir = m.root.path().join("work/api");
    std::fs::create_dir_all(dir.join("src")).expect("repo dir");
    git(m, &dir, &["init", "-q", "-b", "main"]);
    git(m, &dir, &["config", "user.name", "Ada Lovelace"]);
    git(m, &dir, &["config", "user.email", "ada@example.com"]);
    let remote = ["remote", "add", "origin", "git@github.com:acme/api.git"];
    git(m, &dir, &remote);
    dir
}

/// Adds `commits` commits to the empty repository at `dir` in one `git
/// fast-import`, each changing one of `files` files (`src/f{i}.rs`, all created
/// by the first), one second apart and ending a minute ago; then checks `main`
/// out. What a long history costs to build by hand, in a few seconds.
pub fn long_history(m: &Edge, dir: &Path, commits: usize, files: usize) {
    use std::io::Write;
    let mut child = command(m, dir)
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("fast-import");
    {
        let mut input = std::io::BufWriter::new(child.stdin.take().expect("stdin"));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("time")
            .as_secs() as usize;
        let start = now - 60 - commits;
        for c in 0..commits {
            let message = format!("change {c}");
            let mut text = format!(
                "commit refs/heads/main\nmark :{}\ncommitter Ada Lovelace <ada@example.com> {} +0000\ndata {}\n{message}\n",
                c + 1,
                start + c,
                message.len()
            );
            let changed: Vec<usize> = if c == 0 {
                (0..files).collect()
            } else {
                text.push_str(&format!("from :{c}\n"));
                vec![c % files]
            };
            for f in changed {
                let body = format!("// {c}\n");
                text.push_str(&format!(
                    "M 644 inline src/f{f}.rs\ndata {}\n{body}",
                    body.len()
                ));
            }
            input.write_all(text.as_bytes()).expect("write");
        }
    }
    assert!(child.wait().expect("fast-import").success());
    git(m, dir, &["checkout", "-q", "-f", "main"]);
}

/// Runs `command` in a shell in `dir`, as an agent's Bash tool does; its stdout.
pub fn bash(m: &Edge, dir: &Path, command: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("HOME", m.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .output()
        .expect("run sh");
    assert!(out.status.success(), "{command}: {out:?}");
    String::from_utf8(out.stdout).expect("utf8")
}

/// Claude Code's PostToolUse payload of a Bash call in `session` that ran `command`
/// in `dir` and printed `stdout`.
pub fn bash_payload(session: &str, dir: &Path, command: &str, stdout: &str) -> Value {
    tool(
        session,
        dir,
        "Bash",
        json!({"command": command, "description": "Commit the change"}),
        json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}),
    )
}
