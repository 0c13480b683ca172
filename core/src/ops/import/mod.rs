//! `solaria import`: memory brought in from a file. Each source reads its own
//! format into records (`solaria.rs`: a SOLARIA export; `claude_mem.rs`:
//! claude-mem's database; `claude_md.rs`: Claude Code's memory files;
//! `engram.rs`: engram's export or sync chunks); then every record takes the one path here, the same rules as what is captured or received: private
//! spans stripped and secrets redacted (`WireRecord::cleaned`), long texts
//! bounded as capture bounds them, projects never captured skipped, stamps far
//! ahead of this clock refused; then a SOLARIA export's records keep their
//! machines and versions and meet what is held by last-write-wins, and another
//! tool's become this machine's, with ids the source decides and a version
//! stamped only where the source changed. Either way a second import of the same
//! file stores nothing. The whole file is read and
//! checked before the first write: a malformed one changes nothing. Records are
//! applied a batch per transaction.

pub mod claude_md;
pub mod claude_mem;
pub mod engram;
pub mod solaria;

use super::OpResult;
use super::export::kind_name;
use crate::app::App;
use crate::present::portable::ImportReport;
use crate::store::imported::Imported;
use crate::store::sync::{self as store_sync, Applied, PUSH_CURSOR_KEY};
use solaria_shared::UnixMillis;
use solaria_shared::hlc::MAX_DRIFT_MS;
use solaria_shared::private::bound_text;
use solaria_shared::wire::{MachineName, WireRecord};

/// Records applied per transaction: a batch is all or nothing, and a long
/// import lets hooks write between its batches.
const BATCH: usize = 500;

/// Whose the records read are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Owner {
    /// As written: each keeps its machine and version, and meets what is held by
    /// last-write-wins (a SOLARIA export).
    #[default]
    AsWritten,
    /// This machine's: another tool's memory, stamped here where it changed.
    ThisMachine,
}

/// The id a source's record always gets: a UUIDv5 of the source and the parts
/// that name the record there (a table and a row, a file and its text).
pub fn stable_id(source: &str, parts: &[&str]) -> uuid::Uuid {
    const NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x8c3e_51d7_2b4a_4f09_a6e1_d25c_7f30_b948);
    let mut name = source.to_string();
    for part in parts {
        name.push('\n');
        name.push_str(part);
    }
    uuid::Uuid::new_v5(&NAMESPACE, name.as_bytes())
}

/// Another tool names a project by its directory's name; SOLARIA keys it by its
/// repository. A name this memory already knows (from a session or knowledge),
/// or the current directory's project when it has that name, is that project;
/// any other keeps the name as its key (importing again after SOLARIA has seen
/// the project moves its records there).
pub(crate) struct ProjectNames<'a> {
    store: &'a crate::store::Store,
    current: solaria_shared::Project,
    found: std::collections::HashMap<String, solaria_shared::Project>,
}

impl<'a> ProjectNames<'a> {
    pub(crate) fn new(store: &'a crate::store::Store, current: solaria_shared::Project) -> Self {
        ProjectNames {
            store,
            current,
            found: Default::default(),
        }
    }

    /// The project named `name`.
    pub(crate) fn of(&mut self, name: &str) -> OpResult<solaria_shared::Project> {
        if let Some(p) = self.found.get(name) {
            return Ok(p.clone());
        }
        let known = crate::store::records::matching_projects(self.store.conn(), name)?;
        let project = match known.into_iter().next() {
            Some(p) => p,
            None if self.current.name == name => self.current.clone(),
            None => solaria_shared::Project {
                key: name.to_string(),
                name: name.to_string(),
            },
        };
        self.found.insert(name.to_string(), project.clone());
        Ok(project)
    }
}

/// Records read from a source, ready for the one import path.
#[derive(Debug, Default)]
pub struct Incoming {
    /// What was imported (`solaria`, `claude-mem`…).
    pub source: String,
    /// The file read.
    pub path: String,
    /// Names of the machines the records name.
    pub machines: Vec<MachineName>,
    pub records: Vec<WireRecord>,
    pub owner: Owner,
    /// Whose the file is when not this person's (`--from`, a handle): the
    /// machines it names without a person become that person's.
    pub from_person: Option<String>,
    /// Vectors beside the records (a SOLARIA export's, `--vectors`).
    pub vectors: Vec<solaria_shared::embedding::WireEmbedding>,
    /// What the source held that could not become a record, each `where: why`.
    pub skipped: Vec<String>,
}

/// How far an import got: records applied so far, of all.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

/// What became of one record.
enum Outcome {
    Received(Applied),
    Own(Imported),
}

/// Why a record, read well, is not stored; `None` when it may be.
fn refused(app: &App, record: &WireRecord, now: UnixMillis) -> Option<String> {
    let project = record.project();
    let skipped = &app.config.capture.skip_projects;
    if skipped
        .iter()
        .any(|p| *p == project.key || *p == project.name)
    {
        return Some(format!(
            "project {} is never captured here (`[capture] skip_projects`)",
            project.name
        ));
    }
    let ahead = record.updated().physical_ms() as i64 - now.0;
    if ahead > MAX_DRIFT_MS as i64 {
        return Some(format!(
            "its version stamp is {} s ahead of this machine's clock; a file from a machine whose clock ran ahead",
            ahead / 1000
        ));
    }
    None
}

/// Long texts cut as capture cuts them (`[capture] max_input_bytes`,
/// `max_response_bytes`), and a knowledge record's fields as a written one's
/// (`ops::knowledge::MAX_FIELD_CHARS`), so an import stores nothing a session or a
/// person could not.
fn bounded(app: &App, record: WireRecord) -> WireRecord {
    let bounds = &app.config.capture;
    match record {
        WireRecord::Observation(mut o) => {
            o.input = bound_text(&o.input, bounds.max_input_bytes).0;
            o.response = bound_text(&o.response, bounds.max_response_bytes).0;
            WireRecord::Observation(o)
        }
        WireRecord::Summary(mut s) => {
            s.text = bound_text(&s.text, bounds.max_response_bytes).0;
            WireRecord::Summary(s)
        }
        WireRecord::Knowledge(mut k) => {
            k.map_user_text(&mut |t| {
                t.chars()
                    .take(crate::ops::knowledge::MAX_FIELD_CHARS)
                    .collect()
            });
            WireRecord::Knowledge(k)
        }
        other => other,
    }
}

/// Applies what a source read: the one path every import ends in.
pub fn apply(
    app: &App,
    incoming: Incoming,
    progress: &mut dyn FnMut(Progress),
) -> OpResult<ImportReport> {
    let now = UnixMillis::now();
    let mut report = ImportReport {
        source: incoming.source,
        path: incoming.path,
        skipped: incoming.skipped,
        ..ImportReport::default()
    };
    let owner = incoming.owner;
    let mut ready = Vec::with_capacity(incoming.records.len());
    for record in incoming.records {
        let record = bounded(app, record.cleaned());
        match refused(app, &record, now) {
            Some(why) => report.skipped.push(format!("{}: {why}", record.id())),
            None => ready.push(record),
        }
    }
    let mut store = app.store()?;
    let learned =
        store.write(|w| learn_machines(w, &incoming.machines, incoming.from_person.as_deref()))?;
    report.labelled_as_yours = learned.yours;
    report.kept_as_the_account_says = learned.kept;
    let total = ready.len();
    let mut done = 0;
    for batch in ready.chunks(BATCH) {
        let push_cursor = store_sync::cursor(store.conn(), PUSH_CURSOR_KEY)?;
        let outcomes = store.write(|w| {
            batch
                .iter()
                .map(|r| match owner {
                    Owner::AsWritten => w
                        .apply_remote(std::slice::from_ref(r), push_cursor)
                        .map(Outcome::Received),
                    Owner::ThisMachine => w.import_own(r.clone()).map(Outcome::Own),
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        for (record, outcome) in batch.iter().zip(outcomes) {
            let counts = match outcome {
                Outcome::Received(a) if a.stored > 0 => {
                    report.conflicts += a.conflicts;
                    &mut report.stored
                }
                Outcome::Received(a) if a.ignored > 0 => &mut report.unchanged,
                Outcome::Received(a) => {
                    report.skipped.extend(a.refused);
                    continue;
                }
                Outcome::Own(Imported::New) => &mut report.stored,
                Outcome::Own(Imported::Updated) => &mut report.updated,
                Outcome::Own(Imported::Unchanged) => &mut report.unchanged,
                Outcome::Own(Imported::Forgotten) => {
                    report.skipped.push(format!(
                        "{}: forgotten here; an import never brings it back",
                        record.id()
                    ));
                    continue;
                }
                Outcome::Own(Imported::Theirs) => {
                    report.skipped.push(format!(
                        "{}: a teammate's record (they imported it first); only they change it",
                        record.id()
                    ));
                    continue;
                }
            };
            *counts.entry(kind_name(record)).or_default() += 1;
        }
        done += batch.len();
        progress(Progress { done, total });
    }
    if !incoming.vectors.is_empty() {
        vectors(app, &mut store, &incoming.vectors, &mut report)?;
    }
    Ok(report)
}

/// What an import learned of the machines its file names.
#[derive(Default)]
struct MachinesLearned {
    /// New here, and read as this person's (named without a person, no `--from`).
    yours: Vec<String>,
    /// Named by `--from` as the file's writer's, but the account named them
    /// (this machine among them): they stay as the account says.
    kept: Vec<String>,
}

/// Learns the names of the machines a file names, and whose each is: a teammate's
/// as the file says; one it names without a person is the file's writer's own
/// person's, so `from`'s (`--from`) when given, else this person's. What the
/// account said of a machine (or this store of itself) stands over a file either
/// way (`Writer::tell_machine_person`).
fn learn_machines(
    w: &mut crate::store::Writer<'_>,
    machines: &[MachineName],
    from: Option<&str>,
) -> Result<MachinesLearned, crate::store::StoreError> {
    let mut learned = MachinesLearned::default();
    for machine in machines {
        match (&machine.person, from) {
            (None, Some(person)) => {
                let told = w.tell_machine_person(&MachineName {
                    person: Some(person.to_string()),
                    ..machine.clone()
                })?;
                if !told {
                    learned.kept.push(machine.name.clone());
                }
            }
            (person, _) => {
                if w.learn_machine_name(machine)? && person.is_none() {
                    learned.yours.push(machine.name.clone());
                }
            }
        }
    }
    Ok(learned)
}

/// Stores the vectors that came beside the records, as a pull stores them
/// (`vectors_wire::store_pulled`): made by this index's model from the version
/// of the record held here.
fn vectors(
    app: &App,
    store: &mut crate::store::Store,
    vectors: &[solaria_shared::embedding::WireEmbedding],
    report: &mut ImportReport,
) -> OpResult<()> {
    // The tables made fit for the installed model first, as before a pull: a
    // machine that never embedded anything takes the vectors all the same.
    let _ = crate::semantic::ready_for_pulled_vectors(&app.config, &app.paths, store);
    let Some(model) = crate::store::vectors::index_model(store.conn())? else {
        report.vectors_not_stored.push(format!(
            "{} vector(s) not stored: no embedding model here (`solaria model install`, then import again)",
            vectors.len()
        ));
        return Ok(());
    };
    let centre = crate::store::vectors::centre(store.conn())?.unwrap_or_default();
    for batch in vectors.chunks(BATCH) {
        let pulled = store
            .write(|w| crate::store::vectors_wire::store_pulled(w.tx(), &model, &centre, batch))?;
        report.vectors_stored += pulled.stored;
        if pulled.other_model > 0 {
            report.vectors_not_stored.push(format!(
                "{} vector(s) of another model than this machine's: their records wait for the embedding pass",
                pulled.other_model
            ));
        }
        report.vectors_not_stored.extend(pulled.refused);
    }
    Ok(())
}
