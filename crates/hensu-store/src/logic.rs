//! The store's rules, once, over any [`Backend`]: the checks of a write under a lease, the
//! lease rule and its renewal, when a snapshot is due and how it is adopted (compaction),
//! which runs a claim takes and what it logs, how the state is rebuilt from a snapshot and
//! the deltas after it. Each operation runs inside one transaction the caller opened (and
//! commits); the dialects only read and write rows.

use std::future::Future;
use std::path::Path;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde_json::Value;

use crate::backend::{Backend, LastStep, LogState, NewLogRow, RawLogRow, Records, corrupt, to_u64};
use crate::lineage;
pub(crate) use crate::lineage::{fork, load_at};
use crate::owner::LeaseRow;
use crate::{
    CancelRequest, CheckpointMeta, Checkpointed, ClaimNote, ClaimScope, Claimed, CompactionStage,
    Failpoint, Lease, LogEntry, LogKind, OwnerId, PauseRequest, RecordUpdate, Renewed, Result,
    RunRecord, RunStatus, StepEntry, StepSnapshot, StoreError, StoreOptions, StoredRun,
    encode_snapshot,
};

/// Runs an operation over a backend whose methods never suspend (SQLite's): one poll
/// finishes it. Nothing waits here; a backend that did suspend is a bug, reported as an error.
pub(crate) fn run_ready<T>(op: impl Future<Output = Result<T>>) -> Result<T> {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(op).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => Err(StoreError::Invalid(
            "a synchronous store backend suspended mid-transaction".into(),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Encoded inputs (built before the transaction: it only copies bytes)

fn encode_json(what: &str, v: &Value) -> Result<Vec<u8>> {
    serde_json::to_vec(v)
        .map_err(|e| StoreError::Invalid(format!("{what} does not serialize: {e}")))
}

/// A [`StepEntry`] with its payloads encoded.
pub(crate) struct EncodedStep {
    pub node: Option<String>,
    pub node_status: Option<String>,
    pub output: Option<Vec<u8>>,
    pub delta: Vec<u8>,
    pub started_at: Option<u64>,
    pub duration_ms: Option<u64>,
    /// The snapshot the caller sent ([`StepSnapshot::State`]), encoded.
    pub offered: Option<Vec<u8>>,
    /// [`StepSnapshot::ByStore`]: the store compacts when a snapshot is due.
    pub by_store: bool,
    /// The row's kind: [`LogKind::Step`], or [`LogKind::Journal`] for a call-journal entry.
    pub kind: LogKind,
}

impl EncodedStep {
    pub(crate) fn new(entry: &StepEntry, snapshot_version: u64) -> Result<EncodedStep> {
        Ok(EncodedStep {
            node: entry.node.clone(),
            node_status: entry.node_status.clone(),
            output: entry
                .output
                .as_ref()
                .map(|o| encode_json("the step output", o))
                .transpose()?,
            delta: serde_json::to_vec(&entry.delta)
                .map_err(|e| StoreError::Invalid(format!("the delta does not serialize: {e}")))?,
            started_at: entry.started_at,
            duration_ms: entry.duration_ms,
            offered: match &entry.snapshot {
                StepSnapshot::State(state) => Some(encode_snapshot(snapshot_version, state)?),
                StepSnapshot::ByStore | StepSnapshot::OnRequest => None,
            },
            by_store: entry.snapshot == StepSnapshot::ByStore,
            kind: LogKind::Step,
        })
    }

    /// The same entry written as a [`LogKind::Journal`] row.
    pub(crate) fn journal(mut self) -> EncodedStep {
        self.kind = LogKind::Journal;
        self
    }
}

// ---------------------------------------------------------------------------------------------
// The lease rule

pub(crate) fn locked(run_id: &str, row: &LeaseRow) -> StoreError {
    StoreError::RunLocked {
        run_id: run_id.to_string(),
        owner: row.owner.clone(),
        since: row.acquired_at,
        expires_at: row.expires_at,
    }
}

/// Checks that `lease` is the run's current lease; returns its expiry.
async fn check_holder<B: Backend>(b: &mut B, lease: &Lease, now: u64) -> Result<u64> {
    let me = lease.owner.to_string();
    match b.lease(&lease.run_id).await? {
        Some(row) if row.owner == me => Ok(row.expires_at),
        Some(row) if row.blocks(&me, now) => Err(locked(&lease.run_id, &row)),
        _ => Err(StoreError::LeaseLost {
            run_id: lease.run_id.clone(),
            owner: me,
        }),
    }
}

/// The checks every write under a lease makes, in order: the run exists and is not
/// terminal, `lease` is the holder, the run is at `expected_step`. Returns the record, its
/// log state and the lease's expiry.
async fn check_write<B: Backend>(
    b: &mut B,
    lease: &Lease,
    expected_step: u64,
    now: u64,
) -> Result<(RunRecord, LogState, u64)> {
    let run_id = lease.run_id.as_str();
    let (record, log) = b.run(run_id, true).await?;
    if record.status.is_terminal() {
        return Err(StoreError::Finished {
            run_id: run_id.to_string(),
            status: record.status,
        });
    }
    let expires_at = check_holder(b, lease, now).await?;
    check_step(&record, expected_step)?;
    Ok((record, log, expires_at))
}

fn check_step(record: &RunRecord, expected_step: u64) -> Result<()> {
    if record.step != expected_step {
        return Err(StoreError::StepConflict {
            run_id: record.run_id.clone(),
            expected: expected_step,
            actual: record.step,
        });
    }
    Ok(())
}

/// Renews the lease after a write under it (unless the write ended the run, which released
/// it): one TTL ahead once less than half is left ([`StoreOptions::renewal`]). Returns the
/// lease's expiry after the write.
async fn renew_after_write<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    run_id: &str,
    update: &RecordUpdate,
    held_until: u64,
    now: u64,
) -> Result<u64> {
    if !update.status.is_terminal()
        && let Some(renewed) = opts.renewal(held_until, now)
    {
        b.renew_lease(run_id, renewed).await?;
        return Ok(renewed);
    }
    Ok(held_until)
}

// ---------------------------------------------------------------------------------------------
// Writing a step

/// Updates the record to `update` at `step` and appends its log row. A terminal status
/// releases the lease. `before`: the record as read in this transaction, when the caller has
/// it (lets the backend skip unchanged indexed columns).
#[allow(clippy::too_many_arguments)]
async fn write_step<B: Backend>(
    b: &mut B,
    run_id: &str,
    step: u64,
    kind: LogKind,
    update: &RecordUpdate,
    now: u64,
    row: &NewLogRow<'_>,
    before: Option<&RunRecord>,
) -> Result<()> {
    let unchanged = before.is_some_and(|prev| {
        prev.status == update.status
            && prev.correlation_id == update.correlation_id
            && prev.exit_status == update.exit_status
    });
    let delta_bytes = row.delta.map(|d| d.len() as u64);
    b.update_record(run_id, step, update, now, delta_bytes, unchanged)
        .await?;
    b.insert_log(run_id, step, kind, update, now, row).await?;
    if update.status.is_terminal() {
        b.delete_lease(run_id, None).await?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Snapshots and compaction

/// The run's current state: [`lineage::state_at`] after its last step.
async fn materialize<B: Backend>(
    b: &mut B,
    record: &RunRecord,
    log: &LogState,
    expected: u64,
) -> Result<Value> {
    lineage::state_at(b, &record.run_id, record, log, u64::MAX, expected).await
}

/// Makes the snapshot at `step` (already inserted, `bytes` long) the run's latest; the
/// record's counters restart there. Older snapshots are kept: a step's state is then the
/// latest snapshot at or before it plus at most one interval of deltas, which is what reading
/// a run at a past step (a fork's prefix, `load_at`) costs (docs/cli.md, *Time travel*).
async fn adopt_snapshot<B: Backend>(
    b: &mut B,
    run_id: &str,
    step: u64,
    bytes: u64,
    failpoint: Option<Failpoint>,
) -> Result<()> {
    Failpoint::hit(failpoint, CompactionStage::AfterSnapshotInsert)?;
    Failpoint::hit(failpoint, CompactionStage::AfterOldSnapshotDelete)?;
    b.snapshot_adopted(run_id, step, bytes).await
}

/// Writes `bytes` (an encoded snapshot) as the run's only snapshot, at `step`. Returns its
/// size.
async fn store_snapshot<B: Backend>(
    b: &mut B,
    run_id: &str,
    step: u64,
    bytes: &[u8],
    opts: &StoreOptions,
) -> Result<u64> {
    b.insert_snapshot(run_id, step, opts.snapshot_version, bytes)
        .await?;
    let len = bytes.len() as u64;
    adopt_snapshot(b, run_id, step, len, opts.failpoint).await?;
    Ok(len)
}

/// Compaction: rewrites the run's snapshot at `step` from the latest one plus the log (the
/// caller's transaction makes it all-or-nothing). Returns the new snapshot's size.
async fn compact<B: Backend>(
    b: &mut B,
    run_id: &str,
    step: u64,
    opts: &StoreOptions,
) -> Result<u64> {
    let (record, log) = b.run(run_id, false).await?;
    let state = materialize(b, &record, &log, opts.snapshot_version).await?;
    let bytes = encode_snapshot(opts.snapshot_version, &state)?;
    store_snapshot(b, run_id, step, &bytes, opts).await
}

// ---------------------------------------------------------------------------------------------
// The operations of [`crate::StateStore`]

/// Creates a run: record, workflow, first snapshot (`snapshot`, encoded) and its log row.
pub(crate) async fn create_run<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    record: &RunRecord,
    workflow: &[u8],
    snapshot: &[u8],
) -> Result<()> {
    let snap_len = snapshot.len() as u64;
    let log = LogState {
        snapshot_step: record.step,
        snapshot_bytes: snap_len,
        log_rows: 0,
        log_bytes: 0,
    };
    if !b.insert_run(record, workflow, &log).await? {
        return Err(StoreError::AlreadyExists {
            run_id: record.run_id.clone(),
        });
    }
    b.insert_snapshot(&record.run_id, record.step, opts.snapshot_version, snapshot)
        .await?;
    let update = RecordUpdate {
        status: record.status,
        current_node: record.current_node.clone(),
        correlation_id: record.correlation_id.clone(),
        exit_status: record.exit_status.clone(),
        wait: None,
    };
    let row = NewLogRow {
        snapshot_bytes: Some(snap_len),
        ..NewLogRow::default()
    };
    b.insert_log(
        &record.run_id,
        record.step,
        LogKind::Created,
        &update,
        record.updated_at,
        &row,
    )
    .await
}

/// Creates a run of `tenant`: its tenant tag and the run (see [`create_run`]) in the
/// caller's one transaction, so a run is never visible without its owner.
pub(crate) async fn create_tenant_run<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    tenant: &str,
    record: &RunRecord,
    workflow: &[u8],
    snapshot: &[u8],
    now: u64,
) -> Result<()> {
    // The tag's time is the run's start (`now` when unset), so the paged list's order key
    // (the tag's `created_at`) is `started_at` (docs/server.md, *Paging*).
    let listed_at = if record.started_at == 0 {
        now
    } else {
        record.started_at
    };
    tag_run(b, &record.run_id, tenant, &record.workflow_id, listed_at).await?;
    create_run(b, opts, record, workflow, snapshot).await
}

/// Tags a run with its tenant; a run id is owned once.
pub(crate) async fn tag_run<B: Backend>(
    b: &mut B,
    run_id: &str,
    tenant: &str,
    workflow_id: &str,
    now: u64,
) -> Result<()> {
    if !b.tag_run(run_id, tenant, workflow_id, now).await? {
        return Err(StoreError::AlreadyExists {
            run_id: run_id.to_string(),
        });
    }
    Ok(())
}

/// Takes the run's lease for `owner` under the lease rule; an owner re-acquiring its own
/// lease renews it (keeping its acquisition time).
pub(crate) async fn acquire<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    run_id: &str,
    owner: &OwnerId,
    now: u64,
) -> Result<Lease> {
    let (record, _) = b.run(run_id, true).await?;
    if record.status.is_terminal() {
        return Err(StoreError::Finished {
            run_id: run_id.to_string(),
            status: record.status,
        });
    }
    let me = owner.to_string();
    let mut row = LeaseRow::new(owner, now, opts.ttl_ms());
    if let Some(held) = b.lease(run_id).await? {
        if held.blocks(&me, now) {
            return Err(locked(run_id, &held));
        }
        if held.owner == me {
            row.acquired_at = held.acquired_at;
        }
    }
    b.put_lease(run_id, &row).await?;
    Ok(Lease {
        run_id: run_id.to_string(),
        owner: owner.clone(),
        acquired_at: row.acquired_at,
        expires_at: row.expires_at,
    })
}

/// Pushes the lease one TTL ahead; reports a pending cancellation request.
pub(crate) async fn heartbeat<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    lease: &Lease,
    now: u64,
) -> Result<Renewed> {
    let (record, _) = b.run(&lease.run_id, true).await?;
    check_holder(b, lease, now).await?;
    let expires_at = now.saturating_add(opts.ttl_ms());
    b.renew_lease(&lease.run_id, expires_at).await?;
    Ok(Renewed {
        expires_at,
        cancel_requested: record.cancel_requested,
    })
}

pub(crate) async fn release<B: Backend>(b: &mut B, lease: &Lease) -> Result<()> {
    b.delete_lease(&lease.run_id, Some(&lease.owner.to_string()))
        .await
}

/// A full snapshot from the caller (`snapshot`, encoded) as one step.
pub(crate) async fn checkpoint<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    lease: &Lease,
    expected_step: u64,
    update: &RecordUpdate,
    snapshot: &[u8],
    now: u64,
) -> Result<Checkpointed> {
    let (record, _, held_until) = check_write(b, lease, expected_step, now).await?;
    let run_id = lease.run_id.as_str();
    let step = expected_step.saturating_add(1);
    let len = snapshot.len() as u64;
    b.insert_snapshot(run_id, step, opts.snapshot_version, snapshot)
        .await?;
    let row = NewLogRow {
        snapshot_bytes: Some(len),
        ..NewLogRow::default()
    };
    write_step(b, run_id, step, LogKind::Snapshot, update, now, &row, None).await?;
    adopt_snapshot(b, run_id, step, len, None).await?;
    let lease_expires_at = renew_after_write(b, opts, run_id, update, held_until, now).await?;
    Ok(Checkpointed {
        step,
        at: now,
        lease_expires_at,
        cancel_requested: record.cancel_requested,
        pause_requested: record.pause_requested,
        snapshot_written: true,
        snapshot_wanted: false,
    })
}

/// One step of the run log, checked like a checkpoint; writes (or asks for) a snapshot when
/// the snapshot policy makes one due.
pub(crate) async fn append<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    lease: &Lease,
    expected_step: u64,
    update: &RecordUpdate,
    entry: &EncodedStep,
    now: u64,
) -> Result<Checkpointed> {
    let run_id = lease.run_id.as_str();
    let step = expected_step.saturating_add(1);
    let delta_len = entry.delta.len() as u64;
    let row = NewLogRow {
        executed_node: entry.node.as_deref(),
        node_status: entry.node_status.as_deref(),
        output: entry.output.as_deref(),
        delta: Some(&entry.delta),
        state_version: Some(opts.snapshot_version),
        started_at: entry.started_at,
        duration_ms: entry.duration_ms,
        snapshot_bytes: None,
    };
    // The backend's fast path when it has one (no reads first); its failures and status
    // changes take the checked path.
    let fast = if update.status.is_terminal() {
        None
    } else {
        b.step_in_place(lease, expected_step, update, now, delta_len)
            .await?
    };
    let (control, log, held_until) = match fast {
        Some(done) => {
            b.insert_log(run_id, step, entry.kind, update, now, &row)
                .await?;
            // Neither cancelled nor pausing: the in-place step's condition says so.
            ((false, false), done.log, done.lease_expires_at)
        }
        None => {
            let (record, log, held_until) = check_write(b, lease, expected_step, now).await?;
            write_step(
                b,
                run_id,
                step,
                entry.kind,
                update,
                now,
                &row,
                Some(&record),
            )
            .await?;
            (
                (record.cancel_requested, record.pause_requested),
                log,
                held_until,
            )
        }
    };
    let (cancel_requested, pause_requested) = control;
    let due = opts.snapshot_policy.due(
        log.log_rows.saturating_add(1),
        log.log_bytes.saturating_add(delta_len),
        log.snapshot_bytes,
    );
    let snapshot = match &entry.offered {
        Some(bytes) => Some(store_snapshot(b, run_id, step, bytes, opts).await?),
        None if due && entry.by_store => Some(compact(b, run_id, step, opts).await?),
        None => None,
    };
    let snapshot_written = snapshot.is_some();
    let after = match snapshot {
        Some(bytes) => LogState {
            snapshot_step: step,
            snapshot_bytes: bytes,
            log_rows: 0,
            log_bytes: 0,
        },
        None => LogState {
            log_rows: log.log_rows.saturating_add(1),
            log_bytes: log.log_bytes.saturating_add(delta_len),
            ..log
        },
    };
    let lease_expires_at = renew_after_write(b, opts, run_id, update, held_until, now).await?;
    if !update.status.is_terminal() && !cancel_requested && !pause_requested {
        b.stepped(LastStep {
            run_id: run_id.to_string(),
            step,
            log: after,
            lease_expires_at,
        });
    }
    Ok(Checkpointed {
        step,
        at: now,
        lease_expires_at,
        cancel_requested,
        pause_requested,
        snapshot_written,
        snapshot_wanted: due && !snapshot_written,
    })
}

/// Changes the record without a new snapshot. With `lease`, it must be the current one;
/// without, no other live owner may hold the run.
pub(crate) async fn set_status<B: Backend>(
    b: &mut B,
    run_id: &str,
    lease: Option<&Lease>,
    expected_step: u64,
    update: &RecordUpdate,
    now: u64,
) -> Result<RunRecord> {
    let (record, _) = b.run(run_id, true).await?;
    match lease {
        Some(l) if l.run_id == run_id => {
            check_holder(b, l, now).await?;
        }
        Some(l) => {
            return Err(StoreError::Invalid(format!(
                "a lease on `{}` used for run `{run_id}`",
                l.run_id
            )));
        }
        None => {
            if let Some(held) = b.lease(run_id).await?
                && held.blocks("", now)
            {
                return Err(locked(run_id, &held));
            }
        }
    }
    check_step(&record, expected_step)?;
    let step = expected_step.saturating_add(1);
    let row = NewLogRow::default();
    write_step(b, run_id, step, LogKind::Status, update, now, &row, None).await?;
    b.run(run_id, false).await.map(|(r, _)| r)
}

/// Flags a running run for whoever executes it to pause at its next boundary.
pub(crate) async fn request_pause<B: Backend>(b: &mut B, run_id: &str) -> Result<PauseRequest> {
    let (record, _) = b.run(run_id, true).await?;
    Ok(match record.status {
        RunStatus::Running => {
            b.flag_pause(run_id).await?;
            PauseRequest::Requested
        }
        RunStatus::Paused => PauseRequest::AlreadyPaused,
        RunStatus::Queued => PauseRequest::NotStarted,
        finished => PauseRequest::AlreadyFinished(finished),
    })
}

/// Cancels a run nobody holds; flags a held one for its owner.
pub(crate) async fn request_cancel<B: Backend>(
    b: &mut B,
    run_id: &str,
    now: u64,
) -> Result<CancelRequest> {
    let (record, _) = b.run(run_id, true).await?;
    if record.status.is_terminal() {
        return Ok(CancelRequest::AlreadyFinished(record.status));
    }
    if let Some(held) = b.lease(run_id).await?
        && held.blocks("", now)
    {
        b.flag_cancel(run_id).await?;
        return Ok(CancelRequest::Requested { owner: held.owner });
    }
    let update = RecordUpdate::finished(RunStatus::Cancelled, record.current_node.clone(), None);
    let step = record.step.saturating_add(1);
    let row = NewLogRow::default();
    write_step(b, run_id, step, LogKind::Status, &update, now, &row, None).await?;
    let (record, _) = b.run(run_id, false).await?;
    Ok(CancelRequest::Cancelled(record))
}

/// The record, workflow and current state.
pub(crate) async fn load<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    run_id: &str,
) -> Result<StoredRun> {
    let expected = opts.snapshot_version;
    let (record, log) = b.run(run_id, false).await?;
    let wf = b
        .workflow(run_id)
        .await?
        .ok_or_else(|| corrupt(b.location(), format!("run `{run_id}` has no data row")))?;
    let snapshot = materialize(b, &record, &log, expected).await?;
    let workflow: Value = serde_json::from_slice(&wf).map_err(|e| {
        corrupt(
            b.location(),
            format!("run `{run_id}`: undecodable workflow: {e}"),
        )
    })?;
    Ok(StoredRun {
        record,
        workflow,
        snapshot,
        snapshot_version: expected,
    })
}

pub(crate) async fn record<B: Backend>(b: &mut B, run_id: &str) -> Result<RunRecord> {
    b.run(run_id, false).await.map(|(r, _)| r)
}

pub(crate) async fn list<B: Backend>(b: &mut B) -> Result<Vec<RunRecord>> {
    b.records(Records::All).await
}

pub(crate) async fn find_by_correlation<B: Backend>(
    b: &mut B,
    correlation_id: &str,
) -> Result<Option<RunRecord>> {
    let mut found = b.records(Records::ByCorrelation(correlation_id)).await?;
    Ok(found.pop())
}

/// The run's history: through a fork's parents' prefixes, then its own rows.
pub(crate) async fn history<B: Backend>(b: &mut B, run_id: &str) -> Result<Vec<CheckpointMeta>> {
    let (record, _) = b.run(run_id, false).await?;
    let mut out = Vec::new();
    for seg in lineage::segments(b, run_id, &record, u64::MAX).await? {
        let from = seg.after.map_or(0, |a| a.saturating_add(1));
        out.extend(b.log_meta(&seg.run_id, from, seg.until).await?);
    }
    Ok(out)
}

pub(crate) async fn read_log<B: Backend>(
    b: &mut B,
    run_id: &str,
    after: u64,
    limit: usize,
) -> Result<Vec<LogEntry>> {
    let (record, _) = b.run(run_id, false).await?;
    let mut out = Vec::new();
    for seg in lineage::segments(b, run_id, &record, u64::MAX).await? {
        if out.len() >= limit || seg.until <= after {
            continue;
        }
        let from = seg.after.map_or(after, |a| a.max(after));
        let rows = b
            .log_rows(&seg.run_id, from, seg.until, limit - out.len())
            .await?;
        let path = b.location();
        for row in rows {
            out.push(decode_log_row(path, &seg.run_id, row)?);
        }
    }
    Ok(out)
}

fn decode_log_row(path: &Path, run_id: &str, row: RawLogRow) -> Result<LogEntry> {
    let step = row.meta.step;
    let bad = |what: &str, e: serde_json::Error| {
        corrupt(
            path,
            format!("run `{run_id}`: the {what} of step {step}: {e}"),
        )
    };
    Ok(LogEntry {
        output: row
            .output
            .map(|o| serde_json::from_slice::<Value>(&o))
            .transpose()
            .map_err(|e| bad("output", e))?,
        delta: row
            .delta
            .map(|d| serde_json::from_slice::<crate::StateDelta>(&d))
            .transpose()
            .map_err(|e| bad("delta", e))?,
        started_at: row
            .started_at
            .map(|s| to_u64(s, path, "started_at"))
            .transpose()?,
        meta: row.meta,
    })
}

/// Claims up to `limit` runs for `owner` (the backend's claim statement) and logs each claim
/// ([`LogKind::Claimed`]: the run is running, its step moves on by one).
pub(crate) async fn claim<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    owner: &OwnerId,
    scope: ClaimScope,
    limit: usize,
    now: u64,
) -> Result<Vec<Claimed>> {
    let expires = now.saturating_add(opts.ttl_ms());
    let leases = b.claim_leases(owner, scope, now, expires, limit).await?;
    let me = owner.to_string();
    let mut out = Vec::with_capacity(leases.len());
    for taken in leases {
        let (record, _) = b.run(&taken.run_id, false).await?;
        let step = record.step.saturating_add(1);
        let (update, note) = ClaimNote::claim(record, me.clone(), taken.prior.clone());
        let row = NewLogRow {
            output: Some(&note),
            ..NewLogRow::default()
        };
        write_step(
            b,
            &taken.run_id,
            step,
            LogKind::Claimed,
            &update,
            now,
            &row,
            None,
        )
        .await?;
        let path = b.location();
        out.push(Claimed {
            taken_over: taken.prior.is_some(),
            lease: Lease {
                owner: owner.clone(),
                acquired_at: to_u64(taken.acquired_at, path, "acquired_at")?,
                expires_at: to_u64(taken.expires_at, path, "expires_at")?,
                run_id: taken.run_id,
            },
        });
    }
    Ok(out)
}

/// Renews every lease `owner` holds.
pub(crate) async fn heartbeat_owner<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    owner: &OwnerId,
    now: u64,
) -> Result<Vec<(String, Renewed)>> {
    let expires_at = now.saturating_add(opts.ttl_ms());
    let renewed = b.renew_owner(&owner.to_string(), expires_at).await?;
    Ok(renewed
        .into_iter()
        .map(|(run_id, cancel_requested)| {
            (
                run_id,
                Renewed {
                    expires_at,
                    cancel_requested,
                },
            )
        })
        .collect())
}
