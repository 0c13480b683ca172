-- SOLARIA edge store, version 6: knowledge records (decisions, memories, commits,
-- iterations) get vectors too, so a search by meaning finds a decision whose words
-- the question does not share. Links and iteration events are found through what
-- they join and are not embedded.
--
-- The queue's source check gains 2 (knowledge): the table is rebuilt, and the
-- triggers that write into it are made again around the rebuild.
DROP TRIGGER observations_vq_insert;
DROP TRIGGER observations_vq_update;
DROP TRIGGER observations_vq_delete;
DROP TRIGGER summaries_vq_insert;
DROP TRIGGER summaries_vq_update;
DROP TRIGGER summaries_vq_delete;

CREATE TABLE vector_queue_v6 (
    source INTEGER NOT NULL CHECK (source IN (0, 1, 2)),  -- 0 observations, 1 summaries, 2 knowledge
    row    INTEGER NOT NULL,                              -- the record's rowid
    PRIMARY KEY (source, row)
) STRICT, WITHOUT ROWID;
INSERT INTO vector_queue_v6 (source, row) SELECT source, row FROM vector_queue;
DROP TABLE vector_queue;
ALTER TABLE vector_queue_v6 RENAME TO vector_queue;

CREATE TRIGGER observations_vq_insert AFTER INSERT ON observations BEGIN
    INSERT INTO vector_queue (source, row) VALUES (0, new.rowid)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER observations_vq_update AFTER UPDATE OF title, input, response, deleted
ON observations BEGIN
    INSERT INTO vector_queue (source, row) VALUES (0, new.rowid)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER observations_vq_delete AFTER DELETE ON observations BEGIN
    INSERT INTO vector_queue (source, row) VALUES (0, old.rowid)
        ON CONFLICT DO NOTHING;
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

CREATE TRIGGER knowledge_vq_insert AFTER INSERT ON knowledge
WHEN new.kind NOT IN ('link', 'event') BEGIN
    INSERT INTO vector_queue (source, row) VALUES (2, new.rowid)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER knowledge_vq_update AFTER UPDATE OF title, text, deleted ON knowledge
WHEN new.kind NOT IN ('link', 'event') BEGIN
    INSERT INTO vector_queue (source, row) VALUES (2, new.rowid)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER knowledge_vq_delete AFTER DELETE ON knowledge BEGIN
    INSERT INTO vector_queue (source, row) VALUES (2, old.rowid)
        ON CONFLICT DO NOTHING;
END;

-- Knowledge written before this version waits for its vectors too (the vector
-- tables of an existing model gain a knowledge pair when the daemon next runs).
INSERT INTO vector_queue (source, row)
    SELECT 2, rowid FROM knowledge WHERE deleted = 0 AND kind NOT IN ('link', 'event');
