-- SOLARIA edge store, version 20: words are indexed by their English and Spanish
-- stems (store/src/stemming.rs, the rule in shared/src/words.rs).
--
-- FTS5's `porter` knew English only: "caducan" never found "caducidad", nor
-- "pruebas" "prueba falla". The three full-text indexes are made again with the
-- `solaria_stem` tokenizer, which every connection of SOLARIA's programs has
-- (`register_extensions`), and filled from what their triggers copy: the same
-- rows, columns and rules as before. The triggers name the tables, not their
-- tokenizer, so they stay as they are.

DROP TABLE observations_fts;
CREATE VIRTUAL TABLE observations_fts USING fts5 (
    title, body, tool, scope,
    content = '', contentless_delete = 1,
    tokenize = 'solaria_stem unicode61 remove_diacritics 2'
);
INSERT INTO observations_fts (rowid, title, body, tool, scope)
SELECT row, title, body, tool, scope FROM observations_searched;

DROP TABLE summaries_fts;
CREATE VIRTUAL TABLE summaries_fts USING fts5 (
    text, key_points, tags, scope,
    content = '', contentless_delete = 1,
    tokenize = 'solaria_stem unicode61 remove_diacritics 2'
);
INSERT INTO summaries_fts (rowid, text, key_points, tags, scope)
SELECT rowid, text, key_points, tags, scope FROM summaries WHERE deleted = 0;

DROP TABLE knowledge_fts;
CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
    title, text, scope,
    content = '', contentless_delete = 1,
    tokenize = 'solaria_stem unicode61 remove_diacritics 2'
);
INSERT INTO knowledge_fts (rowid, title, text, scope)
SELECT rowid, title, text, scope FROM knowledge WHERE deleted = 0 AND kind <> 'link';
