//! The server's registry: workflow definitions per tenant (with a soft delete) and the tenant
//! each run belongs to. It lives beside the run log (same SQLite file or PostgreSQL database)
//! in tables of its own (`workflow_defs`, `run_tenants`), so the [`crate::StateStore`]
//! contract is unchanged. See docs/server.md.
//!
//! - A definition is opaque JSON (the compiled workflow); the registry keeps its bytes.
//! - [`WorkflowRegistry::put_workflow`] upserts and revives a soft-deleted row;
//!   [`WorkflowRegistry::delete_workflow`] only marks it (runs that reference it keep working).
//! - Every read filters by tenant: one workflow id can exist in two tenants.

use std::sync::Arc;

use serde_json::Value;

use crate::{Result, StoreError};

mod pg;
mod sqlite;

pub use pg::PgRegistry;
pub use sqlite::SqliteRegistry;

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
pub trait WorkflowRegistry: Send + Sync {
    /// Creates or replaces `(tenant, id)`; a soft-deleted row comes back. `true` when no live
    /// row existed before (created).
    fn put_workflow(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
        definition: &Value,
    ) -> Result<bool>;

    /// The live definition, if any.
    fn get_workflow(&self, tenant: &str, id: &str) -> Result<Option<StoredWorkflow>>;

    /// The tenant's live workflows, sorted by id.
    fn list_workflows(&self, tenant: &str) -> Result<Vec<WorkflowSummary>>;

    /// Soft-deletes a live row; `false` when there was none.
    fn delete_workflow(&self, tenant: &str, id: &str) -> Result<bool>;

    /// Records that `run_id` (of `workflow_id`) belongs to `tenant`. A run id is owned once:
    /// [`StoreError::AlreadyExists`] if it is taken.
    fn tag_run(&self, run_id: &str, tenant: &str, workflow_id: &str) -> Result<()>;

    /// The tenant of a run, if it was tagged.
    fn run_tenant(&self, run_id: &str) -> Result<Option<String>>;

    /// The tenant's run ids, oldest first.
    fn tenant_runs(&self, tenant: &str) -> Result<Vec<String>>;
}

/// Opens the registry beside the store `url_or_path` names (the same forms as
/// [`crate::open_store`]). A `:memory:` store gets a registry of its own in memory.
pub fn open_registry(url_or_path: &str) -> Result<Arc<dyn WorkflowRegistry>> {
    let s = url_or_path.trim();
    if s.starts_with("postgres://") || s.starts_with("postgresql://") {
        return Ok(Arc::new(PgRegistry::open(s, None)?));
    }
    if s == ":memory:" || s == "sqlite::memory:" {
        return Ok(Arc::new(SqliteRegistry::in_memory()?));
    }
    if let Some((scheme, _)) = s.split_once("://")
        && scheme != "sqlite"
    {
        return Err(StoreError::Invalid(format!(
            "unknown store URL scheme `{scheme}://` (expected postgres://, sqlite:// or a path)"
        )));
    }
    let path = std::path::Path::new(s.strip_prefix("sqlite://").unwrap_or(s));
    let file = if path.is_dir() {
        path.join(crate::STATE_DB)
    } else {
        path.to_path_buf()
    };
    Ok(Arc::new(SqliteRegistry::open_file(file)?))
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
