//! The registry on SQLite: tables beside the run log's in the store's database, written on
//! the store's connection, created if missing (an index added later is created by the same
//! `IF NOT EXISTS` batch when an older file is opened).
//!
//! The paged list ([`crate::RunQuery`]) walks `run_tenants_by_tenant` (or
//! `run_tenants_by_workflow` with a workflow filter) backwards: a table `WITHOUT ROWID` keeps
//! its primary key (`run_id`) at the end of every index, so both are in effect
//! `(…, created_at, run_id)`, the page's order key.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::workflows::{
    StoredWorkflow, WorkflowRegistry, WorkflowSummary, decode, encode, ms, now,
};
use crate::{
    EventBounds, IdempotencyKey, KeyedStart, Result, RunPage, RunQuery, RunRecord, SqliteStore,
    StoreError, TenantEvent,
};

/// Created when a store opens (so the claim statement can tell server runs by their tenant
/// tag) and again by [`SqliteRegistry::open`]; `IF NOT EXISTS` makes both no-ops after the first.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS workflow_defs (
    tenant_id   TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    version     TEXT NOT NULL,
    definition  BLOB NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    deleted_at  INTEGER,
    PRIMARY KEY (tenant_id, workflow_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS run_tenants (
    run_id      TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    created_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_tenants_by_tenant ON run_tenants (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS run_tenants_by_workflow
    ON run_tenants (tenant_id, workflow_id, created_at);
CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant_id    TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, idem_key)
) WITHOUT ROWID;
";

/// The SQLite registry ([`crate::StateStore::registry`] of a [`SqliteStore`]): the store's connection, so a run and its
/// tenant tag share a transaction.
#[derive(Clone, Debug)]
pub struct SqliteRegistry {
    store: SqliteStore,
}

impl SqliteRegistry {
    /// The registry beside `store`, its tables created if missing.
    pub(crate) async fn open(store: &SqliteStore) -> Result<SqliteRegistry> {
        store
            .write(|tx, _| {
                tx.conn
                    .execute_batch(SCHEMA)
                    .and_then(|()| tx.conn.execute_batch(crate::events::SQLITE_SCHEMA))
                    .map_err(|e| StoreError::sqlite(tx.path, e))
            })
            .await?;
        Ok(SqliteRegistry {
            store: store.clone(),
        })
    }

    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T> {
        self.store
            .write(|tx, _| f(tx.conn).map_err(|e| StoreError::sqlite(tx.path, e)))
            .await
    }

    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T> {
        self.store
            .read(|tx, _| f(tx.conn).map_err(|e| StoreError::sqlite(tx.path, e)))
            .await
    }

    fn target(&self) -> String {
        self.store.path().display().to_string()
    }
}

#[async_trait::async_trait]
impl WorkflowRegistry for SqliteRegistry {
    async fn put_workflow(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
        definition: &Value,
    ) -> Result<bool> {
        let bytes = encode(definition)?;
        let now = now();
        let (tenant, id, version) = (tenant.to_owned(), id.to_owned(), version.to_owned());
        // One write transaction (the store's `BEGIN IMMEDIATE`): the read and the upsert.
        self.with(move |tx| {
            let live: bool = tx
                .query_row(
                    "SELECT 1 FROM workflow_defs WHERE tenant_id = ?1 AND workflow_id = ?2 \
                     AND deleted_at IS NULL",
                    params![tenant, id],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            tx.execute(
                "INSERT INTO workflow_defs (tenant_id, workflow_id, version, definition, \
                 created_at, updated_at, deleted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5, NULL) \
                 ON CONFLICT (tenant_id, workflow_id) DO UPDATE SET version = excluded.version, \
                 definition = excluded.definition, updated_at = excluded.updated_at, \
                 deleted_at = NULL",
                params![tenant, id, version, bytes, now],
            )?;
            Ok(!live)
        })
        .await
    }

    async fn get_workflow(&self, tenant: &str, id: &str) -> Result<Option<StoredWorkflow>> {
        let (t, i) = (tenant.to_owned(), id.to_owned());
        let row = self
            .read(move |c| {
                c.query_row(
                    "SELECT version, definition, created_at, updated_at FROM workflow_defs \
                     WHERE tenant_id = ?1 AND workflow_id = ?2 AND deleted_at IS NULL",
                    params![t, i],
                    |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, Vec<u8>>(1)?,
                            r.get::<_, i64>(2)?,
                            r.get::<_, i64>(3)?,
                        ))
                    },
                )
                .optional()
            })
            .await?;
        row.map(|(version, bytes, created, updated)| {
            Ok(StoredWorkflow {
                tenant_id: tenant.to_string(),
                workflow_id: id.to_string(),
                version,
                definition: decode(&self.target(), &bytes)?,
                created_at: ms(created),
                updated_at: ms(updated),
            })
        })
        .transpose()
    }

    async fn list_workflows(&self, tenant: &str) -> Result<Vec<WorkflowSummary>> {
        let tenant = tenant.to_owned();
        self.read(move |c| {
            let mut st = c.prepare(
                "SELECT workflow_id, version FROM workflow_defs WHERE tenant_id = ?1 \
                 AND deleted_at IS NULL ORDER BY workflow_id",
            )?;
            st.query_map(params![tenant], |r| {
                Ok(WorkflowSummary {
                    workflow_id: r.get(0)?,
                    version: r.get(1)?,
                })
            })?
            .collect()
        })
        .await
    }

    async fn delete_workflow(&self, tenant: &str, id: &str) -> Result<bool> {
        let now = now();
        let (tenant, id) = (tenant.to_owned(), id.to_owned());
        self.with(move |c| {
            c.execute(
                "UPDATE workflow_defs SET deleted_at = ?3 WHERE tenant_id = ?1 \
                 AND workflow_id = ?2 AND deleted_at IS NULL",
                params![tenant, id, now],
            )
        })
        .await
        .map(|n| n > 0)
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
        let run_id = run_id.to_owned();
        self.read(move |c| {
            c.query_row(
                "SELECT tenant_id FROM run_tenants WHERE run_id = ?1",
                params![run_id],
                |r| r.get(0),
            )
            .optional()
        })
        .await
    }

    async fn tenant_runs(&self, tenant: &str) -> Result<Vec<String>> {
        let tenant = tenant.to_owned();
        self.read(move |c| {
            let mut st = c.prepare(
                "SELECT run_id FROM run_tenants WHERE tenant_id = ?1 \
                 ORDER BY created_at, run_id",
            )?;
            st.query_map(params![tenant], |r| r.get(0))?.collect()
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
        self.store
            .read(move |tx, _| {
                crate::events::sqlite::after(tx.conn, tx.path, tenant.as_deref(), after, limit)
            })
            .await
    }

    async fn event_bounds(&self) -> Result<EventBounds> {
        self.store
            .read(|tx, _| crate::events::sqlite::bounds(tx.conn, tx.path))
            .await
    }

    async fn event_wakeups(&self) -> Result<Option<crate::EventWakeups>> {
        Ok(None)
    }

    async fn trim_events(&self, before: u64, limit: usize) -> Result<u64> {
        self.store
            .write(move |tx, _| crate::events::sqlite::trim(tx.conn, tx.path, before, limit))
            .await
    }
}
