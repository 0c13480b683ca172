-- SOLARIA edge store, version 15: what each agent session was handed.
--
-- One row per injection: the context given at a session's start (or again after a
-- compaction), or what a prompt recalled (`prompt_id`: that prompt's observation).
-- `injected_records` lists the records cited in it, in the order the agent read
-- them. So the viewer can say why an agent knew something. Only ids: no text of
-- the records is kept here, and a record forgotten since reads as forgotten. Local
-- bookkeeping, never synced; rows older than 90 days go as new ones are written.
CREATE TABLE injections (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('context', 'recall')),
    prompt_id  TEXT,
    at         INTEGER NOT NULL
) STRICT;
CREATE INDEX injections_session ON injections (session_id, at);
CREATE INDEX injections_at ON injections (at);

CREATE TABLE injected_records (
    injection_id INTEGER NOT NULL REFERENCES injections (id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    cite         TEXT NOT NULL,
    PRIMARY KEY (injection_id, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX injected_records_cite ON injected_records (cite);
