//! The server's registry: workflow definitions per tenant (with a soft delete) and the tenant
//! each run belongs to. It lives beside the run log (same SQLite file or PostgreSQL database)
//! in tables of its own (`workflow_defs`, `run_tenants`), reached from the store's handle
//! ([`crate::StateStore::registry`]) and written through its connection or pool, so a run and
//! its tenant tag share one transaction. See docs/server.md.
//!
//! - A definition is opaque JSON (the compiled workflow); the registry keeps its bytes.
//! - [`WorkflowRegistry::put_workflow`] upserts and revives a soft-deleted row;
//!   [`WorkflowRegistry::delete_workflow`] only marks it (runs that reference it keep working).
//! - Every read filters by tenant: one workflow id can exist in two tenants.

use serde_json::Value;

use crate::{
    EventBounds, IdempotencyKey, KeyedStart, Result, RunPage, RunQuery, RunRecord, StoreError,
    TenantEvent,
};

/// A live workflow definition of a tenant.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredWorkflow {
    pub tenant_id: String,
    pub workflow_id: String,
    pub version: String,
    pub definition: Value,
    /// Unix milliseconds.
    pub created_at: u64,
    pub updated_at: u64,
}

/// One line of a tenant's workflow list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkflowSummary {
    pub workflow_id: String,
    pub version: String,
}

/// Workflow definitions and run ownership, per tenant. Object safe, `Send + Sync`.
#[async_trait::async_trait]
pub trait WorkflowRegistry: Send + Sync {
    /// Creates or replaces `(tenant, id)`; a soft-deleted row comes back. `true` when no live
    /// row existed before (created).
    async fn put_workflow(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
        definition: &Value,
    ) -> Result<bool>;

    /// The live definition, if any.
    async fn get_workflow(&self, tenant: &str, id: &str) -> Result<Option<StoredWorkflow>>;

    /// The tenant's live workflows, sorted by id.
    async fn list_workflows(&self, tenant: &str) -> Result<Vec<WorkflowSummary>>;

    /// Soft-deletes a live row; `false` when there was none.
    async fn delete_workflow(&self, tenant: &str, id: &str) -> Result<bool>;

    /// Records that `run_id` (of `workflow_id`) belongs to `tenant`. A run id is owned once:
    /// [`StoreError::AlreadyExists`] if it is taken.
    async fn tag_run(&self, run_id: &str, tenant: &str, workflow_id: &str) -> Result<()>;

    /// Creates a run of `tenant` ([`crate::StateStore::create_run_encoded`]) and its tenant
    /// tag ([`WorkflowRegistry::tag_run`]) in one transaction: either both are written or
    /// neither, and the run is never visible without its owner.
    async fn create_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
    ) -> Result<()>;

    /// [`WorkflowRegistry::create_tenant_run`] for several runs of one workflow in one
    /// transaction (a batch start): every run and its tag are written, or none.
    async fn create_tenant_runs(
        &self,
        tenant: &str,
        runs: &[(RunRecord, Value)],
        workflow_json: &[u8],
    ) -> Result<()>;

    /// [`WorkflowRegistry::create_tenant_run`] under an idempotency key, in the same one
    /// transaction: when the key started a run within [`crate::IDEMPOTENCY_WINDOW_MS`], the
    /// same request gets [`KeyedStart::Existing`] (nothing written) and another request
    /// [`StoreError::IdempotencyKeyReused`]; an older key is taken over.
    async fn create_keyed_tenant_run(
        &self,
        tenant: &str,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
        key: &IdempotencyKey,
    ) -> Result<KeyedStart>;

    /// The tenant of a run, if it was tagged.
    async fn run_tenant(&self, run_id: &str) -> Result<Option<String>>;

    /// The tenant's run ids, oldest first.
    async fn tenant_runs(&self, tenant: &str) -> Result<Vec<String>>;

    /// One page of the tenant's runs matching `query`, newest first, in one SQL query (a
    /// keyset cursor; docs/server.md, *Paging*).
    async fn tenant_runs_page(&self, tenant: &str, query: &RunQuery) -> Result<RunPage>;

    /// Up to `limit` tenant events with `seq > after`, in `seq` order: of `tenant`, or of
    /// every tenant when `None` (crate docs of [`TenantEvent`]; the tenant filter is the
    /// `(tenant_id, seq)` index). Every `seq` below the last one returned that is not
    /// returned either belongs to another tenant or was never committed: none shows up later.
    async fn events_after(
        &self,
        tenant: Option<&str>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<TenantEvent>>;

    /// The oldest and the latest `seq` held.
    async fn event_bounds(&self) -> Result<EventBounds>;

    /// Wake-ups after other processes' commits of events (PostgreSQL: `LISTEN`), or `None`
    /// where there are none to have (SQLite: one process writes a server's runs, which wakes
    /// its followers itself).
    async fn event_wakeups(&self) -> Result<Option<crate::EventWakeups>>;

    /// Deletes up to `limit` of the oldest events written before `before` (unix ms), never
    /// the latest one; returns how many went.
    async fn trim_events(&self, before: u64, limit: usize) -> Result<u64>;
}

pub(crate) fn encode(definition: &Value) -> Result<Vec<u8>> {
    serde_json::to_vec(definition)
        .map_err(|e| StoreError::Invalid(format!("workflow definition does not serialize: {e}")))
}

pub(crate) fn decode(target: &str, bytes: &[u8]) -> Result<Value> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        path: std::path::PathBuf::from(target),
        detail: format!("a stored workflow definition is not JSON: {e}"),
    })
}

pub(crate) fn ms(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

pub(crate) fn now() -> i64 {
    i64::try_from(crate::now_ms()).unwrap_or(i64::MAX)
}
