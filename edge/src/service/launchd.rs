//! The service under launchd (macOS): a LaunchAgent, `~/Library/LaunchAgents/
//! dev.solaria.memory.plist`, that runs `solaria serve` at login and again if it
//! exits with a failure. `solaria install` writes it and loads it into the user's
//! GUI domain (`launchctl bootstrap gui/UID`), restarting it when the file changed
//! (an upgrade moves the binary); `solaria uninstall` boots it out and removes it.
//!
//! `SOLARIA_LAUNCHCTL` names the `launchctl` to run (tests on Linux point it at a
//! recorder).

use super::{InstallOutcome, ServiceError};
use crate::config::Env;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The agent's label: its name in launchd and its file's name.
pub const LABEL: &str = "dev.solaria.memory";

/// The comment that marks a plist this program wrote: only such a file is
/// replaced or removed.
const MARKER: &str = "<!-- Written by `solaria install`";

/// Where launchd looks for this user's agents.
pub fn plist_path(env: &Env) -> Result<PathBuf, ServiceError> {
    let home = env
        .home
        .as_ref()
        .ok_or(ServiceError::NoHome("~/Library/LaunchAgents"))?;
    Ok(home
        .join("Library/LaunchAgents")
        .join(format!("{LABEL}.plist")))
}

/// `text` escaped for an XML string.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The LaunchAgent that runs `exe serve` with the data dir and config this
/// process uses.
pub fn plist_text(exe: &Path, env: &Env) -> String {
    let mut environment = String::new();
    for (name, value) in [
        ("SOLARIA_HOME", &env.solaria_home),
        ("SOLARIA_CONFIG", &env.solaria_config),
    ] {
        if let Some(value) = value {
            environment.push_str(&format!(
                "        <key>{name}</key>\n        <string>{}</string>\n",
                xml(&value.display().to_string())
            ));
        }
    }
    let environment = if environment.is_empty() {
        String::new()
    } else {
        format!("    <key>EnvironmentVariables</key>\n    <dict>\n{environment}    </dict>\n")
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         {MARKER}; `solaria uninstall claude-code` removes it. SOLARIA Memory's\n\
         \x20    background work: scheduled sync, the weekly prune, vectors for semantic\n\
         \x20    search and the local API on 127.0.0.1. Capture needs no daemon. -->\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \x20   <key>Label</key>\n\
         \x20   <string>{LABEL}</string>\n\
         \x20   <key>ProgramArguments</key>\n\
         \x20   <array>\n\
         \x20       <string>{}</string>\n\
         \x20       <string>serve</string>\n\
         \x20   </array>\n\
         {environment}\
         \x20   <key>RunAtLoad</key>\n\
         \x20   <true/>\n\
         \x20   <key>KeepAlive</key>\n\
         \x20   <dict>\n\
         \x20       <key>SuccessfulExit</key>\n\
         \x20       <false/>\n\
         \x20   </dict>\n\
         \x20   <key>ThrottleInterval</key>\n\
         \x20   <integer>30</integer>\n\
         \x20   <key>ProcessType</key>\n\
         \x20   <string>Background</string>\n\
         </dict>\n\
         </plist>\n",
        xml(&exe.display().to_string())
    )
}

/// `launchctl ARGS`, with a deadline.
fn launchctl(env: &Env, args: &[&str]) -> Result<(), String> {
    let program = env
        .launchctl
        .clone()
        .unwrap_or_else(|| PathBuf::from("launchctl"));
    super::command(&program, "launchctl", args)
}

/// The user's GUI domain (`gui/UID`), read from the owner of a file this process
/// wrote: the one id launchd's per-user domain is named by.
fn domain(plist: &Path) -> Result<String, String> {
    std::fs::metadata(plist)
        .map(|m| format!("gui/{}", m.uid()))
        .map_err(|e| format!("cannot read {}: {e}", plist.display()))
}

/// Writes the agent (unless the user has their own) and has launchd run it: a
/// changed file is booted out and bootstrapped again (so a moved binary is the one
/// that runs), an unchanged one kick-started (started if it is not running).
pub(super) fn install(env: &Env, exe: &Path) -> Result<(PathBuf, InstallOutcome), ServiceError> {
    let path = plist_path(env)?;
    let text = plist_text(exe, env);
    let Some(changed) = super::write_ours(env, exe, &path, "the LaunchAgent", &text, |t| {
        t.contains(MARKER)
    })?
    else {
        return Ok((path, InstallOutcome::UsersOwn));
    };
    let started = domain(&path).and_then(|domain| {
        let service = format!("{domain}/{LABEL}");
        if changed {
            // Not loaded yet is fine: there is nothing to boot out.
            let _ = launchctl(env, &["bootout", &service]);
            launchctl(env, &["bootstrap", &domain, &path.display().to_string()])
        } else {
            launchctl(env, &["kickstart", &service])
        }
    });
    Ok((path, started.into()))
}

/// Boots the agent out and removes its file. `Ok(None)`: there was none of ours.
pub(super) fn uninstall(env: &Env) -> Result<Option<PathBuf>, ServiceError> {
    let path = plist_path(env)?;
    match std::fs::read_to_string(&path) {
        Ok(text) if text.contains(MARKER) => {}
        _ => return Ok(None),
    }
    // Best effort: an agent launchd does not have loaded has nothing to stop.
    if let Ok(domain) = domain(&path) {
        let _ = launchctl(env, &["bootout", &format!("{domain}/{LABEL}")]);
    }
    std::fs::remove_file(&path).map_err(|source| ServiceError::Remove {
        path: path.clone(),
        source,
    })?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_runs_serve_with_this_data_dir_escaped_for_xml() {
        let env = Env {
            solaria_home: Some(PathBuf::from("/Users/me/data & <memory>")),
            home: Some(PathBuf::from("/Users/me")),
            ..Env::default()
        };
        let text = plist_text(Path::new("/opt/solaria/bin/solaria"), &env);
        assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Written by"));
        assert!(text.contains(
            "<key>ProgramArguments</key>\n    <array>\n        <string>/opt/solaria/bin/solaria</string>\n        <string>serve</string>\n    </array>"
        ));
        assert!(text.contains("<string>/Users/me/data &amp; &lt;memory&gt;</string>"));
        assert!(!text.contains("SOLARIA_CONFIG"));
        assert_eq!(
            plist_path(&env).expect("path"),
            PathBuf::from("/Users/me/Library/LaunchAgents/dev.solaria.memory.plist")
        );
    }
}
