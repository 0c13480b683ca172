//! Search results: this machine's ([`SearchResult`]) and the central service's
//! ([`RemoteResult`]), as a compact index one line per record, and as JSON.

use super::Reader;
use crate::search_mode::SearchMode;
use crate::store::search::Hit;
use serde::{Deserialize, Serialize};
use solaria_shared::wire::SearchHit;
use solaria_shared::{Citation, UnixMillis};

/// What a search of this machine's memory found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchResult {
    /// The query text as searched.
    pub query: String,
    /// The mode that ran.
    pub mode: SearchMode,
    /// Why a search without an explicit mode ran by words only (the model does
    /// not load, or did not make the stored vectors), and what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fell_back: Option<String>,
    /// What the results may miss: local retention removed older records and the
    /// central service, asked for them, did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub hits: Vec<CitedHit>,
}

/// One hit, with how to cite it and the name of the machine that wrote it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CitedHit {
    /// `[O#id]` for an observation, `[S#session]` for a session summary.
    pub cite: Citation,
    #[serde(flatten)]
    pub hit: Hit,
    pub machine_name: String,
    /// Written by this machine (a person is not told its own machine's name).
    pub this_machine: bool,
    /// Found on the central service: local retention removed it from this
    /// machine (`solaria show` needs the server for it).
    #[serde(default)]
    pub remote: bool,
}

/// One line of the compact index: citation, time, type, title, `~tokens` to read
/// it in full, project, machine.
pub fn index_line(h: &CitedHit, reader: Reader) -> String {
    let machine = match reader {
        Reader::Person { .. } if h.this_machine => String::new(),
        _ => format!(" @{}", h.machine_name),
    };
    let remote = if h.remote { "  (remote)" } else { "" };
    format!(
        "{} {} {:<8} {}  ~{}t  {}{machine}{remote}",
        h.cite,
        reader.when(UnixMillis(h.hit.created_at)),
        h.hit.record_type.as_str(),
        h.hit.title,
        h.hit.tokens,
        h.hit.project_name,
    )
}

impl SearchResult {
    /// The index, then how to go on; an agent is also told when the search fell
    /// back to words (a person's terminal shows that on its own line, apart).
    pub fn text(&self, reader: Reader) -> String {
        let note: String = match reader {
            Reader::Agent => [&self.fell_back, &self.note]
                .into_iter()
                .flatten()
                .map(|why| format!("\nNote: {why}"))
                .collect(),
            Reader::Person { .. } => String::new(),
        };
        if self.hits.is_empty() {
            return match reader {
                Reader::Person { .. } => format!("No matches for {:?}.", self.query),
                Reader::Agent => format!(
                    "No matches for {:?} ({} search). Try other or fewer keywords, or drop a filter.{note}",
                    self.query, self.mode
                ),
            };
        }
        let mut out: String = self
            .hits
            .iter()
            .map(|h| index_line(h, reader) + "\n")
            .collect();
        out.push('\n');
        out.push_str(&format!(
            "{} result(s), {} search. {} shows what happened around one, {} the full records.",
            self.hits.len(),
            self.mode,
            reader.timeline_step(),
            reader.records_step()
        ));
        out.push_str(&note);
        out
    }
}

/// What a search of the central service found.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteResult {
    pub server: String,
    pub query: String,
    pub hits: Vec<SearchHit>,
}

/// One line of the central service's index; the machine is always named, since
/// the hits come from every machine of the account.
pub fn remote_line(hit: &SearchHit, reader: Reader) -> String {
    format!(
        "{} {} {}  ~{}t  {} @{}",
        hit.cite,
        reader.when(hit.created_at),
        hit.title,
        hit.tokens,
        hit.project_name,
        hit.machine_name
    )
}

impl RemoteResult {
    /// The central service's index, or what finding nothing says.
    pub fn text(&self, reader: Reader) -> String {
        if self.hits.is_empty() {
            return format!("No matches on {} for {:?}.", self.server, self.query);
        }
        let lines: Vec<String> = self.hits.iter().map(|h| remote_line(h, reader)).collect();
        format!(
            "{}\n\n{} result(s) from {} (every machine of the account).",
            lines.join("\n"),
            lines.len(),
            self.server
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timefmt;
    use solaria_shared::RecordType;

    fn hit(record_type: RecordType, this_machine: bool) -> CitedHit {
        let hit = Hit {
            id: "obs-1".into(),
            record_type,
            title: "cargo test renew_jwt".into(),
            project: "github.com/acme/api".into(),
            project_name: "api".into(),
            machine_id: "m".into(),
            session_id: "ses-1".into(),
            created_at: 1_700_000_000_000,
            tokens: 42,
            score: 1.0,
        };
        CitedHit {
            cite: record_type.citation(&hit.id, &hit.session_id),
            hit,
            machine_name: if this_machine { "laptop" } else { "desktop" }.into(),
            this_machine,
            remote: false,
        }
    }

    #[test]
    fn a_person_sees_other_machines_and_an_agent_sees_every_machine() {
        let t = UnixMillis(1_700_000_000_000);
        let person = Reader::Person { now: t };
        let own = index_line(&hit(RecordType::ToolUse, true), person);
        let short = timefmt::short(t, t);
        assert_eq!(
            own,
            format!("[O#obs-1] {short:<11} tool_use cargo test renew_jwt  ~42t  api")
        );
        let theirs = index_line(&hit(RecordType::Prompt, false), person);
        assert!(theirs.ends_with("  ~42t  api @desktop"), "{theirs}");
        let agent = index_line(&hit(RecordType::ToolUse, true), Reader::Agent);
        let full = timefmt::full(t);
        assert_eq!(
            agent,
            format!("[O#obs-1] {full} tool_use cargo test renew_jwt  ~42t  api @laptop")
        );
    }

    #[test]
    fn a_summary_is_cited_by_its_session() {
        let line = index_line(&hit(RecordType::Summary, true), Reader::Agent);
        assert!(line.starts_with("[S#ses-1] "), "{line}");
    }

    #[test]
    fn the_footer_names_each_readers_next_steps() {
        let result = SearchResult {
            query: "jwt".into(),
            mode: SearchMode::Hybrid,
            fell_back: Some("searched by words only: no model".into()),
            note: None,
            hits: vec![hit(RecordType::Note, true), hit(RecordType::Note, false)],
        };
        let person = result.text(Reader::Person { now: UnixMillis(0) });
        assert!(person.ends_with(
            "2 result(s), hybrid search. `solaria timeline ID` shows what happened around one, `solaria show ID…` the full records."
        ), "{person}");
        let agent = result.text(Reader::Agent);
        assert!(agent.contains("memory_timeline ID shows"), "{agent}");
        assert!(
            agent.ends_with("\nNote: searched by words only: no model"),
            "{agent}"
        );
    }

    #[test]
    fn nothing_found_reads_differently_for_an_agent() {
        let result = SearchResult {
            query: "jwt".into(),
            mode: SearchMode::Lexical,
            fell_back: None,
            note: None,
            hits: vec![],
        };
        assert_eq!(
            result.text(Reader::Person { now: UnixMillis(0) }),
            "No matches for \"jwt\"."
        );
        assert!(
            result
                .text(Reader::Agent)
                .contains("(lexical search). Try other")
        );
    }
}
