//! The embedding model offered by `solaria install` (`edge/src/cli/model_offer.rs`):
//! downloaded with `--model` from a mirror on loopback, never with `--no-model`,
//! asked once at a real terminal (a pty from util-linux `script`), a failed
//! download leaving the agent wired; and what `status` and `doctor` then say.

use crate::semantic::{CAMERA, CAMERA_SPANISH, titles};
use solaria_tests::edge::Edge;
use solaria_tests::mirror::mirror_of;
use solaria_tests::semantic::{doctor_search, multilingual, search};
use std::io::Write;
use std::path::Path;

/// `solaria install` with the Hugging Face mirror at `url`, `args` after the agent,
/// outside any terminal; what it printed.
fn install_agent(edge: &Edge, url: &str, args: &[&str]) -> String {
    let out = edge
        .cmd()
        .args(["install", "claude-code", "--no-service"])
        .args(args)
        .env("SOLARIA_MODEL_MIRROR", url)
        .env("NO_PROXY", "127.0.0.1")
        .env("no_proxy", "127.0.0.1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run solaria");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the install itself never fails on the model: {text}"
    );
    text
}

#[test]
fn installing_an_agent_brings_search_by_meaning_as_a_flag_or_a_question_says() {
    let Some(model) = multilingual() else { return };
    let url = mirror_of("intfloat/multilingual-e5-small", model.clone(), &[]);

    // A script that asks for the model gets it, and search by meaning with it.
    let scripted = Edge::new("laptop");
    let out = install_agent(&scripted, &url, &["--model"]);
    assert!(
        out.contains("Installed SOLARIA into Claude Code") && out.contains("Search by meaning: on"),
        "{out}"
    );
    assert!(scripted.ok(&["model", "status"]).contains("384 dimensions"));
    assert_eq!(doctor_search(&scripted).0, "ok");
    scripted.old_prompts(&[(3, CAMERA)]);
    scripted.ok(&["embed"]);
    assert_eq!(
        titles(&search(&scripted, "semantic", CAMERA_SPANISH)).first(),
        Some(&CAMERA)
    );
    // Installing again (another agent, an upgrade) keeps it and says so.
    let again = install_agent(&scripted, &url, &[]);
    assert!(
        again.contains("Search by meaning: on (the model in"),
        "{again}"
    );

    // A script that says nothing is not asked, and is told how to turn it on; so
    // are `status` and `doctor`.
    let quiet = Edge::new("desktop");
    let out = install_agent(&quiet, &url, &[]);
    assert!(
        out.contains("Search by meaning: off") && out.contains("solaria model install"),
        "{out}"
    );
    assert!(!out.contains("downloading"), "{out}");
    let status = quiet.ok(&["status"]);
    assert!(
        status.contains(
            "search:     lexical (words); no embedding model installed (`solaria model install`"
        ),
        "{status}"
    );
    let (state, fix) = doctor_search(&quiet);
    assert_eq!(state, "missing");
    assert!(fix.is_some_and(|f| f.starts_with("solaria model install")));

    // An offline machine: `--no-model` downloads nothing; `--model` with the
    // mirror failing wires the agent all the same and says how to retry.
    let offline = Edge::new("train");
    let out = install_agent(&offline, &url, &["--no-model"]);
    assert!(out.contains("Search by meaning: off"), "{out}");
    let broken = mirror_of(
        "intfloat/multilingual-e5-small",
        model.clone(),
        &["model.safetensors"],
    );
    let out = install_agent(&offline, &broken, &["--model"]);
    assert!(
        out.contains("could not be downloaded")
            && out.contains("try again with `solaria model install`"),
        "{out}"
    );
    assert_eq!(doctor_search(&offline).0, "missing");
    assert!(offline.home().join(".claude/settings.json").is_file());
}

#[test]
fn a_person_is_asked_once_for_the_model() {
    let Some(model) = multilingual() else { return };
    let url = mirror_of("intfloat/multilingual-e5-small", model.clone(), &[]);
    // A terminal (util-linux `script` gives the install one) answering `answer`.
    let at_a_terminal = |edge: &Edge, answer: &str| -> String {
        let command = format!(
            "{} install claude-code --no-service",
            solaria_tests::payloads::solaria()
        );
        let mut child = edge
            .program_in(Path::new("script"), edge.root.path())
            .args(["-qec", &command, "/dev/null"])
            .env("SOLARIA_MODEL_MIRROR", &url)
            .env("NO_PROXY", "127.0.0.1")
            .env("no_proxy", "127.0.0.1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("script");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(answer.as_bytes())
            .expect("answer");
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    let edge = Edge::new("laptop");
    // Input that ends unanswered (Ctrl-D) downloads nothing and is no answer.
    let unanswered = at_a_terminal(&edge, "");
    assert!(
        unanswered.contains("Download it now? [Y/n]")
            && unanswered.contains("Search by meaning: off"),
        "{unanswered}"
    );
    let first = at_a_terminal(&edge, "n\n");
    assert!(
        first.contains("Download it now? [Y/n]") && first.contains("Search by meaning: off"),
        "asked again after no answer: {first}"
    );
    let second = at_a_terminal(&edge, "");
    assert!(
        !second.contains("Download it now?") && second.contains("Search by meaning: off"),
        "a no is asked once: {second}"
    );

    let yes = Edge::new("desktop");
    let out = at_a_terminal(&yes, "\n");
    assert!(
        out.contains("Download it now? [Y/n]") && out.contains("Search by meaning: on"),
        "{out}"
    );
    assert_eq!(doctor_search(&yes).0, "ok");
}
