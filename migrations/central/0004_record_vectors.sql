-- SOLARIA central service: record vectors (semantic search embeddings) pushed by
-- the edges and served back to the machines that use the same model. Never edit
-- once released: add a new file.
--
-- A vector is derived data, not part of a record's content: it is kept for one
-- version of one record (`updated`) and one model (`model`, the fingerprint). When
-- the record gets a new version or is erased, its vectors go (the triggers below):
-- a vector never outlives the text it was made from, and erasure stays final.

CREATE TABLE memory_vectors (
    account_id  UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    record_id   UUID NOT NULL,
    model       TEXT NOT NULL,
    dimension   INTEGER NOT NULL CHECK (dimension > 0),
    -- The record version the vector was made from.
    updated     BIGINT NOT NULL,
    -- The machine that pushed it (which needs it not back).
    machine_id  UUID NOT NULL,
    -- dimension little-endian float32 values.
    data        BYTEA NOT NULL CHECK (length(data) = 4 * dimension),
    PRIMARY KEY (account_id, record_id, model)
);

CREATE FUNCTION memory_vectors_follow_record() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_vectors
    WHERE account_id = NEW.account_id AND record_id = NEW.id
      AND (NEW.deleted OR updated <> NEW.updated);
    RETURN NULL;
END
$$;

CREATE TRIGGER memory_observations_vectors AFTER UPDATE OF updated, deleted
ON memory_observations_remote FOR EACH ROW EXECUTE FUNCTION memory_vectors_follow_record();
CREATE TRIGGER memory_summaries_vectors AFTER UPDATE OF updated, deleted
ON memory_summaries_remote FOR EACH ROW EXECUTE FUNCTION memory_vectors_follow_record();
CREATE TRIGGER memory_knowledge_vectors AFTER UPDATE OF updated, deleted
ON memory_knowledge FOR EACH ROW EXECUTE FUNCTION memory_vectors_follow_record();
