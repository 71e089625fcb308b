-- The paged execution list (docs/server.md, *Paging*): a page walks one of these indexes
-- backwards from its cursor, (created_at, run_id) < (cursor), newest first.
CREATE INDEX IF NOT EXISTS run_tenants_page ON run_tenants (tenant_id, created_at, run_id);
CREATE INDEX IF NOT EXISTS run_tenants_by_workflow
    ON run_tenants (tenant_id, workflow_id, created_at, run_id);
-- Superseded by run_tenants_page (its prefix).
DROP INDEX IF EXISTS run_tenants_by_tenant;
