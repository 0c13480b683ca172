//! The SOLARIA Memory edge agent's surfaces: how agents and people reach the
//! memory of this machine. The daemon (`solaria serve`) with its local HTTP API and
//! viewer (`http`), the relay of the hooks' socket (`relay`), the capture of hook
//! events (`capture`), the MCP server (`mcp`) and the daemon's user service
//! (`service`). The `solaria` binary (its command line, `cli/`, declared only in
//! `main.rs`) sits on top.
//!
//! Each surface parses, calls an operation of the core (`solaria-core`: `ops` and
//! the services below it) and renders; the layers are drawn in docs/ARCHITECTURE.md
//! and checked by `tests/layers.rs`. The crates below are named here as modules, so
//! that a path reads the same from every surface: the core's modules, `store`
//! (`solaria-store`, all of the SQL) and `install` (`solaria-install`, the agents'
//! installers).

pub mod capture;
pub mod daemon;
pub mod http;
pub mod mcp;
pub mod relay;
pub mod service;

// The crates below the surfaces, under the names every layer uses for them.
pub use solaria_core::{
    api_proof, app, config, context, distill, gitdir, models, ops, present, project, semantic,
    sync, timefmt,
};
pub use solaria_install as install;
pub use solaria_store as store;
