//! Row-level reads and writes of the SQLite store, shared by its operations.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Row};

use super::{corrupt, parse_status, to_i64, to_u64};
use crate::owner::LeaseRow;
use crate::{
    CompactionStage, Failpoint, Lease, LogKind, RecordUpdate, Result, RunRecord, StateDelta,
    StoreError, StoreOptions, decode_snapshot, encode_snapshot,
};

pub(crate) const RECORD_COLS: &str = "run_id, workflow_id, workflow_version, status, \
     current_node, started_at, updated_at, correlation_id, exit_status, step, cancel_requested, \
     snapshot_step, snapshot_bytes, log_rows, log_bytes";

/// The key of run `?1`'s log row at step 0: `run_no * 2^32`. A run's rows are
/// `LOG_KEY + step`, one contiguous range of `run_log`'s integer key (its one b-tree), ordered
/// by step; a run has at most 2^32 steps ([`log_step`]).
macro_rules! log_key {
    () => {
        "(SELECT run_no FROM runs WHERE run_id = ?1) * 4294967296"
    };
}
pub(crate) use log_key;

/// The end (exclusive) of run `?1`'s key range in `run_log`.
macro_rules! log_key_end {
    () => {
        "(SELECT run_no + 1 FROM runs WHERE run_id = ?1) * 4294967296"
    };
}
pub(crate) use log_key_end;

/// Steps a run's log can hold: its rows' keys are `run_no * 2^32 + step`.
const MAX_STEPS: u64 = 1 << 32;

/// `step` as the low half of a log key.
pub(crate) fn log_step(step: u64) -> Result<i64> {
    if step >= MAX_STEPS {
        return Err(StoreError::Invalid(format!(
            "step {step}: a run's log holds at most {MAX_STEPS} steps"
        )));
    }
    to_i64(step)
}

/// Where a run's state lives: its latest snapshot and the log accumulated since.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogState {
    pub snapshot_step: u64,
    pub snapshot_bytes: u64,
    pub log_rows: u64,
    pub log_bytes: u64,
}

struct RawRecord {
    run_id: String,
    workflow_id: String,
    workflow_version: String,
    status: String,
    current_node: Option<String>,
    started_at: i64,
    updated_at: i64,
    correlation_id: Option<String>,
    exit_status: Option<String>,
    step: i64,
    cancel_requested: i64,
    log: [i64; 4],
}

impl RawRecord {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<RawRecord> {
        Ok(RawRecord {
            run_id: r.get(0)?,
            workflow_id: r.get(1)?,
            workflow_version: r.get(2)?,
            status: r.get(3)?,
            current_node: r.get(4)?,
            started_at: r.get(5)?,
            updated_at: r.get(6)?,
            correlation_id: r.get(7)?,
            exit_status: r.get(8)?,
            step: r.get(9)?,
            cancel_requested: r.get(10)?,
            log: [r.get(11)?, r.get(12)?, r.get(13)?, r.get(14)?],
        })
    }

    fn into_record(self, path: &Path) -> Result<(RunRecord, LogState)> {
        let log = LogState {
            snapshot_step: to_u64(self.log[0], path, "snapshot_step")?,
            snapshot_bytes: to_u64(self.log[1], path, "snapshot_bytes")?,
            log_rows: to_u64(self.log[2], path, "log_rows")?,
            log_bytes: to_u64(self.log[3], path, "log_bytes")?,
        };
        let record = RunRecord {
            status: parse_status(&self.status, path)?,
            started_at: to_u64(self.started_at, path, "started_at")?,
            updated_at: to_u64(self.updated_at, path, "updated_at")?,
            step: to_u64(self.step, path, "step")?,
            cancel_requested: self.cancel_requested != 0,
            run_id: self.run_id,
            workflow_id: self.workflow_id,
            workflow_version: self.workflow_version,
            current_node: self.current_node,
            correlation_id: self.correlation_id,
            exit_status: self.exit_status,
        };
        Ok((record, log))
    }
}

pub(crate) fn get_run(tx: &Connection, path: &Path, run_id: &str) -> Result<(RunRecord, LogState)> {
    let sql = format!("SELECT {RECORD_COLS} FROM runs WHERE run_id = ?1");
    let raw = tx
        .prepare_cached(&sql)
        .and_then(|mut s| s.query_row([run_id], RawRecord::from_row).optional())
        .map_err(|e| StoreError::sqlite(path, e))?;
    match raw {
        Some(raw) => raw.into_record(path),
        None => Err(StoreError::NotFound {
            run_id: run_id.to_string(),
        }),
    }
}

pub(crate) fn get_record(tx: &Connection, path: &Path, run_id: &str) -> Result<RunRecord> {
    get_run(tx, path, run_id).map(|(r, _)| r)
}

/// All records matching `filter_sql` (a `WHERE`/`ORDER BY` tail) with `params`.
pub(crate) fn query_records(
    tx: &Connection,
    path: &Path,
    tail: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<Vec<RunRecord>> {
    let sql = format!("SELECT {RECORD_COLS} FROM runs {tail}");
    let raws = tx
        .prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_map(params, RawRecord::from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|e| StoreError::sqlite(path, e))?;
    raws.into_iter()
        .map(|r| r.into_record(path).map(|(r, _)| r))
        .collect()
}

pub(crate) fn get_lease(tx: &Connection, path: &Path, run_id: &str) -> Result<Option<LeaseRow>> {
    let raw = tx
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
        .map_err(|e| StoreError::sqlite(path, e))?;
    match raw {
        None => Ok(None),
        Some((owner, host, pid, acquired_at, expires_at)) => Ok(Some(LeaseRow {
            owner,
            host,
            pid,
            acquired_at: to_u64(acquired_at, path, "acquired_at")?,
            expires_at: to_u64(expires_at, path, "expires_at")?,
        })),
    }
}

pub(crate) fn put_lease(tx: &Connection, path: &Path, run_id: &str, row: &LeaseRow) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, \
         pid = excluded.pid, acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
    )
    .and_then(|mut s| {
        s.execute(rusqlite::params![
            run_id,
            row.owner,
            row.host,
            row.pid,
            to_i64(row.acquired_at).unwrap_or(i64::MAX),
            to_i64(row.expires_at).unwrap_or(i64::MAX),
        ])
    })
    .map(|_| ())
    .map_err(|e| StoreError::sqlite(path, e))
}

pub(crate) fn renew_lease(
    tx: &Connection,
    path: &Path,
    run_id: &str,
    expires_at: u64,
) -> Result<()> {
    tx.prepare_cached("UPDATE leases SET expires_at = ?2 WHERE run_id = ?1")
        .and_then(|mut s| {
            s.execute(rusqlite::params![
                run_id,
                to_i64(expires_at).unwrap_or(i64::MAX)
            ])
        })
        .map(|_| ())
        .map_err(|e| StoreError::sqlite(path, e))
}

pub(crate) fn delete_lease(tx: &Connection, path: &Path, run_id: &str) -> Result<()> {
    tx.prepare_cached("DELETE FROM leases WHERE run_id = ?1")
        .and_then(|mut s| s.execute([run_id]))
        .map(|_| ())
        .map_err(|e| StoreError::sqlite(path, e))
}

pub(crate) fn locked(run_id: &str, row: &LeaseRow) -> StoreError {
    StoreError::RunLocked {
        run_id: run_id.to_string(),
        owner: row.owner.clone(),
        since: row.acquired_at,
        expires_at: row.expires_at,
    }
}

/// Checks that `lease` is the run's current lease; returns its expiry.
pub(crate) fn check_holder(tx: &Connection, path: &Path, lease: &Lease, now: u64) -> Result<u64> {
    let me = lease.owner.to_string();
    match get_lease(tx, path, &lease.run_id)? {
        Some(row) if row.owner == me => Ok(row.expires_at),
        Some(row) if row.blocks(&me, now) => Err(locked(&lease.run_id, &row)),
        _ => Err(StoreError::LeaseLost {
            run_id: lease.run_id.clone(),
            owner: me,
        }),
    }
}

/// A log row as written (payloads already encoded).
#[derive(Default)]
pub(crate) struct NewLogRow<'a> {
    pub executed_node: Option<&'a str>,
    pub node_status: Option<&'a str>,
    pub output: Option<Vec<u8>>,
    pub delta: Option<Vec<u8>>,
    pub state_version: Option<u64>,
    pub started_at: Option<u64>,
    pub duration_ms: Option<u64>,
    pub snapshot_bytes: Option<u64>,
}

fn opt_i64(v: Option<u64>) -> Result<Option<i64>> {
    v.map(to_i64).transpose()
}

/// Updates the record to `update` at `step` and appends its log row. A terminal status
/// releases the lease. `unchanged_status`: the record as read in this transaction, when the
/// caller has it (a cheaper write when status, correlation and exit status stay).
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_step(
    tx: &Connection,
    path: &Path,
    run_id: &str,
    step: u64,
    kind: LogKind,
    update: &RecordUpdate,
    now: u64,
    row: &NewLogRow<'_>,
    unchanged_status: Option<&RunRecord>,
) -> Result<()> {
    let sq = |e| StoreError::sqlite(path, e);
    let delta_bytes = row.delta.as_ref().map_or(0, |d| d.len() as i64);
    if let Some(prev) = unchanged_status
        && prev.status == update.status
        && prev.correlation_id == update.correlation_id
        && prev.exit_status == update.exit_status
    {
        // The common step of a running run: leave the indexed columns out of the SET
        // list, so SQLite rewrites the row's page only, not its index pages too.
        tx.prepare_cached(
            "UPDATE runs SET current_node = ?2, step = ?3, updated_at = ?4, \
             log_rows = log_rows + ?5, log_bytes = log_bytes + ?6 WHERE run_id = ?1",
        )
        .and_then(|mut s| {
            s.execute(rusqlite::params![
                run_id,
                update.current_node,
                to_i64(step).unwrap_or(i64::MAX),
                to_i64(now).unwrap_or(i64::MAX),
                i64::from(row.delta.is_some()),
                delta_bytes,
            ])
        })
        .map_err(sq)?;
        return insert_log(tx, path, run_id, step, kind, update, now, row);
    }
    tx.prepare_cached(
        "UPDATE runs SET status = ?2, current_node = ?3, correlation_id = ?4, exit_status = ?5, \
         step = ?6, updated_at = ?7, log_rows = log_rows + ?8, log_bytes = log_bytes + ?9 \
         WHERE run_id = ?1",
    )
    .and_then(|mut s| {
        s.execute(rusqlite::params![
            run_id,
            update.status.as_str(),
            update.current_node,
            update.correlation_id,
            update.exit_status,
            to_i64(step).unwrap_or(i64::MAX),
            to_i64(now).unwrap_or(i64::MAX),
            i64::from(row.delta.is_some()),
            delta_bytes,
        ])
    })
    .map_err(sq)?;
    insert_log(tx, path, run_id, step, kind, update, now, row)?;
    if update.status.is_terminal() {
        delete_lease(tx, path, run_id)?;
    }
    Ok(())
}

/// What an append left its run at: the step it wrote, the run's snapshot-policy counters
/// and lease expiry after it. While the run is still at `step` (the next append's step check
/// proves it), nothing else wrote to it — except a cancellation request, which the step
/// update checks itself — so the next append need not read them back.
#[derive(Clone, Debug)]
pub(crate) struct LastStep {
    pub run_id: String,
    pub step: u64,
    pub log: LogState,
    pub lease_expires_at: u64,
}

/// What the step update of [`step_in_place`] saw (no cancellation was requested: that is
/// part of its condition).
pub(crate) struct SteppedInPlace {
    /// The log state before this step's row.
    pub log: LogState,
    pub lease_expires_at: u64,
}

/// The common step of a running run in one statement: bumps the record from
/// `expected_step` to `step` (current node, counters) only if `lease`'s owner still holds the
/// run, no cancellation was requested and its status, correlation and exit status stay what
/// `update` says (so it is not terminal), returning what the step's checks and the snapshot
/// policy need — read back, unless `last` (the previous append's outcome) says it. `None`:
/// some condition failed — the caller takes the full path, which names the failure (or makes
/// the status change, or reports the cancellation).
#[allow(clippy::too_many_arguments)]
pub(crate) fn step_in_place(
    tx: &Connection,
    path: &Path,
    lease: &Lease,
    expected_step: u64,
    update: &RecordUpdate,
    now: u64,
    delta_bytes: u64,
    last: Option<&LastStep>,
) -> Result<Option<SteppedInPlace>> {
    if update.status.is_terminal() {
        return Ok(None);
    }
    // Two plain statements: the same update with a RETURNING clause cost SQLite ~20,000
    // instructions more per step (its results go through an ephemeral table).
    let changed = tx
        .prepare_cached(
            "UPDATE runs SET current_node = ?3, step = ?2 + 1, updated_at = ?4, \
             log_rows = log_rows + 1, log_bytes = log_bytes + ?5 \
             WHERE run_id = ?1 AND step = ?2 AND status = ?6 AND correlation_id IS ?7 \
             AND exit_status IS ?8 AND cancel_requested = 0 \
             AND EXISTS (SELECT 1 FROM leases l WHERE l.run_id = ?1 AND l.owner = ?9)",
        )
        .and_then(|mut s| {
            s.execute(rusqlite::params![
                lease.run_id,
                to_i64(expected_step).unwrap_or(i64::MAX),
                update.current_node,
                to_i64(now).unwrap_or(i64::MAX),
                to_i64(delta_bytes).unwrap_or(i64::MAX),
                update.status.as_str(),
                update.correlation_id,
                update.exit_status,
                lease.owner.to_string(),
            ])
        })
        .map_err(|e| StoreError::sqlite(path, e))?;
    if changed != 1 {
        return Ok(None);
    }
    if let Some(last) = last.filter(|l| l.run_id == lease.run_id && l.step == expected_step) {
        return Ok(Some(SteppedInPlace {
            log: last.log,
            lease_expires_at: last.lease_expires_at,
        }));
    }
    let raw = tx
        .prepare_cached(
            "SELECT snapshot_step, snapshot_bytes, log_rows - 1, log_bytes - ?2, \
             (SELECT expires_at FROM leases l WHERE l.run_id = ?1) FROM runs WHERE run_id = ?1",
        )
        .and_then(|mut s| {
            s.query_row(
                rusqlite::params![lease.run_id, to_i64(delta_bytes).unwrap_or(i64::MAX)],
                |r| {
                    Ok((
                        [r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?, r.get(3)?],
                        r.get::<_, i64>(4)?,
                    ))
                },
            )
            .optional()
        })
        .map_err(|e| StoreError::sqlite(path, e))?;
    // The row was just updated in this transaction: it is there.
    let (log, expires_at) = raw.ok_or_else(|| {
        StoreError::Invalid(format!(
            "run `{}` vanished inside its step's transaction",
            lease.run_id
        ))
    })?;
    Ok(Some(SteppedInPlace {
        log: LogState {
            snapshot_step: to_u64(log[0], path, "snapshot_step")?,
            snapshot_bytes: to_u64(log[1], path, "snapshot_bytes")?,
            log_rows: to_u64(log[2], path, "log_rows")?,
            log_bytes: to_u64(log[3], path, "log_bytes")?,
        },
        lease_expires_at: to_u64(expires_at, path, "expires_at")?,
    }))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn insert_log(
    tx: &Connection,
    path: &Path,
    run_id: &str,
    step: u64,
    kind: LogKind,
    update: &RecordUpdate,
    now: u64,
    row: &NewLogRow<'_>,
) -> Result<()> {
    let step = log_step(step)?;
    tx.prepare_cached(concat!(
        "INSERT INTO run_log (id, run_id, step, kind, status, node, executed_node, \
         node_status, output, delta, state_version, at, started_at, duration_ms, \
         snapshot_bytes) VALUES (",
        log_key!(),
        " + ?2, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
    ))
    .and_then(|mut s| {
        s.execute(rusqlite::params![
            run_id,
            step,
            kind.as_str(),
            update.status.as_str(),
            update.current_node,
            row.executed_node,
            row.node_status,
            row.output,
            row.delta,
            opt_i64(row.state_version).unwrap_or(None),
            to_i64(now).unwrap_or(i64::MAX),
            opt_i64(row.started_at).unwrap_or(None),
            opt_i64(row.duration_ms).unwrap_or(None),
            opt_i64(row.snapshot_bytes).unwrap_or(None),
        ])
    })
    .map(|_| ())
    .map_err(|e| StoreError::sqlite(path, e))
}

/// Makes the snapshot at `step` (already inserted) the run's only one.
pub(crate) fn adopt_snapshot(
    tx: &Connection,
    path: &Path,
    run_id: &str,
    step: u64,
    bytes: u64,
    failpoint: Option<Failpoint>,
) -> Result<()> {
    let sq = |e| StoreError::sqlite(path, e);
    let step = to_i64(step)?;
    Failpoint::hit(failpoint, CompactionStage::AfterSnapshotInsert)?;
    tx.prepare_cached("DELETE FROM snapshots WHERE run_id = ?1 AND step < ?2")
        .and_then(|mut s| s.execute(rusqlite::params![run_id, step]))
        .map_err(sq)?;
    Failpoint::hit(failpoint, CompactionStage::AfterOldSnapshotDelete)?;
    // The record's counters restart at this snapshot; its log row records the size.
    let bytes = to_i64(bytes).unwrap_or(i64::MAX);
    for sql in [
        "UPDATE runs SET snapshot_step = ?2, snapshot_bytes = ?3, log_rows = 0, log_bytes = 0 \
         WHERE run_id = ?1",
        concat!(
            "UPDATE run_log SET snapshot_bytes = ?3 WHERE id = ",
            log_key!(),
            " + ?2"
        ),
    ] {
        tx.prepare_cached(sql)
            .and_then(|mut s| s.execute(rusqlite::params![run_id, step, bytes]))
            .map_err(sq)?;
    }
    Ok(())
}

pub(crate) fn insert_snapshot(
    tx: &Connection,
    path: &Path,
    run_id: &str,
    step: u64,
    version: u64,
    bytes: &[u8],
) -> Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO snapshots (run_id, step, snapshot_version, state) \
         VALUES (?1, ?2, ?3, ?4)",
    )
    .and_then(|mut s| {
        s.execute(rusqlite::params![
            run_id,
            to_i64(step).unwrap_or(i64::MAX),
            to_i64(version).unwrap_or(i64::MAX),
            bytes
        ])
    })
    .map(|_| ())
    .map_err(|e| StoreError::sqlite(path, e))
}

/// The run's current state: its snapshot at `log.snapshot_step` with every delta logged
/// after it applied, in step order. Checks the snapshot format version.
pub(crate) fn materialize(
    tx: &Connection,
    path: &Path,
    run_id: &str,
    log: &LogState,
    expected_version: u64,
) -> Result<serde_json::Value> {
    let sq = |e| StoreError::sqlite(path, e);
    let snap_step = to_i64(log.snapshot_step)?;
    let (bytes, version): (Vec<u8>, i64) = tx
        .prepare_cached(
            "SELECT state, snapshot_version FROM snapshots WHERE run_id = ?1 AND step = ?2",
        )
        .and_then(|mut s| {
            s.query_row(rusqlite::params![run_id, snap_step], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
        })
        .map_err(sq)?
        .ok_or_else(|| {
            corrupt(
                path,
                format!(
                    "run `{run_id}` has no snapshot at step {}",
                    log.snapshot_step
                ),
            )
        })?;
    let version = to_u64(version, path, "snapshot_version")?;
    check_version(run_id, version, expected_version)?;
    let (inner, mut state) =
        decode_snapshot(&bytes).map_err(|d| corrupt(path, format!("run `{run_id}`: {d}")))?;
    if inner != version {
        return Err(corrupt(
            path,
            format!(
                "run `{run_id}`: the snapshot envelope says version {inner}, its row says \
                 {version}"
            ),
        ));
    }
    let mut stmt = tx
        .prepare_cached(concat!(
            "SELECT step, delta, state_version FROM run_log WHERE id > ",
            log_key!(),
            " + ?2 AND id < ",
            log_key_end!(),
            " AND delta IS NOT NULL ORDER BY id"
        ))
        .map_err(sq)?;
    let mut rows = stmt
        .query(rusqlite::params![run_id, snap_step])
        .map_err(sq)?;
    while let Some(row) = rows.next().map_err(sq)? {
        let step: i64 = row.get(0).map_err(sq)?;
        let delta: Vec<u8> = row.get(1).map_err(sq)?;
        let version: Option<i64> = row.get(2).map_err(sq)?;
        let version = to_u64(version.unwrap_or(-1), path, "state_version")?;
        check_version(run_id, version, expected_version)?;
        apply_delta(path, run_id, step, &delta, &mut state)?;
    }
    Ok(state)
}

pub(crate) fn check_version(run_id: &str, found: u64, expected: u64) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(StoreError::SnapshotVersion {
            run_id: run_id.to_string(),
            found,
            expected,
        })
    }
}

pub(crate) fn apply_delta(
    path: &Path,
    run_id: &str,
    step: i64,
    delta: &[u8],
    state: &mut serde_json::Value,
) -> Result<()> {
    let delta: StateDelta = serde_json::from_slice(delta).map_err(|e| {
        corrupt(
            path,
            format!("run `{run_id}`: the delta of step {step} is undecodable: {e}"),
        )
    })?;
    delta.apply(state).map_err(|e| {
        corrupt(
            path,
            format!("run `{run_id}`: the delta of step {step} does not apply: {e}"),
        )
    })
}

/// Rewrites the run's snapshot at `step` from the latest one plus the log (the caller's
/// transaction makes it all-or-nothing). Returns the new snapshot's size.
pub(crate) fn compact(
    tx: &Connection,
    path: &Path,
    run_id: &str,
    step: u64,
    opts: &StoreOptions,
) -> Result<u64> {
    let (_, log) = get_run(tx, path, run_id)?;
    let state = materialize(tx, path, run_id, &log, opts.snapshot_version)?;
    let bytes = encode_snapshot(opts.snapshot_version, &state)?;
    store_snapshot(tx, path, run_id, step, &bytes, opts)
}

/// Writes `bytes` (an encoded snapshot) as the run's only snapshot, at `step`. Returns its
/// size.
pub(crate) fn store_snapshot(
    tx: &Connection,
    path: &Path,
    run_id: &str,
    step: u64,
    bytes: &[u8],
    opts: &StoreOptions,
) -> Result<u64> {
    insert_snapshot(tx, path, run_id, step, opts.snapshot_version, bytes)?;
    let len = bytes.len() as u64;
    adopt_snapshot(tx, path, run_id, step, len, opts.failpoint)?;
    Ok(len)
}
