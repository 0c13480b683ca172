//! The optional model summarizer and distiller: a program or the Anthropic API
//! rewrites a closed session's summary and proposes decisions and memories from
//! it, which are stored unconfirmed. Its parts: what is sent (`prompt`), what is
//! accepted back (`answer`) and how it is called (`runner`); what it spent and
//! tried is the store's (`store::distill`). The pass that uses them runs in the daemon (`ops::distill`),
//! never in a hook; on any failure the deterministic summary (`solaria_shared::summary`)
//! stays.

pub mod answer;
pub mod prompt;
pub mod runner;
