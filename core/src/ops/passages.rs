//! Which sentence shows a hit found by meaning alone (it holds none of the query's
//! words, so no snippet marks them): the rule of what is weighed, for this
//! machine's hits and the central service's alike. A record of one passage is shown
//! by it, free; of more, the passages are weighed by the model that embedded the
//! query, the best-ranked hits first, at most [`MEANING_PASSAGES`] a search; a hit
//! past them, or a model that fails, is shown without.

/// The most passages one search weighs. Each costs the model about what embedding
/// the query does (docs/BENCHMARKS.md, "Hybrid search"): two hits of three
/// sentences at most.
pub const MEANING_PASSAGES: usize = 6;

/// For each candidate (a hit's index and its passages, in rank order), the passage
/// that shows it, by the rule above; `closest` weighs lists of passages (for each,
/// the index of the one closest to the query), `None` when it could not.
pub fn chosen(
    candidates: Vec<(usize, Vec<String>)>,
    closest: impl FnOnce(&[Vec<String>]) -> Option<Vec<Option<usize>>>,
) -> Vec<(usize, String)> {
    let mut shown = Vec::new();
    let mut budget = MEANING_PASSAGES;
    let mut weighed: Vec<(usize, Vec<String>)> = Vec::new();
    for (hit, mut passages) in candidates {
        if passages.len() == 1 {
            shown.extend(passages.pop().map(|p| (hit, p)));
        } else if passages.len() > 1 && passages.len() <= budget {
            budget -= passages.len();
            weighed.push((hit, passages));
        }
    }
    if weighed.is_empty() {
        return shown;
    }
    let lists: Vec<Vec<String>> = weighed.iter().map(|(_, p)| p.clone()).collect();
    let closest = closest(&lists).unwrap_or_default();
    for ((hit, passages), best) in weighed.into_iter().zip(closest) {
        if let Some(passage) = best.and_then(|b| passages.into_iter().nth(b)) {
            shown.push((hit, passage));
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("sentence number {i}")).collect()
    }

    #[test]
    fn one_passage_is_free_and_the_budget_goes_to_the_best_ranked_hits() {
        let mut asked = Vec::new();
        let shown = chosen(
            vec![
                (0, sentences(3)),
                (1, sentences(1)),
                (2, sentences(3)),
                (3, sentences(2)),
                (4, Vec::new()),
            ],
            |lists| {
                asked = lists.to_vec();
                Some(lists.iter().map(|l| Some(l.len() - 1)).collect())
            },
        );
        assert_eq!(asked.len(), 2, "hits 0 and 2 fill the budget; 3 is past it");
        assert_eq!(
            shown,
            vec![
                (1, "sentence number 0".to_string()),
                (0, "sentence number 2".to_string()),
                (2, "sentence number 2".to_string()),
            ]
        );
    }

    #[test]
    fn a_model_that_fails_leaves_only_the_free_ones() {
        let shown = chosen(vec![(0, sentences(2)), (1, sentences(1))], |_| None);
        assert_eq!(shown, vec![(1, "sentence number 0".to_string())]);
    }
}
