//! Durable runs: every node boundary appends one row to the run's log in a
//! [`hensu_store::StateStore`] (under the run's lease), and the run's final status.
//!
//! * A [`DurableRun`] is a [`Checkpointer`] (passed with each run in its
//!   [`RunCtx`](hensu_runtime::RunCtx)): before each node of the main flow it records the
//!   step that just ran — its node, status and output, and the *change* it made to the
//!   [`RunState`] as a [`hensu_store::StateDelta`] (context writes, history entries, current
//!   node, counters; see `hensu_runtime::StateShadow`) — with [`StateStore::append`]. A step costs
//!   O(step), not O(run); the store rewrites a full snapshot now and then under its
//!   snapshot policy. The first boundary after a run is created or reopened writes a full
//!   snapshot ([`StateStore::checkpoint`]) when the stored state is not known to be current.
//!   A process killed while a node runs resumes from the last boundary: the node in flight
//!   runs again, nothing else does.
//! * A sub-workflow child of the main flow is recorded at its own boundaries
//!   ([`Checkpointer::record_nested`]) below the run state's `nested` field, so a
//!   process killed inside the child resumes the child, not the sub-workflow node from
//!   scratch.
//! * A branch of a parallel or fork node (of the main flow or such a child) that finishes
//!   while the node's other branches run is recorded then
//!   ([`Checkpointer::record_branch`]), below the state's `nested` field: a process
//!   killed while the others run resumes the node and runs only the branches not recorded.
//! * The checkpoint returns the store's cancellation flag (`hensuc cancel`): the run stops at
//!   that boundary. A heartbeat task ([`DurableRun::start_heartbeat`]) keeps the lease alive
//!   through long agent calls and cancels the run's token when a cancellation is requested.
//! * The checkpoint also returns the store's pause flag (`hensuc pause`, the server's
//!   `POST …/pause`, the console's *Pause*, from any machine): the run suspends at that
//!   boundary, ends [`RunOutcome::Paused`] with phase `Initial`, and its paused record clears
//!   the flag; [`Engine::resume`](hensu_runtime::Engine::resume) continues it.
//! * Snapshots, delta values and step outputs go through a [`SnapshotRedactor`] (provider
//!   keys never reach the store).
//! * The store is async (SQLite writes on its own writer thread, PostgreSQL over the
//!   network), so a boundary's write never stalls the executor's threads.
//! * Any store failure (lease lost, stale write) ends the run with [`RuntimeError::Store`]
//!   and the run writes nothing more.
//! * The calls of the node in flight are journaled in the same log (`journal` rows,
//!   [`DurableRun::journal`], docs/security.md, *Call journal*), one write at a time with
//!   the boundaries, so a node that runs again replays them.
//! * On a store whose commit mode is pipelined ([`hensu_store::CommitMode`], the default for
//!   SQLite and PostgreSQL) the writes are queued to the run's writer (`pipeline.rs`), which
//!   commits them in order, grouped; a boundary does not wait for its commit. A journal entry
//!   of a call other than a model request, the final status ([`DurableRun::finish`]), a full
//!   [`DurableRun::checkpoint`] and [`DurableRun::release`] wait for everything written before
//!   them: nothing outside the process sees a step before it is committed.

mod journal;
mod pipeline;
mod status;

pub use status::final_update;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hensu_store::{
    Checkpointed, CommitMode, Heartbeat, Lease, OwnerId, RecordUpdate, RunRecord, RunStatus,
    StateStore, StepEntry, StepSnapshot, StoreError, StoredRun,
};
use serde_json::Value;

use hensu_runtime::StateShadow as Shadow;
use hensu_runtime::{
    Boundary, CancelToken, Checkpointer, FinishedBranch, NestedFrame, RunOutcome, RunResult,
    RunState, RuntimeError,
};

/// Rewrites a snapshot in place before it is stored (e.g. replaces provider keys).
pub type SnapshotRedactor = Arc<dyn Fn(&mut Value) + Send + Sync>;

/// The run log's entry for a step the runtime diffed (its snapshot as the store decides).
fn log_entry(c: hensu_runtime::StepChange) -> StepEntry {
    StepEntry {
        node: c.node,
        node_status: c.node_status,
        output: c.output,
        delta: c.delta,
        started_at: None,
        duration_ms: Some(c.duration_ms),
        snapshot: StepSnapshot::ByStore,
    }
}

/// A run whose state is checkpointed to a store. Holds the run's lease until
/// [`DurableRun::finish`] (or until dropped: the lease then expires, or is broken at once by a
/// resumer on the same host once this process is gone).
pub struct DurableRun {
    store: Arc<dyn StateStore>,
    lease: Lease,
    step: AtomicU64,
    redact: Option<SnapshotRedactor>,
    /// Cancelled together when the store reports a cancellation request; any of them
    /// cancelled (e.g. by a worker that lost the lease) stops the run at the next boundary.
    cancel: Vec<CancelToken>,
    /// A write failed (lease lost, conflict): never write again.
    lost: AtomicBool,
    heartbeat: Mutex<Option<Heartbeat>>,
    /// The lease is renewed by someone else (a worker's bulk heartbeat).
    external_heartbeat: bool,
    /// The state as the store holds it after the last write (None: unknown, write in full).
    shadow: Mutex<Option<Shadow>>,
    /// The last write asked for a full snapshot: the next step carries the state (the
    /// store then need not rebuild it from its log).
    snapshot_wanted: AtomicBool,
    /// The last checkpoint's write, for benchmarks and tests.
    last_write: Mutex<Option<Duration>>,
    /// What its waits need (`waits.rs`).
    pub(crate) waits: WaitState,
    /// One write at a time: journal entries of parallel branches and the boundaries share
    /// the run's step counter.
    order: tokio::sync::Mutex<()>,
    /// The journal entries of an earlier run of the node in flight, by visit (read once).
    replay: tokio::sync::OnceCell<journal::Replay>,
    /// The store's commit mode is `pipelined`: writes are queued to the run's writer
    /// (`pipeline.rs`) instead of committed one at a time.
    pipeline: Option<pipeline::Pipeline>,
}

/// A durable run's wait bookkeeping (docs/language.md, *Timers and signals*).
#[derive(Debug)]
pub(crate) struct WaitState {
    /// The fewest of the run's signals any of its signal waits looked at (`u64::MAX`: none
    /// looked), written with the wait, so a signal sent meanwhile — while one flow decided to
    /// wait and another still ran — wakes the run at once.
    pub signals_seen: AtomicU64,
    /// A timer whose wake time is recorded is waited for in place instead of suspending.
    pub in_place: AtomicBool,
}

impl Default for WaitState {
    fn default() -> Self {
        WaitState {
            signals_seen: AtomicU64::new(u64::MAX),
            in_place: AtomicBool::new(false),
        }
    }
}

impl std::fmt::Debug for DurableRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableRun")
            .field("run_id", &self.lease.run_id)
            .field("step", &self.step.load(Ordering::SeqCst))
            .finish()
    }
}

/// The state as stored: JSON, redacted.
pub fn snapshot(state: &RunState, redact: Option<&SnapshotRedactor>) -> Result<Value, StoreError> {
    let mut v = serde_json::to_value(state)
        .map_err(|e| StoreError::Invalid(format!("the run state does not serialize: {e}")))?;
    if let Some(r) = redact {
        r(&mut v);
    }
    Ok(v)
}

/// A stored snapshot back to a state; a clear message when it is not one.
pub fn restore(run_id: &str, snapshot: &Value) -> Result<RunState, String> {
    <RunState as serde::Deserialize>::deserialize(snapshot).map_err(|e| {
        format!(
            "the stored state of run `{run_id}` is not a hensu run state ({e}); it was not changed"
        )
    })
}

impl DurableRun {
    /// Stores a new run (`record`, the `workflow` it runs, `initial` as its first snapshot)
    /// and takes its lease for `owner`.
    pub async fn create(
        store: Arc<dyn StateStore>,
        record: &RunRecord,
        workflow: &Value,
        initial: &RunState,
        owner: &OwnerId,
        redact: Option<SnapshotRedactor>,
    ) -> Result<DurableRun, StoreError> {
        let workflow = serde_json::to_vec(workflow)
            .map_err(|e| StoreError::Invalid(format!("the workflow does not serialize: {e}")))?;
        DurableRun::create_encoded(store, record, &workflow, initial, owner, redact).await
    }

    /// [`DurableRun::create`] with the workflow already encoded as one JSON document
    /// ([`StateStore::create_run_encoded`]).
    pub async fn create_encoded(
        store: Arc<dyn StateStore>,
        record: &RunRecord,
        workflow_json: &[u8],
        initial: &RunState,
        owner: &OwnerId,
        redact: Option<SnapshotRedactor>,
    ) -> Result<DurableRun, StoreError> {
        let snap = snapshot(initial, redact.as_ref())?;
        store
            .create_run_encoded(record, workflow_json, &snap)
            .await?;
        DurableRun::lease_created(store, record, initial, owner, redact).await
    }

    /// Takes the lease of a run just stored with `initial` as its state (e.g. by
    /// [`hensu_store::WorkflowRegistry::create_tenant_run`], which writes a server tenant's run and its
    /// tag in one transaction).
    pub async fn lease_created(
        store: Arc<dyn StateStore>,
        record: &RunRecord,
        initial: &RunState,
        owner: &OwnerId,
        redact: Option<SnapshotRedactor>,
    ) -> Result<DurableRun, StoreError> {
        let lease = store.acquire(&record.run_id, owner).await?;
        let step = store.record(&record.run_id).await?.step;
        let run = DurableRun::new(store, lease, step, redact);
        if let Ok(shadow) = Shadow::of(initial)
            && let Ok(mut slot) = run.shadow.lock()
        {
            *slot = Some(shadow);
        }
        Ok(run)
    }

    /// Takes the lease of a stored run, then loads it. [`StoreError::RunLocked`] when another
    /// live process holds it, [`StoreError::Finished`] when it ended. Nothing is written.
    pub async fn reopen(
        store: Arc<dyn StateStore>,
        run_id: &str,
        owner: &OwnerId,
        redact: Option<SnapshotRedactor>,
    ) -> Result<(DurableRun, StoredRun), StoreError> {
        let lease = store.acquire(run_id, owner).await?;
        match store.load(run_id).await {
            Ok(stored) => {
                let step = stored.record.step;
                Ok((DurableRun::new(store, lease, step, redact), stored))
            }
            Err(e) => {
                let _ = store.release(&lease).await;
                Err(e)
            }
        }
    }

    /// Wraps a lease taken by [`StateStore::claim`] (a worker's run at `step`). The worker
    /// renews the lease in bulk: [`DurableRun::start_heartbeat`] does nothing for it. The
    /// first boundary writes a full snapshot.
    pub fn claimed(store: Arc<dyn StateStore>, lease: Lease, step: u64) -> DurableRun {
        let mut run = DurableRun::new(store, lease, step, None);
        run.external_heartbeat = true;
        run
    }

    fn new(
        store: Arc<dyn StateStore>,
        lease: Lease,
        step: u64,
        redact: Option<SnapshotRedactor>,
    ) -> DurableRun {
        let pipeline = (store.commit_mode() == CommitMode::Pipelined)
            .then(|| pipeline::Pipeline::new(store.clone(), lease.clone(), step));
        DurableRun {
            pipeline,
            store,
            lease,
            step: AtomicU64::new(step),
            redact,
            cancel: Vec::new(),
            lost: AtomicBool::new(false),
            heartbeat: Mutex::new(None),
            shadow: Mutex::new(None),
            snapshot_wanted: AtomicBool::new(false),
            external_heartbeat: false,
            last_write: Mutex::new(None),
            waits: WaitState::default(),
            order: tokio::sync::Mutex::new(()),
            replay: tokio::sync::OnceCell::new(),
        }
    }

    /// A recorded timer (the run was suspended at it and is continued now) is waited for in
    /// place, holding the run, instead of suspending it again (`hensuc resume`).
    pub fn with_waiting_in_place(self) -> DurableRun {
        self.waits.in_place.store(true, Ordering::SeqCst);
        self
    }

    /// Adds a token cancelled when the store reports a cancellation request (a worker's and
    /// the engine's run can both be linked).
    pub fn with_cancel(mut self, cancel: CancelToken) -> DurableRun {
        self.cancel.push(cancel);
        self
    }

    /// Replaces the snapshot redactor.
    pub fn with_redactor(mut self, redact: Option<SnapshotRedactor>) -> DurableRun {
        self.redact = redact;
        self
    }

    pub fn run_id(&self) -> &str {
        &self.lease.run_id
    }

    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    pub fn store(&self) -> &Arc<dyn StateStore> {
        &self.store
    }

    /// The run's current write step.
    pub fn step(&self) -> u64 {
        match &self.pipeline {
            Some(p) => p.booked.step.load(Ordering::SeqCst),
            None => self.step.load(Ordering::SeqCst),
        }
    }

    /// How long the last checkpoint took (snapshot, redaction and the store's write; when
    /// pipelined, the last group's commit).
    pub fn last_write(&self) -> Option<Duration> {
        let slot = match &self.pipeline {
            Some(p) => &p.booked.last_write,
            None => &self.last_write,
        };
        slot.lock().ok().and_then(|d| *d)
    }

    /// Has `f` called after each of this run's commits, when it commits in the background
    /// (pipelined); returns whether it will be. A run that commits each step has committed
    /// when its boundary returns: its owner acts then instead.
    pub fn on_commit(&self, f: Arc<dyn Fn() + Send + Sync>) -> bool {
        match &self.pipeline {
            Some(p) => {
                p.on_commit(f);
                true
            }
            None => false,
        }
    }

    /// How this run commits its steps (the store's `[store] commit`).
    pub fn commit_mode(&self) -> CommitMode {
        match self.pipeline {
            Some(_) => CommitMode::Pipelined,
            None => CommitMode::EachStep,
        }
    }

    /// The durability barrier: returns once everything this run wrote is committed (at once
    /// when it commits each step). Call it before an effect others may see.
    pub async fn flush(&self) -> Result<(), StoreError> {
        match &self.pipeline {
            Some(p) => p.flush().await.inspect_err(|_| self.lose()),
            None => Ok(()),
        }
    }

    /// Gives the lease up without a final status (a run handed back to be continued
    /// elsewhere) once everything it wrote is committed, so the next owner continues from
    /// its last step. A run whose writes failed still gives it up.
    pub async fn release(&self) -> Result<(), StoreError> {
        self.stop_heartbeat().await;
        let flushed = self.flush().await;
        let released = self.store.release(&self.lease).await;
        flushed.and(released)
    }

    fn lose(&self) {
        self.lost.store(true, Ordering::SeqCst);
    }

    /// The last write asked for a full snapshot with the next step. Pipelined, the ask is
    /// taken: the steps queued behind this one do not carry the state again.
    fn snapshot_wanted(&self) -> bool {
        match &self.pipeline {
            Some(p) => p.booked.snapshot_wanted.swap(false, Ordering::SeqCst),
            None => self.snapshot_wanted.load(Ordering::SeqCst),
        }
    }

    /// Renews the lease every third of `ttl` from a background task (agent calls may outlast
    /// the TTL); a cancellation request seen there cancels the run's token. Needs a tokio
    /// runtime.
    pub fn start_heartbeat(&self, ttl: Duration) -> Result<(), StoreError> {
        if self.external_heartbeat {
            return Ok(());
        }
        let cancel = self.cancel.clone();
        let hb = Heartbeat::spawn(
            self.store.clone(),
            self.lease.clone(),
            (ttl / 3).max(Duration::from_millis(50)),
            Box::new(move || {
                for c in &cancel {
                    c.cancel();
                }
            }),
        )?;
        if let Ok(mut slot) = self.heartbeat.lock() {
            *slot = Some(hb);
        }
        Ok(())
    }

    async fn stop_heartbeat(&self) {
        let hb = self.heartbeat.lock().ok().and_then(|mut h| h.take());
        if let Some(hb) = hb {
            let _ = hb.stop().await;
        }
    }

    /// Writes `state` with `update` (one transaction) at the expected step.
    pub async fn checkpoint(
        &self,
        state: &RunState,
        update: &RecordUpdate,
    ) -> Result<Checkpointed, StoreError> {
        self.ensure_held()?;
        let t = std::time::Instant::now();
        let snap = snapshot(state, self.redact.as_ref())?;
        let shadow = Shadow::of(state).map_err(StoreError::Invalid)?;
        let _one_at_a_time = self.order.lock().await;
        if let Some(p) = &self.pipeline {
            let queued = pipeline::Queued::Full(update.clone(), snap);
            let r = self.waited(p.enqueue(queued, true).await).await;
            if r.is_ok()
                && let Ok(mut slot) = self.shadow.lock()
            {
                *slot = Some(shadow);
            }
            return r;
        }
        let r = self
            .store
            .checkpoint(&self.lease, self.step(), update, &snap)
            .await;
        if r.is_ok()
            && let Ok(mut slot) = self.shadow.lock()
        {
            *slot = Some(shadow);
        }
        self.written(r, t)
    }

    /// Records `state` as one step of the log (a delta against what the store holds), or as
    /// a full snapshot when that is not known.
    /// `wait`: return once it is committed (else, pipelined, once it is queued).
    async fn write_state(
        &self,
        state: &RunState,
        update: RecordUpdate,
        wait: bool,
    ) -> Result<Checkpointed, StoreError> {
        self.ensure_held()?;
        let t = std::time::Instant::now();
        if let Some(p) = &self.pipeline {
            // Prepared and queued in one order: each delta is against the one queued before.
            let _in_order = self.order.lock().await;
            let queued = match self.prepare_write(state)? {
                Write::Step(entry) => pipeline::Queued::Row(hensu_store::StepWrite {
                    journal: false,
                    update,
                    entry,
                }),
                Write::Full(snap) => pipeline::Queued::Full(update, snap),
            };
            let pending = p.enqueue(queued, wait).await;
            drop(_in_order);
            return self.waited(pending).await;
        }
        let write = self.prepare_write(state)?;
        self.write(write, &update, t).await
    }

    /// A queued write's answer; a failure loses the run like a failed write.
    async fn waited(
        &self,
        pending: Result<pipeline::Pending, StoreError>,
    ) -> Result<Checkpointed, StoreError> {
        let r = match pending {
            Ok(p) => p.wait().await,
            Err(e) => Err(e),
        };
        r.inspect_err(|_| self.lose())
    }

    /// Records the state of a sub-workflow child (reached through `frames`) as one step of
    /// the log, below the run's `/nested/state`.
    async fn write_nested_state(
        &self,
        frames: &[NestedFrame],
        state: &RunState,
    ) -> Result<Checkpointed, StoreError> {
        self.write_inner_step(
            "a sub-workflow child reached a boundary before its run was recorded",
            |shadow, redact| shadow.nested_step(frames, state, redact),
        )
        .await
    }

    /// Records a branch of parallel or fork node `node_id` (in the flow reached through
    /// `frames`) that finished, as one step of the log below that flow's `nested` field.
    async fn write_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<Checkpointed, StoreError> {
        self.write_inner_step(
            "a branch finished before its run was recorded",
            |shadow, redact| shadow.branch_step(frames, node_id, branch, redact),
        )
        .await
    }

    /// Records a step below the run's own (a child's boundary, a finished branch) built by
    /// `step` from the shadow; the record keeps the run's current node. `unrecorded`: the
    /// error when the run itself was never recorded.
    async fn write_inner_step(
        &self,
        unrecorded: &str,
        step: impl FnOnce(
            &mut Shadow,
            Option<&hensu_runtime::Redact>,
        ) -> Result<hensu_runtime::StepChange, String>,
    ) -> Result<Checkpointed, StoreError> {
        self.ensure_held()?;
        let t = std::time::Instant::now();
        let _in_order = match &self.pipeline {
            Some(_) => Some(self.order.lock().await),
            None => None,
        };
        let (entry, update) = {
            let mut slot = self
                .shadow
                .lock()
                .map_err(|_| StoreError::Invalid("the durable run's shadow is poisoned".into()))?;
            let shadow = slot
                .as_mut()
                .ok_or_else(|| StoreError::Invalid(unrecorded.into()))?;
            let entry = step(shadow, self.redact.as_deref())
                .map(log_entry)
                .map_err(StoreError::Invalid)?;
            let node = shadow.current_node().unwrap_or_default().to_string();
            (entry, RecordUpdate::running(node.as_str()))
        };
        if let Some(p) = &self.pipeline {
            let row = hensu_store::StepWrite {
                journal: false,
                update,
                entry,
            };
            let pending = p.enqueue(pipeline::Queued::Row(row), false).await;
            drop(_in_order);
            return self.waited(pending).await;
        }
        self.write(Write::Step(entry), &update, t).await
    }

    async fn write(
        &self,
        write: Write,
        update: &RecordUpdate,
        t: std::time::Instant,
    ) -> Result<Checkpointed, StoreError> {
        let _one_at_a_time = self.order.lock().await;
        let step = self.step();
        let r = match write {
            Write::Step(entry) => self.store.append(&self.lease, step, update, &entry).await,
            Write::Full(snap) => {
                self.store
                    .checkpoint(&self.lease, step, update, &snap)
                    .await
            }
        };
        self.written(r, t)
    }

    /// The write that takes the store to `state`: a step with its delta when the stored state
    /// is known, else the full (redacted) snapshot. Either way the shadow moves to `state`.
    fn prepare_write(&self, state: &RunState) -> Result<Write, StoreError> {
        let mut slot = self
            .shadow
            .lock()
            .map_err(|_| StoreError::Invalid("the durable run's shadow is poisoned".into()))?;
        match slot.as_mut() {
            Some(shadow) => {
                let mut entry = shadow
                    .step(state, self.redact.as_deref())
                    .map(log_entry)
                    .map_err(|e| {
                        StoreError::Invalid(format!("the run state does not serialize: {e}"))
                    })?;
                // The snapshot comes from the state at hand when the store asks for one, so
                // a compaction never decodes and replays the log.
                entry.snapshot = if self.snapshot_wanted() {
                    StepSnapshot::State(snapshot(state, self.redact.as_ref())?)
                } else {
                    StepSnapshot::OnRequest
                };
                Ok(Write::Step(entry))
            }
            None => {
                let snap = snapshot(state, self.redact.as_ref())?;
                *slot = Some(Shadow::of(state).map_err(StoreError::Invalid)?);
                Ok(Write::Full(snap))
            }
        }
    }

    /// A run that lost its lease never writes again.
    fn ensure_held(&self) -> Result<(), StoreError> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(StoreError::LeaseLost {
                run_id: self.lease.run_id.clone(),
                owner: self.lease.owner.to_string(),
            });
        }
        Ok(())
    }

    /// Books a write's result: the new step and its duration, or the lease as lost.
    fn written(
        &self,
        r: Result<Checkpointed, StoreError>,
        started: std::time::Instant,
    ) -> Result<Checkpointed, StoreError> {
        match r {
            Ok(cp) => {
                self.step.store(cp.step, Ordering::SeqCst);
                self.snapshot_wanted
                    .store(cp.snapshot_wanted, Ordering::SeqCst);
                if let Ok(mut d) = self.last_write.lock() {
                    *d = Some(started.elapsed());
                }
                Ok(cp)
            }
            Err(e) => {
                self.lost.store(true, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// Records how the run ended (with its final state) and gives the lease up. A run that
    /// lost its lease writes nothing.
    pub async fn finish(&self, result: &RunResult) -> Result<Option<RunStatus>, StoreError> {
        self.stop_heartbeat().await;
        if self.lost.load(Ordering::SeqCst) {
            return Ok(None);
        }
        if let RunOutcome::Failed(RuntimeError::Store { .. }) = result.outcome {
            // What is still queued commits (or fails) before the lease is given up.
            let _ = self.flush().await;
            let _ = self.store.release(&self.lease).await;
            return Ok(None);
        }
        let state = &result.state;
        let mut update = final_update(result);
        if let Some(w) = update.wait.as_mut() {
            // No wait looked at the signals in this process: any signal of a waited name wakes it.
            w.signals_seen = match self.waits.signals_seen.load(Ordering::SeqCst) {
                u64::MAX => 0,
                seen => seen,
            };
        }
        let status = update.status;
        // Waited for: the status is reported, the lease given up, only once it is committed.
        let cp = self.write_state(state, update.clone(), true).await;
        if !status.is_terminal() || cp.is_err() {
            let _ = self.store.release(&self.lease).await;
        }
        cp.map(|_| Some(status))
    }
}

/// One write of the run's state.
enum Write {
    Step(hensu_store::StepEntry),
    Full(Value),
}

fn store_error(e: StoreError) -> RuntimeError {
    RuntimeError::Store {
        message: e.to_string(),
    }
}

#[async_trait]
impl Checkpointer for DurableRun {
    async fn record_step(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        let cp = self
            .write_state(
                state,
                RecordUpdate::running(state.current_node.as_str()),
                false,
            )
            .await
            .map_err(store_error)?;
        self.decide(cp).await
    }

    async fn record_nested(
        &self,
        frames: &[NestedFrame],
        state: &RunState,
    ) -> Result<Boundary, RuntimeError> {
        let cp = self
            .write_nested_state(frames, state)
            .await
            .map_err(store_error)?;
        self.decide(cp).await
    }

    async fn record_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        let cp = self
            .write_branch(frames, node_id, branch)
            .await
            .map_err(store_error)?;
        // A cancellation requested meanwhile stops the run at its next check.
        if cp.cancel_requested {
            for c in &self.cancel {
                c.cancel();
            }
        }
        Ok(())
    }
}

impl DurableRun {
    /// What the run does after a write: stop for a cancellation, pause for a pause request,
    /// else go on.
    async fn decide(&self, cp: Checkpointed) -> Result<Boundary, RuntimeError> {
        if cp.cancel_requested || self.cancel.iter().any(CancelToken::is_cancelled) {
            for c in &self.cancel {
                c.cancel();
            }
            return Ok(Boundary::Cancel);
        }
        // Pipelined, the request the commits so far reported is acted on once (a later
        // commit reports it again until the paused record clears it).
        let pause = match &self.pipeline {
            Some(p) => cp.pause_requested && p.booked.pause_requested.swap(false, Ordering::SeqCst),
            None => cp.pause_requested,
        };
        Ok(if pause {
            Boundary::Suspend
        } else {
            Boundary::Continue
        })
    }
}
