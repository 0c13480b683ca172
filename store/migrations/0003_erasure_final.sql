-- Erasure is final (docs/DESIGN.md, Erasure): once a record is a tombstone, no copy
-- of its content stays on this machine. A conflict row keeps the full text of the
-- local version that lost (and of the winner): when the record is erased, by a
-- local `forget` or a tombstone pulled from elsewhere, its conflict rows go too.

CREATE TRIGGER sessions_erased_conflicts AFTER UPDATE OF deleted ON sessions
WHEN NEW.deleted = 1 AND OLD.deleted = 0 BEGIN
    DELETE FROM conflicts WHERE record_id = NEW.id;
END;

CREATE TRIGGER observations_erased_conflicts AFTER UPDATE OF deleted ON observations
WHEN NEW.deleted = 1 AND OLD.deleted = 0 BEGIN
    DELETE FROM conflicts WHERE record_id = NEW.id;
END;

CREATE TRIGGER summaries_erased_conflicts AFTER UPDATE OF deleted ON summaries
WHEN NEW.deleted = 1 AND OLD.deleted = 0 BEGIN
    DELETE FROM conflicts WHERE record_id = NEW.id;
END;

-- Conflicts of records erased before this migration.
DELETE FROM conflicts WHERE record_id IN (
    SELECT id FROM sessions WHERE deleted = 1
    UNION ALL SELECT id FROM observations WHERE deleted = 1
    UNION ALL SELECT id FROM summaries WHERE deleted = 1
);
