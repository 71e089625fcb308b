-- The server's tables (hensuc serve), kept apart from the run log's migrations: workflow
-- definitions per tenant with a soft delete, and the tenant each run belongs to. Times are
-- unix milliseconds, like the run log's.
CREATE TABLE IF NOT EXISTS workflow_defs (
    tenant_id   TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    version     TEXT NOT NULL,
    definition  BYTEA NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    deleted_at  BIGINT,
    PRIMARY KEY (tenant_id, workflow_id)
);

CREATE TABLE IF NOT EXISTS run_tenants (
    run_id      TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_tenants_by_tenant ON run_tenants (tenant_id, created_at);
