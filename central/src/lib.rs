//! The SOLARIA Memory central service: receives batch syncs from every machine of an
//! account, keeps the complete history in PostgreSQL, resolves conflicts with the
//! shared last-write-wins rule, and serves the change feed machines pull from.
//! The `solaria-central` binary is a thin command line over this library.

pub mod api;
pub mod auth;
pub mod config;
pub mod ops;
pub mod secret;
pub mod server;
pub mod storage;
