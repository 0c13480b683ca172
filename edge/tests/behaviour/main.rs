//! The edge's behaviour tests as one test binary, driven through the real `solaria`
//! binary on throwaway machines (`common`). One binary is linked once instead of once
//! per file; `cargo test -p solaria-edge --test behaviour -- search::` runs one module.

mod common;

mod capture;
mod concurrency;
mod install;
mod retention;
mod search;
mod secrets;
