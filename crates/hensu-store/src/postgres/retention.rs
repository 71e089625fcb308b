//! Retention on PostgreSQL (`crate::retention`): the same rows and deletion as SQLite's, in one
//! transaction per batch. Space: a deleted row's space is made reusable by autovacuum; only
//! `VACUUM FULL` (an exclusive lock) gives it back to the operating system, which hensu never
//! runs on its own (docs/retention.md, *Space*).

use super::{pg_err, pool_err};
use crate::retention::{PurgeRow, Reclaimed};
use crate::{PgStore, Result, RunStatus};

impl PgStore {
    pub(crate) async fn purge_rows_pg(&self) -> Result<Vec<PurgeRow>> {
        self.with(|inner| async move {
            let c = inner
                .pool
                .get()
                .await
                .map_err(|e| pool_err(&inner.target, e))?;
            let rows = c
                .query(
                    "SELECT r.run_id, r.workflow_id, r.status, r.exit_status, r.updated_at, \
                     r.parent_run, t.tenant_id FROM runs r \
                     LEFT JOIN run_tenants t ON t.run_id = r.run_id",
                    &[],
                )
                .await
                .map_err(|e| pg_err(&inner.target, e))?;
            rows.iter()
                .map(|r| {
                    let status: String = r.get(2);
                    Ok(PurgeRow {
                        run_id: r.get(0),
                        workflow_id: r.get(1),
                        status: RunStatus::parse(&status).ok_or_else(|| {
                            crate::backend::corrupt(
                                &inner.path,
                                format!("unknown status `{status}`"),
                            )
                        })?,
                        exit_status: r.get(3),
                        updated_at: u64::try_from(r.get::<_, i64>(4)).unwrap_or(0),
                        parent_run: r.get(5),
                        tenant: r.get(6),
                    })
                })
                .collect()
        })
        .await
    }

    pub(crate) async fn delete_runs_pg(&self, ids: &[String]) -> Result<Vec<String>> {
        let ids = ids.to_vec();
        self.with(|inner| async move {
            let pg = |e| pg_err(&inner.target, e);
            let mut c = inner
                .pool
                .get()
                .await
                .map_err(|e| pool_err(&inner.target, e))?;
            let tx = c.transaction().await.map_err(pg)?;
            let mut gone: Vec<String> = Vec::new();
            // Twice: a parent listed before its child goes on the second round.
            for _ in 0..2 {
                for id in &ids {
                    if gone.contains(id) {
                        continue;
                    }
                    let n = tx
                        .execute(
                            "DELETE FROM runs WHERE run_id = $1 \
                             AND status IN ('completed', 'failed', 'rejected', 'cancelled') \
                             AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_run = $1)",
                            &[id],
                        )
                        .await
                        .map_err(pg)?;
                    if n == 1 {
                        gone.push(id.clone());
                    }
                }
            }
            if !gone.is_empty() {
                tx.execute("DELETE FROM run_tenants WHERE run_id = ANY($1)", &[&gone])
                    .await
                    .map_err(pg)?;
                tx.execute(
                    "DELETE FROM idempotency_keys WHERE run_id = ANY($1)",
                    &[&gone],
                )
                .await
                .map_err(pg)?;
            }
            tx.commit().await.map_err(pg)?;
            Ok(gone)
        })
        .await
    }

    pub(crate) fn reclaim_pg(&self) -> Reclaimed {
        Reclaimed {
            note: "PostgreSQL: autovacuum makes the deleted rows' space reusable; VACUUM FULL \
                   (an exclusive lock: a maintenance window) returns it to the operating system"
                .into(),
            ..Reclaimed::default()
        }
    }
}
