//! Every record of the store read whole, for an export: the four synced tables in
//! the order an import applies them (sessions before what names them), each
//! oldest version first, within a project and time selection.

use super::StoreError;
use super::knowledge::{KNOWLEDGE_COLUMNS, knowledge_from_row};
use super::records::{
    OBSERVATION_COLUMNS, SESSION_COLUMNS, SUMMARY_COLUMNS, observation_from_row, session_from_row,
    summary_from_row,
};
use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};
use solaria_shared::wire::{MachineName, WireRecord};
use solaria_shared::{Hlc, UnixMillis};

/// Which records an export holds.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Only these projects (their keys); every project when `None`.
    pub projects: Option<Vec<String>>,
    /// Never these projects (keys or names: the local-only ones).
    pub except: Vec<String>,
    /// Only versions written at or after this time: what changed since.
    pub since: Option<UnixMillis>,
    /// Tombstones too (erased and forgotten records, without their content), so
    /// an import forgets what was forgotten here.
    pub tombstones: bool,
}

impl Selection {
    /// The `WHERE` clause every table shares, and its arguments.
    fn filter(&self) -> (String, Vec<Value>) {
        let mut clauses = vec!["1 = 1".to_string()];
        let mut args: Vec<Value> = Vec::new();
        if let Some(projects) = &self.projects {
            let marks = vec!["?"; projects.len()].join(", ");
            clauses.push(format!("project_key IN ({marks})"));
            args.extend(projects.iter().cloned().map(Value::Text));
        }
        if !self.except.is_empty() {
            let marks = vec!["?"; self.except.len()].join(", ");
            clauses.push(format!(
                "NOT (project_key IN ({marks}) OR project_name IN ({marks}))"
            ));
            for _ in 0..2 {
                args.extend(self.except.iter().cloned().map(Value::Text));
            }
        }
        if let Some(since) = self.since {
            clauses.push("updated >= ?".to_string());
            let from = Hlc::new(since.0.max(0) as u64, 0);
            args.push(Value::Integer(from.as_i64()));
        }
        if !self.tombstones {
            clauses.push("deleted = 0".to_string());
        }
        (clauses.join(" AND "), args)
    }
}

/// Hands every selected record to `each`, sessions first, then observations,
/// summaries and knowledge, each table oldest version first. Stops at the first
/// error `each` returns.
pub fn each_record<E: From<StoreError>>(
    conn: &Connection,
    selection: &Selection,
    mut each: impl FnMut(WireRecord) -> Result<(), E>,
) -> Result<(), E> {
    let (filter, args) = selection.filter();
    let tables: [(&str, &str); 4] = [
        ("sessions", SESSION_COLUMNS),
        ("observations", OBSERVATION_COLUMNS),
        ("summaries", SUMMARY_COLUMNS),
        ("knowledge", KNOWLEDGE_COLUMNS),
    ];
    for (table, columns) in tables {
        // A placeholder session (stamped 0, known only from records pulled before
        // it) is no record of its own: its records name it and an import makes it
        // again.
        let placeholder = if table == "sessions" {
            " AND updated > 0"
        } else {
            ""
        };
        let sql =
            format!("SELECT {columns} FROM {table} WHERE {filter}{placeholder} ORDER BY updated");
        let mut stmt = conn.prepare(&sql).map_err(StoreError::from)?;
        let mut rows = stmt
            .query(params_from_iter(args.iter()))
            .map_err(StoreError::from)?;
        while let Some(row) = rows.next().map_err(StoreError::from)? {
            let record = match table {
                "sessions" => WireRecord::Session(session_from_row(row).map_err(StoreError::from)?),
                "observations" => {
                    WireRecord::Observation(observation_from_row(row).map_err(StoreError::from)?)
                }
                "summaries" => {
                    WireRecord::Summary(summary_from_row(row).map_err(StoreError::from)?)
                }
                _ => WireRecord::Knowledge(knowledge_from_row(row).map_err(StoreError::from)?),
            };
            each(record)?;
        }
    }
    Ok(())
}

/// The names of the projects `except` (keys or names) leaves out, among those
/// the store holds records of.
pub fn left_out(conn: &Connection, except: &[String]) -> Result<Vec<String>, StoreError> {
    if except.is_empty() {
        return Ok(Vec::new());
    }
    let marks = vec!["?"; except.len()].join(", ");
    let each = super::SYNCED_TABLES
        .iter()
        .map(|t| {
            format!(
                "SELECT project_name FROM {t}
                 WHERE deleted = 0 AND (project_key IN ({marks}) OR project_name IN ({marks}))"
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ");
    let args: Vec<&String> = (0..2 * super::SYNCED_TABLES.len())
        .flat_map(|_| except.iter())
        .collect();
    let mut stmt = conn.prepare(&format!("{each} ORDER BY 1"))?;
    let names = stmt.query_map(params_from_iter(args), |r| r.get::<_, String>(0))?;
    Ok(names.collect::<Result<_, _>>()?)
}

/// The machines the store knows by name, with whose each is when a teammate's.
pub fn machines(conn: &Connection) -> Result<Vec<MachineName>, StoreError> {
    let mut stmt = conn.prepare("SELECT id, name, person FROM machines ORDER BY name, id")?;
    let rows = stmt.query_map([], |row| {
        Ok(MachineName {
            id: super::records::id_col(row, 0)?,
            name: row.get(1)?,
            person: row.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl super::Writer<'_> {
    /// Learns a machine's name and person from an imported file, unless the store
    /// already knows the machine (what this store was told by its own account, or
    /// is itself, stands over what a file says). True when it was new here.
    pub fn learn_machine_name(&mut self, machine: &MachineName) -> Result<bool, StoreError> {
        let added = self.tx().execute(
            "INSERT INTO machines (id, name, person, told_by) VALUES (?1, ?2, ?3, 'file')
             ON CONFLICT (id) DO NOTHING",
            rusqlite::params![machine.id.to_string(), machine.name, machine.person],
        )?;
        Ok(added > 0)
    }

    /// Says whose machine `machine` is, as a person importing a file tells it
    /// (`import solaria --from`): over what a file said before, never over what
    /// the account said (nor for this store's own machine, which its account
    /// named). True when the store now reads it so.
    pub fn tell_machine_person(&mut self, machine: &MachineName) -> Result<bool, StoreError> {
        let told = self.tx().execute(
            "INSERT INTO machines (id, name, person, told_by) VALUES (?1, ?2, ?3, 'file')
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, person = excluded.person
             WHERE machines.told_by = 'file'",
            rusqlite::params![machine.id.to_string(), machine.name, machine.person],
        )?;
        Ok(told > 0)
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::records::machine_writer;
    use solaria_shared::MachineId;
    use solaria_shared::wire::MachineName;

    fn named(id: MachineId, name: &str, person: Option<&str>) -> MachineName {
        MachineName {
            id,
            name: name.into(),
            person: person.map(str::to_string),
        }
    }

    #[test]
    fn a_file_never_relabels_what_the_account_named_and_a_person_may_mend_what_a_file_said() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "bo-desktop").expect("opens");
        let (mine, own_laptop, hers) = (store.machine_id(), MachineId::new(), MachineId::new());
        let said = store
            .write(|w| {
                // The account named Bo's laptop as his (a sync).
                w.set_machine_name(&named(own_laptop, "bo-laptop", None))?;
                // A file named Ana's machine without a person: read as Bo's.
                let learned = w.learn_machine_name(&named(hers, "ana-laptop", None))?;
                // Then the person says whose each machine of a file is.
                let told = [mine, own_laptop, hers]
                    .map(|m| w.tell_machine_person(&named(m, "renamed", Some("mallory"))));
                Ok((learned, told))
            })
            .expect("written");
        let (learned, [this, laptop, ana]) = said;
        assert!(learned, "a machine new here is learned from a file");
        assert!(
            !this.expect("told") && !laptop.expect("told"),
            "the account's word stands"
        );
        assert!(ana.expect("told"), "a file's word is mended");
        let conn = store.conn();
        assert_eq!(machine_writer(conn, mine), named(mine, "bo-desktop", None));
        assert_eq!(
            machine_writer(conn, own_laptop),
            named(own_laptop, "bo-laptop", None)
        );
        assert_eq!(
            machine_writer(conn, hers),
            named(hers, "renamed", Some("mallory"))
        );
        // A sync says it again, over the file's word.
        store
            .write(|w| w.set_machine_name(&named(hers, "ana-laptop", Some("ana"))))
            .expect("synced");
        assert_eq!(
            machine_writer(store.conn(), hers),
            named(hers, "ana-laptop", Some("ana"))
        );
        let told = store
            .write(|w| w.tell_machine_person(&named(hers, "x", Some("mallory"))))
            .expect("told");
        assert!(!told, "once the account named it, a file no longer can");
    }
}
