//! How a stored field reads as text. Tool inputs and responses are kept as the
//! JSON the agent sent (`{"stdout":"running 3 tests\nwarning: …"}`), where a line
//! break is the two characters `\n`: read as they are, the break glues the next
//! line's first word to an `n` (`nwarning`), so no search by words, identifier
//! pair or vector would see that word.
//!
//! The full-text row (the view `observations_searched`,
//! `store/migrations/0012_json_strings_only.sql`) and the central service's search
//! column (`solaria_searchable`, `migrations/central/0006_json_strings_only.sql`)
//! read JSON the same way in SQL — [`readable`]'s strings and numbers, else
//! [`breaks_as_spaces`] — keep the three in step.

use std::borrow::Cow;

/// The escapes that stand for whitespace in JSON text.
const BREAKS: [&str; 3] = ["\\n", "\\t", "\\r"];

/// `text` with JSON's escaped line breaks and tabs (`\n`, `\t`, `\r`) read as
/// spaces. An escaped backslash before an `n` (`C:\\new`) loses its `n` to a
/// space too: rare, and only a word split, never a word glued.
pub fn breaks_as_spaces(text: &str) -> Cow<'_, str> {
    if !text.contains('\\') {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for escape in BREAKS {
        out = out.replace(escape, " ");
    }
    Cow::Owned(out)
}

/// What a person would read in `text`: the strings and numbers of a JSON object
/// or array, one per line, in order (keys, quotes and braces dropped); a JSON text
/// cut short by capture's size bound, with its escapes undone; any other text as
/// it is.
pub fn readable(text: &str) -> Cow<'_, str> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return Cow::Borrowed(text);
    }
    match serde_json::from_str::<serde_json::Value>(trimmed) {
        Ok(value) => {
            let mut out = String::with_capacity(text.len());
            leaves(&value, &mut out);
            Cow::Owned(out)
        }
        Err(_) => Cow::Owned(
            trimmed
                .replace("\\n", "\n")
                .replace("\\t", " ")
                .replace("\\r", "")
                .replace("\\\"", "\""),
        ),
    }
}

fn leaves(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::String(s) => push_line(out, s),
        Value::Number(n) => push_line(out, &n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
        Value::Bool(_) | Value::Null => {}
    }
}

fn push_line(out: &mut String, line: &str) {
    if line.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASH: &str = r#"{"stdout":"running 3 tests\nwarning: unused\n\terror[E0502]: x","stderr":"","interrupted":false}"#;

    #[test]
    fn escaped_breaks_separate_words_instead_of_gluing_an_n() {
        let text = breaks_as_spaces(BASH);
        assert!(text.contains(" warning: unused "), "{text}");
        assert!(text.contains(" error[E0502]"), "{text}");
        assert!(!text.contains("nwarning"), "{text}");
        assert!(matches!(breaks_as_spaces("plain words"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_reads_as_its_strings_and_numbers_line_by_line() {
        assert_eq!(
            readable(BASH),
            "running 3 tests\nwarning: unused\n\terror[E0502]: x"
        );
        assert_eq!(
            readable(r#"{"command":"cargo test","timeout":120000,"run_in_background":false}"#),
            "cargo test\n120000"
        );
        assert_eq!(readable(r#"["a.rs","b.rs"]"#), "a.rs\nb.rs");
    }

    #[test]
    fn a_cut_json_text_and_plain_text_still_read() {
        let cut = &BASH[..40];
        let text = readable(cut);
        assert!(text.contains("running 3 tests\nwarning"), "{text}");
        assert_eq!(readable("fix the login \\n bug"), "fix the login \\n bug");
        assert_eq!(readable("42"), "42");
    }
}
