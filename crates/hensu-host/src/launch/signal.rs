//! Sending a signal to a stored run (docs/language.md, *Timers and signals*): the one
//! operation behind `hensuc signal`, the server's `POST /api/v1/executions/{id}/signals/{name}`
//! and the console's form. The payload is checked against the variables the run's
//! `awaitSignal` nodes of that name write, then stored ([`StateStore::send_signal`]): delivered
//! now when the run waits for it, when it reaches such a node otherwise.

use std::sync::Arc;

use hensu_ir::{Node, Workflow};
use hensu_runtime::inputs::{describe, input_fits};
use hensu_store::{RunStatus, SignalReceipt, StateStore, StoreError};
use serde_json::Value;

use super::StoredWorkflow;

/// Why a signal was refused. Each has a stable [`code`](SignalError::code).
#[derive(Debug, thiserror::Error)]
pub enum SignalError {
    #[error("no run `{0}`")]
    NotFound(String),
    #[error("run `{run_id}` has already ended ({status}); it takes no more signals")]
    Finished { run_id: String, status: RunStatus },
    #[error("workflow `{workflow}` has no `awaitSignal` for signal `{name}`{}", known_list(.known))]
    UnknownSignal {
        workflow: String,
        name: String,
        known: Vec<String>,
    },
    #[error("the payload of signal `{name}` does not fit: {message}")]
    Payload { name: String, message: String },
    #[error("{0}")]
    Store(StoreError),
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        String::new()
    } else {
        format!(" (it waits for: {})", known.join(", "))
    }
}

impl SignalError {
    /// `run_not_found`, `run_finished`, `unknown_signal`, `invalid_signal_payload`, `store`.
    pub fn code(&self) -> &'static str {
        match self {
            SignalError::NotFound(_) => "run_not_found",
            SignalError::Finished { .. } => "run_finished",
            SignalError::UnknownSignal { .. } => "unknown_signal",
            SignalError::Payload { .. } => "invalid_signal_payload",
            SignalError::Store(_) => "store",
        }
    }
}

fn store_error(run_id: &str, e: StoreError) -> SignalError {
    match e {
        StoreError::NotFound { .. } => SignalError::NotFound(run_id.to_string()),
        StoreError::Finished { status, .. } => SignalError::Finished {
            run_id: run_id.to_string(),
            status,
        },
        other => SignalError::Store(other),
    }
}

/// The signal names the workflow's `awaitSignal` nodes wait for, in node order, each once.
pub fn signal_names(workflow: &Workflow) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for node in workflow.nodes.values() {
        if let Node::Wait(w) = node
            && let Some(name) = w.signal()
            && !out.iter().any(|n| n == name)
        {
            out.push(name.to_string());
        }
    }
    out
}

/// Checks `payload` against what the workflow's `awaitSignal` nodes named `name` write: one
/// variable takes the whole payload, several an object's keys (each present key must fit its
/// variable's declared type).
pub fn check_payload(workflow: &Workflow, name: &str, payload: &Value) -> Result<(), SignalError> {
    let nodes: Vec<_> = workflow
        .nodes
        .values()
        .filter_map(|n| match n {
            Node::Wait(w) if w.signal() == Some(name) => Some(w),
            _ => None,
        })
        .collect();
    if nodes.is_empty() {
        return Err(SignalError::UnknownSignal {
            workflow: workflow.id.clone(),
            name: name.to_string(),
            known: signal_names(workflow),
        });
    }
    let bad = |message: String| SignalError::Payload {
        name: name.to_string(),
        message,
    };
    let schema = workflow.state_schema.as_ref();
    let var_type = |v: &str| schema.and_then(|s| s.variable(v)).map(|v| v.var_type);
    for node in nodes {
        match node.writes.as_slice() {
            [] => {}
            [one] => {
                if let Some(ty) = var_type(one)
                    && !input_fits(ty, payload)
                {
                    return Err(bad(format!(
                        "`{one}` is {}, the payload is {}",
                        ty.as_str(),
                        describe(payload)
                    )));
                }
            }
            many => {
                let Some(obj) = payload.as_object() else {
                    return Err(bad(format!(
                        "it writes {}: the payload must be an object with those keys, not {}",
                        many.join(", "),
                        describe(payload)
                    )));
                };
                for v in many {
                    if let (Some(ty), Some(value)) = (var_type(v), obj.get(v))
                        && !input_fits(ty, value)
                    {
                        return Err(bad(format!(
                            "`{v}` is {}, the payload's `{v}` is {}",
                            ty.as_str(),
                            describe(value)
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Sends signal `name` with `payload` to run `run_id`: checked against the run's stored
/// workflow, then stored (and the run woken when it waits for it).
pub async fn send_signal(
    store: &Arc<dyn StateStore>,
    run_id: &str,
    name: &str,
    payload: &Value,
) -> Result<SignalReceipt, SignalError> {
    let stored = store
        .load(run_id)
        .await
        .map_err(|e| store_error(run_id, e))?;
    if stored.record.status.is_terminal() {
        return Err(SignalError::Finished {
            run_id: run_id.to_string(),
            status: stored.record.status,
        });
    }
    let envelope = StoredWorkflow::decode(run_id, &stored.workflow)
        .map_err(|e| SignalError::Store(StoreError::Invalid(e)))?;
    check_payload(&envelope.workflow, name, payload)?;
    store
        .send_signal(run_id, name, payload)
        .await
        .map_err(|e| store_error(run_id, e))
}
