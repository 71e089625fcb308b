//! The registry on PostgreSQL: its own small pool on the store's driver runtime (see
//! `crate::postgres`: one per process, never dropped),
//! its own refinery migrations (`migrations/postgres_server/`, history table
//! `hensu_server_schema_history`) so the run log's migrations are untouched.

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::Pool;
use serde_json::Value;
use tokio_postgres::NoTls;

use super::{StoredWorkflow, WorkflowRegistry, WorkflowSummary, decode, encode, ms, now};
use crate::postgres::{Opened, open_pool, pg_err, pool_err};
use crate::{Result, StoreError};

mod embedded {
    refinery::embed_migrations!("migrations/postgres_server");
}

/// Serializes the registry's migrations between processes.
const MIGRATION_LOCK: i64 = 0x6865_6e73_755f_7376; // "hensu_sv"

/// The PostgreSQL registry.
#[derive(Clone)]
pub struct PgRegistry {
    pool: Pool,
    target: String,
    rt: tokio::runtime::Handle,
}

impl std::fmt::Debug for PgRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgRegistry")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl PgRegistry {
    /// Connects to `url` and applies the registry's migrations, in `schema` when given (as
    /// [`crate::PgStore::open_in_schema`]; the name must be a plain lowercase identifier).
    pub fn open(url: &str, schema: Option<&str>) -> Result<PgRegistry> {
        let Opened {
            config,
            target,
            rt,
            pool,
        } = open_pool(url, schema, 4, Duration::from_secs(10))?;
        let reg = PgRegistry {
            pool,
            target: target.clone(),
            rt,
        };
        let schema = schema.map(str::to_string);
        reg.run(async move {
            let (mut client, connection) = config
                .connect(NoTls)
                .await
                .map_err(|e| pg_err(&target, e))?;
            let task = tokio::spawn(connection);
            let pg = |e| pg_err(&target, e);
            client
                .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
                .await
                .map_err(pg)?;
            if let Some(s) = &schema {
                // Validated above: lowercase letters, digits and `_` only.
                client
                    .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {s}"))
                    .await
                    .map_err(pg)?;
            }
            let migrated = embedded::migrations::runner()
                .set_migration_table_name("hensu_server_schema_history")
                .run_async(&mut client)
                .await
                .map(|_| ())
                .map_err(|e| StoreError::Postgres {
                    target: target.clone(),
                    detail: format!("registry migration failed: {e}"),
                });
            let _ = client
                .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
                .await;
            drop(client);
            task.abort();
            migrated
        })?;
        Ok(reg)
    }

    fn run<T: Send + 'static>(
        &self,
        f: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.rt.spawn(async move {
            let _ = tx.send(f.await);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(StoreError::Postgres {
                target: self.target.clone(),
                detail: "the database task stopped before answering".into(),
            })
        })
    }

    fn query<T, F, Fut>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(deadpool_postgres::Object, String) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T>> + Send + 'static,
    {
        let pool = self.pool.clone();
        let target = self.target.clone();
        self.run(async move {
            let client = pool.get().await.map_err(|e| pool_err(&target, e))?;
            f(client, target).await
        })
    }
}

impl WorkflowRegistry for PgRegistry {
    fn put_workflow(
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
    }

    fn get_workflow(&self, tenant: &str, id: &str) -> Result<Option<StoredWorkflow>> {
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
    }

    fn list_workflows(&self, tenant: &str) -> Result<Vec<WorkflowSummary>> {
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
    }

    fn delete_workflow(&self, tenant: &str, id: &str) -> Result<bool> {
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
    }

    fn tag_run(&self, run_id: &str, tenant: &str, workflow_id: &str) -> Result<()> {
        let (run_id, tenant, wf) = (
            run_id.to_string(),
            tenant.to_string(),
            workflow_id.to_string(),
        );
        self.query(move |c, target| async move {
            let n = c
                .execute(
                    "INSERT INTO run_tenants (run_id, tenant_id, workflow_id, created_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING",
                    &[&run_id, &tenant, &wf, &now()],
                )
                .await
                .map_err(|e| pg_err(&target, e))?;
            if n == 0 {
                return Err(StoreError::AlreadyExists { run_id });
            }
            Ok(())
        })
    }

    fn run_tenant(&self, run_id: &str) -> Result<Option<String>> {
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
    }

    fn tenant_runs(&self, tenant: &str) -> Result<Vec<String>> {
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
    }
}
