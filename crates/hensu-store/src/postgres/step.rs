//! A running run's step on PostgreSQL in one round trip (ARCHITECTURE.md, *hensu-store*): one
//! statement, committed on its own, that moves the record from the expected step, appends the
//! log row and renews the lease when less than half of it is left — each only if the
//! lease's owner holds the run, no cancellation or pause was requested and the record's
//! status, correlation and exit status stay what the update says (the conditions of
//! [`crate::logic::append`]'s checked path, which any other case takes: a terminal status,
//! a wait, a step carrying a snapshot, a step whose compaction the snapshot policy makes due
//! — a compaction must commit with its step —, or a condition that failed and must be named).

use std::sync::Arc;

use super::{Inner, pg_err, pool_err};
use crate::backend::LogState;
use crate::logic::EncodedStep;
use crate::{Checkpointed, Lease, RecordUpdate, Result, StoreError};

/// The step: `up` moves the record (unless the step makes a compaction due that the store
/// is to make: [`crate::SnapshotPolicy::due`] in SQL) (its `RETURNING` is the log state before this row),
/// `logged` appends the row only when `up` did, `renewed` renews the lease only then, and
/// only when less than half of the TTL is left. No row: not done.
const STEP: &str = "WITH up AS ( \
      UPDATE runs SET current_node = $3, step = $2 + 1, updated_at = $4, \
        log_rows = log_rows + 1, log_bytes = log_bytes + $5, wake_at = NULL, waiting_for = NULL \
      WHERE run_id = $1 AND step = $2 AND status = $6 \
        AND correlation_id IS NOT DISTINCT FROM $7 AND exit_status IS NOT DISTINCT FROM $8 \
        AND NOT cancel_requested AND NOT pause_requested \
        AND NOT ($19 AND (log_rows + 1 >= $20 OR log_bytes + $5 >= $21) \
                 AND (log_bytes + $5)::NUMERIC * 100 >= snapshot_bytes::NUMERIC * $22::BIGINT) \
        AND EXISTS (SELECT 1 FROM leases l WHERE l.run_id = $1 AND l.owner = $9) \
      RETURNING snapshot_step, snapshot_bytes, log_rows - 1 AS log_rows, log_bytes - $5 AS log_bytes \
    ), logged AS ( \
      INSERT INTO run_log (run_id, step, kind, status, node, executed_node, node_status, \
        output, delta, state_version, at, started_at, duration_ms, snapshot_bytes) \
      SELECT $1, $2 + 1, $10, $6, $3, $11, $12, $13, $14, $15, $4, $16, $17, NULL FROM up \
    ), renewed AS ( \
      UPDATE leases SET expires_at = $4 + $18 \
      WHERE run_id = $1 AND owner = $9 AND EXISTS (SELECT 1 FROM up) \
        AND (expires_at - $4) * 2 < $18 \
      RETURNING expires_at \
    ) \
    SELECT up.snapshot_step, up.snapshot_bytes, up.log_rows, up.log_bytes, \
      COALESCE((SELECT expires_at FROM renewed), \
               (SELECT expires_at FROM leases WHERE run_id = $1)) \
    FROM up";

/// What a step done in one statement saw.
pub(crate) struct Stepped {
    /// The log state before this step's row.
    pub log: LogState,
    pub lease_expires_at: u64,
}

/// Whether `update` and `entry` can take the one-statement step.
pub(crate) fn eligible(update: &RecordUpdate, entry: &EncodedStep) -> bool {
    !update.status.is_terminal() && update.wait.is_none() && entry.offered.is_none()
}

pub(crate) fn i64_of(v: u64, what: &str) -> Result<i64> {
    i64::try_from(v).map_err(|_| StoreError::Invalid(format!("{what} {v} is out of range")))
}

/// [`i64_of`] of an optional column.
pub(crate) fn opt_i64(v: Option<u64>, what: &str) -> Result<Option<i64>> {
    v.map(|v| i64_of(v, what)).transpose()
}

fn u64_of(inner: &Inner, v: i64, column: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| StoreError::Corrupt {
        path: inner.path.clone(),
        detail: format!("`{column}` is negative ({v})"),
    })
}

/// The step in one statement; `None` when a condition failed (nothing was written).
pub(crate) async fn step(
    inner: &Arc<Inner>,
    lease: &Lease,
    expected_step: u64,
    update: &RecordUpdate,
    entry: &EncodedStep,
    now: u64,
) -> Result<Option<Stepped>> {
    let client = inner
        .pool
        .get()
        .await
        .map_err(|e| pool_err(&inner.target, e))?;
    let stmt = client
        .prepare_cached(STEP)
        .await
        .map_err(|e| pg_err(&inner.target, e))?;
    let owner = lease.owner.to_string();
    let policy = inner.opts.snapshot_policy;
    // `u64::MAX` ("never") as the largest BIGINT: no counter reaches either.
    let sat = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let rows = client
        .query(
            &stmt,
            &[
                &lease.run_id,
                &i64_of(expected_step, "step")?,
                &update.current_node,
                &i64_of(now, "time")?,
                &i64_of(entry.delta.len() as u64, "delta size")?,
                &update.status.as_str(),
                &update.correlation_id,
                &update.exit_status,
                &owner,
                &entry.kind.as_str(),
                &entry.node,
                &entry.node_status,
                &entry.output,
                &entry.delta,
                &i64_of(inner.opts.snapshot_version, "snapshot version")?,
                &opt_i64(entry.started_at, "started_at")?,
                &opt_i64(entry.duration_ms, "duration")?,
                &i64_of(inner.opts.ttl_ms(), "lease TTL")?,
                &entry.by_store,
                &sat(policy.every_steps),
                &sat(policy.max_log_bytes),
                &sat(policy.min_log_percent),
            ],
        )
        .await
        .map_err(|e| pg_err(&inner.target, e))?;
    rows.first().map(|row| stepped_of(inner, row)).transpose()
}

/// The log's state and the lease's expiry a one-statement step returns (its five columns;
/// also those of a group of steps, `group.rs`).
pub(crate) fn stepped_of(inner: &Inner, row: &tokio_postgres::Row) -> Result<Stepped> {
    let col = |i: usize, name: &str| -> Result<u64> {
        let v: Option<i64> = row.try_get(i).map_err(|e| pg_err(&inner.target, e))?;
        u64_of(inner, v.unwrap_or(0), name)
    };
    Ok(Stepped {
        log: LogState {
            snapshot_step: col(0, "snapshot_step")?,
            snapshot_bytes: col(1, "snapshot_bytes")?,
            log_rows: col(2, "log_rows")?,
            log_bytes: col(3, "log_bytes")?,
        },
        lease_expires_at: col(4, "expires_at")?,
    })
}

/// The result of a step done in one statement, as [`crate::logic::append`] makes it (no
/// snapshot is written by it; `due`: the policy wants one, which the caller is to send).
pub(crate) fn checkpointed(step: u64, now: u64, stepped: &Stepped, due: bool) -> Checkpointed {
    Checkpointed {
        step,
        at: now,
        lease_expires_at: stepped.lease_expires_at,
        cancel_requested: false,
        pause_requested: false,
        snapshot_written: false,
        snapshot_wanted: due,
    }
}
