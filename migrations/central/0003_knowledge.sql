-- SOLARIA central service: knowledge records (decisions, memories, links, commits,
-- iterations, events). Never edit once released: add a new file.
--
-- The same sync envelope as the other record tables (see 0001): the row belongs to
-- one account, its key starts with account_id, and seq is its place in the
-- account's change feed. What the search and the lists read is kept in columns
-- (kind, status, title, search_text); the kind's own fields are in `body`, a JSON
-- object without the `kind` tag (`KnowledgeBody::fields()`). A tombstone keeps the
-- envelope and the kind, with body '{}' and empty texts.
--
-- session_id is the agent session the record was written in, if any: knowledge
-- outlives its session (erasing a session does not erase it), so it is no key.

CREATE TABLE memory_knowledge (
    account_id    UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id            UUID NOT NULL,
    machine_id    UUID NOT NULL,
    updated       BIGINT NOT NULL,
    deleted       BOOLEAN NOT NULL DEFAULT false,
    seq           BIGINT NOT NULL,
    project_key   TEXT NOT NULL,
    project_name  TEXT NOT NULL,
    session_id    UUID,
    kind          TEXT NOT NULL
                  CHECK (kind IN ('decision', 'memory', 'link', 'commit', 'iteration', 'event')),
    status        TEXT NOT NULL,
    title         TEXT NOT NULL,
    search_text   TEXT NOT NULL,
    body          JSONB NOT NULL DEFAULT '{}',
    created_at    BIGINT NOT NULL,
    -- English and Spanish stemming both, as for observations.
    search        TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A')
        || setweight(to_tsvector('spanish', title), 'A')
        || setweight(to_tsvector('english', left(search_text, 20000)), 'B')
        || setweight(to_tsvector('spanish', left(search_text, 20000)), 'B')
    ) STORED,
    PRIMARY KEY (account_id, id)
);
-- The change feed.
CREATE INDEX memory_knowledge_feed ON memory_knowledge (account_id, seq);
-- Lists: a project's decisions (or iterations, events…), newest first.
CREATE INDEX memory_knowledge_list ON memory_knowledge (account_id, project_key, kind, created_at DESC);
-- Search walks the newest rows of the account, or of a project, first
-- (central/src/storage/search.rs).
CREATE INDEX memory_knowledge_recent ON memory_knowledge (account_id, created_at DESC);
CREATE INDEX memory_knowledge_project ON memory_knowledge (account_id, project_key, created_at DESC);
CREATE INDEX memory_knowledge_search ON memory_knowledge USING GIN (search);
