//! The registry on PostgreSQL: the store's own pool (so a run and its tenant tag share a
//! transaction), with its own refinery migrations (`migrations/postgres_server/`, history
//! table `hensu_server_schema_history`) so the run log's migrations are untouched.

use std::future::Future;

use serde_json::Value;

use super::{pg_err, pool_err};
use crate::workflows::{
    StoredWorkflow, WorkflowRegistry, WorkflowSummary, decode, encode, ms, now,
};
use crate::{
    EventBounds, IdempotencyKey, KeyedStart, PgStore, Result, RunPage, RunQuery, RunRecord,
    StoreError, TenantEvent,
};

mod embedded {
    refinery::embed_migrations!("migrations/postgres_server");
}

/// Serializes the registry's migrations between processes.
const MIGRATION_LOCK: i64 = 0x6865_6e73_755f_7376; // "hensu_sv"

/// The PostgreSQL registry ([`crate::StateStore::registry`] of a [`PgStore`]).
#[derive(Clone)]
pub struct PgRegistry {
    store: PgStore,
}

impl std::fmt::Debug for PgRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgRegistry")
            .field("target", &self.store.target())
            .finish_non_exhaustive()
    }
}

impl PgRegistry {
    /// The registry beside `store` (in its schema; its migrations were applied when the
    /// store opened, [`migrate`]).
    pub(crate) fn open(store: &PgStore) -> PgRegistry {
        PgRegistry {
            store: store.clone(),
        }
    }
}

/// Applies the registry's migrations to `store`'s schema. Run when the store opens: a claim
/// tells a server's run from a local one by its tenant tag ([`crate::ClaimScope`]).
pub(crate) async fn migrate(store: &PgStore) -> Result<()> {
    PgRegistry::open(store)
        .query(|mut c, target| async move {
            let pg = |e| pg_err(&target, e);
            c.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
                .await
                .map_err(pg)?;
            let client: &mut tokio_postgres::Client = &mut c;
            let migrated = embedded::migrations::runner()
                .set_migration_table_name("hensu_server_schema_history")
                .run_async(client)
                .await
                .map(|_| ())
                .map_err(|e| StoreError::Postgres {
                    target: target.clone(),
                    detail: format!("registry migration failed: {e}"),
                });
            // The connection goes back to the pool: give the session lock up.
            let _ = c
                .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
                .await;
            migrated
        })
        .await
}

impl PgRegistry {
    async fn query<T, F, Fut>(&self, f: F) -> Result<T>
    where
        F: FnOnce(deadpool_postgres::Object, String) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.store
            .with(move |inner| async move {
                let client = inner
                    .pool
                    .get()
                    .await
                    .map_err(|e| pool_err(&inner.target, e))?;
                f(client, inner.target.clone()).await
            })
            .await
    }
}

#[async_trait::async_trait]
impl WorkflowRegistry for PgRegistry {
    async fn put_workflow(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
        definition: &Value,
    ) -> Result<bool> {
        let bytes = encode(definition)?;
        let (tenant, id, version) = (tenant.to_string(), id.to_string(), version.to_string());
        self.query(move |mut c, target| async move {
            let pg = |e| pg_err(&target, e);
            let tx = c.transaction().await.map_err(pg)?;
            // Serializes concurrent pushes of one (tenant, id) across servers.
            tx.execute(
                "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))",
                &[&tenant, &id],
            )
            .await
            .map_err(pg)?;
            let live = tx
                .query_opt(
                    "SELECT 1 FROM workflow_defs WHERE tenant_id = $1 AND workflow_id = $2 \
                     AND deleted_at IS NULL",
                    &[&tenant, &id],
                )
                .await
                .map_err(pg)?
                .is_some();
            tx.execute(
                "INSERT INTO workflow_defs (tenant_id, workflow_id, version, definition, \
                 created_at, updated_at, deleted_at) VALUES ($1, $2, $3, $4, $5, $5, NULL) \
                 ON CONFLICT (tenant_id, workflow_id) DO UPDATE SET version = EXCLUDED.version, \
                 definition = EXCLUDED.definition, updated_at = EXCLUDED.updated_at, \
                 deleted_at = NULL",
                &[&tenant, &id, &version, &bytes, &now()],
            )
            .await
            .map_err(pg)?;
            tx.commit().await.map_err(pg)?;
            Ok(!live)
        })
        .await
    }

    async fn get_workflow(&self, tenant: &str, id: &str) -> Result<Option<StoredWorkflow>> {
        let (tenant, id) = (tenant.to_string(), id.to_string());
        self.query(move |c, target| async move {
            let row = c
                .query_opt(
                    "SELECT version, definition, created_at, updated_at FROM workflow_defs \
                     WHERE tenant_id = $1 AND workflow_id = $2 AND deleted_at IS NULL",
                    &[&tenant, &id],
                )
                .await
                .map_err(|e| pg_err(&target, e))?;
            row.map(|r| {
                Ok(StoredWorkflow {
                    tenant_id: tenant.clone(),
                    workflow_id: id.clone(),
                    version: r.get(0),
                    definition: decode(&target, r.get::<_, &[u8]>(1))?,
                    created_at: ms(r.get(2)),
                    updated_at: ms(r.get(3)),
                })
            })
            .transpose()
        })
        .await
    }

    async fn list_workflows(&self, tenant: &str) -> Result<Vec<WorkflowSummary>> {
        let tenant = tenant.to_string();
        self.query(move |c, target| async move {
            let rows = c
                .query(
                    "SELECT workflow_id, version FROM workflow_defs WHERE tenant_id = $1 \
                     AND deleted_at IS NULL ORDER BY workflow_id",
                    &[&tenant],
                )
                .await
                .map_err(|e| pg_err(&target, e))?;
            Ok(rows
                .iter()
                .map(|r| WorkflowSummary {
                    workflow_id: r.get(0),
                    version: r.get(1),
                })
                .collect())
        })
        .await
    }

    async fn delete_workflow(&self, tenant: &str, id: &str) -> Result<bool> {
        let (tenant, id) = (tenant.to_string(), id.to_string());
        self.query(move |c, target| async move {
            let n = c
                .execute(
                    "UPDATE workflow_defs SET deleted_at = $3 WHERE tenant_id = $1 \
                     AND workflow_id = $2 AND deleted_at IS NULL",
                    &[&tenant, &id, &now()],
                )
                .await
                .map_err(|e| pg_err(&target, e))?;
            Ok(n > 0)
        })
        .await
    }

    async fn tag_run(&self, run_id: &str, tenant: &str, workflow_id: &str) -> Result<()> {
        self.store.tag_run(run_id, tenant, workflow_id).await
    }

    async fn create_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        self.store
            .create_tenant_run(tenant, record, workflow_json, snapshot)
            .await
    }

    async fn create_tenant_runs(
        &self,
        tenant: &str,
        runs: &[(RunRecord, Value)],
        workflow_json: &[u8],
    ) -> Result<()> {
        self.store
            .create_tenant_runs(tenant, runs, workflow_json)
            .await
    }

    async fn create_keyed_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
        key: &IdempotencyKey,
    ) -> Result<KeyedStart> {
        self.store
            .create_keyed_tenant_run(tenant, record, workflow_json, snapshot, key)
            .await
    }

    async fn run_tenant(&self, run_id: &str) -> Result<Option<String>> {
        let run_id = run_id.to_string();
        self.query(move |c, target| async move {
            let row = c
                .query_opt(
                    "SELECT tenant_id FROM run_tenants WHERE run_id = $1",
                    &[&run_id],
                )
                .await
                .map_err(|e| pg_err(&target, e))?;
            Ok(row.map(|r| r.get(0)))
        })
        .await
    }

    async fn tenant_runs(&self, tenant: &str) -> Result<Vec<String>> {
        let tenant = tenant.to_string();
        self.query(move |c, target| async move {
            let rows = c
                .query(
                    "SELECT run_id FROM run_tenants WHERE tenant_id = $1 \
                     ORDER BY created_at, run_id",
                    &[&tenant],
                )
                .await
                .map_err(|e| pg_err(&target, e))?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
        .await
    }

    async fn tenant_runs_page(&self, tenant: &str, query: &RunQuery) -> Result<RunPage> {
        self.store.tenant_runs_page(tenant, query).await
    }

    async fn events_after(
        &self,
        tenant: Option<&str>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<TenantEvent>> {
        let tenant = tenant.map(str::to_owned);
        self.query(move |mut c, target| async move {
            crate::events::pg::sequence_all(&mut c, &target).await?;
            crate::events::pg::after(&c, &target, tenant.as_deref(), after, limit).await
        })
        .await
    }

    async fn event_bounds(&self) -> Result<EventBounds> {
        self.query(|mut c, target| async move {
            crate::events::pg::sequence_all(&mut c, &target).await?;
            crate::events::pg::bounds(&c, &target).await
        })
        .await
    }

    async fn event_wakeups(&self) -> Result<Option<crate::EventWakeups>> {
        self.store
            .with(|inner| async move {
                crate::events::pg::listen(&inner.config, &inner.target)
                    .await
                    .map(Some)
            })
            .await
    }

    async fn trim_events(&self, before: u64, limit: usize) -> Result<u64> {
        self.query(move |c, target| async move {
            crate::events::pg::trim(&c, &target, before, limit).await
        })
        .await
    }
}
