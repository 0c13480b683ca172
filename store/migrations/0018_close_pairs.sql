-- SOLARIA edge store, version 18: pairs of a new decision or memory and a standing
-- one of the same project close to it in subject, proposed to a person when the
-- new one was written here and waiting until they choose (supersede, keep both,
-- or link). Local: each machine proposes what its own writes come close to.
-- A record erased or removed takes its pairs with it.
CREATE TABLE close_pairs (
    record_id    TEXT NOT NULL,
    standing_id  TEXT NOT NULL,
    project_key  TEXT NOT NULL,
    proposed_at  INTEGER NOT NULL,
    closeness    TEXT NOT NULL,
    PRIMARY KEY (record_id, standing_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX close_pairs_project ON close_pairs (project_key);
CREATE INDEX close_pairs_standing ON close_pairs (standing_id);

CREATE TRIGGER close_pairs_erased AFTER UPDATE OF deleted ON knowledge
WHEN NEW.deleted = 1
BEGIN
    DELETE FROM close_pairs WHERE record_id = NEW.id OR standing_id = NEW.id;
END;

CREATE TRIGGER close_pairs_removed AFTER DELETE ON knowledge
BEGIN
    DELETE FROM close_pairs WHERE record_id = OLD.id OR standing_id = OLD.id;
END;
