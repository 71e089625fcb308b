//! [`StateStore`] on PostgreSQL. Every method runs one transaction on the store's runtime;
//! writes lock the run's row first (see the module docs).

use serde_json::Value;
use tokio_postgres::IsolationLevel;

use super::rows::{
    NewLogRow, RECORD_COLS, adopt_snapshot, check_holder, compact, execute, get_lease, get_run,
    insert_log, insert_snapshot, locked, materialize, put_lease, query, record_from_row,
    renew_lease, store_snapshot, to_u64, write_step,
};
use super::{PgStore, corrupt, pg_err, pool_err};
use crate::owner::LeaseRow;
use crate::sqlite::rows::LogState;
use crate::sqlite::to_i64;
use crate::time::now_ms;
use crate::{
    CancelRequest, CheckpointMeta, Checkpointed, ClaimNote, Claimed, Lease, LogEntry, LogKind,
    OwnerId, RecordUpdate, Renewed, Result, RunRecord, RunStatus, StateDelta, StateStore,
    StepEntry, StepSnapshot, StoreError, StoredRun, encode_snapshot,
};

/// Runs `$body` in a transaction on a pooled connection (`$read`: `REPEATABLE READ`, read
/// only); commits when it returns `Ok`, rolls back (by dropping) otherwise.
macro_rules! in_tx {
    ($inner:ident, $tx:ident, $t:ident, $read:expr, $body:block) => {{
        let mut client = $inner
            .pool
            .get()
            .await
            .map_err(|e| pool_err(&$inner.target, e))?;
        let builder = client.build_transaction();
        let builder = if $read {
            builder
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
        } else {
            builder
        };
        let $tx = builder
            .start()
            .await
            .map_err(|e| pg_err(&$inner.target, e))?;
        let $t: &str = &$inner.target;
        let out = async { $body }.await?;
        $tx.commit().await.map_err(|e| pg_err($t, e))?;
        Ok(out)
    }};
}

/// The checks every write under a lease makes (see the SQLite store's `check_write`).
async fn check_write(
    tx: &deadpool_postgres::Transaction<'_>,
    t: &str,
    lease: &Lease,
    expected_step: u64,
    now: u64,
) -> Result<(RunRecord, LogState, u64)> {
    let run_id = lease.run_id.as_str();
    let (record, log) = get_run(tx, t, run_id, true).await?;
    if record.status.is_terminal() {
        return Err(StoreError::Finished {
            run_id: run_id.to_string(),
            status: record.status,
        });
    }
    let expires_at = check_holder(tx, t, lease, now).await?;
    if record.step != expected_step {
        return Err(StoreError::StepConflict {
            run_id: run_id.to_string(),
            expected: expected_step,
            actual: record.step,
        });
    }
    Ok((record, log, expires_at))
}

const META_COLS: &str =
    "step, node, status, at, snapshot_bytes, kind, executed_node, node_status, duration_ms";

fn meta_from_row(r: &tokio_postgres::Row, t: &str) -> Result<CheckpointMeta> {
    let get_opt = |i: usize, what: &str| -> Result<Option<u64>> {
        let v: Option<i64> = r
            .try_get(i)
            .map_err(|e| corrupt(t, format!("undecodable {what}: {e}")))?;
        v.map(|v| to_u64(v, t, what)).transpose()
    };
    let text = |i: usize| -> Result<Option<String>> {
        r.try_get(i)
            .map_err(|e| corrupt(t, format!("undecodable log column {i}: {e}")))
    };
    let status = text(2)?.unwrap_or_default();
    let kind = text(5)?.unwrap_or_default();
    let step: i64 = r
        .try_get(0)
        .map_err(|e| corrupt(t, format!("undecodable step: {e}")))?;
    let at: i64 = r
        .try_get(3)
        .map_err(|e| corrupt(t, format!("undecodable at: {e}")))?;
    Ok(CheckpointMeta {
        step: to_u64(step, t, "step")?,
        node: text(1)?,
        status: RunStatus::parse(&status)
            .ok_or_else(|| corrupt(t, format!("unknown run status `{status}`")))?,
        at: to_u64(at, t, "at")?,
        snapshot_bytes: get_opt(4, "snapshot_bytes")?,
        kind: LogKind::parse(&kind)
            .ok_or_else(|| corrupt(t, format!("unknown log kind `{kind}`")))?,
        executed_node: text(6)?,
        node_status: text(7)?,
        duration_ms: get_opt(8, "duration_ms")?,
    })
}

fn encode_json(what: &str, v: &Value) -> Result<Vec<u8>> {
    serde_json::to_vec(v)
        .map_err(|e| StoreError::Invalid(format!("{what} does not serialize: {e}")))
}

impl StateStore for PgStore {
    fn create_run_encoded(
        &self,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        let wf = workflow_json.to_vec();
        let snap = encode_snapshot(self.options().snapshot_version, snapshot)?;
        let record = record.clone();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let snap_len = snap.len() as u64;
                let inserted = execute(
                    &tx,
                    t,
                    &format!(
                        "INSERT INTO runs ({RECORD_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
                         $8, $9, $10, $11, $10, $12, 0, 0) ON CONFLICT (run_id) DO NOTHING"
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
                        &to_i64(snap_len)?,
                    ],
                )
                .await?;
                if inserted == 0 {
                    return Err(StoreError::AlreadyExists {
                        run_id: record.run_id.clone(),
                    });
                }
                execute(
                    &tx,
                    t,
                    "INSERT INTO run_data (run_id, workflow) VALUES ($1, $2)",
                    &[&record.run_id, &wf],
                )
                .await?;
                insert_snapshot(
                    &tx,
                    t,
                    &record.run_id,
                    record.step,
                    inner.opts.snapshot_version,
                    &snap,
                )
                .await?;
                let update = RecordUpdate {
                    status: record.status,
                    current_node: record.current_node.clone(),
                    correlation_id: record.correlation_id.clone(),
                    exit_status: record.exit_status.clone(),
                };
                let row = NewLogRow {
                    snapshot_bytes: Some(snap_len),
                    ..NewLogRow::default()
                };
                insert_log(
                    &tx,
                    t,
                    &record.run_id,
                    record.step,
                    LogKind::Created,
                    &update,
                    record.updated_at,
                    &row,
                )
                .await
            })
        })
    }

    fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease> {
        let (run_id, owner) = (run_id.to_string(), owner.clone());
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let (record, _) = get_run(&tx, t, &run_id, true).await?;
                if record.status.is_terminal() {
                    return Err(StoreError::Finished {
                        run_id: run_id.clone(),
                        status: record.status,
                    });
                }
                let now = now_ms();
                let me = owner.to_string();
                let mut row = LeaseRow::new(&owner, now, inner.opts.ttl_ms());
                if let Some(held) = get_lease(&tx, t, &run_id).await? {
                    if held.blocks(&me, now) {
                        return Err(locked(&run_id, &held));
                    }
                    if held.owner == me {
                        row.acquired_at = held.acquired_at;
                    }
                }
                put_lease(&tx, t, &run_id, &row).await?;
                Ok(Lease {
                    run_id: run_id.clone(),
                    owner: owner.clone(),
                    acquired_at: row.acquired_at,
                    expires_at: row.expires_at,
                })
            })
        })
    }

    fn heartbeat(&self, lease: &Lease) -> Result<Renewed> {
        let lease = lease.clone();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let (record, _) = get_run(&tx, t, &lease.run_id, true).await?;
                let now = now_ms();
                check_holder(&tx, t, &lease, now).await?;
                let expires_at = now.saturating_add(inner.opts.ttl_ms());
                renew_lease(&tx, t, &lease.run_id, expires_at).await?;
                Ok(Renewed {
                    expires_at,
                    cancel_requested: record.cancel_requested,
                })
            })
        })
    }

    fn release(&self, lease: &Lease) -> Result<()> {
        let lease = lease.clone();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                execute(
                    &tx,
                    t,
                    "DELETE FROM leases WHERE run_id = $1 AND owner = $2",
                    &[&lease.run_id, &lease.owner.to_string()],
                )
                .await
                .map(|_| ())
            })
        })
    }

    fn checkpoint(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        snapshot: &Value,
    ) -> Result<Checkpointed> {
        let snap = encode_snapshot(self.options().snapshot_version, snapshot)?;
        let (lease, update) = (lease.clone(), update.clone());
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let now = now_ms();
                let (record, _, held_until) =
                    check_write(&tx, t, &lease, expected_step, now).await?;
                let run_id = lease.run_id.as_str();
                let step = expected_step.saturating_add(1);
                let len = snap.len() as u64;
                insert_snapshot(&tx, t, run_id, step, inner.opts.snapshot_version, &snap).await?;
                let row = NewLogRow {
                    snapshot_bytes: Some(len),
                    ..NewLogRow::default()
                };
                write_step(&tx, t, run_id, step, LogKind::Snapshot, &update, now, &row).await?;
                adopt_snapshot(&tx, t, run_id, step, len, None).await?;
                let mut lease_expires_at = held_until;
                if !update.status.is_terminal()
                    && let Some(renewed) = inner.opts.renewal(held_until, now)
                {
                    renew_lease(&tx, t, run_id, renewed).await?;
                    lease_expires_at = renewed;
                }
                Ok(Checkpointed {
                    step,
                    at: now,
                    lease_expires_at,
                    cancel_requested: record.cancel_requested,
                    snapshot_written: true,
                    snapshot_wanted: false,
                })
            })
        })
    }

    fn append(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        entry: &StepEntry,
    ) -> Result<Checkpointed> {
        let delta = serde_json::to_vec(&entry.delta)
            .map_err(|e| StoreError::Invalid(format!("the delta does not serialize: {e}")))?;
        let row = NewLogRow {
            executed_node: entry.node.clone(),
            node_status: entry.node_status.clone(),
            output: entry
                .output
                .as_ref()
                .map(|o| encode_json("the step output", o))
                .transpose()?,
            delta: Some(delta),
            state_version: Some(self.options().snapshot_version),
            started_at: entry.started_at,
            duration_ms: entry.duration_ms,
            snapshot_bytes: None,
        };
        let offered = match &entry.snapshot {
            StepSnapshot::State(state) => {
                Some(encode_snapshot(self.options().snapshot_version, state)?)
            }
            StepSnapshot::ByStore | StepSnapshot::OnRequest => None,
        };
        let by_store = entry.snapshot == StepSnapshot::ByStore;
        let (lease, update) = (lease.clone(), update.clone());
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let now = now_ms();
                let (record, log, held_until) =
                    check_write(&tx, t, &lease, expected_step, now).await?;
                let run_id = lease.run_id.as_str();
                let step = expected_step.saturating_add(1);
                let delta_len = row.delta.as_ref().map_or(0, |d| d.len() as u64);
                write_step(&tx, t, run_id, step, LogKind::Step, &update, now, &row).await?;
                let due = inner.opts.snapshot_policy.due(
                    log.log_rows.saturating_add(1),
                    log.log_bytes.saturating_add(delta_len),
                    log.snapshot_bytes,
                );
                let snapshot_written = if let Some(bytes) = &offered {
                    store_snapshot(&tx, t, run_id, step, bytes, &inner.opts).await?;
                    true
                } else if due && by_store {
                    compact(&tx, t, run_id, step, &inner.opts).await?;
                    true
                } else {
                    false
                };
                let mut lease_expires_at = held_until;
                if !update.status.is_terminal()
                    && let Some(renewed) = inner.opts.renewal(held_until, now)
                {
                    renew_lease(&tx, t, run_id, renewed).await?;
                    lease_expires_at = renewed;
                }
                Ok(Checkpointed {
                    step,
                    at: now,
                    lease_expires_at,
                    cancel_requested: record.cancel_requested,
                    snapshot_written,
                    snapshot_wanted: due && !snapshot_written,
                })
            })
        })
    }

    fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        expected_step: u64,
        update: &RecordUpdate,
    ) -> Result<RunRecord> {
        let (run_id, lease, update) = (run_id.to_string(), lease.cloned(), update.clone());
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let now = now_ms();
                let (record, _) = get_run(&tx, t, &run_id, true).await?;
                match &lease {
                    Some(l) if l.run_id == run_id => {
                        check_holder(&tx, t, l, now).await?;
                    }
                    Some(l) => {
                        return Err(StoreError::Invalid(format!(
                            "a lease on `{}` used for run `{run_id}`",
                            l.run_id
                        )));
                    }
                    None => {
                        if let Some(held) = get_lease(&tx, t, &run_id).await?
                            && held.blocks("", now)
                        {
                            return Err(locked(&run_id, &held));
                        }
                    }
                }
                if record.step != expected_step {
                    return Err(StoreError::StepConflict {
                        run_id: run_id.clone(),
                        expected: expected_step,
                        actual: record.step,
                    });
                }
                let step = expected_step.saturating_add(1);
                let row = NewLogRow::default();
                write_step(&tx, t, &run_id, step, LogKind::Status, &update, now, &row).await?;
                get_run(&tx, t, &run_id, false).await.map(|(r, _)| r)
            })
        })
    }

    fn request_cancel(&self, run_id: &str) -> Result<CancelRequest> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let now = now_ms();
                let (record, _) = get_run(&tx, t, &run_id, true).await?;
                if record.status.is_terminal() {
                    return Ok(CancelRequest::AlreadyFinished(record.status));
                }
                if let Some(held) = get_lease(&tx, t, &run_id).await?
                    && held.blocks("", now)
                {
                    execute(
                        &tx,
                        t,
                        "UPDATE runs SET cancel_requested = TRUE WHERE run_id = $1",
                        &[&run_id],
                    )
                    .await?;
                    return Ok(CancelRequest::Requested { owner: held.owner });
                }
                let update =
                    RecordUpdate::finished(RunStatus::Cancelled, record.current_node.clone(), None);
                let step = record.step.saturating_add(1);
                let row = NewLogRow::default();
                write_step(&tx, t, &run_id, step, LogKind::Status, &update, now, &row).await?;
                let (record, _) = get_run(&tx, t, &run_id, false).await?;
                Ok(CancelRequest::Cancelled(record))
            })
        })
    }

    fn load(&self, run_id: &str) -> Result<StoredRun> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, true, {
                let expected = inner.opts.snapshot_version;
                let (record, log) = get_run(&tx, t, &run_id, false).await?;
                let rows = query(
                    &tx,
                    t,
                    "SELECT workflow FROM run_data WHERE run_id = $1",
                    &[&run_id],
                )
                .await?;
                let wf: Vec<u8> = rows
                    .first()
                    .ok_or_else(|| corrupt(t, format!("run `{run_id}` has no data row")))?
                    .try_get(0)
                    .map_err(|e| corrupt(t, format!("undecodable workflow column: {e}")))?;
                let snapshot = materialize(&tx, t, &run_id, &log, expected).await?;
                let workflow: Value = serde_json::from_slice(&wf).map_err(|e| {
                    corrupt(t, format!("run `{run_id}`: undecodable workflow: {e}"))
                })?;
                Ok(StoredRun {
                    record,
                    workflow,
                    snapshot,
                    snapshot_version: expected,
                })
            })
        })
    }

    fn record(&self, run_id: &str) -> Result<RunRecord> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, true, {
                get_run(&tx, t, &run_id, false).await.map(|(r, _)| r)
            })
        })
    }

    fn list(&self) -> Result<Vec<RunRecord>> {
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, true, {
                let rows = query(
                    &tx,
                    t,
                    &format!(
                        "SELECT {RECORD_COLS} FROM runs ORDER BY started_at DESC, run_id DESC"
                    ),
                    &[],
                )
                .await?;
                rows.iter()
                    .map(|r| record_from_row(r, t).map(|(r, _)| r))
                    .collect::<Result<Vec<_>>>()
            })
        })
    }

    fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>> {
        let correlation_id = correlation_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, true, {
                let rows = query(
                    &tx,
                    t,
                    &format!(
                        "SELECT {RECORD_COLS} FROM runs WHERE correlation_id = $1 \
                         ORDER BY updated_at DESC LIMIT 1"
                    ),
                    &[&correlation_id],
                )
                .await?;
                rows.first()
                    .map(|r| record_from_row(r, t).map(|(r, _)| r))
                    .transpose()
            })
        })
    }

    fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, true, {
                get_run(&tx, t, &run_id, false).await?;
                let rows = query(
                    &tx,
                    t,
                    &format!("SELECT {META_COLS} FROM run_log WHERE run_id = $1 ORDER BY step"),
                    &[&run_id],
                )
                .await?;
                rows.iter()
                    .map(|r| meta_from_row(r, t))
                    .collect::<Result<Vec<_>>>()
            })
        })
    }

    fn read_log(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<LogEntry>> {
        let run_id = run_id.to_string();
        let after = to_i64(after)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, true, {
                get_run(&tx, t, &run_id, false).await?;
                let rows = query(
                    &tx,
                    t,
                    &format!(
                        "SELECT {META_COLS}, output, delta, started_at FROM run_log \
                         WHERE run_id = $1 AND step > $2 ORDER BY step LIMIT $3"
                    ),
                    &[&run_id, &after, &limit],
                )
                .await?;
                rows.iter()
                    .map(|r| {
                        let meta = meta_from_row(r, t)?;
                        let step = meta.step;
                        let bad = |what: &str, e: String| {
                            corrupt(t, format!("run `{run_id}`: the {what} of step {step}: {e}"))
                        };
                        let output: Option<Vec<u8>> =
                            r.try_get(9).map_err(|e| bad("output", e.to_string()))?;
                        let delta: Option<Vec<u8>> =
                            r.try_get(10).map_err(|e| bad("delta", e.to_string()))?;
                        let started: Option<i64> =
                            r.try_get(11).map_err(|e| bad("start", e.to_string()))?;
                        Ok(LogEntry {
                            output: output
                                .map(|o| serde_json::from_slice::<Value>(&o))
                                .transpose()
                                .map_err(|e| bad("output", e.to_string()))?,
                            delta: delta
                                .map(|d| serde_json::from_slice::<StateDelta>(&d))
                                .transpose()
                                .map_err(|e| bad("delta", e.to_string()))?,
                            started_at: started.map(|s| to_u64(s, t, "started_at")).transpose()?,
                            meta,
                        })
                    })
                    .collect::<Result<Vec<_>>>()
            })
        })
    }

    fn claim(&self, owner: &OwnerId, limit: usize) -> Result<Vec<Claimed>> {
        let owner = owner.clone();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let now = to_i64(now_ms())?;
                let expires = now.saturating_add(to_i64(inner.opts.ttl_ms())?);
                // Candidates are locked (`FOR UPDATE OF r`) so a concurrent `acquire` or
                // write of the same run waits; `SKIP LOCKED` makes concurrent claimers pass
                // over each other's candidates. `prior` tells a takeover from a queued run.
                let rows = query(
                    &tx,
                    t,
                    "WITH c AS ( \
                       SELECT r.run_id, l.owner AS prior FROM runs r \
                       LEFT JOIN leases l ON l.run_id = r.run_id \
                       WHERE r.status IN ('queued', 'running') \
                       AND (l.run_id IS NULL OR l.expires_at <= $4) \
                       ORDER BY r.started_at, r.run_id LIMIT $6 \
                       FOR UPDATE OF r SKIP LOCKED), \
                     ins AS ( \
                       INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
                       SELECT run_id, $1, $2, $3, $4, $5 FROM c \
                       ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, \
                       host = excluded.host, pid = excluded.pid, \
                       acquired_at = excluded.acquired_at, expires_at = excluded.expires_at \
                       WHERE leases.expires_at <= $4 \
                       RETURNING run_id, acquired_at, expires_at) \
                     SELECT ins.run_id, ins.acquired_at, ins.expires_at, c.prior \
                     FROM ins JOIN c ON c.run_id = ins.run_id",
                    &[
                        &owner.to_string(),
                        &owner.host,
                        &i64::from(owner.pid),
                        &now,
                        &expires,
                        &limit,
                    ],
                )
                .await?;
                let mut out = Vec::with_capacity(rows.len());
                let me = owner.to_string();
                for r in &rows {
                    let run_id: String = r.try_get(0).map_err(|e| pg_err(t, e))?;
                    let acquired_at: i64 = r.try_get(1).map_err(|e| pg_err(t, e))?;
                    let expires_at: i64 = r.try_get(2).map_err(|e| pg_err(t, e))?;
                    let prior: Option<String> = r.try_get(3).map_err(|e| pg_err(t, e))?;
                    // The claim in the run's log (the row is locked by the claim).
                    let (record, _) = get_run(&tx, t, &run_id, false).await?;
                    let step = record.step.saturating_add(1);
                    let (update, note) = ClaimNote::claim(record, me.clone(), prior.clone());
                    let row = NewLogRow {
                        output: Some(note),
                        ..NewLogRow::default()
                    };
                    write_step(
                        &tx,
                        t,
                        &run_id,
                        step,
                        LogKind::Claimed,
                        &update,
                        to_u64(now, t, "now")?,
                        &row,
                    )
                    .await?;
                    out.push(Claimed {
                        taken_over: prior.is_some(),
                        lease: Lease {
                            run_id,
                            owner: owner.clone(),
                            acquired_at: to_u64(acquired_at, t, "acquired_at")?,
                            expires_at: to_u64(expires_at, t, "expires_at")?,
                        },
                    });
                }
                out.sort_by(|a, b| a.lease.run_id.cmp(&b.lease.run_id));
                Ok(out)
            })
        })
    }

    fn heartbeat_owner(&self, owner: &OwnerId) -> Result<Vec<(String, Renewed)>> {
        let me = owner.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, tx, t, false, {
                let expires_at = now_ms().saturating_add(inner.opts.ttl_ms());
                let rows = query(
                    &tx,
                    t,
                    "UPDATE leases l SET expires_at = $2 FROM runs r \
                     WHERE l.owner = $1 AND r.run_id = l.run_id \
                     RETURNING l.run_id, r.cancel_requested",
                    &[&me, &to_i64(expires_at)?],
                )
                .await?;
                let mut out = Vec::with_capacity(rows.len());
                for r in &rows {
                    out.push((
                        r.try_get::<_, String>(0).map_err(|e| pg_err(t, e))?,
                        Renewed {
                            expires_at,
                            cancel_requested: r.try_get(1).map_err(|e| pg_err(t, e))?,
                        },
                    ));
                }
                Ok(out)
            })
        })
    }
}
