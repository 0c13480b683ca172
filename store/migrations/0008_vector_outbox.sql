-- SOLARIA edge store, version 8: vectors waiting to be pushed.
--
-- A vector made here (by the embedding pass) is pushed to the central service so
-- that the account's other machines with the same model need not embed the record
-- again. The pass adds the record here when it stores the vector; the sync pushes
-- the vector (if it is still the record's current one) and takes the entry off.
-- Vectors pulled from the central service are not added: it has them.
CREATE TABLE vector_outbox (
    source INTEGER NOT NULL CHECK (source IN (0, 1, 2)),  -- as vector_queue
    row    INTEGER NOT NULL,                              -- the record's rowid
    PRIMARY KEY (source, row)
) STRICT, WITHOUT ROWID;
