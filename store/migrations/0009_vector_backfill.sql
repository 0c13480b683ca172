-- SOLARIA edge store, version 9: vectors made before version 8 go out too.
--
-- Version 8 started pushing the vectors this machine makes, but only those made
-- after it: a store upgraded from an older version holds vectors that were never
-- pushed, so the account's other machines would embed those records again for
-- hours. The flag asks the next sync to put every stored vector in the outbox
-- once (the tables of vectors exist only once a model was used, so SQL here cannot
-- name them). A vector the server already holds costs one refused-or-kept row.
INSERT INTO meta (key, value) VALUES ('vector_outbox_backfill', 'pending')
    ON CONFLICT (key) DO NOTHING;
