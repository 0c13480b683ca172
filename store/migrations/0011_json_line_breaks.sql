-- SOLARIA edge store, version 11: words at the start of a line of a tool's output
-- are searchable (edge/src/store/text.rs).
--
-- Tool inputs and responses are stored as the agent's JSON, where a line break is
-- the two characters `\n`. The tokenizer split on the backslash and kept the `n`
-- with the next word, so `running 3 tests\nwarning: …` was indexed as `nwarning`
-- and a search for `warning` missed it. The full-text row now reads the escaped
-- breaks and tabs (`\n`, `\t`, `\r`) as spaces, as `text::breaks_as_spaces` does
-- for the identifier pairs.
--
-- Rows already indexed the old way are re-indexed in the background: their pairs
-- (also computed from the old reading) are cleared with the update trigger out of
-- the way, so this migration stays quick; the daemon's pairs pass then computes
-- them again (`pairs::backfill`) and each such update re-indexes the row through
-- the new trigger. Until it has, identifier terms are searched as phrases and
-- those rows' line-initial words are found as before (not at all).

DROP TRIGGER IF EXISTS observations_fts_update;

UPDATE observations SET pairs = NULL
WHERE deleted = 0 AND pairs IS NOT NULL
  AND (input GLOB '*\[ntr]*' OR response GLOB '*\[ntr]*');

DROP TRIGGER IF EXISTS observations_fts_insert;
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations
WHEN new.deleted = 0 BEGIN
    INSERT INTO observations_fts (rowid, title, body, tool, scope)
    VALUES (new.rowid, new.title,
            replace(replace(replace(new.input || ' ' || new.response,
                '\n', ' '), '\t', ' '), '\r', ' '),
            coalesce(new.tool_name, '') || ' ' || new.files || ' ' || coalesce(new.pairs, ''),
            new.scope);
END;

CREATE TRIGGER observations_fts_update AFTER UPDATE ON observations BEGIN
    DELETE FROM observations_fts WHERE rowid = old.rowid;
    INSERT INTO observations_fts (rowid, title, body, tool, scope)
    SELECT new.rowid, new.title,
           replace(replace(replace(new.input || ' ' || new.response,
               '\n', ' '), '\t', ' '), '\r', ' '),
           coalesce(new.tool_name, '') || ' ' || new.files || ' ' || coalesce(new.pairs, ''),
           new.scope
    WHERE new.deleted = 0;
END;
