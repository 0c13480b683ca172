//! Search results: this machine's ([`SearchResult`]) and the central service's
//! ([`RemoteResult`]), as a compact index one line per record, and as JSON.

use super::{MachineLabels, Reader};
use crate::store::search::Hit;
use serde::{Deserialize, Serialize};
use solaria_shared::SearchMode;
use solaria_shared::render::hits::{self, HitView, SearchPage};
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
    /// Who wrote it after `@`: the machine, with a teammate's handle
    /// (`render::author_label`).
    pub machine_name: String,
    /// Who wrote it: the machine, and a teammate's handle.
    pub author: solaria_shared::wire::Author,
    /// Where its text holds the query's words, marked (`render::snippet`);
    /// absent for a hit found by meaning alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// Lower hits alike to this one (`render::hits::fold_key`), folded into it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub alike: usize,
    /// Written by this machine (a person is not told its own machine's name).
    pub this_machine: bool,
    /// Found on the central service: local retention removed it from this
    /// machine (`solaria show` needs the server for it).
    #[serde(default)]
    pub remote: bool,
}

impl CitedHit {
    /// What the shared renderer shows of it.
    fn view(&self) -> HitView<'_> {
        HitView {
            cite: &self.cite,
            record_type: self.hit.record_type,
            created_at: UnixMillis(self.hit.created_at),
            title: &self.hit.title,
            tokens: self.hit.tokens,
            project_name: &self.hit.project_name,
            machine_name: &self.machine_name,
            author: None,
            own_machine: self.this_machine,
            remote: self.remote,
            snippet: self.snippet.as_deref(),
            alike: self.alike,
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Hits fold by the shared rule (`render::hits::folded`): a to-do list rewritten
/// four times shows as one line.
impl hits::Foldable for CitedHit {
    fn type_and_title(&self) -> (solaria_shared::RecordType, &str) {
        (self.hit.record_type, &self.hit.title)
    }

    fn alike_mut(&mut self) -> &mut usize {
        &mut self.alike
    }
}

/// One line of the compact index: citation, time, type, title, `~tokens` to read
/// it in full, project, machine.
pub fn index_line(h: &CitedHit, reader: Reader) -> String {
    hits::line(&h.view(), reader.render(&MachineLabels::default()))
}

impl SearchResult {
    /// The index, then how to go on; an agent is also told when the search fell
    /// back to words (a person's terminal shows that on its own line, apart).
    pub fn text(&self, reader: Reader) -> String {
        let mode = self.mode.to_string();
        SearchPage {
            query: &self.query,
            mode: &mode,
            scope: None,
            hits: self.hits.iter().map(CitedHit::view).collect(),
            notes: [&self.fell_back, &self.note]
                .into_iter()
                .flatten()
                .cloned()
                .collect(),
        }
        .text(reader.render(&MachineLabels::default()))
    }
}

/// What a search of the central service found.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteResult {
    pub server: String,
    pub query: String,
    /// How the service searched (lexical when it could not by meaning: a note says why).
    pub mode: SearchMode,
    pub hits: Vec<SearchHit>,
    /// What the service said beside its hits (it fell back to any word, it cut
    /// the query): `render::hits::remote_notes`.
    #[serde(skip)]
    pub notes: Vec<String>,
}

impl RemoteResult {
    /// The central service's index, or what finding nothing says. An agent reads
    /// what the central service's own `memory_search_remote` answers (the shared
    /// `render::hits::remote_page`); a person is also told which server it was.
    pub fn text(&self, reader: Reader) -> String {
        let scope = if reader.is_agent() {
            hits::ACCOUNT_SCOPE.to_string()
        } else {
            format!("{} ({})", self.server, hits::ACCOUNT_SCOPE)
        };
        SearchPage {
            query: &self.query,
            mode: self.mode.as_str(),
            scope: Some(&scope),
            hits: hits::folded(self.hits.iter().map(hits::remote_view).collect()),
            notes: self.notes.clone(),
        }
        .text(reader.render(&MachineLabels::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solaria_shared::RecordType;
    use solaria_shared::render::TimeStyle;

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
            author: solaria_shared::wire::Author {
                handle: None,
                machine: if this_machine { "laptop" } else { "desktop" }.into(),
            },
            snippet: None,
            alike: 0,
            this_machine,
            remote: false,
        }
    }

    #[test]
    fn a_person_sees_other_machines_and_an_agent_sees_every_machine_and_the_zone() {
        let t = UnixMillis(1_700_000_000_000);
        let person = Reader::Person { now: t };
        let own = index_line(&hit(RecordType::ToolUse, true), person);
        let short = TimeStyle::Short { now: t }.format(t);
        assert_eq!(
            own,
            format!("[O#obs-1] {short:<11} tool_use cargo test renew_jwt  ~42t  api")
        );
        let theirs = index_line(&hit(RecordType::Prompt, false), person);
        assert!(theirs.ends_with("  ~42t  api @desktop"), "{theirs}");
        let agent = index_line(&hit(RecordType::ToolUse, true), Reader::Agent);
        let full = TimeStyle::Local.format(t);
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
