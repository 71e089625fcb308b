//! [`StateStore`] on SQLite: each operation is [`crate::logic`]'s, run in one transaction
//! of the store's connection.

use std::sync::Arc;

use serde_json::Value;

use super::SqliteStore;
use crate::logic::{self, EncodedStep, run_ready};
use crate::time::now_ms;
use crate::{
    CancelRequest, CheckpointMeta, Checkpointed, Claimed, Lease, LogEntry, OwnerId, RecordUpdate,
    Renewed, Result, RunRecord, StateStore, StepEntry, StoredRun, encode_snapshot,
};
use crate::{SqliteRegistry, WorkflowRegistry};

impl SqliteStore {
    /// Tags a run with its tenant (the registry's [`crate::WorkflowRegistry::tag_run`]).
    pub(crate) fn tag_run(&self, run_id: &str, tenant: &str, workflow_id: &str) -> Result<()> {
        self.write(|b| run_ready(logic::tag_run(b, run_id, tenant, workflow_id, now_ms())))
    }

    /// A run and its tenant tag in one transaction.
    pub(crate) fn create_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        wf: &[u8],
        snapshot: &Value,
    ) -> Result<()> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        self.write(|b| {
            run_ready(logic::create_tenant_run(
                b,
                &self.opts,
                tenant,
                record,
                wf,
                &snap,
                now_ms(),
            ))
        })
    }
}

impl StateStore for SqliteStore {
    fn registry(&self) -> Result<Arc<dyn WorkflowRegistry>> {
        Ok(Arc::new(SqliteRegistry::open(self)?))
    }

    fn create_run_encoded(&self, record: &RunRecord, wf: &[u8], snapshot: &Value) -> Result<()> {
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        self.write(|b| run_ready(logic::create_run(b, &self.opts, record, wf, &snap)))
    }

    fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease> {
        self.write(|b| run_ready(logic::acquire(b, &self.opts, run_id, owner, now_ms())))
    }

    fn heartbeat(&self, lease: &Lease) -> Result<Renewed> {
        self.write(|b| run_ready(logic::heartbeat(b, &self.opts, lease, now_ms())))
    }

    fn release(&self, lease: &Lease) -> Result<()> {
        self.write(|b| run_ready(logic::release(b, lease)))
    }

    fn checkpoint(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        snapshot: &Value,
    ) -> Result<Checkpointed> {
        // Encode outside the lock: the transaction only copies bytes.
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        self.write(|b| {
            run_ready(logic::checkpoint(
                b,
                &self.opts,
                lease,
                expected_step,
                update,
                &snap,
                now_ms(),
            ))
        })
    }

    fn append(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        entry: &StepEntry,
    ) -> Result<Checkpointed> {
        let entry = EncodedStep::new(entry, self.opts.snapshot_version)?;
        self.write(|b| {
            run_ready(logic::append(
                b,
                &self.opts,
                lease,
                expected_step,
                update,
                &entry,
                now_ms(),
            ))
        })
    }

    fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        expected_step: u64,
        update: &RecordUpdate,
    ) -> Result<RunRecord> {
        self.write(|b| {
            run_ready(logic::set_status(
                b,
                run_id,
                lease,
                expected_step,
                update,
                now_ms(),
            ))
        })
    }

    fn request_cancel(&self, run_id: &str) -> Result<CancelRequest> {
        self.write(|b| run_ready(logic::request_cancel(b, run_id, now_ms())))
    }

    fn load(&self, run_id: &str) -> Result<StoredRun> {
        self.read(|b| run_ready(logic::load(b, &self.opts, run_id)))
    }

    fn record(&self, run_id: &str) -> Result<RunRecord> {
        self.read(|b| run_ready(logic::record(b, run_id)))
    }

    fn list(&self) -> Result<Vec<RunRecord>> {
        self.read(|b| run_ready(logic::list(b)))
    }

    fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>> {
        self.read(|b| run_ready(logic::find_by_correlation(b, correlation_id)))
    }

    fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        self.read(|b| run_ready(logic::history(b, run_id)))
    }

    fn read_log(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<LogEntry>> {
        self.read(|b| run_ready(logic::read_log(b, run_id, after, limit)))
    }

    fn claim(&self, owner: &OwnerId, limit: usize) -> Result<Vec<Claimed>> {
        self.write(|b| run_ready(logic::claim(b, &self.opts, owner, limit, now_ms())))
    }

    fn heartbeat_owner(&self, owner: &OwnerId) -> Result<Vec<(String, Renewed)>> {
        self.write(|b| run_ready(logic::heartbeat_owner(b, &self.opts, owner, now_ms())))
    }
}
