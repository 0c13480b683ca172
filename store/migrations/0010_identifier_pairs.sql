-- SOLARIA edge store, version 10: identifier pairs (edge/src/store/pairs.rs).
--
-- Each observation keeps the adjacent parts of its identifiers, paths and dotted
-- names as single tokens (`src·x x·y y·rs`), written with the record and indexed in
-- its full-text row's `tool` column: an identifier query is then an AND of rare
-- tokens instead of a phrase of common words. NULL means not yet computed (records
-- written before this version): the daemon fills them in batches, and until none is
-- left identifier terms are searched as phrases. The partial index makes both
-- questions ("is any left?", "which?") cost nothing once none is left.
ALTER TABLE observations ADD COLUMN pairs TEXT;

CREATE INDEX observations_pairs_missing ON observations (created_at) WHERE pairs IS NULL;

DROP TRIGGER IF EXISTS observations_fts_insert;
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations
WHEN new.deleted = 0 BEGIN
    INSERT INTO observations_fts (rowid, title, body, tool, scope)
    VALUES (new.rowid, new.title, new.input || ' ' || new.response,
            coalesce(new.tool_name, '') || ' ' || new.files || ' ' || coalesce(new.pairs, ''),
            new.scope);
END;

DROP TRIGGER IF EXISTS observations_fts_update;
CREATE TRIGGER observations_fts_update AFTER UPDATE ON observations BEGIN
    DELETE FROM observations_fts WHERE rowid = old.rowid;
    INSERT INTO observations_fts (rowid, title, body, tool, scope)
    SELECT new.rowid, new.title, new.input || ' ' || new.response,
           coalesce(new.tool_name, '') || ' ' || new.files || ' ' || coalesce(new.pairs, ''),
           new.scope
    WHERE new.deleted = 0;
END;
