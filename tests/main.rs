//! The cross-component tests as one test binary: each module is the behaviour of one
//! area, driven through the real binaries (`solaria`, `solaria-central`), a throwaway
//! PostgreSQL and the real models. One binary links candle, sqlx and rmcp once instead of
//! once per file; `cargo test -p solaria-tests -- sync::` runs one module.

mod central_api;
mod central_erasure;
mod central_isolation;
mod central_knowledge;
mod central_mcp;
mod central_ops;
mod central_people;
mod central_pooler;
mod central_query;
mod central_replicas;
mod central_semantic;
mod central_standby;
mod central_team;
mod central_upgrade;
mod config_examples;
mod edge_cli;
mod import_claude_md;
mod import_claude_mem;
mod import_engram;
mod injection;
mod install_release;
mod isolation_property;
mod knowledge;
mod layers;
mod local_api;
mod mcp_layouts;
mod mcp_rmcp_client;
mod mcp_stdio;
mod model_offer;
mod nothing_lost;
mod pg_harness;
mod portable;
mod real_agents;
mod recall;
mod recorded_sessions;
mod relay;
mod semantic;
mod semantic_failures;
mod simulation;
mod summarizer;
mod sync;
mod sync_failures;
mod sync_hostile;
mod team;
mod team_hostile;
mod vectors_travel;
mod viewer;
