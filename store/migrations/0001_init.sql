-- SOLARIA edge store, version 1. Never edit once released: add a new migration.
--
-- Every synced table carries the same envelope: id (UUIDv7 text), machine_id (the
-- machine that wrote this version), updated (packed HLC stamp, see solaria-shared),
-- deleted (tombstone). Text columns hold redacted text only.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- Names of the machines whose records we hold (ours and, after sync, the others').
CREATE TABLE machines (
    id   TEXT PRIMARY KEY,
    name TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
    id               TEXT NOT NULL UNIQUE,
    machine_id       TEXT NOT NULL,
    updated          INTEGER NOT NULL,
    deleted          INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
    project_key      TEXT NOT NULL,
    project_name     TEXT NOT NULL,
    agent            TEXT NOT NULL,
    agent_session_id TEXT NOT NULL,
    cwd              TEXT NOT NULL,
    source           TEXT NOT NULL,
    started_at       INTEGER NOT NULL,
    ended_at         INTEGER
) STRICT;
CREATE INDEX sessions_agent ON sessions (agent, agent_session_id);
CREATE INDEX sessions_project ON sessions (project_key, started_at);
-- `--project NAME` resolves names to keys through this (covering) index.
CREATE INDEX sessions_project_name ON sessions (project_name, project_key);
CREATE INDEX sessions_push ON sessions (machine_id, updated);

CREATE TABLE observations (
    id           TEXT NOT NULL UNIQUE,
    session_id   TEXT NOT NULL REFERENCES sessions (id),
    machine_id   TEXT NOT NULL,
    updated      INTEGER NOT NULL,
    deleted      INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
    project_key  TEXT NOT NULL,
    project_name TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('tool_use', 'prompt', 'note')),
    tool_name    TEXT,
    title        TEXT NOT NULL,
    input        TEXT NOT NULL,
    response     TEXT NOT NULL,
    files        TEXT NOT NULL DEFAULT '[]',
    metadata     TEXT NOT NULL DEFAULT '{}',
    tags         TEXT NOT NULL DEFAULT '[]',
    created_at   INTEGER NOT NULL,
    -- Filter tokens for the FTS index (project, kind, machine); derived, never synced.
    scope        TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX observations_session ON observations (session_id, created_at);
CREATE INDEX observations_project ON observations (project_key, created_at);
CREATE INDEX observations_created ON observations (created_at);
CREATE INDEX observations_push ON observations (machine_id, updated);

CREATE TABLE summaries (
    id                TEXT NOT NULL UNIQUE,
    session_id        TEXT NOT NULL UNIQUE REFERENCES sessions (id),
    machine_id        TEXT NOT NULL,
    updated           INTEGER NOT NULL,
    deleted           INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
    project_key       TEXT NOT NULL,
    project_name      TEXT NOT NULL,
    text              TEXT NOT NULL,
    key_points        TEXT NOT NULL DEFAULT '[]',
    tags              TEXT NOT NULL DEFAULT '[]',
    observation_count INTEGER NOT NULL,
    created_at        INTEGER NOT NULL,
    scope             TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX summaries_project ON summaries (project_key, created_at);
CREATE INDEX summaries_push ON summaries (machine_id, updated);

-- Full-text indexes. Contentless (the text lives once, in the tables above) with
-- delete support; kept in step by the triggers below, tombstones drop out. The
-- `scope` column holds one token per filter value (project, kind, machine), so a
-- filter is a cheap term of the FTS query instead of a scan of joined rows.
CREATE VIRTUAL TABLE observations_fts USING fts5 (
    title, body, tool, scope,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations
WHEN new.deleted = 0 BEGIN
    INSERT INTO observations_fts (rowid, title, body, tool, scope)
    VALUES (new.rowid, new.title, new.input || ' ' || new.response,
            coalesce(new.tool_name, '') || ' ' || new.files, new.scope);
END;

CREATE TRIGGER observations_fts_delete AFTER DELETE ON observations BEGIN
    DELETE FROM observations_fts WHERE rowid = old.rowid;
END;

CREATE TRIGGER observations_fts_update AFTER UPDATE ON observations BEGIN
    DELETE FROM observations_fts WHERE rowid = old.rowid;
    INSERT INTO observations_fts (rowid, title, body, tool, scope)
    SELECT new.rowid, new.title, new.input || ' ' || new.response,
           coalesce(new.tool_name, '') || ' ' || new.files, new.scope
    WHERE new.deleted = 0;
END;

CREATE VIRTUAL TABLE summaries_fts USING fts5 (
    text, key_points, tags, scope,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries
WHEN new.deleted = 0 BEGIN
    INSERT INTO summaries_fts (rowid, text, key_points, tags, scope)
    VALUES (new.rowid, new.text, new.key_points, new.tags, new.scope);
END;

CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN
    DELETE FROM summaries_fts WHERE rowid = old.rowid;
END;

CREATE TRIGGER summaries_fts_update AFTER UPDATE ON summaries BEGIN
    DELETE FROM summaries_fts WHERE rowid = old.rowid;
    INSERT INTO summaries_fts (rowid, text, key_points, tags, scope)
    SELECT new.rowid, new.text, new.key_points, new.tags, new.scope
    WHERE new.deleted = 0;
END;

-- Sync bookkeeping (used by the sync engine): cursors, server, last outcome.
CREATE TABLE sync_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- A local change that lost to a newer version from elsewhere: who, when, what.
CREATE TABLE conflicts (
    id              INTEGER PRIMARY KEY,
    record_kind     TEXT NOT NULL,
    record_id       TEXT NOT NULL,
    local_machine   TEXT NOT NULL,
    local_updated   INTEGER NOT NULL,
    local_version   TEXT NOT NULL,
    winner_machine  TEXT NOT NULL,
    winner_updated  INTEGER NOT NULL,
    winner_version  TEXT NOT NULL,
    detected_at     INTEGER NOT NULL,
    acknowledged_at INTEGER
) STRICT;
CREATE INDEX conflicts_open ON conflicts (acknowledged_at);
