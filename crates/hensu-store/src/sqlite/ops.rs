//! [`StateStore`] on SQLite: each operation is [`crate::logic`]'s, run in one transaction
//! on the store's writer thread. Arguments are encoded (or copied) before they are sent:
//! the transaction only copies bytes, and an operation outlives a caller that stops
//! waiting for it.

use std::sync::Arc;

use serde_json::Value;

use super::SqliteStore;
use crate::logic::{self, EncodedStep, run_ready};
use crate::time::now_ms;
use crate::{
    CancelRequest, CheckpointMeta, Checkpointed, ClaimScope, Claimed, ForkSpec, Lease, LogEntry,
    OwnerId, PauseRequest, RecordUpdate, Renewed, Result, RunRecord, StateStore, StepEntry,
    StoredRun, encode_snapshot,
};
use crate::{IdempotencyKey, KeyedStart, RunPage, RunQuery, SqliteRegistry, WorkflowRegistry};

impl SqliteStore {
    /// Tags a run with its tenant (the registry's [`crate::WorkflowRegistry::tag_run`]).
    pub(crate) async fn tag_run(
        &self,
        run_id: &str,
        tenant: &str,
        workflow_id: &str,
    ) -> Result<()> {
        let (run_id, tenant, workflow_id) =
            (run_id.to_owned(), tenant.to_owned(), workflow_id.to_owned());
        self.write(move |b, _| {
            run_ready(logic::tag_run(b, &run_id, &tenant, &workflow_id, now_ms()))
        })
        .await
    }

    /// One page of a tenant's runs (the registry's
    /// [`crate::WorkflowRegistry::tenant_runs_page`]).
    pub(crate) async fn tenant_runs_page(&self, tenant: &str, query: &RunQuery) -> Result<RunPage> {
        let (tenant, query) = (tenant.to_owned(), query.clone());
        self.read(move |b, _| run_ready(crate::page::tenant_runs_page(b, &tenant, &query)))
            .await
    }

    /// A run, its tenant tag and its idempotency key in one transaction (the registry's
    /// [`crate::WorkflowRegistry::create_keyed_tenant_run`]).
    pub(crate) async fn create_keyed_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        wf: &[u8],
        snapshot: &Value,
        key: &IdempotencyKey,
    ) -> Result<KeyedStart> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let (tenant, record, wf, key) =
            (tenant.to_owned(), record.clone(), wf.to_vec(), key.clone());
        self.write(move |b, opts| {
            run_ready(crate::idempotency::create_keyed_tenant_run(
                b,
                opts,
                &tenant,
                &record,
                &wf,
                &snap,
                &key,
                now_ms(),
            ))
        })
        .await
    }

    /// A run and its tenant tag in one transaction.
    pub(crate) async fn create_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        wf: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let (tenant, record, wf) = (tenant.to_owned(), record.clone(), wf.to_vec());
        self.write(move |b, opts| {
            run_ready(logic::create_tenant_run(
                b,
                opts,
                &tenant,
                &record,
                &wf,
                &snap,
                now_ms(),
            ))
        })
        .await
    }
}

impl SqliteStore {
    /// Runs of one workflow and their tenant tags in one transaction (a batch start).
    pub(crate) async fn create_tenant_runs(
        &self,
        tenant: &str,
        runs: &[(RunRecord, Value)],
        wf: &[u8],
    ) -> Result<()> {
        let version = self.opts.snapshot_version;
        let runs = runs
            .iter()
            .map(|(record, snapshot)| Ok((record.clone(), encode_snapshot(version, snapshot)?)))
            .collect::<Result<Vec<_>>>()?;
        let (tenant, wf) = (tenant.to_owned(), wf.to_vec());
        self.write(move |b, opts| {
            let now = now_ms();
            for (record, snap) in &runs {
                run_ready(logic::create_tenant_run(
                    b, opts, &tenant, record, &wf, snap, now,
                ))?;
            }
            Ok(())
        })
        .await
    }
}

#[async_trait::async_trait]
impl StateStore for SqliteStore {
    async fn send_signal(
        &self,
        run_id: &str,
        name: &str,
        payload: &Value,
    ) -> Result<crate::SignalReceipt> {
        let (run_id, name, payload) = (run_id.to_owned(), name.to_owned(), payload.clone());
        self.write(move |b, _| {
            run_ready(crate::signals::send_signal(
                b,
                &run_id,
                &name,
                &payload,
                now_ms(),
            ))
        })
        .await
    }

    async fn signals(&self, run_id: &str) -> Result<Vec<crate::StoredSignal>> {
        let run_id = run_id.to_owned();
        self.read(move |b, _| run_ready(crate::signals::signals(b, &run_id)))
            .await
    }

    fn schedules(&self) -> Arc<dyn crate::ScheduleStore> {
        Arc::new(super::schedules::SqliteSchedules::new(self))
    }

    async fn purge_rows(&self) -> Result<Vec<crate::retention::PurgeRow>> {
        self.purge_rows_sqlite().await
    }

    async fn delete_runs(&self, ids: &[String]) -> Result<Vec<String>> {
        self.delete_runs_sqlite(ids).await
    }

    async fn reclaim_space(&self, rewrite: bool) -> Result<crate::retention::Reclaimed> {
        self.reclaim_sqlite(rewrite).await
    }

    async fn registry(&self) -> Result<Arc<dyn WorkflowRegistry>> {
        Ok(Arc::new(SqliteRegistry::open(self).await?))
    }

    async fn create_run_encoded(
        &self,
        record: &RunRecord,
        wf: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let (record, wf) = (record.clone(), wf.to_vec());
        self.write(move |b, opts| run_ready(logic::create_run(b, opts, &record, &wf, &snap)))
            .await
    }

    async fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease> {
        let (run_id, owner) = (run_id.to_owned(), owner.clone());
        self.write(move |b, opts| run_ready(logic::acquire(b, opts, &run_id, &owner, now_ms())))
            .await
    }

    async fn heartbeat(&self, lease: &Lease) -> Result<Renewed> {
        let lease = lease.clone();
        self.write(move |b, opts| run_ready(logic::heartbeat(b, opts, &lease, now_ms())))
            .await
    }

    async fn release(&self, lease: &Lease) -> Result<()> {
        let lease = lease.clone();
        self.write(move |b, _| run_ready(logic::release(b, &lease)))
            .await
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        snapshot: &Value,
    ) -> Result<Checkpointed> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let (lease, update) = (lease.clone(), update.clone());
        self.write(move |b, opts| {
            run_ready(logic::checkpoint(
                b,
                opts,
                &lease,
                expected_step,
                &update,
                &snap,
                now_ms(),
            ))
        })
        .await
    }

    async fn append(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        entry: &StepEntry,
    ) -> Result<Checkpointed> {
        let entry = EncodedStep::new(entry, self.opts.snapshot_version)?;
        let (lease, update) = (lease.clone(), update.clone());
        self.write(move |b, opts| {
            run_ready(logic::append(
                b,
                opts,
                &lease,
                expected_step,
                &update,
                &entry,
                now_ms(),
            ))
        })
        .await
    }

    async fn append_journal(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        entry: &StepEntry,
    ) -> Result<Checkpointed> {
        let entry = EncodedStep::new(entry, self.opts.snapshot_version)?.journal();
        let (lease, update) = (lease.clone(), update.clone());
        self.write(move |b, opts| {
            run_ready(logic::append(
                b,
                opts,
                &lease,
                expected_step,
                &update,
                &entry,
                now_ms(),
            ))
        })
        .await
    }

    async fn append_steps(
        &self,
        lease: &Lease,
        expected_step: u64,
        steps: &[crate::StepWrite],
    ) -> Result<Checkpointed> {
        let steps = crate::group::encode(steps, self.opts.snapshot_version)?;
        let lease = lease.clone();
        self.write(move |b, opts| {
            run_ready(crate::group::append_steps(
                b,
                opts,
                &lease,
                expected_step,
                &steps,
                now_ms(),
            ))
        })
        .await
    }

    fn commit_mode(&self) -> crate::CommitMode {
        self.opts.commit
    }

    async fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        expected_step: u64,
        update: &RecordUpdate,
    ) -> Result<RunRecord> {
        let (run_id, lease, update) = (run_id.to_owned(), lease.cloned(), update.clone());
        self.write(move |b, _| {
            run_ready(logic::set_status(
                b,
                &run_id,
                lease.as_ref(),
                expected_step,
                &update,
                now_ms(),
            ))
        })
        .await
    }

    async fn request_cancel(&self, run_id: &str) -> Result<CancelRequest> {
        let run_id = run_id.to_owned();
        self.write(move |b, _| run_ready(logic::request_cancel(b, &run_id, now_ms())))
            .await
    }

    async fn request_pause(&self, run_id: &str) -> Result<PauseRequest> {
        let run_id = run_id.to_owned();
        self.write(move |b, _| run_ready(logic::request_pause(b, &run_id)))
            .await
    }

    async fn load(&self, run_id: &str) -> Result<StoredRun> {
        let run_id = run_id.to_owned();
        self.read(move |b, opts| run_ready(logic::load(b, opts, &run_id)))
            .await
    }

    async fn record(&self, run_id: &str) -> Result<RunRecord> {
        let run_id = run_id.to_owned();
        self.read(move |b, _| run_ready(logic::record(b, &run_id)))
            .await
    }

    async fn load_at(&self, run_id: &str, step: u64) -> Result<StoredRun> {
        let run_id = run_id.to_owned();
        self.read(move |b, opts| run_ready(logic::load_at(b, opts, &run_id, step)))
            .await
    }

    async fn fork(&self, spec: &ForkSpec) -> Result<RunRecord> {
        let spec = spec.clone();
        self.write(move |b, opts| run_ready(logic::fork(b, opts, &spec, now_ms())))
            .await
    }

    async fn list(&self) -> Result<Vec<RunRecord>> {
        self.read(|b, _| run_ready(logic::list(b))).await
    }

    async fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>> {
        let id = correlation_id.to_owned();
        self.read(move |b, _| run_ready(logic::find_by_correlation(b, &id)))
            .await
    }

    async fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        let run_id = run_id.to_owned();
        self.read(move |b, _| run_ready(logic::history(b, &run_id)))
            .await
    }

    async fn read_log(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<LogEntry>> {
        let run_id = run_id.to_owned();
        self.read(move |b, _| run_ready(logic::read_log(b, &run_id, after, limit)))
            .await
    }

    async fn claim(
        &self,
        owner: &OwnerId,
        scope: ClaimScope,
        limit: usize,
    ) -> Result<Vec<Claimed>> {
        let owner = owner.clone();
        self.write(move |b, opts| run_ready(logic::claim(b, opts, &owner, scope, limit, now_ms())))
            .await
    }

    async fn work_wakeups(&self) -> Result<Option<crate::EventWakeups>> {
        // No notifications here: a worker polls (ARCHITECTURE.md, *hensu-store*).
        Ok(None)
    }

    async fn queue_depth(&self) -> Result<u64> {
        self.read(|b, _| run_ready(crate::backend::Backend::claimable_count(b, now_ms())))
            .await
    }

    async fn heartbeat_owner(&self, owner: &OwnerId) -> Result<Vec<(String, Renewed)>> {
        let owner = owner.clone();
        self.write(move |b, opts| run_ready(logic::heartbeat_owner(b, opts, &owner, now_ms())))
            .await
    }
}
