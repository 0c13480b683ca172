-- SOLARIA central service: projects shared with the whole account.
-- Never edit once released: add a new file.
--
-- Every project is personal (seen only by the machines of the person who wrote
-- its records) unless one of these patterns matches its key. `pattern` is what the
-- admin typed (`github.com/acme/*`); `like_pattern` the same as a LIKE pattern, its
-- `%` and `_` escaped, `*` turned into `%` (the storage layer writes both).
CREATE TABLE shared_projects (
    account_id    UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    pattern       TEXT NOT NULL,
    like_pattern  TEXT NOT NULL,
    shared_by     TEXT NOT NULL,
    shared_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, pattern)
);

