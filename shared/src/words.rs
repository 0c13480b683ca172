//! Words as search and recall compare them: a text's runs of letters and digits,
//! lowercased, each known by its English and its Spanish stem (Snowball), so that
//! "tokens" meets "token" and "caducan" meets "caducidad" whatever the language of
//! the prompt; and the few words too common to weigh in either language (articles,
//! prepositions…). [`stems`] is the one rule of which stems a word has: recall
//! compares words by it, and the store's full-text index is built with it.

use rust_stemmers::{Algorithm, Stemmer};
use std::borrow::Cow;
use std::sync::LazyLock;

static ENGLISH: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));
static SPANISH: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::Spanish));

/// The shortest Spanish stem that counts. Spanish rules cut English words too, and
/// their short cuts join words that have nothing in common ("data" and "date" both
/// give "dat", "note" gives "not"); a Spanish word keeps a longer stem ("caduc",
/// "prueb", "codig").
const SHORTEST_SPANISH_STEM: usize = 4;

/// What a word (lowercased) is known by besides itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stems<'a> {
    /// Its English stem, or the word itself when it holds a digit (an identifier,
    /// a version or a hash is matched whole).
    pub english: Cow<'a, str>,
    /// Its Spanish stem, when that says something the English one does not: it
    /// differs from both the word and its English stem, and is long enough to
    /// trust ([`SHORTEST_SPANISH_STEM`]).
    pub spanish: Option<String>,
}

/// The stems of `word`, already lowercased.
pub fn stems(word: &str) -> Stems<'_> {
    if word.chars().any(|c| !c.is_alphabetic()) {
        return Stems {
            english: Cow::Borrowed(word),
            spanish: None,
        };
    }
    let english = ENGLISH.stem(word);
    let spanish = SPANISH.stem(word);
    let spanish =
        (spanish != word && spanish != english && spanish.chars().count() >= SHORTEST_SPANISH_STEM)
            .then(|| spanish.into_owned());
    Stems { english, spanish }
}

/// One word of a text: as written (lowercased) and by its stems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    english: String,
    spanish: Option<String>,
}

impl Word {
    /// `text` as one word (lowercased).
    pub fn of(text: &str) -> Word {
        Word::new(text.to_lowercase())
    }

    fn new(text: String) -> Word {
        let Stems { english, spanish } = stems(&text);
        let english = english.into_owned();
        Word {
            text,
            english,
            spanish,
        }
    }

    /// The same word in another form, as the full-text index matches words: a stem
    /// of one is a stem of the other ("lived" and "live", "códigos" and "código",
    /// "planes" and "plan", whose Spanish stem is its English one).
    pub fn same_as(&self, other: &Word) -> bool {
        self.text == other.text
            || self
                .stems()
                .any(|mine| other.stems().any(|theirs| mine == theirs))
    }

    /// Its English stem, then its Spanish one when it has one.
    fn stems(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.english.as_str()).chain(self.spanish.as_deref())
    }

    /// Too common to say what a text is about ([`is_stopword`]).
    pub fn is_stopword(&self) -> bool {
        is_stopword(&self.text)
    }
}

/// `text`'s words in order: its runs of letters and digits, lowercased.
pub fn words(text: &str) -> Vec<Word> {
    runs(text).map(|w| Word::new(w.to_lowercase())).collect()
}

/// `text`'s runs of letters and digits, in order and as written: where [`words`]
/// finds its words.
pub fn runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Whether `said` holds every word of `wanted`, in any order and form, close
/// together: all of them inside a run of at most `wanted.len() + slack` words.
/// "refresh tokens be long-lived" holds "long-lived refresh tokens" with a slack of
/// one; "the sea is calm, no orm" does not hold "sea orm" with a slack of two.
pub fn holds_close(said: &[Word], wanted: &[Word], slack: usize) -> bool {
    if wanted.is_empty() {
        return false;
    }
    let run = wanted.len() + slack;
    (0..said.len()).any(|start| {
        let mut found = vec![false; wanted.len()];
        for word in said.iter().skip(start).take(run) {
            for (i, w) in wanted.iter().enumerate() {
                if !found[i] && word.same_as(w) {
                    found[i] = true;
                }
            }
            if found.iter().all(|f| *f) {
                return true;
            }
        }
        false
    })
}

/// Whether `word` (punctuation around it aside, any case) is too common, in
/// English or Spanish, to say what a text is about.
pub fn is_stopword(word: &str) -> bool {
    const STOP: &[&str] = &[
        "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "how",
        "i", "in", "is", "it", "of", "on", "or", "our", "that", "the", "this", "to", "was", "we",
        "what", "when", "where", "which", "who", "why", "with", "you", "de", "del", "el", "en",
        "es", "la", "las", "lo", "los", "por", "que", "qué", "se", "un", "una", "y", "con", "para",
        "cómo", "como", "cuando", "dónde", "al",
    ];
    let lower = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    STOP.contains(&lower.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(said: &str, wanted: &str, slack: usize) -> bool {
        holds_close(&words(said), &words(wanted), slack)
    }

    #[test]
    fn words_meet_in_another_form_or_order_only_when_close() {
        assert!(close(
            "should refresh tokens be long-lived?",
            "long-lived refresh tokens",
            2
        ));
        assert!(close("¿y si mandamos códigos OTP?", "código OTP", 0));
        assert!(close("we lived with it", "live", 0));
        assert!(!close("the sea is calm, no orm", "sea-orm", 2));
        assert!(!close("refresh the page", "refresh tokens", 2));
        assert!(!close("anything", "", 2), "nothing wanted is never held");
        assert!(close("los tokens caducan pronto", "caducidad tokens", 1));
    }

    #[test]
    fn a_spanish_stem_counts_only_when_it_says_more_and_is_long_enough() {
        assert_eq!(stems("caducan").spanish.as_deref(), Some("caduc"));
        assert_eq!(stems("caducidad").spanish.as_deref(), Some("caduc"));
        assert_eq!(stems("tokens").english, "token");
        // English words cut short by Spanish rules keep only their English stem.
        assert_eq!(stems("data").spanish, None);
        assert_eq!(stems("date").spanish, None);
        assert_eq!(stems("note").spanish, None);
        assert!(!Word::of("data").same_as(&Word::of("date")));
        // The Spanish stem of one may be the other's English stem, as in the index.
        assert_eq!(stems("plan").spanish, None);
        assert!(Word::of("planes").same_as(&Word::of("plan")));
        // Identifiers, versions and hashes are matched whole.
        assert_eq!(stems("v2s").english, "v2s");
        assert_eq!(stems("deadbeef01").spanish, None);
    }

    #[test]
    fn stopwords_of_both_languages_whatever_their_case_or_punctuation() {
        assert!(is_stopword("The"));
        assert!(is_stopword("¿qué"));
        assert!(is_stopword("por,"));
        assert!(!is_stopword("tokens"));
    }
}
