-- Version 4: durable waits (docs/language.md, *Timers and signals*). A paused run waiting at a
-- `wait` or `awaitSignal` node has the time a claim may take it (`wake_at`, unix ms) and the
-- signal that wakes it earlier (`waiting_for`); the signals sent to a run are kept, numbered
-- per run.
ALTER TABLE runs ADD COLUMN wake_at BIGINT;
ALTER TABLE runs ADD COLUMN waiting_for TEXT;
CREATE INDEX runs_by_wake ON runs (wake_at) WHERE wake_at IS NOT NULL;
CREATE TABLE run_signals (
    run_id  TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq     BIGINT NOT NULL,
    name    TEXT NOT NULL,
    payload BYTEA NOT NULL,
    sent_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
