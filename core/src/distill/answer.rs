//! Reads the summarizer's answer: one JSON object (a code fence around it, or
//! Claude Code's `--output-format json` envelope, is taken off) with a non-empty
//! `summary`, optional `key_points`, and `decisions` and `memories` proposals, no
//! longer than `max_answer_tokens`. Anything else is refused with the reason;
//! unknown keys are ignored. Every text is redacted and bounded here, before
//! anything is stored. Also what an answer reports it cost (`usage`).

use serde::Deserialize;
use solaria_shared::context::estimate_tokens;
use solaria_shared::knowledge::MemoryType;
use solaria_shared::redact::redact;

/// The longest summary kept (characters).
const SUMMARY_CHARS: usize = 2_000;
/// The longest key point, decision field or memory kept (characters).
const ITEM_CHARS: usize = 500;
const MAX_KEY_POINTS: usize = 8;
const MAX_DECISIONS: usize = 5;
const MAX_MEMORIES: usize = 8;

/// Why an answer was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AnswerError {
    #[error("the answer was empty")]
    Empty,
    #[error("the answer is not a JSON object ({0}); it starts {1:?}")]
    NotJson(String, String),
    #[error("the answer does not have the expected shape: {0}")]
    Shape(String),
    #[error(
        "the answer is about {tokens} tokens, more than the {max} allowed ([summarizer] max_answer_tokens); it was not read"
    )]
    TooLong { tokens: u64, max: u64 },
}

/// A decision the model read in the session.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedDecision {
    pub title: String,
    pub chosen: String,
    pub rationale: String,
    pub alternatives: Vec<String>,
}

/// A memory the model proposes.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedMemory {
    pub memory_type: MemoryType,
    pub text: String,
}

/// An accepted answer, redacted and bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub summary: String,
    pub key_points: Vec<String>,
    pub decisions: Vec<ProposedDecision>,
    pub memories: Vec<ProposedMemory>,
}

#[derive(Deserialize)]
struct RawAnswer {
    summary: String,
    #[serde(default)]
    key_points: Vec<String>,
    #[serde(default)]
    decisions: Vec<RawDecision>,
    #[serde(default)]
    memories: Vec<RawMemory>,
}

#[derive(Deserialize)]
struct RawDecision {
    title: String,
    chosen: String,
    #[serde(default)]
    rationale: String,
    #[serde(default)]
    alternatives: Vec<String>,
}

#[derive(Deserialize)]
struct RawMemory {
    #[serde(rename = "type")]
    memory_type: String,
    text: String,
}

/// Reads `text` (a program's output or the API's text) as an answer of at most
/// about `max_tokens` tokens (four characters each): the API is asked for no more,
/// but a program, or an endpoint that ignores `max_tokens`, may send more, and the
/// caps reserved only that much. The envelope of Claude Code around it is not
/// counted, only the answer inside.
pub fn parse(text: &str, max_tokens: u64) -> Result<Answer, AnswerError> {
    let body = unfence(text.trim());
    if body.is_empty() {
        return Err(AnswerError::Empty);
    }
    let value: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| AnswerError::NotJson(e.to_string(), redact(&cut(body, 60)).into_owned()))?;
    let value = match unwrap_envelope(&value)? {
        Some(inner) => return parse(&inner, max_tokens),
        None => value,
    };
    let tokens = estimate_tokens(body) as u64;
    if tokens > max_tokens {
        return Err(AnswerError::TooLong {
            tokens,
            max: max_tokens,
        });
    }
    if !value.is_object() {
        return Err(AnswerError::Shape("not an object".into()));
    }
    let raw: RawAnswer =
        serde_json::from_value(value).map_err(|e| AnswerError::Shape(e.to_string()))?;
    let summary = clean(&raw.summary, SUMMARY_CHARS);
    if summary.is_empty() {
        return Err(AnswerError::Shape("`summary` is empty".into()));
    }
    let mut decisions = Vec::new();
    for (i, d) in raw.decisions.into_iter().take(MAX_DECISIONS).enumerate() {
        let (title, chosen) = (clean(&d.title, ITEM_CHARS), clean(&d.chosen, ITEM_CHARS));
        if title.is_empty() || chosen.is_empty() {
            return Err(AnswerError::Shape(format!(
                "decisions[{i}] needs a `title` and a `chosen`"
            )));
        }
        decisions.push(ProposedDecision {
            title,
            chosen,
            rationale: clean(&d.rationale, ITEM_CHARS),
            alternatives: items(d.alternatives, MAX_KEY_POINTS),
        });
    }
    let mut memories = Vec::new();
    for (i, m) in raw.memories.into_iter().take(MAX_MEMORIES).enumerate() {
        let memory_type = m
            .memory_type
            .parse::<MemoryType>()
            .map_err(|e| AnswerError::Shape(format!("memories[{i}]: {e}")))?;
        let text = clean(&m.text, ITEM_CHARS);
        if text.is_empty() {
            return Err(AnswerError::Shape(format!("memories[{i}] has no `text`")));
        }
        memories.push(ProposedMemory { memory_type, text });
    }
    Ok(Answer {
        summary,
        key_points: items(raw.key_points, MAX_KEY_POINTS),
        decisions,
        memories,
    })
}

/// The tokens a program's answer says were spent, when it says: the `usage` of
/// Claude Code's envelope, or of the answer object itself, read as the Messages
/// API's ([`usage_tokens`]).
pub fn reported_tokens(text: &str) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_str(unfence(text.trim())).ok()?;
    usage_tokens(value.get("usage")?)
}

/// Every token a `usage` object of the Messages API reports: input and output,
/// and the prompt cache's writes and reads, which are spent too (a run of `claude
/// -p` reads thousands of cached tokens of its own prompt). `None` when it
/// reports none of them.
pub fn usage_tokens(usage: &serde_json::Value) -> Option<u64> {
    const SPENT: [&str; 4] = [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ];
    let counts: Vec<u64> = SPENT
        .iter()
        .filter_map(|field| usage.get(field)?.as_u64())
        .collect();
    (!counts.is_empty()).then(|| counts.iter().fold(0u64, |sum, n| sum.saturating_add(*n)))
}

/// The text inside a Markdown code fence, or `text` itself.
fn unfence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    // The info string (`json`) ends at the first newline.
    let rest = rest.split_once('\n').map_or("", |(_, body)| body);
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}

/// Claude Code's `-p --output-format json` wraps the model's text in an object
/// `{"type": "result", "result": "...", "is_error": …}`: the text inside, an
/// error if it reports one, `None` for any other object.
fn unwrap_envelope(value: &serde_json::Value) -> Result<Option<String>, AnswerError> {
    if value.get("type").and_then(|t| t.as_str()) != Some("result") {
        return Ok(None);
    }
    let Some(result) = value.get("result").and_then(|r| r.as_str()) else {
        return Ok(None);
    };
    if value.get("is_error").and_then(|e| e.as_bool()) == Some(true) {
        return Err(AnswerError::Shape(format!(
            "the agent reported an error: {}",
            redact(&cut(result, 200))
        )));
    }
    Ok(Some(result.to_string()))
}

fn clean(text: &str, max: usize) -> String {
    cut(&redact(text.trim()), max)
}

fn cut(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn items(list: Vec<String>, max: usize) -> Vec<String> {
    list.iter()
        .map(|i| clean(i, ITEM_CHARS))
        .filter(|i| !i.is_empty())
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Answer, AnswerError> {
        parse(text, 1_024)
    }

    #[test]
    fn a_good_answer_is_read_and_redacted() {
        let key = "ghp_".to_string() + &"a1B2".repeat(9);
        let text = format!(
            "```json\n{{\"summary\": \"Fixed the refresh with {key}.\", \"key_points\": [\"retry once\"],\
             \"decisions\": [{{\"title\": \"Retry\", \"chosen\": \"once\", \"alternatives\": [\"never\"]}}],\
             \"memories\": [{{\"type\": \"preference\", \"text\": \"likes small diffs\"}}], \"extra\": 1}}\n```"
        );
        let a = parse(&text, 1_024).expect("accepted");
        assert!(a.summary.starts_with("Fixed the refresh with"));
        assert!(!a.summary.contains(&key), "{}", a.summary);
        assert_eq!(a.decisions[0].alternatives, vec!["never"]);
        assert_eq!(a.memories[0].memory_type, MemoryType::Preference);
    }

    #[test]
    fn garbage_and_wrong_shapes_are_refused_with_a_reason() {
        assert_eq!(read("  "), Err(AnswerError::Empty));
        assert!(matches!(
            read("I cannot do that"),
            Err(AnswerError::NotJson(..))
        ));
        assert!(matches!(read("[1, 2]"), Err(AnswerError::Shape(_))));
        assert!(matches!(
            read(r#"{"summary": ""}"#),
            Err(AnswerError::Shape(_))
        ));
        assert!(matches!(
            read(r#"{"sumary": "x"}"#),
            Err(AnswerError::Shape(_))
        ));
        let bad_type = r#"{"summary": "x", "memories": [{"type": "gossip", "text": "t"}]}"#;
        let Err(AnswerError::Shape(why)) = read(bad_type) else {
            panic!("refused")
        };
        assert!(
            why.contains("memories[0]") && why.contains("gossip"),
            "{why}"
        );
    }

    #[test]
    fn claude_code_json_output_is_unwrapped() {
        let inner = r#"{"summary": "done"}"#;
        let outer = serde_json::json!({"type": "result", "is_error": false, "result": inner});
        assert_eq!(
            parse(&outer.to_string(), 1_024).expect("ok").summary,
            "done"
        );
        let failed =
            serde_json::json!({"type": "result", "is_error": true, "result": "rate limited"});
        assert!(matches!(
            parse(&failed.to_string(), 1_024),
            Err(AnswerError::Shape(_))
        ));
    }

    #[test]
    fn an_answer_longer_than_allowed_is_refused_and_the_envelope_does_not_count() {
        let long = serde_json::json!({"summary": "x".repeat(900)}).to_string();
        assert_eq!(
            parse(&long, 200),
            Err(AnswerError::TooLong {
                tokens: 229,
                max: 200
            })
        );
        assert!(parse(&long, 229).is_ok());
        let inner = r#"{"summary": "done"}"#;
        let outer = serde_json::json!({"type": "result", "is_error": false, "result": inner,
            "session_id": "x".repeat(400)});
        assert!(
            parse(&outer.to_string(), 10).is_ok(),
            "only the answer counts"
        );
    }

    #[test]
    fn usage_is_read_from_the_envelope_or_the_answer_with_the_cache_counted() {
        let envelope = serde_json::json!({"type": "result", "result": "{}", "usage": {
            "input_tokens": 4, "output_tokens": 300,
            "cache_creation_input_tokens": 5_000, "cache_read_input_tokens": 12_000,
            "service_tier": "standard"}});
        assert_eq!(reported_tokens(&envelope.to_string()), Some(17_304));
        let answer = r#"```json
{"summary": "x", "usage": {"input_tokens": 10, "output_tokens": 5}}
```"#;
        assert_eq!(reported_tokens(answer), Some(15));
        assert_eq!(reported_tokens(r#"{"summary": "x"}"#), None);
        assert_eq!(reported_tokens(r#"{"usage": {"total": 3}}"#), None);
        assert_eq!(reported_tokens("not json"), None);
    }
}
