//! Calling the summarizer: a program (the prompt on its stdin, the answer on its
//! stdout, stopped with its whole process group at the timeout) or the Anthropic
//! Messages API. Each returns the answer's text and the tokens spent: the API's own
//! `usage`; for a program, the `usage` its answer reports (`claude -p
//! --output-format json` does), else an estimate from characters (prompt and
//! answer at about four characters per token).

use super::answer;
use crate::config::{NO_CAPTURE_VAR, SummarizerApi, SummarizerConfig};
use solaria_shared::context::estimate_tokens;
use solaria_shared::redact::redact;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most bytes of a program's output read (an answer is a few KiB).
const MAX_OUTPUT_BYTES: u64 = 256 * 1024;
/// The Messages API version sent.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// An answer and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    pub tokens: u64,
    /// `tokens` is the API's count, not an estimate.
    pub counted: bool,
}

/// Why no answer came back. [`RunError::spent`] says what the attempt cost anyway.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no summarizer is configured: set `command` or `api` in [summarizer]")]
    NotConfigured,
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{program} ran longer than {secs} s and was stopped")]
    Timeout {
        program: String,
        secs: u64,
        spent: u64,
    },
    #[error("{program} failed ({status}){stderr}")]
    Failed {
        program: String,
        status: String,
        stderr: String,
        spent: u64,
    },
    #[error("cannot pass the prompt to the summarizer: {0}")]
    Io(#[from] std::io::Error),
    #[error("the API key variable {0} is not set in the daemon's environment")]
    NoKey(String),
    #[error("the API call failed: {0}")]
    Http(String),
    #[error("the API answered {status}: {message}")]
    Api { status: u16, message: String },
}

impl RunError {
    /// Tokens the failed attempt is taken to have spent: a program that ran may
    /// have sent the prompt to a model before it failed.
    pub fn spent(&self) -> u64 {
        match self {
            RunError::Timeout { spent, .. } | RunError::Failed { spent, .. } => *spent,
            _ => 0,
        }
    }
}

/// Sends `prompt` to the configured summarizer; `work_dir` holds a program's
/// files while it runs (and is its working directory).
pub fn run(config: &SummarizerConfig, prompt: &str, work_dir: &Path) -> Result<Reply, RunError> {
    let timeout = Duration::from_secs(config.timeout_secs.max(1));
    match (&config.api, &config.command) {
        (Some(SummarizerApi::Anthropic), _) => call_anthropic(config, prompt, timeout),
        (None, Some(command)) => run_command(&command.argv(), prompt, work_dir, timeout),
        (None, None) => Err(RunError::NotConfigured),
    }
}

/// What names the configured summarizer in logs and stats (never the key).
pub fn describe(config: &SummarizerConfig) -> String {
    match (&config.api, &config.command) {
        (Some(SummarizerApi::Anthropic), _) => format!("the Anthropic API ({})", config.model),
        (None, Some(command)) => format!("`{}`", command.argv().first().map_or("", String::as_str)),
        (None, None) => "nothing (no `command` or `api`)".into(),
    }
}

/// The files of one run, removed when it ends however it ends.
struct RunFiles {
    prompt: PathBuf,
    out: PathBuf,
    err: PathBuf,
}

impl RunFiles {
    fn new(dir: &Path) -> std::io::Result<RunFiles> {
        solaria_hook::files::private_dir(dir)?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        Ok(RunFiles {
            prompt: dir.join(format!("{id}.prompt")),
            out: dir.join(format!("{id}.out")),
            err: dir.join(format!("{id}.err")),
        })
    }
}

impl Drop for RunFiles {
    fn drop(&mut self) {
        for f in [&self.prompt, &self.out, &self.err] {
            let _ = std::fs::remove_file(f);
        }
    }
}

fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .read(true)
        .mode(0o600)
        .open(path)
}

/// Runs `argv` with `prompt` on stdin. Files rather than pipes: a helper the
/// program leaves behind could hold a pipe open, and a pipe full of prompt could
/// block a program that never reads. Its own process group, so a timeout stops
/// everything it started; hooks in it capture nothing (`NO_CAPTURE_VAR`).
pub fn run_command(
    argv: &[String],
    prompt: &str,
    work_dir: &Path,
    timeout: Duration,
) -> Result<Reply, RunError> {
    use std::os::unix::process::CommandExt;
    let Some(program) = argv.first().filter(|p| !p.trim().is_empty()) else {
        return Err(RunError::NotConfigured);
    };
    let files = RunFiles::new(work_dir)?;
    std::fs::write(&files.prompt, prompt)?;
    let prompt_tokens = estimate_tokens(prompt) as u64;
    let mut child = Command::new(program)
        .args(&argv[1..])
        .current_dir(work_dir)
        .env(NO_CAPTURE_VAR, "1")
        .process_group(0)
        .stdin(Stdio::from(std::fs::File::open(&files.prompt)?))
        .stdout(Stdio::from(private_file(&files.out)?))
        .stderr(Stdio::from(private_file(&files.err)?))
        .spawn()
        .map_err(|source| RunError::Spawn {
            program: program.clone(),
            source,
        })?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() >= timeout {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            return Err(RunError::Timeout {
                program: program.clone(),
                secs: timeout.as_secs(),
                spent: prompt_tokens,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = read_bounded(&files.out)?;
    let (spent, counted) = command_cost(prompt_tokens, &text);
    if !status.success() {
        let stderr = read_bounded(&files.err).unwrap_or_default();
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let first: String = redact(first.trim()).chars().take(200).collect();
        return Err(RunError::Failed {
            program: program.clone(),
            status: status.to_string(),
            stderr: if first.is_empty() {
                String::new()
            } else {
                format!(": {first}")
            },
            spent,
        });
    }
    Ok(Reply {
        text,
        tokens: spent,
        counted,
    })
}

/// What a program's run cost: the tokens its answer reports, but never fewer than
/// the estimate of what went to it and came back, since the answer is partly the
/// model's own text, which a session it reads could talk into reporting nothing.
/// Whether that is the program's count.
fn command_cost(prompt_tokens: u64, answer_text: &str) -> (u64, bool) {
    let estimate = prompt_tokens + estimate_tokens(answer_text) as u64;
    match answer::reported_tokens(answer_text) {
        Some(reported) if reported >= estimate => (reported, true),
        _ => (estimate, false),
    }
}

fn read_bounded(path: &Path) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_OUTPUT_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// SIGKILL to the process group `pgid` (the program and what it started), by
/// `kill(1)`: the workspace allows no `unsafe`, which `kill(2)` would need.
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// One Messages API call (not streamed); the answer is the text blocks joined,
/// the cost its `usage`.
fn call_anthropic(
    config: &SummarizerConfig,
    prompt: &str,
    timeout: Duration,
) -> Result<Reply, RunError> {
    let key = std::env::var(&config.api_key_env)
        .ok()
        .filter(|k| !k.trim().is_empty())
        .ok_or_else(|| RunError::NoKey(config.api_key_env.clone()))?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::blocking::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .user_agent(concat!("solaria/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| RunError::Http(e.to_string()))?;
    let url = format!("{}/v1/messages", config.base_url.trim_end_matches('/'));
    let body = serde_json::json!({
        "model": config.model,
        "max_tokens": config.max_answer_tokens.max(1),
        "messages": [{"role": "user", "content": prompt}],
    });
    let response = http
        .post(&url)
        .header("x-api-key", key.trim())
        .header("anthropic-version", ANTHROPIC_VERSION)
        .json(&body)
        .send()
        // reqwest's message names the URL, never a header: the key stays out.
        .map_err(|e| RunError::Http(e.without_url().to_string()))?;
    let status = response.status();
    let value: serde_json::Value = response
        .json()
        .map_err(|e| RunError::Http(format!("the answer is not JSON: {}", e.without_url())))?;
    if !status.is_success() {
        let message = value
            .pointer("/error/message")
            .and_then(|m| m.as_str())
            .unwrap_or("no message");
        return Err(RunError::Api {
            status: status.as_u16(),
            message: redact(message).chars().take(200).collect(),
        });
    }
    let text = value
        .get("content")
        .and_then(|c| c.as_array())
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
                .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default();
    let (tokens, counted) = match value.get("usage").and_then(answer::usage_tokens) {
        Some(n) => (n, true),
        // No usage: the estimate, as for a program.
        None => (
            estimate_tokens(prompt) as u64 + estimate_tokens(&text) as u64,
            false,
        ),
    };
    Ok(Reply {
        text,
        tokens,
        counted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn a_program_reads_the_prompt_and_its_answer_is_returned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = run_command(
            &sh("tr a-z A-Z"),
            "hello",
            dir.path(),
            Duration::from_secs(10),
        )
        .expect("runs");
        assert_eq!(r.text, "HELLO");
        assert_eq!(r.tokens, 4, "5 + 5 characters, about 2 + 2 tokens");
        assert!(!r.counted);
        assert!(
            std::fs::read_dir(dir.path()).expect("dir").next().is_none(),
            "its files are gone"
        );
    }

    #[test]
    fn a_failing_program_says_why_and_a_hanging_one_is_stopped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = run_command(
            &sh("echo nope >&2; exit 3"),
            "p",
            dir.path(),
            Duration::from_secs(10),
        )
        .expect_err("fails");
        assert!(e.to_string().contains("nope"), "{e}");
        let start = Instant::now();
        // The sleep is a grandchild holding the output file: the group goes too.
        let e = run_command(
            &sh("sleep 30 & sleep 30"),
            "p",
            dir.path(),
            Duration::from_secs(1),
        )
        .expect_err("stopped");
        assert!(matches!(e, RunError::Timeout { .. }), "{e}");
        assert!(start.elapsed() < Duration::from_secs(10));
        let e = run_command(
            &["/nonexistent/x".into()],
            "p",
            dir.path(),
            Duration::from_secs(1),
        )
        .expect_err("no such program");
        assert!(matches!(e, RunError::Spawn { .. }), "{e}");
    }

    #[test]
    fn a_programs_reported_usage_counts_but_never_below_the_estimate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let answer = r#"{"type": "result", "result": "{}", "usage": {"input_tokens": 90000, "output_tokens": 10}}"#;
        let r = run_command(
            &sh(&format!("cat >/dev/null; echo '{answer}'")),
            "hello",
            dir.path(),
            Duration::from_secs(10),
        )
        .expect("runs");
        assert_eq!((r.tokens, r.counted), (90_010, true));
        // An answer reporting less than plainly went out and came back.
        let prompt = "p".repeat(4_000);
        let (tokens, counted) = command_cost(
            estimate_tokens(&prompt) as u64,
            r#"{"summary": "x", "usage": {"input_tokens": 0, "output_tokens": 0}}"#,
        );
        assert_eq!((tokens, counted), (1_017, false));
    }
}
