-- SOLARIA central service: search by meaning over the stored record vectors.
-- Never edit once released: add a new file.
--
-- This file needs no extension. What needs pgvector (the `embedding` column and one
-- HNSW index per model) is made at each start by the storage layer when the
-- database has the extension (`storage::meaning`), so a server that gains pgvector
-- later gets it on its next start.
--
-- A vector belongs to one version of one record, so what search filters on (who
-- wrote the record, its project, its type, when) cannot change while the vector
-- lives: it is copied beside the vector, and the vector query filters and orders
-- one table.

-- Each model vectors are pushed under, with its one dimension; `id` names its index.
CREATE TABLE memory_vector_models (
    id         SERIAL PRIMARY KEY,
    model      TEXT NOT NULL UNIQUE,
    dimension  INTEGER NOT NULL CHECK (dimension > 0)
);

-- `machine_id` now names the record's writer, as in every record table (what the
-- visibility rule reads); the machine that pushed the vector is `pushed_by`.
ALTER TABLE memory_vectors RENAME COLUMN machine_id TO pushed_by;
ALTER TABLE memory_vectors
    ADD COLUMN model_id    INTEGER REFERENCES memory_vector_models (id),
    ADD COLUMN machine_id  UUID,
    ADD COLUMN project_key TEXT,
    -- The observation kind, `summary`, or the knowledge kind.
    ADD COLUMN kind        TEXT,
    ADD COLUMN created_at  BIGINT;

UPDATE memory_vectors v
SET machine_id = r.machine_id, project_key = r.project_key, kind = r.kind, created_at = r.created_at
FROM (SELECT account_id, id, updated, machine_id, project_key, kind, created_at
          FROM memory_observations_remote WHERE NOT deleted
      UNION ALL SELECT account_id, id, updated, machine_id, project_key, 'summary', created_at
          FROM memory_summaries_remote WHERE NOT deleted
      UNION ALL SELECT account_id, id, updated, machine_id, project_key, kind, created_at
          FROM memory_knowledge WHERE NOT deleted) AS r
WHERE r.account_id = v.account_id AND r.id = v.record_id AND r.updated = v.updated;
-- A vector whose record version is gone is of no use (the triggers of 0004 should
-- have removed it already).
DELETE FROM memory_vectors WHERE machine_id IS NULL;

-- One dimension per model: the one most of its vectors have.
INSERT INTO memory_vector_models (model, dimension)
SELECT DISTINCT ON (model) model, dimension FROM memory_vectors
GROUP BY model, dimension ORDER BY model, count(*) DESC;
DELETE FROM memory_vectors v USING memory_vector_models m
WHERE v.model = m.model AND v.dimension <> m.dimension;
UPDATE memory_vectors v SET model_id = m.id FROM memory_vector_models m WHERE m.model = v.model;

ALTER TABLE memory_vectors
    ALTER COLUMN model_id SET NOT NULL,
    ALTER COLUMN machine_id SET NOT NULL,
    ALTER COLUMN project_key SET NOT NULL,
    ALTER COLUMN kind SET NOT NULL,
    ALTER COLUMN created_at SET NOT NULL,
    -- With pgvector the values live in `embedding` instead (one copy).
    ALTER COLUMN data DROP NOT NULL;

-- The exact search of a narrow scope (a project, a machine) walks these.
CREATE INDEX memory_vectors_project ON memory_vectors (account_id, model_id, project_key);
CREATE INDEX memory_vectors_machine ON memory_vectors (account_id, model_id, machine_id);
