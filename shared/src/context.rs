//! The context an agent is given at session start: one budget rule for the edge
//! (SessionStart) and the central service (`/memory/context`): which lines fit, and
//! which knowledge records have a place. The lines themselves are worded by
//! `crate::render::context`.

use crate::knowledge::{Band, Knowledge, KnowledgeBody, MemoryType};
use crate::time::UnixMillis;

/// Heading before the decisions, principles and open questions, which come first.
pub const KNOWLEDGE_HEADING: &str = "\n## Decisions and knowledge\n";
/// Share of the budget knowledge may take before the sessions get theirs.
pub const KNOWLEDGE_SHARE: f64 = 0.5;

/// Recent sessions a context lists at most, unless configured otherwise (the
/// central service always lists this many).
pub const DEFAULT_MAX_SESSIONS: usize = 8;
/// Recent events a context weighs unless configured otherwise: it scans
/// [`SCANNED_PER_EVENT`] times as many for errors and what came after them.
pub const DEFAULT_MAX_EVENTS: usize = 40;
/// How many recent events are scanned for each event a context may list.
pub const SCANNED_PER_EVENT: usize = 5;
/// Decisions and memories a context weighs, newest first (`place_in_context`
/// says which it shows).
pub const KNOWLEDGE_WEIGHED: usize = 60;
/// Commits a context weighs, newest first.
pub const COMMITS_WEIGHED: usize = 10;

/// Claude Code keeps a hook's output up to this many characters; beyond it the
/// model is shown a 2,000-character preview instead.
pub const HOOK_OUTPUT_MAX_CHARS: usize = 10_000;
/// The most characters an injected context holds, whatever the token budget: under
/// [`HOOK_OUTPUT_MAX_CHARS`] with room for the hook's own framing.
pub const CONTEXT_MAX_CHARS: usize = 9_000;

/// Where a knowledge record goes in a session-start context: one rule for the edge
/// (SessionStart) and the central service (`/memory/context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextPlace {
    /// A decision that stands: title, choice and why.
    Decision,
    /// A principle or preference stated or strongly implied.
    Principle,
    /// A memory too unsure to hold: a question to answer.
    OpenQuestion,
    /// A memory about how to behave that an agent (or the summarizer) wrote: a
    /// proposal until a person confirms it, never shown as if a person had said it.
    Proposal,
    /// Superseded, retracted or expired: left out.
    NotStanding,
    /// Standing, but not for the context (facts, inferred memories, commits…): found
    /// by search and `why` instead.
    LeftOut,
}

/// The place of `k` in a context made at `now`.
pub fn place_in_context(k: &Knowledge, now: UnixMillis) -> ContextPlace {
    if !k.stands(now) {
        return ContextPlace::NotStanding;
    }
    match &k.body {
        KnowledgeBody::Decision(_) => ContextPlace::Decision,
        KnowledgeBody::Memory(m)
            if m.memory_type.guides_behaviour() && !k.written_by.is_person() =>
        {
            ContextPlace::Proposal
        }
        KnowledgeBody::Memory(m) => match m.confidence.band() {
            Band::OpenQuestion => ContextPlace::OpenQuestion,
            Band::Stated | Band::StronglyImplied
                if matches!(
                    m.memory_type,
                    MemoryType::Principle | MemoryType::Preference
                ) =>
            {
                ContextPlace::Principle
            }
            _ => ContextPlace::LeftOut,
        },
        _ => ContextPlace::LeftOut,
    }
}

/// Approximate tokens of a text (about four characters per token).
pub fn estimate_tokens(text: &str) -> usize {
    tokens_for_chars(text.chars().count())
}

/// Approximate tokens of a text of `chars` characters: the one estimate both sides
/// use (search hits' `~tokens`, context budgets).
pub fn tokens_for_chars(chars: usize) -> usize {
    chars.div_ceil(4)
}

/// One group of lines of a context, under its heading.
#[derive(Debug, Clone, Copy)]
pub struct Section<'a> {
    pub heading: &'a str,
    /// Best first; each ends with a newline.
    pub lines: &'a [String],
    /// The share of what is left of the budget when its turn comes that it may take
    /// (1.0: all of it).
    pub share: f64,
}

/// The sections' lines that fit, and how many of each section it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sectioned {
    /// The sections' text (headings and lines), without `around`.
    pub text: String,
    /// Lines taken, per section, in order.
    pub taken: Vec<usize>,
    /// The budget applied (raised to fit `around` when it alone is larger).
    pub budget: usize,
}

/// The sections' lines, in order: each section takes its lines while they fit in its
/// share of what the budget has left at its turn, under its heading (omitted when it
/// takes none). `around` is the text the caller puts around them (a header, the data
/// block's tags and label), paid for first: the estimate of the whole never exceeds
/// the budget, and the whole never exceeds [`CONTEXT_MAX_CHARS`] whatever the budget.
pub fn assemble_sections(around: &str, sections: &[Section<'_>], budget: usize) -> Sectioned {
    let mut used = estimate_tokens(around);
    let budget = budget.min(CONTEXT_MAX_CHARS / 4).max(used + 1);
    let mut chars = around.chars().count();
    let mut text = String::new();
    let mut taken = Vec::with_capacity(sections.len());
    for section in sections {
        let limit = used + ((budget - used) as f64 * section.share.clamp(0.0, 1.0)) as usize;
        let heading_cost = estimate_tokens(section.heading);
        let heading_chars = section.heading.chars().count();
        let mut n = 0;
        for line in section.lines {
            let (extra, extra_chars) = if n == 0 {
                (heading_cost, heading_chars)
            } else {
                (0, 0)
            };
            let cost = estimate_tokens(line) + extra;
            let line_chars = line.chars().count() + extra_chars;
            if used + cost > limit || chars + line_chars > CONTEXT_MAX_CHARS {
                break;
            }
            if n == 0 {
                text.push_str(section.heading);
            }
            text.push_str(line);
            used += cost;
            chars += line_chars;
            n += 1;
        }
        taken.push(n);
    }
    Sectioned {
        text,
        taken,
        budget,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(prefix: &str, n: usize, len: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("[{prefix}#{i}] {}\n", "x".repeat(len)))
            .collect()
    }

    #[test]
    fn fills_the_budget_without_passing_it() {
        let s = lines("S", 50, 200);
        let o = lines("O", 200, 80);
        let sections = [
            Section {
                heading: "\n## S\n",
                lines: &s,
                share: 0.6,
            },
            Section {
                heading: "\n## O\n",
                lines: &o,
                share: 1.0,
            },
        ];
        let around = "# header\n";
        for budget in [100, 500, 2_000] {
            let a = assemble_sections(around, &sections, budget);
            let whole = format!("{around}{}", a.text);
            assert!(estimate_tokens(&whole) <= budget, "{budget}");
            assert!(a.taken.iter().all(|n| *n > 0), "{budget}: both get room");
        }
        let a = assemble_sections(around, &sections, 2_000);
        assert!(
            estimate_tokens(&format!("{around}{}", a.text)) > 1_900,
            "uses the budget"
        );
    }

    #[test]
    fn sections_take_their_shares_in_order_and_never_pass_the_character_cap() {
        let k = lines("D", 100, 200);
        let s = lines("S", 100, 200);
        let e = lines("O", 100, 200);
        let sections = [
            Section {
                heading: "\n## K\n",
                lines: &k,
                share: 0.5,
            },
            Section {
                heading: "\n## S\n",
                lines: &s,
                share: 0.5,
            },
            Section {
                heading: "\n## E\n",
                lines: &e,
                share: 1.0,
            },
        ];
        let a = assemble_sections("", &sections, 2_000);
        assert!(a.taken.iter().all(|n| *n > 0), "{:?}", a.taken);
        assert!(a.taken[0] >= a.taken[1], "knowledge first: {:?}", a.taken);
        // A huge budget is still held under what Claude Code shows whole, the text
        // around the sections included.
        let around = "x".repeat(700);
        let big = assemble_sections(&around, &sections, 1_000_000);
        assert!(big.text.chars().count() + around.len() <= CONTEXT_MAX_CHARS);
        assert!(big.text.chars().count() + around.len() > CONTEXT_MAX_CHARS - 300);
        const { assert!(CONTEXT_MAX_CHARS < HOOK_OUTPUT_MAX_CHARS) };
    }

    #[test]
    fn text_around_larger_than_the_budget_raises_it() {
        let around = "h".repeat(400);
        let s = lines("S", 3, 10);
        let sections = [Section {
            heading: "\n## S\n",
            lines: &s,
            share: 1.0,
        }];
        let a = assemble_sections(&around, &sections, 10);
        assert_eq!((a.text.as_str(), a.budget, a.taken[0]), ("", 101, 0));
    }
}
