-- Version 7: the `hensu_work` wake-up is sent after the writing transaction commits, by the store
-- (`postgres/ops.rs`, `in_tx!`), in a transaction of its own that does not wait for its WAL
-- flush, instead of by version 6's triggers inside the writing transaction. PostgreSQL holds a
-- database-wide lock from a transaction's NOTIFY until its commit is flushed, so the triggers
-- made every run start and every signal in the cluster commit one flush at a time
-- (docs/performance.md, *Round 3, fifth sitting*). The channel and its payload (the writer's
-- schema) are unchanged, so listeners are too.
DROP TRIGGER runs_queued_notify ON runs;
DROP TRIGGER run_signals_notify ON run_signals;
DROP FUNCTION hensu_work_notify();
