-- Cross-device queries (search, context, timeline): indexes that let them read the
-- newest records of an account, or of one of its projects, first and stop early.
-- Search walks these in created_at order when a word is common (see
-- central/src/storage/query.rs), so ranking never reads every match.

CREATE INDEX memory_observations_recent ON memory_observations_remote (account_id, created_at DESC);
CREATE INDEX memory_summaries_recent ON memory_summaries_remote (account_id, created_at DESC);
CREATE INDEX memory_summaries_project ON memory_summaries_remote (account_id, project_key, created_at DESC);

-- Resolving a project by key or by name.
CREATE INDEX memory_sessions_project ON memory_sessions (account_id, project_key, started_at DESC);
CREATE INDEX memory_sessions_project_name ON memory_sessions (account_id, project_name);
