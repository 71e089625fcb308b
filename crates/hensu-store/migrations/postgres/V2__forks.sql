-- Version 2: forked runs. A fork's log continues its parent's up to `parent_step` (the
-- parent's rows are read through, never copied; see src/lineage.rs).
ALTER TABLE runs ADD COLUMN parent_run TEXT;
ALTER TABLE runs ADD COLUMN parent_step BIGINT;
CREATE INDEX runs_by_parent ON runs (parent_run) WHERE parent_run IS NOT NULL;
