//! A group of running steps on PostgreSQL in one round trip ([`crate::group`]): one statement,
//! committed on its own, that moves the record over all of them, appends their log rows (from
//! arrays, `unnest … WITH ORDINALITY`) and renews the lease when less than half of it is left —
//! under the conditions of the one-statement step ([`super::step`]). A group it cannot take (a
//! terminal status, a wait, a row carrying a snapshot, a compaction the store is to make, rows
//! whose status differs, or a condition that failed) takes the checked path: every row through
//! [`crate::logic::append`] in one transaction.

use std::sync::Arc;

use super::step::{eligible, i64_of, opt_i64};
use super::{Inner, pg_err, pool_err};
use crate::logic::EncodedStep;
use crate::{Checkpointed, Lease, RecordUpdate, Result};

/// `$10`: the number of rows; the row arrays are `$11…$18`. `up`'s `RETURNING` is the log
/// state before the group. `$21`: a row leaves a due compaction to the store — then the
/// group is not done here when the policy (`$22…$24`, [`crate::SnapshotPolicy::due`] in SQL)
/// makes one due after its last row: the policy only grows more due row by row, so none was
/// due before either.
const GROUP: &str = "WITH up AS ( \
      UPDATE runs SET current_node = $3, step = $2 + $10, updated_at = $4, \
        log_rows = log_rows + $10, log_bytes = log_bytes + $5, wake_at = NULL, waiting_for = NULL \
      WHERE run_id = $1 AND step = $2 AND status = $6 \
        AND correlation_id IS NOT DISTINCT FROM $7 AND exit_status IS NOT DISTINCT FROM $8 \
        AND NOT cancel_requested AND NOT pause_requested \
        AND NOT ($21 AND (log_rows + $10 >= $22 OR log_bytes + $5 >= $23) \
                 AND (log_bytes + $5)::NUMERIC * 100 >= snapshot_bytes::NUMERIC * $24::BIGINT) \
        AND EXISTS (SELECT 1 FROM leases l WHERE l.run_id = $1 AND l.owner = $9) \
      RETURNING snapshot_step, snapshot_bytes, log_rows - $10 AS log_rows, \
        log_bytes - $5 AS log_bytes \
    ), logged AS ( \
      INSERT INTO run_log (run_id, step, kind, status, node, executed_node, node_status, \
        output, delta, state_version, at, started_at, duration_ms, snapshot_bytes) \
      SELECT $1, $2 + r.i, r.kind, $6, r.node, r.executed_node, r.node_status, r.output, \
        r.delta, $19, $4, r.started_at, r.duration_ms, NULL \
      FROM up, unnest($11::TEXT[], $12::TEXT[], $13::TEXT[], $14::TEXT[], $15::BYTEA[], \
        $16::BYTEA[], $17::BIGINT[], $18::BIGINT[]) \
        WITH ORDINALITY AS r(kind, node, executed_node, node_status, output, delta, \
          started_at, duration_ms, i) \
    ), renewed AS ( \
      UPDATE leases SET expires_at = $4 + $20 \
      WHERE run_id = $1 AND owner = $9 AND EXISTS (SELECT 1 FROM up) \
        AND (expires_at - $4) * 2 < $20 \
      RETURNING expires_at \
    ) \
    SELECT up.snapshot_step, up.snapshot_bytes, up.log_rows, up.log_bytes, \
      COALESCE((SELECT expires_at FROM renewed), \
               (SELECT expires_at FROM leases WHERE run_id = $1)) \
    FROM up";

/// Whether the group can take the one statement: every row a running step of the same record
/// status as the last, none carrying a snapshot.
fn fits(steps: &[(RecordUpdate, EncodedStep)]) -> bool {
    let Some((last, _)) = steps.last() else {
        return false;
    };
    steps.iter().all(|(u, e)| {
        eligible(u, e)
            && u.status == last.status
            && u.correlation_id == last.correlation_id
            && u.exit_status == last.exit_status
    })
}

/// The group in one statement; `None` when it cannot take it or a condition failed (nothing
/// was written).
pub(crate) async fn group(
    inner: &Arc<Inner>,
    lease: &Lease,
    expected_step: u64,
    steps: &[(RecordUpdate, EncodedStep)],
    now: u64,
) -> Result<Option<Checkpointed>> {
    if !fits(steps) {
        return Ok(None);
    }
    let Some((update, _)) = steps.last() else {
        return Ok(None);
    };
    let n = steps.len() as u64;
    let delta_bytes: u64 = steps.iter().map(|(_, e)| e.delta.len() as u64).sum();
    let mut kinds = Vec::with_capacity(steps.len());
    let (mut nodes, mut executed, mut statuses) = (Vec::new(), Vec::new(), Vec::new());
    let (mut outputs, mut deltas, mut started, mut durations) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (u, e) in steps {
        kinds.push(e.kind.as_str());
        nodes.push(u.current_node.clone());
        executed.push(e.node.clone());
        statuses.push(e.node_status.clone());
        outputs.push(e.output.clone());
        deltas.push(Some(e.delta.clone()));
        started.push(opt_i64(e.started_at, "started_at")?);
        durations.push(opt_i64(e.duration_ms, "duration")?);
    }
    let client = inner
        .pool
        .get()
        .await
        .map_err(|e| pool_err(&inner.target, e))?;
    let stmt = client
        .prepare_cached(GROUP)
        .await
        .map_err(|e| pg_err(&inner.target, e))?;
    let owner = lease.owner.to_string();
    let by_store = steps.iter().any(|(_, e)| e.by_store);
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
                &i64_of(delta_bytes, "delta size")?,
                &update.status.as_str(),
                &update.correlation_id,
                &update.exit_status,
                &owner,
                &i64_of(n, "group size")?,
                &kinds,
                &nodes,
                &executed,
                &statuses,
                &outputs,
                &deltas,
                &started,
                &durations,
                &i64_of(inner.opts.snapshot_version, "snapshot version")?,
                &i64_of(inner.opts.ttl_ms(), "lease TTL")?,
                &by_store,
                &sat(policy.every_steps),
                &sat(policy.max_log_bytes),
                &sat(policy.min_log_percent),
            ],
        )
        .await
        .map_err(|e| pg_err(&inner.target, e))?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let stepped = super::step::stepped_of(inner, row)?;
    let log = &stepped.log;
    // A compaction the store makes is excluded by the statement: here `due` is one the
    // caller is asked to send.
    let due = !by_store
        && policy.due(
            log.log_rows.saturating_add(n),
            log.log_bytes.saturating_add(delta_bytes),
            log.snapshot_bytes,
        );
    Ok(Some(super::step::checkpointed(
        expected_step.saturating_add(n),
        now,
        &stepped,
        due,
    )))
}
