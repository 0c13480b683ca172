//! The service under systemd: a *user* unit, written, enabled and started by
//! `solaria install`, stopped and removed by `solaria uninstall`. Without a
//! running user manager the unit is still written where systemd would look, and
//! the report says how to start the daemon.
//!
//! `SOLARIA_SYSTEMCTL` names the `systemctl` to run (tests point it at a recorder,
//! so that no test touches the real user manager).

use super::{InstallOutcome, ServiceError};
use crate::config::Env;
use std::path::{Path, PathBuf};

/// The unit's file name (and `systemctl` name).
pub const UNIT_NAME: &str = "solaria.service";

/// The first line of a unit this program wrote: only such a unit is replaced or
/// removed (a hand-made `solaria.service` is the user's).
const MARKER: &str = "# Written by `solaria install`";

/// Where systemd looks for this user's units.
pub fn unit_path(env: &Env) -> Result<PathBuf, ServiceError> {
    let config = match (&env.xdg_config_home, &env.home) {
        (Some(dir), _) => dir.clone(),
        (None, Some(home)) => home.join(".config"),
        (None, None) => return Err(ServiceError::NoHome("~/.config/systemd/user")),
    };
    Ok(config.join("systemd").join("user").join(UNIT_NAME))
}

/// The unit that runs `exe serve` with the data dir and config this process uses.
pub fn unit_text(exe: &Path, env: &Env) -> String {
    let mut environment = String::new();
    for (name, value) in [
        ("SOLARIA_HOME", &env.solaria_home),
        ("SOLARIA_CONFIG", &env.solaria_config),
    ] {
        if let Some(value) = value {
            environment.push_str(&format!(
                "Environment={}\n",
                quoted(&format!("{name}={}", value.display()))
            ));
        }
    }
    format!(
        "{MARKER}; `solaria uninstall claude-code` removes it.\n\
         # SOLARIA Memory's background work: scheduled sync, the weekly prune, vectors for\n\
         # semantic search and the local API on 127.0.0.1. Capture needs no daemon.\n\
         # Logs: journalctl --user -u solaria, and serve.log in the data dir's logs/.\n\
         \n\
         [Unit]\n\
         Description=SOLARIA Memory edge agent (sync, retention, vectors, local API)\n\
         After=network-online.target\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={} serve\n\
         {environment}\
         Restart=on-failure\n\
         RestartSec=30\n\
         NoNewPrivileges=yes\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        quoted(&exe.display().to_string())
    )
}

/// A value in systemd's double-quoted form: `\` and `"` escaped, `%` doubled
/// (systemd expands `%h` and friends even inside quotes).
fn quoted(value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%");
    format!("\"{escaped}\"")
}

/// Writes the unit (unless the user has their own) and asks systemd to enable and
/// start it. systemd's failure is reported, not an error: the hooks work without
/// the daemon.
pub(super) fn install(env: &Env, exe: &Path) -> Result<(PathBuf, InstallOutcome), ServiceError> {
    let path = unit_path(env)?;
    let text = unit_text(exe, env);
    let Some(changed) = super::write_ours(env, exe, &path, "the service unit", &text, |t| {
        t.starts_with(MARKER)
    })?
    else {
        return Ok((path, InstallOutcome::UsersOwn));
    };
    let started = (if changed {
        systemctl(env, &["daemon-reload"])
    } else {
        Ok(())
    })
    .and_then(|()| systemctl(env, &["enable", "--now", UNIT_NAME]));
    Ok((path, started.into()))
}

/// Stops, disables and removes the unit `install` wrote. `Ok(None)`: there was
/// none of ours (a unit the user made is left alone).
pub(super) fn uninstall(env: &Env) -> Result<Option<PathBuf>, ServiceError> {
    let path = unit_path(env)?;
    match std::fs::read_to_string(&path) {
        Ok(text) if text.starts_with(MARKER) => {}
        _ => return Ok(None),
    }
    // Best effort: a manager that is not running has nothing to stop.
    let _ = systemctl(env, &["disable", "--now", UNIT_NAME]);
    std::fs::remove_file(&path).map_err(|source| ServiceError::Remove {
        path: path.clone(),
        source,
    })?;
    let _ = systemctl(env, &["daemon-reload"]);
    Ok(Some(path))
}

/// `systemctl --user ARGS`, with a deadline; `Err` says why it did not succeed.
fn systemctl(env: &Env, args: &[&str]) -> Result<(), String> {
    let program = env
        .systemctl
        .clone()
        .unwrap_or_else(|| PathBuf::from("systemctl"));
    let mut all = vec!["--user"];
    all.extend_from_slice(args);
    super::command(&program, "systemctl", &all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_for_systemd() {
        assert_eq!(quoted("/usr/bin/solaria"), "\"/usr/bin/solaria\"");
        assert_eq!(
            quoted("/home/a b/100%\\\"x"),
            "\"/home/a b/100%%\\\\\\\"x\""
        );
    }

    #[test]
    fn the_unit_runs_serve_with_this_data_dir() {
        let env = Env {
            solaria_home: Some(PathBuf::from("/data/my memory")),
            solaria_config: None,
            xdg_config_home: None,
            xdg_data_home: None,
            home: Some(PathBuf::from("/home/me")),
            ..Env::default()
        };
        let text = unit_text(Path::new("/opt/solaria/bin/solaria"), &env);
        assert!(text.starts_with(MARKER));
        assert!(text.contains("ExecStart=\"/opt/solaria/bin/solaria\" serve\n"));
        assert!(text.contains("Environment=\"SOLARIA_HOME=/data/my memory\"\n"));
        assert!(!text.contains("SOLARIA_CONFIG"));
        assert_eq!(
            unit_path(&env).expect("path"),
            PathBuf::from("/home/me/.config/systemd/user/solaria.service")
        );
    }

    #[test]
    fn a_data_dir_with_a_newline_writes_no_unit() {
        let home = tempfile::tempdir().expect("tempdir");
        let env = Env {
            solaria_home: Some(home.path().join("data\nExecStartPre=/bin/sh -c id")),
            home: Some(home.path().to_path_buf()),
            systemctl: Some(PathBuf::from("/bin/false")),
            ..Env::default()
        };
        let refused = install(&env, Path::new("/opt/solaria/bin/solaria")).expect_err("refused");
        assert!(
            refused.to_string().contains("control character"),
            "{refused}"
        );
        assert!(!unit_path(&env).expect("path").exists());
    }
}
