//! The edge on its own, through the real `solaria` binary on throwaway machines
//! (`solaria_tests::edge::Edge`, the same harness as every other edge test): hook
//! capture, commits, search, retention and forget, secrets, concurrent hooks, install.

mod capture;
mod commits;
mod concurrency;
mod install;
mod retention;
mod search;
mod secrets;
