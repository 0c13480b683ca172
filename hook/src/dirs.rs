//! Where a hook finds the memory: the environment variables a hook process reads
//! and the precedence between them, decided here for `solaria-hook` and for every
//! `solaria` command alike (the edge's config loader asks here too).

use std::path::{Path, PathBuf};

/// `SOLARIA_HOME`: the data dir (and the config file in it), whatever else is set.
pub const HOME_VAR: &str = "SOLARIA_HOME";
/// `SOLARIA_CONFIG`: the config file, whose `data_dir` then decides.
pub const CONFIG_VAR: &str = "SOLARIA_CONFIG";
/// `SOLARIA_NO_CAPTURE` (non-empty): hooks capture nothing in this process tree.
pub const NO_CAPTURE_VAR: &str = "SOLARIA_NO_CAPTURE";
/// `XDG_RUNTIME_DIR`: the user session's own in-memory directory, where the spool
/// lives.
pub const RUNTIME_DIR_VAR: &str = "XDG_RUNTIME_DIR";

/// The hook log's place in the data dir (failures go here, never to the agent).
pub fn hook_log(data_dir: &Path) -> PathBuf {
    logs_dir(data_dir).join("hooks.log")
}

/// Where the edge's logs live in the data dir (`hooks.log`, `serve.log`).
pub fn logs_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("logs")
}

/// A variable of the process environment, unset when empty.
pub fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The config file when no variable names one: `$XDG_CONFIG_HOME/solaria/config.toml`,
/// else `~/.config/solaria/config.toml`; `None` without either directory.
pub fn default_config_file(xdg_config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let base = match (xdg_config_home, home) {
        (Some(dir), _) => dir.to_path_buf(),
        (None, Some(home)) => home.join(".config"),
        (None, None) => return None,
    };
    Some(base.join("solaria").join("config.toml"))
}

/// The data dir when neither a variable nor a config file names one:
/// `$XDG_DATA_HOME/solaria`, else `~/.local/share/solaria`; `None` without either
/// directory.
pub fn default_data_dir(xdg_data_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let base = match (xdg_data_home, home) {
        (Some(dir), _) => dir.to_path_buf(),
        (None, Some(home)) => home.join(".local").join("share"),
        (None, None) => return None,
    };
    Some(base.join("solaria"))
}

/// What the environment alone says of the data dir, before any config file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataDirSource<'a> {
    /// `$SOLARIA_HOME`: the data dir, whatever a config file says.
    Home(&'a Path),
    /// `$SOLARIA_CONFIG` names the config file, whose `data_dir` decides.
    NamedConfig,
    /// The default config file's `data_dir` decides, or the default data dir.
    DefaultConfig,
}

impl DataDirSource<'_> {
    /// Where the data dir comes from, given `$SOLARIA_HOME` and `$SOLARIA_CONFIG`:
    /// the one place `$SOLARIA_HOME`'s precedence is decided.
    pub fn of<'a>(home: Option<&'a Path>, config: Option<&Path>) -> DataDirSource<'a> {
        match (home, config) {
            (Some(home), _) => DataDirSource::Home(home),
            (None, Some(_)) => DataDirSource::NamedConfig,
            (None, None) => DataDirSource::DefaultConfig,
        }
    }
}
