//! The text of a search hit's record, whole, that its snippet is cut from
//! (`solaria_shared::render::snippet`): an event's title, input and output read as
//! a person would (`store::text::readable`: a tool call's strings, not its JSON); a
//! summary's text and key points; a knowledge record's title and indexed text.

use super::StoreError;
use super::search::Hit;
use super::text::readable;
use rusqlite::{Connection, OptionalExtension};
use solaria_shared::RecordType;

/// The text of `hit`'s record, or `None` when it is gone.
pub fn text_of(conn: &Connection, hit: &Hit) -> Result<Option<String>, StoreError> {
    if hit.record_type == RecordType::Summary {
        return one_text(
            conn,
            "SELECT text || char(10) || coalesce((
                    SELECT group_concat(value, char(10)) FROM json_each(
                        CASE WHEN json_valid(key_points) THEN key_points ELSE '[]' END)), '')
             FROM summaries WHERE id = ?1 AND deleted = 0",
            &hit.id,
        );
    }
    if hit.record_type.knowledge_kind().is_some() {
        return one_text(
            conn,
            // A memory's or a commit's title is its text's first line: not twice.
            "SELECT CASE WHEN instr(text, title) > 0 THEN text ELSE title || char(10) || text END
             FROM knowledge WHERE id = ?1 AND deleted = 0",
            &hit.id,
        );
    }
    let event: Option<(String, String, String)> = conn
        .prepare_cached(
            "SELECT title, input, response FROM observations WHERE id = ?1 AND deleted = 0",
        )?
        .query_row([&hit.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    Ok(event.map(|(title, input, response)| {
        let (input, response) = (readable(&input), readable(&response));
        // A prompt's title is its text: said once.
        if input.contains(title.trim_end_matches('…')) {
            format!("{input}\n{response}")
        } else {
            format!("{title}\n{input}\n{response}")
        }
    }))
}

fn one_text(conn: &Connection, sql: &str, id: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached(sql)?
        .query_row([id], |r| r.get(0))
        .optional()?)
}
