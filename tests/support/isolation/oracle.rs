//! The oracle: every text the simulation writes carries a marker of its own
//! (`mk`, ten hex digits and `z`) registered with who wrote it, in which project, as
//! which record. What a read path answers is then checked against it: every
//! marker a person is shown must be one they may see (no leak), every record or
//! line that shows it must name its author's machine (no words put in another's
//! mouth), and a session shows only what its own person wrote.

use super::world::{Person, World, may_see};
use solaria_shared::wire::WireRecord;
use std::cell::RefCell;
use std::collections::HashMap;
use uuid::Uuid;

/// What the oracle knows of one marked text.
#[derive(Debug, Clone)]
pub struct Fact {
    pub author: Person,
    pub project: String,
    pub record: Uuid,
}

/// Facts, and what the honest people hold that must stand.
#[derive(Debug, Default)]
pub struct Oracle {
    prefix: u16,
    next: u32,
    facts: HashMap<String, Fact>,
    /// Sessions by id, with their person.
    pub sessions: HashMap<Uuid, Person>,
    /// Honest personal decisions nobody may supersede but their author.
    pub personal_decisions: Vec<(Uuid, Person)>,
    /// Honest iterations, decisions and memories (what hostile records name).
    pub knowledge: Vec<(Uuid, Person, String)>,
    /// Every honest record id, with its author: what a leak of ids gives away.
    pub honest_ids: Vec<(Uuid, Person)>,
    /// Markers of honest records that their author's reads and every machine
    /// that may see them must hold (records that pass every check).
    pub standing: Vec<String>,
}

impl Oracle {
    pub fn new(seed: u64) -> Oracle {
        Oracle {
            prefix: (seed & 0xffff) as u16,
            ..Oracle::default()
        }
    }

    /// A new marker for a text `author` writes into `record` of `project`.
    pub fn marker(&mut self, author: Person, project: &str, record: Uuid) -> String {
        self.next += 1;
        // A letter at the end no stemmer takes off, so the whole marker stands
        // in a full-text index's terms as it does in the text.
        let marker = format!("mk{:04x}{:06x}z", self.prefix, self.next);
        self.facts.insert(
            marker.clone(),
            Fact {
                author,
                project: project.to_string(),
                record,
            },
        );
        marker
    }

    pub fn fact(&self, marker: &str) -> Option<&Fact> {
        self.facts.get(marker)
    }

    /// Whether `reader` may be shown `marker`.
    pub fn visible(&self, reader: Person, marker: &str) -> bool {
        self.facts
            .get(marker)
            .is_some_and(|f| may_see(reader, f.author, &f.project))
    }

    /// Checks a text `reader` was given by `path`: no marker they may not see; on
    /// each line, no machine of anyone but the author of the line's markers.
    pub fn check_text(
        &self,
        world: &World,
        reader: Person,
        path: &str,
        text: &str,
        failures: &mut Vec<String>,
    ) {
        for line in text.lines() {
            let markers = markers_in(line);
            let mut authors: Vec<Person> = Vec::new();
            for m in &markers {
                match self.facts.get(*m) {
                    Some(f) if !may_see(reader, f.author, &f.project) => failures.push(format!(
                        "{path}: {reader:?} was shown {m}, written by {:?} in {}: {line}",
                        f.author, f.project
                    )),
                    Some(f) => authors.push(f.author),
                    None => {}
                }
            }
            authors.sort();
            authors.dedup();
            if let [author] = authors.as_slice() {
                for named in world.named_in(line) {
                    if named != *author {
                        failures.push(format!(
                            "{path}: {author:?}'s words shown as {named:?}'s to {reader:?}: {line}"
                        ));
                    }
                }
            }
        }
    }

    /// Checks a record `reader` was given by `path`: its markers visible to them,
    /// each written by its machine's person.
    pub fn check_record(
        &self,
        world: &World,
        reader: Person,
        path: &str,
        record: &WireRecord,
        failures: &mut Vec<String>,
    ) {
        let text = text_of(record);
        let writer = world.owner(record.machine_id());
        for m in markers_in(&text) {
            let Some(f) = self.facts.get(m) else {
                continue;
            };
            if !may_see(reader, f.author, &f.project) {
                failures.push(format!(
                    "{path}: {reader:?} was given {} {} holding {m}, {:?}'s in {}",
                    record.type_name(),
                    record.id(),
                    f.author,
                    f.project
                ));
            }
            if writer != Some(f.author) {
                failures.push(format!(
                    "{path}: {:?}'s {m} in {} {} written as {writer:?}'s",
                    f.author,
                    record.type_name(),
                    record.id()
                ));
            }
        }
    }
}

/// Every text of `r` a person or an agent wrote, in one string.
pub fn text_of(r: &WireRecord) -> String {
    let all = RefCell::new(String::new());
    let mut r = r.clone();
    r.map_user_text(
        &mut |t| {
            all.borrow_mut().push_str(t);
            all.borrow_mut().push(' ');
            t.to_string()
        },
        &mut |j| {
            all.borrow_mut().push_str(&j.to_string());
            all.borrow_mut().push(' ');
        },
    );
    all.into_inner()
}

/// The markers in `text`: `mk`, ten lowercase hex digits and `z`, as a whole word.
pub fn markers_in(text: &str) -> Vec<&str> {
    scan(text, true)
}

/// The markers anywhere in a file's bytes read as text: a record's header byte
/// before a text may be a letter, so no word boundary is asked for.
pub fn markers_in_bytes(text: &str) -> Vec<&str> {
    scan(text, false)
}

fn scan(text: &str, words: bool) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("mk") {
        let start = i + at;
        let end = start + 13;
        let before_ok = !words || start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        let after_ok = !words || end >= bytes.len() || !bytes[end].is_ascii_alphanumeric();
        if end <= bytes.len()
            && before_ok
            && after_ok
            && bytes[end - 1] == b'z'
            && bytes[start + 2..end - 1]
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        {
            out.push(&text[start..end]);
            i = end;
        } else {
            i = start + 2;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_found_as_whole_words_only() {
        assert_eq!(
            markers_in("mk0001000001z and (mk00a1b2c3d4z), not xmk0001000002z nor mk000100000gz"),
            vec!["mk0001000001z", "mk00a1b2c3d4z"]
        );
        // In a file's bytes, a term a stemmer cut short is no marker.
        assert_eq!(
            markers_in_bytes("\u{1}mk00a00000b6\u{8}mk00a00000b4z6"),
            vec!["mk00a00000b4z"]
        );
    }
}
