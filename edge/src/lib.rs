//! The SOLARIA Memory edge agent: captures what a coding agent does into a local
//! SQLite store and serves it back (context at session start, search, timelines),
//! offline and in milliseconds. The `solaria` binary (its command line, `cli/`,
//! declared only in `main.rs`) is a thin surface over this.
//!
//! Layers, top to bottom (docs/ARCHITECTURE.md): the surfaces (`cli` in the
//! binary, `mcp`, `http`, and `daemon`/`capture`/`claude_code`, which host or
//! feed them) → `ops` (typed requests and results) → `present`, `sync`,
//! `semantic`, `context` → `store` → `solaria_shared`; `app` and `config` are the
//! context every layer is handed.

pub mod api_proof;
pub mod app;
pub mod atomic_file;
pub mod capture;
pub mod claude_code;
pub mod config;
pub mod context;
pub mod daemon;
pub mod distill;
pub mod fsutil;
pub mod gitdir;
pub mod http;
pub mod mcp;
pub mod models;
pub mod opencode;
pub mod ops;
pub mod present;
pub mod project;
pub mod relay;
pub mod search_mode;
pub mod semantic;
pub mod service;
pub mod store;
pub mod summary;
pub mod sync;
pub mod timefmt;
