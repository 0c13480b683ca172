-- SOLARIA central service: what the shared context and timeline read
-- (`solaria_shared::render`). Never edit once released: add a new file.
--
-- A served context cites sessions (one line per recent session) as well as
-- observations (errors); the log keeps both.
ALTER TABLE memory_context_injections ADD COLUMN source_sessions UUID[] NOT NULL DEFAULT '{}';

-- A session's timeline lists the knowledge recorded in it. Its time says nothing
-- of the session's (a commit is dated by git, an imported one by its history), so
-- the session's own records are found by their session.
CREATE INDEX memory_knowledge_session ON memory_knowledge (account_id, session_id)
    WHERE session_id IS NOT NULL;
