-- The knowledge record that replaces another, found by the id it names: each pushed
-- decision or memory asks whether one already here supersedes it. Without this the
-- question reads every knowledge record of the account.
-- Expand only: the previous release serves beside this one during an upgrade.
CREATE INDEX IF NOT EXISTS memory_knowledge_supersedes
    ON memory_knowledge (account_id, (body->>'supersedes'))
    WHERE (body->>'supersedes') IS NOT NULL;
