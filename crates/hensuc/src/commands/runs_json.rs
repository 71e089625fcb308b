//! The `runs --json` contract (docs/schemas/runs.schema.json): one record shape whether the
//! runs come from a store (`runs`) or from a server (`runs --server`, `remote_runs`).

use hensu_store::{RunRecord, rfc3339};
use serde_json::{Value, json};

/// `runs --json` / `runs show --json`: a number like every hensuc JSON output's (version 1 wrote
/// the string `"1"`; nothing else changed in 2).
pub(crate) const RUNS_FORMAT_VERSION: u32 = 2;

/// A stored run as a `runs --json` record.
pub(crate) fn record_json(r: &RunRecord) -> Value {
    json!({
        "run_id": r.run_id,
        "workflow": r.workflow_id,
        "workflow_version": r.workflow_version,
        "status": r.status.as_str(),
        "current_node": r.current_node,
        "started": rfc3339(r.started_at),
        "updated": rfc3339(r.updated_at),
        "correlation_id": r.correlation_id,
        "exit_status": r.exit_status,
        "step": r.step,
        "cancel_requested": r.cancel_requested,
    })
}

/// A server's execution status (`GET /api/v1/executions`) as a `runs --json` record. The server
/// does not report the workflow's version: `null`.
pub(crate) fn record_of_execution(e: &Value) -> Value {
    let text = |k: &str| e.get(k).and_then(Value::as_str);
    json!({
        "run_id": text("executionId"),
        "workflow": text("workflowId"),
        "workflow_version": Value::Null,
        "status": text("status"),
        "current_node": text("currentNodeId"),
        "started": text("startedAt"),
        "updated": text("updatedAt"),
        "correlation_id": text("correlationId"),
        "exit_status": text("exitStatus"),
        "step": e.get("step").and_then(Value::as_u64).unwrap_or(0),
        "cancel_requested": e.get("cancelRequested").and_then(Value::as_bool).unwrap_or(false),
    })
}
