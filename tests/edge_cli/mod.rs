//! The edge on its own, through the real `solaria` binary on throwaway machines
//! (`solaria_tests::edge::Edge`, the same harness as every other edge test): hook
//! capture, commits, search, retention and forget, secrets, concurrent hooks, install,
//! and OpenCode (install, capture, doctor, the plugin under node).

mod capture;
mod commits;
mod concurrency;
mod install;
mod opencode;
mod retention;
mod search;
mod secrets;
