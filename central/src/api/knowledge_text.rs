//! How the `/mcp` knowledge tools word their answers: every line cites its record
//! (`[D#id]`, `[C#sha7]`, `[I#id]`, `[E#id]`) with its time (UTC) and machine, so an
//! agent can quote what it uses.

use crate::ops::{DecisionsAnswer, IterationAnswer};
use crate::timefmt::utc;
use solaria_shared::knowledge::Decision;
use solaria_shared::wire::MachineName;
use solaria_shared::{Knowledge, KnowledgeBody, MachineId};
use std::collections::HashMap;

/// The longest field shown (context, rationale, description…), in characters.
const MAX_FIELD_CHARS: usize = 2_000;

/// One line of text: whitespace runs (newlines too) made one space, at most
/// [`MAX_FIELD_CHARS`] characters, marked when cut.
fn line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= MAX_FIELD_CHARS {
        return joined;
    }
    let mut cut: String = joined.chars().take(MAX_FIELD_CHARS).collect();
    cut.push_str("… [cut]");
    cut
}

struct Names(HashMap<MachineId, String>);

impl Names {
    fn new(machines: &[MachineName]) -> Names {
        Names(machines.iter().map(|m| (m.id, m.name.clone())).collect())
    }

    fn of(&self, k: &Knowledge) -> &str {
        self.0
            .get(&k.meta.machine_id)
            .map_or("unknown machine", String::as_str)
    }
}

/// `[D#id] time (machine) [status] title — project` and the decision's fields.
fn decision_text(out: &mut String, k: &Knowledge, d: &Decision, names: &Names) {
    out.push_str(&format!(
        "{} {} ({}) [{}] {} — project {}\n",
        k.citation(),
        utc(k.created_at),
        names.of(k),
        d.status,
        line(&d.title),
        k.project.name
    ));
    for (label, text) in [
        ("Context", &d.context),
        ("Chosen", &d.chosen),
        ("Rationale", &d.rationale),
    ] {
        if !text.trim().is_empty() {
            out.push_str(&format!("  {label}: {}\n", line(text)));
        }
    }
    if !d.alternatives.is_empty() {
        let alternatives: Vec<String> = d.alternatives.iter().map(|a| line(a)).collect();
        out.push_str(&format!("  Alternatives: {}\n", alternatives.join("; ")));
    }
    if let Some(by) = d.superseded_by {
        out.push_str(&format!("  Superseded by: [D#{by}]\n"));
    }
}

/// The decisions of a list, one cited block each.
pub fn decisions_text(a: &DecisionsAnswer) -> String {
    let names = Names::new(&a.machines);
    if a.decisions.is_empty() {
        return "No decision found. Try without `query`, with `all: true` (superseded and \
                retracted ones too), or another project.\n"
            .into();
    }
    let mut out = format!("{} decision(s), newest first:\n", a.decisions.len());
    for k in &a.decisions {
        if let KnowledgeBody::Decision(d) = &k.body {
            decision_text(&mut out, k, d, &names);
        }
    }
    out
}

/// An iteration, then its decisions, commits and events, each cited.
pub fn iteration_text(a: &IterationAnswer) -> String {
    let names = Names::new(&a.machines);
    let k = &a.iteration;
    let mut out = String::new();
    if let KnowledgeBody::Iteration(i) = &k.body {
        out.push_str(&format!(
            "{} iteration {} ({}, {}) — project {} ({}), machine {}, started {}{}{}\n",
            k.citation(),
            line(&i.title),
            i.iteration_kind,
            i.status,
            k.project.name,
            k.project.key,
            names.of(k),
            utc(i.started_at),
            i.completed_at
                .map(|t| format!(", completed {}", utc(t)))
                .unwrap_or_default(),
            if i.branch.is_empty() {
                String::new()
            } else {
                format!(", branch {}", i.branch)
            }
        ));
        if !i.description.trim().is_empty() {
            out.push_str(&format!("  {}\n", line(&i.description)));
        }
    }
    out.push_str(&format!("{} decision(s):\n", a.decisions.len()));
    for d in &a.decisions {
        if let KnowledgeBody::Decision(body) = &d.body {
            decision_text(&mut out, d, body, &names);
        }
    }
    out.push_str(&format!("{} commit(s):\n", a.commits.len()));
    for c in &a.commits {
        out.push_str(&format!(
            "{} {} ({}) {}\n",
            c.citation(),
            utc(c.created_at),
            names.of(c),
            line(&c.title())
        ));
    }
    out.push_str(&format!("{} event(s), oldest first:\n", a.events.len()));
    for e in &a.events {
        out.push_str(&format!(
            "{} {} ({}) {}\n",
            e.citation(),
            utc(e.created_at),
            names.of(e),
            line(&e.title())
        ));
    }
    out
}
