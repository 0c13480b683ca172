-- SOLARIA edge store, version 19: the records that replace a given one, found by
-- index. Each knowledge write asks which records supersede it (a replacement may
-- arrive before what it replaces); without this index that question read every
-- record of its kind, so writing 10,000 memories took minutes.
CREATE INDEX knowledge_supersedes ON knowledge (json_extract(body, '$.supersedes'))
WHERE json_extract(body, '$.supersedes') IS NOT NULL;
