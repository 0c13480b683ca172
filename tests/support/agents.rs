//! Running the real coding agents (installed by `deploy/agents.sh`) on an [`Edge`]:
//! finding their binaries, the environment that keeps them offline and inside the
//! machine's HOME, and a time-boxed run in a process group of its own. Agent-neutral
//! except for the per-agent command builders ([`claude`], [`opencode`], [`codex`],
//! [`gemini`]).

use crate::edge::Edge;
use crate::{binary, model::ModelServer};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The variable naming the native Claude Code binary.
pub const CLAUDE_VAR: &str = "SOLARIA_TEST_CLAUDE";
/// The variable naming the native OpenCode binary.
pub const OPENCODE_VAR: &str = "SOLARIA_TEST_OPENCODE";
/// The variable naming the native Codex CLI binary.
pub const CODEX_VAR: &str = "SOLARIA_TEST_CODEX";
/// The variable naming Gemini CLI's bundle (`bundle/gemini.js`, run by node).
pub const GEMINI_VAR: &str = "SOLARIA_TEST_GEMINI";

/// How long one agent session may take before it is killed: a scripted session takes
/// a few seconds; this only stops a hung agent from hanging the suite.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(120);

/// The agent binary named by `var`, or `None` (after printing why) when it is not
/// installed on a developer's machine. In CI a missing agent fails the test: CI must
/// run the real agents ([`crate::require`]).
pub fn agent_binary(var: &str) -> Option<PathBuf> {
    let Some(path) = std::env::var_os(var).filter(|v| !v.is_empty()) else {
        return crate::require::skip(
            &format!("{var} is not set"),
            "run `eval \"$(bash deploy/agents.sh)\"` first",
        );
    };
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "{var}={} does not exist: run `bash deploy/agents.sh` again",
        path.display()
    );
    Some(path)
}

/// What one agent run did.
#[derive(Debug)]
pub struct AgentRun {
    /// The exit status, or `None` when the run was killed at its timeout.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl AgentRun {
    /// Panics with everything the agent printed unless it exited 0 in time.
    pub fn assert_success(&self) {
        assert!(
            self.status.is_some_and(|s| s.success()),
            "the agent failed ({:?} after {:?}):\nstdout: {}\nstderr: {}",
            self.status,
            self.elapsed,
            self.stdout,
            self.stderr
        );
    }
}

/// Runs `cmd` in its own process group with stdin closed and its output in files
/// under `dir`, killing the whole group at `timeout`. Files, not pipes: a helper the
/// agent leaves behind can hold a pipe open long after the agent ends.
pub fn run_timeboxed(mut cmd: Command, dir: &Path, timeout: Duration) -> AgentRun {
    use std::os::unix::process::CommandExt;
    std::fs::create_dir_all(dir).expect("output dir");
    let out_path = dir.join("stdout");
    let err_path = dir.join("stderr");
    let start = Instant::now();
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("start the agent");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the agent") {
            break Some(status);
        }
        if start.elapsed() > timeout {
            kill_group(child.id());
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    AgentRun {
        status,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        elapsed,
    }
}

fn kill_group(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
}

/// The environment every agent gets on `edge`: the machine's HOME and data dir, a
/// PATH that finds this build's `solaria` first, and no telemetry, update checks or
/// other traffic beyond the scripted endpoint.
pub fn agent_env(edge: &Edge) -> Vec<(String, String)> {
    let solaria_dir = binary("solaria")
        .parent()
        .expect("target dir")
        .display()
        .to_string();
    let path = format!(
        "{solaria_dir}:{}",
        std::env::var("PATH").unwrap_or_default()
    );
    let mut env: Vec<(String, String)> = [
        ("PATH", path.as_str()),
        ("HOME", &edge.home().display().to_string()),
        ("SOLARIA_HOME", &edge.data().display().to_string()),
        ("XDG_RUNTIME_DIR", &edge.runtime_dir().display().to_string()),
        ("PWD", &edge.project.display().to_string()),
        ("SHELL", "/bin/bash"),
        ("TZ", "UTC"),
        ("LANG", "C.UTF-8"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("DISABLE_ERROR_REPORTING", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
        ("OPENCODE_DISABLE_SHARE", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.extend(edge.env.iter().cloned());
    env
}

/// `claude -p PROMPT` in `edge`'s project against `model`, allowed the tools a coding
/// session uses and SOLARIA's MCP tools, answering as JSON.
pub fn claude(bin: &Path, edge: &Edge, model: &ModelServer, prompt: &str) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(&edge.project)
        .env_clear()
        .envs(agent_env(edge))
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted-not-a-key")
        .args(["-p", prompt, "--output-format", "json"])
        .args(["--allowedTools", "Bash Write Read Edit mcp__solaria"]);
    cmd
}

/// `opencode run PROMPT` in `edge`'s project against `model`: the project's
/// `opencode.json` gets the scripted provider, the model and permission to edit and run
/// commands, merged into what is there (an installer's plugin entry stays).
/// OpenCode's tools are lower case (`bash`, `read`, `write`, `edit`; paths in
/// `filePath`); it takes its project from `PWD`, which [`agent_env`] sets.
pub fn opencode(bin: &Path, edge: &Edge, model: &ModelServer, prompt: &str) -> Command {
    let config_path = edge.project.join("opencode.json");
    let mut config: serde_json::Value = std::fs::read_to_string(&config_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    config["provider"]["anthropic"]["options"] = serde_json::json!({
        "baseURL": format!("{}/v1", model.url),
        "apiKey": "sk-ant-scripted-not-a-key",
    });
    config["model"] = "anthropic/claude-sonnet-4-5".into();
    config["permission"]["edit"] = "allow".into();
    config["permission"]["bash"] = "allow".into();
    std::fs::write(&config_path, config.to_string()).expect("write opencode.json");
    let mut cmd = Command::new(bin);
    cmd.current_dir(&edge.project)
        .env_clear()
        .envs(agent_env(edge))
        .args(["run", prompt]);
    cmd
}

/// `codex exec PROMPT` in `edge`'s project against `model`, with no approvals or
/// sandbox (a scripted session), answering as JSON lines. The scripted provider and
/// the quiet settings go on the command line (`-c`), so the user's `config.toml`
/// holds only what the user and SOLARIA's installer wrote. `args` are more of
/// `codex exec`'s arguments (`-c key=value`, flags).
pub fn codex(bin: &Path, edge: &Edge, model: &ModelServer, prompt: &str, args: &[&str]) -> Command {
    let provider = format!(
        "model_providers.scripted={{ name = \"scripted\", base_url = \"{}/v1\", env_key = \"SCRIPTED_KEY\", wire_api = \"responses\" }}",
        model.url
    );
    let mut cmd = Command::new(bin);
    cmd.current_dir(&edge.project)
        .env_clear()
        .envs(agent_env(edge))
        .env("SCRIPTED_KEY", "sk-scripted-not-a-key")
        .args(["exec", "--json", "--skip-git-repo-check"])
        .arg("--dangerously-bypass-approvals-and-sandbox")
        // A model of Codex's catalog: its tools are then apply_patch, tool_search…
        .args([
            "-m",
            "gpt-5.5",
            "-c",
            "model_provider=scripted",
            "-c",
            &provider,
        ])
        .args(["-c", "check_for_update_on_startup=false"])
        .args([
            "-c",
            "analytics.enabled=false",
            "-c",
            "feedback.enabled=false",
        ])
        .args(["-c", "otel.exporter=\"none\""]);
    cmd.args(args).args(["--", prompt]);
    cmd
}

/// What Gemini CLI needs in the user's `settings.json` to run against the scripted
/// endpoint (an API key as its way in), quiet: the settings a test writes as the
/// user's before SOLARIA is installed.
pub const GEMINI_USER_SETTINGS: &str = "{\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  \"general\": {\"enableAutoUpdate\": false, \"enableAutoUpdateNotification\": false},\n  \"privacy\": {\"usageStatisticsEnabled\": false},\n  \"telemetry\": {\"enabled\": false}\n}\n";

/// `gemini -p PROMPT` in `edge`'s project against `model`, approving every tool
/// (`--yolo`), answering as JSON; the project's folder trusted for this run.
/// `args` are more arguments (`--resume latest`).
pub fn gemini(
    bin: &Path,
    edge: &Edge,
    model: &ModelServer,
    prompt: &str,
    args: &[&str],
) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(&edge.project)
        .env_clear()
        .envs(agent_env(edge))
        .env("GOOGLE_GEMINI_BASE_URL", &model.url)
        .env("GEMINI_API_KEY", "scripted-not-a-key")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .args(args)
        .args(["--yolo", "-o", "json", "-p", prompt]);
    cmd
}
