//! Forking a stored run (docs/cli.md, *Time travel*): a new run whose history is the parent's
//! log up to a step — referenced by the store, not copied — that continues from there, with
//! context edits and, optionally, another workflow. The one function every face calls
//! (`hensuc fork`, `POST /api/v1/executions/{id}/fork`, the console, `hensuc redrive`): it
//! checks, then writes the fork in one transaction ([`StateStore::fork`]), paused at its fork
//! point; the face then resumes it as it resumes any paused run.

use std::sync::Arc;

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{VarType, Workflow};
use hensu_runtime::{BranchEnd, Context, ExecutionPhase, Nested, RunState};
use hensu_store::{ForkSpec, RunParent, RunRecord, RunStatus, StateDelta, StateStore, StoreError};
use serde_json::Value;

use super::{StoredWorkflow, new_run_id};
use crate::durable::{SnapshotRedactor, restore, snapshot};

/// A fork to make.
pub struct ForkPlan<'a> {
    /// The run forked.
    pub parent: &'a str,
    /// The step of the parent's log the fork continues from (`hensuc runs show` lists them):
    /// its state is the fork's; the node that step names as next runs first.
    pub at: u64,
    /// Merged into the context at the fork point.
    pub edits: Context,
    /// Another workflow to continue with (checked against the state first); `None`: the
    /// parent's.
    pub workflow: Option<StoredWorkflow>,
    /// The server's tenant, tagged in the fork's transaction.
    pub tenant: Option<&'a str>,
    /// Replaces secrets in what is stored.
    pub redact: Option<SnapshotRedactor>,
    /// A redrive: the branches of a parallel or fork node at the fork point that failed are
    /// dropped from its record, so only they run again (the finished ones keep their results).
    pub retry_failed_branches: bool,
}

/// A fork written: its record (paused at the fork point, naming its parent) and the node it
/// continues with.
#[derive(Clone, Debug)]
pub struct Forked {
    pub record: RunRecord,
    pub node: String,
}

/// Why nothing was written.
#[derive(Debug)]
pub enum ForkError {
    /// The store refused or failed ([`StoreError::NotFound`]: no such run; `Invalid`: no such
    /// step).
    Store(StoreError),
    /// The state at the step does not fit the other workflow (E0908, E0909).
    Refused(Vec<Diagnostic>),
    /// The stored run or state does not load.
    Invalid(String),
}

impl std::fmt::Display for ForkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForkError::Store(e) => write!(f, "{e}"),
            ForkError::Refused(d) => {
                let first = d.first().map(|d| d.message.as_str()).unwrap_or("refused");
                write!(f, "{first}")
            }
            ForkError::Invalid(m) => f.write_str(m),
        }
    }
}

impl From<StoreError> for ForkError {
    fn from(e: StoreError) -> ForkError {
        ForkError::Store(e)
    }
}

/// The node a run at `state` executes next: the node awaiting a review, else the current one.
pub fn next_node(state: &RunState) -> &str {
    match &state.phase {
        ExecutionPhase::Awaiting { node_id, .. } => node_id,
        _ => &state.current_node,
    }
}

/// Checks the fork of `state` (context `edits` merged) onto `workflow` at `node`: the node
/// exists (E0908), and every declared variable it reads is in the context with its declared
/// type (E0909). Empty: it fits.
pub fn check_fork(workflow: &Workflow, node: &str, context: &Context) -> Vec<Diagnostic> {
    let Some(n) = workflow.node(node) else {
        return vec![
            Diagnostic::new(
                codes::E0908,
                format!(
                    "workflow `{}` has no node `{node}`, where the fork continues",
                    workflow.id
                ),
                Span::default(),
                "",
            )
            .with_help("fork at a step whose node this workflow has (`hensuc runs show RUN`)"),
        ];
    };
    let schema = workflow.state_schema.as_ref();
    let mut out = Vec::new();
    for name in hensu_sema::check::access::node_reads(n, schema) {
        let Some(var) = schema.and_then(|s| s.variable(name)) else {
            continue;
        };
        let problem = match context.get(name).filter(|v| !v.is_null()) {
            None => format!("node `{node}` reads `{name}`, which the run's context lacks"),
            Some(v) if !fits(var.var_type, v) => format!(
                "node `{node}` reads `{name}` as {}, the run's value is {}",
                var.var_type.as_str(),
                describe(v)
            ),
            Some(_) => continue,
        };
        out.push(
            Diagnostic::new(codes::E0909, problem, Span::default(), "")
                .with_help(format!("give it on the fork: --set {name}=…")),
        );
    }
    out
}

fn fits(ty: VarType, v: &Value) -> bool {
    match ty {
        VarType::String => v.is_string(),
        VarType::Number => v.is_number(),
        VarType::Boolean => v.is_boolean(),
        VarType::ListString => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
    }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The change from the parent's stored state to the fork's: every top-level field that
/// differs, and each context entry the edits set.
fn delta(parent: &Value, child: &Value) -> StateDelta {
    let mut d = StateDelta::new();
    let (Some(p), Some(c)) = (parent.as_object(), child.as_object()) else {
        return d;
    };
    for (key, value) in c {
        if key == "context" {
            let before = p.get(key).and_then(Value::as_object);
            for (k, v) in value.as_object().into_iter().flatten() {
                if before.and_then(|b| b.get(k)) != Some(v) {
                    d = d.set(&["context", k], v.clone());
                }
            }
        } else if p.get(key) != Some(value) {
            d = d.set(&[key], value.clone());
        }
    }
    for key in p.keys() {
        if !c.contains_key(key) {
            d = d.remove(&[key]);
        }
    }
    d
}

/// Drops the failed branches from the record of the parallel or fork node the state is at
/// (docs/cli.md, *Time travel*): a resumed run then runs them, and only them, again. When
/// the state is inside a sub-workflow child (at any depth), the child's own parallel or fork
/// node is meant: the child resumes there.
fn drop_failed_branches(state: &mut RunState) {
    match state.nested.as_deref_mut() {
        Some(Nested::Parallel { finished, .. }) => finished.retain(|b| b.success),
        Some(Nested::Fork { branches, .. }) => {
            branches.retain(|b| !matches!(b.ended, Some(BranchEnd::Failed { .. })))
        }
        Some(Nested::Child { state, .. }) => drop_failed_branches(state),
        None => {}
    }
}

/// The step a redrive of the failed run `run_id` forks at: the last row of its log before the
/// one that failed it (the state right before the failure: before the failed node, or with the
/// finished branches of the failed parallel or fork node recorded).
pub async fn failed_step(store: &Arc<dyn StateStore>, run_id: &str) -> Result<u64, ForkError> {
    let record = store.record(run_id).await?;
    if record.status != RunStatus::Failed {
        return Err(ForkError::Store(StoreError::Invalid(format!(
            "run `{run_id}` is {}, not failed: there is nothing to redrive",
            record.status
        ))));
    }
    let history = store.history(run_id).await?;
    let failed = history
        .iter()
        .rposition(|h| h.status == RunStatus::Failed)
        .unwrap_or(history.len());
    // Not a `journal` row: the redrive runs the failed node afresh, without the calls its
    // failed visit journaled (docs/security.md, *Call journal*).
    history[..failed]
        .iter()
        .rev()
        .find(|h| !h.status.is_terminal() && h.kind != hensu_store::LogKind::Journal)
        .map(|h| h.step)
        .ok_or_else(|| ForkError::Invalid(format!("run `{run_id}` failed before its first step")))
}

/// Redrives the failed run `run_id`: forks it at [`failed_step`] with its failed branches
/// dropped ([`ForkPlan::retry_failed_branches`]), on its own workflow, with `edits`.
pub async fn redrive_run(
    store: &Arc<dyn StateStore>,
    run_id: &str,
    edits: Context,
    tenant: Option<&str>,
    redact: Option<SnapshotRedactor>,
) -> Result<Forked, ForkError> {
    let at = failed_step(store, run_id).await?;
    fork_run(
        store,
        ForkPlan {
            parent: run_id,
            at,
            edits,
            workflow: None,
            tenant,
            redact,
            retry_failed_branches: true,
        },
    )
    .await
}

/// Forks `plan.parent` at `plan.at`: loads its state at that step (through any prefix it has
/// itself), checks it against the other workflow when one is given (nothing is written on a
/// refusal), and writes the fork — record (paused at the node, its parent named), workflow,
/// tenant tag and the `forked` row holding the edits — in one transaction. The parent is not
/// touched; its log is referenced, not copied.
pub async fn fork_run(
    store: &Arc<dyn StateStore>,
    plan: ForkPlan<'_>,
) -> Result<Forked, ForkError> {
    let at = store.load_at(plan.parent, plan.at).await?;
    let state = restore(plan.parent, &at.snapshot).map_err(ForkError::Invalid)?;
    let stored = plan.workflow;
    let envelope = match &stored {
        Some(w) => w.clone(),
        None => StoredWorkflow::decode(plan.parent, &at.workflow).map_err(ForkError::Invalid)?,
    };
    let node = next_node(&state).to_string();
    let run_id = new_run_id();
    let mut child = state.clone();
    child.execution_id = run_id.clone();
    child.workflow_id = envelope.workflow.id.clone();
    child.current_node = node.clone();
    // The node runs again from its start: no pending review, no end, no failure.
    child.phase = ExecutionPhase::Initial;
    child.failure = None;
    child.context.extend(plan.edits);
    if plan.retry_failed_branches {
        drop_failed_branches(&mut child);
    }
    if stored.is_some() {
        let problems = check_fork(&envelope.workflow, &node, &child.context);
        if !problems.is_empty() {
            return Err(ForkError::Refused(problems));
        }
    }
    let before = snapshot(&state, plan.redact.as_ref())?;
    let after = snapshot(&child, plan.redact.as_ref())?;
    let mut record = RunRecord::new(
        run_id,
        envelope.workflow.id.clone(),
        envelope.workflow.version.clone(),
        Some(node.clone()),
    );
    record.status = RunStatus::Paused;
    let workflow = match &stored {
        Some(w) => Some(w.encode().map_err(ForkError::Invalid)?),
        None => None,
    };
    let record = store
        .fork(&ForkSpec {
            parent: RunParent {
                run_id: plan.parent.to_string(),
                step: plan.at,
            },
            record,
            workflow,
            edits: delta(&before, &after),
            tenant: plan.tenant.map(str::to_string),
        })
        .await?;
    Ok(Forked { record, node })
}
