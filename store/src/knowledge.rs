//! Reading and writing knowledge records (decisions, memories, links, commits,
//! iterations, events): one table for every kind, the body as JSON, the columns
//! lists and search need derived from it here and nowhere else.

use super::records::{id_col, meta};
use super::{StoreError, Writer, scope};
use rusqlite::{Connection, OptionalExtension, Row, params};
use solaria_shared::knowledge::{IterationStatus, KnowledgeBody, SHORT_ID_CHARS};
use solaria_shared::redact::redact;
use solaria_shared::{Knowledge, KnowledgeId, KnowledgeKind, Project, SessionId, UnixMillis};

/// The columns [`knowledge_from_row`] maps.
pub(crate) const KNOWLEDGE_COLUMNS: &str = "id, machine_id, updated, deleted, project_key, \
    project_name, session_id, kind, body, created_at, written_by";

/// Maps a row selected with [`KNOWLEDGE_COLUMNS`]. A body that does not parse (a
/// damaged row) fails the row rather than inventing content.
pub(crate) fn knowledge_from_row(row: &Row<'_>) -> rusqlite::Result<Knowledge> {
    let bad = |idx: usize, e: Box<dyn std::error::Error + Send + Sync>| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, e)
    };
    let kind: KnowledgeKind = row
        .get::<_, String>(7)?
        .parse()
        .map_err(|e| bad(7, Box::new(e)))?;
    let fields: serde_json::Value =
        serde_json::from_str(&row.get::<_, String>(8)?).map_err(|e| bad(8, Box::new(e)))?;
    let body = KnowledgeBody::from_fields(kind, fields).map_err(|e| bad(8, Box::new(e)))?;
    let session: Option<String> = row.get(6)?;
    Ok(Knowledge {
        id: id_col(row, 0)?,
        meta: meta(row)?,
        project: Project {
            key: row.get(4)?,
            name: row.get(5)?,
        },
        session_id: session.and_then(|s| s.parse::<SessionId>().ok()),
        written_by: row
            .get::<_, String>(10)?
            .parse()
            .map_err(|e| bad(10, Box::new(e)))?,
        created_at: UnixMillis(row.get(9)?),
        body,
    })
}

impl Writer<'_> {
    /// Stores a version as it is (a pulled one, or one this machine just stamped),
    /// replacing the row of the same id. Which version wins is the caller's
    /// question (`RecordMeta::replaces`).
    pub fn put_knowledge(&mut self, k: &Knowledge) -> Result<(), StoreError> {
        let (link_from, link_to) = match &k.body {
            KnowledgeBody::Link(l) => (l.from.map(|i| i.to_string()), l.to.map(|i| i.to_string())),
            _ => (None, None),
        };
        let iteration = match &k.body {
            KnowledgeBody::Decision(d) => d.iteration,
            KnowledgeBody::Commit(c) => c.iteration,
            KnowledgeBody::Event(e) => e.iteration,
            _ => None,
        };
        let sha = match &k.body {
            KnowledgeBody::Commit(c) => c.sha.clone(),
            _ => String::new(),
        };
        self.tx().execute(
            &format!(
                "INSERT INTO knowledge ({KNOWLEDGE_COLUMNS}, status, title, text, sha, link_from,
                     link_to, iteration, scope)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
                 ON CONFLICT (id) DO UPDATE SET machine_id = excluded.machine_id,
                     updated = excluded.updated, deleted = excluded.deleted,
                     project_key = excluded.project_key, project_name = excluded.project_name,
                     session_id = excluded.session_id, kind = excluded.kind, body = excluded.body,
                     created_at = excluded.created_at, written_by = excluded.written_by,
                     status = excluded.status,
                     title = excluded.title, text = excluded.text, sha = excluded.sha,
                     link_from = excluded.link_from, link_to = excluded.link_to,
                     iteration = excluded.iteration, scope = excluded.scope"
            ),
            params![
                k.id.to_string(),
                k.meta.machine_id.to_string(),
                k.meta.updated.as_i64(),
                k.meta.deleted as i64,
                k.project.key,
                k.project.name,
                k.session_id.map(|s| s.to_string()),
                k.kind().as_str(),
                k.body.fields().to_string(),
                k.created_at.0,
                k.written_by.to_string(),
                k.status(),
                k.title(),
                k.search_text(),
                sha,
                link_from,
                link_to,
                iteration.map(|i| i.to_string()),
                scope::knowledge(&k.project.key, k.kind(), k.meta.machine_id),
            ],
        )?;
        self.settle_supersession(k)
    }

    /// Supersession across people (`Knowledge::mark_superseded_by`) around `k`,
    /// just stored: the record it replaces is marked superseded, or `k` is when a
    /// record here replaces it (it arrived after its replacement), each only when
    /// the replacing record's writer may see the one it replaces
    /// (`super::sight`). Only the body and status change, never the version:
    /// every node derives the same mark.
    fn settle_supersession(&mut self, k: &Knowledge) -> Result<(), StoreError> {
        let sight = super::sight::Sight::of(self.tx())?;
        if let Some(old) = k.replaces()
            && let Some(mut old) = get_knowledge(self.tx(), old)?
            && sight.writer_sees(self.tx(), k.meta.machine_id, &old)?
            && old.mark_superseded_by(k)
        {
            self.rewrite_standing(&old)?;
        }
        if k.meta.deleted || !matches!(k.kind(), KnowledgeKind::Decision | KnowledgeKind::Memory) {
            return Ok(());
        }
        // The first record here that replaces `k`, by someone who may see it.
        let replacing: Vec<String> = self
            .tx()
            .prepare_cached(
                // `+kind`: by the index of what each record supersedes
                // (migration 0019), never by reading every record of the kind.
                "SELECT id FROM knowledge WHERE deleted = 0 AND +kind = ?2
                   AND json_extract(body, '$.supersedes') = ?1 ORDER BY created_at",
            )?
            .query_map(params![k.id.to_string(), k.kind().as_str()], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for id in replacing
            .iter()
            .filter_map(|id| id.parse::<KnowledgeId>().ok())
        {
            let Some(by) = get_knowledge(self.tx(), id)? else {
                continue;
            };
            if sight.writer_sees(self.tx(), by.meta.machine_id, k)? {
                let mut marked = k.clone();
                if marked.mark_superseded_by(&by) {
                    self.rewrite_standing(&marked)?;
                }
                break;
            }
        }
        Ok(())
    }

    /// Writes `k`'s body and status as they are now, its version unchanged.
    fn rewrite_standing(&mut self, k: &Knowledge) -> Result<(), StoreError> {
        self.tx().execute(
            "UPDATE knowledge SET body = ?2, status = ?3 WHERE id = ?1",
            params![k.id.to_string(), k.body.fields().to_string(), k.status()],
        )?;
        Ok(())
    }

    /// Writes a new knowledge record of this machine, stamped now. Its text is
    /// redacted first, as captured events are: no secret reaches the file
    /// (`<private>` spans stay here; they are stripped from what leaves). It is
    /// attributed to the store's writer (`Store::written_by`).
    pub fn record_knowledge(
        &mut self,
        id: KnowledgeId,
        project: &Project,
        session: Option<SessionId>,
        body: KnowledgeBody,
    ) -> Result<Knowledge, StoreError> {
        let stamp = self.tick();
        let mut k = Knowledge::new(id, self.machine_id(), stamp, project.clone(), session, body);
        k.written_by = self.writer().clone();
        k.map_user_text(&mut |t| redact(t).into_owned());
        self.put_knowledge(&k)?;
        Ok(k)
    }

    /// Writes a new version of `k` with `body`, stamped now by this machine.
    pub fn revise_knowledge(
        &mut self,
        k: &Knowledge,
        body: KnowledgeBody,
    ) -> Result<Knowledge, StoreError> {
        let stamp = self.tick();
        let mut next = k.clone();
        next.meta.machine_id = self.machine_id();
        next.meta.updated = stamp;
        next.body = body;
        next.map_user_text(&mut |t| redact(t).into_owned());
        self.put_knowledge(&next)?;
        Ok(next)
    }
}

/// One knowledge record by id (tombstones included).
pub fn get_knowledge(conn: &Connection, id: KnowledgeId) -> Result<Option<Knowledge>, StoreError> {
    let sql = format!("SELECT {KNOWLEDGE_COLUMNS} FROM knowledge WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id.to_string()], knowledge_from_row)
        .optional()?)
}

/// The live records a person's reference names: a full id, a short id (the id's
/// last hex digits, at least 8), or a commit's sha (at least 7 characters). More
/// than one when a short reference is ambiguous.
pub fn find_knowledge(
    conn: &Connection,
    reference: &str,
    kind: Option<KnowledgeKind>,
) -> Result<Vec<Knowledge>, StoreError> {
    let r = reference.trim().to_ascii_lowercase();
    if let Ok(id) = r.parse::<KnowledgeId>() {
        return Ok(get_knowledge(conn, id)?
            .filter(|k| !k.meta.deleted && kind.is_none_or(|want| k.kind() == want))
            .into_iter()
            .collect());
    }
    let hex: String = r.chars().filter(|c| *c != '-').collect();
    if hex.len() < 7 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Ok(Vec::new());
    }
    let kind_name = kind.map(|k| k.as_str().to_string());
    let mut found: Vec<Knowledge> = Vec::new();
    if hex.len() >= 8 && hex.len() <= SHORT_ID_CHARS {
        let sql = format!(
            "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge
             WHERE deleted = 0 AND replace(id, '-', '') LIKE '%' || ?1
               AND (?2 IS NULL OR kind = ?2) LIMIT 10"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        for k in stmt.query_map(params![hex, kind_name], knowledge_from_row)? {
            found.push(k?);
        }
    }
    if kind.is_none_or(|k| k == KnowledgeKind::Commit) {
        let sql = format!(
            "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge
             WHERE deleted = 0 AND kind = 'commit' AND sha <> '' AND sha >= ?1 AND sha < ?1 || 'g'
             LIMIT 10"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        for k in stmt.query_map([&hex], knowledge_from_row)? {
            let k = k?;
            if !found.iter().any(|f| f.id == k.id) {
                found.push(k);
            }
        }
    }
    Ok(found)
}

/// What a knowledge listing selects.
#[derive(Debug, Clone, Default)]
pub struct KnowledgeFilter {
    /// These kinds (all when empty).
    pub kinds: Vec<KnowledgeKind>,
    /// These project keys (all when `None`).
    pub projects: Option<Vec<String>>,
    /// Superseded, retracted and expired records too.
    pub include_inactive: bool,
    pub limit: usize,
}

impl KnowledgeFilter {
    /// The standing records of `kinds` in the project `project_key`, newest
    /// first, at most `limit`.
    pub fn standing_in(
        project_key: &str,
        kinds: &[KnowledgeKind],
        limit: usize,
    ) -> KnowledgeFilter {
        KnowledgeFilter {
            kinds: kinds.to_vec(),
            projects: Some(vec![project_key.to_string()]),
            include_inactive: false,
            limit,
        }
    }
}

/// Live knowledge records, newest first.
pub fn list_knowledge(
    conn: &Connection,
    filter: &KnowledgeFilter,
    now: UnixMillis,
) -> Result<Vec<Knowledge>, StoreError> {
    let kinds: Vec<&str> = filter.kinds.iter().map(|k| k.as_str()).collect();
    let kinds_json = serde_json::to_string(&kinds).unwrap_or_else(|_| "[]".into());
    let projects_json = filter
        .projects
        .as_ref()
        .map(|p| serde_json::to_string(p).unwrap_or_else(|_| "[]".into()));
    // Only the filters given, so that a project's records are found by the index
    // on (project, kind, time) alone; and only row ids sorted, each record read
    // after: sorting whole records of a project of thousands spilled to disk.
    let mut conditions = String::new();
    if !filter.kinds.is_empty() {
        conditions.push_str(" AND kind IN (SELECT value FROM json_each(?1))");
    }
    if projects_json.is_some() {
        conditions.push_str(" AND project_key IN (SELECT value FROM json_each(?2))");
    }
    // Both parameters are named whatever the filters (`?1 = ?1`), as the
    // statement binds both; tombstones are skipped as read (the index holds no
    // `deleted`).
    let sql = format!(
        "SELECT rowid FROM knowledge WHERE ?1 = ?1 AND ?2 IS ?2{conditions}
         ORDER BY created_at DESC, rowid DESC"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rowids = stmt.query_map(params![kinds_json, projects_json], |r| r.get::<_, i64>(0))?;
    let mut read = conn.prepare_cached(&format!(
        "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge WHERE rowid = ?1"
    ))?;
    let limit = if filter.limit == 0 {
        usize::MAX
    } else {
        filter.limit
    };
    let mut out = Vec::new();
    for rowid in rowids {
        let Some(k) = read.query_row([rowid?], knowledge_from_row).optional()? else {
            continue;
        };
        if k.meta.deleted {
            continue;
        }
        if filter.include_inactive || k.stands(now) {
            out.push(k);
            if out.len() == limit {
                break;
            }
        }
    }
    Ok(out)
}

/// Every live link that names `record` at either end, and the commits that
/// implement it, whose writer may see `record` (`super::sight`): links are listed
/// both ways.
pub fn links_of(conn: &Connection, record: &Knowledge) -> Result<Vec<Knowledge>, StoreError> {
    let id = record.id;
    let sql = format!(
        "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge
         WHERE deleted = 0 AND (
             link_from = ?1 OR link_to = ?1
             OR (kind = 'commit' AND EXISTS (
                 SELECT 1 FROM json_each(knowledge.body, '$.decisions') WHERE value = ?1))
         )
         ORDER BY created_at, rowid"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([id.to_string()], knowledge_from_row)?;
    let links = rows.collect::<Result<_, _>>()?;
    super::sight::Sight::of(conn)?.referring_to(conn, record, links)
}

/// The live records that belong to `iteration` (its decisions, commits and
/// events) by a writer who may see it (`super::sight`), oldest first.
pub fn members_of_iteration(
    conn: &Connection,
    iteration: &Knowledge,
) -> Result<Vec<Knowledge>, StoreError> {
    let sql = format!(
        "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge
         WHERE deleted = 0 AND iteration = ?1 ORDER BY created_at, rowid"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([iteration.id.to_string()], knowledge_from_row)?;
    let members = rows.collect::<Result<_, _>>()?;
    super::sight::Sight::of(conn)?.referring_to(conn, iteration, members)
}

/// The project's active iteration (the most recently started one), if any.
pub fn active_iteration(
    conn: &Connection,
    project_key: &str,
) -> Result<Option<Knowledge>, StoreError> {
    let sql = format!(
        "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge
         WHERE deleted = 0 AND kind = 'iteration' AND project_key = ?1 AND status = ?2
         ORDER BY created_at DESC, rowid DESC LIMIT 1"
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(
            params![project_key, IterationStatus::Active.as_str()],
            knowledge_from_row,
        )
        .optional()?)
}

/// The project's most recent iteration, whatever its status.
pub fn latest_iteration(
    conn: &Connection,
    project_key: &str,
) -> Result<Option<Knowledge>, StoreError> {
    let sql = format!(
        "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge
         WHERE deleted = 0 AND kind = 'iteration' AND project_key = ?1
         ORDER BY created_at DESC, rowid DESC LIMIT 1"
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([project_key], knowledge_from_row)
        .optional()?)
}

/// How long after its start a session without an end still counts as open.
const OPEN_SESSION_HOURS: i64 = 24;

/// The session an agent of `project` on this machine is most likely in now (the
/// latest not ended, started in the last day): knowledge recorded meanwhile
/// belongs to it.
pub fn open_session(
    conn: &Connection,
    project_key: &str,
    machine: solaria_shared::MachineId,
) -> Result<Option<SessionId>, StoreError> {
    let since = UnixMillis::now().0 - OPEN_SESSION_HOURS * 3_600_000;
    let id: Option<String> = conn
        .prepare_cached(
            "SELECT id FROM sessions
             WHERE project_key = ?1 AND machine_id = ?2 AND deleted = 0 AND ended_at IS NULL
               AND started_at >= ?3
             ORDER BY started_at DESC LIMIT 1",
        )?
        .query_row(params![project_key, machine.to_string(), since], |r| {
            r.get(0)
        })
        .optional()?;
    Ok(id.and_then(|s| s.parse().ok()))
}

/// The live sessions of a project started between `from` and `to`: the sessions
/// of an iteration (they belong to it by time).
pub fn sessions_between(
    conn: &Connection,
    project_key: &str,
    from: UnixMillis,
    to: UnixMillis,
) -> Result<Vec<solaria_shared::Session>, StoreError> {
    let sql = format!(
        "SELECT {} FROM sessions
         WHERE project_key = ?1 AND deleted = 0 AND started_at >= ?2 AND started_at <= ?3
         ORDER BY started_at",
        super::records::SESSION_COLUMNS
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        params![project_key, from.0, to.0],
        super::records::session_from_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The live knowledge recorded in a session by its own person, oldest first.
pub fn knowledge_of_session(
    conn: &Connection,
    session: SessionId,
) -> Result<Vec<Knowledge>, StoreError> {
    let sql = format!(
        "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge
         WHERE session_id = ?1 AND deleted = 0 AND {}
         ORDER BY created_at, rowid",
        super::records::by_the_sessions_person("knowledge")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([session.to_string()], knowledge_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}
