//! `solaria-hook`: the hook command the installer writes when this binary sits
//! beside `solaria`. It hands the event to the daemon's socket, or to a `solaria
//! hook` process when no daemon listens, and keeps the hook contract: exit 0,
//! nothing on stderr, failures in the hook log.
//!
//! An event whose hook prints nothing it writes into the daemon's spool itself
//! (`spool.rs`) and only notes that on the socket, so the hook does not wait for the
//! daemon. Its crate links little beyond the standard library (the hook log's
//! writer, the spool's digest, the event names), no model, HTTP or async code, so
//! the binary (linked statically by `deploy/static-hook.sh`) starts in about the
//! time `true` does; everything else happens in the daemon or in `solaria`.

use crate::claude_settings;
use crate::dirs::{self, DataDirSource};
use crate::protocol::{Event, MAX_PAYLOAD_BYTES, REFUSED, SPOOLED_NOTE, socket_path};
use crate::spool::Spool;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long the daemon may take to capture and answer: as long as a hook process
/// may run before its watchdog ends it (`[capture] hook_timeout_ms`'s default),
/// well inside the agent's own hook timeout.
const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// The variables a hook reads (`crate::dirs`).
#[derive(Debug, Default)]
struct Env {
    home: Option<PathBuf>,
    config: Option<PathBuf>,
    runtime_dir: Option<PathBuf>,
    no_capture: bool,
    /// `$HOME`, `$XDG_CONFIG_HOME` and `$XDG_DATA_HOME`: the default config file and
    /// data dir.
    user_home: Option<PathBuf>,
    xdg_config_home: Option<PathBuf>,
    xdg_data_home: Option<PathBuf>,
}

impl Env {
    fn from_process() -> Env {
        Env {
            home: dirs::var(dirs::HOME_VAR),
            config: dirs::var(dirs::CONFIG_VAR),
            runtime_dir: dirs::var(dirs::RUNTIME_DIR_VAR),
            no_capture: dirs::var(dirs::NO_CAPTURE_VAR).is_some(),
            user_home: dirs::var("HOME"),
            xdg_config_home: dirs::var("XDG_CONFIG_HOME"),
            xdg_data_home: dirs::var("XDG_DATA_HOME"),
        }
    }
}

/// Now, in Unix milliseconds: when a spooled event was received.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// What the command line asks.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    /// The data dir the installer resolved (`--data-dir`).
    data_dir: Option<PathBuf>,
    /// Run by the Claude Code plugin (`--plugin`): stand aside when Claude Code's
    /// settings run SOLARIA's hooks too.
    plugin: bool,
    event: Event,
}

/// `solaria-hook [--data-dir DIR] [--plugin] EVENT`, or `… opencode|codex|gemini
/// EVENT`; `None` when the line is anything else (then `solaria hook` gets it as it
/// is and says what is wrong).
fn parse_args(args: &[String]) -> Option<Args> {
    let mut data_dir = None;
    let mut plugin = false;
    let mut rest = args;
    loop {
        match rest {
            [flag, dir, tail @ ..] if flag == "--data-dir" && data_dir.is_none() => {
                data_dir = Some(PathBuf::from(dir));
                rest = tail;
            }
            [flag, tail @ ..] if flag == "--plugin" && !plugin => {
                plugin = true;
                rest = tail;
            }
            _ => break,
        }
    }
    let event = match rest {
        [agent, name] if agent == "opencode" => Event::OpenCode(name.clone()),
        [agent, name] if agent == "codex" => Event::Codex(name.clone()),
        [agent, name] if agent == "gemini" => Event::Gemini(name.clone()),
        [name] if !name.starts_with('-') => Event::ClaudeCode(name.clone()),
        _ => return None,
    };
    if plugin && !matches!(event, Event::ClaudeCode(_)) {
        return None;
    }
    Some(Args {
        data_dir,
        plugin,
        event,
    })
}

/// The data dir the hook writes to: `$SOLARIA_HOME` when set (as for every
/// `solaria` command), else the installer's `--data-dir` unless `$SOLARIA_CONFIG`
/// names a config that may put the data elsewhere, else (the plugin's hooks name
/// none) the default data dir while no default config file could move it; `None`
/// leaves the resolution to `solaria hook`.
fn data_dir(env: &Env, installed: Option<PathBuf>) -> Option<PathBuf> {
    match DataDirSource::of(env.home.as_deref(), env.config.as_deref()) {
        DataDirSource::Home(home) => Some(home.to_path_buf()),
        DataDirSource::NamedConfig => None,
        DataDirSource::DefaultConfig => installed.or_else(|| {
            let user_home = env.user_home.as_deref();
            let config = dirs::default_config_file(env.xdg_config_home.as_deref(), user_home)?;
            if config.exists() {
                return None;
            }
            dirs::default_data_dir(env.xdg_data_home.as_deref(), user_home)
        }),
    }
}

/// Whether the plugin's hook stands aside: Claude Code's settings for this session's
/// project already run SOLARIA's hooks (`crate::claude_settings`).
fn plugin_stands_aside(env: &Env) -> bool {
    let project = dirs::var("CLAUDE_PROJECT_DIR").or_else(|| std::env::current_dir().ok());
    let Some(project) = project else {
        return false;
    };
    claude_settings::run_our_hooks(&claude_settings::settings_files(
        env.user_home.as_deref(),
        &project,
    ))
}

/// Runs one hook. Always exits 0: what goes wrong is logged, never shown to the agent.
pub fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(parsed) = parse_args(&args) else {
        let all: Vec<&str> = std::iter::once("hook")
            .chain(args.iter().map(String::as_str))
            .collect();
        in_process(&all, Input::Inherited);
        return std::process::ExitCode::SUCCESS;
    };
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        // `solaria hook` says what is wrong (no payload) in the hook log.
        in_process(&parsed.event.hook_args(), Input::Inherited);
        return std::process::ExitCode::SUCCESS;
    }
    let mut payload = Vec::new();
    let read = stdin
        .lock()
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut payload);
    if read.is_err() || payload.len() as u64 > MAX_PAYLOAD_BYTES {
        // Too large or unreadable: `solaria hook` refuses and logs it as it would.
        in_process(&parsed.event.hook_args(), Input::Bytes(&payload));
        return std::process::ExitCode::SUCCESS;
    }
    let env = Env::from_process();
    if env.no_capture || (parsed.plugin && plugin_stands_aside(&env)) {
        return std::process::ExitCode::SUCCESS;
    }
    match data_dir(&env, parsed.data_dir) {
        Some(dir) => relay_or_run(&dir, env.runtime_dir.as_deref(), &parsed.event, &payload),
        None => in_process(&parsed.event.hook_args(), Input::Bytes(&payload)),
    }
    std::process::ExitCode::SUCCESS
}

/// The process that listens on the other end of `stream` (Linux's `SO_PEERCRED`):
/// the spool is written only for the daemon that made it. `None` where it cannot be
/// told; the hook then hands its event to the daemon on the socket.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn peer_process(stream: &UnixStream) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: the descriptor is `stream`'s, open for the whole call; `cred` and
    // `len` are live locals, and `len` says how many bytes `cred` holds, as
    // getsockopt(2) requires for SO_PEERCRED, which writes one `ucred`.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    (rc == 0 && cred.pid > 0).then(|| cred.pid.unsigned_abs())
}

#[cfg(not(target_os = "linux"))]
fn peer_process(_: &UnixStream) -> Option<u32> {
    None
}

/// Sends the event to the daemon of `data_dir`; when none takes it, runs it in a
/// `solaria hook` process instead. An event whose hook prints nothing is written
/// into the daemon's spool, when it has one, and the daemon told: the hook does not
/// wait for the daemon at all.
fn relay_or_run(
    data_dir: &std::path::Path,
    runtime_dir: Option<&std::path::Path>,
    event: &Event,
    payload: &[u8],
) {
    let Ok(mut stream) = UnixStream::connect(socket_path(data_dir)) else {
        // No daemon (or a stale socket a killed one left): not an error.
        in_process(&event.hook_args(), Input::Bytes(payload));
        return;
    };
    if !event.prints()
        && let Some(spool) = Spool::for_hook(data_dir, runtime_dir, peer_process(&stream))
        && spool.put(event, now_ms(), payload).is_ok()
    {
        // Spooled: the daemon captures it whether or not this note reaches it.
        let _ = stream.write_all(SPOOLED_NOTE.as_bytes());
        return;
    }
    let sent = stream
        .write_all(event.header().as_bytes())
        .and_then(|()| stream.write_all(payload))
        .and_then(|()| stream.shutdown(std::net::Shutdown::Write));
    if sent.is_err() {
        // The daemon never saw a whole request, so it captured nothing.
        in_process(&event.hook_args(), Input::Bytes(payload));
        return;
    }
    let mut answer = Vec::new();
    let received = stream
        .set_read_timeout(Some(ANSWER_WAIT))
        .and_then(|()| stream.read_to_end(&mut answer));
    if let Err(e) = received {
        // It had the whole event: running it again could capture it twice.
        crate::log::line(
            data_dir,
            "relay",
            &format!("the daemon did not answer ({e}); the event may not be captured"),
        );
        return;
    }
    if answer == REFUSED {
        // A daemon of another version: it captured nothing.
        in_process(&event.hook_args(), Input::Bytes(payload));
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(&answer);
    let _ = stdout.flush();
}

/// What the `solaria hook` process reads.
enum Input<'a> {
    /// This process's own stdin (a terminal, or arguments we do not understand).
    Inherited,
    /// The payload already read.
    Bytes(&'a [u8]),
}

/// Runs `solaria hook ARGS` (the binary beside this one) on `input`; its output
/// is the hook's.
fn in_process(args: &[&str], input: Input<'_>) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = Command::new(exe.with_file_name("solaria"));
    command
        .args(args)
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    match input {
        Input::Inherited => {
            let _ = command.stdin(Stdio::inherit()).status();
        }
        Input::Bytes(bytes) => {
            let Ok(mut child) = command.stdin(Stdio::piped()).spawn() else {
                return;
            };
            if let Some(mut stdin) = child.stdin.take() {
                // A hook that stopped reading (a skipped event) is not a failure.
                let _ = stdin.write_all(bytes);
            }
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Option<Args> {
        parse_args(&line.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_installed_lines_parse() {
        assert_eq!(
            args(&["--data-dir", "/d", "post-tool-use"]),
            Some(Args {
                data_dir: Some("/d".into()),
                plugin: false,
                event: Event::ClaudeCode("post-tool-use".into())
            })
        );
        assert_eq!(
            args(&["opencode", "chat.message"]),
            Some(Args {
                data_dir: None,
                plugin: false,
                event: Event::OpenCode("chat.message".into())
            })
        );
        assert_eq!(
            args(&["--data-dir", "/d", "codex", "session-start"]),
            Some(Args {
                data_dir: Some("/d".into()),
                plugin: false,
                event: Event::Codex("session-start".into())
            })
        );
        assert_eq!(
            args(&["--plugin", "session-start"]),
            Some(Args {
                data_dir: None,
                plugin: true,
                event: Event::ClaudeCode("session-start".into())
            })
        );
    }

    #[test]
    fn solaria_home_beats_the_installed_data_dir_and_a_named_config_defers() {
        let installed = Some(PathBuf::from("/installed"));
        let env = |home: Option<&str>, config: Option<&str>| Env {
            home: home.map(PathBuf::from),
            config: config.map(PathBuf::from),
            ..Env::default()
        };
        assert_eq!(
            data_dir(&env(Some("/home"), Some("/c.toml")), installed.clone()),
            Some(PathBuf::from("/home"))
        );
        assert_eq!(
            data_dir(&env(None, Some("/c.toml")), installed.clone()),
            None
        );
        assert_eq!(data_dir(&env(None, None), installed.clone()), installed);
    }

    #[test]
    fn without_an_installed_data_dir_the_default_holds_until_a_config_file_exists() {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = Env {
            user_home: Some(dir.path().to_path_buf()),
            ..Env::default()
        };
        assert_eq!(
            data_dir(&env, None),
            Some(dir.path().join(".local/share/solaria"))
        );
        let config = dir.path().join(".config/solaria/config.toml");
        std::fs::create_dir_all(config.parent().expect("parent")).expect("mkdir");
        std::fs::write(&config, "data_dir = \"/elsewhere\"\n").expect("write");
        assert_eq!(data_dir(&env, None), None, "solaria hook reads the file");
    }

    #[test]
    fn other_lines_are_left_to_solaria_hook() {
        assert_eq!(args(&[]), None);
        assert_eq!(args(&["--data-dir", "/d"]), None);
        assert_eq!(args(&["--help"]), None);
        assert_eq!(args(&["stop", "extra"]), None);
        assert_eq!(args(&["--plugin", "--plugin", "stop"]), None);
        assert_eq!(args(&["--plugin", "codex", "stop"]), None);
    }
}
