//! Installing without a toolchain, as a new user: release archives made by
//! `deploy/release.sh` (from the binaries under test), served on loopback,
//! installed by `deploy/install-release.sh` with no `cargo` on PATH and no root;
//! then `solaria install claude-code --no-model` from the installed binary, and a
//! prompt captured through the hook it registered. A tampered archive is refused
//! and nothing is installed.

use serde_json::Value;
use solaria_tests::edge::Edge;
use solaria_tests::mirror;
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
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).expect("SHA256SUMS");
    let names: Vec<&str> = sums
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(names.len(), 2, "the edge and the central service: {sums}");
    assert!(names[1].starts_with("solaria-central-"), "{sums}");
    names[0].to_string()
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
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("next: solaria install claude-code"), "{said}");
    let solaria = prefix_bin(&m).join("solaria");
    assert!(prefix_bin(&m).join("solaria-hook").is_file());

    let path = format!("{}:{SYSTEM_PATH}", prefix_bin(&m).display());
    let installed = m
        .program_in(&solaria, &m.project)
        .env("PATH", &path)
        .args(["install", "claude-code", "--no-model"])
        .output()
        .expect("solaria install");
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let settings: Value = serde_json::from_slice(
        &std::fs::read(m.home().join(".claude/settings.json")).expect("settings"),
    )
    .expect("json");
    let command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .expect("the prompt hook")
        .to_string();
    assert!(
        command.starts_with(&prefix_bin(&m).join("solaria-hook").display().to_string()),
        "the hook runs the installed binary: {command}"
    );

    // Claude Code runs the hook's command with the event on stdin.
    let mut hook = m
        .program_in(Path::new("sh"), &m.project)
        .env("PATH", &path)
        .args(["-c", &command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the hook");
    let payload = prompt("r-1", &m.project, "why does renew_jwt reject fresh tokens?");
    hook.stdin
        .take()
        .expect("stdin")
        .write_all(payload.to_string().as_bytes())
        .expect("payload");
    assert!(hook.wait().expect("hook").success());
    m.settled();
    let found = m
        .program_in(&solaria, &m.project)
        .env("PATH", &path)
        .args(["search", "renew_jwt", "--json"])
        .output()
        .expect("search");
    let hits: Value = serde_json::from_slice(&found.stdout).expect("hits");
    assert_eq!(
        hits[0]["title"], "why does renew_jwt reject fresh tokens?",
        "captured by the installed hook: {hits}"
    );
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
