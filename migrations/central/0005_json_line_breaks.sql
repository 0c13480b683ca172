-- SOLARIA central service: words at the start of a line of a tool's output are
-- searchable. Never edit once released: add a new file.
--
-- Tool inputs and responses arrive as the agent's JSON, where a line break is the
-- two characters `\n`; the text search parser kept the `n` with the next word
-- (`nwarning`), so a search for `warning` missed it. The search column now reads
-- the escaped breaks and tabs as spaces, the rule of the edge's
-- `store::text::breaks_as_spaces` (and of its full-text triggers). A generated
-- column's expression cannot be altered in place: the column is dropped and added
-- again, which recomputes it for every row (a one-off rewrite of the table).

DROP INDEX IF EXISTS memory_observations_search;
ALTER TABLE memory_observations_remote DROP COLUMN search;
ALTER TABLE memory_observations_remote ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A')
    || setweight(to_tsvector('spanish', title), 'A')
    || setweight(to_tsvector('english',
        regexp_replace(left(input, 20000) || ' ' || left(response, 20000), '\\[ntr]', ' ', 'g')), 'B')
    || setweight(to_tsvector('spanish',
        regexp_replace(left(input, 20000) || ' ' || left(response, 20000), '\\[ntr]', ' ', 'g')), 'B')
) STORED;
CREATE INDEX memory_observations_search ON memory_observations_remote USING GIN (search);
