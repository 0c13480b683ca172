-- SOLARIA central service, schema version 1 (sqlx migration; never edit once
-- released: add a new file).
--
-- Every row belongs to exactly one account and every key starts with account_id:
-- no query can reach another account's rows without naming it.
-- Record tables share the sync envelope: id (UUIDv7, born on the edge), machine_id
-- (last writer), updated (packed HLC, see solaria-shared), deleted (tombstone), and
-- seq, the record's position in its account's change feed.

CREATE TABLE accounts (
    id          UUID PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    -- The change feed's counter. Incrementing it takes the account row's lock until
    -- commit, so seqs become visible in order: a reader never skips a change.
    change_seq  BIGINT NOT NULL DEFAULT 0,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE enrollment_tokens (
    id          UUID PRIMARY KEY,
    account_id  UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    token_hash  BYTEA NOT NULL UNIQUE,
    expires_at  TIMESTAMPTZ NOT NULL,
    used_at     TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE memory_machines (
    id               UUID PRIMARY KEY,
    account_id       UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    machine_name     TEXT NOT NULL,
    credential_hash  BYTEA NOT NULL,
    first_seen_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_sync_at     TIMESTAMPTZ,
    revoked_at       TIMESTAMPTZ
);
CREATE INDEX memory_machines_account ON memory_machines (account_id);

CREATE TABLE memory_sessions (
    account_id        UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id                UUID NOT NULL,
    machine_id        UUID NOT NULL,
    updated           BIGINT NOT NULL,
    deleted           BOOLEAN NOT NULL DEFAULT false,
    seq               BIGINT NOT NULL,
    project_key       TEXT NOT NULL,
    project_name      TEXT NOT NULL,
    agent             TEXT NOT NULL,
    agent_session_id  TEXT NOT NULL,
    cwd               TEXT NOT NULL,
    source            TEXT NOT NULL,
    started_at        BIGINT NOT NULL,
    ended_at          BIGINT,
    PRIMARY KEY (account_id, id)
);
CREATE INDEX memory_sessions_feed ON memory_sessions (account_id, seq);

CREATE TABLE memory_observations_remote (
    account_id    UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id            UUID NOT NULL,
    session_id    UUID NOT NULL,
    machine_id    UUID NOT NULL,
    updated       BIGINT NOT NULL,
    deleted       BOOLEAN NOT NULL DEFAULT false,
    seq           BIGINT NOT NULL,
    project_key   TEXT NOT NULL,
    project_name  TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('tool_use', 'prompt', 'note')),
    tool_name     TEXT,
    title         TEXT NOT NULL,
    input         TEXT NOT NULL,
    response      TEXT NOT NULL,
    files         JSONB NOT NULL DEFAULT '[]',
    metadata      JSONB NOT NULL DEFAULT '{}',
    tags          JSONB NOT NULL DEFAULT '[]',
    created_at    BIGINT NOT NULL,
    -- English and Spanish stemming both, so either language finds its words.
    search        TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A')
        || setweight(to_tsvector('spanish', title), 'A')
        || setweight(to_tsvector('english', left(input, 20000) || ' ' || left(response, 20000)), 'B')
        || setweight(to_tsvector('spanish', left(input, 20000) || ' ' || left(response, 20000)), 'B')
    ) STORED,
    PRIMARY KEY (account_id, id)
);
CREATE INDEX memory_observations_feed ON memory_observations_remote (account_id, seq);
CREATE INDEX memory_observations_session ON memory_observations_remote (account_id, session_id, created_at);
CREATE INDEX memory_observations_project ON memory_observations_remote (account_id, project_key, created_at DESC);
CREATE INDEX memory_observations_search ON memory_observations_remote USING GIN (search);

CREATE TABLE memory_summaries_remote (
    account_id         UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id                 UUID NOT NULL,
    session_id         UUID NOT NULL,
    machine_id         UUID NOT NULL,
    updated            BIGINT NOT NULL,
    deleted            BOOLEAN NOT NULL DEFAULT false,
    seq                BIGINT NOT NULL,
    project_key        TEXT NOT NULL,
    project_name       TEXT NOT NULL,
    summary            TEXT NOT NULL,
    key_points         JSONB NOT NULL DEFAULT '[]',
    tags               JSONB NOT NULL DEFAULT '[]',
    observations_count INTEGER NOT NULL,
    created_at         BIGINT NOT NULL,
    search             TSVECTOR GENERATED ALWAYS AS (
        to_tsvector('english', summary) || to_tsvector('spanish', summary)
    ) STORED,
    PRIMARY KEY (account_id, id)
);
CREATE INDEX memory_summaries_feed ON memory_summaries_remote (account_id, seq);
CREATE INDEX memory_summaries_session ON memory_summaries_remote (account_id, session_id);
CREATE INDEX memory_summaries_search ON memory_summaries_remote USING GIN (search);

CREATE TABLE memory_sync_log (
    id                  BIGSERIAL PRIMARY KEY,
    account_id          UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    machine_id          UUID NOT NULL,
    sync_type           TEXT NOT NULL CHECK (sync_type IN ('batch', 'manual', 'session_end')),
    observations_count  INTEGER NOT NULL,
    sync_duration_ms    INTEGER NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('success', 'partial', 'failed')),
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX memory_sync_log_machine ON memory_sync_log (account_id, machine_id, created_at);

CREATE TABLE memory_context_injections (
    id                   BIGSERIAL PRIMARY KEY,
    account_id           UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    machine_id           UUID,
    target_session_id    TEXT,
    source_observations  UUID[] NOT NULL DEFAULT '{}',
    injection_count      INTEGER NOT NULL DEFAULT 1,
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now()
);
