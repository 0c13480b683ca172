//! The SOLARIA Memory edge agent: captures what a coding agent does into a local
//! SQLite store and serves it back (context at session start, search, timelines),
//! offline and in milliseconds. The `solaria` binary (its command line, `cli/`,
//! declared only in `main.rs`) is a thin surface over this.
//!
//! Layers, top to bottom (docs/ARCHITECTURE.md, checked by `tests/layers.rs`): the
//! surfaces (`cli` in the binary, `mcp`, `http`, `daemon`, `relay`, `capture`,
//! `install`) → the operations (`ops`, and `app`, the runtime context they are
//! handed) → the services (`present`, `context`, `sync`, `semantic`, `distill`) →
//! `store` → the foundation (`config`, `project`, …) → the crates `solaria_hook`
//! and `solaria_shared`.

pub mod api_proof;
pub mod app;
pub mod capture;
pub mod config;
pub mod context;
pub mod daemon;
pub mod distill;
pub mod gitdir;
pub mod http;
pub use solaria_install as install;
pub mod mcp;
pub mod models;
pub mod ops;
pub mod present;
pub mod project;
pub mod relay;
pub mod semantic;
pub mod service;
pub use solaria_store as store;
pub mod sync;
pub mod timefmt;
