//! A project's memory as a Markdown page a person reads, for `solaria export
//! --format markdown`: its decisions with their context, choice, rationale and the
//! options set aside; its memories by type; its sessions' summaries by day.
//! Written for people, not agents: nothing here is handed to an agent.

use super::{NameOf, TimeStyle, author_label};
use crate::knowledge::{Knowledge, KnowledgeBody, MemoryType};
use crate::record::Summary;
use crate::text::clip_line;
use std::fmt::Write;

/// The most characters of a heading (a title, a memory's first line).
const HEADING_CHARS: usize = 160;

/// What one project's page is made of: its knowledge (decisions and memories are
/// shown; other kinds are counted by the caller, not here) and its summaries.
#[derive(Debug)]
pub struct ProjectPage<'a> {
    pub name: &'a str,
    pub key: &'a str,
    pub knowledge: &'a [Knowledge],
    pub summaries: &'a [Summary],
}

/// Text for one line of Markdown: whitespace runs as one space, and the
/// characters that would start a heading, a list or a quote escaped.
fn inline(text: &str, max: usize) -> String {
    let line = clip_line(text, max);
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A block of text kept as its author wrote it, inside a quote, so that no line of
/// it can become a heading of this page.
fn quoted(text: &str) -> String {
    text.trim()
        .lines()
        .map(|l| format!("> {}", l.trim_end()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Who wrote a record and where, for a person reading the page: `@ana on laptop`.
fn writer(k_machine: crate::ids::MachineId, names: &impl NameOf) -> String {
    let machine = names.name_of(k_machine);
    author_label(&machine, names.teammate_of(k_machine).as_deref())
}

/// The page of one project. Times read in `time`.
pub fn project_page(page: &ProjectPage<'_>, time: TimeStyle, names: &impl NameOf) -> String {
    let mut out = format!("# {}\n\n", inline(page.name, HEADING_CHARS));
    let _ = writeln!(out, "Project key: `{}`\n", page.key.replace('`', "'"));

    let mut decisions: Vec<&Knowledge> = page
        .knowledge
        .iter()
        .filter(|k| matches!(k.body, KnowledgeBody::Decision(_)))
        .collect();
    decisions.sort_by_key(|k| std::cmp::Reverse(k.created_at));
    out.push_str("## Decisions\n\n");
    if decisions.is_empty() {
        out.push_str("None recorded.\n\n");
    }
    for k in decisions {
        decision(&mut out, k, time, names);
    }

    out.push_str("## Memories\n\n");
    let memories: Vec<&Knowledge> = page
        .knowledge
        .iter()
        .filter(|k| matches!(k.body, KnowledgeBody::Memory(_)))
        .collect();
    if memories.is_empty() {
        out.push_str("None recorded.\n\n");
    }
    for kind in MemoryType::ALL {
        let mut of_kind: Vec<&Knowledge> = memories
            .iter()
            .copied()
            .filter(|k| matches!(&k.body, KnowledgeBody::Memory(m) if m.memory_type == *kind))
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        of_kind.sort_by_key(|k| std::cmp::Reverse(k.created_at));
        let _ = writeln!(out, "### {}\n", plural(*kind));
        for k in of_kind {
            memory(&mut out, k, time, names);
        }
        out.push('\n');
    }

    out.push_str("## Session summaries\n\n");
    if page.summaries.is_empty() {
        out.push_str("None recorded.\n");
    }
    let mut summaries: Vec<&Summary> = page.summaries.iter().collect();
    summaries.sort_by_key(|s| s.created_at);
    let mut day = String::new();
    for s in summaries {
        let when = time.format(s.created_at);
        let this_day = when.split(' ').next().unwrap_or_default().to_string();
        if this_day != day {
            let _ = writeln!(out, "### {this_day}\n");
            day = this_day;
        }
        let clock = when.split(' ').nth(1).unwrap_or_default();
        let _ = writeln!(
            out,
            "- **{clock}** ({} events, @{}): {}",
            s.observation_count,
            inline(&writer(s.meta.machine_id, names), HEADING_CHARS),
            inline(&s.text, 2_000)
        );
        for point in &s.key_points {
            let _ = writeln!(out, "  - {}", inline(point, 500));
        }
    }
    out
}

fn plural(kind: MemoryType) -> &'static str {
    match kind {
        MemoryType::Fact => "Facts",
        MemoryType::Preference => "Preferences",
        MemoryType::Relationship => "Relationships",
        MemoryType::Principle => "Principles",
        MemoryType::Commitment => "Commitments",
        MemoryType::Moment => "Moments",
        MemoryType::Skill => "Skills",
        MemoryType::Pattern => "Patterns",
    }
}

fn decision(out: &mut String, k: &Knowledge, time: TimeStyle, names: &impl NameOf) {
    let KnowledgeBody::Decision(d) = &k.body else {
        return;
    };
    let _ = writeln!(
        out,
        "### {} {}\n",
        inline(&d.title, HEADING_CHARS),
        k.citation()
    );
    let _ = writeln!(
        out,
        "*{}* · {} impact · decided {} by @{}\n",
        k.status(),
        d.impact,
        time.format(d.decided_at),
        inline(&writer(k.meta.machine_id, names), HEADING_CHARS)
    );
    for (label, text) in [
        ("Context", &d.context),
        ("Chosen", &d.chosen),
        ("Rationale", &d.rationale),
    ] {
        if !text.trim().is_empty() {
            let _ = writeln!(out, "**{label}:**\n\n{}\n", quoted(text));
        }
    }
    if !d.alternatives.is_empty() {
        out.push_str("**Set aside:**\n\n");
        for option in &d.alternatives {
            let _ = writeln!(out, "- {}", inline(option, 500));
        }
        out.push('\n');
    }
    let mut notes = Vec::new();
    if !d.tags.is_empty() {
        notes.push(format!("tags: {}", inline(&d.tags.join(", "), 500)));
    }
    if let Some(old) = d.supersedes {
        notes.push(format!("supersedes D#{}", old.short()));
    }
    if let Some(new) = d.superseded_by {
        notes.push(format!("superseded by D#{}", new.short()));
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "{}\n", notes.join(" · "));
    }
}

fn memory(out: &mut String, k: &Knowledge, time: TimeStyle, names: &impl NameOf) {
    let KnowledgeBody::Memory(m) = &k.body else {
        return;
    };
    let mut notes = vec![
        k.status().to_string(),
        format!("confidence {:.2}", m.confidence.value()),
        time.format(k.created_at),
        format!(
            "@{}",
            inline(&writer(k.meta.machine_id, names), HEADING_CHARS)
        ),
    ];
    if let Some(new) = m.superseded_by {
        notes.push(format!("superseded by M#{}", new.short()));
    }
    let _ = writeln!(
        out,
        "- {} {} ({})",
        inline(&m.content, 2_000),
        k.citation(),
        notes.join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Project;
    use crate::hlc::Hlc;
    use crate::ids::MachineId;
    use crate::knowledge::KnowledgeId;
    use crate::knowledge::{Decision, Memory};
    use std::collections::BTreeMap;

    fn record(body: KnowledgeBody, machine: MachineId) -> Knowledge {
        let project = Project {
            key: "github.com/acme/billing".into(),
            name: "billing".into(),
        };
        Knowledge::new(
            KnowledgeId::new(),
            machine,
            Hlc::new(1_700_000_000_000, 0),
            project,
            None,
            body,
        )
    }

    #[test]
    fn a_decision_reads_with_its_rationale_and_the_options_set_aside() {
        let machine = MachineId::new();
        let names = BTreeMap::from([(machine, "laptop".to_string())]);
        let decision = record(
            KnowledgeBody::Decision(Decision {
                title: "# Rotate refresh tokens\non every renewal".into(),
                chosen: "rotation".into(),
                rationale: "a stolen token dies\n# at its next use".into(),
                alternatives: vec!["long-lived refresh tokens".into()],
                ..Decision::default()
            }),
            machine,
        );
        let memory = record(
            KnowledgeBody::Memory(Memory {
                memory_type: MemoryType::Preference,
                content: "Ana reviews every migration".into(),
                ..Memory::default()
            }),
            machine,
        );
        let page = project_page(
            &ProjectPage {
                name: "billing",
                key: "github.com/acme/billing",
                knowledge: &[decision, memory],
                summaries: &[],
            },
            TimeStyle::Utc,
            &names,
        );
        assert!(
            page.contains("### \\# Rotate refresh tokens on every renewal [D#"),
            "{page}"
        );
        assert!(
            page.contains("> a stolen token dies\n> # at its next use"),
            "{page}"
        );
        assert!(page.contains("- long-lived refresh tokens"), "{page}");
        assert!(
            page.contains("### Preferences\n\n- Ana reviews every migration [M#"),
            "{page}"
        );
        assert!(page.contains("@laptop"), "{page}");
        assert!(
            !page.lines().any(|l| l.starts_with("# at")),
            "no line of a record becomes a heading: {page}"
        );
    }
}
