//! Compaction in the real Claude Code and OpenCode: the conversation is replaced
//! by a summary, and the memory the session started with must come back (Codex's
//! and Gemini's are in `codex.rs` and `gemini.rs`).

use super::*;

/// `/compact` replaces a session's conversation by a summary, which drops the
/// context SessionStart gave at its start; Claude Code then runs SessionStart again
/// (source `compact`), and SOLARIA answers with the context again. The session
/// continued afterwards holds it twice: once from the compaction, once from the
/// resume (without the first, once).
#[test]
fn a_compaction_in_claude_code_gives_the_memory_back() {
    let Some(claude) = agents::agent_binary(CLAUDE_VAR) else {
        return;
    };
    let edge = installed_edge();
    coding_session(&claude, &edge);
    let model = ModelServer::start(vec![Step::text("Noted.")]);
    run_claude(
        &claude,
        &edge,
        &model,
        "Keep the deploy key in mind",
        "before",
    )
    .assert_success();

    let compacting = ModelServer::start(vec![Step::text("Summary of the session so far.")]);
    let mut compact = agents::claude(&claude, &edge, &compacting, "/compact");
    compact.arg("--continue");
    agents::run_timeboxed(
        compact,
        &edge.root.path().join("runs/compact"),
        SESSION_TIMEOUT,
    )
    .assert_success();
    assert!(
        !compacting.turns().is_empty(),
        "Claude Code asked the model for the summary"
    );

    let next = ModelServer::start(vec![Step::text("Next.")]);
    let mut resume = agents::claude(&claude, &edge, &next, "what is next?");
    resume.arg("--continue");
    agents::run_timeboxed(resume, &edge.root.path().join("runs/next"), SESSION_TIMEOUT)
        .assert_success();
    let turns = next.turns();
    let text = turns.first().expect("asked the model").text();
    assert!(
        text.contains("Summary of the session so far."),
        "the conversation is the compacted one"
    );
    assert_eq!(
        text.matches("# SOLARIA memory").count(),
        2,
        "the memory given at the compaction, and at the resume: {text}"
    );
    assert!(edge.hook_log().is_empty(), "{}", edge.hook_log());
}

/// OpenCode compacts a conversation that outgrows its model's window (here: the
/// first answer reports two million tokens read), asking the model for a summary
/// and going on from it; the plugin adds the context to every request before the
/// session's first message of the user's that the request carries, so the request
/// after the compaction has the memory too.
#[test]
fn a_compaction_in_opencode_keeps_the_memory() {
    let Some(opencode) = agents::agent_binary(agents::OPENCODE_VAR) else {
        return;
    };
    let edge = Edge::new("laptop");
    solaria_tests::opencode::install_for_opencode(&edge);
    edge.prompt("earlier", "rotate the deploy key before Friday");
    let model = ModelServer::start_overflowing_once(
        vec![
            Step::tool(
                "bash",
                json!({"command": "echo hi", "description": "Say hi"}),
            ),
            Step::text("Noted."),
        ],
        2_000_000,
    );
    let cmd = agents::opencode(&opencode, &edge, &model, "What is on the list?");
    agents::run_timeboxed(
        cmd,
        &edge.root.path().join("runs/compacted"),
        SESSION_TIMEOUT,
    )
    .assert_success();
    let requests = model.requests();
    let compaction = requests
        .iter()
        .position(|r| !r.offers_tools() && r.text().contains("Here is the conversation so far"))
        .unwrap_or_else(|| panic!("OpenCode compacted: {} requests", requests.len()));
    let after = requests[compaction + 1..]
        .iter()
        .find(|r| r.offers_tools())
        .expect("the session went on after the compaction");
    let text = after.text();
    assert!(
        text.contains("# SOLARIA memory") && text.contains("rotate the deploy key"),
        "the request after the compaction has the memory: {text}"
    );
}
