//! The registry on SQLite: its own connection to the store's file (WAL lets it share the file
//! with the run log's connection), tables created if missing.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{StoredWorkflow, WorkflowRegistry, WorkflowSummary, decode, encode, ms, now};
use crate::{Result, StoreError};

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

/// The SQLite registry.
pub struct SqliteRegistry {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteRegistry")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SqliteRegistry {
    /// Opens (creating if needed) the registry tables in the database file `path`.
    pub fn open_file(path: impl AsRef<Path>) -> Result<SqliteRegistry> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let conn = Connection::open(&path).map_err(|e| StoreError::sqlite(&path, e))?;
        SqliteRegistry::init(conn, path)
    }

    /// A registry in a private `:memory:` database.
    pub fn in_memory() -> Result<SqliteRegistry> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|e| StoreError::sqlite(&path, e))?;
        SqliteRegistry::init(conn, path)
    }

    fn init(conn: Connection, path: PathBuf) -> Result<SqliteRegistry> {
        let sq = |e| StoreError::sqlite(&path, e);
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sq)?;
        conn.execute_batch(SCHEMA).map_err(sq)?;
        Ok(SqliteRegistry {
            conn: Mutex::new(conn),
            path,
        })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| StoreError::Invalid("registry connection poisoned".into()))?;
        f(&mut conn).map_err(|e| StoreError::sqlite(&self.path, e))
    }

    fn target(&self) -> String {
        self.path.display().to_string()
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
        self.with(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
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
            tx.commit()?;
            Ok(!live)
        })
    }

    fn get_workflow(&self, tenant: &str, id: &str) -> Result<Option<StoredWorkflow>> {
        let row = self.with(|c| {
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
        self.with(|c| {
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
        let now = now();
        let n = self.with(|c| {
            c.execute(
                "INSERT INTO run_tenants (run_id, tenant_id, workflow_id, created_at) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (run_id) DO NOTHING",
                params![run_id, tenant, workflow_id, now],
            )
        })?;
        if n == 0 {
            return Err(StoreError::AlreadyExists {
                run_id: run_id.to_string(),
            });
        }
        Ok(())
    }

    fn run_tenant(&self, run_id: &str) -> Result<Option<String>> {
        self.with(|c| {
            c.query_row(
                "SELECT tenant_id FROM run_tenants WHERE run_id = ?1",
                params![run_id],
                |r| r.get(0),
            )
            .optional()
        })
    }

    fn tenant_runs(&self, tenant: &str) -> Result<Vec<String>> {
        self.with(|c| {
            let mut st = c.prepare(
                "SELECT run_id FROM run_tenants WHERE tenant_id = ?1 \
                 ORDER BY created_at, run_id",
            )?;
            st.query_map(params![tenant], |r| r.get(0))?.collect()
        })
    }
}
