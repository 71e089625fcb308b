//! Time travel on an execution (docs/server.md, *Time travel*): `fork` — a new execution whose
//! history is the parent's log up to a step (referenced by the store, not copied), continued
//! from there with context edits or another of the tenant's workflows. The fork is made by
//! `hensu_host::launch::fork_run`, the function `hensuc fork` calls, then resumed like any
//! paused execution.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::exec::{ResumeInput, stored_workflow};
use crate::service::executions::owned_record;
use crate::validate::check_id;
use hensu_host::launch::{ForkError, ForkPlan, StoredWorkflow, fork_run};
use hensu_store::StoreError;

/// `POST /api/v1/executions/{id}/fork`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ForkExecution {
    /// The step of the parent's log to continue from (the log's step numbers, as the SSE
    /// events and `hensuc runs show` give them): its state is the fork's, and the node it
    /// names as next runs first.
    pub step: u64,
    /// Merged into the context at the fork point.
    #[serde(default)]
    pub context_edits: Option<Map<String, Value>>,
    /// Continue with this workflow of the tenant instead of the execution's own; the state
    /// at `step` is checked against it first (422 `fork_refused` with diagnostics E0908,
    /// E0909; nothing is written).
    #[serde(default)]
    pub workflow_id: Option<String>,
}

/// The fork made: a new execution, running in the background from its fork point.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionForked {
    pub execution_id: String,
    pub workflow_id: String,
    pub parent_execution_id: String,
    pub parent_step: u64,
    /// The node the fork continues with.
    pub node_id: String,
}

impl ForkExecution {
    /// The body: JSON, `step` required.
    pub fn from_body(body: &[u8]) -> ApiResult<ForkExecution> {
        serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("fork: {e}")))
    }
}

fn refused(diagnostics: &[hensu_diagnostics::Diagnostic]) -> ApiError {
    let list: Vec<Value> = diagnostics
        .iter()
        .map(|d| json!({"code": d.code, "severity": "error", "message": d.message, "help": d.help}))
        .collect();
    let first = diagnostics
        .first()
        .map(|d| format!("{}: {}", d.code, d.message))
        .unwrap_or_default();
    ApiError::new(
        axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        format!("the fork was refused; nothing was written ({first})"),
    )
    .with_code("fork_refused")
    .with_diagnostics(json!({"diagnostics": list}))
}

/// Forks one of the tenant's executions at `request.step` and starts the fork in the
/// background. Another tenant's execution is 404; a step the execution does not have is 400.
pub async fn fork(
    app: &AppState,
    tenant: &Tenant,
    run_id: &str,
    request: ForkExecution,
) -> ApiResult<ExecutionForked> {
    let parent = owned_record(app, tenant, run_id).await?;
    let edits = request.context_edits.unwrap_or_default();
    crate::validate::ContextBounds::from(app.limits.as_ref()).check_context(&edits)?;
    let workflow = match &request.workflow_id {
        None => None,
        Some(id) => {
            check_id("workflowId", id)?;
            let stored = app
                .registry
                .get_workflow(&tenant.tenant_id, id)
                .await?
                .ok_or_else(ApiError::not_found)?;
            let workflow = hensu_ir::from_json(&stored.definition.to_string())
                .map_err(|e| ApiError::internal(format!("stored workflow does not load: {e:?}")))?;
            let envelope = app.store.load(run_id).await?.workflow;
            let options = StoredWorkflow::decode(run_id, &envelope)
                .map_err(ApiError::internal)?
                .options;
            Some(StoredWorkflow {
                workflow,
                source: None,
                options,
            })
        }
    };
    let forked = fork_run(
        &app.store,
        ForkPlan {
            parent: &parent.run_id,
            at: request.step,
            edits: edits.into_iter().collect(),
            workflow,
            tenant: Some(&tenant.tenant_id),
            redact: app.executor.redactor(),
            retry_failed_branches: false,
        },
    )
    .await;
    let forked = forked.map_err(fork_error)?;
    start_forked(app, tenant, &parent.run_id, request.step, forked).await
}

/// A refused or failed fork as the API's error.
fn fork_error(e: ForkError) -> ApiError {
    match e {
        ForkError::Refused(d) => refused(&d),
        ForkError::Store(StoreError::Invalid(m)) => ApiError::bad_request(m),
        ForkError::Store(StoreError::NotFound { .. }) => ApiError::not_found(),
        ForkError::Store(e) => e.into(),
        ForkError::Invalid(m) => ApiError::internal(m),
    }
}

/// Starts a fork written paused at its fork point, as the executor resumes a paused run.
async fn start_forked(
    app: &AppState,
    tenant: &Tenant,
    parent_id: &str,
    step: u64,
    forked: hensu_host::launch::Forked,
) -> ApiResult<ExecutionForked> {
    let new_id = forked.record.run_id.clone();
    let stored = app.store.load(&new_id).await?;
    let wf = stored_workflow(&new_id, &stored.workflow).map_err(ApiError::internal)?;
    let repository =
        crate::subflows::repository(app.registry.as_ref(), &tenant.tenant_id, &wf).await?;
    app.executor
        .resume(
            &new_id,
            ResumeInput {
                correlation_id: None,
                decision: None,
                context_edits: None,
                arguments_given: false,
            },
            repository,
        )
        .await?;
    tracing::info!(
        tenant = tenant.tenant_id,
        run_id = new_id,
        parent = parent_id.to_string(),
        step,
        "execution forked"
    );
    // The store names the run whose own log holds the fork point (a point inside a fork's
    // prefix belongs to its parent).
    let origin = forked.record.parent.clone();
    Ok(ExecutionForked {
        execution_id: new_id,
        workflow_id: forked.record.workflow_id,
        parent_execution_id: origin
            .as_ref()
            .map_or(parent_id.to_string(), |p| p.run_id.clone()),
        parent_step: origin.map_or(step, |p| p.step),
        node_id: forked.node,
    })
}

/// `POST /api/v1/executions/{id}/redrive`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedriveExecution {
    /// Merged into the context at the fork point.
    #[serde(default)]
    pub context_edits: Option<Map<String, Value>>,
}

impl RedriveExecution {
    /// The body: JSON, or empty.
    pub fn from_body(body: &[u8]) -> ApiResult<RedriveExecution> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(RedriveExecution::default());
        }
        serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("redrive: {e}")))
    }
}

/// Redrives one of the tenant's failed executions: a fork at the last step before its
/// failure, with the failed branches of a parallel or fork node there dropped, so only they
/// run again (`hensu_host::launch::redrive_run`, as `hensuc redrive`). A run that did not fail
/// is 409.
pub async fn redrive(
    app: &AppState,
    tenant: &Tenant,
    run_id: &str,
    request: RedriveExecution,
) -> ApiResult<ExecutionForked> {
    let parent = owned_record(app, tenant, run_id).await?;
    if parent.status != hensu_store::RunStatus::Failed {
        return Err(ApiError::conflict(format!(
            "execution {run_id} is {}, not failed: there is nothing to redrive",
            parent.status
        )));
    }
    let edits = request.context_edits.unwrap_or_default();
    crate::validate::ContextBounds::from(app.limits.as_ref()).check_context(&edits)?;
    let forked = hensu_host::launch::redrive_run(
        &app.store,
        &parent.run_id,
        edits.into_iter().collect(),
        Some(&tenant.tenant_id),
        app.executor.redactor(),
    )
    .await
    .map_err(fork_error)?;
    let step = forked.record.parent.as_ref().map_or(0, |p| p.step);
    start_forked(app, tenant, &parent.run_id, step, forked).await
}
