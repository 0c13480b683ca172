//! The ranking weights (docs/DESIGN.md, Ranking), applied to text relevance on both sides.

use crate::time::UnixMillis;

/// Same project, written in the last 7 days.
pub const SAME_PROJECT_LAST_WEEK: f64 = 1.0;
/// Same project, written in the last 30 days.
pub const SAME_PROJECT_LAST_MONTH: f64 = 0.8;
/// Shares a tag with the query's context, any date (and same project, older).
pub const SIMILAR_TAGS: f64 = 0.6;
/// Any other project.
pub const OTHER_PROJECT: f64 = 0.4;

/// What a search is relative to: the project the user is in (if any), the tags of
/// interest and the present moment.
#[derive(Debug, Clone)]
pub struct RankContext<'a> {
    /// The current project key; `None` means "the whole memory is the scope".
    pub project: Option<&'a str>,
    pub tags: &'a [String],
    pub now: UnixMillis,
}

/// The weight of a record for this context. The best applicable rule wins: a
/// same-project record from last year still ranks like a tag match (0.6), never
/// below another project's record.
pub fn weight(ctx: &RankContext<'_>, project: &str, tags: &[String], created: UnixMillis) -> f64 {
    let same_project = ctx.project.is_none_or(|p| p == project);
    let age_days = created.days_until(ctx.now);
    let shares_tag = tags.iter().any(|t| ctx.tags.contains(t));
    if same_project && age_days < 7 {
        SAME_PROJECT_LAST_WEEK
    } else if same_project && age_days < 30 {
        SAME_PROJECT_LAST_MONTH
    } else if shares_tag || same_project {
        SIMILAR_TAGS
    } else {
        OTHER_PROJECT
    }
}

/// A superseded, retracted or expired decision or memory: still found (the audit
/// trail), below what stands.
pub const NO_LONGER_STANDING: f64 = 0.3;

/// The weight of a knowledge record (decision, memory, commit…). Knowledge does
/// not age like events do: a decision taken last year still stands, so the project
/// rule applies without the age steps; what no longer stands ranks low.
pub fn knowledge_weight(ctx: &RankContext<'_>, project: &str, stands: bool) -> f64 {
    let base = if ctx.project.is_none_or(|p| p == project) {
        SAME_PROJECT_LAST_WEEK
    } else {
        OTHER_PROJECT
    };
    if stands {
        base
    } else {
        base * NO_LONGER_STANDING
    }
}

/// What an event is worth as an answer beside its words, by the tool that made
/// it: a to-do list restates the task in the task's own words, so it matches
/// every question about the task and rarely answers one.
pub fn event_prior(tool_name: Option<&str>) -> f64 {
    match tool_name {
        Some(tool) if TO_DO_TOOLS.contains(&tool) => TO_DO_LIST,
        _ => 1.0,
    }
}

/// The weight of a to-do list beside other events.
pub const TO_DO_LIST: f64 = 0.25;

/// The to-do tools of the four agents: Claude Code's, OpenCode's, Codex CLI's and
/// Gemini CLI's.
const TO_DO_TOOLS: &[&str] = &[
    "TodoWrite",
    "TodoRead",
    "todowrite",
    "todoread",
    "update_plan",
    "write_todos",
];

/// Final score: relevance (higher is better, e.g. negated bm25) times the weight.
pub fn score(relevance: f64, weight: f64) -> f64 {
    relevance * weight
}

/// Neighbours a search by meaning reads at least: the crowd a query's similarities
/// are measured against ([`Calibration`]).
pub const NEIGHBOURS: usize = 50;

/// What a full match by words adds to a hybrid hit's relevance, beside its
/// calibrated similarity (chosen on the retrieval evaluation, docs/BENCHMARKS.md).
pub const LEXICAL_BLEND: f64 = 1.5;

/// Turns a cosine similarity into a relevance in 0..=1 that means the same for
/// every model: how far a record stands above the crowd of its query's neighbours
/// (the [`NEIGHBOURS`]-th nearest). Models differ wildly in scale (unrelated texts
/// score about 0.1 with all-MiniLM-L6-v2 but 0.75 with multilingual-e5), and a raw
/// cosine times the weights would let recency drown meaning with the latter. Both
/// the edge and the central service rank by meaning through this one rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// The similarity of an unremarkable neighbour.
    floor: f64,
}

impl Calibration {
    /// Fewer neighbours than this say nothing reliable about the crowd.
    const MIN_SAMPLE: usize = 20;

    /// The calibration of a query whose nearest neighbours have these similarities.
    pub fn of(similarities: impl IntoIterator<Item = f64>) -> Calibration {
        let mut sims: Vec<f64> = similarities.into_iter().collect();
        if sims.len() < Self::MIN_SAMPLE {
            return Calibration { floor: 0.0 };
        }
        sims.sort_by(|a, b| b.total_cmp(a));
        let floor = sims[sims.len().min(NEIGHBOURS) - 1].clamp(0.0, 0.99);
        Calibration { floor }
    }

    /// A similarity's relevance: 0 at the crowd, 1 for an identical text.
    pub fn relevance(self, similarity: f64) -> f64 {
        ((similarity - self.floor) / (1.0 - self.floor)).clamp(0.0, 1.0)
    }

    /// **The hybrid rule**: the relevance by meaning plus `lexical` × the lexical
    /// confidence (how much of the query a record matches, 0..=1). Absolute scores,
    /// not ranks: a paraphrase shares no word with its target, so the first of the
    /// lexical list can be noise, and reciprocal rank fusion would reward it.
    pub fn blended(self, similarity: f64, confidence: f64, lexical: f64) -> f64 {
        self.relevance(similarity) + lexical * confidence.clamp(0.0, 1.0)
    }

    /// The hybrid rule for a query's word matches, each given as its lexical
    /// confidence and its similarity, `None` when its record has no vector (not
    /// embedded yet, past a bound, or pushed without one). Meaning cannot speak for
    /// such a record, so it must not push it down: it is taken to be as close as
    /// the closest match with a vector that it equals or beats by words (0 when
    /// there is none). A record first by words then stays above every match it
    /// beats by words, whether or not those have vectors.
    pub fn blended_matches(self, matches: &[(f64, Option<f64>)], lexical: f64) -> Vec<f64> {
        let measured: Vec<(f64, f64)> = matches
            .iter()
            .filter_map(|&(confidence, sim)| sim.map(|s| (confidence, self.relevance(s))))
            .collect();
        matches
            .iter()
            .map(|&(confidence, sim)| {
                let meaning = match sim {
                    Some(s) => self.relevance(s),
                    None => measured
                        .iter()
                        .filter(|(other, _)| *other <= confidence)
                        .map(|(_, relevance)| *relevance)
                        .fold(0.0, f64::max),
                };
                meaning + lexical * confidence.clamp(0.0, 1.0)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(tags: &[String]) -> RankContext<'_> {
        RankContext {
            project: Some("p"),
            tags,
            now: UnixMillis(100 * 86_400_000),
        }
    }

    #[test]
    fn similarity_counts_from_the_crowd_of_the_query() {
        let few = Calibration::of([0.9, 0.5]);
        assert_eq!(few.relevance(0.5), 0.5, "too few neighbours: raw cosine");
        // A model where unrelated texts score 0.75: the crowd is the zero.
        let crowd = Calibration::of((0..60).map(|i| 0.75 + f64::from(i) * 0.001));
        assert!(crowd.relevance(0.76) < 0.05);
        assert!(crowd.relevance(0.95) > 0.7);
        assert_eq!(crowd.relevance(0.5), 0.0);
        assert_eq!(crowd.blended(0.5, 1.0, LEXICAL_BLEND), LEXICAL_BLEND);
        assert_eq!(crowd.blended(0.5, 7.0, 1.0), 1.0, "confidence is at most 1");
    }

    #[test]
    fn a_word_match_without_a_vector_is_not_pushed_below_what_it_beats_by_words() {
        let crowd = Calibration::of((0..60).map(|i| 0.70 + f64::from(i) * 0.001));
        // A full match by words with no vector, a half match close in meaning, a
        // full match with a vector far in meaning, and a weaker word match.
        let scores = crowd.blended_matches(
            &[
                (1.0, None),
                (0.5, Some(0.95)),
                (1.0, Some(0.72)),
                (0.25, None),
            ],
            LEXICAL_BLEND,
        );
        assert!(
            scores[0] > scores[1],
            "first by words, not pushed down: {scores:?}"
        );
        assert!(scores[0] >= scores[2], "{scores:?}");
        assert!(
            scores[1] > scores[3],
            "meaning still lifts what it knows: {scores:?}"
        );
        // The vectorless full match counts as close as the best match it equals or
        // beats by words: the half match at 0.95.
        assert_eq!(scores[0], crowd.relevance(0.95) + LEXICAL_BLEND);
        // With no vector anywhere, words alone decide, as a search by words.
        let words = crowd.blended_matches(&[(0.3, None), (0.9, None)], LEXICAL_BLEND);
        assert!(words[1] > words[0]);
        assert_eq!(words[0], LEXICAL_BLEND * 0.3);
    }

    #[test]
    fn weights_follow_the_spec_table() {
        let now = UnixMillis(100 * 86_400_000);
        let none: Vec<String> = vec![];
        let c = ctx(&none);
        assert_eq!(weight(&c, "p", &[], now.minus_days(1)), 1.0);
        assert_eq!(weight(&c, "p", &[], now.minus_days(6)), 1.0);
        assert_eq!(weight(&c, "p", &[], now.minus_days(8)), 0.8);
        assert_eq!(weight(&c, "p", &[], now.minus_days(29)), 0.8);
        assert_eq!(weight(&c, "p", &[], now.minus_days(90)), 0.6);
        assert_eq!(weight(&c, "q", &[], now.minus_days(1)), 0.4);
    }

    #[test]
    fn a_shared_tag_lifts_another_project() {
        let tags = vec!["auth".to_string()];
        let c = ctx(&tags);
        assert_eq!(weight(&c, "q", &tags, UnixMillis(0)), 0.6);
        assert_eq!(weight(&c, "q", &["db".to_string()], UnixMillis(0)), 0.4);
    }

    #[test]
    fn without_a_current_project_every_record_counts_as_local() {
        let c = RankContext {
            project: None,
            tags: &[],
            now: UnixMillis(10 * 86_400_000),
        };
        assert_eq!(weight(&c, "anything", &[], UnixMillis(9 * 86_400_000)), 1.0);
    }
}
