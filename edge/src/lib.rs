//! The SOLARIA Memory edge agent: captures what a coding agent does into a local
//! SQLite store and serves it back (context at session start, search, timelines),
//! offline and in milliseconds. The `solaria` binary (its command line, `cli/`,
//! declared only in `main.rs`) is a thin surface over this.
//!
//! Layers, top to bottom (docs/ARCHITECTURE.md, checked by `tests/layers.rs`): the
//! surfaces (`mcp`, `http`, `daemon`, `relay`, `capture`, `service`) → the
//! operations (`ops`, and `app`, the runtime context they are handed) → the
//! services (`present`, `context`, `sync`, `semantic`, `distill`) → the foundation
//! (`config`, `project`, …). Below the library are its own crates, named here as
//! modules: `store` (`solaria_store`, all of the SQL) and `install`
//! (`solaria_install`, the agents' installers); then `solaria_hook` and
//! `solaria_shared`.

pub mod api_proof;
pub mod app;
pub mod capture;
pub mod config;
pub mod context;
pub mod daemon;
pub mod distill;
pub mod gitdir;
pub mod http;
pub mod mcp;
pub mod models;
pub mod ops;
pub mod present;
pub mod project;
pub mod relay;
pub mod semantic;
pub mod service;
pub mod sync;
pub mod timefmt;

// The crates below the library, under the names every layer uses for them.
pub use solaria_install as install;
pub use solaria_store as store;
