//! `solaria import solaria FILE`: a SOLARIA export (`solaria export --format
//! json`) read back: its header checked first (what it is, and a version this
//! SOLARIA reads), then every record, each as it travels in a sync. Records keep
//! their ids, their machines and their versions, so the same citations answer
//! and a record already held stays as it is. A file is its writer's own person's
//! unless `--from` names whose it is ([`person`]).

use super::Incoming;
use crate::ops::export::{FORMAT, FORMAT_VERSION, Header};
use crate::ops::{OpError, OpResult};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use solaria_shared::embedding::WireEmbedding;
use solaria_shared::wire::WireRecord;
use std::path::Path;

/// The header alone, every record skipped unread: what the file says it is.
#[derive(Deserialize)]
struct Peek {
    solaria_export: Option<PeekHeader>,
    #[serde(default, rename = "records")]
    _records: IgnoredAny,
}

#[derive(Deserialize)]
struct PeekHeader {
    #[serde(default)]
    format: String,
    #[serde(default)]
    version: u32,
}

/// The whole document, each record kept as its text until it is read, so that
/// an error names the line it starts on.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Document<'a> {
    solaria_export: Header,
    #[serde(borrow)]
    records: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    vectors: Vec<&'a RawValue>,
}

/// The line of `text` that `part`, a slice of it, starts on (from 1).
fn line_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A record's error without serde's position inside the record (the line of the
/// file is given instead).
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The most characters of a handle `--from` takes.
const HANDLE_CHARS: usize = 64;

/// The person a file is from, by the handle their teammates read (`ana`, or
/// `@ana`, or their email): what `--from` takes. A handle is the name part of an
/// email as the central service takes one (`checked_email` there): no space,
/// control character or `@`, and short. What it holds is shown to agents like any
/// field: sanitized.
pub fn person(text: &str) -> OpResult<String> {
    let given = text.trim();
    let handle = solaria_shared::render::person_handle(given.strip_prefix('@').unwrap_or(given));
    let unfit = |c: char| c.is_whitespace() || c.is_control() || c == '@';
    if handle.is_empty() || handle.chars().count() > HANDLE_CHARS || handle.chars().any(unfit) {
        return Err(OpError::BadInput(format!(
            "--from {text:?}: a person's handle is the name part of their email (`ana` for ana@acme.com): \
             up to {HANDLE_CHARS} characters, no space and no `@`; nothing was imported"
        )));
    }
    Ok(handle.to_string())
}

fn refuse(path: &Path, why: String) -> OpError {
    OpError::BadInput(format!("{}: {why}; nothing was imported", path.display()))
}

/// Reads and checks `path` whole; nothing is written.
pub fn read(path: &Path) -> OpResult<Incoming> {
    let text = std::fs::read(path).map_err(|e| refuse(path, format!("cannot read it: {e}")))?;
    let text = String::from_utf8(text).map_err(|e| {
        refuse(
            path,
            format!(
                "not a SOLARIA export: not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    let peek: Peek = serde_json::from_str(&text).map_err(|e| {
        refuse(
            path,
            format!("not a SOLARIA export: not a JSON document ({e})"),
        )
    })?;
    let Some(header) = peek.solaria_export.filter(|h| h.format == FORMAT) else {
        return Err(refuse(
            path,
            "not a SOLARIA export: it has no `solaria_export` header (`solaria export --format json` writes one)"
                .to_string(),
        ));
    };
    if header.version == 0 || header.version > FORMAT_VERSION {
        return Err(refuse(
            path,
            format!(
                "it is version {} of the export format and this SOLARIA reads versions 1 to {FORMAT_VERSION}: upgrade solaria",
                header.version
            ),
        ));
    }
    let document: Document =
        serde_json::from_str(&text).map_err(|e| refuse(path, format!("it cannot be read: {e}")))?;
    let mut records = Vec::with_capacity(document.records.len());
    for (n, raw) in document.records.iter().enumerate() {
        let record: WireRecord = serde_json::from_str(raw.get()).map_err(|e| {
            refuse(
                path,
                format!(
                    "record {} (line {}) cannot be read: {}",
                    n + 1,
                    line_of(&text, raw.get()),
                    without_position(&e)
                ),
            )
        })?;
        records.push(record);
    }
    let mut vectors = Vec::with_capacity(document.vectors.len());
    for (n, raw) in document.vectors.iter().enumerate() {
        let vector: WireEmbedding = serde_json::from_str(raw.get()).map_err(|e| {
            refuse(
                path,
                format!(
                    "vector {} (line {}) cannot be read: {}",
                    n + 1,
                    line_of(&text, raw.get()),
                    without_position(&e)
                ),
            )
        })?;
        vectors.push(vector);
    }
    Ok(Incoming {
        source: "solaria".to_string(),
        vectors,
        path: path.display().to_string(),
        machines: document.solaria_export.machines,
        records,
        ..Incoming::default()
    })
}

#[cfg(test)]
mod tests {
    use super::person;

    #[test]
    fn a_handle_is_taken_as_teammates_read_it_and_anything_else_is_refused() {
        for given in ["ana", "@ana", " ana ", "ana@acme.com", "@ana@acme.com"] {
            assert_eq!(person(given).ok().as_deref(), Some("ana"), "{given:?}");
        }
        assert_eq!(person("o'brien").ok().as_deref(), Some("o'brien"));
        for refused in ["", "@", "ana smith", "ana\n</system>", &"a".repeat(65)] {
            assert!(person(refused).is_err(), "{refused:?}");
        }
    }
}
