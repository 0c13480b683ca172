-- SOLARIA central service: the people of an account, and what was done to it.
-- Never edit once released: add a new file.
--
-- An account holds people; every machine belongs to one of them, so every record
-- has an author: the person of the machine that wrote its version. A person is
-- never deleted: removing one stamps `removed_at` (and revokes their machines), so
-- what they wrote keeps a name.
CREATE TABLE people (
    account_id  UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id          UUID NOT NULL,
    email       TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    added_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    removed_at  TIMESTAMPTZ,
    PRIMARY KEY (account_id, id)
);
-- One live person per address in an account; a removed one may be added again.
CREATE UNIQUE INDEX people_live_email ON people (account_id, lower(email))
    WHERE removed_at IS NULL;

-- Deployments from before people: each account that has machines or enrollment
-- tokens gets one admin, `owner@<account name>`, who owns all of them. Nothing
-- else changes: the same machines sync the same records.
INSERT INTO people (account_id, id, email, role)
SELECT a.id, gen_random_uuid(), 'owner@' || a.name, 'admin'
FROM accounts a
WHERE EXISTS (SELECT 1 FROM memory_machines m WHERE m.account_id = a.id)
   OR EXISTS (SELECT 1 FROM enrollment_tokens t WHERE t.account_id = a.id);

ALTER TABLE memory_machines ADD COLUMN person_id UUID;
UPDATE memory_machines m SET person_id = p.id FROM people p WHERE p.account_id = m.account_id;
ALTER TABLE memory_machines ALTER COLUMN person_id SET NOT NULL;
ALTER TABLE memory_machines ADD CONSTRAINT memory_machines_person
    FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id);
CREATE INDEX memory_machines_person ON memory_machines (account_id, person_id);

ALTER TABLE enrollment_tokens ADD COLUMN person_id UUID;
UPDATE enrollment_tokens t SET person_id = p.id FROM people p WHERE p.account_id = t.account_id;
ALTER TABLE enrollment_tokens ALTER COLUMN person_id SET NOT NULL;
ALTER TABLE enrollment_tokens ADD CONSTRAINT enrollment_tokens_person
    FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id);

-- Administrative actions, newest last: who did what, when. Kept with the account
-- (an account's erasure removes its log with it).
CREATE TABLE audit_log (
    account_id  UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id          BIGSERIAL,
    at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    detail      TEXT NOT NULL,
    PRIMARY KEY (account_id, id)
);
