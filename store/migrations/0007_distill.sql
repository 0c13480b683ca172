-- The optional model summarizer's ledger (edge/src/distill): one row per attempt
-- at a session's summary, keyed by the number of observations the summary covered,
-- so a session is tried once as it stands and again only if it grew (resumed) or
-- shrank (forget). Holds the tokens each attempt spent, for the daily and
-- per-session caps and `solaria stats`. Local bookkeeping, never synced; no text
-- of the session is kept here, only why an attempt failed.
CREATE TABLE distill_runs (
    session_id        TEXT NOT NULL,
    observation_count INTEGER NOT NULL,
    -- When the attempt ended (Unix ms) and its UTC day (YYYY-MM-DD) for the daily cap.
    at                INTEGER NOT NULL,
    day               TEXT NOT NULL,
    outcome           TEXT NOT NULL
                      CHECK (outcome IN ('summarized', 'failed', 'capped', 'skipped')),
    reason            TEXT NOT NULL DEFAULT '',
    tokens            INTEGER NOT NULL DEFAULT 0,
    -- Whether `tokens` is the API's own count (1) or an estimate from characters (0).
    counted           INTEGER NOT NULL DEFAULT 0 CHECK (counted IN (0, 1)),
    PRIMARY KEY (session_id, observation_count)
) STRICT, WITHOUT ROWID;
CREATE INDEX distill_runs_day ON distill_runs (day);
