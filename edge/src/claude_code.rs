//! Wires SOLARIA into Claude Code: hooks in settings.json and the /memory slash command.
//!
//! Claude Code reads hooks from `~/.claude/settings.json` (user scope) and from
//! `<project>/.claude/settings.json` (project scope). Their shape is
//!
//! ```json
//! { "hooks": { "<Event>": [ { "matcher": "…", "hooks": [
//!     { "type": "command", "command": "…", "timeout": 10 } ] } ] } }
//! ```
//!
//! `matcher` only means something for tool events (PostToolUse: a tool-name pattern,
//! `*` = every tool) and for SessionStart/SessionEnd (the source or reason); leaving
//! it out matches everything, which is what we want for the other events.
//!
//! Custom slash commands are markdown files in `~/.claude/commands/` or
//! `<project>/.claude/commands/`; `memory.md` there becomes `/memory`. Optional YAML
//! front matter (`description`, `argument-hint`, `allowed-tools`, …) comes first.
//! `$ARGUMENTS` is replaced by the text typed after the command, as a raw textual
//! splice (no shell escaping), and a `!` directly followed by a back-quoted command
//! is run through bash before the prompt reaches Claude, when `allowed-tools`
//! permits that command.
//!
//! Everything SOLARIA adds is recognisable, so [`install`] is idempotent and
//! [`uninstall`] removes exactly what we added and nothing else. A settings file we
//! cannot parse is never overwritten; a `memory.md` we did not write is never
//! overwritten nor deleted.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

/// Seconds Claude Code waits for one of our hook commands before cancelling it.
pub const HOOK_TIMEOUT_SECS: u64 = 10;

/// File name of the slash command inside the commands directory (`/memory`).
pub const COMMAND_FILE_NAME: &str = "memory.md";

/// Text that marks a slash-command file as written by SOLARIA. Only a file that
/// contains it is ever overwritten or deleted.
pub const COMMAND_MARKER: &str = "solaria-managed: claude-code slash command";

/// Where a SOLARIA install goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// `~/.claude/settings.json` and `~/.claude/commands/`: every project of this user.
    User,
    /// `<project>/.claude/settings.json` and `<project>/.claude/commands/`.
    Project,
}

/// The Claude Code files one install touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The settings.json that receives the hooks.
    pub settings_path: PathBuf,
    /// The directory that receives `memory.md`.
    pub commands_dir: PathBuf,
    /// Where Claude Code keeps MCP servers for this scope: `~/.claude.json` (user)
    /// or `<project>/.mcp.json` (project); `solaria mcp` is registered there.
    pub mcp_path: PathBuf,
}

impl Target {
    /// The files of `scope`: under `home/.claude` or `project_dir/.claude`.
    pub fn for_scope(scope: Scope, home: &Path, project_dir: &Path) -> Target {
        let base = match scope {
            Scope::User => home,
            Scope::Project => project_dir,
        };
        let claude = base.join(".claude");
        let mcp_path = match scope {
            Scope::User => home.join(".claude.json"),
            Scope::Project => project_dir.join(".mcp.json"),
        };
        Target {
            settings_path: claude.join("settings.json"),
            commands_dir: claude.join("commands"),
            mcp_path,
        }
    }

    /// Path of the `/memory` slash-command file.
    pub fn command_path(&self) -> PathBuf {
        self.commands_dir.join(COMMAND_FILE_NAME)
    }
}

/// What [`install`] or [`uninstall`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The settings.json looked at.
    pub settings_path: PathBuf,
    /// The slash-command file looked at.
    pub command_path: PathBuf,
    /// Whether any file was written or removed (`settings_changed || command_changed`).
    pub changed: bool,
    /// Whether settings.json was written.
    pub settings_changed: bool,
    /// Whether the slash-command file was written or removed.
    pub command_changed: bool,
}

/// Why an install or uninstall stopped. Nothing is written once one of these is found
/// while reading; a write error may leave the settings written but not the command.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A file exists but cannot be read.
    #[error("cannot read {path}: {source}; check its permissions and run the command again")]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// settings.json is not JSON.
    #[error(
        "{path} is not valid JSON ({source}); fix it or move it aside and run the command \
         again (SOLARIA never overwrites a settings file it cannot parse; nothing was changed)"
    )]
    InvalidJson {
        /// The settings file.
        path: PathBuf,
        /// The parse error, with line and column.
        source: serde_json::Error,
    },
    /// settings.json is JSON, but a part we must edit has the wrong type.
    #[error(
        "{path}: {what} must be {expected} but is {found}; fix it by hand and run the \
         command again (nothing was changed)"
    )]
    UnexpectedShape {
        /// The settings file.
        path: PathBuf,
        /// Which part, e.g. `the top level` or `"hooks"`.
        what: String,
        /// What Claude Code expects there.
        expected: &'static str,
        /// What the file holds instead.
        found: &'static str,
    },
    /// A `memory.md` that SOLARIA did not write is in the way.
    #[error(
        "{path} already exists and was not written by SOLARIA; SOLARIA will not overwrite \
         your own /memory command. Rename or remove it and run the command again (nothing \
         was changed)"
    )]
    ForeignCommandFile {
        /// The slash-command file.
        path: PathBuf,
    },
    /// An MCP server named `solaria` that is not ours is already registered.
    #[error(
        "{path} already registers an MCP server named \"solaria\" that does not run this solaria; \
         rename or remove it, then install again (nothing was changed)"
    )]
    ForeignMcpServer {
        /// The MCP configuration file.
        path: PathBuf,
    },
    /// The executable path cannot be put into a hook command or a slash command.
    #[error("cannot use {path} as the solaria executable: {reason}")]
    UnusableExePath {
        /// The path given.
        path: PathBuf,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Writing or removing a file failed.
    #[error("cannot write {path}: {source}; check the directory's permissions and free space")]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// One Claude Code hook event that SOLARIA listens to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEvent {
    /// The event name in settings.json.
    pub name: &'static str,
    /// The argument of `solaria hook <arg>`.
    pub arg: &'static str,
    /// The group's matcher, if any.
    pub matcher: Option<&'static str>,
}

/// The hooks SOLARIA installs. SessionStart has no matcher so that it also fires on
/// resume, `/clear` and compaction, when the context must be injected again.
pub const HOOK_EVENTS: [HookEvent; 6] = [
    HookEvent {
        name: "SessionStart",
        arg: "session-start",
        matcher: None,
    },
    HookEvent {
        name: "UserPromptSubmit",
        arg: "user-prompt-submit",
        matcher: None,
    },
    HookEvent {
        name: "PostToolUse",
        arg: "post-tool-use",
        matcher: Some("*"),
    },
    HookEvent {
        name: "PostToolUseFailure",
        arg: "post-tool-use-failure",
        matcher: Some("*"),
    },
    HookEvent {
        name: "Stop",
        arg: "stop",
        matcher: None,
    },
    HookEvent {
        name: "SessionEnd",
        arg: "session-end",
        matcher: None,
    },
];

/// Adds SOLARIA's hooks to `target.settings_path` and writes the `/memory` command,
/// replacing any earlier SOLARIA entries (for example ones pointing to an old
/// executable). `solaria_exe` must be an absolute path.
pub fn install(target: &Target, solaria_exe: &Path) -> Result<InstallReport, InstallError> {
    let exe = exe_str(solaria_exe)?;
    let settings_path = &target.settings_path;
    let command_path = target.command_path();

    let (original, existed) = read_settings(settings_path)?;
    let mut settings = original.clone();
    add_hooks(&mut settings, exe, settings_path)?;

    let desired_command = slash_command_file(exe);
    let command_changed = match command_file_state(&command_path)? {
        CommandFile::Foreign => {
            return Err(InstallError::ForeignCommandFile { path: command_path });
        }
        CommandFile::Ours(current) => current != desired_command,
        CommandFile::Missing => true,
    };

    let (mcp_original, _) = read_settings(&target.mcp_path)?;
    let mut mcp = mcp_original.clone();
    add_mcp_server(&mut mcp, exe, &target.mcp_path)?;
    let mcp_changed = mcp != mcp_original;

    let settings_changed = !existed || settings != original;
    if settings_changed {
        write_atomic(
            settings_path,
            render_settings(settings, settings_path)?.as_bytes(),
        )?;
    }
    if command_changed {
        write_atomic(&command_path, desired_command.as_bytes())?;
    }
    if mcp_changed {
        write_atomic(
            &target.mcp_path,
            render_settings(mcp, &target.mcp_path)?.as_bytes(),
        )?;
    }
    Ok(InstallReport {
        settings_path: settings_path.clone(),
        command_path,
        changed: settings_changed || command_changed || mcp_changed,
        settings_changed,
        command_changed,
    })
}

/// The name SOLARIA's MCP server is registered under.
pub const MCP_SERVER_NAME: &str = "solaria";

/// `mcpServers.solaria = { type: stdio, command: exe, args: ["mcp"] }`, unless a
/// server of that name that is not ours is there.
fn add_mcp_server(
    config: &mut Map<String, Value>,
    exe: &str,
    path: &Path,
) -> Result<(), InstallError> {
    let servers = config
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(shape_error(path, "\"mcpServers\"", "an object", servers));
    };
    if servers
        .get(MCP_SERVER_NAME)
        .is_some_and(|e| !is_our_mcp_server(e))
    {
        return Err(InstallError::ForeignMcpServer {
            path: path.to_owned(),
        });
    }
    servers.insert(
        MCP_SERVER_NAME.to_string(),
        serde_json::json!({ "type": "stdio", "command": exe, "args": ["mcp"], "env": {} }),
    );
    Ok(())
}

/// Removes our MCP server entry (and `mcpServers` if that leaves it empty).
fn remove_mcp_server(config: &mut Map<String, Value>) {
    let Some(Value::Object(servers)) = config.get_mut("mcpServers") else {
        return;
    };
    if servers.get(MCP_SERVER_NAME).is_some_and(is_our_mcp_server) {
        servers.remove(MCP_SERVER_NAME);
        if servers.is_empty() {
            config.remove("mcpServers");
        }
    }
}

/// Ours: runs `<a solaria binary> mcp` (any install path or build name).
fn is_our_mcp_server(entry: &Value) -> bool {
    let command = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let args_ok = entry.get("args") == Some(&serde_json::json!(["mcp"]));
    let name = Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    args_ok && name.starts_with("solaria")
}

/// Removes SOLARIA's hooks from `target.settings_path` (whatever executable they point
/// to) and our `/memory` command file. Everything else is left as it was; when nothing
/// of ours is there, nothing is written.
pub fn uninstall(target: &Target) -> Result<InstallReport, InstallError> {
    let settings_path = &target.settings_path;
    let command_path = target.command_path();

    let (original, existed) = read_settings(settings_path)?;
    let mut settings = original.clone();
    remove_hooks(&mut settings, settings_path)?;
    let command_state = command_file_state(&command_path)?;

    let settings_changed = existed && settings != original;
    if settings_changed {
        write_atomic(
            settings_path,
            render_settings(settings, settings_path)?.as_bytes(),
        )?;
    }
    let (mcp_original, mcp_existed) = read_settings(&target.mcp_path)?;
    let mut mcp = mcp_original.clone();
    remove_mcp_server(&mut mcp);
    let mcp_changed = mcp_existed && mcp != mcp_original;
    if mcp_changed {
        write_atomic(
            &target.mcp_path,
            render_settings(mcp, &target.mcp_path)?.as_bytes(),
        )?;
    }
    let command_changed = match command_state {
        CommandFile::Ours(_) => {
            match fs::remove_file(&command_path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(InstallError::Write {
                        path: command_path,
                        source,
                    });
                }
            }
            true
        }
        CommandFile::Missing | CommandFile::Foreign => false,
    };
    Ok(InstallReport {
        settings_path: settings_path.clone(),
        command_path,
        changed: settings_changed || command_changed || mcp_changed,
        settings_changed,
        command_changed,
    })
}

/// The hook command for `event`: `<exe, shell-quoted if needed> hook <arg>`.
pub fn hook_command(solaria_exe: &str, event: &HookEvent) -> String {
    format!("{} hook {}", shell_quote(solaria_exe), event.arg)
}

/// What `/memory …` asked for, as parsed from the arguments of `solaria slash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashRequest {
    /// `/memory` or `/memory status`.
    Status,
    /// `/memory sync`.
    Sync,
    /// `/memory search <query>` (the query may be empty).
    Search(String),
    /// Anything else, trimmed; the caller should print the usage.
    Unknown(String),
}

/// Parses the arguments the slash command passes to `solaria slash`.
///
/// The command file runs `solaria slash "$ARGUMENTS"`, and Claude Code splices the
/// typed text in without escaping, so the words may arrive as one argument or as
/// several (a typed `"` splits them). They are joined with spaces; the first word is
/// the sub-command and the rest the query.
pub fn parse_slash_args<S: AsRef<str>>(args: &[S]) -> SlashRequest {
    let joined = args.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(" ");
    let text = joined.trim();
    let (head, rest) = match text.split_once(char::is_whitespace) {
        Some((head, rest)) => (head, rest.trim()),
        None => (text, ""),
    };
    match head.to_ascii_lowercase().as_str() {
        "" | "status" => SlashRequest::Status,
        "sync" => SlashRequest::Sync,
        "search" => SlashRequest::Search(rest.to_owned()),
        _ => SlashRequest::Unknown(text.to_owned()),
    }
}

// ---------------------------------------------------------------------------
// settings.json

/// Reads settings.json: `(object, existed)`. Missing or blank → empty object.
fn read_settings(path: &Path) -> Result<(Map<String, Value>, bool), InstallError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Map::new(), false)),
        Err(source) => {
            return Err(InstallError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Ok((Map::new(), true));
    }
    let value: Value = serde_json::from_str(text).map_err(|source| InstallError::InvalidJson {
        path: path.to_owned(),
        source,
    })?;
    match value {
        Value::Object(map) => {
            if let Some(hooks) = map.get("hooks").filter(|h| !h.is_object()) {
                return Err(shape_error(path, "\"hooks\"", "an object", hooks));
            }
            Ok((map, true))
        }
        other => Err(shape_error(path, "the top level", "an object", &other)),
    }
}

fn render_settings(settings: Map<String, Value>, path: &Path) -> Result<String, InstallError> {
    let mut text = serde_json::to_string_pretty(&Value::Object(settings)).map_err(|e| {
        InstallError::Write {
            path: path.to_owned(),
            source: io::Error::other(e),
        }
    })?;
    text.push('\n');
    Ok(text)
}

fn shape_error(path: &Path, what: &str, expected: &'static str, found: &Value) -> InstallError {
    InstallError::UnexpectedShape {
        path: path.to_owned(),
        what: what.to_owned(),
        expected,
        found: json_kind(found),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn desired_group(exe: &str, event: &HookEvent) -> Value {
    let mut hook = Map::new();
    hook.insert("type".into(), Value::from("command"));
    hook.insert("command".into(), Value::from(hook_command(exe, event)));
    hook.insert("timeout".into(), Value::from(HOOK_TIMEOUT_SECS));
    let mut group = Map::new();
    if let Some(matcher) = event.matcher {
        group.insert("matcher".into(), Value::from(matcher));
    }
    group.insert("hooks".into(), Value::Array(vec![Value::Object(hook)]));
    Value::Object(group)
}

fn add_hooks(
    settings: &mut Map<String, Value>,
    exe: &str,
    path: &Path,
) -> Result<(), InstallError> {
    let desired: Vec<(&str, Value)> = HOOK_EVENTS
        .iter()
        .map(|e| (e.name, desired_group(exe, e)))
        .collect();
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(shape_error(path, "\"hooks\"", "an object", hooks));
    };
    for (name, _) in &desired {
        if let Some(found) = hooks.get(*name).filter(|v| !v.is_array()) {
            return Err(shape_error(
                path,
                &format!("\"hooks\".\"{name}\""),
                "an array",
                found,
            ));
        }
    }
    let kept = remove_ours(hooks, Some(exe), &desired);
    for (name, group) in desired {
        if kept.iter().any(|k| k == name) {
            continue;
        }
        let groups = hooks
            .entry(name)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(groups) = groups {
            groups.push(group);
        }
    }
    Ok(())
}

fn remove_hooks(settings: &mut Map<String, Value>, path: &Path) -> Result<(), InstallError> {
    let Some(hooks) = settings.get_mut("hooks") else {
        return Ok(());
    };
    let Value::Object(map) = hooks else {
        return Err(shape_error(path, "\"hooks\"", "an object", hooks));
    };
    let before = map.clone();
    remove_ours(map, None, &[]);
    if map.is_empty() && *map != before {
        settings.remove("hooks");
    }
    Ok(())
}

/// Removes our hook commands from every event array of `hooks`, dropping groups and
/// event arrays that become empty through that. The first group of an event that is
/// already exactly its `desired` group is kept in place, so a re-install does not
/// reorder the file; the names of those events are returned.
fn remove_ours(
    hooks: &mut Map<String, Value>,
    exe: Option<&str>,
    desired: &[(&str, Value)],
) -> Vec<String> {
    let mut kept = Vec::new();
    let mut emptied = Vec::new();
    for (name, groups) in hooks.iter_mut() {
        let Value::Array(groups) = groups else {
            continue;
        };
        let want = desired.iter().find(|(n, _)| n == name).map(|(_, g)| g);
        let mut keep_done = false;
        let mut touched = false;
        let mut result = Vec::with_capacity(groups.len());
        for mut group in groups.drain(..) {
            if !keep_done && want == Some(&group) {
                keep_done = true;
                result.push(group);
                continue;
            }
            if let Some(Value::Array(entries)) = group.get_mut("hooks") {
                let before = entries.len();
                entries.retain(|entry| !is_our_entry(entry, exe));
                if entries.len() != before {
                    touched = true;
                    if entries.is_empty() {
                        continue;
                    }
                }
            }
            result.push(group);
        }
        *groups = result;
        if keep_done {
            kept.push(name.clone());
        }
        if touched && groups.is_empty() {
            emptied.push(name.clone());
        }
    }
    for name in emptied {
        hooks.remove(&name);
    }
    kept
}

fn is_our_entry(entry: &Value, exe: Option<&str>) -> bool {
    entry
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_our_command(c, exe))
}

/// A command is ours when its program is `solaria` (any directory) or exactly `exe`,
/// and its first argument is `hook`.
fn is_our_command(command: &str, exe: Option<&str>) -> bool {
    let Some((program, rest)) = split_program(command) else {
        return false;
    };
    if program.is_empty() {
        return false;
    }
    let is_hook = rest
        .trim_start()
        .strip_prefix("hook")
        .is_some_and(|r| r.is_empty() || r.starts_with(char::is_whitespace));
    if !is_hook {
        return false;
    }
    let base = program.rsplit(['/', '\\']).next().unwrap_or(&program);
    exe == Some(program.as_str()) || base == "solaria" || base == "solaria.exe"
}

/// Splits the first shell word (unquoted) off `command`; `None` if a quote is open.
fn split_program(command: &str) -> Option<(String, &str)> {
    let s = command.trim_start();
    let mut word = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => return Some((word, &s[i..])),
            '\'' => loop {
                match chars.next()?.1 {
                    '\'' => break,
                    ch => word.push(ch),
                }
            },
            '"' => loop {
                match chars.next()?.1 {
                    '"' => break,
                    '\\' => {
                        let next = chars.next()?.1;
                        if !matches!(next, '"' | '\\' | '$' | '`') {
                            word.push('\\');
                        }
                        word.push(next);
                    }
                    ch => word.push(ch),
                }
            },
            '\\' => word.push(chars.next()?.1),
            ch => word.push(ch),
        }
    }
    Some((word, ""))
}

/// Quotes `s` for a POSIX shell when it holds anything but plain path characters.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn exe_str(exe: &Path) -> Result<&str, InstallError> {
    let unusable = |reason| InstallError::UnusableExePath {
        path: exe.to_owned(),
        reason,
    };
    let s = exe
        .to_str()
        .ok_or_else(|| unusable("the path is not valid UTF-8"))?;
    if !exe.is_absolute() {
        return Err(unusable(
            "the path is not absolute (Claude Code runs hooks from the project directory)",
        ));
    }
    if s.contains(['\n', '\r', '`', '\0']) {
        return Err(unusable(
            "the path contains a newline, a NUL or a back-quote",
        ));
    }
    Ok(s)
}

// ---------------------------------------------------------------------------
// The /memory slash command

enum CommandFile {
    Missing,
    Ours(String),
    Foreign,
}

fn command_file_state(path: &Path) -> Result<CommandFile, InstallError> {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            Ok(if text.contains(COMMAND_MARKER) {
                CommandFile::Ours(text.into_owned())
            } else {
                CommandFile::Foreign
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(CommandFile::Missing),
        Err(source) => Err(InstallError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The content of `memory.md` for `exe`.
///
/// The arguments go to bash inside double quotes: Claude Code splices them in without
/// escaping, and double quotes keep the most common case (an apostrophe in a query)
/// working; a lone `"` in the typed text still breaks the line.
pub fn slash_command_file(exe: &str) -> String {
    let program = shell_quote(exe);
    let allowed = yaml_scalar(&format!("Bash({program} slash:*)"));
    format!(
        "---\n\
         description: SOLARIA Memory - sync, status or search past coding sessions\n\
         argument-hint: sync | status | search <query>\n\
         allowed-tools: {allowed}\n\
         disable-model-invocation: true\n\
         ---\n\
         <!-- {COMMAND_MARKER}. Written by \"solaria install claude-code\" and removed by \
         \"solaria uninstall claude-code\"; a reinstall overwrites edits. Delete this \
         comment to keep the file as your own. -->\n\
         \n\
         SOLARIA Memory answered \"/memory $ARGUMENTS\" with:\n\
         \n\
         !`{program} slash \"$ARGUMENTS\"`\n\
         \n\
         Show that output to the user as it is, keeping every id, time and title so that \
         results can be cited and opened later; use a code block if it is a table. Do not \
         run any other command for this request. If it reports an error or a usage \
         message, relay it in one or two sentences.\n\
         \n\
         Usage: \"/memory status\" shows the local store and sync state, \"/memory sync\" \
         pushes and pulls with the central service now, \"/memory search <query>\" \
         searches past sessions (the SOLARIA MCP tools can then show the timeline around \
         a result or full records by id).\n"
    )
}

/// `s` as a YAML scalar: plain when that is unambiguous, double-quoted otherwise.
fn yaml_scalar(s: &str) -> String {
    if s.contains(": ") || s.contains(" #") || s.contains(['\t', '"']) {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        s.to_owned()
    }
}

// ---------------------------------------------------------------------------
// Files

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `contents` to `path` atomically: a temporary file in the same directory,
/// fsync, rename. Creates the parent directories; keeps the old file's permissions;
/// writes through a symlink (to its target) instead of replacing it.
fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), InstallError> {
    let write_err = |source| InstallError::Write {
        path: path.to_owned(),
        source,
    };
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path).map_err(write_err)?,
        _ => path.to_owned(),
    };
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(write_err)?;
    let permissions = fs::metadata(&target).ok().map(|m| m.permissions());
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(
        ".{name}.solaria-{}-{nanos}-{}.tmp",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(contents)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &target)?;
        sync_dir(&dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(write_err)
}

/// Makes a rename durable (best effort; directories cannot be opened on Windows).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const EXE: &str = "/opt/solaria/bin/solaria";

    fn original_settings() -> Value {
        json!({
            "model": "opus",
            "permissions": { "allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"] },
            "env": { "FOO": "bar" },
            "statusLine": { "type": "command", "command": "~/.claude/statusline.sh" },
            "hooks": {
                "PostToolUse": [
                    { "matcher": "Bash",
                      "hooks": [ { "type": "command", "command": "other-tool log-bash", "timeout": 5 } ] },
                    { "matcher": "Edit|Write",
                      "hooks": [ { "type": "command", "command": "prettier --write" } ] }
                ],
                "SessionStart": [
                    { "hooks": [ { "type": "command", "command": "other-tool greet" } ] }
                ],
                "PreToolUse": [
                    { "matcher": "Bash", "hooks": [ { "type": "command", "command": "guard.sh" } ] }
                ]
            }
        })
    }

    fn setup(settings: Option<&str>) -> (tempfile::TempDir, Target) {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = Target::for_scope(Scope::User, dir.path(), Path::new("/nonexistent"));
        if let Some(text) = settings {
            fs::create_dir_all(target.settings_path.parent().expect("parent")).expect("mkdir");
            fs::write(&target.settings_path, text).expect("write settings");
        }
        (dir, target)
    }

    fn read_json(path: &Path) -> Value {
        serde_json::from_str(&fs::read_to_string(path).expect("read")).expect("json")
    }

    /// All hook commands of `event` that SOLARIA recognises as its own.
    fn ours(settings: &Value, event: &str) -> Vec<String> {
        settings["hooks"][event]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
            .filter_map(|h| h["command"].as_str())
            .filter(|c| is_our_command(c, None))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn install_preserves_everything_and_is_idempotent() {
        let text = serde_json::to_string_pretty(&original_settings()).expect("ser");
        let (_dir, target) = setup(Some(&text));

        let report = install(&target, Path::new(EXE)).expect("install");
        assert!(report.changed && report.settings_changed && report.command_changed);
        let after = read_json(&target.settings_path);
        for key in ["model", "permissions", "env", "statusLine"] {
            assert_eq!(after[key], original_settings()[key], "{key}");
        }
        assert_eq!(
            after["hooks"]["PreToolUse"],
            original_settings()["hooks"]["PreToolUse"]
        );
        let post = after["hooks"]["PostToolUse"].as_array().expect("array");
        assert_eq!(post[0], original_settings()["hooks"]["PostToolUse"][0]);
        assert_eq!(post[1], original_settings()["hooks"]["PostToolUse"][1]);
        assert_eq!(
            post[2],
            json!({ "matcher": "*", "hooks": [ { "type": "command",
                "command": "/opt/solaria/bin/solaria hook post-tool-use", "timeout": 10 } ] })
        );
        let start = after["hooks"]["SessionStart"].as_array().expect("array");
        assert_eq!(start[0], original_settings()["hooks"]["SessionStart"][0]);
        assert_eq!(
            start[1],
            json!({ "hooks": [ { "type": "command",
                "command": "/opt/solaria/bin/solaria hook session-start", "timeout": 10 } ] })
        );
        for event in HOOK_EVENTS {
            assert_eq!(
                ours(&after, event.name),
                vec![format!("{EXE} hook {}", event.arg)],
                "{}",
                event.name
            );
        }
        let bytes = fs::read(&target.settings_path).expect("read");
        assert!(bytes.ends_with(b"}\n"));

        let again = install(&target, Path::new(EXE)).expect("install again");
        assert!(!again.changed && !again.settings_changed && !again.command_changed);
        assert_eq!(fs::read(&target.settings_path).expect("read"), bytes);
    }

    #[test]
    fn reinstall_with_new_exe_replaces_entries() {
        let text = serde_json::to_string(&original_settings()).expect("ser");
        let (_dir, target) = setup(Some(&text));
        install(&target, Path::new("/old/place/solaria")).expect("install old");
        let report = install(&target, Path::new(EXE)).expect("install new");
        assert!(report.changed);
        let after = read_json(&target.settings_path);
        for event in HOOK_EVENTS {
            assert_eq!(
                ours(&after, event.name),
                vec![format!("{EXE} hook {}", event.arg)]
            );
        }
        assert!(
            !fs::read_to_string(&target.settings_path)
                .expect("read")
                .contains("/old/place")
        );
        let command = fs::read_to_string(target.command_path()).expect("command");
        assert!(command.contains(EXE) && !command.contains("/old/place"));
    }

    #[test]
    fn uninstall_restores_the_original_value() {
        let text = serde_json::to_string_pretty(&original_settings()).expect("ser");
        let (_dir, target) = setup(Some(&text));
        install(&target, Path::new(EXE)).expect("install");
        let report = uninstall(&target).expect("uninstall");
        assert!(report.changed && report.settings_changed && report.command_changed);
        assert_eq!(read_json(&target.settings_path), original_settings());
        assert!(!target.command_path().exists());

        let again = uninstall(&target).expect("uninstall again");
        assert!(!again.changed);
        assert_eq!(read_json(&target.settings_path), original_settings());
    }

    #[test]
    fn a_foreign_mcp_server_named_solaria_is_never_replaced() {
        let (_dir, target) = setup(None);
        let theirs =
            json!({"mcpServers": {"solaria": {"command": "docker", "args": ["run", "x"]}}});
        fs::write(&target.mcp_path, theirs.to_string()).expect("write");
        let err = install(&target, Path::new(EXE)).expect_err("refused");
        assert!(
            matches!(err, InstallError::ForeignMcpServer { .. }),
            "{err}"
        );
        assert!(!target.settings_path.exists(), "nothing was changed");
        assert_eq!(read_json(&target.mcp_path), theirs);
        uninstall(&target).expect("uninstall");
        assert_eq!(
            read_json(&target.mcp_path),
            theirs,
            "uninstall leaves it too"
        );
    }

    #[test]
    fn exe_path_matching_is_exact_or_by_basename() {
        // An exe not named solaria is recognised at install by its exact path.
        let (_dir, target) = setup(None);
        install(&target, Path::new("/usr/local/bin/solaria-dev")).expect("install");
        install(&target, Path::new("/usr/local/bin/solaria-dev")).expect("install again");
        let after = read_json(&target.settings_path);
        assert_eq!(after["hooks"]["Stop"].as_array().expect("array").len(), 1);
    }

    #[test]
    fn shared_group_keeps_the_other_command() {
        let shared = json!({
            "hooks": {
                "Stop": [ { "hooks": [
                    { "type": "command", "command": "notify-send done" },
                    { "type": "command", "command": "/home/me/.cargo/bin/solaria hook stop" }
                ] } ]
            }
        });
        let (_dir, target) = setup(Some(&shared.to_string()));
        install(&target, Path::new(EXE)).expect("install");
        let after = read_json(&target.settings_path);
        assert_eq!(ours(&after, "Stop"), vec![format!("{EXE} hook stop")]);
        assert_eq!(
            after["hooks"]["Stop"][0]["hooks"],
            json!([{ "type": "command", "command": "notify-send done" }])
        );

        uninstall(&target).expect("uninstall");
        assert_eq!(
            read_json(&target.settings_path),
            json!({ "hooks": { "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ] } })
        );
    }

    #[test]
    fn invalid_settings_are_never_touched() {
        for bad in [
            "{ \"model\": ",
            "[1, 2]",
            "{\"hooks\": []}",
            "{\"hooks\": {\"Stop\": {}}}",
        ] {
            let (_dir, target) = setup(Some(bad));
            let err = install(&target, Path::new(EXE)).expect_err("must fail");
            let message = err.to_string();
            assert!(message.contains("settings.json"), "{message}");
            assert!(message.contains("nothing was changed"), "{message}");
            assert_eq!(
                fs::read_to_string(&target.settings_path).expect("read"),
                bad
            );
            assert!(!target.command_path().exists());
            if bad != "{\"hooks\": {\"Stop\": {}}}" {
                uninstall(&target).expect_err("uninstall must fail too");
                assert_eq!(
                    fs::read_to_string(&target.settings_path).expect("read"),
                    bad
                );
            }
        }
        let (_dir, target) = setup(Some("not json"));
        assert!(matches!(
            install(&target, Path::new(EXE)),
            Err(InstallError::InvalidJson { .. })
        ));
    }

    #[test]
    fn missing_and_empty_files() {
        let (_dir, target) = setup(None);
        let report = uninstall(&target).expect("uninstall nothing");
        assert!(!report.changed);
        assert!(!target.settings_path.exists());

        install(&target, Path::new(EXE)).expect("install");
        let after = read_json(&target.settings_path);
        assert_eq!(after.as_object().expect("object").len(), 1);
        assert_eq!(
            after["hooks"].as_object().expect("hooks").len(),
            HOOK_EVENTS.len()
        );
        assert!(target.command_path().exists());
        uninstall(&target).expect("uninstall");
        assert_eq!(read_json(&target.settings_path), json!({}));
        assert!(!target.command_path().exists());

        let (_dir, target) = setup(Some("  \n"));
        assert!(!uninstall(&target).expect("uninstall blank").changed);
        assert_eq!(
            fs::read_to_string(&target.settings_path).expect("read"),
            "  \n"
        );
        install(&target, Path::new(EXE)).expect("install into blank");
        assert_eq!(
            ours(&read_json(&target.settings_path), "SessionEnd").len(),
            1
        );
    }

    #[test]
    fn user_command_file_is_never_overwritten_nor_deleted() {
        let (_dir, target) = setup(None);
        fs::create_dir_all(&target.commands_dir).expect("mkdir");
        let mine = "---\ndescription: my notes\n---\nShow my notes\n";
        fs::write(target.command_path(), mine).expect("write");

        let err = install(&target, Path::new(EXE)).expect_err("must refuse");
        assert!(matches!(err, InstallError::ForeignCommandFile { .. }));
        assert!(err.to_string().contains("memory.md"));
        assert!(!target.settings_path.exists(), "nothing may change");
        assert_eq!(
            fs::read_to_string(target.command_path()).expect("read"),
            mine
        );

        assert!(!uninstall(&target).expect("uninstall").changed);
        assert_eq!(
            fs::read_to_string(target.command_path()).expect("read"),
            mine
        );
    }

    #[test]
    fn command_file_content() {
        let (_dir, target) = setup(None);
        install(&target, Path::new(EXE)).expect("install");
        let text = fs::read_to_string(target.command_path()).expect("read");
        assert!(text.starts_with("---\n"));
        assert!(text.contains(COMMAND_MARKER));
        assert!(text.contains("allowed-tools: Bash(/opt/solaria/bin/solaria slash:*)\n"));
        assert!(text.contains("\n!`/opt/solaria/bin/solaria slash \"$ARGUMENTS\"`\n"));
        assert_eq!(text.matches("!`").count(), 1, "exactly one bash line");
    }

    #[test]
    fn exe_with_spaces_is_quoted_and_recognised() {
        let exe = "/Users/Jo Doe/My Tools/solaria";
        let (_dir, target) = setup(None);
        install(&target, Path::new(exe)).expect("install");
        let after = read_json(&target.settings_path);
        assert_eq!(ours(&after, "Stop"), vec![format!("'{exe}' hook stop")]);
        install(&target, Path::new(exe)).expect("install again");
        assert!(!install(&target, Path::new(exe)).expect("third").changed);
        let text = fs::read_to_string(target.command_path()).expect("read");
        assert!(text.contains(&format!("!`'{exe}' slash \"$ARGUMENTS\"`")));
        assert!(text.contains(&format!("allowed-tools: Bash('{exe}' slash:*)\n")));
        uninstall(&target).expect("uninstall");
        assert_eq!(read_json(&target.settings_path), json!({}));

        assert!(matches!(
            install(&target, Path::new("relative/solaria")),
            Err(InstallError::UnusableExePath { .. })
        ));
    }

    #[test]
    fn recognises_our_commands_only() {
        assert!(is_our_command("/a/b/solaria hook stop", None));
        assert!(is_our_command("solaria hook session-start", None));
        assert!(is_our_command("'/a b/solaria' hook stop", None));
        assert!(is_our_command("\"/a b/solaria\" hook stop", None));
        assert!(is_our_command("'C:\\bin\\solaria.exe' hook stop", None));
        assert!(is_our_command("/x/sol hook stop", Some("/x/sol")));
        assert!(!is_our_command("/x/sol hook stop", None));
        assert!(!is_our_command("solaria serve", None));
        assert!(!is_our_command("solaria hooks", None));
        assert!(!is_our_command("other-tool hook solaria", None));
        assert!(!is_our_command("/a/not-solaria hook stop", None));
        assert!(!is_our_command("'unterminated hook stop", None));
        assert!(!is_our_command("", None));
    }

    #[test]
    fn scope_paths() {
        let home = Path::new("/home/jo");
        let project = Path::new("/src/app");
        let user = Target::for_scope(Scope::User, home, project);
        assert_eq!(
            user.settings_path,
            Path::new("/home/jo/.claude/settings.json")
        );
        assert_eq!(user.commands_dir, Path::new("/home/jo/.claude/commands"));
        assert_eq!(
            user.command_path(),
            Path::new("/home/jo/.claude/commands/memory.md")
        );
        let proj = Target::for_scope(Scope::Project, home, project);
        assert_eq!(
            proj.settings_path,
            Path::new("/src/app/.claude/settings.json")
        );
        assert_eq!(
            proj.command_path(),
            Path::new("/src/app/.claude/commands/memory.md")
        );

        let dir = tempfile::tempdir().expect("tempdir");
        let target = Target::for_scope(Scope::Project, Path::new("/nonexistent"), dir.path());
        let report = install(&target, Path::new(EXE)).expect("install");
        assert_eq!(
            report.settings_path,
            dir.path().join(".claude/settings.json")
        );
        assert!(dir.path().join(".claude/commands/memory.md").exists());
        assert!(dir.path().join(".claude/settings.json").exists());
    }

    #[test]
    fn scope_value_names() {
        use clap::ValueEnum as _;
        assert!(matches!(Scope::from_str("user", false), Ok(Scope::User)));
        assert!(matches!(
            Scope::from_str("project", false),
            Ok(Scope::Project)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions_and_symlinks() {
        use std::os::unix::fs::PermissionsExt as _;
        let (dir, target) = setup(None);
        let real = dir.path().join("dotfiles-settings.json");
        fs::write(&real, "{\"model\": \"opus\"}\n").expect("write");
        fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).expect("chmod");
        fs::create_dir_all(target.settings_path.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(&real, &target.settings_path).expect("symlink");

        install(&target, Path::new(EXE)).expect("install");
        let link = fs::symlink_metadata(&target.settings_path).expect("meta");
        assert!(link.file_type().is_symlink(), "the symlink must survive");
        let mode = fs::metadata(&real).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(ours(&read_json(&real), "Stop").len(), 1);
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .expect("ls")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn slash_args() {
        assert_eq!(parse_slash_args::<&str>(&[]), SlashRequest::Status);
        assert_eq!(parse_slash_args(&[""]), SlashRequest::Status);
        assert_eq!(parse_slash_args(&["  status "]), SlashRequest::Status);
        assert_eq!(parse_slash_args(&["SYNC"]), SlashRequest::Sync);
        assert_eq!(
            parse_slash_args(&["search don't  panic "]),
            SlashRequest::Search("don't  panic".into())
        );
        assert_eq!(
            parse_slash_args(&["search", "auth", "bug"]),
            SlashRequest::Search("auth bug".into())
        );
        assert_eq!(
            parse_slash_args(&["search"]),
            SlashRequest::Search(String::new())
        );
        assert_eq!(
            parse_slash_args(&["frobnicate x"]),
            SlashRequest::Unknown("frobnicate x".into())
        );
    }
}
