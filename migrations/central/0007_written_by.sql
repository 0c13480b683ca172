-- SOLARIA central service: who wrote a knowledge record (`person`, `agent`,
-- `agent:<name>`, `summarizer`), as the edge that pushed it says
-- (`solaria_shared::knowledge::WrittenBy`). Never edit once released: add a new file.
-- Records pushed before this read as a person's: nothing told them apart.

ALTER TABLE memory_knowledge ADD COLUMN written_by TEXT NOT NULL DEFAULT 'person';
