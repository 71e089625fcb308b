//! Retention on SQLite (`crate::retention`): the rows a purge looks at, the deletion of
//! finished runs (their log, snapshots, workflow and lease go by `ON DELETE CASCADE`; their
//! tenant tag and idempotency keys beside), and giving the space back (incremental vacuum).

use rusqlite::{OptionalExtension, params};

use crate::retention::{PurgeRow, Reclaimed};
use crate::{Result, RunStatus, SqliteStore, StoreError};

const FINISHED: &str = "('completed', 'failed', 'rejected', 'cancelled')";

impl SqliteStore {
    pub(crate) async fn purge_rows_sqlite(&self) -> Result<Vec<PurgeRow>> {
        self.read(|tx, _| {
            let sq = |e| StoreError::sqlite(tx.path, e);
            let mut st = tx
                .conn
                .prepare(
                    "SELECT r.run_id, r.workflow_id, r.status, r.exit_status, r.updated_at, \
                     r.parent_run, t.tenant_id FROM runs r \
                     LEFT JOIN run_tenants t ON t.run_id = r.run_id",
                )
                .map_err(sq)?;
            let rows = st
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, i64>(4)?,
                        r.get::<_, Option<String>>(5)?,
                        r.get::<_, Option<String>>(6)?,
                    ))
                })
                .map_err(sq)?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(sq)?;
            rows.into_iter()
                .map(
                    |(run_id, workflow_id, status, exit_status, at, parent, tenant)| {
                        Ok(PurgeRow {
                            status: RunStatus::parse(&status).ok_or_else(|| {
                                crate::backend::corrupt(
                                    tx.path,
                                    format!("unknown status `{status}`"),
                                )
                            })?,
                            run_id,
                            workflow_id,
                            exit_status,
                            updated_at: u64::try_from(at).unwrap_or(0),
                            parent_run: parent,
                            tenant,
                        })
                    },
                )
                .collect()
        })
        .await
    }

    pub(crate) async fn delete_runs_sqlite(&self, ids: &[String]) -> Result<Vec<String>> {
        let ids = ids.to_vec();
        self.write(move |tx, _| {
            let sq = |e| StoreError::sqlite(tx.path, e);
            let mut gone = Vec::new();
            // Twice: a parent listed before its child goes on the second round.
            for _ in 0..2 {
                for id in &ids {
                    if gone.contains(id) {
                        continue;
                    }
                    let n = tx
                        .conn
                        .execute(
                            &format!(
                                "DELETE FROM runs WHERE run_id = ?1 AND status IN {FINISHED} \
                                 AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_run = ?1)"
                            ),
                            params![id],
                        )
                        .map_err(sq)?;
                    if n == 1 {
                        tx.conn
                            .execute("DELETE FROM run_tenants WHERE run_id = ?1", params![id])
                            .map_err(sq)?;
                        gone.push(id.clone());
                    }
                }
            }
            if !gone.is_empty() {
                let list = vec!["?"; gone.len()].join(", ");
                tx.conn
                    .execute(
                        &format!("DELETE FROM idempotency_keys WHERE run_id IN ({list})"),
                        rusqlite::params_from_iter(gone.iter()),
                    )
                    .map_err(sq)?;
            }
            Ok(gone)
        })
        .await
    }

    /// Incremental vacuum when the file was created with it (every store since schema 7),
    /// then a WAL checkpoint that truncates the log, so the file shrinks; without it, the free
    /// pages are reported (SQLite reuses them for new rows; `VACUUM` gives them back).
    pub(crate) async fn reclaim_sqlite(&self, rewrite: bool) -> Result<Reclaimed> {
        if rewrite {
            self.vacuum_sqlite().await?;
        }
        self.call(|core, _| {
            let conn = &core.conn;
            let sq = |e| StoreError::sqlite(core.path.as_path(), e);
            let pragma = |name: &str| -> Result<u64> {
                conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
                    .map(|v| u64::try_from(v).unwrap_or(0))
                    .map_err(sq)
            };
            let size = || -> Result<u64> { Ok(pragma("page_count")? * pragma("page_size")?) };
            let before = size()?;
            let incremental = pragma("auto_vacuum")? == 2;
            if incremental {
                // The vacuum runs as its answer is stepped through: read it all.
                let mut st = conn.prepare("PRAGMA incremental_vacuum").map_err(sq)?;
                let mut rows = st.query([]).map_err(sq)?;
                while rows.next().map_err(sq)?.is_some() {}
            }
            let _ = conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .optional();
            Ok(Reclaimed {
                bytes_before: Some(before),
                bytes_after: Some(size()?),
                free_pages: Some(pragma("freelist_count")?),
                note: if incremental {
                    "SQLite: incremental vacuum gave the freed pages back to the file system".into()
                } else {
                    "SQLite: this file was created without incremental vacuum (before schema 7): \
                     freed pages are reused by new rows; `hensuc runs purge --vacuum` rewrites \
                     the file with it"
                        .into()
                },
            })
        })
        .await
    }

    /// `VACUUM` with incremental auto-vacuum switched on: rewrites the whole file (it needs the
    /// database to itself and up to its size again in free disk).
    async fn vacuum_sqlite(&self) -> Result<()> {
        self.call(|core, _| {
            core.conn
                .execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")
                .map_err(|e| StoreError::sqlite(core.path.as_path(), e))
        })
        .await
    }
}
