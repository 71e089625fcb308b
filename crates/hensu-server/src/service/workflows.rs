//! Workflows: push, get, list, delete — every query scoped by the caller's tenant.

use hensu_diagnostics::{Diagnostic, FileId, Files};
use hensu_ir::Workflow;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::blocking;
use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::validate::{check_id, workflow_violations};

/// A pushed workflow: 201 when it is new, 200 when it replaced the tenant's previous one.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowSaved {
    pub id: String,
    pub version: String,
    pub created: bool,
}

/// One line of the tenant's workflow list.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowEntry {
    pub id: String,
    pub version: String,
}

/// Pushes a compiled workflow (the JSON artifact): the id and control-character rules, then
/// the hensu checks, every diagnostic in the 400; sub-workflows must be pushed first.
pub async fn push(app: &AppState, tenant: &Tenant, definition: Value) -> ApiResult<WorkflowSaved> {
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
    let workflow = checked(app, definition.clone()).await?;
    let id = workflow.id.clone();
    check_id("workflow: id", &id)?;
    let version = workflow.version.clone();
    let reg = app.registry.as_ref();
    // Sub-workflow references: children must be pushed first; no cycles.
    crate::subflows::check_graph(reg, &tenant.tenant_id, &workflow).await?;
    let created = reg
        .put_workflow(
            &tenant.tenant_id,
            &workflow.id,
            &workflow.version,
            &definition,
        )
        .await?;
    tracing::info!(
        tenant = tenant.tenant_id,
        workflow = id,
        created,
        "workflow pushed"
    );
    Ok(WorkflowSaved {
        id,
        version,
        created,
    })
}

/// The hensu checks of a push, on the blocking pool: a big workflow takes its checks seconds of
/// CPU, which must not stall the async workers every other request (and `/health`) runs on.
/// At most `max_concurrent_pushes` run at once; the rest wait their turn.
async fn checked(app: &AppState, definition: Value) -> ApiResult<Workflow> {
    let _place = app
        .pushes
        .clone()
        .acquire_owned()
        .await
        .map_err(ApiError::internal)?;
    blocking(move || {
        let text = definition.to_string();
        let (workflow, diagnostics) = compile_json(&text);
        match workflow {
            Some(wf) if !diagnostics.iter().any(Diagnostic::is_error) => Ok(wf),
            _ => Err(refused(text, &diagnostics)),
        }
    })
    .await
}

/// The hensu checks of a pushed JSON workflow: the workflow (when it parses) and every
/// diagnostic — the same reading and checks as `hensuc check x.json` (hensu-project).
fn compile_json(text: &str) -> (Option<Workflow>, Vec<Diagnostic>) {
    let (workflow, _, diagnostics) = hensu_project::compile::compile_json(text, FileId(0));
    (workflow, diagnostics)
}

/// The 400 of a push the checks refused: the first error in the message, every diagnostic in
/// `diagnostics`.
fn refused(text: String, diagnostics: &[Diagnostic]) -> ApiError {
    let mut files = Files::new();
    files.add("workflow.json", text);
    let report: Value = serde_json::from_str(&hensu_diagnostics::render_json(&files, diagnostics))
        .unwrap_or(Value::Null);
    let first = diagnostics
        .iter()
        .find(|d| d.is_error())
        .map(|d| format!("{}: {}", d.code, d.message))
        .unwrap_or_else(|| "invalid workflow".into());
    ApiError::bad_request(format!("invalid workflow ({first})")).with_diagnostics(report)
}

/// The stored definition of one of the tenant's workflows (as pushed).
pub async fn get(app: &AppState, tenant: &Tenant, workflow_id: &str) -> ApiResult<Value> {
    check_id("workflowId", workflow_id)?;
    let stored = app
        .registry
        .get_workflow(&tenant.tenant_id, workflow_id)
        .await?;
    stored.map(|w| w.definition).ok_or_else(ApiError::not_found)
}

/// One of the tenant's workflows, loaded (404 when the tenant has none by that id).
pub async fn load(app: &AppState, tenant: &Tenant, workflow_id: &str) -> ApiResult<Workflow> {
    let definition = get(app, tenant, workflow_id).await?;
    hensu_ir::from_json(&definition.to_string())
        .map_err(|e| ApiError::internal(format!("stored workflow does not load: {e:?}")))
}

/// The tenant's workflows, sorted by id.
pub async fn list(app: &AppState, tenant: &Tenant) -> ApiResult<Vec<WorkflowEntry>> {
    let all = app.registry.list_workflows(&tenant.tenant_id).await?;
    Ok(all
        .into_iter()
        .map(|w| WorkflowEntry {
            id: w.workflow_id,
            version: w.version,
        })
        .collect())
}

/// The tenant's workflows with their definitions loaded (`None` for one that does not load),
/// sorted by id.
pub async fn list_loaded(
    app: &AppState,
    tenant: &Tenant,
) -> ApiResult<Vec<(WorkflowEntry, Option<Workflow>)>> {
    let (reg, t) = (app.registry.as_ref(), tenant.tenant_id.as_str());
    let mut out = Vec::new();
    for w in reg.list_workflows(t).await? {
        let wf = reg
            .get_workflow(t, &w.workflow_id)
            .await?
            .and_then(|s| hensu_ir::from_json(&s.definition.to_string()).ok());
        let entry = WorkflowEntry {
            id: w.workflow_id,
            version: w.version,
        };
        out.push((entry, wf));
    }
    Ok(out)
}

/// Deletes (softly) one of the tenant's workflows; 404 when there is no live one.
pub async fn delete(app: &AppState, tenant: &Tenant, workflow_id: &str) -> ApiResult<()> {
    check_id("workflowId", workflow_id)?;
    let gone = app
        .registry
        .delete_workflow(&tenant.tenant_id, workflow_id)
        .await?;
    if gone {
        Ok(())
    } else {
        Err(ApiError::not_found())
    }
}
