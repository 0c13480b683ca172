//! What of a query a record holds by words: which of its terms are in the record's
//! title (a word in any form, anything else as written), and the share of the
//! query's weight that makes. Search's relevance and confidence and recall's score
//! by words all stand on these, so a title counts the same everywhere.

use solaria_shared::words::{self, Word};
use std::collections::HashMap;

/// Extra weight of a term found in the title (a title says what a record is).
const TITLE_BOOST: f64 = 1.0;

/// How a query term is looked for in a record's title: a word in any of its forms,
/// as the index finds it in the text ("token" in "Rotate refresh tokens", "caducan"
/// in "Caducidad de las sesiones"); anything else (an identifier, a path, an
/// option such as `--profile`) as written. Punctuation around it is not part of it.
enum InTitle {
    Word(Word),
    Written(String),
}

impl InTitle {
    fn of(term: &str) -> InTitle {
        let term = term.trim_matches(|c: char| {
            matches!(
                c,
                ',' | '.' | ';' | ':' | '!' | '?' | '"' | '\'' | '(' | ')' | '¿' | '¡'
            )
        });
        if !term.is_empty() && term.chars().all(char::is_alphabetic) {
            InTitle::Word(Word::of(term))
        } else {
            InTitle::Written(term.to_lowercase())
        }
    }
}

/// Which of a query's terms a title holds ([`InTitle`]), for each title a search
/// reads. What each word of a title is, by its stems, is worked out once a query:
/// titles repeat their words ("Edit", "Bash", a project's paths).
pub(super) struct InTitles {
    terms: Vec<InTitle>,
    /// A title word (lowercased): the bits of the terms it is a form of.
    known: HashMap<String, u32>,
}

impl InTitles {
    /// The terms of a query, as the user typed them.
    pub(super) fn of(terms: &[String]) -> InTitles {
        InTitles {
            terms: terms.iter().map(|t| InTitle::of(t)).collect(),
            known: HashMap::new(),
        }
    }

    /// The terms `title` holds (bit i = term i).
    pub(super) fn held(&mut self, title: &str) -> u32 {
        let lowered = title.to_lowercase();
        let mut held = 0;
        for (i, term) in self.terms.iter().enumerate() {
            if let InTitle::Written(text) = term
                && !text.is_empty()
                && lowered.contains(text.as_str())
            {
                held |= 1 << i;
            }
        }
        for word in words::runs(&lowered) {
            if let Some(bits) = self.known.get(word) {
                held |= bits;
                continue;
            }
            let form = Word::of(word);
            let bits = self
                .terms
                .iter()
                .enumerate()
                .filter(|(_, term)| matches!(term, InTitle::Word(w) if w.same_as(&form)))
                .fold(0u32, |bits, (i, _)| bits | (1 << i));
            self.known.insert(word.to_string(), bits);
            held |= bits;
        }
        held
    }
}

/// The weight of a query's terms a record holds: the `weights` of the terms it
/// holds (bits of `held`), doubled for those in its title (`held_in_title`).
/// Search's relevance by words stands on it.
pub(super) fn held_weight(weights: &[f64], held: u32, held_in_title: u32) -> f64 {
    let holds = |i: usize, bits: u32| bits & (1 << i) != 0;
    weights
        .iter()
        .enumerate()
        .filter(|&(i, _)| holds(i, held))
        .map(|(i, w)| {
            if holds(i, held_in_title) {
                w * (1.0 + TITLE_BOOST)
            } else {
                *w
            }
        })
        .sum()
}

/// The share of a query's weight a record holds, 0..=1: its [`held_weight`] over
/// that of a record holding every term in its title. Search's lexical confidence
/// and recall's score by words both stand on it.
pub(super) fn held_share(weights: &[f64], held: u32, held_in_title: u32) -> f64 {
    let full: f64 = weights.iter().sum::<f64>() * (1.0 + TITLE_BOOST);
    if full <= 0.0 {
        return 0.0;
    }
    (held_weight(weights, held, held_in_title) / full).clamp(0.0, 1.0)
}
