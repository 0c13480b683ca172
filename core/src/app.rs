//! The runtime context every surface hands down: the configuration, where things
//! live, and the handles made from them (the store, this machine's enrollment).
//! The CLI builds one per process, the MCP server and the daemon keep one.

use crate::config::{self, Config, ConfigError, Env, Paths};
use crate::store::{Store, StoreError};
use crate::sync::credentials::{self, Credentials};
use solaria_shared::Project;
use solaria_shared::knowledge::WrittenBy;
use std::path::PathBuf;

/// Why the context or one of its handles cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot read {}: {source}; run `solaria login` again", path.display())]
    Credentials {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What every operation needs: the configuration and where things are.
#[derive(Debug, Clone)]
pub struct App {
    pub config: Config,
    pub paths: Paths,
    /// Milliseconds added to the wall clock when stamping writes (`Env`).
    pub clock_skew_ms: i64,
    /// `XDG_RUNTIME_DIR`, where set (`Env`).
    pub runtime_dir: Option<std::path::PathBuf>,
    /// Who the knowledge this process writes is attributed to: a person at the
    /// command line, an agent through MCP or from its shell (`Env::agent_shell`).
    pub writer: WrittenBy,
}

impl App {
    /// The context of this process's environment (config file, `SOLARIA_*`).
    pub fn load(env: &Env) -> Result<App, AppError> {
        let (config, paths) = config::load(env)?;
        Ok(App {
            config,
            paths,
            clock_skew_ms: env.clock_skew_ms,
            runtime_dir: env.xdg_runtime_dir.clone(),
            writer: env
                .agent_shell
                .clone()
                .map_or(WrittenBy::Person, WrittenBy::Agent),
        })
    }

    /// Opens the store (creating it on first use).
    pub fn store(&self) -> Result<Store, StoreError> {
        Ok(
            Store::open(&self.paths.store(), &self.config.machine_name())?
                .with_clock_skew(self.clock_skew_ms)
                .written_by(self.writer.clone()),
        )
    }

    /// This machine's enrollment with a central service, if logged in.
    pub fn credentials(&self) -> Result<Option<Credentials>, AppError> {
        credentials::load(&self.paths.data_dir).map_err(|source| AppError::Credentials {
            path: credentials::path(&self.paths.data_dir),
            source,
        })
    }

    /// Whether a central service is configured (then nothing unpushed is pruned).
    pub fn server_configured(&self) -> bool {
        self.config.sync.server.is_some() || credentials::path(&self.paths.data_dir).exists()
    }

    /// The retention in force on this machine (`Retention::decide`).
    pub fn retention(&self) -> crate::store::retention::Retention {
        crate::store::retention::Retention::decide(&self.config.retention, self.server_configured())
    }

    /// Whether an agent (not a person) is the writer.
    pub fn agent_writes(&self) -> bool {
        !self.writer.is_person()
    }

    /// The project of the current directory.
    pub fn current_project(&self) -> Project {
        let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
        crate::project::detect(&cwd)
    }
}
