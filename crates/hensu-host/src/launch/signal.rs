//! Sending a signal to a stored run (docs/language.md, *Timers and signals*): the one
//! operation behind `hensuc signal`, the server's `POST /api/v1/executions/{id}/signals/{name}`
//! and the console's form ([`signal_workflow`], then [`deliver_signal`]). The payload is
//! checked against the variables the `awaitSignal` nodes of that name write — of the run's
//! workflow and of the workflows it calls, whose children wait too —, then stored ([`StateStore::send_signal`]): delivered
//! now when the run waits for it, when it reaches such a node otherwise.

use std::sync::Arc;

use hensu_ir::{Node, Workflow};
use hensu_runtime::MapRepository;
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
    check_payload_in(workflow, &MapRepository::new(), name, payload)
}

/// [`check_payload`] over `workflow` and the workflows it can call (`callable`, as
/// [`callable_workflows`](super::callable_workflows) gives them): a wait inside a sub-workflow
/// child takes the run's signals too (docs/language.md, *Timers and signals*), each node
/// checked against its own workflow's variables.
pub fn check_payload_in(
    workflow: &Workflow,
    callable: &MapRepository,
    name: &str,
    payload: &Value,
) -> Result<(), SignalError> {
    let workflows = || {
        std::iter::once(workflow).chain(callable.workflows().filter(move |w| w.id != workflow.id))
    };
    let mut found = false;
    for wf in workflows() {
        for node in wf.nodes.values() {
            if let Node::Wait(w) = node
                && w.signal() == Some(name)
            {
                found = true;
                check_node(wf, w, name, payload)?;
            }
        }
    }
    if !found {
        let mut known: Vec<String> = Vec::new();
        for n in workflows().flat_map(signal_names) {
            if !known.contains(&n) {
                known.push(n);
            }
        }
        return Err(SignalError::UnknownSignal {
            workflow: workflow.id.clone(),
            name: name.to_string(),
            known,
        });
    }
    Ok(())
}

/// `payload` against what one `awaitSignal` node of `workflow` writes.
fn check_node(
    workflow: &Workflow,
    node: &hensu_ir::WaitNode,
    name: &str,
    payload: &Value,
) -> Result<(), SignalError> {
    let bad = |message: String| SignalError::Payload {
        name: name.to_string(),
        message,
    };
    let schema = workflow.state_schema.as_ref();
    let var_type = |v: &str| schema.and_then(|s| s.variable(v)).map(|v| v.var_type);
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
    Ok(())
}

/// The workflow stored with run `run_id`, which must not have ended (a signal to an ended run
/// is refused): what a signal's payload is checked against, with the workflows it can call
/// ([`deliver_signal`]).
pub async fn signal_workflow(
    store: &Arc<dyn StateStore>,
    run_id: &str,
) -> Result<Workflow, SignalError> {
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
    Ok(envelope.workflow)
}

/// Checks signal `name`'s `payload` against `workflow` (run `run_id`'s, [`signal_workflow`])
/// and the workflows its sub-workflow nodes call (`callable`), then stores it (and wakes the
/// run when one of its flows waits for it).
pub async fn deliver_signal(
    store: &Arc<dyn StateStore>,
    run_id: &str,
    (workflow, callable): (&Workflow, &MapRepository),
    name: &str,
    payload: &Value,
) -> Result<SignalReceipt, SignalError> {
    check_payload_in(workflow, callable, name, payload)?;
    store
        .send_signal(run_id, name, payload)
        .await
        .map_err(|e| store_error(run_id, e))
}

/// Sends signal `name` with `payload` to run `run_id`, checked against the run's stored
/// workflow only ([`deliver_signal`] checks the workflows it calls too).
pub async fn send_signal(
    store: &Arc<dyn StateStore>,
    run_id: &str,
    name: &str,
    payload: &Value,
) -> Result<SignalReceipt, SignalError> {
    let workflow = signal_workflow(store, run_id).await?;
    let none = MapRepository::new();
    deliver_signal(store, run_id, (&workflow, &none), name, payload).await
}
