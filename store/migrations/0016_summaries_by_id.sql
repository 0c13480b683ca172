-- SOLARIA edge store, version 16: a summary is a record like any other, applied
-- by its id. Never edit once released: add a new migration.
--
-- A session had one summary row (`session_id UNIQUE`), and a pulled summary was
-- written over the session's by that key, whatever its id: a summary with a new id
-- naming someone else's session replaced that session's text and machine, and its
-- tombstone erased the session's own summary. Now a summary is kept by its id under
-- last-write-wins, as every record is; the summary a session shows is the newest
-- its own person wrote (`store::records::summary_of_session`), and a pulled record
-- naming another person's session is not kept at all (`store::sync`).
--
-- The table is rebuilt without the constraint; row ids are kept, since the
-- full-text and vector indexes point at them. The triggers go with the old table
-- and are made again as they were.
CREATE TABLE summaries_by_id (
    id                TEXT NOT NULL UNIQUE,
    session_id        TEXT NOT NULL REFERENCES sessions (id),
    machine_id        TEXT NOT NULL,
    updated           INTEGER NOT NULL,
    deleted           INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
    project_key       TEXT NOT NULL,
    project_name      TEXT NOT NULL,
    text              TEXT NOT NULL,
    key_points        TEXT NOT NULL DEFAULT '[]',
    tags              TEXT NOT NULL DEFAULT '[]',
    observation_count INTEGER NOT NULL,
    created_at        INTEGER NOT NULL,
    scope             TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO summaries_by_id (rowid, id, session_id, machine_id, updated, deleted, project_key,
    project_name, text, key_points, tags, observation_count, created_at, scope)
SELECT rowid, id, session_id, machine_id, updated, deleted, project_key, project_name, text,
    key_points, tags, observation_count, created_at, scope
FROM summaries;
DROP TABLE summaries;
ALTER TABLE summaries_by_id RENAME TO summaries;

CREATE INDEX summaries_session ON summaries (session_id, created_at);
CREATE INDEX summaries_project ON summaries (project_key, created_at);
CREATE INDEX summaries_push ON summaries (machine_id, updated);

CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries
WHEN new.deleted = 0 BEGIN
    INSERT INTO summaries_fts (rowid, text, key_points, tags, scope)
    VALUES (new.rowid, new.text, new.key_points, new.tags, new.scope);
END;

CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN
    DELETE FROM summaries_fts WHERE rowid = old.rowid;
END;

CREATE TRIGGER summaries_fts_update AFTER UPDATE ON summaries BEGIN
    DELETE FROM summaries_fts WHERE rowid = old.rowid;
    INSERT INTO summaries_fts (rowid, text, key_points, tags, scope)
    SELECT new.rowid, new.text, new.key_points, new.tags, new.scope
    WHERE new.deleted = 0;
END;

CREATE TRIGGER summaries_erased_conflicts AFTER UPDATE OF deleted ON summaries
WHEN NEW.deleted = 1 AND OLD.deleted = 0 BEGIN
    DELETE FROM conflicts WHERE record_id = NEW.id;
END;

CREATE TRIGGER summaries_vq_insert AFTER INSERT ON summaries BEGIN
    INSERT INTO vector_queue (source, row) VALUES (1, new.rowid)
        ON CONFLICT DO NOTHING;
END;

CREATE TRIGGER summaries_vq_update AFTER UPDATE OF text, key_points, deleted
ON summaries BEGIN
    INSERT INTO vector_queue (source, row) VALUES (1, new.rowid)
        ON CONFLICT DO NOTHING;
END;

CREATE TRIGGER summaries_vq_delete AFTER DELETE ON summaries BEGIN
    INSERT INTO vector_queue (source, row) VALUES (1, old.rowid)
        ON CONFLICT DO NOTHING;
END;
