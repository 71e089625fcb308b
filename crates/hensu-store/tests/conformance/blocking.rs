//! The async store driven from plain test threads: [`Blocking`] has every
//! [`StateStore`] method, each awaited to completion on one shared tokio runtime, so the
//! suite's tests (many of them about threads racing for a run) read as sequences of calls.
//! Only tests do this; the store itself never blocks.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use hensu_store::{
    CancelRequest, CheckpointMeta, Checkpointed, Claimed, IdempotencyKey, KeyedStart, Lease,
    LogEntry, OwnerId, PauseRequest, RecordUpdate, Renewed, Result, RunPage, RunQuery, RunRecord,
    StateStore, StepEntry, StoredRun, StoredWorkflow, WorkflowRegistry, WorkflowSummary,
};
use serde_json::Value;

/// The tests' runtime: multi-threaded, so a pooled PostgreSQL connection opened by one
/// test thread's call keeps its I/O task running while another thread's call uses it.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("test runtime")
    })
}

/// Runs `f` to completion on [`runtime`].
pub fn block<F: Future>(f: F) -> F::Output {
    runtime().block_on(f)
}

/// A store handle whose methods wait for their answer.
#[derive(Clone)]
pub struct Blocking {
    pub inner: Arc<dyn StateStore>,
}

impl Blocking {
    pub fn new(store: impl StateStore + 'static) -> Blocking {
        Blocking {
            inner: Arc::new(store),
        }
    }

    pub fn from_arc(inner: Arc<dyn StateStore>) -> Blocking {
        Blocking { inner }
    }
}

impl SyncStore for Blocking {
    fn store(&self) -> &dyn StateStore {
        &*self.inner
    }
}

/// A registry whose methods wait for their answer.
#[derive(Clone)]
pub struct BlockingRegistry {
    pub inner: Arc<dyn WorkflowRegistry>,
}

impl BlockingRegistry {
    pub fn put_workflow(&self, tenant: &str, id: &str, version: &str, def: &Value) -> Result<bool> {
        block(self.inner.put_workflow(tenant, id, version, def))
    }

    pub fn get_workflow(&self, tenant: &str, id: &str) -> Result<Option<StoredWorkflow>> {
        block(self.inner.get_workflow(tenant, id))
    }

    pub fn list_workflows(&self, tenant: &str) -> Result<Vec<WorkflowSummary>> {
        block(self.inner.list_workflows(tenant))
    }

    pub fn delete_workflow(&self, tenant: &str, id: &str) -> Result<bool> {
        block(self.inner.delete_workflow(tenant, id))
    }

    pub fn tag_run(&self, run_id: &str, tenant: &str, workflow_id: &str) -> Result<()> {
        block(self.inner.tag_run(run_id, tenant, workflow_id))
    }

    pub fn create_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        block(
            self.inner
                .create_tenant_run(tenant, record, workflow_json, snapshot),
        )
    }

    pub fn create_tenant_runs(
        &self,
        tenant: &str,
        runs: &[(RunRecord, Value)],
        workflow_json: &[u8],
    ) -> Result<()> {
        block(self.inner.create_tenant_runs(tenant, runs, workflow_json))
    }

    pub fn create_keyed_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
        key: &IdempotencyKey,
    ) -> Result<KeyedStart> {
        block(
            self.inner
                .create_keyed_tenant_run(tenant, record, workflow_json, snapshot, key),
        )
    }

    pub fn run_tenant(&self, run_id: &str) -> Result<Option<String>> {
        block(self.inner.run_tenant(run_id))
    }

    pub fn tenant_runs(&self, tenant: &str) -> Result<Vec<String>> {
        block(self.inner.tenant_runs(tenant))
    }

    pub fn tenant_runs_page(&self, tenant: &str, query: &RunQuery) -> Result<RunPage> {
        block(self.inner.tenant_runs_page(tenant, query))
    }
}

/// [`StateStore`]'s methods, waited for, on a [`Blocking`] handle or a concrete store (a test
/// imports this instead of the trait).
pub trait SyncStore {
    fn store(&self) -> &dyn StateStore;

    fn create_run(&self, record: &RunRecord, workflow: &Value, snapshot: &Value) -> Result<()> {
        block(self.store().create_run(record, workflow, snapshot))
    }
    fn create_run_encoded(&self, record: &RunRecord, wf: &[u8], snapshot: &Value) -> Result<()> {
        block(self.store().create_run_encoded(record, wf, snapshot))
    }
    fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease> {
        block(self.store().acquire(run_id, owner))
    }
    fn heartbeat(&self, lease: &Lease) -> Result<Renewed> {
        block(self.store().heartbeat(lease))
    }
    fn release(&self, lease: &Lease) -> Result<()> {
        block(self.store().release(lease))
    }
    fn checkpoint(
        &self,
        l: &Lease,
        step: u64,
        u: &RecordUpdate,
        s: &Value,
    ) -> Result<Checkpointed> {
        block(self.store().checkpoint(l, step, u, s))
    }
    fn append(
        &self,
        l: &Lease,
        step: u64,
        u: &RecordUpdate,
        e: &StepEntry,
    ) -> Result<Checkpointed> {
        block(self.store().append(l, step, u, e))
    }
    fn append_journal(
        &self,
        l: &Lease,
        step: u64,
        u: &RecordUpdate,
        e: &StepEntry,
    ) -> Result<Checkpointed> {
        block(self.store().append_journal(l, step, u, e))
    }
    fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        step: u64,
        u: &RecordUpdate,
    ) -> Result<RunRecord> {
        block(self.store().set_status(run_id, lease, step, u))
    }
    fn request_cancel(&self, run_id: &str) -> Result<CancelRequest> {
        block(self.store().request_cancel(run_id))
    }
    fn request_pause(&self, run_id: &str) -> Result<PauseRequest> {
        block(self.store().request_pause(run_id))
    }
    fn send_signal(
        &self,
        run_id: &str,
        name: &str,
        payload: &Value,
    ) -> Result<hensu_store::SignalReceipt> {
        block(self.store().send_signal(run_id, name, payload))
    }
    fn signals(&self, run_id: &str) -> Result<Vec<hensu_store::StoredSignal>> {
        block(self.store().signals(run_id))
    }
    fn load(&self, run_id: &str) -> Result<StoredRun> {
        block(self.store().load(run_id))
    }
    fn record(&self, run_id: &str) -> Result<RunRecord> {
        block(self.store().record(run_id))
    }
    fn load_at(&self, run_id: &str, step: u64) -> Result<StoredRun> {
        block(self.store().load_at(run_id, step))
    }
    fn fork(&self, spec: &hensu_store::ForkSpec) -> Result<RunRecord> {
        block(self.store().fork(spec))
    }
    fn list(&self) -> Result<Vec<RunRecord>> {
        block(self.store().list())
    }
    fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>> {
        block(self.store().find_by_correlation(correlation_id))
    }
    fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        block(self.store().history(run_id))
    }
    fn read_log(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<LogEntry>> {
        block(self.store().read_log(run_id, after, limit))
    }
    fn claim(&self, owner: &OwnerId, limit: usize) -> Result<Vec<Claimed>> {
        self.claim_in(owner, hensu_store::ClaimScope::Local, limit)
    }
    fn claim_in(
        &self,
        owner: &OwnerId,
        scope: hensu_store::ClaimScope,
        limit: usize,
    ) -> Result<Vec<Claimed>> {
        block(self.store().claim(owner, scope, limit))
    }
    fn queue_depth(&self) -> Result<u64> {
        block(self.store().queue_depth())
    }
    fn heartbeat_owner(&self, owner: &OwnerId) -> Result<Vec<(String, Renewed)>> {
        block(self.store().heartbeat_owner(owner))
    }
    fn registry(&self) -> Result<BlockingRegistry> {
        block(self.store().registry()).map(|inner| BlockingRegistry { inner })
    }
}

macro_rules! sync_store {
    ($($t:ty),*) => {$(
        impl SyncStore for $t {
            fn store(&self) -> &dyn StateStore {
                self
            }
        }
    )*};
}

sync_store!(
    hensu_store::SqliteStore,
    hensu_store::MemoryStore,
    hensu_store::PgStore
);
