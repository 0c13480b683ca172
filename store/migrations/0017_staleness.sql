-- SOLARIA edge store, version 17: what changed in the code each anchored decision
-- or memory speaks of, as this machine's git sees it.
--
-- One row per record with something changed since its time (the commits, the
-- files, those gone), as `solaria_shared::anchors::Staleness` in JSON, worked out
-- at `head` by the daemon or `solaria review`, never on a hook's path: the context
-- only reads it. Derived and local, never synced: each machine asks its own git.
-- A record erased or removed takes its row with it.
CREATE TABLE staleness (
    knowledge_id TEXT PRIMARY KEY,
    project_key  TEXT NOT NULL,
    head         TEXT NOT NULL,
    checked_at   INTEGER NOT NULL,
    state        TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX staleness_project ON staleness (project_key);

CREATE TRIGGER staleness_erased AFTER UPDATE OF deleted ON knowledge
WHEN NEW.deleted = 1
BEGIN
    DELETE FROM staleness WHERE knowledge_id = NEW.id;
END;

CREATE TRIGGER staleness_removed AFTER DELETE ON knowledge
BEGIN
    DELETE FROM staleness WHERE knowledge_id = OLD.id;
END;
