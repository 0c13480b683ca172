-- SOLARIA edge store, version 13: who wrote a knowledge record.
--
-- `person` (at the command line), `agent` or `agent:<name>` (through SOLARIA's MCP
-- tools, or a command run in an agent's shell), `summarizer` (a proposal of the
-- session summarizer). Shown wherever the record is shown; a memory about how to
-- behave that a person did not write is a proposal until a person confirms it
-- (`solaria_shared::context::place_in_context`). Records written before this read
-- as a person's: nothing told them apart.

ALTER TABLE knowledge ADD COLUMN written_by TEXT NOT NULL DEFAULT 'person';
