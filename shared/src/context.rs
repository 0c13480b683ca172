//! The context an agent is given at session start: one budget rule for the edge
//! (SessionStart) and the central service (`/memory/context`). Each side formats its
//! own lines (local or UTC times, machine labels); this decides which lines fit.

/// Share of the budget session summaries may take before observations get theirs.
pub const SUMMARY_SHARE: f64 = 0.6;

/// Heading before the session summaries.
pub const SESSIONS_HEADING: &str = "\n## Sessions\n";
/// Heading before the observations.
pub const ACTIVITY_HEADING: &str = "\n## Recent activity\n";

/// Approximate tokens of a text (about four characters per token).
pub fn estimate_tokens(text: &str) -> usize {
    tokens_for_chars(text.chars().count())
}

/// Approximate tokens of a text of `chars` characters: the one estimate both sides
/// use (search hits' `~tokens`, context budgets).
pub fn tokens_for_chars(chars: usize) -> usize {
    chars.div_ceil(4)
}

/// The assembled context and how many of each kind of line it holds (the first
/// `summaries` summary lines and `observations` observation lines given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    pub text: String,
    pub summaries: usize,
    pub observations: usize,
    /// The budget applied (raised to fit the header when the header alone is larger).
    pub budget: usize,
}

/// Appends to `header` as many summary lines as fit in [`SUMMARY_SHARE`] of what the
/// header leaves of `budget`, then as many observation lines as fit in the rest, each
/// group under its heading. Lines are taken in order (newest first) and the estimate
/// of the whole never exceeds the budget. Every line should end with a newline.
pub fn assemble(
    header: String,
    summary_lines: &[String],
    observation_lines: &[String],
    budget: usize,
) -> Assembled {
    let mut used = estimate_tokens(&header);
    let budget = budget.max(used + 1);
    let summary_budget = used + ((budget - used) as f64 * SUMMARY_SHARE) as usize;
    let take = |lines: &[String], heading: &str, limit: usize, used: &mut usize| -> usize {
        let mut n = 0;
        for line in lines {
            let heading_cost = if n == 0 { estimate_tokens(heading) } else { 0 };
            let cost = estimate_tokens(line) + heading_cost;
            if *used + cost > limit {
                break;
            }
            *used += cost;
            n += 1;
        }
        n
    };
    let summaries = take(summary_lines, SESSIONS_HEADING, summary_budget, &mut used);
    let observations = take(observation_lines, ACTIVITY_HEADING, budget, &mut used);
    let mut text = header;
    if summaries > 0 {
        text.push_str(SESSIONS_HEADING);
        summary_lines[..summaries]
            .iter()
            .for_each(|l| text.push_str(l));
    }
    if observations > 0 {
        text.push_str(ACTIVITY_HEADING);
        observation_lines[..observations]
            .iter()
            .for_each(|l| text.push_str(l));
    }
    Assembled {
        text,
        summaries,
        observations,
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
        for budget in [100, 500, 2_000, 10_000] {
            let a = assemble("# header\n".into(), &s, &o, budget);
            assert!(estimate_tokens(&a.text) <= budget, "{budget}");
            assert!(
                a.summaries > 0 && a.observations > 0,
                "{budget}: both kinds get room"
            );
        }
        let a = assemble("# header\n".into(), &s, &o, 2_000);
        assert!(estimate_tokens(&a.text) > 1_900, "uses the budget");
    }

    #[test]
    fn summaries_take_at_most_their_share() {
        let s = lines("S", 100, 200);
        let a = assemble(String::new(), &s, &[], 1_000);
        assert!(estimate_tokens(&a.text) <= (1_000.0 * SUMMARY_SHARE) as usize + 1);
        assert!(!a.text.contains(ACTIVITY_HEADING));
    }

    #[test]
    fn a_header_larger_than_the_budget_raises_it() {
        let header = "h".repeat(400);
        let a = assemble(header.clone(), &lines("S", 3, 10), &[], 10);
        assert_eq!(a.text, header);
        assert_eq!(a.budget, 101);
        assert_eq!((a.summaries, a.observations), (0, 0));
    }
}
