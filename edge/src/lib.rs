//! The SOLARIA Memory edge agent: captures what a coding agent does into a local
//! SQLite store and serves it back (context at session start, search, timelines),
//! offline and in milliseconds. The `solaria` binary is a thin layer over this.

pub mod capture;
pub mod claude_code;
pub mod cli;
pub mod config;
pub mod context;
pub mod fsutil;
pub mod http;
pub mod mcp;
pub mod models;
pub mod present;
pub mod project;
pub mod semantic;
pub mod service;
pub mod store;
pub mod summary;
pub mod sync;
pub mod timefmt;
