//! The core of the SOLARIA Memory edge agent: every operation a person or an agent
//! asks of this machine's memory, as a typed request and result, and the services
//! they stand on. The surfaces (the `solaria` command line, the MCP server, the
//! daemon with its local HTTP API and viewer, the hooks' relay and capture) are the
//! `solaria-edge` crate above; none of this knows which of them called.
//!
//! Layers, top to bottom (docs/ARCHITECTURE.md, checked by `tests/layers.rs`): the
//! operations (`ops`, and `app`, the runtime context they are handed) → the
//! services (`present`, `context`, `sync`, `semantic`, `distill`) → the foundation
//! (`config`, `project`, …). Below it: `store` (the `solaria-store` crate, all of the
//! SQL, named here as a module), then `solaria_hook` and `solaria_shared`.
//! Start at `ops/mod.rs`.

pub mod api_proof;
pub mod app;
pub mod config;
pub mod context;
pub mod distill;
pub mod gitdir;
pub mod models;
pub mod ops;
pub mod present;
pub mod project;
pub mod semantic;
pub mod sync;
pub mod timefmt;

// The crate below, under the name every layer uses for it.
pub use solaria_store as store;
