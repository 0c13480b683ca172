//! Newtype ids. Every record id is a UUIDv7 generated where the record is born, so
//! it is globally unique without coordination and sorts by creation time.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// The error for a string that is not a UUID.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{input}` is not a valid id (expected a UUID such as 0192f3e4-5b6c-7d8e-9f00-112233445566)"
)]
pub struct ParseIdError {
    pub(crate) input: String,
}

macro_rules! uuid_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            /// A fresh UUIDv7 id, ordered by creation time.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }

            /// Wraps an existing UUID (from storage or the wire).
            pub const fn from_uuid(uuid: Uuid) -> Self {
                Self(uuid)
            }

            /// The underlying UUID.
            pub const fn as_uuid(&self) -> &Uuid {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = $crate::ids::ParseIdError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s.trim())
                    .map(Self)
                    .map_err(|_| $crate::ids::ParseIdError { input: s.chars().take(80).collect() })
            }
        }
    };
}

pub(crate) use uuid_newtype;

uuid_newtype!(
    /// One machine running the edge agent; generated once, kept in the data dir.
    MachineId
);
uuid_newtype!(
    /// One agent conversation (a Claude Code session) as a record.
    SessionId
);
uuid_newtype!(
    /// One captured event: a tool call, a prompt or a note.
    ObservationId
);
uuid_newtype!(
    /// The summary of one session.
    SummaryId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_v7_and_sort_by_creation() {
        let a = ObservationId::new();
        let b = ObservationId::new();
        assert_eq!(a.as_uuid().get_version_num(), 7);
        assert!(a < b, "later ids sort after earlier ones");
    }

    #[test]
    fn parse_round_trips_and_rejects_garbage() {
        let id = SessionId::new();
        let parsed: SessionId = id.to_string().parse().expect("own display parses");
        assert_eq!(parsed, id);
        let err = "not-a-uuid"
            .parse::<SessionId>()
            .expect_err("garbage rejected");
        assert!(err.to_string().contains("not-a-uuid"));
    }
}
