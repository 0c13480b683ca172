-- SOLARIA edge store, version 12: a tool call is searched by what it says, not by
-- the names of its JSON fields.
--
-- Tool inputs and responses are stored as the agent's JSON. Indexed as written,
-- every Bash call held the words `command` and `description`, every Write `content`,
-- every Read `file` and `path`: a search for one of those common words matched
-- every such call. The full-text row now holds the strings and numbers of a JSON
-- object or array (SQLite's `json_tree`, which also undoes the escapes, so a line
-- break is a line break), as `store::text::readable` gives them to the identifier
-- pairs and the embedded text; any other text (a prompt, JSON cut short by
-- capture's size bound) is indexed as before, its escaped breaks read as spaces.
--
-- Rows already indexed are re-indexed in the background, as version 11's were:
-- the pairs of tool calls are cleared with the update trigger out of the way, so
-- this migration stays quick, and the daemon's pairs pass computes them again,
-- each update re-indexing its row through the new trigger.

DROP TRIGGER IF EXISTS observations_fts_update;

-- Capture writes JSON without leading blanks: a row whose input or response opens
-- an object or an array is one whose full-text row changes.
UPDATE observations SET pairs = NULL
WHERE deleted = 0 AND pairs IS NOT NULL
  AND (input GLOB '[[{]*' OR response GLOB '[[{]*');

-- What the full-text row of an observation holds, decided here alone: the triggers
-- below copy it. Input and response are each read by the rule above.
CREATE VIEW observations_searched (row, title, body, tool, scope) AS
SELECT o.rowid, o.title,
       (SELECT group_concat(part, ' ') FROM (
            SELECT CASE
                       WHEN json_valid(t) AND json_type(t) IN ('object', 'array')
                       THEN coalesce((SELECT group_concat(value, ' ') FROM json_tree(t)
                                      WHERE type IN ('text', 'integer', 'real')), '')
                       ELSE replace(replace(replace(t, '\n', ' '), '\t', ' '), '\r', ' ')
                   END AS part
            FROM (SELECT o.input AS t UNION ALL SELECT o.response))),
       coalesce(o.tool_name, '') || ' ' || o.files || ' ' || coalesce(o.pairs, ''),
       o.scope
FROM observations o
WHERE o.deleted = 0;

DROP TRIGGER IF EXISTS observations_fts_insert;
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations
WHEN new.deleted = 0 BEGIN
    INSERT INTO observations_fts (rowid, title, body, tool, scope)
    SELECT row, title, body, tool, scope FROM observations_searched WHERE row = new.rowid;
END;

CREATE TRIGGER observations_fts_update AFTER UPDATE ON observations BEGIN
    DELETE FROM observations_fts WHERE rowid = old.rowid;
    INSERT INTO observations_fts (rowid, title, body, tool, scope)
    SELECT row, title, body, tool, scope FROM observations_searched WHERE row = new.rowid;
END;
