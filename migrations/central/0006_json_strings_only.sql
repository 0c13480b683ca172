-- SOLARIA central service: a tool call is searched by what it says, not by the
-- names of its JSON fields. Never edit once released: add a new file.
--
-- Tool inputs and responses arrive as the agent's JSON. Indexed as written, every
-- Bash call held the words `command` and `description`, every Write `content`: a
-- search for one of those common words matched every such call. An object or array
-- is now read by its strings and numbers (the escapes undone, so a line break
-- separates words); any other text (a prompt, JSON cut short by the edge's size
-- bound) with its escaped breaks read as spaces — the rule of the edge's full-text
-- row (its view `observations_searched`). `solaria_searchable` decides how a field
-- reads, `solaria_search_vector` what the search column holds (each field read
-- once, for both languages). The column is dropped and added again, which
-- recomputes it for every row (a one-off rewrite of the table at start).

CREATE FUNCTION solaria_searchable(t TEXT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF t ~ '^[[{]' THEN
        BEGIN
            RETURN coalesce(
                (SELECT string_agg(v #>> '{}', ' ')
                 FROM jsonb_path_query(t::jsonb, 'strict $.**') AS v
                 WHERE jsonb_typeof(v) IN ('string', 'number')),
                '');
        EXCEPTION WHEN OTHERS THEN
            -- Not JSON after all: read as text below.
            NULL;
        END;
    END IF;
    RETURN regexp_replace(t, '\\[ntr]', ' ', 'g');
END
$$;

CREATE FUNCTION solaria_search_vector(title TEXT, input TEXT, response TEXT)
RETURNS TSVECTOR
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    body TEXT := left(coalesce(solaria_searchable(input), ''), 20000) || ' '
        || left(coalesce(solaria_searchable(response), ''), 20000);
BEGIN
    RETURN setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
        || setweight(to_tsvector('spanish'::regconfig, coalesce(title, '')), 'A')
        || setweight(to_tsvector('english'::regconfig, body), 'B')
        || setweight(to_tsvector('spanish'::regconfig, body), 'B');
END
$$;

DROP INDEX IF EXISTS memory_observations_search;
ALTER TABLE memory_observations_remote DROP COLUMN search;
ALTER TABLE memory_observations_remote ADD COLUMN search TSVECTOR
    GENERATED ALWAYS AS (solaria_search_vector(title, input, response)) STORED;
CREATE INDEX memory_observations_search ON memory_observations_remote USING GIN (search);
