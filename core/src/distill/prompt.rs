//! What the summarizer is sent: instructions, the answer's JSON shape, and one line
//! per event of the session. Built from the stored records, which are redacted
//! already; every line also has its `<private>` spans stripped and is redacted
//! again, so neither a secret nor private text reaches a model. Bounded: a long
//! session keeps its start and its end.

use solaria_shared::private::strip_private;
use solaria_shared::redact::redact;
use solaria_shared::{Observation, ObservationKind};

/// The most characters of session events in one prompt (about 6,000 tokens).
pub const MAX_EVENTS_CHARS: usize = 24_000;
/// The most characters of one event's line.
const LINE_CHARS: usize = 400;

/// The instructions and the shape of the answer (`answer::parse` reads it).
const INSTRUCTIONS: &str = "You summarize one session of a coding agent for the \
project's memory. Use only the events below; do not invent. Answer with one JSON \
object and nothing else (no prose, no code fence):
{\"summary\": \"what was asked, what was done and how it ended, at most 3 sentences\",
 \"key_points\": [\"short facts worth finding later, at most 6\"],
 \"decisions\": [{\"title\": \"what was decided\", \"chosen\": \"the option taken\", \
\"rationale\": \"why\", \"alternatives\": [\"options not taken\"]}],
 \"memories\": [{\"type\": \"fact|preference|principle|pattern|commitment|skill|relationship|moment\", \
\"text\": \"something durable about the project or the user, worth knowing next time\"}]}
decisions: only choices between alternatives made for a reason in this session, \
else []. memories: only what will still matter in a later session, else [].";

/// The prompt for a session of `project` with its `observations` (oldest first)
/// and the agent's last message, if known.
pub fn build(project: &str, observations: &[Observation], outcome: Option<&str>) -> String {
    let lines: Vec<String> = observations.iter().filter_map(event_line).collect();
    let mut out = String::from(INSTRUCTIONS);
    out.push_str("\n\nProject: ");
    out.push_str(&clean(project, 120));
    out.push_str("\nSession events, oldest first:\n");
    for line in bounded(lines, MAX_EVENTS_CHARS) {
        out.push_str("- ");
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(o) = outcome.map(|o| clean(o, 1_000)).filter(|o| !o.is_empty()) {
        out.push_str("The agent's last message: ");
        out.push_str(&o);
        out.push('\n');
    }
    out
}

/// One event as a line, or nothing for an event with no text.
fn event_line(o: &Observation) -> Option<String> {
    let line = match o.kind {
        ObservationKind::Prompt => format!("user asked: {}", clean(&o.input, LINE_CHARS)),
        ObservationKind::Note => format!("note: {}", clean(&o.title, LINE_CHARS)),
        ObservationKind::ToolUse => {
            let tool = o.tool_name.as_deref().unwrap_or("tool");
            let mut line = format!("{}: {}", clean(tool, 40), clean(&o.title, LINE_CHARS));
            if o.failed() {
                line.push_str(" — failed: ");
                line.push_str(&clean(&o.response, 200));
            }
            line
        }
    };
    (!line.trim().is_empty()).then_some(line)
}

/// Private spans out first, then secrets, then whitespace folded and the text
/// cut: a cut after the strip can never leave part of a span behind.
fn clean(text: &str, max: usize) -> String {
    let stripped = strip_private(text);
    let redacted = redact(&stripped);
    let folded = redacted.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max {
        return folded;
    }
    let mut cut: String = folded.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Lines within `budget` characters: all of them, or the first third and the
/// rest from the end (how it ended matters most), with a line saying how many
/// were left out.
fn bounded(lines: Vec<String>, budget: usize) -> Vec<String> {
    let total: usize = lines.iter().map(|l| l.chars().count() + 3).sum();
    if total <= budget {
        return lines;
    }
    let cost = |l: &String| l.chars().count() + 3;
    let mut head = Vec::new();
    let mut used = 0;
    for l in &lines {
        if used + cost(l) > budget / 3 {
            break;
        }
        used += cost(l);
        head.push(l.clone());
    }
    let mut tail = Vec::new();
    for l in lines[head.len()..].iter().rev() {
        if used + cost(l) > budget {
            break;
        }
        used += cost(l);
        tail.push(l.clone());
    }
    let left_out = lines.len() - head.len() - tail.len();
    head.push(format!("… {left_out} event(s) left out …"));
    head.extend(tail.into_iter().rev());
    head
}

#[cfg(test)]
mod tests {
    use super::*;
    use solaria_shared::{
        Hlc, MachineId, ObservationId, Project, RecordMeta, SessionId, UnixMillis,
    };

    fn prompt_obs(text: &str) -> Observation {
        Observation {
            id: ObservationId::new(),
            meta: RecordMeta {
                machine_id: MachineId::new(),
                updated: Hlc::default(),
                deleted: false,
            },
            session_id: SessionId::new(),
            project: Project {
                key: "k".into(),
                name: "n".into(),
            },
            kind: ObservationKind::Prompt,
            tool_name: None,
            title: String::new(),
            input: text.into(),
            response: String::new(),
            files: Vec::new(),
            metadata: serde_json::json!({}),
            tags: Vec::new(),
            created_at: UnixMillis(0),
        }
    }

    #[test]
    fn private_spans_and_secrets_never_reach_the_prompt() {
        let key = "AKIA".to_string() + "IOSFODNN7EXAMPLE";
        let text = format!("deploy with {key} <private>the vault code is 4242</private> now");
        let p = build("demo", &[prompt_obs(&text)], Some("<private>hidden"));
        assert!(!p.contains(&key), "{p}");
        assert!(!p.contains("4242") && !p.contains("hidden"), "{p}");
        assert!(p.contains("user asked: deploy with"), "{p}");
    }

    #[test]
    fn a_long_session_keeps_its_start_and_end_within_the_budget() {
        let events: Vec<Observation> = (0..400)
            .map(|i| prompt_obs(&format!("step {i} {}", "x".repeat(200))))
            .collect();
        let p = build("demo", &events, None);
        assert!(p.chars().count() < MAX_EVENTS_CHARS + 2_000, "{}", p.len());
        assert!(p.contains("step 0 ") && p.contains("step 399 "));
        assert!(p.contains("event(s) left out"));
    }
}
