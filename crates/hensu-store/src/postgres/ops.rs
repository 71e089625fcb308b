//! [`StateStore`] on PostgreSQL: each operation is [`crate::logic`]'s, run in one
//! transaction of a pooled connection.

use std::sync::Arc;

use serde_json::Value;
use tokio_postgres::IsolationLevel;

use super::backend::PgTx;
use super::{PgStore, pg_err, pool_err};
use crate::logic::{self, EncodedStep};
use crate::time::now_ms;
use crate::{
    CancelRequest, CheckpointMeta, Checkpointed, ClaimScope, Claimed, ForkSpec, Lease, LogEntry,
    OwnerId, PauseRequest, RecordUpdate, Renewed, Result, RunRecord, StateStore, StepEntry,
    StoredRun, encode_snapshot,
};
use crate::{IdempotencyKey, KeyedStart, PgRegistry, RunPage, RunQuery, WorkflowRegistry};

/// Runs `$body` with `$b` (a [`PgTx`]) in a transaction on a pooled connection (`$read`:
/// `REPEATABLE READ`, read only); commits when it returns `Ok`, rolls back (by dropping)
/// otherwise.
macro_rules! in_tx {
    ($inner:ident, $b:ident, $read:expr, $body:expr) => {{
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
        let tx = builder
            .start()
            .await
            .map_err(|e| pg_err(&$inner.target, e))?;
        let (out, wakes_workers) = {
            let mut $b = PgTx {
                tx: &tx,
                target: &$inner.target,
                path: &$inner.path,
                wakes_workers: false,
            };
            let out = $body.await?;
            (out, $b.wakes_workers)
        };
        tx.commit().await.map_err(|e| pg_err(&$inner.target, e))?;
        if wakes_workers {
            wake_workers(&client).await;
        }
        Ok(out)
    }};
}

/// Notifies `hensu_work` (idle workers `LISTEN` there) after a transaction that queued a run
/// or sent a signal has committed: in a transaction of its own that does not wait for its
/// WAL flush, because PostgreSQL holds a database-wide lock from a transaction's `NOTIFY`
/// until its commit is flushed — inside the writing transaction, every run start and signal
/// of the cluster would commit one flush at a time. The payload is the schema (a channel is
/// database-wide; listeners of other schemas ignore it). A wake-up that fails or is lost (a
/// crash right after the commit) only delays the work until the workers' bounded poll, so it
/// is not the write's error: the write has committed. One statement in its own implicit
/// transaction (the setting is local to it), so a failure leaves the pooled connection clean.
async fn wake_workers(client: &deadpool_postgres::Client) {
    let _ = client
        .batch_execute(
            "SELECT set_config('synchronous_commit', 'off', true), \
             pg_notify('hensu_work', current_schema())",
        )
        .await;
}

/// A running run's step in one statement ([`super::step`]). `None`: not eligible, a
/// compaction is due, or a condition failed — the caller takes the checked path, which
/// compacts in the step's transaction or names the failure.
async fn one_statement_step(
    inner: &Arc<super::Inner>,
    lease: &Lease,
    expected_step: u64,
    update: &RecordUpdate,
    entry: &EncodedStep,
) -> Result<Option<Checkpointed>> {
    if !super::step::eligible(update, entry) {
        return Ok(None);
    }
    let now = now_ms();
    let Some(stepped) = super::step::step(inner, lease, expected_step, update, entry, now).await?
    else {
        return Ok(None);
    };
    let step = expected_step.saturating_add(1);
    let log = &stepped.log;
    let due = inner.opts.snapshot_policy.due(
        log.log_rows.saturating_add(1),
        log.log_bytes.saturating_add(entry.delta.len() as u64),
        log.snapshot_bytes,
    );
    // A due compaction the store makes is excluded by the statement: here `due` is one the
    // caller is asked to send.
    Ok(Some(super::step::checkpointed(
        step,
        now,
        &stepped,
        due && !entry.by_store,
    )))
}

impl PgStore {
    /// Tags a run with its tenant (the registry's [`crate::WorkflowRegistry::tag_run`]).
    pub(crate) async fn tag_run(
        &self,
        run_id: &str,
        tenant: &str,
        workflow_id: &str,
    ) -> Result<()> {
        let (run_id, tenant, workflow_id) = (
            run_id.to_string(),
            tenant.to_string(),
            workflow_id.to_string(),
        );
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::tag_run(&mut b, &run_id, &tenant, &workflow_id, now_ms())
            })
        })
        .await
    }

    /// One page of a tenant's runs (the registry's
    /// [`crate::WorkflowRegistry::tenant_runs_page`]), in one read-only transaction.
    pub(crate) async fn tenant_runs_page(&self, tenant: &str, query: &RunQuery) -> Result<RunPage> {
        let (tenant, query) = (tenant.to_string(), query.clone());
        self.with(move |inner| async move {
            in_tx!(inner, b, true, {
                crate::page::tenant_runs_page(&mut b, &tenant, &query)
            })
        })
        .await
    }

    /// A run, its tenant tag and its idempotency key in one transaction (the registry's
    /// [`crate::WorkflowRegistry::create_keyed_tenant_run`]).
    pub(crate) async fn create_keyed_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
        key: &IdempotencyKey,
    ) -> Result<KeyedStart> {
        let (tenant, record, wf, key) = (
            tenant.to_string(),
            record.clone(),
            workflow_json.to_vec(),
            key.clone(),
        );
        let snap = encode_snapshot(self.options().snapshot_version, snapshot)?;
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                crate::idempotency::create_keyed_tenant_run(
                    &mut b,
                    &inner.opts,
                    &tenant,
                    &record,
                    &wf,
                    &snap,
                    &key,
                    now_ms(),
                )
            })
        })
        .await
    }

    /// A run and its tenant tag in one transaction.
    pub(crate) async fn create_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        let (tenant, record, wf) = (tenant.to_string(), record.clone(), workflow_json.to_vec());
        let snap = encode_snapshot(self.options().snapshot_version, snapshot)?;
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::create_tenant_run(
                    &mut b,
                    &inner.opts,
                    &tenant,
                    &record,
                    &wf,
                    &snap,
                    now_ms(),
                )
            })
        })
        .await
    }
}

impl PgStore {
    /// Runs of one workflow and their tenant tags in one transaction (a batch start).
    pub(crate) async fn create_tenant_runs(
        &self,
        tenant: &str,
        runs: &[(RunRecord, Value)],
        workflow_json: &[u8],
    ) -> Result<()> {
        let version = self.options().snapshot_version;
        let runs = runs
            .iter()
            .map(|(record, snapshot)| Ok((record.clone(), encode_snapshot(version, snapshot)?)))
            .collect::<Result<Vec<_>>>()?;
        let (tenant, wf) = (tenant.to_string(), workflow_json.to_vec());
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                async {
                    let now = now_ms();
                    for (record, snap) in &runs {
                        logic::create_tenant_run(
                            &mut b,
                            &inner.opts,
                            &tenant,
                            record,
                            &wf,
                            snap,
                            now,
                        )
                        .await?;
                    }
                    Ok::<(), crate::StoreError>(())
                }
            })
        })
        .await
    }
}

#[async_trait::async_trait]
impl StateStore for PgStore {
    async fn send_signal(
        &self,
        run_id: &str,
        name: &str,
        payload: &Value,
    ) -> Result<crate::SignalReceipt> {
        let (run_id, name, payload) = (run_id.to_string(), name.to_string(), payload.clone());
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                crate::signals::send_signal(&mut b, &run_id, &name, &payload, now_ms())
            })
        })
        .await
    }

    async fn signals(&self, run_id: &str) -> Result<Vec<crate::StoredSignal>> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, b, true, { crate::signals::signals(&mut b, &run_id) })
        })
        .await
    }

    fn schedules(&self) -> Arc<dyn crate::ScheduleStore> {
        Arc::new(super::schedules::PgSchedules::new(self))
    }

    async fn purge_rows(&self) -> Result<Vec<crate::retention::PurgeRow>> {
        self.purge_rows_pg().await
    }

    async fn delete_runs(&self, ids: &[String]) -> Result<Vec<String>> {
        self.delete_runs_pg(ids).await
    }

    async fn reclaim_space(&self, _rewrite: bool) -> Result<crate::retention::Reclaimed> {
        Ok(self.reclaim_pg())
    }

    async fn registry(&self) -> Result<Arc<dyn WorkflowRegistry>> {
        Ok(Arc::new(PgRegistry::open(self)))
    }

    async fn create_run_encoded(
        &self,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        let wf = workflow_json.to_vec();
        let snap = encode_snapshot(self.options().snapshot_version, snapshot)?;
        let record = record.clone();
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::create_run(&mut b, &inner.opts, &record, &wf, &snap)
            })
        })
        .await
    }

    async fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease> {
        let (run_id, owner) = (run_id.to_string(), owner.clone());
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::acquire(&mut b, &inner.opts, &run_id, &owner, now_ms())
            })
        })
        .await
    }

    async fn heartbeat(&self, lease: &Lease) -> Result<Renewed> {
        let lease = lease.clone();
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::heartbeat(&mut b, &inner.opts, &lease, now_ms())
            })
        })
        .await
    }

    async fn release(&self, lease: &Lease) -> Result<()> {
        let lease = lease.clone();
        self.with(move |inner| async move {
            in_tx!(inner, b, false, { logic::release(&mut b, &lease) })
        })
        .await
    }

    async fn checkpoint(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        snapshot: &Value,
    ) -> Result<Checkpointed> {
        let snap = encode_snapshot(self.options().snapshot_version, snapshot)?;
        let (lease, update) = (lease.clone(), update.clone());
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::checkpoint(
                    &mut b,
                    &inner.opts,
                    &lease,
                    expected_step,
                    &update,
                    &snap,
                    now_ms(),
                )
            })
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
        let entry = EncodedStep::new(entry, self.options().snapshot_version)?;
        let (lease, update) = (lease.clone(), update.clone());
        self.with(move |inner| async move {
            if let Some(done) =
                one_statement_step(&inner, &lease, expected_step, &update, &entry).await?
            {
                return Ok(done);
            }
            in_tx!(inner, b, false, {
                logic::append(
                    &mut b,
                    &inner.opts,
                    &lease,
                    expected_step,
                    &update,
                    &entry,
                    now_ms(),
                )
            })
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
        let entry = EncodedStep::new(entry, self.options().snapshot_version)?.journal();
        let (lease, update) = (lease.clone(), update.clone());
        self.with(move |inner| async move {
            if let Some(done) =
                one_statement_step(&inner, &lease, expected_step, &update, &entry).await?
            {
                return Ok(done);
            }
            in_tx!(inner, b, false, {
                logic::append(
                    &mut b,
                    &inner.opts,
                    &lease,
                    expected_step,
                    &update,
                    &entry,
                    now_ms(),
                )
            })
        })
        .await
    }

    async fn append_steps(
        &self,
        lease: &Lease,
        expected_step: u64,
        steps: &[crate::StepWrite],
    ) -> Result<Checkpointed> {
        let steps = crate::group::encode(steps, self.options().snapshot_version)?;
        let lease = lease.clone();
        self.with(move |inner| async move {
            let now = now_ms();
            if let Some(done) =
                super::group::group(&inner, &lease, expected_step, &steps, now).await?
            {
                return Ok(done);
            }
            in_tx!(inner, b, false, {
                crate::group::append_steps(&mut b, &inner.opts, &lease, expected_step, &steps, now)
            })
        })
        .await
    }

    fn commit_mode(&self) -> crate::CommitMode {
        self.options().commit
    }

    async fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        expected_step: u64,
        update: &RecordUpdate,
    ) -> Result<RunRecord> {
        let (run_id, lease, update) = (run_id.to_string(), lease.cloned(), update.clone());
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::set_status(
                    &mut b,
                    &run_id,
                    lease.as_ref(),
                    expected_step,
                    &update,
                    now_ms(),
                )
            })
        })
        .await
    }

    async fn request_cancel(&self, run_id: &str) -> Result<CancelRequest> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::request_cancel(&mut b, &run_id, now_ms())
            })
        })
        .await
    }

    async fn request_pause(&self, run_id: &str) -> Result<PauseRequest> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, b, false, { logic::request_pause(&mut b, &run_id) })
        })
        .await
    }

    async fn load(&self, run_id: &str) -> Result<StoredRun> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, b, true, {
                logic::load(&mut b, &inner.opts, &run_id)
            })
        })
        .await
    }

    async fn record(&self, run_id: &str) -> Result<RunRecord> {
        let run_id = run_id.to_string();
        self.with(
            move |inner| async move { in_tx!(inner, b, true, { logic::record(&mut b, &run_id) }) },
        )
        .await
    }

    async fn load_at(&self, run_id: &str, step: u64) -> Result<StoredRun> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, b, true, {
                logic::load_at(&mut b, &inner.opts, &run_id, step)
            })
        })
        .await
    }

    async fn fork(&self, spec: &ForkSpec) -> Result<RunRecord> {
        let spec = spec.clone();
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::fork(&mut b, &inner.opts, &spec, now_ms())
            })
        })
        .await
    }

    async fn list(&self) -> Result<Vec<RunRecord>> {
        self.with(move |inner| async move { in_tx!(inner, b, true, { logic::list(&mut b) }) })
            .await
    }

    async fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>> {
        let correlation_id = correlation_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, b, true, {
                logic::find_by_correlation(&mut b, &correlation_id)
            })
        })
        .await
    }

    async fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, b, true, { logic::history(&mut b, &run_id) })
        })
        .await
    }

    async fn read_log(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<LogEntry>> {
        let run_id = run_id.to_string();
        self.with(move |inner| async move {
            in_tx!(inner, b, true, {
                logic::read_log(&mut b, &run_id, after, limit)
            })
        })
        .await
    }

    async fn work_wakeups(&self) -> Result<Option<crate::EventWakeups>> {
        let inner = &self.inner;
        crate::events::pg::listen_on(&inner.config, &inner.target, "hensu_work", true)
            .await
            .map(Some)
    }

    async fn queue_depth(&self) -> Result<u64> {
        self.with(move |inner| async move {
            in_tx!(inner, b, true, {
                crate::backend::Backend::claimable_count(&mut b, now_ms())
            })
        })
        .await
    }

    async fn claim(
        &self,
        owner: &OwnerId,
        scope: ClaimScope,
        limit: usize,
    ) -> Result<Vec<Claimed>> {
        let owner = owner.clone();
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::claim(&mut b, &inner.opts, &owner, scope, limit, now_ms())
            })
        })
        .await
    }

    async fn heartbeat_owner(&self, owner: &OwnerId) -> Result<Vec<(String, Renewed)>> {
        let owner = owner.clone();
        self.with(move |inner| async move {
            in_tx!(inner, b, false, {
                logic::heartbeat_owner(&mut b, &inner.opts, &owner, now_ms())
            })
        })
        .await
    }
}
