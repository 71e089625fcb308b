//! `POST /api/v1/executions/batch`: many runs of one workflow queued in one request, for
//! workers to claim within their concurrency (docs/server.md, *Batch starts*). Every context
//! is checked before anything is stored: a bad one refuses the whole batch.

use std::sync::Arc;

use hensu_runtime::Context;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::exec::StartRequest;
use crate::service::executions::{
    ExecutionStarted, check_idempotency_key, refuse_bad_inputs, request_hash,
};
use crate::validate::{ContextBounds, check_id};

/// `POST /api/v1/executions/batch`: one workflow, a context per run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchStart {
    /// A workflow the tenant pushed.
    pub workflow_id: String,
    /// One initial context per run, in order: at least one, at most the server's
    /// `batch_max_starts` (1,000 by default).
    #[schema(value_type = Vec<Object>)]
    pub contexts: Vec<Map<String, Value>>,
}

/// The queued executions, in the order of the contexts.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchStarted {
    pub executions: Vec<ExecutionStarted>,
}

impl BatchStart {
    /// The request of a body: at most `context_max_bytes` of JSON text in all, then each
    /// context within the entry and depth bounds of one start's (413/400 as a start).
    pub fn from_body(
        body: &[u8],
        bounds: ContextBounds,
        max_starts: usize,
    ) -> ApiResult<BatchStart> {
        if body.len() > bounds.max_bytes {
            return Err(ApiError::new(
                axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "contexts: the batch request is over {} bytes (docs/server.md, *Batch starts*)",
                    bounds.max_bytes
                ),
            )
            .with_code("context_too_large"));
        }
        let batch: BatchStart = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?;
        if batch.contexts.is_empty() || batch.contexts.len() > max_starts {
            return Err(ApiError::bad_request(format!(
                "contexts: {} given; a batch has 1 to {max_starts} (`[server.limits] \
                 batch_max_starts`)",
                batch.contexts.len()
            ))
            .with_code("invalid_parameter"));
        }
        for context in &batch.contexts {
            bounds.check_context(context)?;
        }
        Ok(batch)
    }
}

/// Queues one run per context. With an `Idempotency-Key`, item `i` is started under the key
/// `<key>#<i>`, so a retried batch (the same body) queues nothing twice; answers whether every
/// item was such a repeat (200 rather than 202).
pub async fn start_batch(
    app: &AppState,
    tenant: &Tenant,
    batch: BatchStart,
    idempotency_key: Option<&str>,
) -> ApiResult<(BatchStarted, bool)> {
    check_id("workflowId", &batch.workflow_id)?;
    let reg = app.registry.as_ref();
    let stored = reg
        .get_workflow(&tenant.tenant_id, &batch.workflow_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    let workflow = hensu_ir::from_json(&stored.definition.to_string())
        .map_err(|e| ApiError::internal(format!("stored workflow does not load: {e:?}")))?;
    let repository = crate::subflows::repository(reg, &tenant.tenant_id, &workflow).await?;
    // Everything is checked before the first run is stored.
    let mut contexts = Vec::with_capacity(batch.contexts.len());
    let mut keyed = Vec::new();
    let workflow = Arc::new(workflow);
    for (index, map) in batch.contexts.into_iter().enumerate() {
        if let Some(key) = idempotency_key {
            keyed.push(hensu_store::IdempotencyKey {
                key: check_idempotency_key(format!("{key}#{index}").as_bytes())?,
                request_hash: request_hash(&batch.workflow_id, &Some(map.clone()), &[]),
            });
        }
        let context: Context = map.into_iter().collect();
        refuse_bad_inputs(&workflow, &context).map_err(|mut e| {
            e.message = format!("contexts[{index}]: {}", e.message);
            e
        })?;
        contexts.push(context);
    }
    let started = |execution_id: String, replayed: bool| ExecutionStarted {
        execution_id,
        workflow_id: batch.workflow_id.clone(),
        replayed,
    };
    let executions: Vec<ExecutionStarted> = if keyed.is_empty() {
        // One transaction for the whole batch: every run is queued, or none.
        let ids = app
            .executor
            .queue_many(&tenant.tenant_id, &workflow, &contexts)
            .await?;
        ids.into_iter().map(|id| started(id, false)).collect()
    } else {
        // Each item under its own key, one transaction each (a retry queues only the rest).
        let mut out = Vec::with_capacity(contexts.len());
        for (context, key) in contexts.into_iter().zip(keyed) {
            let request = StartRequest {
                tenant: tenant.tenant_id.clone(),
                workflow: workflow.clone(),
                context,
                repository: repository.clone(),
                idempotency: Some(key),
                traceparent: None,
            };
            let s = app.executor.queue(request).await?;
            out.push(started(s.run_id, s.replayed));
        }
        out
    };
    let all_replayed = executions.iter().all(|e| e.replayed);
    tracing::info!(
        workflow = batch.workflow_id,
        count = executions.len(),
        "executions queued"
    );
    Ok((BatchStarted { executions }, all_replayed))
}
