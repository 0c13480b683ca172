//! Hooks whose binary is gone fail open in every agent: SOLARIA installed into
//! OpenCode, Codex CLI and Gemini CLI from binaries that are then removed (moved by
//! an upgrade, deleted by hand), and a session of each still runs to its answer;
//! `solaria doctor` names the missing binary. Claude Code's case, with its plugin's,
//! is in `plugin.rs`.

use serde_json::Value;
use solaria_tests::agents::{self, AgentRun};
use solaria_tests::edge::Edge;
use solaria_tests::model::{ModelServer, Step};
use std::process::Command;

/// Installs SOLARIA into `agent` on `edge` from a copy of this build's binaries,
/// then removes the copy.
fn installed_then_removed(edge: &Edge, agent: &str) {
    let moved = edge.root.path().join("old-bin");
    std::fs::create_dir_all(&moved).expect("mkdir");
    for name in ["solaria", "solaria-hook"] {
        std::fs::copy(solaria_tests::binary(name), moved.join(name)).expect("copy");
    }
    let out = edge
        .program_in(&moved.join("solaria"), &edge.project)
        .args(["install", agent, "--no-service", "--no-model"])
        .output()
        .expect("solaria install");
    assert!(
        out.status.success(),
        "solaria install {agent}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&moved).expect("remove the binaries");
}

/// Runs `cmd` as a session and checks it ran to its end.
fn runs_on(edge: &Edge, cmd: Command, name: &str) -> AgentRun {
    let run = agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs").join(name),
        agents::SESSION_TIMEOUT,
    );
    run.assert_success();
    run
}

/// `solaria doctor` (this build's) names the removed binary in `check`.
fn doctor_names_the_missing_binary(edge: &Edge, check: &str) {
    let report = edge.json(&edge.project, &["doctor", "--json"]);
    let found: Vec<&Value> = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["check"] == check)
        .collect();
    let detail = found
        .first()
        .and_then(|c| c["detail"].as_str())
        .unwrap_or("");
    assert!(
        found.first().is_some_and(|c| c["status"] == "stale")
            && detail.contains("no longer exists")
            && detail.contains("old-bin/solaria"),
        "{check}: {report}"
    );
}

#[test]
fn opencode_codex_and_gemini_run_on_when_the_hooks_binary_is_gone() {
    let opencode = agents::agent_binary(agents::OPENCODE_VAR);
    let codex = agents::agent_binary(agents::CODEX_VAR);
    let gemini = agents::agent_binary(agents::GEMINI_VAR);

    if let Some(bin) = opencode {
        let edge = Edge::new("laptop");
        installed_then_removed(&edge, "opencode");
        let model = ModelServer::start(vec![Step::text("OpenCode answers.")]);
        let run = runs_on(
            &edge,
            agents::opencode(&bin, &edge, &model, "Say hello"),
            "opencode",
        );
        assert!(run.stdout.contains("OpenCode answers."), "{run:?}");
        doctor_names_the_missing_binary(&edge, "opencode plugin");
    }
    if let Some(bin) = codex {
        let edge = Edge::new("laptop");
        installed_then_removed(&edge, "codex");
        let model = ModelServer::start(vec![Step::text("Codex answers.")]);
        let run = runs_on(
            &edge,
            agents::codex(&bin, &edge, &model, "Say hello", &[]),
            "codex",
        );
        assert!(run.stdout.contains("Codex answers."), "{run:?}");
        doctor_names_the_missing_binary(&edge, "codex hooks");
    }
    if let Some(bin) = gemini {
        let edge = Edge::new("laptop");
        // Gemini's own settings come first (its auth method), as a user has them.
        let settings = edge.home().join(".gemini").join("settings.json");
        std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
        std::fs::write(&settings, agents::GEMINI_USER_SETTINGS).expect("settings");
        installed_then_removed(&edge, "gemini");
        let model = ModelServer::start(vec![Step::text("Gemini answers.")]);
        let run = runs_on(
            &edge,
            agents::gemini(&bin, &edge, &model, "Say hello", &[]),
            "gemini",
        );
        assert!(run.stdout.contains("Gemini answers."), "{run:?}");
        doctor_names_the_missing_binary(&edge, "gemini hooks");
    }
}
