//! The text of a search hit's record, whole, that its snippet is cut from
//! (`solaria_shared::render::snippet`): an event's title, input and output; a
//! summary's text and key points; a knowledge record's title and indexed text.

use super::StoreError;
use super::search::Hit;
use rusqlite::{Connection, OptionalExtension};
use solaria_shared::RecordType;

/// The text of `hit`'s record, or `None` when it is gone.
pub fn text_of(conn: &Connection, hit: &Hit) -> Result<Option<String>, StoreError> {
    let sql = if hit.record_type == RecordType::Summary {
        "SELECT text || char(10) || coalesce((
                    SELECT group_concat(value, char(10)) FROM json_each(
                        CASE WHEN json_valid(key_points) THEN key_points ELSE '[]' END)), '')
         FROM summaries WHERE id = ?1 AND deleted = 0"
    } else if hit.record_type.knowledge_kind().is_some() {
        "SELECT title || char(10) || text FROM knowledge WHERE id = ?1 AND deleted = 0"
    } else {
        "SELECT title || char(10) || input || char(10) || response
         FROM observations WHERE id = ?1 AND deleted = 0"
    };
    Ok(conn
        .prepare_cached(sql)?
        .query_row([&hit.id], |r| r.get(0))
        .optional()?)
}
