//! Where the edge agent keeps its data and how it is tuned: one typed config loaded
//! from `config.toml`, with `SOLARIA_HOME` overriding the location of everything.

use serde::Deserialize;
use solaria_hook::dirs::DataDirSource;
use solaria_hook::files::private_dir;
pub use solaria_store::retention::RetentionConfig;
use std::path::{Path, PathBuf};

/// The error for a config file that exists but cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the config file {path} is not valid: {message}\nfix it or move it aside; see the README's Configuration section"
    )]
    Parse { path: PathBuf, message: String },
    #[error("cannot find a home directory: set SOLARIA_HOME to the directory SOLARIA should use")]
    NoHome,
}

/// The whole configuration. Every field has a default, so an empty or missing file
/// is a valid configuration.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where the store, logs and credentials live (overrides the XDG default).
    pub data_dir: Option<PathBuf>,
    /// The human name of this machine (defaults to the host name).
    pub machine_name: Option<String>,
    pub capture: CaptureConfig,
    pub context: ContextConfig,
    pub recall: RecallConfig,
    pub retention: RetentionConfig,
    pub sync: SyncConfig,
    pub search: SearchConfig,
    pub serve: ServeConfig,
    pub summarizer: SummarizerConfig,
}

/// Bounds on what one captured event may store.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptureConfig {
    /// The largest tool response kept, in bytes; larger ones keep head and tail.
    pub max_response_bytes: usize,
    /// The largest tool input or prompt kept, in bytes.
    pub max_input_bytes: usize,
    /// Tools never captured (exact names, e.g. `TodoRead`).
    pub skip_tools: Vec<String>,
    /// Projects (keys or names) never captured at all.
    pub skip_projects: Vec<String>,
    /// A hook gives up (exit 0, event dropped and logged) after this long, so that a
    /// stuck stdin or a locked store never holds the agent up.
    pub hook_timeout_ms: u64,
}

impl Default for CaptureConfig {
    fn default() -> Self {
        CaptureConfig {
            max_response_bytes: 24 * 1024,
            max_input_bytes: 16 * 1024,
            skip_tools: Vec::new(),
            skip_projects: Vec::new(),
            hook_timeout_ms: 5_000,
        }
    }
}

/// What SessionStart injects.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Approximate token budget of the injected context.
    pub token_budget: usize,
    /// Most session summaries listed.
    pub max_sessions: usize,
    /// Most observations listed.
    pub max_observations: usize,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            token_budget: solaria_shared::wire::CONTEXT_DEFAULT_BUDGET,
            max_sessions: solaria_shared::context::DEFAULT_MAX_SESSIONS,
            max_observations: solaria_shared::context::DEFAULT_MAX_EVENTS,
        }
    }
}

/// What each prompt brings back from the memory (`ops::recall`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecallConfig {
    /// Recall into prompts at all.
    pub enabled: bool,
    /// Most items added to one prompt.
    pub max_items: usize,
    /// The least score an item needs to be added ([`RecallConfig::score`]): by
    /// words alone, the share of the prompt's weighted words a record holds (0–1).
    pub min_score: f64,
    /// The similarity in meaning (cosine measured from the model's centre, about 0
    /// for unrelated texts) that reaches `min_score` alone; a little less does with
    /// some of the prompt's words. Used when the daemon answers with its model.
    pub min_similarity: f64,
    /// How long a prompt's hook waits for the daemon's recall (by meaning and
    /// words) before recalling by words in process.
    pub daemon_wait_ms: u64,
}

/// The least share of a prompt an item must hold unless configured otherwise
/// (`crate::store::search::Candidate::share`: about a third of the prompt's weighted
/// words when they are in its title, more elsewhere). Measured on `eval/` like
/// [`DEFAULT_MIN_SIMILARITY`]: the lowest threshold at which none of 16 unrelated
/// prompts was told anything (0.30 told two); there every exact-identifier query
/// and 98% of the keyword ones still recall their target, and 90% of the items it
/// lets through are targets (docs/BENCHMARKS.md, "Recall into a prompt").
pub const DEFAULT_MIN_SCORE: f64 = 0.4;
/// The least similarity in meaning (`store::vectors::centred_cosine`) an item found
/// by meaning alone needs unless configured otherwise: the lowest threshold at which
/// none of 16 unrelated prompts was told anything from the `eval/` corpus, with
/// either model; there 0.56 (MiniLM) and 0.80 (multilingual-e5) of the items it lets
/// through are the queries' targets (docs/BENCHMARKS.md, "Recall into a prompt").
pub const DEFAULT_MIN_SIMILARITY: f64 = 0.45;

impl RecallConfig {
    /// **The recall rule**: one score of how well an item matches a prompt, its
    /// words and its meaning together, compared with `min_score`. The words count
    /// as their share ([`DEFAULT_MIN_SCORE`]); a similarity in meaning (when the
    /// prompt and the record have vectors) adds from [`MEANING_RAMP`] under
    /// `min_similarity` up, so steeply that `min_similarity` alone reaches
    /// `min_score`. A record a little short by meaning is recalled when it also
    /// holds some of the prompt's words, which an unrelated text near the
    /// threshold rarely does; a similarity further down says nothing.
    pub fn score(&self, words: f64, meaning: Option<f64>) -> f64 {
        // 1 at `min_similarity`, 0 from MEANING_RAMP under it down.
        let by_meaning = meaning.map_or(0.0, |s| {
            ((s - self.min_similarity) / MEANING_RAMP + 1.0).max(0.0)
        });
        words + self.min_score * by_meaning
    }

    /// The score of an item recalled into a prompt: [`RecallConfig::score`], where
    /// a decision's or a memory's words count [`KNOWLEDGE_WORDS_ALONE`] times when
    /// its meaning could not be weighed (no model, or no vector of it yet).
    pub fn item_score(&self, item: Recalled, words: f64, meaning: Option<f64>) -> f64 {
        let words = match (item, meaning) {
            (Recalled::Knowledge, None) => (words * KNOWLEDGE_WORDS_ALONE).min(1.0),
            _ => words,
        };
        self.score(words, meaning)
    }
}

/// What an item recalled into a prompt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recalled {
    /// A decision or a memory: written to be recalled.
    Knowledge,
    /// A past session or event, as captured.
    History,
}

/// How much more a decision's or a memory's words count than a captured event's
/// when they are all there is to go by ([`RecallConfig::item_score`]). The minimum
/// score was set on captured events, where a third of a prompt's words turns up by
/// chance; a record a person or an agent wrote to be remembered seldom shares a
/// third of a prompt's words by chance. Chosen on `eval/knowledge/` by words
/// alone: at 1.3 a prompt sharing a few words with a record ("tune the Argon2id
/// memory parameter…" aside) recalls it, 21 of 22, and no unrelated or
/// other-project prompt is told anything (their best then scores 0.27); with
/// meaning weighed it changes nothing, as the leap-year prompt that shares "days"
/// with a memory would otherwise reach the minimum
/// (docs/experiments/2026-12-07-curated-words.md).
pub const KNOWLEDGE_WORDS_ALONE: f64 = 1.3;

/// How far under `[recall] min_similarity` a similarity in meaning starts to count
/// ([`RecallConfig::score`]). Chosen on the labelled set `eval/knowledge/` with
/// both test models: unrelated prompts reach 0.43 there (one shares a word with
/// its nearest record too) and stay under the minimum score, while paraphrases and
/// Spanish questions at 0.40–0.45 that share a word or two with their record are
/// recalled (docs/experiments/2026-12-06-one-recall-score.md).
pub const MEANING_RAMP: f64 = 0.05;

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            enabled: true,
            max_items: 5,
            min_score: DEFAULT_MIN_SCORE,
            min_similarity: DEFAULT_MIN_SIMILARITY,
            daemon_wait_ms: 100,
        }
    }
}

/// The central service this machine syncs with, if any.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyncConfig {
    /// The server URL; when set, records not yet pushed are never pruned.
    pub server: Option<String>,
    /// Projects (keys or names) that never leave this machine.
    pub local_only_projects: Vec<String>,
    /// Minutes between the background agent's syncs (`solaria serve`).
    pub interval_minutes: u64,
    /// Also pull teammates' raw observations of shared projects (their knowledge,
    /// sessions and summaries always come); by default they stay on the central
    /// service and are reached through `solaria search --remote`.
    pub team_observations: bool,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            server: None,
            local_only_projects: Vec::new(),
            interval_minutes: 60,
            team_observations: false,
        }
    }
}

/// Whether the project whose key is `key` and name is `name` is one of
/// `local_only` (`[sync] local_only_projects`, which names projects by either):
/// the one rule for what never leaves this machine, applied to each record and
/// vector before a push (`sync`) and to each session before the summarizer
/// (`ops::distill`).
pub fn is_local_only(local_only: &[String], key: &str, name: &str) -> bool {
    local_only.iter().any(|p| p == key || p == name)
}

/// Semantic search: where the embedding model is and how the daemon fills vectors.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// The model directory (default: `model/` in the data dir, where
    /// `solaria model install` puts it).
    pub model_dir: Option<PathBuf>,
    /// The mode when none is asked for: `lexical`, `semantic` or `hybrid`
    /// (default: hybrid when the model and vectors are present, else lexical).
    pub default_mode: Option<solaria_shared::SearchMode>,
    /// Records embedded per batch by the daemon.
    pub embed_batch: usize,
    /// Tokens of a record read by the model (its title and start). The cost of
    /// embedding grows with length; a record's gist is at its start.
    pub max_tokens: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            model_dir: None,
            default_mode: None,
            embed_batch: 32,
            max_tokens: 128,
        }
    }
}

/// The daemon (`solaria serve`) and its local HTTP API (`docs/LOCAL_API.md`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// The port of the local HTTP API, always on 127.0.0.1.
    pub http_port: HttpPort,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            http_port: HttpPort::Port(37777),
        }
    }
}

/// `[serve] http_port`: a port (`37777`), `0` (no API), or `"any"` (a free port the
/// system picks, for a second daemon on the machine or a test: clients find it in
/// `serve.addr` like any other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpPort {
    Off,
    Port(u16),
    Any,
}

impl HttpPort {
    /// The port to bind on 127.0.0.1 (0: the system picks one), or `None` when the
    /// API is off.
    pub fn to_bind(self) -> Option<u16> {
        match self {
            HttpPort::Off => None,
            HttpPort::Port(port) => Some(port),
            HttpPort::Any => Some(0),
        }
    }
}

impl<'de> Deserialize<'de> for HttpPort {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{Error, Unexpected, Visitor};
        struct Setting;
        impl Visitor<'_> for Setting {
            type Value = HttpPort;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a port (1 to 65535), 0 to turn the local API off, or \"any\" for any free port",
                )
            }
            fn visit_i64<E: Error>(self, n: i64) -> Result<HttpPort, E> {
                match u16::try_from(n) {
                    Ok(0) => Ok(HttpPort::Off),
                    Ok(port) => Ok(HttpPort::Port(port)),
                    Err(_) => Err(E::invalid_value(Unexpected::Signed(n), &self)),
                }
            }
            fn visit_u64<E: Error>(self, n: u64) -> Result<HttpPort, E> {
                match i64::try_from(n) {
                    Ok(n) => self.visit_i64(n),
                    Err(_) => Err(E::invalid_value(Unexpected::Unsigned(n), &self)),
                }
            }
            fn visit_str<E: Error>(self, word: &str) -> Result<HttpPort, E> {
                match word {
                    "any" => Ok(HttpPort::Any),
                    _ => Err(E::invalid_value(Unexpected::Str(word), &self)),
                }
            }
        }
        deserializer.deserialize_any(Setting)
    }
}

/// The optional model summarizer (`crate::distill`): off unless `enabled`, and then
/// run by the daemon only, never by a hook.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SummarizerConfig {
    pub enabled: bool,
    /// A program that reads the prompt on stdin and prints the JSON answer: a list
    /// of arguments, or one string split at whitespace (no shell, no quoting).
    pub command: Option<SummarizerCommand>,
    /// `"anthropic"`: the Messages API instead of a command.
    pub api: Option<SummarizerApi>,
    /// The environment variable holding the API key (the key itself is never
    /// written to the config or the store).
    pub api_key_env: String,
    pub model: String,
    pub base_url: String,
    /// A command or call running longer is stopped (the command's process group
    /// killed) and counts as a failure.
    pub timeout_secs: u64,
    /// The most tokens one answer may take (the API's `max_tokens`); reserved
    /// against the caps before each call, and a longer answer is refused.
    pub max_answer_tokens: u64,
    /// Tokens one session may spend, across its attempts.
    pub max_tokens_per_session: u64,
    /// Tokens all sessions may spend in a UTC day.
    pub max_tokens_per_day: u64,
    /// A session is taken once nothing was captured in it for this long (a Stop
    /// closes a session after every turn; the user may still be typing).
    pub quiet_secs: u64,
    /// Only sessions that ended this recently are sent: turning the summarizer on
    /// does not send the whole history.
    pub lookback_hours: u64,
}

impl Default for SummarizerConfig {
    fn default() -> Self {
        SummarizerConfig {
            enabled: false,
            command: None,
            api: None,
            api_key_env: "ANTHROPIC_API_KEY".into(),
            model: "claude-haiku-4-5".into(),
            base_url: "https://api.anthropic.com".into(),
            timeout_secs: 120,
            max_answer_tokens: 1_024,
            max_tokens_per_session: 20_000,
            max_tokens_per_day: 200_000,
            quiet_secs: 300,
            lookback_hours: 24,
        }
    }
}

/// `[summarizer] command`: an argument list, or one string split at whitespace.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum SummarizerCommand {
    Line(String),
    Args(Vec<String>),
}

impl SummarizerCommand {
    /// The program and its arguments (empty when nothing is configured).
    pub fn argv(&self) -> Vec<String> {
        match self {
            SummarizerCommand::Line(line) => line.split_whitespace().map(str::to_string).collect(),
            SummarizerCommand::Args(args) => args.clone(),
        }
    }
}

/// The APIs the summarizer can call.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SummarizerApi {
    Anthropic,
}

/// The resolved locations: the config file and the data dir.
#[derive(Debug, Clone)]
pub struct Paths {
    pub config_file: PathBuf,
    pub data_dir: PathBuf,
}

impl Paths {
    /// The SQLite store.
    pub fn store(&self) -> PathBuf {
        self.data_dir.join("memory.db")
    }

    /// Where `solaria model install` puts the embedding model.
    pub fn default_model_dir(&self) -> PathBuf {
        self.data_dir.join("model")
    }

    /// The hook log (failures are written here, never to the agent).
    pub fn hook_log(&self) -> PathBuf {
        solaria_hook::dirs::hook_log(&self.data_dir)
    }

    /// Where the edge's logs live (`hooks.log`, `serve.log`).
    pub fn logs_dir(&self) -> PathBuf {
        solaria_hook::dirs::logs_dir(&self.data_dir)
    }

    /// Makes the data dir and its `logs/` private (0700, see
    /// [`solaria_hook::files::private_dir`]) before a log is written; returns `logs/`.
    pub fn prepare_logs_dir(&self) -> std::io::Result<PathBuf> {
        private_dir(&self.data_dir)?;
        let logs = self.logs_dir();
        private_dir(&logs)?;
        Ok(logs)
    }

    /// The local API's bearer token (0600), made by the daemon on first start.
    pub fn api_token(&self) -> PathBuf {
        self.data_dir.join(API_TOKEN_FILE)
    }

    /// The address the daemon's local API listens on, while it runs.
    pub fn serve_addr(&self) -> PathBuf {
        self.data_dir.join(SERVE_ADDR_FILE)
    }
}

/// The file name of the local API's bearer token in the data dir.
pub const API_TOKEN_FILE: &str = "api-token";
/// The file name of the daemon's API address in the data dir (`127.0.0.1:37777`
/// and a newline).
pub const SERVE_ADDR_FILE: &str = "serve.addr";

/// The variable that turns capture off in the hooks of a process tree (see
/// [`Env::no_capture`]).
pub use solaria_hook::dirs::NO_CAPTURE_VAR;

/// The variables an agent sets in the shells it runs commands in, and the agent's
/// name: a `solaria` command run there is the agent's, not a person's.
/// (Codex CLI gives its shell commands `CODEX_THREAD_ID`, Gemini CLI `GEMINI_CLI=1`;
/// neither sets them for its hooks.)
const AGENT_SHELLS: &[(&str, &str)] = &[
    ("CLAUDECODE", "claude-code"),
    ("OPENCODE", "opencode"),
    ("CODEX_THREAD_ID", "codex"),
    ("GEMINI_CLI", "gemini"),
];

/// The environment the paths are resolved from (kept explicit so tests need not
/// touch the process environment).
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub solaria_home: Option<PathBuf>,
    pub solaria_config: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    /// The user session's own in-memory directory (`XDG_RUNTIME_DIR`): where the
    /// daemon spools hook events (`solaria_hook::spool`).
    pub xdg_runtime_dir: Option<PathBuf>,
    pub home: Option<PathBuf>,
    /// `CODEX_HOME`: where Codex CLI keeps its configuration (else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `SOLARIA_CLOCK_SKEW_MS`: milliseconds added to this machine's wall clock
    /// when stamping writes (a test seam: a machine whose clock is off).
    pub clock_skew_ms: i64,
    /// `SOLARIA_SYSTEMCTL`: the `systemctl` the installer runs (tests record calls).
    pub systemctl: Option<PathBuf>,
    /// `SOLARIA_LAUNCHCTL`: the `launchctl` the installer runs (tests record calls).
    pub launchctl: Option<PathBuf>,
    /// `SOLARIA_SERVICE_MANAGER`: `systemd`, `launchd` or `none`, over the one this
    /// system has (`edge::service::Manager::of`).
    pub service_manager: Option<String>,
    /// `SOLARIA_NO_CAPTURE` (non-empty): hooks capture nothing. Set on the
    /// summarizer's command, so an agent run as the summarizer (`claude -p`) is
    /// not captured as a session of its own, summarized in turn.
    pub no_capture: bool,
    /// The agent whose shell this process runs in, when one says so
    /// (`CLAUDECODE`, `OPENCODE`, `CODEX_THREAD_ID`, `GEMINI_CLI`): what such a
    /// command writes is the agent's.
    pub agent_shell: Option<String>,
}

impl Env {
    /// Reads the variables that matter from the process environment.
    pub fn from_process() -> Self {
        use solaria_hook::dirs::{CONFIG_VAR, HOME_VAR, RUNTIME_DIR_VAR, var};
        Env {
            solaria_home: var(HOME_VAR),
            solaria_config: var(CONFIG_VAR),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            xdg_data_home: var("XDG_DATA_HOME"),
            xdg_runtime_dir: var(RUNTIME_DIR_VAR),
            home: var("HOME"),
            codex_home: var("CODEX_HOME"),
            clock_skew_ms: std::env::var("SOLARIA_CLOCK_SKEW_MS")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            systemctl: var("SOLARIA_SYSTEMCTL"),
            launchctl: var("SOLARIA_LAUNCHCTL"),
            service_manager: std::env::var("SOLARIA_SERVICE_MANAGER")
                .ok()
                .map(|v| v.trim().to_ascii_lowercase())
                .filter(|v| !v.is_empty()),
            no_capture: var(NO_CAPTURE_VAR).is_some(),
            agent_shell: AGENT_SHELLS
                .iter()
                .find(|(variable, _)| var(variable).is_some())
                .map(|(_, agent)| (*agent).to_string()),
        }
    }
}

impl Env {
    /// Where the data dir comes from in this environment (decided by
    /// `solaria_hook::dirs`, which `solaria-hook` asks too).
    pub fn data_dir_source(&self) -> DataDirSource<'_> {
        DataDirSource::of(self.solaria_home.as_deref(), self.solaria_config.as_deref())
    }
}

/// Finds the config file, reads it, and resolves the data dir:
/// `SOLARIA_HOME` holds both when set; otherwise the config file is
/// `$SOLARIA_CONFIG` or `$XDG_CONFIG_HOME/solaria/config.toml`, and the data dir is
/// the file's `data_dir` or `$XDG_DATA_HOME/solaria` (`~/.local/share/solaria`).
pub fn load(env: &Env) -> Result<(Config, Paths), ConfigError> {
    let config_file = match (&env.solaria_config, &env.solaria_home) {
        (Some(file), _) => file.clone(),
        (None, Some(home)) => home.join("config.toml"),
        (None, None) => config_file_default(env)?,
    };
    let config = read_config(&config_file)?;
    let data_dir = match (env.data_dir_source(), &config.data_dir) {
        (DataDirSource::Home(home), _) => home.to_path_buf(),
        (_, Some(dir)) => dir.clone(),
        (_, None) => data_dir_default(env)?,
    };
    Ok((
        config,
        Paths {
            config_file,
            data_dir,
        },
    ))
}

/// Like [`load`], but never fails: a broken config file yields the defaults (and
/// the error, for the hook log). Hooks use this; they must never stop capturing
/// because of a typo in a config file.
pub fn load_lenient(env: &Env) -> (Config, Paths, Option<ConfigError>) {
    match load(env) {
        Ok((config, paths)) => (config, paths, None),
        Err(e) => {
            let data_dir = env
                .solaria_home
                .clone()
                .or_else(|| data_dir_default(env).ok())
                .unwrap_or_else(|| std::env::temp_dir().join("solaria"));
            let config_file = data_dir.join("config.toml");
            (
                Config::default(),
                Paths {
                    config_file,
                    data_dir,
                },
                Some(e),
            )
        }
    }
}

fn config_file_default(env: &Env) -> Result<PathBuf, ConfigError> {
    solaria_hook::dirs::default_config_file(env.xdg_config_home.as_deref(), env.home.as_deref())
        .ok_or(ConfigError::NoHome)
}

fn data_dir_default(env: &Env) -> Result<PathBuf, ConfigError> {
    solaria_hook::dirs::default_data_dir(env.xdg_data_home.as_deref(), env.home.as_deref())
        .ok_or(ConfigError::NoHome)
}

/// Reads one config file; a missing file is the default configuration.
pub fn read_config(path: &Path) -> Result<Config, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    toml::from_str(&text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

impl Config {
    /// The machine's display name: configured, else the host name.
    pub fn machine_name(&self) -> String {
        if let Some(name) = self
            .machine_name
            .as_deref()
            .filter(|n| !n.trim().is_empty())
        {
            return name.trim().to_string();
        }
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "this-machine".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_weighs_words_and_meaning_as_one_score() {
        let cfg = RecallConfig::default();
        let passes = |words, meaning| cfg.score(words, meaning) >= cfg.min_score;
        // Each way alone keeps its own minimum.
        assert_eq!(
            cfg.score(0.3, None),
            0.3,
            "by words alone, the share itself"
        );
        assert!(passes(cfg.min_score, None) && !passes(0.39, None));
        assert!(passes(0.0, Some(cfg.min_similarity)) && !passes(0.0, Some(0.44)));
        // A little short by meaning, with some of the prompt's words: recalled.
        assert!(passes(0.2, Some(0.43)));
        // One common word and a near miss: the labelled set's hardest unrelated
        // prompt ("how many days are there in a leap year") stays out.
        assert!(!passes(0.16, Some(0.43)));
        assert!(
            !passes(0.35, Some(0.40)),
            "the floor: meaning adds nothing there"
        );
        // A similarity under the floor never takes away what words give.
        assert_eq!(cfg.score(0.45, Some(-0.2)), 0.45);
        // The floor follows a configured minimum similarity.
        let lower = RecallConfig {
            min_similarity: 0.30,
            ..RecallConfig::default()
        };
        assert!(lower.score(0.0, Some(0.30)) >= lower.min_score);
        assert!(lower.score(0.0, Some(0.24)) == 0.0 && lower.score(0.0, Some(0.29)) < 0.4);
    }

    #[test]
    fn a_decisions_words_count_more_only_while_its_meaning_is_not_weighed() {
        let cfg = RecallConfig::default();
        let knowledge = |words, meaning| cfg.item_score(Recalled::Knowledge, words, meaning);
        let history = |words, meaning| cfg.item_score(Recalled::History, words, meaning);
        // "add a new Zustand store for the settings feature": 0.31 of its words.
        assert!(knowledge(0.31, None) >= cfg.min_score);
        assert!(history(0.31, None) < cfg.min_score);
        // The best unrelated prompt by words stays out.
        assert!(knowledge(0.275, None) < cfg.min_score);
        // With meaning weighed, words count as they are.
        assert_eq!(knowledge(0.16, Some(0.43)), cfg.score(0.16, Some(0.43)));
        assert!(knowledge(0.16, Some(0.43)) < cfg.min_score);
        assert_eq!(knowledge(0.9, None), 1.0, "a share stays a share");
    }

    #[test]
    fn solaria_home_holds_config_and_data() {
        let env = Env {
            solaria_home: Some("/nonexistent/sol".into()),
            home: Some("/home/u".into()),
            ..Env::default()
        };
        let (config, paths) = load(&env).expect("missing file is the default");
        assert_eq!(paths.data_dir, PathBuf::from("/nonexistent/sol"));
        assert_eq!(
            paths.config_file,
            PathBuf::from("/nonexistent/sol/config.toml")
        );
        assert_eq!(config.context.token_budget, 2_000);
    }

    #[test]
    fn xdg_defaults_and_data_dir_from_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = Env {
            xdg_config_home: Some(dir.path().into()),
            home: Some("/home/u".into()),
            ..Env::default()
        };
        let (_, paths) = load(&env).expect("loads");
        assert_eq!(
            paths.data_dir,
            PathBuf::from("/home/u/.local/share/solaria")
        );

        std::fs::create_dir_all(dir.path().join("solaria")).expect("mkdir");
        std::fs::write(
            dir.path().join("solaria/config.toml"),
            "data_dir = \"/srv/mem\"\n[context]\ntoken_budget = 500\n",
        )
        .expect("write");
        let (config, paths) = load(&env).expect("loads");
        assert_eq!(paths.data_dir, PathBuf::from("/srv/mem"));
        assert_eq!(config.context.token_budget, 500);
    }

    #[test]
    fn the_local_api_port_defaults_to_37777_0_turns_it_off_and_any_takes_a_free_one() {
        assert_eq!(Config::default().serve.http_port, HttpPort::Port(37777));
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("config.toml");
        let port = |text: &str| {
            std::fs::write(&file, format!("[serve]\nhttp_port = {text}\n")).expect("write");
            read_config(&file).map(|c| c.serve.http_port)
        };
        assert_eq!(port("0").expect("loads"), HttpPort::Off);
        assert_eq!(port("8080").expect("loads").to_bind(), Some(8080));
        assert_eq!(port("\"any\"").expect("loads").to_bind(), Some(0));
        let error = port("70000").expect_err("a port is at most 65535");
        assert!(error.to_string().contains("\"any\""), "{error}");
        assert!(port("-1").is_err());
        assert!(port("\"free\"").is_err(), "only \"any\" is a word");
        std::fs::write(&file, "[serve]\nbind = \"0.0.0.0\"\n").expect("write");
        assert!(
            read_config(&file).is_err(),
            "the bind address is not configurable"
        );
    }

    #[test]
    fn the_summarizer_is_off_by_default_and_takes_a_command_or_the_api() {
        let c = Config::default().summarizer;
        assert!(!c.enabled && c.command.is_none() && c.api.is_none());
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("config.toml");
        std::fs::write(
            &file,
            "[summarizer]\nenabled = true\ncommand = \"claude -p  --model haiku\"\n",
        )
        .expect("write");
        let c = read_config(&file).expect("loads").summarizer;
        assert_eq!(
            c.command.expect("command").argv(),
            ["claude", "-p", "--model", "haiku"]
        );
        std::fs::write(
            &file,
            "[summarizer]\ncommand = [\"my model\", \"--json\"]\napi = \"anthropic\"\n",
        )
        .expect("write");
        let c = read_config(&file).expect("loads").summarizer;
        assert_eq!(c.command.expect("command").argv(), ["my model", "--json"]);
        assert_eq!(c.api, Some(SummarizerApi::Anthropic));
        std::fs::write(&file, "[summarizer]\napi = \"openai\"\n").expect("write");
        assert!(read_config(&file).is_err(), "only the Anthropic API");
    }

    #[test]
    fn a_broken_file_is_a_clear_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "[context]\ntoken_budgt = 5\n").expect("write");
        let err = read_config(&file).expect_err("unknown key refused");
        let msg = err.to_string();
        assert!(
            msg.contains("token_budgt") && msg.contains("config.toml"),
            "{msg}"
        );
    }
}
