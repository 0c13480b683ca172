-- What was recalled into each agent session's prompts (ops::recall), so that an
-- item is added once per session, never again. Local bookkeeping, never synced;
-- rows older than a week are dropped as new ones are written.
CREATE TABLE recalled (
    agent_session_id TEXT NOT NULL,
    cite             TEXT NOT NULL,
    recalled_at      INTEGER NOT NULL,
    PRIMARY KEY (agent_session_id, cite)
) STRICT, WITHOUT ROWID;
CREATE INDEX recalled_at ON recalled (recalled_at);
