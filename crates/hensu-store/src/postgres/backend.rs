//! [`Backend`] on PostgreSQL: plain SQL prepared (and cached) per connection, in one
//! transaction of a pooled connection. Writes lock the run's row first
//! ([`Backend::run`] with `lock`: `FOR UPDATE`), so the writes to one run serialize.

use std::path::Path;

use deadpool_postgres::Transaction;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::pg_err;
use crate::backend::KeyRow;
use crate::backend::{
    Backend, ClaimedLease, DeltaVisitor, LogState, NewLogRow, RawLogRow, Records,
};
use crate::backend::{corrupt, parse_kind, parse_status, sat_i64, to_i64, to_u64};
use crate::owner::LeaseRow;
use crate::page::{PageParam, page_sql};
use crate::query::RunQuery;
use crate::{
    CheckpointMeta, ClaimScope, LogKind, OwnerId, RecordUpdate, Result, RunParent, RunRecord,
    RunWait,
};

pub(crate) const RECORD_COLS: &str = "run_id, workflow_id, workflow_version, status, \
     current_node, started_at, updated_at, correlation_id, exit_status, step, cancel_requested, \
     snapshot_step, snapshot_bytes, log_rows, log_bytes, parent_run, parent_step, \
     pause_requested, wake_at, waiting_for";

/// The column after [`RECORD_COLS`] in a statement that appends one (a page's `created_at`).
const AFTER_RECORD: usize = 20;

const META_COLS: &str =
    "step, node, status, at, snapshot_bytes, kind, executed_node, node_status, duration_ms";

/// One transaction on a pooled connection.
pub(crate) struct PgTx<'a> {
    pub tx: &'a Transaction<'a>,
    /// The password-free URL, for messages.
    pub target: &'a str,
    pub path: &'a Path,
    /// Set by a write that gives idle workers something to do (a run queued, a signal sent):
    /// `hensu_work` is notified once the transaction has committed ([`super::ops`]).
    pub wakes_workers: bool,
}

fn opt_i64(v: Option<u64>) -> Result<Option<i64>> {
    v.map(to_i64).transpose()
}

/// A column that must decode: a type mismatch means someone else's table.
pub(super) fn col<'r, T: tokio_postgres::types::FromSql<'r>>(
    row: &'r Row,
    i: usize,
    path: &Path,
) -> Result<T> {
    row.try_get(i)
        .map_err(|e| corrupt(path, format!("undecodable column {i}: {e}")))
}

fn record_from_row(row: &Row, path: &Path) -> Result<(RunRecord, LogState)> {
    let status: String = col(row, 3, path)?;
    let record = RunRecord {
        run_id: col(row, 0, path)?,
        workflow_id: col(row, 1, path)?,
        workflow_version: col(row, 2, path)?,
        status: parse_status(&status, path)?,
        current_node: col(row, 4, path)?,
        started_at: to_u64(col(row, 5, path)?, path, "started_at")?,
        updated_at: to_u64(col(row, 6, path)?, path, "updated_at")?,
        correlation_id: col(row, 7, path)?,
        exit_status: col(row, 8, path)?,
        step: to_u64(col(row, 9, path)?, path, "step")?,
        cancel_requested: col(row, 10, path)?,
        parent: match (
            col::<Option<String>>(row, 15, path)?,
            col::<Option<i64>>(row, 16, path)?,
        ) {
            (Some(run_id), Some(step)) => Some(RunParent {
                run_id,
                step: to_u64(step, path, "parent_step")?,
            }),
            _ => None,
        },
        pause_requested: col(row, 17, path)?,
        wait: RunWait::from_columns(
            col::<Option<i64>>(row, 18, path)?
                .map(|w| to_u64(w, path, "wake_at"))
                .transpose()?,
            col::<Option<String>>(row, 19, path)?,
        ),
    };
    let log = LogState {
        snapshot_step: to_u64(col(row, 11, path)?, path, "snapshot_step")?,
        snapshot_bytes: to_u64(col(row, 12, path)?, path, "snapshot_bytes")?,
        log_rows: to_u64(col(row, 13, path)?, path, "log_rows")?,
        log_bytes: to_u64(col(row, 14, path)?, path, "log_bytes")?,
    };
    Ok((record, log))
}

fn meta_from_row(r: &Row, path: &Path) -> Result<CheckpointMeta> {
    let opt = |i: usize, what: &str| -> Result<Option<u64>> {
        let v: Option<i64> = col(r, i, path)?;
        v.map(|v| to_u64(v, path, what)).transpose()
    };
    let status: String = col(r, 2, path)?;
    let kind: String = col(r, 5, path)?;
    Ok(CheckpointMeta {
        step: to_u64(col(r, 0, path)?, path, "step")?,
        node: col(r, 1, path)?,
        status: parse_status(&status, path)?,
        at: to_u64(col(r, 3, path)?, path, "at")?,
        snapshot_bytes: opt(4, "snapshot_bytes")?,
        kind: parse_kind(&kind, path)?,
        executed_node: col(r, 6, path)?,
        node_status: col(r, 7, path)?,
        duration_ms: opt(8, "duration_ms")?,
    })
}

impl PgTx<'_> {
    async fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let stmt = self
            .tx
            .prepare_cached(sql)
            .await
            .map_err(|e| pg_err(self.target, e))?;
        self.tx
            .query(&stmt, params)
            .await
            .map_err(|e| pg_err(self.target, e))
    }

    async fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let stmt = self
            .tx
            .prepare_cached(sql)
            .await
            .map_err(|e| pg_err(self.target, e))?;
        self.tx
            .execute(&stmt, params)
            .await
            .map_err(|e| pg_err(self.target, e))
    }
}

impl Backend for PgTx<'_> {
    fn location(&self) -> &Path {
        self.path
    }

    async fn run(&mut self, run_id: &str, lock: bool) -> Result<(RunRecord, LogState)> {
        let sql = format!(
            "SELECT {RECORD_COLS} FROM runs WHERE run_id = $1{}",
            if lock { " FOR UPDATE" } else { "" }
        );
        match self.query(&sql, &[&run_id]).await?.first() {
            Some(row) => record_from_row(row, self.path),
            None => Err(crate::StoreError::NotFound {
                run_id: run_id.to_string(),
            }),
        }
    }

    async fn insert_run(
        &mut self,
        record: &RunRecord,
        workflow: &[u8],
        log: &LogState,
    ) -> Result<bool> {
        let (parent_run, parent_step) = match &record.parent {
            Some(p) => (Some(p.run_id.as_str()), Some(to_i64(p.step)?)),
            None => (None, None),
        };
        let inserted = self
            .execute(
                &format!(
                    "INSERT INTO runs ({RECORD_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
                     $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) \
                     ON CONFLICT (run_id) DO NOTHING"
                ),
                &[
                    &record.run_id,
                    &record.workflow_id,
                    &record.workflow_version,
                    &record.status.as_str(),
                    &record.current_node,
                    &to_i64(record.started_at)?,
                    &to_i64(record.updated_at)?,
                    &record.correlation_id,
                    &record.exit_status,
                    &to_i64(record.step)?,
                    &record.cancel_requested,
                    &to_i64(log.snapshot_step)?,
                    &to_i64(log.snapshot_bytes)?,
                    &to_i64(log.log_rows)?,
                    &to_i64(log.log_bytes)?,
                    &parent_run,
                    &parent_step,
                    &record.pause_requested,
                    &record.wait.as_ref().and_then(|w| w.wake_at).map(sat_i64),
                    &record.wait.as_ref().and_then(RunWait::waiting_for),
                ],
            )
            .await?;
        if inserted == 0 {
            return Ok(false);
        }
        self.wakes_workers |= record.status == crate::RunStatus::Queued;
        self.execute(
            "INSERT INTO run_data (run_id, workflow) VALUES ($1, $2)",
            &[&record.run_id, &workflow],
        )
        .await?;
        Ok(true)
    }

    async fn lease(&mut self, run_id: &str) -> Result<Option<LeaseRow>> {
        let rows = self
            .query(
                "SELECT owner, host, pid, acquired_at, expires_at FROM leases WHERE run_id = $1",
                &[&run_id],
            )
            .await?;
        let p = self.path;
        match rows.first() {
            None => Ok(None),
            Some(r) => Ok(Some(LeaseRow {
                owner: col(r, 0, p)?,
                host: col(r, 1, p)?,
                pid: col(r, 2, p)?,
                acquired_at: to_u64(col(r, 3, p)?, p, "acquired_at")?,
                expires_at: to_u64(col(r, 4, p)?, p, "expires_at")?,
            })),
        }
    }

    async fn put_lease(&mut self, run_id: &str, row: &LeaseRow) -> Result<()> {
        self.execute(
            "INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, \
             pid = excluded.pid, acquired_at = excluded.acquired_at, \
             expires_at = excluded.expires_at",
            &[
                &run_id,
                &row.owner,
                &row.host,
                &row.pid,
                &to_i64(row.acquired_at)?,
                &to_i64(row.expires_at)?,
            ],
        )
        .await
        .map(|_| ())
    }

    async fn renew_lease(&mut self, run_id: &str, expires_at: u64) -> Result<()> {
        self.execute(
            "UPDATE leases SET expires_at = $2 WHERE run_id = $1",
            &[&run_id, &to_i64(expires_at)?],
        )
        .await
        .map(|_| ())
    }

    async fn delete_lease(&mut self, run_id: &str, owner: Option<&str>) -> Result<()> {
        match owner {
            Some(owner) => {
                self.execute(
                    "DELETE FROM leases WHERE run_id = $1 AND owner = $2",
                    &[&run_id, &owner],
                )
                .await
            }
            None => {
                self.execute("DELETE FROM leases WHERE run_id = $1", &[&run_id])
                    .await
            }
        }
        .map(|_| ())
    }

    async fn flag_cancel(&mut self, run_id: &str) -> Result<()> {
        self.execute(
            "UPDATE runs SET cancel_requested = TRUE WHERE run_id = $1",
            &[&run_id],
        )
        .await
        .map(|_| ())
    }

    async fn flag_pause(&mut self, run_id: &str) -> Result<()> {
        self.execute(
            "UPDATE runs SET pause_requested = TRUE WHERE run_id = $1",
            &[&run_id],
        )
        .await
        .map(|_| ())
    }

    async fn update_record(
        &mut self,
        run_id: &str,
        step: u64,
        update: &RecordUpdate,
        now: u64,
        delta_bytes: Option<u64>,
        _status_unchanged: bool,
    ) -> Result<()> {
        self.wakes_workers |= update.status == crate::RunStatus::Queued;
        self.execute(
            "UPDATE runs SET status = $2, current_node = $3, correlation_id = $4, \
             exit_status = $5, step = $6, updated_at = $7, log_rows = log_rows + $8, \
             log_bytes = log_bytes + $9, \
             pause_requested = CASE WHEN $2 = 'running' THEN pause_requested ELSE FALSE END, \
             wake_at = CASE WHEN $13::TEXT IS NOT NULL AND EXISTS (SELECT 1 FROM run_signals s \
               WHERE s.run_id = $1 AND s.seq >= $12::BIGINT AND s.name IN \
               (SELECT jsonb_array_elements_text($13::TEXT::jsonb))) \
               THEN $7::BIGINT ELSE $10::BIGINT END, \
             waiting_for = $11::TEXT \
             WHERE run_id = $1",
            &[
                &run_id,
                &update.status.as_str(),
                &update.current_node,
                &update.correlation_id,
                &update.exit_status,
                &to_i64(step)?,
                &to_i64(now)?,
                &i64::from(delta_bytes.is_some()),
                &to_i64(delta_bytes.unwrap_or(0))?,
                &update.wait.as_ref().and_then(|w| w.wake_at).map(sat_i64),
                &update.wait.as_ref().and_then(RunWait::waiting_for),
                &update.wait.as_ref().map_or(0, |w| sat_i64(w.signals_seen)),
                &update.wait.as_ref().and_then(RunWait::signals_json),
            ],
        )
        .await
        .map(|_| ())
    }

    async fn insert_log(
        &mut self,
        run_id: &str,
        step: u64,
        kind: LogKind,
        update: &RecordUpdate,
        now: u64,
        row: &NewLogRow<'_>,
    ) -> Result<()> {
        self.execute(
            "INSERT INTO run_log (run_id, step, kind, status, node, executed_node, node_status, \
             output, delta, state_version, at, started_at, duration_ms, snapshot_bytes) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            &[
                &run_id,
                &to_i64(step)?,
                &kind.as_str(),
                &update.status.as_str(),
                &update.current_node,
                &row.executed_node,
                &row.node_status,
                &row.output,
                &row.delta,
                &opt_i64(row.state_version)?,
                &to_i64(now)?,
                &opt_i64(row.started_at)?,
                &opt_i64(row.duration_ms)?,
                &opt_i64(row.snapshot_bytes)?,
            ],
        )
        .await
        .map(|_| ())
    }

    async fn insert_snapshot(
        &mut self,
        run_id: &str,
        step: u64,
        version: u64,
        bytes: &[u8],
    ) -> Result<()> {
        self.execute(
            "INSERT INTO snapshots (run_id, step, snapshot_version, state) \
             VALUES ($1, $2, $3, $4) \
             ON CONFLICT (run_id, step) DO UPDATE SET \
             snapshot_version = excluded.snapshot_version, state = excluded.state",
            &[&run_id, &to_i64(step)?, &to_i64(version)?, &bytes],
        )
        .await
        .map(|_| ())
    }

    async fn snapshot_adopted(&mut self, run_id: &str, step: u64, bytes: u64) -> Result<()> {
        let (step, bytes) = (to_i64(step)?, to_i64(bytes)?);
        self.execute(
            "UPDATE runs SET snapshot_step = $2, snapshot_bytes = $3, log_rows = 0, \
             log_bytes = 0 WHERE run_id = $1",
            &[&run_id, &step, &bytes],
        )
        .await?;
        self.execute(
            "UPDATE run_log SET snapshot_bytes = $3 WHERE run_id = $1 AND step = $2",
            &[&run_id, &step, &bytes],
        )
        .await
        .map(|_| ())
    }

    async fn snapshot(&mut self, run_id: &str, step: u64) -> Result<Option<(Vec<u8>, i64)>> {
        let rows = self
            .query(
                "SELECT state, snapshot_version FROM snapshots WHERE run_id = $1 AND step = $2",
                &[&run_id, &to_i64(step)?],
            )
            .await?;
        rows.first()
            .map(|r| Ok((col(r, 0, self.path)?, col(r, 1, self.path)?)))
            .transpose()
    }

    async fn snapshot_until(
        &mut self,
        run_id: &str,
        until: u64,
    ) -> Result<Option<(u64, Vec<u8>, i64)>> {
        let rows = self
            .query(
                "SELECT step, state, snapshot_version FROM snapshots WHERE run_id = $1 \
                 AND step <= $2 ORDER BY step DESC LIMIT 1",
                &[&run_id, &sat_i64(until)],
            )
            .await?;
        rows.first()
            .map(|r| {
                Ok((
                    to_u64(col(r, 0, self.path)?, self.path, "step")?,
                    col(r, 1, self.path)?,
                    col(r, 2, self.path)?,
                ))
            })
            .transpose()
    }

    async fn for_each_delta(
        &mut self,
        run_id: &str,
        step: u64,
        until: u64,
        visit: &mut DeltaVisitor<'_>,
    ) -> Result<()> {
        let rows = self
            .query(
                "SELECT step, delta, state_version FROM run_log \
                 WHERE run_id = $1 AND step > $2 AND step <= $3 AND delta IS NOT NULL \
                 ORDER BY step",
                &[&run_id, &to_i64(step)?, &sat_i64(until)],
            )
            .await?;
        for row in &rows {
            let delta: &[u8] = col(row, 1, self.path)?;
            visit(col(row, 0, self.path)?, delta, col(row, 2, self.path)?)?;
        }
        Ok(())
    }

    async fn workflow(&mut self, run_id: &str) -> Result<Option<Vec<u8>>> {
        let rows = self
            .query(
                "SELECT workflow FROM run_data WHERE run_id = $1",
                &[&run_id],
            )
            .await?;
        rows.first().map(|r| col(r, 0, self.path)).transpose()
    }

    async fn records(&mut self, which: Records<'_>) -> Result<Vec<RunRecord>> {
        let rows = match which {
            Records::All => {
                self.query(
                    &format!(
                        "SELECT {RECORD_COLS} FROM runs ORDER BY started_at DESC, run_id DESC"
                    ),
                    &[],
                )
                .await?
            }
            Records::ByCorrelation(id) => {
                self.query(
                    &format!(
                        "SELECT {RECORD_COLS} FROM runs WHERE correlation_id = $1 \
                         ORDER BY updated_at DESC LIMIT 1"
                    ),
                    &[&id],
                )
                .await?
            }
        };
        rows.iter()
            .map(|r| record_from_row(r, self.path).map(|(r, _)| r))
            .collect()
    }

    async fn log_meta(
        &mut self,
        run_id: &str,
        from: u64,
        until: u64,
    ) -> Result<Vec<CheckpointMeta>> {
        let rows = self
            .query(
                &format!(
                    "SELECT {META_COLS} FROM run_log WHERE run_id = $1 AND step >= $2 \
                     AND step <= $3 ORDER BY step"
                ),
                &[&run_id, &sat_i64(from), &sat_i64(until)],
            )
            .await?;
        rows.iter().map(|r| meta_from_row(r, self.path)).collect()
    }

    async fn log_rows(
        &mut self,
        run_id: &str,
        after: u64,
        until: u64,
        limit: usize,
    ) -> Result<Vec<RawLogRow>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .query(
                &format!(
                    "SELECT {META_COLS}, output, delta, started_at FROM run_log \
                     WHERE run_id = $1 AND step > $2 AND step <= $4 ORDER BY step LIMIT $3"
                ),
                &[&run_id, &to_i64(after)?, &limit, &sat_i64(until)],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(RawLogRow {
                    meta: meta_from_row(r, self.path)?,
                    output: col(r, 9, self.path)?,
                    delta: col(r, 10, self.path)?,
                    started_at: col(r, 11, self.path)?,
                })
            })
            .collect()
    }

    async fn claimable_count(&mut self, now: u64) -> Result<u64> {
        let now = to_i64(now)?;
        let rows = self
            .query(crate::claim_sql::PG_CLAIMABLE_COUNT, &[&now])
            .await?;
        let p = self.path;
        match rows.first() {
            Some(r) => to_u64(col(r, 0, p)?, p, "count"),
            None => Ok(0),
        }
    }

    async fn claim_leases(
        &mut self,
        owner: &OwnerId,
        scope: ClaimScope,
        now: u64,
        expires_at: u64,
        limit: usize,
    ) -> Result<Vec<ClaimedLease>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Candidates are locked (`FOR UPDATE OF r`) so a concurrent `acquire` or write of
        // the same run waits; `SKIP LOCKED` makes concurrent claimers pass over each other's
        // candidates. `prior` tells a takeover from a queued run.
        let rows = self
            .query(
                crate::claim_sql::postgres(scope),
                &[
                    &owner.to_string(),
                    &owner.host,
                    &i64::from(owner.pid),
                    &to_i64(now)?,
                    &to_i64(expires_at)?,
                    &limit,
                ],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(ClaimedLease {
                    run_id: r.try_get(0).map_err(|e| pg_err(self.target, e))?,
                    acquired_at: r.try_get(1).map_err(|e| pg_err(self.target, e))?,
                    expires_at: r.try_get(2).map_err(|e| pg_err(self.target, e))?,
                    prior: r.try_get(3).map_err(|e| pg_err(self.target, e))?,
                })
            })
            .collect()
    }

    async fn renew_owner(&mut self, owner: &str, expires_at: u64) -> Result<Vec<(String, bool)>> {
        let rows = self
            .query(
                "UPDATE leases l SET expires_at = $2 FROM runs r \
                 WHERE l.owner = $1 AND r.run_id = l.run_id \
                 RETURNING l.run_id, r.cancel_requested",
                &[&owner, &to_i64(expires_at)?],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get(0).map_err(|e| pg_err(self.target, e))?,
                    r.try_get(1).map_err(|e| pg_err(self.target, e))?,
                ))
            })
            .collect()
    }

    async fn tag_run(
        &mut self,
        run_id: &str,
        tenant: &str,
        workflow_id: &str,
        now: u64,
    ) -> Result<bool> {
        self.execute(
            "INSERT INTO run_tenants (run_id, tenant_id, workflow_id, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING",
            &[&run_id, &tenant, &workflow_id, &to_i64(now)?],
        )
        .await
        .map(|n| n > 0)
    }

    async fn idempotency_key(&mut self, tenant: &str, key: &str) -> Result<Option<KeyRow>> {
        // Held until the transaction ends: a concurrent start with this key waits here, then
        // sees the row this one commits.
        self.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))",
            &[&tenant, &key],
        )
        .await?;
        let rows = self
            .query(
                "SELECT run_id, request_hash, created_at FROM idempotency_keys \
                 WHERE tenant_id = $1 AND idem_key = $2",
                &[&tenant, &key],
            )
            .await?;
        rows.first()
            .map(|r| {
                Ok(KeyRow {
                    run_id: col(r, 0, self.path)?,
                    request_hash: col(r, 1, self.path)?,
                    created_at: to_u64(col(r, 2, self.path)?, self.path, "created_at")?,
                })
            })
            .transpose()
    }

    async fn put_idempotency_key(&mut self, tenant: &str, key: &str, row: &KeyRow) -> Result<()> {
        self.execute(
            "INSERT INTO idempotency_keys (tenant_id, idem_key, run_id, request_hash, created_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant_id, idem_key) DO UPDATE SET \
             run_id = EXCLUDED.run_id, request_hash = EXCLUDED.request_hash, \
             created_at = EXCLUDED.created_at",
            &[
                &tenant,
                &key,
                &row.run_id,
                &row.request_hash,
                &to_i64(row.created_at)?,
            ],
        )
        .await
        .map(|_| ())
    }

    async fn tenant_page(
        &mut self,
        tenant: &str,
        query: &RunQuery,
        limit: usize,
    ) -> Result<Vec<(u64, RunRecord)>> {
        let (sql, params) = page_sql(RECORD_COLS, "JOIN", tenant, query, limit, |n| {
            format!("${n}")
        });
        let values: Vec<Box<dyn ToSql + Sync + Send>> = params
            .into_iter()
            .map(|p| -> Box<dyn ToSql + Sync + Send> {
                match p {
                    PageParam::Text(s) => Box::new(s),
                    PageParam::Int(i) => Box::new(i),
                }
            })
            .collect();
        let refs: Vec<&(dyn ToSql + Sync)> = values
            .iter()
            .map(|v| v.as_ref() as &(dyn ToSql + Sync))
            .collect();
        let rows = self.query(&sql, &refs).await?;
        rows.iter()
            .map(|row| {
                let at = to_u64(col(row, AFTER_RECORD, self.path)?, self.path, "created_at")?;
                record_from_row(row, self.path).map(|(r, _)| (at, r))
            })
            .collect()
    }
}
