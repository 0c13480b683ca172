//! Records this machine imports from another tool's memory, written as its own:
//! each has an id its source decides (the same row of the same file is always the
//! same record), so an import run again finds what it wrote and stores a new
//! version only where the source changed.

use super::sync::local_version;
use super::{StoreError, Writer};
use solaria_shared::wire::WireRecord;

/// What became of an imported record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// Not held before: stored.
    New,
    /// Held, and the source changed it since: a new version stored.
    Updated,
    /// Held as the source has it: nothing written.
    Unchanged,
    /// Held and erased or forgotten here: an import never brings it back.
    Forgotten,
    /// Held as a teammate's record (the same file imported on their machine
    /// first): only its author changes it.
    Theirs,
}

impl Writer<'_> {
    /// Stores `record`, this machine's, as the source has it now. Its version
    /// stamp is drawn here, and only when something is written, so a second run
    /// over the same source changes nothing, not even a stamp.
    pub fn import_own(&mut self, mut record: WireRecord) -> Result<Imported, StoreError> {
        let held = local_version(self, &record)?;
        let outcome = match &held {
            None => Imported::New,
            Some(h) if h.meta().deleted => return Ok(Imported::Forgotten),
            Some(h) => {
                let mut same = record.clone();
                *meta_mut(&mut same) = *h.meta();
                if &same == h {
                    return Ok(Imported::Unchanged);
                }
                if super::records::teammate(self.tx(), h.machine_id())?.is_some() {
                    return Ok(Imported::Theirs);
                }
                Imported::Updated
            }
        };
        let meta = meta_mut(&mut record);
        meta.machine_id = self.machine_id();
        meta.updated = self.tick();
        meta.deleted = false;
        match &record {
            WireRecord::Session(s) => self.put_session(s)?,
            WireRecord::Observation(o) => self.put_observation(o)?,
            WireRecord::Summary(s) => self.put_summary(s)?,
            WireRecord::Knowledge(k) => self.put_knowledge(k)?,
        }
        Ok(outcome)
    }
}

fn meta_mut(record: &mut WireRecord) -> &mut solaria_shared::RecordMeta {
    match record {
        WireRecord::Session(s) => &mut s.meta,
        WireRecord::Observation(o) => &mut o.meta,
        WireRecord::Summary(s) => &mut s.meta,
        WireRecord::Knowledge(k) => &mut k.meta,
    }
}
