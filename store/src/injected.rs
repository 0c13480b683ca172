//! What each agent session was handed (the `injections` tables, migration 0015): the
//! context at its start and what each prompt recalled, as the citations of the
//! records in it, so the viewer can say why an agent knew something.

use super::{StoreError, Writer};
use rusqlite::{Connection, params};
use solaria_shared::{Citation, ObservationId, SessionId, UnixMillis};

/// Injections are kept this long.
const KEPT_MS: i64 = 90 * 86_400_000;

/// What was handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handed {
    /// The context at a session's start (or again after a compaction).
    Context,
    /// What a prompt recalled: that prompt's observation.
    Recall { prompt: ObservationId },
}

/// One injection into a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    pub session: SessionId,
    pub handed: Handed,
    pub at: UnixMillis,
    /// The records cited in it, in the order the agent read them.
    pub cited: Vec<Citation>,
}

/// Records that `session` was handed `cited` at `at`, in `w`'s transaction, and
/// drops what was handed longer ago than the injections are kept.
pub fn record(
    w: &mut Writer<'_>,
    session: SessionId,
    handed: Handed,
    cited: &[Citation],
    at: UnixMillis,
) -> Result<(), StoreError> {
    if cited.is_empty() {
        return Ok(());
    }
    let (kind, prompt) = match handed {
        Handed::Context => ("context", None),
        Handed::Recall { prompt } => ("recall", Some(prompt.to_string())),
    };
    let tx = w.tx();
    tx.execute(
        "INSERT INTO injections (session_id, kind, prompt_id, at) VALUES (?1, ?2, ?3, ?4)",
        params![session.to_string(), kind, prompt, at.0],
    )?;
    let id = tx.last_insert_rowid();
    for (position, cite) in cited.iter().enumerate() {
        tx.execute(
            "INSERT INTO injected_records (injection_id, position, cite) VALUES (?1, ?2, ?3)",
            params![id, position as i64, cite.to_string()],
        )?;
    }
    tx.execute("DELETE FROM injections WHERE at < ?1", [at.0 - KEPT_MS])?;
    Ok(())
}

/// What `session` was handed, oldest first.
pub fn of_session(conn: &Connection, session: SessionId) -> Result<Vec<Injection>, StoreError> {
    read(
        conn,
        "SELECT id, session_id, kind, prompt_id, at FROM injections
         WHERE session_id = ?1 ORDER BY at, id",
        &session.to_string(),
    )
}

/// The injections that handed `cite` to a session, newest first (at most `limit`).
pub fn handing(
    conn: &Connection,
    cite: &Citation,
    limit: usize,
) -> Result<Vec<Injection>, StoreError> {
    let mut found = read(
        conn,
        "SELECT i.id, i.session_id, i.kind, i.prompt_id, i.at FROM injections i
         WHERE i.id IN (SELECT injection_id FROM injected_records WHERE cite = ?1)
         ORDER BY i.at DESC, i.id DESC",
        &cite.to_string(),
    )?;
    found.truncate(limit);
    Ok(found)
}

fn read(conn: &Connection, sql: &str, key: &str) -> Result<Vec<Injection>, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let heads: Vec<(i64, String, String, Option<String>, i64)> = stmt
        .query_map([key], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut cites = conn.prepare_cached(
        "SELECT cite FROM injected_records WHERE injection_id = ?1 ORDER BY position",
    )?;
    let mut out = Vec::with_capacity(heads.len());
    for (id, session, kind, prompt, at) in heads {
        let (Ok(session), handed) = (
            session.parse::<SessionId>(),
            match (kind.as_str(), prompt.and_then(|p| p.parse().ok())) {
                ("recall", Some(prompt)) => Some(Handed::Recall { prompt }),
                ("context", _) => Some(Handed::Context),
                _ => None,
            },
        ) else {
            continue;
        };
        let Some(handed) = handed else { continue };
        let cited = cites
            .query_map([id], |r| r.get::<_, String>(0))?
            .filter_map(|c| c.ok().and_then(|c| c.parse().ok()))
            .collect();
        out.push(Injection {
            session,
            handed,
            at: UnixMillis(at),
            cited,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use solaria_shared::KnowledgeId;

    const DAY_MS: i64 = 86_400_000;

    #[test]
    fn a_session_reads_what_it_was_handed_and_a_record_where_it_went() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("store");
        let now = UnixMillis(1_800_000_000_000);
        let (one, two) = (SessionId::new(), SessionId::new());
        let decision = Citation::new(solaria_shared::CitedKind::Decision, KnowledgeId::new());
        let earlier = Citation::session(SessionId::new());
        let prompt = ObservationId::new();
        store
            .write(|w| {
                record(
                    w,
                    one,
                    Handed::Context,
                    &[decision.clone(), earlier.clone()],
                    now,
                )?;
                record(
                    w,
                    one,
                    Handed::Recall { prompt },
                    std::slice::from_ref(&decision),
                    UnixMillis(now.0 + 1),
                )?;
                record(
                    w,
                    two,
                    Handed::Context,
                    std::slice::from_ref(&earlier),
                    UnixMillis(now.0 + 2),
                )?;
                // Nothing handed: nothing recorded.
                record(
                    w,
                    two,
                    Handed::Recall { prompt },
                    &[],
                    UnixMillis(now.0 + 3),
                )
            })
            .expect("write");
        let handed = of_session(store.conn(), one).expect("read");
        assert_eq!(handed.len(), 2);
        assert_eq!(handed[0].handed, Handed::Context);
        assert_eq!(
            handed[0].cited,
            vec![decision.clone(), earlier.clone()],
            "in reading order"
        );
        assert_eq!(handed[1].handed, Handed::Recall { prompt });
        assert_eq!(of_session(store.conn(), two).expect("read").len(), 1);

        let went = handing(store.conn(), &decision, 10).expect("read");
        assert_eq!(went.len(), 2);
        assert_eq!(went[0].handed, Handed::Recall { prompt }, "newest first");
        assert!(went.iter().all(|i| i.session == one));
        assert_eq!(
            handing(store.conn(), &earlier, 1).expect("read").len(),
            1,
            "bounded"
        );
    }

    #[test]
    fn what_was_handed_is_kept_ninety_days() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("store");
        let then = UnixMillis(1_800_000_000_000);
        let old = SessionId::new();
        let cite = Citation::session(SessionId::new());
        store
            .write(|w| record(w, old, Handed::Context, std::slice::from_ref(&cite), then))
            .expect("write");
        let later = UnixMillis(then.0 + 91 * DAY_MS);
        store
            .write(|w| {
                record(
                    w,
                    SessionId::new(),
                    Handed::Context,
                    std::slice::from_ref(&cite),
                    later,
                )
            })
            .expect("write");
        assert!(of_session(store.conn(), old).expect("read").is_empty());
        assert_eq!(handing(store.conn(), &cite, 10).expect("read").len(), 1);
        let orphans: i64 = store
            .conn()
            .query_row(
                "SELECT count(*) FROM injected_records WHERE injection_id NOT IN (SELECT id FROM injections)",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!(orphans, 0, "its records go with it");
    }
}
