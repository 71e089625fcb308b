//! What is stored when a run is created: its id, its [`StoredWorkflow`] envelope and its
//! initial state ([`create_run`]).

use std::path::Path;
use std::sync::Arc;

use hensu_ir::Workflow;
use hensu_runtime::{Context, RunState};
use hensu_store::{
    IdempotencyKey, KeyedStart, OwnerId, RunRecord, RunStatus, StateStore, StoreError,
    WorkflowRegistry,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ReviewMode;
use crate::durable::{DurableRun, SnapshotRedactor, snapshot};

/// The format tag of the workflow stored with a run.
pub const WORKFLOW_FORMAT: &str = "hensu-wire";

/// A fresh run id, the one scheme of the CLI and the server: a random (v4) UUID in its
/// hyphenated form, as upstream Hensu's execution ids. Unguessable, and valid under the id
/// rule. Ids of runs stored under an earlier scheme (`r` + 11 hex digits) stay valid: an id is
/// an opaque string to every reader.
pub fn new_run_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// FNV-1a 64 of the source bytes (stable across versions and platforms).
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// The source file a run was started from (a warning on resume says when it changed since).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRef {
    /// The canonical path.
    pub path: String,
    /// [`content_hash`] of the file when the run started.
    pub hash: Option<String>,
}

impl SourceRef {
    /// The source at `path` as it is now.
    pub fn of(path: &Path) -> SourceRef {
        let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        SourceRef {
            path: abs.display().to_string(),
            hash: std::fs::read(path).ok().map(|b| content_hash(&b)),
        }
    }
}

/// How the run was started; a resume or a worker runs it the same way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredOptions {
    /// The stub scenario.
    #[serde(default)]
    pub scenario: Option<String>,
    /// Stub agents forced for every model.
    #[serde(default)]
    pub stub: bool,
    /// How reviews are decided; absent in runs stored before review modes (they defer).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "review_spelling"
    )]
    pub review: Option<ReviewMode>,
    /// The W3C `traceparent` the run was started under (`POST /api/v1/executions`): its trace
    /// is part of the caller's (docs/observability.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

/// `ReviewMode` as its stored word; an unknown word reads as deferred (never approves).
mod review_spelling {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::ReviewMode;

    pub fn serialize<S: Serializer>(mode: &Option<ReviewMode>, s: S) -> Result<S::Ok, S::Error> {
        match mode {
            Some(m) => s.serialize_str(m.as_str()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ReviewMode>, D::Error> {
        let word = Option::<String>::deserialize(d)?;
        Ok(word.map(|w| ReviewMode::parse(Some(&w))))
    }
}

/// The envelope stored with every run (CLI and server): the compiled workflow in the wire
/// format (a resume needs no source), where it came from and how the run was started.
///
/// ```json
/// {"format": "hensu-wire", "workflow": {…}, "source": {"path": "…", "hash": "fnv1a64:…"},
///  "options": {"scenario": null, "stub": false, "review": "deferred"}}
/// ```
#[derive(Clone, Debug)]
pub struct StoredWorkflow {
    pub workflow: Workflow,
    pub source: Option<SourceRef>,
    pub options: StoredOptions,
}

impl StoredWorkflow {
    /// The JSON bytes, written straight from the IR: building a `Value` of the workflow first
    /// cost O(workflow) allocations per run.
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        #[derive(Serialize)]
        struct Envelope<'a> {
            format: &'a str,
            workflow: hensu_ir::Wire<'a>,
            source: Option<&'a SourceRef>,
            options: &'a StoredOptions,
        }
        serde_json::to_vec(&Envelope {
            format: WORKFLOW_FORMAT,
            workflow: hensu_ir::Wire(&self.workflow),
            source: self.source.as_ref(),
            options: &self.options,
        })
        .map_err(|e| format!("the workflow does not serialize: {e}"))
    }

    /// Only the source of a stored envelope (listings need no workflow); `None` when the run
    /// has none or the envelope is not one this version reads.
    pub fn source_of(envelope: &Value) -> Option<SourceRef> {
        envelope
            .get("source")
            .and_then(|s| serde_json::from_value(s.clone()).ok())
    }

    /// The envelope stored with run `run_id` (as `StateStore::load` returns it).
    pub fn decode(run_id: &str, envelope: &Value) -> Result<StoredWorkflow, String> {
        if envelope.get("format").and_then(Value::as_str) != Some(WORKFLOW_FORMAT) {
            return Err(format!(
                "the workflow stored with run `{run_id}` is not in a format this hensu reads"
            ));
        }
        let wire = envelope
            .get("workflow")
            .ok_or_else(|| format!("run `{run_id}` has no stored workflow"))?;
        let text = serde_json::to_string(wire)
            .map_err(|e| format!("run `{run_id}`: stored workflow: {e}"))?;
        let workflow = hensu_ir::from_json(&text)
            .map_err(|e| format!("the workflow stored with run `{run_id}` does not load: {e:?}"))?;
        let field = |name: &str| envelope.get(name).filter(|v| !v.is_null()).cloned();
        let source = field("source")
            .map(serde_json::from_value::<SourceRef>)
            .transpose()
            .map_err(|e| format!("run `{run_id}`: stored source: {e}"))?;
        let options = field("options")
            .map(serde_json::from_value::<StoredOptions>)
            .transpose()
            .map_err(|e| format!("run `{run_id}`: stored options: {e}"))?
            .unwrap_or_default();
        Ok(StoredWorkflow {
            workflow,
            source,
            options,
        })
    }
}

/// A run to create.
pub struct NewRun<'a> {
    pub stored: &'a StoredWorkflow,
    pub input: &'a Context,
    /// Queued for a worker (no lease taken), or leased by `owner` to run here.
    pub queued: bool,
    pub owner: &'a OwnerId,
    /// Replaces secrets in every stored snapshot.
    pub redact: Option<SnapshotRedactor>,
    /// The server's tenant, tagged in the run's own transaction
    /// ([`WorkflowRegistry::create_tenant_run`]; the registry must be the store's own,
    /// [`StateStore::registry`]) so the run is never visible without its owner.
    pub tenant: Option<(&'a dyn WorkflowRegistry, &'a str)>,
    /// With a tenant: the start's idempotency key, recorded in the same transaction; a key
    /// that started a run already answers [`RunHandle::Replayed`] (docs/server.md,
    /// *Idempotent starts*).
    pub idempotency: Option<&'a IdempotencyKey>,
}

/// A created run.
pub enum RunHandle {
    /// Stored with this process's lease: run it here.
    Leased(Box<DurableRun>),
    /// Stored without a lease: queued for a worker, or claimed by a worker in the instant
    /// between its creation and this process's lease (it runs there).
    Elsewhere(String),
    /// Not created: the idempotency key started this run already.
    Replayed(String),
}

impl RunHandle {
    pub fn run_id(&self) -> &str {
        match self {
            RunHandle::Leased(d) => d.run_id(),
            RunHandle::Elsewhere(id) | RunHandle::Replayed(id) => id,
        }
    }
}

/// Stores a new run under a fresh [`new_run_id`]: the record, the envelope and the initial
/// state (with the tenant tag, if any, in the same transaction), then (unless queued) takes
/// the lease.
pub async fn create_run(
    store: &Arc<dyn StateStore>,
    new: NewRun<'_>,
) -> Result<RunHandle, StoreError> {
    let workflow = &new.stored.workflow;
    let run_id = new_run_id();
    let envelope = new.stored.encode().map_err(StoreError::Invalid)?;
    let mut record = RunRecord::new(
        run_id.clone(),
        workflow.id.clone(),
        workflow.version.clone(),
        Some(workflow.start_node.clone()),
    );
    let initial = RunState::new(
        run_id.clone(),
        workflow.id.clone(),
        workflow.start_node.clone(),
        new.input.clone(),
    );
    if new.queued {
        record.status = RunStatus::Queued;
    }
    let snap = snapshot(&initial, new.redact.as_ref())?;
    match new.tenant {
        // The run and its tenant tag in one transaction: never visible without its owner.
        Some((registry, tenant)) => match new.idempotency {
            None => {
                registry
                    .create_tenant_run(tenant, &record, &envelope, &snap)
                    .await?
            }
            Some(key) => {
                let started = registry
                    .create_keyed_tenant_run(tenant, &record, &envelope, &snap, key)
                    .await?;
                if let KeyedStart::Existing { run_id } = started {
                    return Ok(RunHandle::Replayed(run_id));
                }
            }
        },
        None => store.create_run_encoded(&record, &envelope, &snap).await?,
    }
    if new.queued {
        return Ok(RunHandle::Elsewhere(run_id));
    }
    match DurableRun::lease_created(store.clone(), &record, &initial, new.owner, new.redact).await {
        Ok(durable) => Ok(RunHandle::Leased(Box::new(durable))),
        Err(StoreError::RunLocked { .. }) => Ok(RunHandle::Elsewhere(run_id)),
        Err(e) => Err(e),
    }
}

/// Stores one queued run of `stored` per context of `inputs` for `tenant`, all in one
/// transaction ([`WorkflowRegistry::create_tenant_runs`]: every run or none), for workers to
/// claim; returns their ids in order. A batch start (docs/server.md, *Batch starts*).
pub async fn create_queued_tenant_runs(
    registry: &dyn WorkflowRegistry,
    tenant: &str,
    stored: &StoredWorkflow,
    inputs: &[Context],
    redact: Option<&SnapshotRedactor>,
) -> Result<Vec<String>, StoreError> {
    let workflow = &stored.workflow;
    let envelope = stored.encode().map_err(StoreError::Invalid)?;
    let mut runs = Vec::with_capacity(inputs.len());
    for input in inputs {
        let run_id = new_run_id();
        let mut record = RunRecord::new(
            run_id.clone(),
            workflow.id.clone(),
            workflow.version.clone(),
            Some(workflow.start_node.clone()),
        );
        record.status = RunStatus::Queued;
        let initial = RunState::new(
            run_id,
            workflow.id.clone(),
            workflow.start_node.clone(),
            input.clone(),
        );
        runs.push((record, snapshot(&initial, redact)?));
    }
    registry
        .create_tenant_runs(tenant, &runs, &envelope)
        .await?;
    Ok(runs.into_iter().map(|(r, _)| r.run_id).collect())
}
