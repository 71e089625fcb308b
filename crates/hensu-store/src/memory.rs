//! The in-memory store: the SQLite store on a `:memory:` database, so there is one
//! implementation of the store's semantics, not two.

use std::ops::Deref;

use crate::{Result, SqliteStore, StoreOptions};

/// An in-memory [`SqliteStore`]. Cloning gives another handle on the same data (like a second
/// connection); [`MemoryStore::with_options`] gives one with other options.
#[derive(Clone, Debug)]
pub struct MemoryStore {
    inner: SqliteStore,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

impl MemoryStore {
    /// A new, empty store. Opening an in-memory SQLite database only fails when memory is
    /// exhausted, which the allocator turns into an abort anyway.
    #[allow(clippy::expect_used)]
    pub fn new() -> MemoryStore {
        MemoryStore::try_new(StoreOptions::default())
            .expect("an in-memory SQLite database opens unless memory is exhausted")
    }

    /// A new, empty store with `opts`.
    pub fn try_new(opts: StoreOptions) -> Result<MemoryStore> {
        Ok(MemoryStore {
            inner: SqliteStore::open_memory(opts)?,
        })
    }

    /// A handle on the same data with other options.
    pub fn with_options(&self, opts: StoreOptions) -> MemoryStore {
        MemoryStore {
            inner: self.inner.with_options(opts),
        }
    }

    pub fn options(&self) -> &StoreOptions {
        self.inner.options()
    }
}

impl Deref for MemoryStore {
    type Target = SqliteStore;

    fn deref(&self) -> &SqliteStore {
        &self.inner
    }
}

/// Every operation is the SQLite store's.
#[async_trait::async_trait]
impl crate::StateStore for MemoryStore {
    fn schedules(&self) -> std::sync::Arc<dyn crate::ScheduleStore> {
        self.inner.schedules()
    }
    async fn purge_rows(&self) -> Result<Vec<crate::retention::PurgeRow>> {
        self.inner.purge_rows().await
    }
    async fn delete_runs(&self, ids: &[String]) -> Result<Vec<String>> {
        self.inner.delete_runs(ids).await
    }
    async fn reclaim_space(&self, rewrite: bool) -> Result<crate::retention::Reclaimed> {
        self.inner.reclaim_space(rewrite).await
    }
    async fn registry(&self) -> Result<std::sync::Arc<dyn crate::WorkflowRegistry>> {
        self.inner.registry().await
    }
    async fn create_run_encoded(
        &self,
        record: &crate::RunRecord,
        workflow_json: &[u8],
        snapshot: &serde_json::Value,
    ) -> Result<()> {
        self.inner
            .create_run_encoded(record, workflow_json, snapshot)
            .await
    }
    async fn acquire(&self, run_id: &str, owner: &crate::OwnerId) -> Result<crate::Lease> {
        self.inner.acquire(run_id, owner).await
    }
    async fn heartbeat(&self, lease: &crate::Lease) -> Result<crate::Renewed> {
        self.inner.heartbeat(lease).await
    }
    async fn release(&self, lease: &crate::Lease) -> Result<()> {
        self.inner.release(lease).await
    }
    async fn checkpoint(
        &self,
        lease: &crate::Lease,
        expected_step: u64,
        update: &crate::RecordUpdate,
        snapshot: &serde_json::Value,
    ) -> Result<crate::Checkpointed> {
        self.inner
            .checkpoint(lease, expected_step, update, snapshot)
            .await
    }
    async fn append(
        &self,
        lease: &crate::Lease,
        expected_step: u64,
        update: &crate::RecordUpdate,
        entry: &crate::StepEntry,
    ) -> Result<crate::Checkpointed> {
        self.inner.append(lease, expected_step, update, entry).await
    }
    async fn append_journal(
        &self,
        lease: &crate::Lease,
        expected_step: u64,
        update: &crate::RecordUpdate,
        entry: &crate::StepEntry,
    ) -> Result<crate::Checkpointed> {
        self.inner
            .append_journal(lease, expected_step, update, entry)
            .await
    }
    async fn append_steps(
        &self,
        lease: &crate::Lease,
        expected_step: u64,
        steps: &[crate::StepWrite],
    ) -> Result<crate::Checkpointed> {
        self.inner.append_steps(lease, expected_step, steps).await
    }
    /// Each step: a commit in memory costs nothing worth overlapping, and nothing outlives
    /// the process to be made durable.
    fn commit_mode(&self) -> crate::CommitMode {
        crate::CommitMode::EachStep
    }
    async fn set_status(
        &self,
        run_id: &str,
        lease: Option<&crate::Lease>,
        expected_step: u64,
        update: &crate::RecordUpdate,
    ) -> Result<crate::RunRecord> {
        self.inner
            .set_status(run_id, lease, expected_step, update)
            .await
    }
    async fn request_cancel(&self, run_id: &str) -> Result<crate::CancelRequest> {
        self.inner.request_cancel(run_id).await
    }
    async fn request_pause(&self, run_id: &str) -> Result<crate::PauseRequest> {
        self.inner.request_pause(run_id).await
    }
    async fn send_signal(
        &self,
        run_id: &str,
        name: &str,
        payload: &serde_json::Value,
    ) -> Result<crate::SignalReceipt> {
        self.inner.send_signal(run_id, name, payload).await
    }
    async fn signals(&self, run_id: &str) -> Result<Vec<crate::StoredSignal>> {
        self.inner.signals(run_id).await
    }
    async fn load(&self, run_id: &str) -> Result<crate::StoredRun> {
        self.inner.load(run_id).await
    }
    async fn record(&self, run_id: &str) -> Result<crate::RunRecord> {
        self.inner.record(run_id).await
    }
    async fn load_at(&self, run_id: &str, step: u64) -> Result<crate::StoredRun> {
        self.inner.load_at(run_id, step).await
    }
    async fn fork(&self, spec: &crate::ForkSpec) -> Result<crate::RunRecord> {
        self.inner.fork(spec).await
    }
    async fn list(&self) -> Result<Vec<crate::RunRecord>> {
        self.inner.list().await
    }
    async fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<crate::RunRecord>> {
        self.inner.find_by_correlation(correlation_id).await
    }
    async fn history(&self, run_id: &str) -> Result<Vec<crate::CheckpointMeta>> {
        self.inner.history(run_id).await
    }
    async fn read_log(
        &self,
        run_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<crate::LogEntry>> {
        self.inner.read_log(run_id, after, limit).await
    }
    async fn claim(
        &self,
        owner: &crate::OwnerId,
        scope: crate::ClaimScope,
        limit: usize,
    ) -> Result<Vec<crate::Claimed>> {
        self.inner.claim(owner, scope, limit).await
    }
    async fn work_wakeups(&self) -> Result<Option<crate::EventWakeups>> {
        // No notifications here: a worker polls (ARCHITECTURE.md, *hensu-store*).
        Ok(None)
    }

    async fn queue_depth(&self) -> Result<u64> {
        self.inner.queue_depth().await
    }
    async fn heartbeat_owner(
        &self,
        owner: &crate::OwnerId,
    ) -> Result<Vec<(String, crate::Renewed)>> {
        self.inner.heartbeat_owner(owner).await
    }
}
