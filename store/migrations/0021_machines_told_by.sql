-- SOLARIA edge store, version 21: who told this store a machine's name and whose
-- it is. `account`: the store itself, or its central service at a sync; `file`:
-- an imported export. What the account says stands over what a file says, so an
-- import (`--from` included) never relabels a machine the account named. Rows
-- from before this version read `account`: the safe side.
ALTER TABLE machines ADD COLUMN told_by TEXT NOT NULL DEFAULT 'account'
    CHECK (told_by IN ('account', 'file'));
