//! The daemon's end of hooks handed over a private Unix socket, so that a hook
//! costs a small process and a socket round trip instead of the `solaria` binary's
//! start and a store open (docs/DESIGN.md, "Hooks through the daemon").
//!
//! `solaria-hook` (crate `solaria-hook`: the client, the protocol and the spool)
//! reads the agent's payload and sends it to `<data dir>/hooks.sock`, where the
//! daemon (`server.rs`) captures it through the same code a `solaria hook` process
//! runs (`crate::capture`) into a store it keeps open, and answers what the hook
//! prints. When no daemon listens, the client hands the payload to `solaria hook`
//! beside it: the event is captured either way.
//!
//! The socket lives in the data dir (0700) and is itself 0600: only the user who
//! owns the memory can connect, which a loopback port could not promise.

mod capturer;
pub mod server;
