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

/// Final score: relevance (higher is better, e.g. negated bm25) times the weight.
pub fn score(relevance: f64, weight: f64) -> f64 {
    relevance * weight
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
