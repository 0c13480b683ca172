//! `<private>…</private>` spans (SPEC §6): text the user marked as never leaving this
//! machine. It is stored and searchable locally and stripped from everything sent out.
//!
//! Rules, all fail-safe (when in doubt, strip more):
//! - tags are case-insensitive, may carry whitespace or attributes (`<private reason="x">`,
//!   `</private >`), and a span may cover many lines;
//! - nested spans strip to the outermost close;
//! - an opening tag that is never closed strips to the end of the text;
//! - a closing tag with no opening tag before it is plain text and stays.
//!
//! Strip plain text with [`strip_private`] and JSON documents with
//! [`strip_private_json`] on the parsed value: serde_json does not escape `<`, so the
//! tags do appear in JSON text, but an unclosed tag there would eat the rest of the
//! document.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// What a private span (tags included) is replaced by.
pub const PRIVATE_MARKER: &str = "[PRIVATE]";

/// An opening (`<private>`) or closing (`</private>`) tag; group `close` is set on the
/// closing one.
static TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<\s*(?P<close>/)?\s*private(?:\s[^<>]*)?>")
        .expect("private tag regex compiles")
});

/// Byte ranges of the spans to strip, in order and disjoint.
fn spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for tag in TAG.captures_iter(text) {
        let Some(whole) = tag.get(0) else { continue };
        if tag.name("close").is_none() {
            if depth == 0 {
                start = whole.start();
            }
            depth += 1;
        } else if depth > 0 {
            depth -= 1;
            if depth == 0 {
                spans.push((start, whole.end()));
            }
        }
        // A closing tag at depth 0 is stray: it stays as text.
    }
    if depth > 0 {
        spans.push((start, text.len()));
    }
    spans
}

/// Replaces every private span of `text`, tags included, by [`PRIVATE_MARKER`].
///
/// Guarantees: no character between an opening tag and its matching close (or the end
/// of the text, when the tag is never closed) is in the result; text outside the
/// spans is unchanged; the result is [`Cow::Borrowed`] when there is no opening tag.
pub fn strip_private(text: &str) -> Cow<'_, str> {
    let spans = spans(text);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end) in spans {
        out.push_str(&text[last..start]);
        out.push_str(PRIVATE_MARKER);
        last = end;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// Whether `text` holds a private span, that is whether [`strip_private`] would change
/// it (a stray closing tag alone does not count).
pub fn has_private(text: &str) -> bool {
    TAG.captures_iter(text)
        .any(|tag| tag.name("close").is_none())
}

/// Applies [`strip_private`] to every string value inside `value`, at any depth.
/// Object keys are left as they are.
pub fn strip_private_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => {
            if let Cow::Owned(stripped) = strip_private(s) {
                *s = stripped;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_private_json),
        serde_json::Value::Object(map) => map.values_mut().for_each(strip_private_json),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stripped(text: &str) -> String {
        strip_private(text).into_owned()
    }

    #[test]
    fn text_without_tags_is_borrowed() {
        let text = "fn main() { let a = b < c && d > e; } // <privacy> <privateer>";
        assert!(matches!(strip_private(text), Cow::Borrowed(_)));
        assert!(!has_private(text));
    }

    #[test]
    fn one_span_is_replaced_with_its_tags() {
        assert_eq!(
            stripped("user is <private>alice@example.com</private>, ok"),
            "user is [PRIVATE], ok"
        );
    }

    #[test]
    fn several_spans_are_each_replaced() {
        assert_eq!(
            stripped("a <private>x</private> b <private>y</private> c"),
            "a [PRIVATE] b [PRIVATE] c"
        );
    }

    #[test]
    fn tags_are_case_insensitive() {
        assert_eq!(stripped("a <PRIVATE>x</Private> b"), "a [PRIVATE] b");
        assert_eq!(stripped("a <Private>x</PRIVATE> b"), "a [PRIVATE] b");
    }

    #[test]
    fn tags_may_carry_whitespace_and_attributes() {
        assert_eq!(
            stripped("a <private reason=\"pii\">x</private > b"),
            "a [PRIVATE] b"
        );
        assert_eq!(stripped("a < private>x< / private> b"), "a [PRIVATE] b");
    }

    #[test]
    fn spans_may_cover_many_lines() {
        let text = "before\n<private>\nline one\nline two\n</private>\nafter";
        assert_eq!(stripped(text), "before\n[PRIVATE]\nafter");
    }

    #[test]
    fn nested_spans_strip_to_the_outermost_close() {
        let text = "a <private>x <private>y</private> z</private> b";
        assert_eq!(stripped(text), "a [PRIVATE] b");
    }

    #[test]
    fn unclosed_tag_strips_to_the_end() {
        assert_eq!(
            stripped("keep <private>secret\nmore secret"),
            "keep [PRIVATE]"
        );
        // Nested and only the inner one closed: still unclosed.
        assert_eq!(
            stripped("keep <private>a <private>b</private> c"),
            "keep [PRIVATE]"
        );
    }

    #[test]
    fn stray_close_is_left_as_text() {
        let text = "nothing </private> here";
        assert!(matches!(strip_private(text), Cow::Borrowed(_)));
        assert!(!has_private(text));
        assert_eq!(
            stripped("a </private> b <private>c</private> d"),
            "a </private> b [PRIVATE] d"
        );
        assert_eq!(
            stripped("a <private>b</private></private> c"),
            "a [PRIVATE]</private> c"
        );
    }

    #[test]
    fn similar_tags_are_not_private() {
        let text = "<privateKey>x</privateKey> <priv>y</priv> <privately>";
        assert!(matches!(strip_private(text), Cow::Borrowed(_)));
    }

    #[test]
    fn has_private_sees_opening_tags() {
        assert!(has_private("x <private>y</private>"));
        assert!(has_private("x <PRIVATE>unclosed"));
        assert!(!has_private("x private y"));
    }

    #[test]
    fn non_ascii_text_around_spans_is_kept() {
        assert_eq!(
            stripped("añadir <private>contraseña</private> ✓"),
            "añadir [PRIVATE] ✓"
        );
    }

    #[test]
    fn json_strings_are_stripped_at_any_depth_and_keys_kept() {
        let mut value = json!({
            "prompt": "deploy with <private>my home address</private> please",
            "nested": {"list": ["a", "<private>b", {"<private>key": "c <private>d</private>"}]},
            "n": 3,
            "flag": true,
        });
        strip_private_json(&mut value);
        assert_eq!(
            value,
            json!({
                "prompt": "deploy with [PRIVATE] please",
                "nested": {"list": ["a", "[PRIVATE]", {"<private>key": "c [PRIVATE]"}]},
                "n": 3,
                "flag": true,
            })
        );
    }
}
