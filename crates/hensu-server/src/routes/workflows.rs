//! `/api/v1/workflows`: push, pull, list, delete — every query scoped by the caller's tenant.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hensu_diagnostics::{FileId, Files};
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::validate::{check_id, workflow_violations};

/// Push: the full hensu checks on the JSON artifact; every diagnostic in the 400.
#[utoipa::path(post, path = "/api/v1/workflows", tag = "workflows",
    responses((status = 201, description = "created"), (status = 200, description = "replaced"),
              (status = 400, description = "invalid workflow, with all diagnostics")))]
pub async fn push(
    State(app): State<AppState>,
    tenant: Tenant,
    body: Result<Json<Value>, axum::extract::rejection::JsonRejection>,
) -> ApiResult<Response> {
    let Json(definition) = body?;
    if definition.is_null() {
        return Err(ApiError::bad_request(
            "workflow: Workflow definition is required",
        ));
    }
    let violations = workflow_violations(&definition);
    if !violations.is_empty() {
        let text = violations
            .iter()
            .map(|v| format!("workflow: {v}"))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(ApiError::bad_request(text));
    }
    let text = definition.to_string();
    let file_name = "workflow.json";
    let (workflow, _, diagnostics) = compile_json(&text);
    if diagnostics.iter().any(|d| d.is_error()) || workflow.is_none() {
        let mut files = Files::new();
        files.add(file_name, text.clone());
        let report: Value =
            serde_json::from_str(&hensu_diagnostics::render_json(&files, &diagnostics))
                .unwrap_or(Value::Null);
        let first = diagnostics
            .iter()
            .find(|d| d.is_error())
            .map(|d| format!("{}: {}", d.code, d.message))
            .unwrap_or_else(|| "invalid workflow".into());
        return Err(ApiError::bad_request(format!("invalid workflow ({first})"))
            .with_extra(json!({"diagnostics": report})));
    }
    let Some(workflow) = workflow else {
        return Err(ApiError::bad_request("invalid workflow"));
    };
    let id = workflow.id.clone();
    check_id("workflow: id", &id)?;
    // Sub-workflow references: children must be pushed first; no cycles.
    let reg = app.registry.clone();
    let tenant_id = tenant.tenant_id.clone();
    let incoming = workflow.clone();
    let version = workflow.version.clone();
    let created = tokio::task::spawn_blocking(move || -> ApiResult<bool> {
        crate::subflows::check_graph(reg.as_ref(), &tenant_id, &incoming)?;
        Ok(reg.put_workflow(&tenant_id, &incoming.id, &version, &definition)?)
    })
    .await
    .map_err(ApiError::internal)??;
    tracing::info!(
        tenant = tenant.tenant_id,
        workflow = id,
        created,
        "workflow pushed"
    );
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(json!({"id": id, "version": workflow.version, "created": created})),
    )
        .into_response())
}

fn compile_json(
    text: &str,
) -> (
    Option<hensu_ir::Workflow>,
    (),
    Vec<hensu_diagnostics::Diagnostic>,
) {
    let file = FileId(0);
    match hensu_ir::from_json_with_spans(text) {
        Ok((wf, map)) => {
            let origins = hensu_sema::origins_from_json(&wf, &map, file);
            let d = hensu_sema::check::check_workflow(
                &wf,
                &origins,
                hensu_sema::check::InputKind::Json,
            );
            (Some(wf), (), d)
        }
        Err(err) => {
            let span = err
                .span
                .map(|s| hensu_diagnostics::Span::from_range(s.start..s.end))
                .unwrap_or_default();
            let label = if err.path.is_empty() {
                err.message.clone()
            } else {
                format!("at `{}`: {}", err.path, err.message)
            };
            let d = hensu_diagnostics::Diagnostic::new(
                hensu_diagnostics::codes::E0902,
                "invalid json workflow",
                span,
                label,
            );
            (None, (), vec![d])
        }
    }
}

/// Pull: the stored definition.
#[utoipa::path(get, path = "/api/v1/workflows/{workflowId}", tag = "workflows",
    params(("workflowId" = String, Path)),
    responses((status = 200, description = "the workflow JSON"), (status = 404, description = "unknown")))]
pub async fn pull(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    check_id("workflowId", &id)?;
    let reg = app.registry.clone();
    let wf = tokio::task::spawn_blocking(move || reg.get_workflow(&tenant.tenant_id, &id))
        .await
        .map_err(ApiError::internal)??;
    wf.map(|w| Json(w.definition))
        .ok_or_else(ApiError::not_found)
}

/// List: `[{id, version}]` sorted by id.
#[utoipa::path(get, path = "/api/v1/workflows", tag = "workflows",
    responses((status = 200, description = "the tenant's workflows")))]
pub async fn list(State(app): State<AppState>, tenant: Tenant) -> ApiResult<Json<Value>> {
    let reg = app.registry.clone();
    let all = tokio::task::spawn_blocking(move || reg.list_workflows(&tenant.tenant_id))
        .await
        .map_err(ApiError::internal)??;
    Ok(Json(Value::Array(
        all.into_iter()
            .map(|w| json!({"id": w.workflow_id, "version": w.version}))
            .collect(),
    )))
}

/// Delete (soft): 204, or 404 when there is no live row.
#[utoipa::path(delete, path = "/api/v1/workflows/{workflowId}", tag = "workflows",
    params(("workflowId" = String, Path)),
    responses((status = 204, description = "deleted"), (status = 404, description = "unknown")))]
pub async fn delete(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    check_id("workflowId", &id)?;
    let reg = app.registry.clone();
    let gone = tokio::task::spawn_blocking(move || reg.delete_workflow(&tenant.tenant_id, &id))
        .await
        .map_err(ApiError::internal)??;
    if gone {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found())
    }
}
