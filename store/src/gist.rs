//! What a record is embedded from. A sentence model reads only its first ~128
//! tokens (a few hundred characters of log text), so a long tool output is
//! represented by the lines that say what happened — errors, failures, the
//! outcome at its end — instead of by its opening lines, which in a test run, a
//! build or a log are the same for every run.

use super::text::readable;
use crate::source::Source;

/// The version of the rules below, kept with the vectors (`vector_text_recipe`):
/// when it changes, the observations are embedded again
/// (`vectors::requeue_for_recipe`). 1 was the head of each field, JSON as stored.
pub const RECIPE: u32 = 2;
/// A response up to this long (bytes) is embedded whole, as it comes.
const SHORT_RESPONSE: usize = 600;
/// Of a long response's record, the input kept (the command, a path).
const LONG_INPUT: usize = 300;
/// The telling lines kept from a long response (about what the model reads).
const TELLING_BUDGET: usize = 480;
/// The end of a long response kept after them: most commands end with their outcome.
const TAIL_BUDGET: usize = 240;
/// A single line is cut here (a minified bundle or a JSON blob is one line).
const LINE_CHARS: usize = 200;

/// Words (lowercase) that make a line of output tell what went wrong.
const STRONG: &[&str] = &[
    "error",
    "fail",
    "panic",
    "exception",
    "traceback",
    "fatal",
    "killed",
    "oom",
    "denied",
    "refused",
    "timeout",
    "timed out",
    "deadlock",
    "critical",
    "abort",
    "segfault",
    "unhandled",
    "assert",
    "caused by",
    "crash",
];

/// Words that make a line worth keeping when the strong ones leave room.
const WEAK: &[&str] = &[
    "warn",
    "deprecat",
    "replace",
    "destroy",
    "rollback",
    "rolled back",
    "exceed",
    "expected",
    "not found",
    "conflict",
    "retry",
    "skipp",
    "limit",
];

/// The SQL selecting a record's three parts, in the order [`text`] takes them.
pub(super) fn parts_sql(source: Source) -> &'static str {
    match source {
        // The response is read up to what capture keeps (24 KiB by default) and a
        // little more, so a record synced from a looser machine is still bounded.
        Source::Observations => "title, substr(input, 1, 600), substr(response, 1, 32768)",
        Source::Summaries => "'', substr(text, 1, 1200), substr(key_points, 1, 400)",
        // The derived search text holds the kind's fields (a decision's chosen
        // option and rationale, a memory's text).
        Source::Knowledge => "title, substr(text, 1, 1200), ''",
    }
}

/// The text `source`'s record is embedded from, given its parts as
/// [`parts_sql`] reads them.
pub fn text(source: Source, title: &str, first: &str, second: &str) -> String {
    match source {
        Source::Observations => observation(title, first, second),
        Source::Summaries => format!("{first}\n{second}"),
        Source::Knowledge => format!("{title}\n{first}"),
    }
}

/// A tool call: its title and input, then its response whole when short, or its
/// telling lines and end when long; input and response as a person reads them
/// (`text::readable`: the strings of the agent's JSON, not its quotes and escapes).
pub fn observation(title: &str, input: &str, response: &str) -> String {
    let (input, response) = (readable(input), readable(response));
    let (input, response) = (input.as_ref(), response.as_ref());
    if response.len() <= SHORT_RESPONSE {
        return format!("{title}\n{}\n{response}", cut(input, SHORT_RESPONSE));
    }
    let lines: Vec<&str> = response
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let telling = telling_lines(&lines);
    let last_telling = telling.last().copied();
    let mut text = format!("{title}\n{}", cut(input, LONG_INPUT));
    for &i in &telling {
        text.push('\n');
        text.push_str(cut(lines[i], LINE_CHARS));
    }
    // The end, after the last telling line (so nothing is said twice).
    let tail_from = last_telling.map_or(0, |i| i + 1);
    let mut tail: Vec<&str> = Vec::new();
    let mut used = 0;
    for line in lines[tail_from..].iter().rev() {
        let line = cut(line, LINE_CHARS);
        if used + line.len() > TAIL_BUDGET && !tail.is_empty() {
            break;
        }
        used += line.len() + 1;
        tail.push(line);
    }
    if tail_from > 0 && !tail.is_empty() && tail.len() < lines.len() - tail_from {
        text.push_str("\n…");
    }
    for line in tail.iter().rev() {
        text.push('\n');
        text.push_str(line);
    }
    text
}

/// Indices (in order) of the lines that tell what happened: lines with a strong
/// word first, then with a weak one, within [`TELLING_BUDGET`]; a line repeated
/// (the same warning a hundred times) counts once.
fn telling_lines(lines: &[&str]) -> Vec<usize> {
    let mut seen = std::collections::HashSet::new();
    let mut strong = Vec::new();
    let mut weak = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let lower = line.to_lowercase();
        let tier = if STRONG.iter().any(|w| lower.contains(w)) {
            &mut strong
        } else if WEAK.iter().any(|w| lower.contains(w)) {
            &mut weak
        } else {
            continue;
        };
        // Digits differ between repeats of one message (line numbers, times).
        let shape: String = lower.chars().filter(|c| !c.is_ascii_digit()).collect();
        if seen.insert(shape) {
            tier.push(i);
        }
    }
    let mut kept = Vec::new();
    let mut used = 0;
    for i in strong.into_iter().chain(weak) {
        let len = cut(lines[i], LINE_CHARS).len() + 1;
        if used + len > TELLING_BUDGET {
            continue;
        }
        used += len;
        kept.push(i);
    }
    kept.sort_unstable();
    kept
}

/// `s` cut to at most `max` bytes, at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cargo_test_run(failing: bool) -> String {
        let mut out = String::from("running 64 tests\n");
        for i in 0..63 {
            out.push_str(&format!("test invoices::tests::case_{i} ... ok\n"));
        }
        if failing {
            out.push_str("test refunds::tests::total_is_rounded_once ... FAILED\n\nfailures:\n\n");
            out.push_str("---- refunds::tests::total_is_rounded_once stdout ----\n");
            out.push_str(
                "thread 'refunds::tests::total_is_rounded_once' panicked at src/refunds.rs:88:9:\n",
            );
            out.push_str("assertion `left == right` failed\n  left: 1999\n right: 2000\n\n");
            out.push_str("test result: FAILED. 63 passed; 1 failed; 0 ignored\n");
        } else {
            out.push_str("test refunds::tests::total_is_rounded_once ... ok\n\n");
            out.push_str("test result: ok. 64 passed; 0 failed; 0 ignored\n");
        }
        out
    }

    #[test]
    fn a_short_response_is_embedded_whole() {
        assert_eq!(
            observation("Bash: ls", "ls", "Cargo.toml\nsrc"),
            "Bash: ls\nls\nCargo.toml\nsrc"
        );
    }

    #[test]
    fn a_long_test_run_is_embedded_by_its_failure_not_its_passing_tests() {
        let text = observation("Bash: cargo test", "cargo test", &cargo_test_run(true));
        assert!(text.starts_with("Bash: cargo test\ncargo test\n"), "{text}");
        assert!(text.contains("panicked at src/refunds.rs:88:9"), "{text}");
        assert!(text.contains("total_is_rounded_once ... FAILED"), "{text}");
        assert!(text.contains("test result: FAILED. 63 passed"), "{text}");
        assert!(!text.contains("case_3 ... ok"), "{text}");
        assert!(text.len() < 1200, "{} bytes", text.len());
    }

    #[test]
    fn a_long_output_with_nothing_telling_is_embedded_by_its_end() {
        let text = observation("Bash: cargo test", "cargo test", &cargo_test_run(false));
        assert!(
            text.ends_with("test result: ok. 64 passed; 0 failed; 0 ignored"),
            "{text}"
        );
        assert!(!text.contains("case_0 ..."), "{text}");
    }

    #[test]
    fn a_warning_repeated_a_hundred_times_is_kept_once_and_errors_come_first() {
        let mut out = String::new();
        for i in 0..100 {
            out.push_str(&format!("warning: unused variable `x` at src/lib.rs:{i}\n"));
        }
        out.push_str("error[E0502]: cannot borrow `ledger` as mutable\n");
        out.push_str("error: could not compile `billing`\n");
        let text = observation("Bash: cargo build", "cargo build", &out);
        assert_eq!(text.matches("unused variable").count(), 1, "{text}");
        assert!(text.contains("error[E0502]"), "{text}");
    }

    #[test]
    fn lines_and_inputs_are_cut_at_character_boundaries() {
        let long_line = "é".repeat(2000);
        let text = observation("Read a", &"ñ".repeat(400), &long_line);
        assert!(text.len() < 1000);
        assert!(text.contains('é'));
    }

    #[test]
    fn a_tool_call_is_embedded_from_what_its_json_says() {
        let response = serde_json::json!({"stdout": cargo_test_run(true), "stderr": ""});
        let text = observation(
            "Bash: cargo test",
            r#"{"command":"cargo test","description":"Run the tests"}"#,
            &response.to_string(),
        );
        assert!(
            text.starts_with("Bash: cargo test\ncargo test\nRun the tests\n"),
            "{text}"
        );
        assert!(
            text.contains("\nthread 'refunds::tests::total_is_rounded_once' panicked"),
            "{text}"
        );
        assert!(!text.contains("\\n") && !text.contains("stdout"), "{text}");
    }

    #[test]
    fn summaries_and_knowledge_keep_their_fields() {
        assert_eq!(text(Source::Summaries, "", "did x", "- a"), "did x\n- a");
        assert_eq!(
            text(Source::Knowledge, "Use WAL", "because", ""),
            "Use WAL\nbecause"
        );
    }
}
