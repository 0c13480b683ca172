//! A hit's snippet: the short stretch of a record where a query's words are, those
//! words marked (`**renew_jwt**`), so a person or an agent can tell a good hit from
//! noise without opening it. Words meet in any form (`crate::words`). A hit found
//! by meaning alone is shown by the one of its [`passages`] closest to the query.

use crate::words::{self, Word};

/// Words of a snippet.
const SNIPPET_WORDS: usize = 24;
/// The most characters of a record read for its snippet (a huge tool output is
/// not scanned whole for a line of text).
const SCANNED_CHARS: usize = 50_000;
/// What a matched word is wrapped in.
const MARK: &str = "**";
/// What stands for a line break of the text, a snippet being one line.
const LINE_BREAK: &str = " · ";

/// The most passages of one record weighed for a hit found by meaning: each costs
/// the model about what a query does, so a long record is judged by its first few.
pub const MAX_PASSAGES: usize = 3;
/// The fewest words a passage holds: a shorter line says too little to show.
const PASSAGE_MIN_WORDS: usize = 3;
/// The most characters of one passage: [`passages`] cuts at a snippet's words
/// well before, so only a passage from elsewhere (another server) is cut here.
pub const MAX_PASSAGE_CHARS: usize = 400;

/// Passages received from elsewhere (a central service's hit), held to what
/// [`passages`] would give: the first [`MAX_PASSAGES`], each at most
/// [`MAX_PASSAGE_CHARS`] characters.
pub fn bounded(received: Vec<String>) -> Vec<String> {
    received
        .into_iter()
        .take(MAX_PASSAGES)
        .map(|p| p.chars().take(MAX_PASSAGE_CHARS).collect())
        .collect()
}

/// The passages of `text` a hit found by meaning may be shown by: its sentences and
/// lines of at least three words, in order, each on one line and cut to a
/// snippet's length (`…`), the first [`MAX_PASSAGES`] of them.
pub fn passages(text: &str) -> Vec<String> {
    let text = match text.char_indices().nth(SCANNED_CHARS) {
        Some((cut, _)) => &text[..cut],
        None => text,
    };
    let mut out = Vec::new();
    for line in text.lines() {
        if out.len() == MAX_PASSAGES {
            break;
        }
        let mut rest = line;
        while !rest.is_empty() && out.len() < MAX_PASSAGES {
            // A sentence ends at `.`, `?` or `!` before a space (not inside `v1.2`).
            let end = rest
                .char_indices()
                .zip(rest.chars().skip(1))
                .find(|((_, c), next)| ".?!".contains(*c) && next.is_whitespace())
                .map_or(rest.len(), |((i, c), _)| i + c.len_utf8());
            let words: Vec<&str> = rest[..end].split_whitespace().collect();
            rest = rest[end..].trim_start();
            if words
                .iter()
                .filter(|w| w.chars().any(char::is_alphanumeric))
                .count()
                < PASSAGE_MIN_WORDS
            {
                continue;
            }
            let mut passage = words[..words.len().min(SNIPPET_WORDS)].join(" ");
            if words.len() > SNIPPET_WORDS {
                passage.push('…');
            }
            out.push(passage);
        }
    }
    out
}

/// One word of the text: where it is, and which wanted word it is, if any.
struct Located {
    start: usize,
    end: usize,
    matches: Option<usize>,
}

/// The stretch of `text` around the most of `query`'s words (stopwords aside), on
/// one line, the matched words marked and a cut end shown by `…`; `None` when
/// `text` holds none of them (a hit found by meaning alone).
pub fn snippet(text: &str, query: &str) -> Option<String> {
    let wanted: Vec<Word> = words::words(query)
        .into_iter()
        .filter(|w| !w.is_stopword())
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let text = match text.char_indices().nth(SCANNED_CHARS) {
        Some((cut, _)) => &text[..cut],
        None => text,
    };
    let located = locate(text, &wanted);
    let matches: Vec<Option<usize>> = located.iter().map(|l| l.matches).collect();
    let first = matches.iter().position(Option::is_some)?;
    // The window holding the most distinct query words, then the most matches;
    // the earliest of equals.
    let mut best = (first, 0usize, 0usize);
    for start in first..located.len() {
        if matches[start].is_none() {
            continue;
        }
        let end = (start + SNIPPET_WORDS).min(located.len());
        let mut distinct = vec![false; wanted.len()];
        let mut count = 0;
        for m in matches[start..end].iter().flatten() {
            distinct[*m] = true;
            count += 1;
        }
        let distinct = distinct.iter().filter(|d| **d).count();
        if (distinct, count) > (best.1, best.2) {
            best = (start, distinct, count);
        }
    }
    // A little of what comes before the first match, for its sense.
    let start = best.0.saturating_sub(3);
    let end = (start + SNIPPET_WORDS).min(located.len());
    Some(marked(
        text,
        &located[start..end],
        &matches[start..end],
        (start > 0, end < located.len()),
    ))
}

/// `text`'s words with their byte ranges, each matched against `wanted`. Only a
/// word that begins as one of them (two letters, accents aside) is stemmed: a long
/// tool output costs a scan, not a stemmer call per word.
fn locate(text: &str, wanted: &[Word]) -> Vec<Located> {
    let heads: Vec<String> = wanted.iter().map(|w| head(&w.text)).collect();
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let written = &text[s..i];
                let begins = head(written);
                let matches = if heads.contains(&begins) {
                    let word = Word::of(written);
                    wanted.iter().position(|w| w.same_as(&word))
                } else {
                    None
                };
                out.push(Located {
                    start: s,
                    end: i,
                    matches,
                });
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// A word's first two letters, lowercased and without accents: what a word and its
/// stems in English and Spanish always share.
fn head(word: &str) -> String {
    word.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ä' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            other => other,
        })
        .take(2)
        .collect()
}

/// The words `located` span in `text`, on one line: matched runs marked (words
/// joined by `_`, `.`, `-`, `:` or `/` make one run: `**renew_jwt**`), line breaks
/// shown as ` · `, cut ends shown.
fn marked(
    text: &str,
    located: &[Located],
    matches: &[Option<usize>],
    (cut_before, cut_after): (bool, bool),
) -> String {
    let mut out = String::new();
    if cut_before {
        out.push('…');
    }
    let mut open = false;
    for (i, l) in located.iter().enumerate() {
        if i > 0 {
            let gap = &text[located[i - 1].end..l.start];
            let joins = gap.chars().count() <= 2 && gap.chars().all(|c| "_.-:/".contains(c));
            if open && !(matches[i].is_some() && joins) {
                out.push_str(MARK);
                open = false;
            }
            for c in gap.chars() {
                if c == '\n' {
                    // A line or a field ends: say so, or a decision's title, choice
                    // and reason read as one run-on sentence.
                    if !out.ends_with(LINE_BREAK) {
                        out.truncate(out.trim_end().len());
                        out.push_str(LINE_BREAK);
                    }
                } else if !c.is_whitespace() {
                    out.push(c);
                } else if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
        }
        if matches[i].is_some() && !open {
            out.push_str(MARK);
            open = true;
        }
        out.push_str(&text[l.start..l.end]);
    }
    if open {
        out.push_str(MARK);
    }
    if cut_after {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matched_words_are_marked_in_any_form_and_an_identifier_as_one() {
        let text = "Edit src/auth.rs\n- fn renew(t)\n+ fn renew_jwt(token: &Token) -> Jwt {\n    rotate(token)";
        let s = snippet(text, "renew_jwt tokens").expect("found");
        assert!(
            s.contains("fn **renew_jwt**(**token**: &**Token**) -> **Jwt** {"),
            "{s}"
        );
        assert!(!s.contains('\n') && !s.contains("  "), "one line: {s}");
    }

    #[test]
    fn lines_and_fields_read_apart() {
        let decision = "Use PostgreSQL for the ledger\nPostgreSQL\nWe need transactions\n\nMongoDB";
        assert_eq!(
            snippet(decision, "ledger mongodb").as_deref(),
            Some(
                "…PostgreSQL for the **ledger** · PostgreSQL · We need transactions · **MongoDB**"
            )
        );
        let edit = "Edit src/auth.rs\n- fn renew(t)\n+ fn renew_jwt(token)";
        let s = snippet(edit, "renew_jwt").expect("found");
        assert!(s.contains("(t) · + fn **renew_jwt**(token"), "{s}");
    }

    #[test]
    fn passages_are_sentences_and_lines_of_a_few_words_each_on_one_line() {
        let text = "Deploy v1.2 to staging. It failed!\nok\n  The login page refused   every password?  Retry later\n";
        assert_eq!(
            passages(text),
            vec![
                "Deploy v1.2 to staging.",
                "The login page refused every password?"
            ],
            "a sentence or a line of fewer than three words is not shown"
        );
        let long = "word ".repeat(100);
        let cut = passages(&long);
        assert_eq!(cut.len(), 1);
        assert!(cut[0].ends_with('…') && cut[0].split_whitespace().count() == SNIPPET_WORDS);
        let many = "one two three.\n".repeat(20);
        assert_eq!(passages(&many).len(), MAX_PASSAGES);
    }

    #[test]
    fn passages_from_elsewhere_are_held_to_what_passages_gives() {
        let huge = vec!["x".repeat(10_000); 50];
        let held = bounded(huge);
        assert_eq!(held.len(), MAX_PASSAGES);
        assert!(held.iter().all(|p| p.chars().count() == MAX_PASSAGE_CHARS));
        let ours = passages(&"a word of many letters here ".repeat(40));
        assert!(ours.iter().all(|p| p.chars().count() <= MAX_PASSAGE_CHARS));
        assert_eq!(bounded(ours.clone()), ours, "ours pass unchanged");
    }

    #[test]
    fn a_long_text_is_cut_around_its_matches() {
        let before = "lorem ".repeat(200);
        let after = " ipsum".repeat(200);
        let text = format!("{before}the websocket reconnects after a drop{after}");
        let s = snippet(&text, "websocket reconnect").expect("found");
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("**websocket** **reconnects**"), "{s}");
        assert!(s.split_whitespace().count() <= SNIPPET_WORDS + 2, "{s}");
    }

    #[test]
    fn a_word_in_another_form_or_with_accents_is_marked() {
        assert_eq!(
            snippet("los códigos OTP llegan tarde", "codigo otp").as_deref(),
            Some("los **códigos** **OTP** llegan tarde")
        );
        assert_eq!(
            snippet("Running the migrations", "run migration").as_deref(),
            Some("**Running** the **migrations**")
        );
    }

    #[test]
    fn nothing_matched_gives_no_snippet() {
        assert_eq!(snippet("a text about queues", "websocket"), None);
        assert_eq!(snippet("a text about queues", "the of"), None);
    }
}
