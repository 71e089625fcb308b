//! An in-memory store with the SQLite store's semantics (for tests).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::owner::LeaseRow;
use crate::time::now_ms;
use crate::{
    CancelRequest, CheckpointMeta, Checkpointed, Lease, OwnerId, RecordUpdate, Renewed, Result,
    RunRecord, RunStatus, StateStore, StoreError, StoreOptions, StoredRun, decode_snapshot,
    encode_snapshot,
};

const PATH: &str = "<memory>";

struct MemRun {
    record: RunRecord,
    workflow: Value,
    /// The encoded snapshot envelope (so a load returns an independent, version-checked
    /// value, as from SQLite).
    snapshot: Vec<u8>,
    history: Vec<CheckpointMeta>,
    lease: Option<LeaseRow>,
}

#[derive(Default)]
struct Mem {
    runs: HashMap<String, MemRun>,
}

/// The in-memory store. Cloning gives another handle on the same data (like a second
/// connection); [`MemoryStore::with_options`] gives one with other options.
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Mem>>,
    opts: StoreOptions,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

fn corrupt(detail: String) -> StoreError {
    StoreError::Corrupt {
        path: Path::new(PATH).to_path_buf(),
        detail,
    }
}

fn not_found(run_id: &str) -> StoreError {
    StoreError::NotFound {
        run_id: run_id.to_string(),
    }
}

fn locked(run_id: &str, row: &LeaseRow) -> StoreError {
    StoreError::RunLocked {
        run_id: run_id.to_string(),
        owner: row.owner.clone(),
        since: row.acquired_at,
        expires_at: row.expires_at,
    }
}

fn check_holder(run: &MemRun, lease: &Lease, now: u64) -> Result<()> {
    let me = lease.owner.to_string();
    match &run.lease {
        Some(row) if row.owner == me => Ok(()),
        Some(row) if row.blocks(&me, now) => Err(locked(&lease.run_id, row)),
        _ => Err(StoreError::LeaseLost {
            run_id: lease.run_id.clone(),
            owner: me,
        }),
    }
}

fn apply_update(
    run: &mut MemRun,
    step: u64,
    update: &RecordUpdate,
    now: u64,
    snapshot_bytes: Option<u64>,
) {
    let r = &mut run.record;
    r.status = update.status;
    r.current_node.clone_from(&update.current_node);
    r.correlation_id.clone_from(&update.correlation_id);
    r.exit_status.clone_from(&update.exit_status);
    r.step = step;
    r.updated_at = now;
    run.history.retain(|h| h.step != step);
    run.history.push(CheckpointMeta {
        step,
        node: update.current_node.clone(),
        status: update.status,
        at: now,
        snapshot_bytes,
    });
    if update.status.is_terminal() {
        run.lease = None;
    }
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// A handle on the same data with other options.
    pub fn with_options(&self, opts: StoreOptions) -> MemoryStore {
        MemoryStore {
            inner: Arc::clone(&self.inner),
            opts,
        }
    }

    pub fn options(&self) -> &StoreOptions {
        &self.opts
    }

    fn lock(&self) -> MutexGuard<'_, Mem> {
        // Every mutation below validates before it writes, so a poisoned map is consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl StateStore for MemoryStore {
    fn create_run(&self, record: &RunRecord, workflow: &Value, snapshot: &Value) -> Result<()> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let mut mem = self.lock();
        if mem.runs.contains_key(&record.run_id) {
            return Err(StoreError::AlreadyExists {
                run_id: record.run_id.clone(),
            });
        }
        let history = vec![CheckpointMeta {
            step: record.step,
            node: record.current_node.clone(),
            status: record.status,
            at: record.updated_at,
            snapshot_bytes: Some(snap.len() as u64),
        }];
        mem.runs.insert(
            record.run_id.clone(),
            MemRun {
                record: record.clone(),
                workflow: workflow.clone(),
                snapshot: snap,
                history,
                lease: None,
            },
        );
        Ok(())
    }

    fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease> {
        let ttl = self.opts.ttl_ms();
        let mut mem = self.lock();
        let run = mem.runs.get_mut(run_id).ok_or_else(|| not_found(run_id))?;
        if run.record.status.is_terminal() {
            return Err(StoreError::Finished {
                run_id: run_id.to_string(),
                status: run.record.status,
            });
        }
        let now = now_ms();
        let me = owner.to_string();
        let mut row = LeaseRow::new(owner, now, ttl);
        if let Some(held) = &run.lease {
            if held.blocks(&me, now) {
                return Err(locked(run_id, held));
            }
            if held.owner == me {
                row.acquired_at = held.acquired_at;
            }
        }
        let lease = Lease {
            run_id: run_id.to_string(),
            owner: owner.clone(),
            acquired_at: row.acquired_at,
            expires_at: row.expires_at,
        };
        run.lease = Some(row);
        Ok(lease)
    }

    fn heartbeat(&self, lease: &Lease) -> Result<Renewed> {
        let ttl = self.opts.ttl_ms();
        let mut mem = self.lock();
        let run = mem
            .runs
            .get_mut(&lease.run_id)
            .ok_or_else(|| not_found(&lease.run_id))?;
        let now = now_ms();
        check_holder(run, lease, now)?;
        let expires_at = now.saturating_add(ttl);
        if let Some(row) = &mut run.lease {
            row.expires_at = expires_at;
        }
        Ok(Renewed {
            expires_at,
            cancel_requested: run.record.cancel_requested,
        })
    }

    fn release(&self, lease: &Lease) -> Result<()> {
        let mut mem = self.lock();
        if let Some(run) = mem.runs.get_mut(&lease.run_id)
            && run
                .lease
                .as_ref()
                .is_some_and(|r| r.owner == lease.owner.to_string())
        {
            run.lease = None;
        }
        Ok(())
    }

    fn checkpoint(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        snapshot: &Value,
    ) -> Result<Checkpointed> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let ttl = self.opts.ttl_ms();
        let run_id = lease.run_id.as_str();
        let mut mem = self.lock();
        let run = mem.runs.get_mut(run_id).ok_or_else(|| not_found(run_id))?;
        let now = now_ms();
        if run.record.status.is_terminal() {
            return Err(StoreError::Finished {
                run_id: run_id.to_string(),
                status: run.record.status,
            });
        }
        check_holder(run, lease, now)?;
        if run.record.step != expected_step {
            return Err(StoreError::StepConflict {
                run_id: run_id.to_string(),
                expected: expected_step,
                actual: run.record.step,
            });
        }
        let step = expected_step.saturating_add(1);
        let bytes = snap.len() as u64;
        run.snapshot = snap;
        apply_update(run, step, update, now, Some(bytes));
        let lease_expires_at = now.saturating_add(ttl);
        if let Some(row) = &mut run.lease {
            row.expires_at = lease_expires_at;
        }
        Ok(Checkpointed {
            step,
            at: now,
            lease_expires_at,
            cancel_requested: run.record.cancel_requested,
        })
    }

    fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        expected_step: u64,
        update: &RecordUpdate,
    ) -> Result<RunRecord> {
        let mut mem = self.lock();
        let run = mem.runs.get_mut(run_id).ok_or_else(|| not_found(run_id))?;
        let now = now_ms();
        match lease {
            Some(l) if l.run_id == run_id => check_holder(run, l, now)?,
            Some(l) => {
                return Err(StoreError::Invalid(format!(
                    "a lease on `{}` used for run `{run_id}`",
                    l.run_id
                )));
            }
            None => {
                if let Some(held) = &run.lease
                    && held.blocks("", now)
                {
                    return Err(locked(run_id, held));
                }
            }
        }
        if run.record.step != expected_step {
            return Err(StoreError::StepConflict {
                run_id: run_id.to_string(),
                expected: expected_step,
                actual: run.record.step,
            });
        }
        apply_update(run, expected_step.saturating_add(1), update, now, None);
        Ok(run.record.clone())
    }

    fn request_cancel(&self, run_id: &str) -> Result<CancelRequest> {
        let mut mem = self.lock();
        let run = mem.runs.get_mut(run_id).ok_or_else(|| not_found(run_id))?;
        let now = now_ms();
        if run.record.status.is_terminal() {
            return Ok(CancelRequest::AlreadyFinished(run.record.status));
        }
        if let Some(held) = &run.lease
            && held.blocks("", now)
        {
            run.record.cancel_requested = true;
            return Ok(CancelRequest::Requested {
                owner: held.owner.clone(),
            });
        }
        let update =
            RecordUpdate::finished(RunStatus::Cancelled, run.record.current_node.clone(), None);
        let step = run.record.step.saturating_add(1);
        apply_update(run, step, &update, now, None);
        Ok(CancelRequest::Cancelled(run.record.clone()))
    }

    fn load(&self, run_id: &str) -> Result<StoredRun> {
        let expected = self.opts.snapshot_version;
        let (record, workflow, bytes) = {
            let mem = self.lock();
            let run = mem.runs.get(run_id).ok_or_else(|| not_found(run_id))?;
            (
                run.record.clone(),
                run.workflow.clone(),
                run.snapshot.clone(),
            )
        };
        let (version, snapshot) =
            decode_snapshot(&bytes).map_err(|d| corrupt(format!("run `{run_id}`: {d}")))?;
        if version != expected {
            return Err(StoreError::SnapshotVersion {
                run_id: run_id.to_string(),
                found: version,
                expected,
            });
        }
        Ok(StoredRun {
            record,
            workflow,
            snapshot,
            snapshot_version: version,
        })
    }

    fn record(&self, run_id: &str) -> Result<RunRecord> {
        let mem = self.lock();
        mem.runs
            .get(run_id)
            .map(|r| r.record.clone())
            .ok_or_else(|| not_found(run_id))
    }

    fn list(&self) -> Result<Vec<RunRecord>> {
        let mem = self.lock();
        let mut out: Vec<RunRecord> = mem.runs.values().map(|r| r.record.clone()).collect();
        out.sort_by(|a, b| {
            b.started_at
                .cmp(&a.started_at)
                .then_with(|| b.run_id.cmp(&a.run_id))
        });
        Ok(out)
    }

    fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>> {
        let mem = self.lock();
        Ok(mem
            .runs
            .values()
            .filter(|r| r.record.correlation_id.as_deref() == Some(correlation_id))
            .max_by_key(|r| r.record.updated_at)
            .map(|r| r.record.clone()))
    }

    fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        let mem = self.lock();
        let run = mem.runs.get(run_id).ok_or_else(|| not_found(run_id))?;
        let mut h = run.history.clone();
        h.sort_by_key(|m| m.step);
        Ok(h)
    }
}
