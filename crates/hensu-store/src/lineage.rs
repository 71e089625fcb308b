//! Forked runs and how any run's state and log are read: a fork references its parent's log
//! prefix (`parent.run_id` up to `parent.step`) instead of copying it, so forking costs the
//! same whatever the parent's length, and every reader walks the chain of prefixes.
//!
//! - State: the latest snapshot of the run at or before the step asked for, else (a fork
//!   that has no snapshot of its own there) the parent's state at the fork point, then the
//!   deltas of each run of the chain in its own range.
//! - Log: the parent's rows up to the fork point (recursively), then the run's own rows. A
//!   forked run's own steps continue the numbering: its first row ([`LogKind::Forked`]) is
//!   `parent.step + 1`.
//! - Compaction never deletes a snapshot (`logic::adopt_snapshot`), so a parent's compaction
//!   leaves its children's reads as they were; a child's own compaction gives it a snapshot
//!   of its own, after which its reads of the current state stop at it.
//!
//! Nothing deletes runs yet (there is no retention); a deletion of a parent will have to
//! materialize its children first (ARCHITECTURE.md, *Run, checkpoint and resume*).

use serde_json::Value;

use crate::backend::{Backend, LogState, NewLogRow, corrupt, to_u64};
use crate::{
    CompactionStage, Failpoint, LogKind, RecordUpdate, Result, RunParent, RunRecord, StateDelta,
    StoreError, StoreOptions, StoredRun, decode_snapshot,
};

/// How deep a chain of forks may go (each fork of a fork after its own fork point adds one).
pub const MAX_FORK_DEPTH: usize = 256;

/// One run's part of a chain: its own log rows after `after` (exclusive; `None` for the
/// chain's root, which starts at its step 0) up to `until` (inclusive).
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    pub run_id: String,
    pub after: Option<u64>,
    pub until: u64,
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

fn too_deep(run_id: &str) -> StoreError {
    StoreError::Invalid(format!(
        "run `{run_id}` is more than {MAX_FORK_DEPTH} forks deep"
    ))
}

/// The chain of log segments a reader of `run_id` (up to step `until`) goes through, root
/// first. An ordinary run is one segment.
pub(crate) async fn segments<B: Backend>(
    b: &mut B,
    run_id: &str,
    record: &RunRecord,
    until: u64,
) -> Result<Vec<Segment>> {
    let mut out = Vec::new();
    let mut parent = record.parent.clone();
    let mut cur = run_id.to_string();
    let mut upto = until;
    loop {
        if out.len() > MAX_FORK_DEPTH {
            return Err(too_deep(run_id));
        }
        match parent {
            Some(p) if upto > p.step => {
                out.push(Segment {
                    run_id: cur,
                    after: Some(p.step),
                    until: upto,
                });
                upto = p.step;
                cur = p.run_id;
            }
            // Asked for a step inside the prefix: the run's own rows do not matter.
            Some(p) => cur = p.run_id,
            None => {
                out.push(Segment {
                    run_id: cur,
                    after: None,
                    until: upto,
                });
                out.reverse();
                return Ok(out);
            }
        }
        parent = b.run(&cur, false).await?.0.parent;
    }
}

/// The state of `run_id` after step `until` (its current state for `u64::MAX`): the latest
/// snapshot at or before it on the chain of forks, then every delta after it, in step order.
/// Checks the snapshot format versions.
pub(crate) async fn state_at<B: Backend>(
    b: &mut B,
    run_id: &str,
    record: &RunRecord,
    log: &LogState,
    until: u64,
    expected: u64,
) -> Result<Value> {
    let path = b.location().to_path_buf();
    // (run, deltas after, up to) to replay on top of the base, leaf first.
    let mut replay: Vec<(String, u64, u64)> = Vec::new();
    let (mut cur, mut parent, mut upto) = (run_id.to_string(), record.parent.clone(), until);
    let mut latest = Some(log.snapshot_step);
    let (_, bytes, version) = loop {
        if replay.len() > MAX_FORK_DEPTH {
            return Err(too_deep(run_id));
        }
        // The run's current snapshot when it is in range (the common case: one key probe),
        // else the latest one before `upto`.
        let found = match latest {
            Some(s) if s <= upto => b.snapshot(&cur, s).await?.map(|(v, n)| (s, v, n)),
            _ => None,
        };
        let found = match found {
            Some(f) => Some(f),
            None => b.snapshot_until(&cur, upto).await?,
        };
        let own = found.filter(|(s, _, _)| parent.as_ref().is_none_or(|p| *s > p.step));
        if let Some(f) = own {
            replay.push((cur.clone(), f.0, upto));
            break f;
        }
        let Some(p) = parent else {
            return Err(corrupt(
                &path,
                format!("run `{cur}` has no snapshot at or before step {upto}"),
            ));
        };
        if upto > p.step {
            replay.push((cur.clone(), p.step, upto));
            upto = p.step;
        }
        cur = p.run_id;
        let (rec, log) = b.run(&cur, false).await?;
        parent = rec.parent;
        latest = Some(log.snapshot_step);
    };
    let version = to_u64(version, &path, "snapshot_version")?;
    check_version(&cur, version, expected)?;
    let (inner, mut state) =
        decode_snapshot(&bytes).map_err(|d| corrupt(&path, format!("run `{cur}`: {d}")))?;
    if inner != version {
        return Err(corrupt(
            &path,
            format!(
                "run `{cur}`: the snapshot envelope says version {inner}, its row says \
                 {version}"
            ),
        ));
    }
    for (run, after, upto) in replay.iter().rev() {
        let mut apply = |step: i64, delta: &[u8], version: Option<i64>| -> Result<()> {
            let version = to_u64(version.unwrap_or(-1), &path, "state_version")?;
            check_version(run, version, expected)?;
            let delta: StateDelta = serde_json::from_slice(delta).map_err(|e| {
                corrupt(
                    &path,
                    format!("run `{run}`: the delta of step {step} is undecodable: {e}"),
                )
            })?;
            delta.apply(&mut state).map_err(|e| {
                corrupt(
                    &path,
                    format!("run `{run}`: the delta of step {step} does not apply: {e}"),
                )
            })
        };
        b.for_each_delta(run, *after, *upto, &mut apply).await?;
    }
    Ok(state)
}

/// The run as it was after step `step`: its record (as now), workflow and the state then.
pub(crate) async fn load_at<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    run_id: &str,
    step: u64,
) -> Result<StoredRun> {
    let expected = opts.snapshot_version;
    let (record, log) = b.run(run_id, false).await?;
    if step > record.step {
        return Err(StoreError::Invalid(format!(
            "run `{run_id}` has no step {step} (its last step is {})",
            record.step
        )));
    }
    let wf = b
        .workflow(run_id)
        .await?
        .ok_or_else(|| corrupt(b.location(), format!("run `{run_id}` has no data row")))?;
    let snapshot = state_at(b, run_id, &record, &log, step, expected).await?;
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

/// A fork to write: the new run's record (its id, workflow, status and current node; the
/// store sets its step and parent), its workflow (`None`: the parent's), the edits of the
/// parent's state at the fork point, and the server's tenant tag.
#[derive(Clone, Debug)]
pub struct ForkSpec {
    pub parent: RunParent,
    pub record: RunRecord,
    pub workflow: Option<Vec<u8>>,
    pub edits: StateDelta,
    pub tenant: Option<String>,
}

/// Writes a fork in the caller's one transaction: the record (parent and fork point, the
/// step after it), the workflow, the tenant tag, and one [`LogKind::Forked`] row whose delta
/// is the edits. Reads only the parent's record (and its ancestors' while the fork point
/// lies in their prefix) and, without a new workflow, the parent's: O(1) in the parent's
/// length. Returns the new record.
pub(crate) async fn fork<B: Backend>(
    b: &mut B,
    opts: &StoreOptions,
    spec: &ForkSpec,
    now: u64,
) -> Result<RunRecord> {
    let snapshot_version = opts.snapshot_version;
    let step = spec.parent.step;
    let (mut parent, _) = b.run(&spec.parent.run_id, false).await?;
    if step > parent.step {
        return Err(StoreError::Invalid(format!(
            "run `{}` has no step {step} (its last step is {})",
            parent.run_id, parent.step
        )));
    }
    // A fork point inside the parent's own prefix belongs to the parent's parent: keep
    // chains as short as the history allows.
    let mut depth = 0;
    while let Some(p) = parent.parent.clone().filter(|p| step <= p.step) {
        depth += 1;
        if depth > MAX_FORK_DEPTH {
            return Err(too_deep(&spec.parent.run_id));
        }
        parent = b.run(&p.run_id, false).await?.0;
    }
    if segments(b, &parent.run_id, &parent, step).await?.len() >= MAX_FORK_DEPTH {
        return Err(too_deep(&parent.run_id));
    }
    let workflow = match &spec.workflow {
        Some(w) => w.clone(),
        None => b.workflow(&parent.run_id).await?.ok_or_else(|| {
            corrupt(
                b.location(),
                format!("run `{}` has no data row", parent.run_id),
            )
        })?,
    };
    let origin = RunParent {
        run_id: parent.run_id.clone(),
        step,
    };
    let delta = serde_json::to_vec(&spec.edits)
        .map_err(|e| StoreError::Invalid(format!("the edits do not serialize: {e}")))?;
    let note = serde_json::to_vec(&origin)
        .map_err(|e| StoreError::Invalid(format!("the fork note does not serialize: {e}")))?;
    let mut record = spec.record.clone();
    record.step = step.saturating_add(1);
    record.parent = Some(origin);
    record.started_at = now;
    record.updated_at = now;
    record.cancel_requested = false;
    // No snapshot of its own: its state is the parent's at `step` plus its deltas.
    let log = LogState {
        snapshot_step: step,
        snapshot_bytes: 0,
        log_rows: 1,
        log_bytes: delta.len() as u64,
    };
    if let Some(tenant) = &spec.tenant
        && !b
            .tag_run(&record.run_id, tenant, &record.workflow_id, now)
            .await?
    {
        return Err(StoreError::AlreadyExists {
            run_id: record.run_id.clone(),
        });
    }
    if !b.insert_run(&record, &workflow, &log).await? {
        return Err(StoreError::AlreadyExists {
            run_id: record.run_id.clone(),
        });
    }
    Failpoint::hit(opts.failpoint, CompactionStage::ForkAfterRunInsert)?;
    let update = RecordUpdate {
        status: record.status,
        current_node: record.current_node.clone(),
        correlation_id: record.correlation_id.clone(),
        exit_status: record.exit_status.clone(),
        wait: None,
    };
    let row = NewLogRow {
        output: Some(&note),
        delta: Some(&delta),
        state_version: Some(snapshot_version),
        ..NewLogRow::default()
    };
    b.insert_log(
        &record.run_id,
        record.step,
        LogKind::Forked,
        &update,
        now,
        &row,
    )
    .await?;
    Ok(record)
}
