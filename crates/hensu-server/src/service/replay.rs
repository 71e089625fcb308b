//! Replay of an execution (docs/server.md, *Replay*): the execution run again with every agent
//! call, tool call, command, webhook, api-caller node and review decision answered from its run
//! log — no model call, no side effect, nothing written — and compared with the recording.
//! Made by `hensu_host::launch::replay_run`, the function `hensuc replay` calls.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::exec::stored_workflow;
use crate::service::executions::owned_record;
use crate::validate::check_id;
use hensu_host::launch::{ReplayError, ReplayPlan, ReplayReport, replay_run};
use hensu_store::StoreError;

/// `POST /api/v1/executions/{id}/replay`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplayExecution {
    /// Replay up to this step of the execution's log (the log's step numbers, as the SSE
    /// events give them) and compare there; absent: to its end.
    #[serde(default)]
    pub until: Option<u64>,
    /// Replay against this workflow of the tenant instead of the execution's own.
    #[serde(default)]
    pub workflow_id: Option<String>,
}

impl ReplayExecution {
    /// The body: JSON, or empty.
    pub fn from_body(body: &[u8]) -> ApiResult<ReplayExecution> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(ReplayExecution::default());
        }
        serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("replay: {e}")))
    }
}

/// The first difference between the recording and the replay.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplayDivergence {
    /// `E0916`, or `E0917` when a call the recording lacks caused it.
    pub code: String,
    /// `path`, `status`, `output`, `backtrack`, `context` or `end`.
    pub kind: String,
    /// The step (as the history numbers them) for `path`, `status` and `output`.
    pub step: Option<u64>,
    pub node: String,
    /// The context key, for `context`.
    pub key: Option<String>,
    pub expected: Value,
    pub got: Value,
    pub message: String,
}

/// A replay's result.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionReplayed {
    pub execution_id: String,
    /// The workflow replayed: the execution's, or the one asked for.
    pub workflow_id: String,
    /// The log step the replay started from and the one it was compared with.
    pub from_step: u64,
    pub to_step: u64,
    /// Path, transitions, outputs, final context and end agree.
    pub identical: bool,
    pub recorded_status: String,
    pub replayed_status: String,
    /// Steps compared.
    pub steps: u64,
    /// Agent answers the recording held.
    pub recorded_answers: u64,
    pub divergence: Option<ReplayDivergence>,
    /// The calls the recording had no answer for (answered with a failure, never live).
    pub not_recorded: Vec<String>,
}

impl From<ReplayReport> for ExecutionReplayed {
    fn from(r: ReplayReport) -> ExecutionReplayed {
        ExecutionReplayed {
            execution_id: r.run_id,
            workflow_id: r.workflow_id,
            from_step: r.from_step,
            to_step: r.to_step,
            identical: r.identical,
            recorded_status: r.recorded_status,
            replayed_status: r.replayed_status,
            steps: r.steps as u64,
            recorded_answers: r.recorded_answers as u64,
            divergence: r.divergence.map(|d| ReplayDivergence {
                code: d.code,
                kind: d.kind.as_str().to_string(),
                step: d.step,
                node: d.node,
                key: d.key,
                expected: d.expected,
                got: d.got,
                message: d.message,
            }),
            not_recorded: r.not_recorded,
        }
    }
}

/// Replays one of the tenant's executions. Another tenant's execution is 404; a step the
/// execution does not have is 400. Nothing is written.
pub async fn replay(
    app: &AppState,
    tenant: &Tenant,
    run_id: &str,
    request: ReplayExecution,
) -> ApiResult<ExecutionReplayed> {
    let record = owned_record(app, tenant, run_id).await?;
    let given = match &request.workflow_id {
        None => None,
        Some(id) => {
            check_id("workflowId", id)?;
            let stored = app
                .registry
                .get_workflow(&tenant.tenant_id, id)
                .await?
                .ok_or_else(ApiError::not_found)?;
            Some(
                hensu_ir::from_json(&stored.definition.to_string()).map_err(|e| {
                    ApiError::internal(format!("stored workflow does not load: {e:?}"))
                })?,
            )
        }
    };
    let own = stored_workflow(run_id, &app.store.load(run_id).await?.workflow)
        .map_err(ApiError::internal)?;
    let main = given.as_ref().unwrap_or(&own);
    let repository =
        crate::subflows::repository(app.registry.as_ref(), &tenant.tenant_id, main).await?;
    let report = replay_run(
        &app.store,
        ReplayPlan {
            run_id: &record.run_id,
            until: request.until,
            workflow: given,
            callable: repository.workflows().cloned().collect(),
        },
    )
    .await
    .map_err(|e| match e {
        ReplayError::Store(StoreError::Invalid(m)) => ApiError::bad_request(m),
        ReplayError::Store(StoreError::NotFound { .. }) => ApiError::not_found(),
        ReplayError::Store(e) => e.into(),
        ReplayError::Invalid(m) => ApiError::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, m)
            .with_code("replay_invalid"),
    })?;
    tracing::info!(
        tenant = tenant.tenant_id,
        run_id,
        identical = report.identical,
        "execution replayed"
    );
    Ok(report.into())
}
