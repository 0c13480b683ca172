//! How a record is cited in every text an agent or a person reads, on the edge and
//! on central alike: `[O#id]` an observation, `[S#id]` a session (a session summary is
//! cited by its session), and the knowledge kinds `[D#id]` decision, `[M#id]` memory,
//! `[C#sha7]` commit, `[I#id]` iteration, `[E#id]` event, `[L#id]` link. One grammar: what
//! [`Citation`]'s `Display` writes, its `FromStr` reads back.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a citation points at; its letter is the one in the brackets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CitedKind {
    Observation,
    Session,
    Decision,
    Memory,
    Commit,
    Iteration,
    Event,
    Link,
}

impl CitedKind {
    const ALL: [CitedKind; 8] = [
        CitedKind::Observation,
        CitedKind::Session,
        CitedKind::Decision,
        CitedKind::Memory,
        CitedKind::Commit,
        CitedKind::Iteration,
        CitedKind::Event,
        CitedKind::Link,
    ];

    /// The letter before `#`.
    pub fn letter(self) -> char {
        match self {
            CitedKind::Observation => 'O',
            CitedKind::Session => 'S',
            CitedKind::Decision => 'D',
            CitedKind::Memory => 'M',
            CitedKind::Commit => 'C',
            CitedKind::Iteration => 'I',
            CitedKind::Event => 'E',
            CitedKind::Link => 'L',
        }
    }

    fn from_letter(c: char) -> Option<CitedKind> {
        CitedKind::ALL
            .into_iter()
            .find(|k| k.letter() == c.to_ascii_uppercase())
    }
}

/// A citation: the kind of record and its id (a commit's full sha; it is written
/// with its first seven characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Citation {
    pub kind: CitedKind,
    pub id: String,
}

/// Characters a commit's citation shows of its sha.
const SHA_SHOWN: usize = 7;
/// The longest id a citation may carry (a UUID is 36, a sha-256 64).
const MAX_ID_CHARS: usize = 80;

impl Citation {
    /// A citation of `kind` for `id`.
    pub fn new(kind: CitedKind, id: impl fmt::Display) -> Citation {
        Citation {
            kind,
            id: id.to_string(),
        }
    }

    /// `[O#id]`.
    pub fn observation(id: impl fmt::Display) -> Citation {
        Citation::new(CitedKind::Observation, id)
    }

    /// `[S#id]`: a session, and so its summary.
    pub fn session(id: impl fmt::Display) -> Citation {
        Citation::new(CitedKind::Session, id)
    }

    /// Reads a citation as printed (`[O#…]`) or without brackets (`O#…`); a bare id
    /// is `Ok(None)`: its kind is for the store to find out.
    pub fn parse_lenient(text: &str) -> Result<Option<Citation>, ParseCitationError> {
        let t = text.trim();
        if t.starts_with('[') || t.contains('#') {
            return t.parse().map(Some);
        }
        Ok(None)
    }
}

impl fmt::Display for Citation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = match self.kind {
            CitedKind::Commit => self.id.get(..SHA_SHOWN).unwrap_or(&self.id),
            _ => &self.id,
        };
        write!(f, "[{}#{id}]", self.kind.letter())
    }
}

/// Text that is not a citation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{input}` is not a citation (expected [O#id], [S#id], [D#id], [M#id], [C#sha], [I#id], [E#id] or [L#id])"
)]
pub struct ParseCitationError {
    input: String,
}

impl FromStr for Citation {
    type Err = ParseCitationError;

    fn from_str(s: &str) -> Result<Citation, ParseCitationError> {
        let err = || ParseCitationError {
            input: s.chars().take(MAX_ID_CHARS).collect(),
        };
        let t = s.trim();
        let inner = match (t.strip_prefix('['), t.strip_suffix(']')) {
            (Some(_), Some(_)) => &t[1..t.len() - 1],
            (None, None) => t,
            _ => return Err(err()),
        };
        let (letter, id) = inner.split_once('#').ok_or_else(err)?;
        let mut letters = letter.chars();
        let kind = match (letters.next(), letters.next()) {
            (Some(c), None) => CitedKind::from_letter(c).ok_or_else(err)?,
            _ => return Err(err()),
        };
        let id = id.trim();
        let well_formed = !id.is_empty()
            && id.chars().count() <= MAX_ID_CHARS
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !well_formed {
            return Err(err());
        }
        Ok(Citation::new(kind, id))
    }
}

impl Serialize for Citation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Citation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Citation, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back() {
        for kind in CitedKind::ALL {
            let c = Citation::new(kind, "0192f3e4-5b6c-7d8e-9f00-112233445566");
            let text = c.to_string();
            assert!(text.starts_with(&format!("[{}#", kind.letter())), "{text}");
            let back: Citation = text.parse().expect("reads back");
            assert_eq!(back.kind, kind);
            if kind != CitedKind::Commit {
                assert_eq!(back, c);
            }
        }
    }

    #[test]
    fn a_commit_shows_seven_characters_of_its_sha() {
        let c = Citation::new(
            CitedKind::Commit,
            "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
        );
        assert_eq!(c.to_string(), "[C#a1b2c3d]");
    }

    #[test]
    fn brackets_are_optional_and_the_letter_case_free() {
        let c: Citation = "o#abc-1".parse().expect("lenient");
        assert_eq!(c, Citation::observation("abc-1"));
        let c: Citation = " [S#abc] ".parse().expect("spaces");
        assert_eq!(c, Citation::session("abc"));
    }

    #[test]
    fn malformed_citations_are_refused_with_the_grammar() {
        for bad in [
            "[X#abc]",
            "[O#]",
            "[O#abc",
            "O#a b",
            "[OO#abc]",
            "[O#abc;drop]",
            "#abc",
        ] {
            let e = bad.parse::<Citation>().expect_err(bad);
            assert!(e.to_string().contains("[O#id]"), "{e}");
        }
    }

    #[test]
    fn a_bare_id_has_no_kind() {
        assert_eq!(Citation::parse_lenient("abc").expect("bare"), None);
        assert_eq!(
            Citation::parse_lenient("[M#abc]").expect("cited"),
            Some(Citation::new(CitedKind::Memory, "abc"))
        );
        assert!(Citation::parse_lenient("[Q#abc]").is_err());
    }

    #[test]
    fn json_carries_the_printed_form() {
        let c = Citation::session("abc");
        assert_eq!(serde_json::to_string(&c).expect("json"), "\"[S#abc]\"");
        let back: Citation = serde_json::from_str("\"[S#abc]\"").expect("back");
        assert_eq!(back, c);
    }
}
