//! [`Backend`] on SQLite: the tuned statements (cached, integer-keyed log ranges, the
//! one-statement step of a running run) inside one `BEGIN IMMEDIATE` transaction. Nothing
//! here suspends: each method is synchronous work in an `async fn`.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use super::rows::{RawRecord, into_meta, log_state, raw_meta};
use crate::RunWait;
use crate::backend::KeyRow;
use crate::backend::{
    Backend, ClaimedLease, DeltaVisitor, LastStep, LogState, NewLogRow, RawLogRow, Records,
    SteppedInPlace,
};
use crate::backend::{sat_i64, to_i64, to_u64};
use crate::owner::LeaseRow;
use crate::page::{PageParam, page_sql};
use crate::query::RunQuery;
use crate::{
    CheckpointMeta, ClaimScope, Lease, LogKind, OwnerId, RecordUpdate, Result, RunRecord,
    StoreError,
};

pub(crate) const RECORD_COLS: &str = "run_id, workflow_id, workflow_version, status, \
     current_node, started_at, updated_at, correlation_id, exit_status, step, cancel_requested, \
     snapshot_step, snapshot_bytes, log_rows, log_bytes, parent_run, parent_step, \
     pause_requested, wake_at, waiting_for";

/// The column after [`RECORD_COLS`] in a statement that appends one (a page's `created_at`).
pub(crate) const AFTER_RECORD: usize = 20;

/// The key of run `?1`'s log row at step 0: `run_no * 2^32`. A run's rows are
/// `LOG_KEY + step`, one contiguous range of `run_log`'s integer key (its one b-tree), ordered
/// by step; a run has at most 2^32 steps ([`log_step`]).
macro_rules! log_key {
    () => {
        "(SELECT run_no FROM runs WHERE run_id = ?1) * 4294967296"
    };
}

/// The end (exclusive) of run `?1`'s key range in `run_log`.
macro_rules! log_key_end {
    () => {
        "(SELECT run_no + 1 FROM runs WHERE run_id = ?1) * 4294967296"
    };
}

/// Steps a run's log can hold: its rows' keys are `run_no * 2^32 + step`.
const MAX_STEPS: u64 = 1 << 32;

/// `step` as the low half of a log key.
fn log_step(step: u64) -> Result<i64> {
    if step >= MAX_STEPS {
        return Err(StoreError::Invalid(format!(
            "step {step}: a run's log holds at most {MAX_STEPS} steps"
        )));
    }
    to_i64(step)
}

const META_COLS: &str =
    "step, node, status, at, snapshot_bytes, kind, executed_node, node_status, duration_ms";

/// One transaction on the store's connection.
pub(crate) struct SqliteTx<'a> {
    pub conn: &'a Connection,
    pub path: &'a Path,
    /// Where the previous append through this connection left its run (taken when the
    /// transaction began: any other write may change what it describes).
    pub last: Option<LastStep>,
    /// Where this transaction's append leaves its run, kept once it commits.
    pub keep: Option<LastStep>,
}

impl SqliteTx<'_> {
    fn sq(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |e| StoreError::sqlite(self.path, e)
    }

    fn exec(&self, sql: &str, params: impl rusqlite::Params) -> Result<usize> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(params))
            .map_err(self.sq())
    }
}

/// `step` as an offset in a run's key range, clamped to its last step (an "up to" bound).
fn key_step(step: u64) -> i64 {
    sat_i64(step.min(MAX_STEPS - 1))
}

fn opt_i64(v: Option<u64>) -> Option<i64> {
    v.map(sat_i64)
}

impl Backend for SqliteTx<'_> {
    fn location(&self) -> &Path {
        self.path
    }

    async fn run(&mut self, run_id: &str, _lock: bool) -> Result<(RunRecord, LogState)> {
        let sql = format!("SELECT {RECORD_COLS} FROM runs WHERE run_id = ?1");
        let raw = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| s.query_row([run_id], RawRecord::from_row).optional())
            .map_err(self.sq())?;
        match raw {
            Some(raw) => raw.into_record(self.path),
            None => Err(StoreError::NotFound {
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
        let inserted = self.exec(
            &format!(
                "INSERT OR IGNORE INTO runs ({RECORD_COLS}, run_no) VALUES (?1, ?2, ?3, ?4, ?5, \
                 ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, \
                 (SELECT coalesce(max(run_no), 0) + 1 FROM runs))"
            ),
            rusqlite::params![
                record.run_id,
                record.workflow_id,
                record.workflow_version,
                record.status.as_str(),
                record.current_node,
                to_i64(record.started_at)?,
                to_i64(record.updated_at)?,
                record.correlation_id,
                record.exit_status,
                to_i64(record.step)?,
                i64::from(record.cancel_requested),
                to_i64(log.snapshot_step)?,
                to_i64(log.snapshot_bytes)?,
                to_i64(log.log_rows)?,
                to_i64(log.log_bytes)?,
                parent_run,
                parent_step,
                i64::from(record.pause_requested),
                record.wait.as_ref().and_then(|w| w.wake_at).map(sat_i64),
                record.wait.as_ref().and_then(RunWait::waiting_for),
            ],
        )?;
        if inserted == 0 {
            return Ok(false);
        }
        self.exec(
            "INSERT INTO run_data (run_id, workflow) VALUES (?1, ?2)",
            rusqlite::params![record.run_id, workflow],
        )?;
        Ok(true)
    }

    async fn lease(&mut self, run_id: &str) -> Result<Option<LeaseRow>> {
        let raw = self
            .conn
            .prepare_cached(
                "SELECT owner, host, pid, acquired_at, expires_at FROM leases WHERE run_id = ?1",
            )
            .and_then(|mut s| {
                s.query_row([run_id], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, i64>(4)?,
                    ))
                })
                .optional()
            })
            .map_err(self.sq())?;
        match raw {
            None => Ok(None),
            Some((owner, host, pid, acquired_at, expires_at)) => Ok(Some(LeaseRow {
                owner,
                host,
                pid,
                acquired_at: to_u64(acquired_at, self.path, "acquired_at")?,
                expires_at: to_u64(expires_at, self.path, "expires_at")?,
            })),
        }
    }

    async fn put_lease(&mut self, run_id: &str, row: &LeaseRow) -> Result<()> {
        self.exec(
            "INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, \
             pid = excluded.pid, acquired_at = excluded.acquired_at, \
             expires_at = excluded.expires_at",
            rusqlite::params![
                run_id,
                row.owner,
                row.host,
                row.pid,
                sat_i64(row.acquired_at),
                sat_i64(row.expires_at),
            ],
        )
        .map(|_| ())
    }

    async fn renew_lease(&mut self, run_id: &str, expires_at: u64) -> Result<()> {
        self.exec(
            "UPDATE leases SET expires_at = ?2 WHERE run_id = ?1",
            rusqlite::params![run_id, sat_i64(expires_at)],
        )
        .map(|_| ())
    }

    async fn delete_lease(&mut self, run_id: &str, owner: Option<&str>) -> Result<()> {
        match owner {
            Some(owner) => self.exec(
                "DELETE FROM leases WHERE run_id = ?1 AND owner = ?2",
                rusqlite::params![run_id, owner],
            ),
            None => self.exec("DELETE FROM leases WHERE run_id = ?1", [run_id]),
        }
        .map(|_| ())
    }

    async fn flag_cancel(&mut self, run_id: &str) -> Result<()> {
        self.exec(
            "UPDATE runs SET cancel_requested = 1 WHERE run_id = ?1",
            [run_id],
        )
        .map(|_| ())
    }

    async fn flag_pause(&mut self, run_id: &str) -> Result<()> {
        self.exec(
            "UPDATE runs SET pause_requested = 1 WHERE run_id = ?1",
            [run_id],
        )
        .map(|_| ())
    }

    async fn update_record(
        &mut self,
        run_id: &str,
        step: u64,
        update: &RecordUpdate,
        now: u64,
        delta_bytes: Option<u64>,
        status_unchanged: bool,
    ) -> Result<()> {
        let (rows, bytes) = (
            i64::from(delta_bytes.is_some()),
            sat_i64(delta_bytes.unwrap_or(0)),
        );
        if status_unchanged {
            // The common step of a running run: leave the indexed columns out of the SET
            // list, so SQLite rewrites the row's page only, not its index pages too.
            return self
                .exec(
                    "UPDATE runs SET current_node = ?2, step = ?3, updated_at = ?4, \
                     log_rows = log_rows + ?5, log_bytes = log_bytes + ?6 WHERE run_id = ?1",
                    rusqlite::params![
                        run_id,
                        update.current_node,
                        sat_i64(step),
                        sat_i64(now),
                        rows,
                        bytes,
                    ],
                )
                .map(|_| ());
        }
        self.exec(
            "UPDATE runs SET status = ?2, current_node = ?3, correlation_id = ?4, \
             exit_status = ?5, step = ?6, updated_at = ?7, log_rows = log_rows + ?8, \
             log_bytes = log_bytes + ?9, \
             pause_requested = CASE WHEN ?2 = 'running' THEN pause_requested ELSE 0 END, \
             wake_at = CASE WHEN ?13 IS NOT NULL AND EXISTS (SELECT 1 FROM run_signals s \
               WHERE s.run_id = ?1 AND s.seq >= ?12 \
               AND s.name IN (SELECT value FROM json_each(?13))) THEN ?7 ELSE ?10 END, \
             waiting_for = ?11 \
             WHERE run_id = ?1",
            rusqlite::params![
                run_id,
                update.status.as_str(),
                update.current_node,
                update.correlation_id,
                update.exit_status,
                sat_i64(step),
                sat_i64(now),
                rows,
                bytes,
                update.wait.as_ref().and_then(|w| w.wake_at).map(sat_i64),
                update.wait.as_ref().and_then(RunWait::waiting_for),
                update.wait.as_ref().map_or(0, |w| sat_i64(w.signals_seen)),
                update.wait.as_ref().and_then(RunWait::signals_json),
            ],
        )
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
        let step = log_step(step)?;
        self.exec(
            concat!(
                "INSERT INTO run_log (id, run_id, step, kind, status, node, executed_node, \
                 node_status, output, delta, state_version, at, started_at, duration_ms, \
                 snapshot_bytes) VALUES (",
                log_key!(),
                " + ?2, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
            ),
            rusqlite::params![
                run_id,
                step,
                kind.as_str(),
                update.status.as_str(),
                update.current_node,
                row.executed_node,
                row.node_status,
                row.output,
                row.delta,
                opt_i64(row.state_version),
                sat_i64(now),
                opt_i64(row.started_at),
                opt_i64(row.duration_ms),
                opt_i64(row.snapshot_bytes),
            ],
        )
        .map(|_| ())
    }

    async fn step_in_place(
        &mut self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        now: u64,
        delta_bytes: u64,
    ) -> Result<Option<SteppedInPlace>> {
        // A step that sets a wait takes the checked path (a running run has none to keep).
        if update.wait.is_some() {
            return Ok(None);
        }
        // Two plain statements: the same update with a RETURNING clause cost SQLite ~20,000
        // instructions more per step (its results go through an ephemeral table).
        let changed = self.exec(
            "UPDATE runs SET current_node = ?3, step = ?2 + 1, updated_at = ?4, \
             log_rows = log_rows + 1, log_bytes = log_bytes + ?5 \
             WHERE run_id = ?1 AND step = ?2 AND status = ?6 AND correlation_id IS ?7 \
             AND exit_status IS ?8 AND cancel_requested = 0 AND pause_requested = 0 \
             AND EXISTS (SELECT 1 FROM leases l WHERE l.run_id = ?1 AND l.owner = ?9)",
            rusqlite::params![
                lease.run_id,
                sat_i64(expected_step),
                update.current_node,
                sat_i64(now),
                sat_i64(delta_bytes),
                update.status.as_str(),
                update.correlation_id,
                update.exit_status,
                lease.owner.to_string(),
            ],
        )?;
        if changed != 1 {
            return Ok(None);
        }
        if let Some(last) = self
            .last
            .as_ref()
            .filter(|l| l.run_id == lease.run_id && l.step == expected_step)
        {
            return Ok(Some(SteppedInPlace {
                log: last.log,
                lease_expires_at: last.lease_expires_at,
            }));
        }
        let raw = self
            .conn
            .prepare_cached(
                "SELECT snapshot_step, snapshot_bytes, log_rows - 1, log_bytes - ?2, \
                 (SELECT expires_at FROM leases l WHERE l.run_id = ?1) FROM runs \
                 WHERE run_id = ?1",
            )
            .and_then(|mut s| {
                s.query_row(rusqlite::params![lease.run_id, sat_i64(delta_bytes)], |r| {
                    Ok((
                        [r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?, r.get(3)?],
                        r.get::<_, i64>(4)?,
                    ))
                })
                .optional()
            })
            .map_err(self.sq())?;
        // The row was just updated in this transaction: it is there.
        let (log, expires_at) = raw.ok_or_else(|| {
            StoreError::Invalid(format!(
                "run `{}` vanished inside its step's transaction",
                lease.run_id
            ))
        })?;
        Ok(Some(SteppedInPlace {
            log: log_state(log, self.path)?,
            lease_expires_at: to_u64(expires_at, self.path, "expires_at")?,
        }))
    }

    fn stepped(&mut self, last: LastStep) {
        // The next step of a group in this transaction need not read the record back.
        self.last = Some(last.clone());
        self.keep = Some(last);
    }

    async fn insert_snapshot(
        &mut self,
        run_id: &str,
        step: u64,
        version: u64,
        bytes: &[u8],
    ) -> Result<()> {
        self.exec(
            "INSERT OR REPLACE INTO snapshots (run_id, step, snapshot_version, state) \
             VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![run_id, sat_i64(step), sat_i64(version), bytes],
        )
        .map(|_| ())
    }

    async fn snapshot_adopted(&mut self, run_id: &str, step: u64, bytes: u64) -> Result<()> {
        let (step, bytes) = (to_i64(step)?, sat_i64(bytes));
        for sql in [
            "UPDATE runs SET snapshot_step = ?2, snapshot_bytes = ?3, log_rows = 0, \
             log_bytes = 0 WHERE run_id = ?1",
            concat!(
                "UPDATE run_log SET snapshot_bytes = ?3 WHERE id = ",
                log_key!(),
                " + ?2"
            ),
        ] {
            self.exec(sql, rusqlite::params![run_id, step, bytes])?;
        }
        Ok(())
    }

    async fn snapshot(&mut self, run_id: &str, step: u64) -> Result<Option<(Vec<u8>, i64)>> {
        self.conn
            .prepare_cached(
                "SELECT state, snapshot_version FROM snapshots WHERE run_id = ?1 AND step = ?2",
            )
            .and_then(|mut s| {
                s.query_row(rusqlite::params![run_id, to_i64(step).unwrap_or(-1)], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
            })
            .map_err(self.sq())
    }

    async fn snapshot_until(
        &mut self,
        run_id: &str,
        until: u64,
    ) -> Result<Option<(u64, Vec<u8>, i64)>> {
        let raw: Option<(i64, Vec<u8>, i64)> = self
            .conn
            .prepare_cached(
                "SELECT step, state, snapshot_version FROM snapshots WHERE run_id = ?1 \
                 AND step <= ?2 ORDER BY step DESC LIMIT 1",
            )
            .and_then(|mut s| {
                s.query_row(rusqlite::params![run_id, sat_i64(until)], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()
            })
            .map_err(self.sq())?;
        raw.map(|(step, bytes, v)| Ok((to_u64(step, self.path, "step")?, bytes, v)))
            .transpose()
    }

    async fn for_each_delta(
        &mut self,
        run_id: &str,
        step: u64,
        until: u64,
        visit: &mut DeltaVisitor<'_>,
    ) -> Result<()> {
        let sq = self.sq();
        let mut stmt = self
            .conn
            .prepare_cached(concat!(
                "SELECT step, delta, state_version FROM run_log WHERE id > ",
                log_key!(),
                " + ?2 AND id <= ",
                log_key!(),
                " + ?3 AND id < ",
                log_key_end!(),
                " AND delta IS NOT NULL ORDER BY id"
            ))
            .map_err(&sq)?;
        let mut rows = stmt
            .query(rusqlite::params![run_id, to_i64(step)?, key_step(until)])
            .map_err(&sq)?;
        while let Some(row) = rows.next().map_err(&sq)? {
            let step: i64 = row.get(0).map_err(&sq)?;
            let delta: Vec<u8> = row.get(1).map_err(&sq)?;
            let version: Option<i64> = row.get(2).map_err(&sq)?;
            visit(step, &delta, version)?;
        }
        Ok(())
    }

    async fn workflow(&mut self, run_id: &str) -> Result<Option<Vec<u8>>> {
        self.conn
            .prepare_cached("SELECT workflow FROM run_data WHERE run_id = ?1")
            .and_then(|mut s| s.query_row([run_id], |r| r.get(0)).optional())
            .map_err(self.sq())
    }

    async fn records(&mut self, which: Records<'_>) -> Result<Vec<RunRecord>> {
        let (tail, params): (&str, Vec<&dyn rusqlite::ToSql>) = match &which {
            Records::All => ("ORDER BY started_at DESC, run_id DESC", vec![]),
            Records::ByCorrelation(id) => (
                "WHERE correlation_id = ?1 ORDER BY updated_at DESC LIMIT 1",
                vec![id as &dyn rusqlite::ToSql],
            ),
        };
        let sql = format!("SELECT {RECORD_COLS} FROM runs {tail}");
        let raws = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(params.as_slice(), RawRecord::from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(self.sq())?;
        raws.into_iter()
            .map(|r| r.into_record(self.path).map(|(r, _)| r))
            .collect()
    }

    async fn log_meta(
        &mut self,
        run_id: &str,
        from: u64,
        until: u64,
    ) -> Result<Vec<CheckpointMeta>> {
        let rows = self
            .conn
            .prepare_cached(&format!(
                "SELECT {META_COLS} FROM run_log WHERE id >= {} + ?2 AND id <= {} + ?3 \
                 AND id < {} ORDER BY id",
                log_key!(),
                log_key!(),
                log_key_end!()
            ))
            .and_then(|mut s| {
                s.query_map(
                    rusqlite::params![run_id, key_step(from), key_step(until)],
                    raw_meta,
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(self.sq())?;
        rows.into_iter().map(|r| into_meta(r, self.path)).collect()
    }

    async fn log_rows(
        &mut self,
        run_id: &str,
        after: u64,
        until: u64,
        limit: usize,
    ) -> Result<Vec<RawLogRow>> {
        let after = to_i64(after)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .conn
            .prepare_cached(&format!(
                "SELECT {META_COLS}, output, delta, started_at FROM run_log \
                 WHERE id > {} + ?2 AND id <= {} + ?4 AND id < {} ORDER BY id LIMIT ?3",
                log_key!(),
                log_key!(),
                log_key_end!()
            ))
            .and_then(|mut s| {
                s.query_map(
                    rusqlite::params![run_id, after, limit, key_step(until)],
                    |r| Ok((raw_meta(r)?, r.get(9)?, r.get(10)?, r.get(11)?)),
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(self.sq())?;
        rows.into_iter()
            .map(|(meta, output, delta, started_at)| {
                Ok(RawLogRow {
                    meta: into_meta(meta, self.path)?,
                    output,
                    delta,
                    started_at,
                })
            })
            .collect()
    }

    async fn claimable_count(&mut self, now: u64) -> Result<u64> {
        let now = to_i64(now)?;
        let n: i64 = self
            .conn
            .prepare_cached(crate::claim_sql::SQLITE_CLAIMABLE_COUNT)
            .and_then(|mut s| s.query_row([now], |r| r.get(0)))
            .map_err(self.sq())?;
        to_u64(n, self.location(), "count")
    }

    async fn claim_leases(
        &mut self,
        owner: &OwnerId,
        scope: ClaimScope,
        now: u64,
        expires_at: u64,
        limit: usize,
    ) -> Result<Vec<ClaimedLease>> {
        let (now, expires) = (to_i64(now)?, to_i64(expires_at)?);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Who held each claimable run before (a takeover, not a queued run): read before
        // the upsert replaces it. The transaction holds the write lock, so nothing changes
        // in between.
        let held: std::collections::HashMap<String, String> = self
            .conn
            .prepare_cached(
                "SELECT l.run_id, l.owner FROM leases l JOIN runs r ON r.run_id = l.run_id \
                 WHERE r.status IN ('queued', 'running') AND l.expires_at <= ?1",
            )
            .and_then(|mut s| {
                s.query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()
            })
            .map_err(self.sq())?;
        let rows = self
            .conn
            .prepare_cached(crate::claim_sql::sqlite(scope))
            .and_then(|mut stmt| {
                stmt.query_map(
                    rusqlite::params![
                        owner.to_string(),
                        owner.host,
                        i64::from(owner.pid),
                        now,
                        expires,
                        limit
                    ],
                    |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?)),
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(self.sq())?;
        Ok(rows
            .into_iter()
            .map(|(run_id, acquired_at, expires_at)| ClaimedLease {
                prior: held.get(&run_id).cloned(),
                run_id,
                acquired_at,
                expires_at,
            })
            .collect())
    }

    async fn renew_owner(&mut self, owner: &str, expires_at: u64) -> Result<Vec<(String, bool)>> {
        self.conn
            .prepare_cached(
                "UPDATE leases SET expires_at = ?2 WHERE owner = ?1 \
                 RETURNING run_id, (SELECT cancel_requested FROM runs r \
                                    WHERE r.run_id = leases.run_id)",
            )
            .and_then(|mut s| {
                s.query_map(rusqlite::params![owner, sat_i64(expires_at)], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<i64>>(1)?.unwrap_or(0) != 0,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(self.sq())
    }

    async fn tag_run(
        &mut self,
        run_id: &str,
        tenant: &str,
        workflow_id: &str,
        now: u64,
    ) -> Result<bool> {
        self.exec(
            "INSERT INTO run_tenants (run_id, tenant_id, workflow_id, created_at) \
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT (run_id) DO NOTHING",
            rusqlite::params![run_id, tenant, workflow_id, sat_i64(now)],
        )
        .map(|n| n > 0)
    }

    async fn idempotency_key(&mut self, tenant: &str, key: &str) -> Result<Option<KeyRow>> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT run_id, request_hash, created_at FROM idempotency_keys \
                 WHERE tenant_id = ?1 AND idem_key = ?2",
            )
            .and_then(|mut s| {
                s.query_row([tenant, key], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })
                .optional()
            })
            .map_err(self.sq())?;
        row.map(|(run_id, request_hash, at)| {
            Ok(KeyRow {
                run_id,
                request_hash,
                created_at: to_u64(at, self.path, "created_at")?,
            })
        })
        .transpose()
    }

    async fn put_idempotency_key(&mut self, tenant: &str, key: &str, row: &KeyRow) -> Result<()> {
        self.exec(
            "INSERT INTO idempotency_keys (tenant_id, idem_key, run_id, request_hash, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (tenant_id, idem_key) DO UPDATE SET \
             run_id = excluded.run_id, request_hash = excluded.request_hash, \
             created_at = excluded.created_at",
            rusqlite::params![
                tenant,
                key,
                row.run_id,
                row.request_hash,
                sat_i64(row.created_at)
            ],
        )
        .map(|_| ())
    }

    async fn tenant_page(
        &mut self,
        tenant: &str,
        query: &RunQuery,
        limit: usize,
    ) -> Result<Vec<(u64, RunRecord)>> {
        let (sql, params) = page_sql(RECORD_COLS, "CROSS JOIN", tenant, query, limit, |n| {
            format!("?{n}")
        });
        let values: Vec<rusqlite::types::Value> = params
            .into_iter()
            .map(|p| match p {
                PageParam::Text(s) => rusqlite::types::Value::Text(s),
                PageParam::Int(i) => rusqlite::types::Value::Integer(i),
            })
            .collect();
        let raws = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::params_from_iter(values), |r| {
                    Ok((r.get::<_, i64>(AFTER_RECORD)?, RawRecord::from_row(r)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(self.sq())?;
        raws.into_iter()
            .map(|(at, raw)| {
                let at = to_u64(at, self.path, "created_at")?;
                raw.into_record(self.path).map(|(r, _)| (at, r))
            })
            .collect()
    }
}
