//! Row-level reads and writes of the PostgreSQL store, shared by its operations.

use deadpool_postgres::Transaction;
use serde_json::Value;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::{corrupt, pg_err};
use crate::owner::LeaseRow;
use crate::sqlite::rows::{LogState, check_version};
use crate::sqlite::to_i64;
use crate::{
    CompactionStage, Failpoint, Lease, LogKind, RecordUpdate, Result, RunRecord, RunStatus,
    StateDelta, StoreError, StoreOptions, decode_snapshot, encode_snapshot,
};

pub(crate) const RECORD_COLS: &str = "run_id, workflow_id, workflow_version, status, \
     current_node, started_at, updated_at, correlation_id, exit_status, step, cancel_requested, \
     snapshot_step, snapshot_bytes, log_rows, log_bytes";

pub(crate) fn to_u64(v: i64, target: &str, what: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| corrupt(target, format!("negative {what} ({v})")))
}

fn opt_i64(v: Option<u64>) -> Result<Option<i64>> {
    v.map(to_i64).transpose()
}

/// A column that must decode: a type mismatch means someone else's table.
fn col<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    i: usize,
    target: &str,
) -> Result<T> {
    row.try_get(i)
        .map_err(|e| corrupt(target, format!("undecodable column {i}: {e}")))
}

pub(crate) fn record_from_row(row: &Row, target: &str) -> Result<(RunRecord, LogState)> {
    let status: String = col(row, 3, target)?;
    let record = RunRecord {
        run_id: col(row, 0, target)?,
        workflow_id: col(row, 1, target)?,
        workflow_version: col(row, 2, target)?,
        status: RunStatus::parse(&status)
            .ok_or_else(|| corrupt(target, format!("unknown run status `{status}`")))?,
        current_node: col(row, 4, target)?,
        started_at: to_u64(col(row, 5, target)?, target, "started_at")?,
        updated_at: to_u64(col(row, 6, target)?, target, "updated_at")?,
        correlation_id: col(row, 7, target)?,
        exit_status: col(row, 8, target)?,
        step: to_u64(col(row, 9, target)?, target, "step")?,
        cancel_requested: col(row, 10, target)?,
    };
    let log = LogState {
        snapshot_step: to_u64(col(row, 11, target)?, target, "snapshot_step")?,
        snapshot_bytes: to_u64(col(row, 12, target)?, target, "snapshot_bytes")?,
        log_rows: to_u64(col(row, 13, target)?, target, "log_rows")?,
        log_bytes: to_u64(col(row, 14, target)?, target, "log_bytes")?,
    };
    Ok((record, log))
}

/// The run's record; with `lock`, its row is locked until the transaction ends (every
/// write takes it first, so the writes to one run serialize).
pub(crate) async fn get_run(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    lock: bool,
) -> Result<(RunRecord, LogState)> {
    let sql = format!(
        "SELECT {RECORD_COLS} FROM runs WHERE run_id = $1{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    let stmt = tx
        .prepare_cached(&sql)
        .await
        .map_err(|e| pg_err(target, e))?;
    match tx
        .query_opt(&stmt, &[&run_id])
        .await
        .map_err(|e| pg_err(target, e))?
    {
        Some(row) => record_from_row(&row, target),
        None => Err(StoreError::NotFound {
            run_id: run_id.to_string(),
        }),
    }
}

pub(crate) async fn query(
    tx: &Transaction<'_>,
    target: &str,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>> {
    let stmt = tx
        .prepare_cached(sql)
        .await
        .map_err(|e| pg_err(target, e))?;
    tx.query(&stmt, params).await.map_err(|e| pg_err(target, e))
}

pub(crate) async fn execute(
    tx: &Transaction<'_>,
    target: &str,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64> {
    let stmt = tx
        .prepare_cached(sql)
        .await
        .map_err(|e| pg_err(target, e))?;
    tx.execute(&stmt, params)
        .await
        .map_err(|e| pg_err(target, e))
}

pub(crate) async fn get_lease(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
) -> Result<Option<LeaseRow>> {
    let rows = query(
        tx,
        target,
        "SELECT owner, host, pid, acquired_at, expires_at FROM leases WHERE run_id = $1",
        &[&run_id],
    )
    .await?;
    match rows.first() {
        None => Ok(None),
        Some(r) => Ok(Some(LeaseRow {
            owner: col(r, 0, target)?,
            host: col(r, 1, target)?,
            pid: col(r, 2, target)?,
            acquired_at: to_u64(col(r, 3, target)?, target, "acquired_at")?,
            expires_at: to_u64(col(r, 4, target)?, target, "expires_at")?,
        })),
    }
}

pub(crate) async fn put_lease(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    row: &LeaseRow,
) -> Result<()> {
    execute(
        tx,
        target,
        "INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, \
         pid = excluded.pid, acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
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

pub(crate) async fn renew_lease(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    expires_at: u64,
) -> Result<()> {
    execute(
        tx,
        target,
        "UPDATE leases SET expires_at = $2 WHERE run_id = $1",
        &[&run_id, &to_i64(expires_at)?],
    )
    .await
    .map(|_| ())
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
pub(crate) async fn check_holder(
    tx: &Transaction<'_>,
    target: &str,
    lease: &Lease,
    now: u64,
) -> Result<u64> {
    let me = lease.owner.to_string();
    match get_lease(tx, target, &lease.run_id).await? {
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
pub(crate) struct NewLogRow {
    pub executed_node: Option<String>,
    pub node_status: Option<String>,
    pub output: Option<Vec<u8>>,
    pub delta: Option<Vec<u8>>,
    pub state_version: Option<u64>,
    pub started_at: Option<u64>,
    pub duration_ms: Option<u64>,
    pub snapshot_bytes: Option<u64>,
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn insert_log(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    step: u64,
    kind: LogKind,
    update: &RecordUpdate,
    now: u64,
    row: &NewLogRow,
) -> Result<()> {
    execute(
        tx,
        target,
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

/// Updates the record to `update` at `step` and appends its log row. A terminal status
/// releases the lease.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn write_step(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    step: u64,
    kind: LogKind,
    update: &RecordUpdate,
    now: u64,
    row: &NewLogRow,
) -> Result<()> {
    let delta_bytes = row.delta.as_ref().map_or(0, |d| d.len() as i64);
    execute(
        tx,
        target,
        "UPDATE runs SET status = $2, current_node = $3, correlation_id = $4, exit_status = $5, \
         step = $6, updated_at = $7, log_rows = log_rows + $8, log_bytes = log_bytes + $9 \
         WHERE run_id = $1",
        &[
            &run_id,
            &update.status.as_str(),
            &update.current_node,
            &update.correlation_id,
            &update.exit_status,
            &to_i64(step)?,
            &to_i64(now)?,
            &i64::from(row.delta.is_some()),
            &delta_bytes,
        ],
    )
    .await?;
    insert_log(tx, target, run_id, step, kind, update, now, row).await?;
    if update.status.is_terminal() {
        execute(
            tx,
            target,
            "DELETE FROM leases WHERE run_id = $1",
            &[&run_id],
        )
        .await?;
    }
    Ok(())
}

pub(crate) async fn insert_snapshot(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    step: u64,
    version: u64,
    bytes: &[u8],
) -> Result<()> {
    execute(
        tx,
        target,
        "INSERT INTO snapshots (run_id, step, snapshot_version, state) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (run_id, step) DO UPDATE SET snapshot_version = excluded.snapshot_version, \
         state = excluded.state",
        &[&run_id, &to_i64(step)?, &to_i64(version)?, &bytes],
    )
    .await
    .map(|_| ())
}

/// Makes the snapshot at `step` (already inserted) the run's only one.
pub(crate) async fn adopt_snapshot(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    step: u64,
    bytes: u64,
    failpoint: Option<Failpoint>,
) -> Result<()> {
    let (step, bytes) = (to_i64(step)?, to_i64(bytes)?);
    Failpoint::hit(failpoint, CompactionStage::AfterSnapshotInsert)?;
    execute(
        tx,
        target,
        "DELETE FROM snapshots WHERE run_id = $1 AND step < $2",
        &[&run_id, &step],
    )
    .await?;
    Failpoint::hit(failpoint, CompactionStage::AfterOldSnapshotDelete)?;
    execute(
        tx,
        target,
        "UPDATE runs SET snapshot_step = $2, snapshot_bytes = $3, log_rows = 0, log_bytes = 0 \
         WHERE run_id = $1",
        &[&run_id, &step, &bytes],
    )
    .await?;
    execute(
        tx,
        target,
        "UPDATE run_log SET snapshot_bytes = $3 WHERE run_id = $1 AND step = $2",
        &[&run_id, &step, &bytes],
    )
    .await?;
    Ok(())
}

/// The run's current state: its snapshot with every delta logged after it applied.
pub(crate) async fn materialize(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    log: &LogState,
    expected_version: u64,
) -> Result<Value> {
    let snap_step = to_i64(log.snapshot_step)?;
    let rows = query(
        tx,
        target,
        "SELECT state, snapshot_version FROM snapshots WHERE run_id = $1 AND step = $2",
        &[&run_id, &snap_step],
    )
    .await?;
    let row = rows.first().ok_or_else(|| {
        corrupt(
            target,
            format!(
                "run `{run_id}` has no snapshot at step {}",
                log.snapshot_step
            ),
        )
    })?;
    let bytes: Vec<u8> = col(row, 0, target)?;
    let version = to_u64(col(row, 1, target)?, target, "snapshot_version")?;
    check_version(run_id, version, expected_version)?;
    let (inner, mut state) =
        decode_snapshot(&bytes).map_err(|d| corrupt(target, format!("run `{run_id}`: {d}")))?;
    if inner != version {
        return Err(corrupt(
            target,
            format!(
                "run `{run_id}`: the snapshot envelope says version {inner}, its row says \
                 {version}"
            ),
        ));
    }
    let deltas = query(
        tx,
        target,
        "SELECT step, delta, state_version FROM run_log \
         WHERE run_id = $1 AND step > $2 AND delta IS NOT NULL ORDER BY step",
        &[&run_id, &snap_step],
    )
    .await?;
    for row in &deltas {
        let step: i64 = col(row, 0, target)?;
        let bytes: Vec<u8> = col(row, 1, target)?;
        let version: Option<i64> = col(row, 2, target)?;
        check_version(
            run_id,
            to_u64(version.unwrap_or(-1), target, "state_version")?,
            expected_version,
        )?;
        let delta: StateDelta = serde_json::from_slice(&bytes).map_err(|e| {
            corrupt(
                target,
                format!("run `{run_id}`: the delta of step {step} is undecodable: {e}"),
            )
        })?;
        delta.apply(&mut state).map_err(|e| {
            corrupt(
                target,
                format!("run `{run_id}`: the delta of step {step} does not apply: {e}"),
            )
        })?;
    }
    Ok(state)
}

/// Rewrites the run's snapshot at `step` from the latest one plus the log.
pub(crate) async fn compact(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    step: u64,
    opts: &StoreOptions,
) -> Result<u64> {
    let (_, log) = get_run(tx, target, run_id, false).await?;
    let state = materialize(tx, target, run_id, &log, opts.snapshot_version).await?;
    let bytes = encode_snapshot(opts.snapshot_version, &state)?;
    store_snapshot(tx, target, run_id, step, &bytes, opts).await
}

/// Writes `bytes` (an encoded snapshot) as the run's only snapshot, at `step`. Returns its
/// size.
pub(crate) async fn store_snapshot(
    tx: &Transaction<'_>,
    target: &str,
    run_id: &str,
    step: u64,
    bytes: &[u8],
    opts: &StoreOptions,
) -> Result<u64> {
    insert_snapshot(tx, target, run_id, step, opts.snapshot_version, bytes).await?;
    let len = bytes.len() as u64;
    adopt_snapshot(tx, target, run_id, step, len, opts.failpoint).await?;
    Ok(len)
}
