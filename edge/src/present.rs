//! Turning search hits and stats into the compact text people and agents read.
//!
//! `solaria search`/`stats` and the MCP tools word these alike; they differ only in
//! how times and machines are written ([`Reader`]) and in the next steps they name.

use crate::semantic;
use crate::store::hybrid::SearchMode;
use crate::store::records;
use crate::store::search::{Hit, RecordType};
use crate::store::views::Stats;
use crate::timefmt;
use solaria_shared::wire::SearchHit;
use solaria_shared::{MachineId, UnixMillis};
use std::collections::HashMap;
use std::path::Path;

/// Who reads the text, and so how times and machines are written.
#[derive(Debug, Clone, Copy)]
pub enum Reader {
    /// A person at a terminal: short times relative to `now` (`14:03`, `11-20 14:03`),
    /// and a record's machine named only when it is not this one.
    Person { now: UnixMillis },
    /// An agent that cites its sources: full times (`2026-11-20 14:03`) and every
    /// machine named.
    Agent,
}

impl Reader {
    /// A record's time, as this reader is shown it.
    fn when(self, t: UnixMillis) -> String {
        match self {
            Reader::Person { now } => format!("{:<11}", timefmt::short(t, now)),
            Reader::Agent => timefmt::full(t),
        }
    }
}

/// Machine names by id, each looked up once; knows which machine is this one.
#[derive(Debug)]
pub struct MachineNames<'a> {
    conn: &'a rusqlite::Connection,
    me: MachineId,
    names: HashMap<MachineId, String>,
}

impl<'a> MachineNames<'a> {
    /// Names from the store behind `conn`, whose own machine is `me`.
    pub fn new(conn: &'a rusqlite::Connection, me: MachineId) -> MachineNames<'a> {
        MachineNames {
            conn,
            me,
            names: HashMap::new(),
        }
    }

    /// The name of machine `m` (its id when it has none).
    pub fn name(&mut self, m: MachineId) -> String {
        self.names
            .entry(m)
            .or_insert_with(|| records::machine_name(self.conn, m))
            .clone()
    }

    /// The name of the machine with id text `id` (the text itself when it is not an id).
    pub fn name_of(&mut self, id: &str) -> String {
        match id.parse::<MachineId>() {
            Ok(m) => self.name(m),
            Err(_) => id.to_string(),
        }
    }

    /// ` @name` after a line, or nothing when a person reads about this machine's
    /// own record. An id that does not parse is shown as it is to an agent.
    fn suffix(&mut self, id: &str, reader: Reader) -> String {
        match (id.parse::<MachineId>(), reader) {
            (Ok(m), Reader::Person { .. }) if m == self.me => String::new(),
            (Ok(m), _) => format!(" @{}", self.name(m)),
            (Err(_), Reader::Person { .. }) => String::new(),
            (Err(_), Reader::Agent) => format!(" @{id}"),
        }
    }
}

/// One line of the compact index: citation (`[O#id]`, or `[S#session]` for a
/// summary), time, type, title, `~tokens` to read it in full, project, machine.
pub fn index_line(hit: &Hit, reader: Reader, machines: &mut MachineNames<'_>) -> String {
    format!(
        "{} {} {:<8} {}  ~{}t  {}{}",
        citation(hit),
        reader.when(UnixMillis(hit.created_at)),
        hit.record_type.as_str(),
        hit.title,
        hit.tokens,
        hit.project_name,
        machines.suffix(&hit.machine_id, reader),
    )
}

/// How a hit is cited: `[O#id]`, or `[S#session]` for a summary (a summary is cited
/// by its session, like everywhere else).
pub fn citation(hit: &Hit) -> String {
    match hit.record_type {
        RecordType::Summary => format!("[S#{}]", hit.session_id),
        _ => format!("[O#{}]", hit.id),
    }
}

/// The line after a local search's index. `timeline` and `full` name how this
/// reader goes on: the command or tool that shows a record's surroundings, and the
/// one that fetches full records.
pub fn results_footer(count: usize, mode: SearchMode, timeline: &str, full: &str) -> String {
    format!(
        "{count} result(s), {mode} search. {timeline} shows what happened around one, {full} the full records."
    )
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

/// What a search of the central service that found nothing says.
pub fn no_remote_matches(server: &str, query: &str) -> String {
    format!("No matches on {server} for {query:?}.")
}

/// The facts `solaria stats --json` and `memory_stats` both report: the store's
/// counts, where it lives, this machine's id and the search status. Each caller
/// adds its own (the CLI the store's size, MCP the sync state).
pub fn stats_json(
    stats: &Stats,
    data_dir: &Path,
    machine_id: MachineId,
    search: &semantic::Status,
) -> serde_json::Result<serde_json::Value> {
    let mut v = serde_json::to_value(stats)?;
    v["data_dir"] = data_dir.display().to_string().into();
    v["machine_id"] = machine_id.to_string().into();
    v["search"] = serde_json::to_value(search)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(record_type: RecordType, machine: MachineId) -> Hit {
        Hit {
            id: "obs-1".into(),
            record_type,
            title: "cargo test renew_jwt".into(),
            project: "github.com/acme/api".into(),
            project_name: "api".into(),
            machine_id: machine.to_string(),
            session_id: "ses-1".into(),
            created_at: 1_700_000_000_000,
            tokens: 42,
            score: 1.0,
        }
    }

    fn names_db(me: MachineId, other: MachineId) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_in_memory().expect("in memory");
        conn.execute_batch("CREATE TABLE machines (id TEXT PRIMARY KEY, name TEXT)")
            .expect("table");
        for (id, name) in [(me, "laptop"), (other, "desktop")] {
            conn.execute(
                "INSERT INTO machines (id, name) VALUES (?1, ?2)",
                [id.to_string(), name.to_string()],
            )
            .expect("insert");
        }
        conn
    }

    #[test]
    fn a_person_sees_other_machines_and_an_agent_sees_every_machine() {
        let (me, other) = (MachineId::new(), MachineId::new());
        let conn = names_db(me, other);
        let mut names = MachineNames::new(&conn, me);
        let t = UnixMillis(1_700_000_000_000);
        let person = Reader::Person { now: t };

        let own = index_line(&hit(RecordType::ToolUse, me), person, &mut names);
        let short = timefmt::short(t, t);
        assert_eq!(
            own,
            format!("[O#obs-1] {short:<11} tool_use cargo test renew_jwt  ~42t  api")
        );
        let theirs = index_line(&hit(RecordType::Prompt, other), person, &mut names);
        assert!(theirs.ends_with("  ~42t  api @desktop"), "{theirs}");

        let agent = index_line(&hit(RecordType::ToolUse, me), Reader::Agent, &mut names);
        let full = timefmt::full(t);
        assert_eq!(
            agent,
            format!("[O#obs-1] {full} tool_use cargo test renew_jwt  ~42t  api @laptop")
        );
    }

    #[test]
    fn a_summary_is_cited_by_its_session() {
        let me = MachineId::new();
        let conn = names_db(me, MachineId::new());
        let mut names = MachineNames::new(&conn, me);
        let line = index_line(&hit(RecordType::Summary, me), Reader::Agent, &mut names);
        assert!(line.starts_with("[S#ses-1] "), "{line}");
    }

    #[test]
    fn an_unreadable_machine_id_is_shown_only_to_an_agent() {
        let conn = rusqlite::Connection::open_in_memory().expect("in memory");
        let mut names = MachineNames::new(&conn, MachineId::new());
        let mut h = hit(RecordType::Note, MachineId::new());
        h.machine_id = "elsewhere".into();
        let person = Reader::Person {
            now: UnixMillis(h.created_at),
        };
        assert!(index_line(&h, person, &mut names).ends_with("  api"));
        assert!(index_line(&h, Reader::Agent, &mut names).ends_with("  api @elsewhere"));
    }

    #[test]
    fn the_footer_names_the_readers_next_steps() {
        assert_eq!(
            results_footer(
                2,
                SearchMode::Hybrid,
                "`solaria timeline ID`",
                "`solaria show ID…`"
            ),
            "2 result(s), hybrid search. `solaria timeline ID` shows what happened around one, `solaria show ID…` the full records."
        );
    }
}
