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

/// One agent of the test: how to start a session of it, and the doctor check that
/// must name the missing binary.
struct Case {
    agent: &'static str,
    var: &'static str,
    check: &'static str,
    session: fn(&std::path::Path, &Edge, &ModelServer) -> Command,
    /// Settings the agent needs before SOLARIA is installed (Gemini's auth method,
    /// as a user has it).
    prepare: fn(&Edge),
}

const CASES: [Case; 3] = [
    Case {
        agent: "opencode",
        var: agents::OPENCODE_VAR,
        check: "opencode plugin",
        session: |bin, edge, model| agents::opencode(bin, edge, model, "Say hello"),
        prepare: |_| {},
    },
    Case {
        agent: "codex",
        var: agents::CODEX_VAR,
        check: "codex hooks",
        session: |bin, edge, model| agents::codex(bin, edge, model, "Say hello", &[]),
        prepare: |_| {},
    },
    Case {
        agent: "gemini",
        var: agents::GEMINI_VAR,
        check: "gemini hooks",
        session: |bin, edge, model| agents::gemini(bin, edge, model, "Say hello", &[]),
        prepare: |edge| {
            let settings = edge.home().join(".gemini").join("settings.json");
            std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
            std::fs::write(&settings, agents::GEMINI_USER_SETTINGS).expect("settings");
        },
    },
];

#[test]
fn opencode_codex_and_gemini_run_on_when_the_hooks_binary_is_gone() {
    for case in &CASES {
        // A missing agent is said by agent_binary, and fails the test in CI.
        let Some(bin) = agents::agent_binary(case.var) else {
            continue;
        };
        let edge = Edge::new("laptop");
        (case.prepare)(&edge);
        installed_then_removed(&edge, case.agent);
        let answer = format!("{} answers.", case.agent);
        let model = ModelServer::start(vec![Step::text(&answer)]);
        let run = runs_on(&edge, (case.session)(&bin, &edge, &model), case.agent);
        assert!(run.stdout.contains(&answer), "{}: {run:?}", case.agent);
        doctor_names_the_missing_binary(&edge, case.check);
    }
}
