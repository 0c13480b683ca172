-- SOLARIA edge store, version 14: whose machine it is.
--
-- `person` names a teammate (their handle) for a machine of another person of
-- the account, whose records of shared projects this machine pulls; NULL for this
-- person's own machines. Read with the machine's name wherever a record names
-- who wrote it (`@ana on laptop`).
ALTER TABLE machines ADD COLUMN person TEXT;
