//! What a test does when something it needs from outside the workspace is missing
//! (node, an embedding model, a real agent, the static hook client): on a
//! developer's machine it says so and goes on without it (skipped, or a stand-in);
//! in CI (`CI` set, as CI services set it) it fails, saying what to install, since
//! a suite that passes by skipping proves nothing there. The one place this rule
//! is decided.

/// Whether this run is CI: `CI` set to anything but the empty string.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// `what` is missing and `install` says how to get it. In CI the test fails with
/// both; elsewhere both are printed with `instead` (what the test does without it:
/// "skipped", "testing this build's solaria-hook instead") and the caller goes on
/// to do that.
pub fn missing(what: &str, install: &str, instead: &str) {
    assert!(
        !in_ci(),
        "{what}, and CI must run every test: {install} (deploy/test.sh sets up the whole suite)"
    );
    eprintln!("{what}: {instead} ({install})");
}

/// [`missing`] for a test that cannot run without `what`: `None`, for the test to
/// return early, on a developer's machine; a failure in CI.
pub fn skip<T>(what: &str, install: &str) -> Option<T> {
    missing(what, install, "skipped");
    None
}
