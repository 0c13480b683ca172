//! Everything both sides of SOLARIA Memory must agree on: ids, the hybrid logical
//! clock, the record types, secret redaction, private spans and ranking weights.
//!
//! One place decides each rule. The edge agent and the central service both call
//! into this crate instead of re-implementing a comparison or a pattern.

pub mod anchors;
pub mod citation;
pub mod context;
pub mod embedding;
pub mod envelope;
pub mod hlc;
pub mod ids;
pub mod knowledge;
pub mod mcp;
pub mod private;
pub mod ranking;
pub mod record;
pub mod redact;
pub mod render;
pub mod search_mode;
pub mod sharing;
pub mod summary;
pub mod text;
pub mod time;
pub mod wire;
pub mod words;

pub use citation::{Citation, CitedKind};
pub use envelope::{Project, RecordMeta};
pub use hlc::{Hlc, HlcClock};
pub use ids::{MachineId, ObservationId, SessionId, SummaryId};
pub use knowledge::{Knowledge, KnowledgeBody, KnowledgeId, KnowledgeKind};
pub use record::{Observation, ObservationKind, RecordType, Session, Summary};
pub use search_mode::SearchMode;
pub use time::UnixMillis;
