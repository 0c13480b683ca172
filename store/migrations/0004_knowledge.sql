-- Knowledge records: decisions, curated memories, links, commits, iterations and
-- their events (solaria_shared::knowledge). One table for every kind: the envelope
-- and the columns lists, filters and search need are columns; the kind's own
-- fields are one JSON object (`body`). Derived columns (title, text, status, sha,
-- link ends) are written by the store from the body, never synced.

CREATE TABLE knowledge (
    id           TEXT NOT NULL UNIQUE,
    machine_id   TEXT NOT NULL,
    updated      INTEGER NOT NULL,
    deleted      INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
    project_key  TEXT NOT NULL,
    project_name TEXT NOT NULL,
    session_id   TEXT,
    kind         TEXT NOT NULL CHECK (kind IN ('decision', 'memory', 'link', 'commit', 'iteration', 'event')),
    status       TEXT NOT NULL DEFAULT 'active',
    title        TEXT NOT NULL DEFAULT '',
    text         TEXT NOT NULL DEFAULT '',
    body         TEXT NOT NULL DEFAULT '{}',
    -- A commit's sha; the two ends of a link; the iteration a record belongs to.
    sha          TEXT NOT NULL DEFAULT '',
    link_from    TEXT,
    link_to      TEXT,
    iteration    TEXT,
    created_at   INTEGER NOT NULL,
    scope        TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX knowledge_list ON knowledge (project_key, kind, created_at);
CREATE INDEX knowledge_kind ON knowledge (kind, created_at);
CREATE INDEX knowledge_push ON knowledge (machine_id, updated);
CREATE INDEX knowledge_sha ON knowledge (sha) WHERE sha <> '';
CREATE INDEX knowledge_link_from ON knowledge (link_from) WHERE link_from IS NOT NULL;
CREATE INDEX knowledge_link_to ON knowledge (link_to) WHERE link_to IS NOT NULL;
CREATE INDEX knowledge_iteration ON knowledge (iteration) WHERE iteration IS NOT NULL;

CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
    title, text, scope,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER knowledge_fts_insert AFTER INSERT ON knowledge
WHEN new.deleted = 0 AND new.kind <> 'link' BEGIN
    INSERT INTO knowledge_fts (rowid, title, text, scope)
    VALUES (new.rowid, new.title, new.text, new.scope);
END;

CREATE TRIGGER knowledge_fts_delete AFTER DELETE ON knowledge BEGIN
    DELETE FROM knowledge_fts WHERE rowid = old.rowid;
END;

CREATE TRIGGER knowledge_fts_update AFTER UPDATE ON knowledge BEGIN
    DELETE FROM knowledge_fts WHERE rowid = old.rowid;
    INSERT INTO knowledge_fts (rowid, title, text, scope)
    SELECT new.rowid, new.title, new.text, new.scope
    WHERE new.deleted = 0 AND new.kind <> 'link';
END;

-- Erasure is final here too: an erased record's conflict rows go with it.
CREATE TRIGGER knowledge_erased_conflicts AFTER UPDATE OF deleted ON knowledge
WHEN NEW.deleted = 1 AND OLD.deleted = 0 BEGIN
    DELETE FROM conflicts WHERE record_id = NEW.id;
END;
