//! The registry on SQLite: tables beside the run log's in the store's database, written on
//! the store's connection, created if missing.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{StoredWorkflow, WorkflowRegistry, WorkflowSummary, decode, encode, ms, now};
use crate::{Result, RunRecord, SqliteStore, StoreError};

const SCHEMA: &str = "
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
";

/// The SQLite registry ([`crate::StateStore::registry`] of a [`SqliteStore`]): the store's connection, so a run and its
/// tenant tag share a transaction.
#[derive(Clone, Debug)]
pub struct SqliteRegistry {
    store: SqliteStore,
}

impl SqliteRegistry {
    /// The registry beside `store`, its tables created if missing.
    pub(crate) fn open(store: &SqliteStore) -> Result<SqliteRegistry> {
        store.write(|tx| {
            tx.conn
                .execute_batch(SCHEMA)
                .map_err(|e| StoreError::sqlite(tx.path, e))
        })?;
        Ok(SqliteRegistry {
            store: store.clone(),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        self.store
            .write(|tx| f(tx.conn).map_err(|e| StoreError::sqlite(tx.path, e)))
    }

    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        self.store
            .read(|tx| f(tx.conn).map_err(|e| StoreError::sqlite(tx.path, e)))
    }

    fn target(&self) -> String {
        self.store.path().display().to_string()
    }
}

impl WorkflowRegistry for SqliteRegistry {
    fn put_workflow(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
        definition: &Value,
    ) -> Result<bool> {
        let bytes = encode(definition)?;
        let now = now();
        // One write transaction (the store's `BEGIN IMMEDIATE`): the read and the upsert.
        self.with(|tx| {
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
    }

    fn get_workflow(&self, tenant: &str, id: &str) -> Result<Option<StoredWorkflow>> {
        let row = self.read(|c| {
            c.query_row(
                "SELECT version, definition, created_at, updated_at FROM workflow_defs \
                 WHERE tenant_id = ?1 AND workflow_id = ?2 AND deleted_at IS NULL",
                params![tenant, id],
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
        })?;
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

    fn list_workflows(&self, tenant: &str) -> Result<Vec<WorkflowSummary>> {
        self.read(|c| {
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
    }

    fn delete_workflow(&self, tenant: &str, id: &str) -> Result<bool> {
        let now = now();
        self.with(|c| {
            c.execute(
                "UPDATE workflow_defs SET deleted_at = ?3 WHERE tenant_id = ?1 \
                 AND workflow_id = ?2 AND deleted_at IS NULL",
                params![tenant, id, now],
            )
        })
        .map(|n| n > 0)
    }

    fn tag_run(&self, run_id: &str, tenant: &str, workflow_id: &str) -> Result<()> {
        self.store.tag_run(run_id, tenant, workflow_id)
    }

    fn create_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        self.store
            .create_tenant_run(tenant, record, workflow_json, snapshot)
    }

    fn run_tenant(&self, run_id: &str) -> Result<Option<String>> {
        self.read(|c| {
            c.query_row(
                "SELECT tenant_id FROM run_tenants WHERE run_id = ?1",
                params![run_id],
                |r| r.get(0),
            )
            .optional()
        })
    }

    fn tenant_runs(&self, tenant: &str) -> Result<Vec<String>> {
        self.read(|c| {
            let mut st = c.prepare(
                "SELECT run_id FROM run_tenants WHERE tenant_id = ?1 \
                 ORDER BY created_at, run_id",
            )?;
            st.query_map(params![tenant], |r| r.get(0))?.collect()
        })
    }
}
