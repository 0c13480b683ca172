//! `<private>…</private>` spans: text the user marked as never leaving this
//! machine. It is stored and searchable locally and stripped from everything sent out.
//!
//! Rules, all fail-safe (when in doubt, strip more):
//! - tags are case-insensitive, may carry whitespace or attributes (`<private reason="x">`,
//!   `</private >`), and a span may cover many lines;
//! - nested spans strip to the outermost close;
//! - an opening tag that is never closed strips to the end of the text;
//! - a closing tag with no opening tag before it strips everything before it, from the
//!   start of the text: it is the end of a span whose opening was lost (say, cut away
//!   by a size bound), so what precedes it may be private.
//!
//! Code that keeps only part of a text (a head and a tail) cuts with [`cut_middle`],
//! which closes the spans open at the cut and reopens them in the tail, so what is kept
//! of a span stays inside one.
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
        } else {
            // A stray close: its opening is lost, so everything before it goes.
            spans.clear();
            spans.push((0, whole.end()));
        }
    }
    if depth > 0 {
        spans.push((start, text.len()));
    }
    spans
}

/// Replaces every private span of `text`, tags included, by [`PRIVATE_MARKER`].
///
/// Guarantees: no character between an opening tag and its matching close (or the end
/// of the text, when the tag is never closed) is in the result, nor any character
/// before a closing tag that has no opening tag; text outside the spans is unchanged;
/// the result is [`Cow::Borrowed`] when there is no tag at all.
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
/// it: any opening or closing tag.
pub fn has_private(text: &str) -> bool {
    TAG.is_match(text)
}

/// The most spans [`cut_middle`] closes or reopens at a cut. Deeper nesting is left
/// unbalanced, which strips more, never less.
const MAX_CUT_DEPTH: usize = 8;

/// What [`cut_middle`] keeps of a text: a head and a tail, each balanced on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut<'a> {
    /// The text before the cut, with a closing tag for each span still open there.
    pub head: Cow<'a, str>,
    /// The text after the cut, with an opening tag for each span open there.
    pub tail: Cow<'a, str>,
    /// How many bytes of `text` are in neither.
    pub omitted: usize,
}

/// Keeps `text[..head_end]` and `text[tail_start..]` so that no kept private text
/// leaves its span: a span open at `head_end` is closed at the end of the head, and
/// one open at `tail_start` is reopened at the start of the tail. A tag that the cuts
/// would split is left out of the head or kept whole in the tail. Out-of-range or
/// mid-character positions are moved to the nearest character boundary inside the
/// text; `tail_start` is never before `head_end`.
///
/// Guarantees: [`strip_private`] of `head`, and of `tail`, removes every character
/// that it removes from `text` (and perhaps more).
pub fn cut_middle(text: &str, head_end: usize, tail_start: usize) -> Cut<'_> {
    let mut head_end = floor_boundary(text, head_end.min(text.len()));
    let mut tail_start = ceil_boundary(text, tail_start.clamp(head_end, text.len()));
    let (mut head_depth, mut tail_depth) = (0usize, 0usize);
    for tag in TAG.captures_iter(text) {
        let Some(whole) = tag.get(0) else { continue };
        if whole.start() >= tail_start {
            break;
        }
        let step = |depth: usize| match tag.name("close") {
            None => depth + 1,
            Some(_) => depth.saturating_sub(1),
        };
        if whole.end() <= head_end {
            head_depth = step(head_depth);
        } else if whole.start() < head_end {
            head_end = whole.start();
        }
        tail_start = tail_start.max(whole.end());
        tail_depth = step(tail_depth);
    }
    let head = &text[..head_end];
    let tail = &text[tail_start..];
    let head = match head_depth.min(MAX_CUT_DEPTH) {
        0 => Cow::Borrowed(head),
        n => Cow::Owned(format!("{head}{}", "</private>".repeat(n))),
    };
    let tail = match tail_depth.min(MAX_CUT_DEPTH) {
        0 => Cow::Borrowed(tail),
        n => Cow::Owned(format!("{}{tail}", "<private>".repeat(n))),
    };
    Cut {
        head,
        tail,
        omitted: tail_start - head_end,
    }
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
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

/// Keeps the head (two thirds) and tail (one third) of `text` within about `max`
/// bytes, with a marker saying how much was left out. The cut respects `<private>`
/// spans ([`cut_middle`]): a span open at either side of the
/// cut is closed in the head and reopened in the tail, so no kept private text ends
/// up outside a span.
pub fn bound_text(text: &str, max: usize) -> (String, Option<usize>) {
    if text.len() <= max {
        return (text.to_string(), None);
    }
    let cut = cut_middle(text, max * 2 / 3, text.len() - max / 3);
    let out = format!(
        "{}\n[… {} bytes omitted …]\n{}",
        cut.head, cut.omitted, cut.tail
    );
    (out, Some(cut.omitted))
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
    fn a_stray_close_strips_everything_before_it() {
        // Its opening tag was lost (cut away, say): what precedes it may be private.
        assert_eq!(stripped("secret words</private> after"), "[PRIVATE] after");
        assert!(has_private("nothing </private> here"));
        assert_eq!(
            stripped("a </private> b <private>c</private> d"),
            "[PRIVATE] b [PRIVATE] d"
        );
        // After a balanced span: the earlier span and the text between go too.
        assert_eq!(
            stripped("a <private>b</private> c</private> d"),
            "[PRIVATE] d"
        );
        assert_eq!(
            stripped("a <private>b</private></private> c"),
            "[PRIVATE] c"
        );
        // In JSON text too, where a line break is an escape.
        assert_eq!(stripped(r"x\n</PRIVATE >\ny"), r"[PRIVATE]\ny");
    }

    #[test]
    fn similar_tags_are_not_private() {
        let text = "<privateKey>x</privateKey> <priv>y</priv> <privately>";
        assert!(matches!(strip_private(text), Cow::Borrowed(_)));
    }

    #[test]
    fn has_private_sees_every_tag() {
        assert!(has_private("x <private>y</private>"));
        assert!(has_private("x <PRIVATE>unclosed"));
        assert!(has_private("x </private> stray"));
        assert!(!has_private("x private y"));
    }

    /// The head and tail joined the way a size bound joins them.
    fn joined(cut: &Cut<'_>) -> String {
        format!(
            "{}\n[… {} bytes omitted …]\n{}",
            cut.head, cut.omitted, cut.tail
        )
    }

    #[test]
    fn a_cut_inside_a_span_closes_it_and_reopens_it() {
        let text = "open <private>alpha beta gamma delta</private> close";
        let at = text.find("beta").expect("beta");
        let tail = text.find("delta").expect("delta");
        let cut = cut_middle(text, at, tail);
        assert_eq!(cut.head, "open <private>alpha </private>");
        assert_eq!(cut.tail, "<private>delta</private> close");
        assert_eq!(cut.omitted, tail - at);
        let out = stripped(&joined(&cut));
        assert!(!out.contains("alpha") && !out.contains("delta"), "{out}");
        assert!(out.starts_with("open [PRIVATE]") && out.ends_with("[PRIVATE] close"));
    }

    #[test]
    fn a_span_opened_in_the_dropped_middle_stays_private_in_the_tail() {
        let text = format!(
            "{} <private>{} card 4111 pin 8642</private> thanks",
            "head ".repeat(20),
            "x".repeat(500)
        );
        let cut = cut_middle(&text, 50, text.len() - 40);
        assert!(
            matches!(cut.head, Cow::Borrowed(_)),
            "no span open in the head"
        );
        assert!(cut.tail.starts_with("<private>"), "{}", cut.tail);
        let out = stripped(&joined(&cut));
        assert!(!out.contains("8642") && !out.contains("4111"), "{out}");
        assert!(out.ends_with("[PRIVATE] thanks"), "{out}");
    }

    #[test]
    fn a_cut_never_splits_a_tag() {
        let text = "aaaa <private>secret</private> bbbb";
        // Through the opening tag: it leaves the head and is kept whole in the tail.
        let cut = cut_middle(text, 8, 9);
        assert_eq!(cut.head, "aaaa ");
        assert_eq!(cut.tail, "<private>secret</private> bbbb");
        // Through the closing tag: the head closes the span, the tail starts after.
        let close = text.find("</private>").expect("close");
        let cut = cut_middle(text, close + 3, close + 4);
        assert_eq!(cut.head, "aaaa <private>secret</private>");
        assert_eq!(cut.tail, " bbbb");
        assert_eq!(
            stripped(&joined(&cut)),
            "aaaa [PRIVATE]\n[… 10 bytes omitted …]\n bbbb"
        );
    }

    #[test]
    fn nested_spans_are_closed_and_reopened_to_their_depth() {
        let text = "a <private>b <private>c d e</private> f</private> g";
        let c = text.find('c').expect("c");
        let e = text.find("e</").expect("e");
        let cut = cut_middle(text, c + 1, e);
        assert_eq!(cut.head, "a <private>b <private>c</private></private>");
        assert_eq!(cut.tail, "<private><private>e</private> f</private> g");
        assert_eq!(stripped(&cut.tail), "[PRIVATE] g");
    }

    #[test]
    fn cuts_outside_spans_borrow_and_odd_positions_are_clamped() {
        let text = "añb <private>x</private> ✓✓";
        let cut = cut_middle(text, 2, 1);
        assert_eq!((cut.head.as_ref(), cut.omitted), ("a", 0));
        assert!(matches!(cut.tail, Cow::Borrowed(_)));
        assert_eq!(format!("{}{}", cut.head, cut.tail), text);
        let cut = cut_middle(text, 1_000, 2_000);
        assert_eq!((cut.head.as_ref(), cut.tail.as_ref()), (text, ""));
        let end = text.len() - 4;
        let cut = cut_middle(text, 0, end);
        assert_eq!(cut.tail, "✓");
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
