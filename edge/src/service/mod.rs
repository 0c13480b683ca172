//! The user service that keeps `solaria serve` running, under whichever service
//! manager this machine has, decided at run time in one place ([`Manager::of`]):
//! systemd's user units on Linux (`systemd.rs`), launchd's LaunchAgents on macOS
//! (`launchd.rs`), or none, where the report says how to run the daemon. Each
//! writes only a file it marks as its own, and removes only that.
//!
//! `SOLARIA_SERVICE_MANAGER` (`systemd`, `launchd` or `none`) overrides the choice:
//! on a Linux without a user manager, `none`; in the tests, `launchd` on Linux,
//! with `SOLARIA_LAUNCHCTL` naming a stand-in for `launchctl`.

mod launchd;
mod systemd;

use crate::config::Env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A manager's command that does not answer in this long is given up on (a user
/// manager that is not running can make `systemctl` wait for the bus).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Errors of writing or removing the service's file.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("HOME is not set: cannot find {0}")]
    NoHome(&'static str),
    #[error("cannot write the service file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot remove the service file {path}: {source}")]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A path the file would hold cannot be written into it (a newline would end
    /// its line and start a directive of its own).
    #[error(transparent)]
    Path(#[from] crate::install::InstallError),
    #[error("SOLARIA_SERVICE_MANAGER is {0:?}: say systemd, launchd or none")]
    UnknownManager(String),
}

/// Which service manager keeps the daemon running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    /// systemd's user manager (`systemctl --user`).
    Systemd,
    /// launchd, through a LaunchAgent (`launchctl`).
    Launchd,
    /// No service manager: the daemon is run by hand (hooks work without it).
    None,
}

impl Manager {
    /// The manager of this machine: `SOLARIA_SERVICE_MANAGER` when set, else
    /// launchd on macOS, systemd on Linux, none elsewhere.
    pub fn of(env: &Env) -> Result<Manager, ServiceError> {
        match env.service_manager.as_deref() {
            Some("systemd") => Ok(Manager::Systemd),
            Some("launchd") => Ok(Manager::Launchd),
            Some("none") => Ok(Manager::None),
            Some(other) => Err(ServiceError::UnknownManager(other.to_string())),
            None => Ok(match std::env::consts::OS {
                "macos" => Manager::Launchd,
                "linux" => Manager::Systemd,
                _ => Manager::None,
            }),
        }
    }

    /// What this manager calls the file it runs the daemon from.
    pub fn file_word(self) -> &'static str {
        match self {
            Manager::Systemd => "unit",
            Manager::Launchd => "LaunchAgent",
            Manager::None => "file",
        }
    }

    /// How a person starts the daemon by hand under this manager.
    pub fn start_by_hand(self) -> &'static str {
        match self {
            Manager::Systemd => {
                "`systemctl --user enable --now solaria`, or run `solaria serve` yourself"
            }
            Manager::Launchd => {
                "`launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/dev.solaria.memory.plist`, or run `solaria serve` yourself"
            }
            Manager::None => "run `solaria serve` (at login, in the background)",
        }
    }
}

/// What `install` did.
#[derive(Debug)]
pub struct Installed {
    pub manager: Manager,
    /// The unit or LaunchAgent written (none without a manager).
    pub path: PathBuf,
    pub outcome: InstallOutcome,
}

#[derive(Debug, PartialEq, Eq)]
pub enum InstallOutcome {
    /// Written (or already up to date), and started by the manager.
    Running,
    /// Written, but the manager could not start it: why.
    NotStarted(String),
    /// A file of that name the user made is there: left as it is.
    UsersOwn,
    /// No service manager: nothing written.
    NoManager,
}

impl From<Result<(), String>> for InstallOutcome {
    /// What asking the manager to run the service came to.
    fn from(started: Result<(), String>) -> Self {
        match started {
            Ok(()) => InstallOutcome::Running,
            Err(why) => InstallOutcome::NotStarted(why),
        }
    }
}

/// Registers `exe serve` with this machine's manager, and starts it. A manager's
/// failure is reported, not an error: the hooks work without the daemon.
pub fn install(env: &Env, exe: &Path) -> Result<Installed, ServiceError> {
    let manager = Manager::of(env)?;
    let (path, outcome) = match manager {
        Manager::Systemd => systemd::install(env, exe)?,
        Manager::Launchd => launchd::install(env, exe)?,
        Manager::None => (PathBuf::new(), InstallOutcome::NoManager),
    };
    Ok(Installed {
        manager,
        path,
        outcome,
    })
}

/// Stops and removes what `install` registered. `Ok(None)`: there was none of
/// ours (a file the user made is left alone).
pub fn uninstall(env: &Env) -> Result<Option<PathBuf>, ServiceError> {
    match Manager::of(env)? {
        Manager::Systemd => systemd::uninstall(env),
        Manager::Launchd => launchd::uninstall(env),
        Manager::None => Ok(None),
    }
}

/// Writes a manager's file for `exe` at `path` (`what` names it in errors): the
/// paths it holds checked first, a file of that name the user made left alone
/// (`None`: `is_ours` says whose it is), and ours rewritten only when it changed
/// (`Some(changed)`).
fn write_ours(
    env: &Env,
    exe: &Path,
    path: &Path,
    what: &'static str,
    text: &str,
    is_ours: impl Fn(&str) -> bool,
) -> Result<Option<bool>, ServiceError> {
    crate::install::managed::exe_str(exe)?;
    crate::install::managed::written_paths(&[
        (what, Some(path)),
        ("SOLARIA_HOME", env.solaria_home.as_deref()),
        ("SOLARIA_CONFIG", env.solaria_config.as_deref()),
    ])?;
    let existing = std::fs::read_to_string(path).ok();
    if existing.as_deref().is_some_and(|t| !is_ours(t)) {
        return Ok(None);
    }
    let changed = existing.as_deref() != Some(text);
    if changed {
        write_atomically(path, text)?;
    }
    Ok(Some(changed))
}

/// Writes `text` to `path` whole (beside it, then renamed).
fn write_atomically(path: &Path, text: &str) -> Result<(), ServiceError> {
    let error = |source| ServiceError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(error)?;
    }
    let mut staging = path.as_os_str().to_owned();
    staging.push(".tmp");
    std::fs::write(&staging, text).map_err(error)?;
    std::fs::rename(&staging, path).map_err(error)
}

/// Runs `program ARGS` (a manager's command, called `name` in messages) with a
/// deadline; `Err` says why it did not succeed.
fn command(program: &Path, name: &str, args: &[&str]) -> Result<(), String> {
    let shown = format!("`{name} {}`", args.join(" "));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                let mut stderr = String::new();
                if let Some(mut pipe) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
                }
                let detail = stderr.lines().next().unwrap_or("").trim().to_string();
                return Err(format!(
                    "{shown} failed ({status}){}",
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(": {detail}")
                    }
                ));
            }
            Ok(None) if started.elapsed() < COMMAND_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{shown} did not answer in {}s",
                    COMMAND_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("waiting for {name}: {e}")),
        }
    }
}
