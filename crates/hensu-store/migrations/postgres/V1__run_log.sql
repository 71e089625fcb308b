-- The PostgreSQL state store, version 1: the same tables as the SQLite store's schema
-- version 2 (see src/sqlite/schema.rs). Times are unix milliseconds; payloads are the
-- store's JSON bytes (BYTEA keeps them byte-exact, key order included).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE runs (
    run_id           TEXT PRIMARY KEY,
    workflow_id      TEXT NOT NULL,
    workflow_version TEXT NOT NULL,
    status           TEXT NOT NULL,
    current_node     TEXT,
    started_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    correlation_id   TEXT,
    exit_status      TEXT,
    step             BIGINT NOT NULL,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    snapshot_step    BIGINT NOT NULL DEFAULT 0,
    snapshot_bytes   BIGINT NOT NULL DEFAULT 0,
    log_rows         BIGINT NOT NULL DEFAULT 0,
    log_bytes        BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_start ON runs (started_at DESC, run_id DESC);
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX runs_by_correlation ON runs (correlation_id) WHERE correlation_id IS NOT NULL;

CREATE TABLE run_data (
    run_id   TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    workflow BYTEA NOT NULL
);

CREATE TABLE snapshots (
    run_id           TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step             BIGINT NOT NULL,
    snapshot_version BIGINT NOT NULL,
    state            BYTEA NOT NULL,
    PRIMARY KEY (run_id, step)
);

CREATE TABLE run_log (
    run_id         TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step           BIGINT NOT NULL,
    kind           TEXT NOT NULL,
    status         TEXT NOT NULL,
    node           TEXT,
    executed_node  TEXT,
    node_status    TEXT,
    output         BYTEA,
    delta          BYTEA,
    state_version  BIGINT,
    at             BIGINT NOT NULL,
    started_at     BIGINT,
    duration_ms    BIGINT,
    snapshot_bytes BIGINT,
    PRIMARY KEY (run_id, step)
);

CREATE TABLE leases (
    run_id      TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    owner       TEXT NOT NULL,
    host        TEXT NOT NULL,
    pid         BIGINT NOT NULL,
    acquired_at BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX leases_by_expiry ON leases (expires_at);

INSERT INTO meta (key, value) VALUES ('schema_version', '1');
