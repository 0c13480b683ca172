//! How knowledge reads: one cited line per record for lists, answers and contexts,
//! the whole record field by field, how records relate, and the pages of a list of
//! decisions and of an iteration. Who wrote a record is said wherever it is shown
//! when it was not a person (`Knowledge::written_by`), and an agent's proposal
//! reads as unconfirmed.

use super::{DataBlock, NAME_CHARS, NameOf, Reader, field};
use crate::anchors::{Anchors, Staleness};
use crate::knowledge::{Knowledge, KnowledgeBody, KnowledgeId, WrittenBy};
use crate::record::Session;

/// Characters of a field shown on one line of a record in full.
const FIELD_CHARS: usize = 2_000;
/// Characters of a knowledge line (its gist).
const LINE_CHARS: usize = 400;
/// Characters of an option named in a recalled decision's line.
const OPTION_CHARS: usize = 80;
/// Characters of an iteration's description under its line.
const DESCRIPTION_CHARS: usize = 300;

/// Who wrote `k`, when not a person: ` (by claude-code in [S#…])`, ` (proposed by
/// the summarizer of [S#…])`; nothing for a person's record.
pub fn provenance(k: &Knowledge) -> String {
    let session = k
        .session_id
        .map(|s| format!(" in {}", crate::citation::Citation::session(s)))
        .unwrap_or_default();
    match &k.written_by {
        WrittenBy::Person => String::new(),
        WrittenBy::Agent(name) if name.is_empty() => format!(" (by an agent{session})"),
        WrittenBy::Agent(name) => format!(" (by {}{session})", field(name, NAME_CHARS)),
        WrittenBy::Summarizer => format!(" (proposed by the summarizer{session})"),
    }
}

/// One line: citation, time, machine, the gist, its status when it no longer
/// stands, and who wrote it when not a person.
pub fn line(k: &Knowledge, reader: Reader, names: &impl NameOf) -> String {
    let status = match k.status() {
        "active" => String::new(),
        other => format!(" [{other}]"),
    };
    format!(
        "{} {}{} {}{status}{}",
        k.citation(),
        reader.time.format(k.created_at),
        reader.machine(k.meta.machine_id, names),
        field(&k.gist(), LINE_CHARS),
        provenance(k)
    )
}

/// Hex digits of a sha in a "changed since" note, as `git log --oneline` shows it.
const SHA_SHOWN: usize = 7;
/// Anchored files named in a "changed since" note before "and N more".
const FILES_NAMED: usize = 3;

/// A sha as `git log --oneline` shows it, safe to print.
pub fn short_sha(sha: &str) -> String {
    field(&sha.chars().take(SHA_SHOWN).collect::<String>(), SHA_SHOWN)
}

fn files_named(files: &[String]) -> String {
    let mut named: Vec<String> = files
        .iter()
        .take(FILES_NAMED)
        .map(|f| field(f, NAME_CHARS))
        .collect();
    if files.len() > FILES_NAMED {
        named.push(format!("{} more", files.len() - FILES_NAMED));
    }
    match named.len() {
        0 => String::new(),
        1 => named.remove(0),
        n => format!("{} and {}", named[..n - 1].join(", "), named[n - 1]),
    }
}

/// What changed in a record's code since its time, on one line, the one wording
/// of it: `src/auth/jwt.rs changed in 3 commits since, latest 9f2c1ab "Replace
/// refresh flow"; src/old.rs deleted in 1a2b3c4`. Empty when nothing changed.
pub fn changed_since(s: &Staleness) -> String {
    let mut parts = Vec::new();
    if s.commit_count > 0 {
        let latest = s
            .commits
            .first()
            .map(|c| {
                format!(
                    ", latest {} \"{}\"",
                    short_sha(&c.sha),
                    field(&c.subject, OPTION_CHARS)
                )
            })
            .unwrap_or_default();
        parts.push(format!(
            "{} changed in {} commit{} since{latest}",
            files_named(&s.files),
            s.commit_count,
            if s.commit_count == 1 { "" } else { "s" }
        ));
    }
    for g in &s.gone {
        let by =
            g.by.as_deref()
                .map(|sha| format!(" in {}", short_sha(sha)))
                .unwrap_or_default();
        parts.push(match &g.renamed_to {
            Some(to) => format!(
                "{} renamed to {}{by}",
                field(&g.path, NAME_CHARS),
                field(to, NAME_CHARS)
            ),
            None if g.by.is_some() => format!("{} deleted{by}", field(&g.path, NAME_CHARS)),
            None => format!("{} no longer exists", field(&g.path, NAME_CHARS)),
        });
    }
    for symbol in &s.gone_symbols {
        parts.push(format!(
            "{} found nowhere in the code",
            field(symbol, NAME_CHARS)
        ));
    }
    parts.join("; ")
}

/// A context's or a list's line for `k` with what changed in its code since:
/// [`line`], then `(changed since: …)`.
pub fn line_changed_since(
    k: &Knowledge,
    reader: Reader,
    names: &impl NameOf,
    staleness: &Staleness,
) -> String {
    format!(
        "{} (changed since: {})",
        line(k, reader, names),
        changed_since(staleness)
    )
}

/// A recalled decision's line when the prompt names `option`, one of the options
/// it set aside: [`line`], then what the prompt proposed again.
pub fn line_naming_option(
    k: &Knowledge,
    reader: Reader,
    names: &impl NameOf,
    option: &str,
) -> String {
    format!(
        "{} (this prompt names \"{}\", an option the decision set aside)",
        line(k, reader, names),
        field(option, OPTION_CHARS)
    )
}

/// A record's anchors, a line each for files, symbols and the last confirmation.
fn anchor_lines(
    a: &Anchors,
    put: &mut impl FnMut(String),
    when: &impl Fn(crate::time::UnixMillis) -> String,
) {
    let list = |items: &[String]| {
        items
            .iter()
            .map(|i| field(i, NAME_CHARS))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !a.files.is_empty() {
        put(format!("  files: {}", list(&a.files)));
    }
    if !a.symbols.is_empty() {
        put(format!("  symbols: {}", list(&a.symbols)));
    }
    if let Some(at) = a.confirmed_at {
        let head = if a.head.is_empty() {
            String::new()
        } else {
            format!(" at {}", short_sha(&a.head))
        };
        put(format!("  confirmed: {}{head}", when(at)));
    }
}

/// The whole record, field by field, each line ending with a newline.
pub fn full(k: &Knowledge, reader: Reader, names: &impl NameOf) -> String {
    let mut out = String::new();
    let mut put = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    let f = |text: &str| field(text, FIELD_CHARS);
    let when = |t| reader.time.format(t);
    put(format!(
        "{} {} in {} ({}), written {}{}{}{}",
        k.citation(),
        k.kind(),
        field(&k.project.name, NAME_CHARS),
        field(&k.project.key, 300),
        when(k.created_at),
        reader.written_at(k.meta.machine_id, names),
        match k.status() {
            "active" => String::new(),
            other => format!(" — {other}"),
        },
        provenance(k)
    ));
    let list = |items: &[String]| {
        items
            .iter()
            .map(|i| field(i, FIELD_CHARS))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let cite = |id: &Option<KnowledgeId>, letter: char| {
        id.map(|i| format!("[{letter}#{i}]")).unwrap_or_default()
    };
    match &k.body {
        KnowledgeBody::Decision(d) => {
            put(format!("  title: {}", f(&d.title)));
            if !d.context.is_empty() {
                put(format!("  context: {}", f(&d.context)));
            }
            put(format!("  chosen: {}", f(&d.chosen)));
            if !d.alternatives.is_empty() {
                put(format!("  alternatives: {}", list(&d.alternatives)));
            }
            if !d.rationale.is_empty() {
                put(format!("  rationale: {}", f(&d.rationale)));
            }
            put(format!(
                "  impact: {}{}   decided: {}",
                d.impact,
                if d.phase.is_empty() {
                    String::new()
                } else {
                    format!("   phase: {}", f(&d.phase))
                },
                when(d.decided_at)
            ));
            if d.iteration.is_some() {
                put(format!("  iteration: {}", cite(&d.iteration, 'I')));
            }
            if !d.tags.is_empty() {
                put(format!("  tags: {}", list(&d.tags)));
            }
            if d.supersedes.is_some() {
                put(format!("  supersedes: {}", cite(&d.supersedes, 'D')));
            }
            if d.superseded_by.is_some() {
                put(format!("  superseded by: {}", cite(&d.superseded_by, 'D')));
            }
            anchor_lines(&d.anchors, &mut put, &when);
        }
        KnowledgeBody::Memory(m) => {
            put(format!("  {}: {}", m.memory_type, f(&m.content)));
            put(format!(
                "  confidence: {:.2}{}",
                m.confidence.value(),
                m.confidence.band().note()
            ));
            if !m.tags.is_empty() {
                put(format!("  tags: {}", list(&m.tags)));
            }
            if let Some(at) = m.expires_at {
                put(format!("  expires: {}", when(at)));
            }
            if m.supersedes.is_some() {
                put(format!("  supersedes: {}", cite(&m.supersedes, 'M')));
            }
            if m.superseded_by.is_some() {
                put(format!("  superseded by: {}", cite(&m.superseded_by, 'M')));
            }
            anchor_lines(&m.anchors, &mut put, &when);
        }
        KnowledgeBody::Commit(c) => {
            put(format!(
                "  sha: {}   branch: {}",
                f(&c.sha),
                field(&c.branch, 300)
            ));
            put(format!("  message: {}", f(c.message.trim())));
            if c.complete {
                put(format!(
                    "  author: {}   committed: {}   +{} −{} in {} files",
                    field(&c.author, NAME_CHARS),
                    when(c.committed_at),
                    c.insertions,
                    c.deletions,
                    c.files.len()
                ));
            }
            for d in &c.decisions {
                put(format!("  implements: [D#{d}]"));
            }
        }
        KnowledgeBody::Iteration(i) => {
            put(format!(
                "  {} ({}): {}",
                f(&i.title),
                i.iteration_kind,
                i.status
            ));
            if !i.description.is_empty() {
                put(format!("  {}", f(&i.description)));
            }
            put(format!(
                "  started: {}   completed: {}",
                when(i.started_at),
                i.completed_at.map(when).unwrap_or_else(|| "-".into())
            ));
        }
        KnowledgeBody::Event(e) => {
            put(format!(
                "  {} {}   at: {}",
                e.event,
                f(&e.detail),
                when(e.at)
            ));
            if e.iteration.is_some() {
                put(format!("  iteration: {}", cite(&e.iteration, 'I')));
            }
        }
        KnowledgeBody::Link(l) => put(format!(
            "  {} {} {}{}",
            l.from.map(|i| i.to_string()).unwrap_or_default(),
            l.relation,
            l.to.map(|i| i.to_string()).unwrap_or_default(),
            if l.note.is_empty() {
                String::new()
            } else {
                format!(" — {}", f(&l.note))
            }
        )),
    }
    out
}

/// How a record relates to others, each way: `implements [D#…]`, `implemented by
/// [C#…]`, `supports [M#…]`, `supported by …`. `links` are the link records (and
/// commits) that name it, `others` the records at their other ends.
pub fn relations(record: &Knowledge, links: &[Knowledge], others: &[Knowledge]) -> Vec<String> {
    let find = |id: KnowledgeId| others.iter().find(|o| o.id == id);
    let mut out = Vec::new();
    for l in links {
        match &l.body {
            KnowledgeBody::Link(link) => {
                let (Some(from), Some(to)) = (link.from, link.to) else {
                    continue;
                };
                let (verb, other) = if from == record.id {
                    (link.relation.as_str().replace('_', " "), to)
                } else {
                    (
                        format!("{} (by)", link.relation.as_str().replace('_', " ")),
                        from,
                    )
                };
                if let Some(o) = find(other) {
                    out.push(format!(
                        "{verb} {} {}",
                        o.citation(),
                        field(&o.title(), LINE_CHARS)
                    ));
                }
            }
            KnowledgeBody::Commit(_) if l.id != record.id => {
                out.push(format!(
                    "implemented by {} {}",
                    l.citation(),
                    field(&l.title(), LINE_CHARS)
                ));
            }
            _ => {}
        }
    }
    out
}

/// One cited line per record, or `empty` when there is none.
pub fn list(records: &[Knowledge], reader: Reader, names: &impl NameOf, empty: &str) -> String {
    if records.is_empty() {
        return format!("{empty}\n");
    }
    records
        .iter()
        .map(|k| line(k, reader, names) + "\n")
        .collect()
}

/// The answer to "what was decided": each decision in full (context, choice,
/// alternatives, rationale, supersession), newest first; for an agent, inside one
/// data block.
pub fn decisions_page(records: &[Knowledge], reader: Reader, names: &impl NameOf) -> String {
    if records.is_empty() {
        return "No decision found. Try without `query`, with `all: true` (superseded and \
                retracted ones too), or another project.\n"
            .into();
    }
    let body = records
        .iter()
        .map(|k| full(k, reader, names))
        .collect::<Vec<_>>()
        .join("\n");
    let head = format!("{} decision(s), newest first:\n", records.len());
    if reader.is_agent() {
        format!("{head}{}", DataBlock::new().wrap("decisions", &body))
    } else {
        format!("{head}{body}")
    }
}

/// An iteration's page ([`iteration`]); for an agent, inside one data block.
pub fn iteration_page(
    iteration_record: &Knowledge,
    members: &[Knowledge],
    sessions: &[Session],
    reader: Reader,
    names: &impl NameOf,
) -> String {
    let text = iteration(iteration_record, members, sessions, reader, names);
    if reader.is_agent() {
        DataBlock::new().wrap("an iteration and what was recorded in it", &text)
    } else {
        text
    }
}

/// An iteration: its line and description, then what was recorded in it (decisions,
/// commits, events) oldest first, then the sessions of its project meanwhile.
pub fn iteration(
    iteration: &Knowledge,
    members: &[Knowledge],
    sessions: &[Session],
    reader: Reader,
    names: &impl NameOf,
) -> String {
    let mut out = format!("{}\n", line(iteration, reader, names));
    if let KnowledgeBody::Iteration(i) = &iteration.body
        && !i.description.is_empty()
    {
        out.push_str(&format!("  {}\n", field(&i.description, DESCRIPTION_CHARS)));
    }
    if members.is_empty() {
        out.push_str("  nothing recorded in it yet\n");
    }
    for m in members {
        out.push_str(&format!("  {}\n", line(m, reader, names)));
    }
    if !sessions.is_empty() {
        let cited: Vec<String> = sessions
            .iter()
            .map(|s| crate::citation::Citation::session(s.id).to_string())
            .collect();
        out.push_str(&format!(
            "  sessions ({}): {}\n",
            cited.len(),
            cited.join(" ")
        ));
    }
    out
}
