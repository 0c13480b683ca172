-- SOLARIA central service: the embedding models are the operator's to enable, and
-- each account's use of them its own. Never edit once released: add a new file.
--
-- Until now a push registered any model it named, with the dimension of its first
-- vector, and built that model's index while the push waited, before the vector's
-- record was even checked; the registry was shared by every account. From now on
-- the service registers only the models its configuration lists (`vector_models`),
-- when it starts (storage::vector_models), and an account is registered for a
-- model once a vector of its own passed every check.

CREATE TABLE memory_account_vector_models (
    account_id  UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    model_id    INTEGER NOT NULL REFERENCES memory_vector_models (id),
    first_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, model_id)
);

INSERT INTO memory_account_vector_models (account_id, model_id)
SELECT DISTINCT account_id, model_id FROM memory_vectors;

-- Models that hold no vector (registered by a push whose vectors were then refused:
-- names nobody uses, or a dimension nobody's model has) go, with their indexes.
-- A model that holds vectors stays; the service keeps taking them only if its
-- operator lists it.
DO $$
DECLARE
    unused INTEGER;
BEGIN
    FOR unused IN
        SELECT id FROM memory_vector_models
        WHERE id NOT IN (SELECT DISTINCT model_id FROM memory_vectors)
    LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', 'memory_vectors_hnsw_' || unused);
        DELETE FROM memory_vector_models WHERE id = unused;
    END LOOP;
END
$$;
