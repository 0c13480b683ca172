//! Installing without a toolchain, as a new user with no `cargo` on PATH and no
//! root, by the two routes: release archives made by `deploy/release.sh` (from the
//! binaries under test), served on loopback and installed by
//! `deploy/install-release.sh`; and the npm packages `deploy/npm.sh` makes from
//! them, installed with `npm install -g` into a throwaway prefix (and run by `npx`).
//! Each then runs `solaria install claude-code --no-model` from what it installed
//! and captures a session of the real Claude Code (`deploy/agents.sh`) through the
//! hook that registered, with nothing of the build tree on PATH. A tampered archive is
//! refused and nothing is installed; a launcher without its platform's package
//! says which route to take instead. The central service's archive installs the way
//! its container image installs it.

use serde_json::Value;
use solaria_tests::agents;
use solaria_tests::edge::Edge;
use solaria_tests::mirror;
use solaria_tests::model::{ModelServer, Step};
use solaria_tests::payloads::prompt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A PATH with the system's tools and nothing of Rust's.
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The archives of the binaries under test, made by `deploy/release.sh` into `out`;
/// the edge archive's file name.
fn release(out: &Path) -> String {
    let bin = solaria_tests::binary("solaria");
    let made = Command::new("bash")
        .arg(solaria_tests::workspace().join("deploy/release.sh"))
        .arg(out)
        .env(
            "SOLARIA_RELEASE_BIN_DIR",
            bin.parent().expect("the binaries' directory"),
        )
        .output()
        .expect("run release.sh");
    succeeded(&made, "deploy/release.sh");
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).expect("SHA256SUMS");
    let names: Vec<&str> = sums
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(names.len(), 2, "the edge and the central service: {sums}");
    assert!(names[1].starts_with("solaria-central-"), "{sums}");
    names[0].to_string()
}

/// Checks that `out` is a success (`what` says whose; it fails with what it printed).
fn succeeded(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `install-release.sh ARGS` as a new user of `edge`'s HOME, with no Rust on PATH.
fn install_release(edge: &Edge, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(solaria_tests::workspace().join("deploy/install-release.sh"))
        .args(args)
        .env_clear()
        .env("HOME", edge.home())
        .env("PATH", SYSTEM_PATH)
        .output()
        .expect("run install-release.sh")
}

fn prefix_bin(edge: &Edge) -> PathBuf {
    edge.home().join(".local/bin")
}

#[test]
fn a_new_user_without_rust_installs_a_release_and_its_hooks_capture() {
    let no_cargo = Command::new("bash")
        .args(["-c", "command -v cargo rustc"])
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .output()
        .expect("bash");
    assert!(
        !no_cargo.status.success(),
        "this PATH must hold no Rust toolchain"
    );

    let dist = tempfile::tempdir().expect("dist");
    let archive = release(dist.path());
    let url = mirror::files(dist.path().to_path_buf());
    let m = Edge::new("laptop");
    let out = install_release(&m, &[&format!("{url}/{archive}")]);
    let said = String::from_utf8_lossy(&out.stdout);
    succeeded(&out, "install-release.sh");
    assert!(said.contains("next: solaria install claude-code"), "{said}");
    let solaria = prefix_bin(&m).join("solaria");
    assert!(prefix_bin(&m).join("solaria-hook").is_file());

    installed_and_capturing(&m, &solaria, &prefix_bin(&m), &prefix_bin(&m));
}

/// Runs `solaria install claude-code --no-model` with `solaria` (on a PATH of `bin`
/// and the system's), checks that the prompt hook runs the native `solaria-hook`
/// in `hook_dir`, and captures a prompt through it as Claude Code would.
fn installed_and_capturing(m: &Edge, solaria: &Path, bin: &Path, hook_dir: &Path) {
    let path = format!("{}:{SYSTEM_PATH}", bin.display());
    let installed = m
        .program_in(solaria, &m.project)
        .env("PATH", &path)
        .args(["install", "claude-code", "--no-model"])
        .output()
        .expect("solaria install");
    succeeded(&installed, "solaria install claude-code");
    let command = prompt_hook_command(m);
    let hook = std::fs::canonicalize(hook_dir.join("solaria-hook")).expect("the native hook");
    assert!(
        command.starts_with(&hook.display().to_string()),
        "the hook runs the native binary, never through node: {command}"
    );

    let question = "why does renew_jwt reject fresh tokens?";
    prompt_through_claude_code(m, &path, question);
    m.settled();
    let found = m
        .program_in(solaria, &m.project)
        .env("PATH", &path)
        .args(["search", "renew_jwt", "--json"])
        .output()
        .expect("search");
    let hits: Value = serde_json::from_slice(&found.stdout).expect("hits");
    assert!(
        hits.as_array()
            .into_iter()
            .flatten()
            .any(|h| h["type"] == "prompt" && h["title"] == question),
        "captured by the installed hook: {hits}"
    );
}

/// The prompt hook's command in `m`'s `~/.claude/settings.json`.
fn prompt_hook_command(m: &Edge) -> String {
    let settings: Value = serde_json::from_slice(
        &std::fs::read(m.home().join(".claude/settings.json")).expect("settings"),
    )
    .expect("json");
    settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .expect("the prompt hook")
        .to_string()
}

/// A session of the real Claude Code on `m` asking `question`, with `path` as its
/// PATH; without the agent (a developer's machine), the prompt hook installed in
/// `~/.claude/settings.json` run as Claude Code runs it.
fn prompt_through_claude_code(m: &Edge, path: &str, question: &str) {
    let command = prompt_hook_command(m);
    match agents::agent_binary(agents::CLAUDE_VAR) {
        // The real Claude Code, with this PATH: nothing of the build tree.
        Some(claude) => {
            let model = ModelServer::start(vec![Step::text("It checks the issue time.")]);
            let mut session = agents::claude(&claude, m, &model, question);
            session.env("PATH", path);
            agents::run_timeboxed(
                session,
                &m.root.path().join("runs/installed"),
                agents::SESSION_TIMEOUT,
            )
            .assert_success();
        }
        // Without the agent (a developer's machine), its hook as Claude Code runs it.
        None => {
            let mut hook = m
                .program_in(Path::new("sh"), &m.project)
                .env("PATH", path)
                .args(["-c", &command])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("the hook");
            let payload = prompt("r-1", &m.project, question);
            hook.stdin
                .take()
                .expect("stdin")
                .write_all(payload.to_string().as_bytes())
                .expect("payload");
            assert!(hook.wait().expect("hook").success());
        }
    }
}

#[test]
fn a_tampered_archive_is_refused_and_nothing_is_installed() {
    let dist = tempfile::tempdir().expect("dist");
    let archive = release(dist.path());
    let path = dist.path().join(&archive);
    let mut bytes = std::fs::read(&path).expect("archive");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&path, bytes).expect("tamper");
    let url = mirror::files(dist.path().to_path_buf());
    let m = Edge::new("laptop");
    let out = install_release(&m, &[&format!("{url}/{archive}")]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("checksum mismatch") && said.contains("nothing was installed"),
        "{said}"
    );
    assert!(!prefix_bin(&m).exists(), "nothing installed");

    let unlisted = install_release(&m, &["--sums", "/dev/null", &format!("{url}/{archive}")]);
    assert!(String::from_utf8_lossy(&unlisted.stderr).contains("SHA256SUMS lists no"));
    assert!(!prefix_bin(&m).exists());
}

/// The npm packages of the binaries under test, made by `deploy/npm.sh` from the
/// release archive in `dist`: (the platform package, the launcher).
fn npm_packages(dist: &Path) -> (PathBuf, PathBuf) {
    release(dist);
    let made = Command::new("bash")
        .arg(solaria_tests::workspace().join("deploy/npm.sh"))
        .arg(dist)
        .output()
        .expect("run npm.sh");
    succeeded(&made, "deploy/npm.sh");
    let said = String::from_utf8_lossy(&made.stdout);
    let mut lines = said.lines().map(PathBuf::from);
    let platform = lines.next().expect("the platform package");
    let launcher = lines.next().expect("the launcher");
    assert!(
        platform.ends_with("solaria-memory-linux-x64-0.1.0.tgz"),
        "{said}"
    );
    (platform, launcher)
}

/// `npm ARGS` as the new user of `edge`'s HOME, offline (the packed files only).
fn npm(edge: &Edge, cwd: &Path, args: &[&str]) -> Output {
    Command::new("npm")
        .args(args)
        .args(["--offline", "--no-audit", "--no-fund"])
        .current_dir(cwd)
        .env_clear()
        .env("HOME", edge.home())
        .env("PATH", SYSTEM_PATH)
        .env("npm_config_cache", edge.home().join(".npm"))
        .output()
        .expect("run npm")
}

#[test]
fn npm_install_g_of_the_packed_packages_gives_a_working_solaria_whose_hooks_capture() {
    let dist = tempfile::tempdir().expect("dist");
    let (platform, launcher) = npm_packages(dist.path());
    let m = Edge::new("laptop");
    let prefix = m.home().join(".npm-global");
    let (p, l) = (
        platform.to_str().expect("path"),
        launcher.to_str().expect("path"),
    );
    let prefix_arg = prefix.to_str().expect("path");
    let out = npm(
        &m,
        &m.home(),
        &["install", "-g", "--prefix", prefix_arg, p, l],
    );
    succeeded(&out, "npm install -g");
    let bin = prefix.join("bin");
    let version = m
        .program_in(&bin.join("solaria"), &m.project)
        .env("PATH", format!("{}:{SYSTEM_PATH}", bin.display()))
        .arg("--version")
        .output()
        .expect("solaria --version");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        "solaria 0.1.0"
    );
    let native = prefix.join("lib/node_modules/@solaria-memory/linux-x64/bin");
    installed_and_capturing(&m, &bin.join("solaria"), &bin, &native);

    // npx, in a project that depends on the packages.
    let project = m.root.path().join("tooling");
    std::fs::create_dir_all(&project).expect("dir");
    let local = npm(&m, &project, &["install", p, l]);
    succeeded(&local, "npm install in a project");
    let npx = Command::new("npx")
        .args(["--no-install", "solaria", "--version"])
        .current_dir(&project)
        .env_clear()
        .env("HOME", m.home())
        .env("PATH", SYSTEM_PATH)
        .output()
        .expect("npx");
    assert_eq!(
        String::from_utf8_lossy(&npx.stdout).trim(),
        "solaria 0.1.0",
        "{npx:?}"
    );
}

#[test]
fn a_launcher_without_its_platforms_package_names_the_archive_route() {
    let dist = tempfile::tempdir().expect("dist");
    let (_, launcher) = npm_packages(dist.path());
    let m = Edge::new("laptop");
    let prefix = m.home().join(".npm-global");
    let out = npm(
        &m,
        &m.home(),
        &[
            "install",
            "-g",
            "--prefix",
            prefix.to_str().expect("path"),
            launcher.to_str().expect("path"),
        ],
    );
    succeeded(&out, "npm install -g of the launcher");
    let run = Command::new(prefix.join("bin/solaria"))
        .arg("--version")
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .output()
        .expect("solaria");
    assert!(!run.status.success());
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(
        said.contains("@solaria-memory/linux-x64") && said.contains("install-release.sh"),
        "{said}"
    );
}

#[test]
fn an_upgrade_in_place_moves_the_running_daemon_to_the_new_binary_and_hooks_go_on_capturing() {
    use solaria_tests::daemon::{Daemon, configure_any_port, serve_log, wait_for};
    let dist = tempfile::tempdir().expect("dist");
    let archive = release(dist.path());
    let url = mirror::files(dist.path().to_path_buf());
    let m = Edge::new("laptop");
    let archive_url = format!("{url}/{archive}");
    assert!(install_release(&m, &[&archive_url]).status.success());
    let solaria = prefix_bin(&m).join("solaria");
    let wired = m
        .program_in(&solaria, &m.project)
        .args(["install", "claude-code", "--no-model", "--no-service"])
        .output()
        .expect("solaria install");
    succeeded(&wired, "solaria install claude-code");
    configure_any_port(&m, "");
    let mut daemon = Daemon(
        m.program_in(&solaria, &m.project)
            .args(["serve", "--every", "86400", "--embed-every", "3600"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("solaria serve"),
    );
    let relay = m.data().join("hooks.sock");
    wait_for(&m, &mut daemon, "the relay", || {
        relay.exists().then_some(())
    });

    // The upgrade: the same route again replaces both binaries at their paths.
    let upgraded = install_release(&m, &[&archive_url]);
    succeeded(&upgraded, "install-release.sh again");
    wait_for(&m, &mut daemon, "the daemon on the new binary", || {
        let log = serve_log(&m);
        let after = log.split("was replaced (an upgrade)").nth(1)?;
        after.contains("hooks relayed through").then_some(())
    });
    assert!(
        daemon.0.try_wait().expect("status").is_none(),
        "the same process serves on"
    );

    let path = format!("{}:{SYSTEM_PATH}", prefix_bin(&m).display());
    prompt_through_claude_code(&m, &path, "after the upgrade renew_jwt still rotates");
    wait_for(&m, &mut daemon, "the prompt captured", || {
        (m.count("SELECT count(*) FROM observations WHERE title LIKE 'after the upgrade%'") == 1)
            .then_some(())
    });
}

#[test]
fn the_central_archive_installs_as_the_container_image_installs_it() {
    // deploy/central/Dockerfile's archive stage, with its paths moved under a
    // temporary root: the image runs what this installs.
    let dockerfile =
        std::fs::read_to_string(solaria_tests::workspace().join("deploy/central/Dockerfile"))
            .expect("Dockerfile");
    let step = "bash /tmp/install-release.sh --prefix /usr/local /tmp/dist/solaria-central-*-linux-gnu.tar.gz";
    assert!(
        dockerfile.contains(step),
        "the image installs the archive so"
    );
    let dist = tempfile::tempdir().expect("dist");
    release(dist.path());
    let root = tempfile::tempdir().expect("root");
    let script = solaria_tests::workspace().join("deploy/install-release.sh");
    let line = step
        .replace("/tmp/install-release.sh", &script.display().to_string())
        .replace(
            "/usr/local",
            &root.path().join("usr/local").display().to_string(),
        )
        .replace("/tmp/dist", &dist.path().display().to_string());
    let out = Command::new("bash")
        .args(["-c", &line])
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .output()
        .expect("bash");
    succeeded(&out, "the image's install step");
    let central = root.path().join("usr/local/bin/solaria-central");
    let version = Command::new(&central)
        .arg("--version")
        .output()
        .expect("solaria-central --version");
    succeeded(&version, "solaria-central --version");
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("solaria-central "),
        "{version:?}"
    );
    assert!(!root.path().join("usr/local/bin/solaria").exists());
}
