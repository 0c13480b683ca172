-- SOLARIA edge store, version 2: semantic search bookkeeping.
--
-- The vectors live in vec0 tables (sqlite-vec) created when a model is first used,
-- because their dimension is the model's. This table is the queue between the
-- records and those vectors: a trigger adds a record whenever it is written,
-- changed or deleted, and the daemon's embedding pass takes entries off after it
-- has brought that record's vector up to date (embedded, replaced or removed).
-- Hooks therefore never embed, and no vector can outlive or lag its record
-- unnoticed. (The triggers say ON CONFLICT DO NOTHING, not INSERT OR IGNORE: inside
-- an upsert, SQLite replaces a trigger's OR-clause with the outer statement's, and
-- the record writes are upserts.)
CREATE TABLE vector_queue (
    source INTEGER NOT NULL CHECK (source IN (0, 1)),  -- 0 observations, 1 summaries
    row    INTEGER NOT NULL,                           -- the record's rowid
    PRIMARY KEY (source, row)
) STRICT, WITHOUT ROWID;

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

-- Records written before this version wait for their vectors too.
INSERT INTO vector_queue (source, row) SELECT 0, rowid FROM observations WHERE deleted = 0;
INSERT INTO vector_queue (source, row) SELECT 1, rowid FROM summaries WHERE deleted = 0;
