-- Idempotent starts (docs/server.md, *Idempotent starts*): the run a tenant's
-- Idempotency-Key started, written in the run's own transaction. A key older than 24 hours is
-- replaced by its next use.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant_id    TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, idem_key)
);
