//! The review inbox: executions waiting for a human. The review page shows the node's output,
//! its rubric result, prompt and criteria; the decision (approve, reject with feedback,
//! backtrack to a node) goes through the service's resume (the API's rules) with the review's
//! correlation id,
//! so a second decision for the same review (two tabs, two reviewers) is refused by the same
//! correlation check and shown as "already decided". A run waiting for several reviews (fork
//! branches) has one inbox row and one page (`?review=CORRELATION`) per review, each decided
//! on its own (docs/server.md, *Pending reviews*).

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use hensu_ir::Node;
use hensu_runtime::ExecutionPhase;
use hensu_server::AppState;
use hensu_server::error::ApiError;
use hensu_server::service::executions::{self, ResumeExecution};
use hensu_store::RunStatus;
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{RunView, api_error, load_run, output_block};
use crate::chrome::{self, Nav, time};
use crate::session::{Page, Viewer, check_post};

/// `GET /console/reviews`: the tenant's paused executions, oldest first.
pub async fn inbox(State(app): State<AppState>, Page(viewer): Page) -> Response {
    // Only the paused runs are read (the status is filtered in SQL).
    let paused = hensu_store::RunQuery {
        statuses: vec![RunStatus::Paused],
        ..hensu_store::RunQuery::default()
    };
    let mut records =
        match hensu_server::service::listing::all_records(&app, &viewer.tenant, paused).await {
            Ok(r) => r,
            Err(e) => return api_error(&viewer, Nav::Reviews, e),
        };
    records.reverse();
    let (reviewed, waiting): (Vec<_>, Vec<_>) =
        records.iter().partition(|r| r.correlation_id.is_some());
    // Every review each run waits for, decided on its own (docs/server.md, *Pending
    // reviews*): one read of the run's state per paused run.
    let mut reviews = Vec::new();
    for r in reviewed {
        match hensu_server::service::reviews::list(&app, &viewer.tenant, &r.run_id).await {
            Ok(list) => reviews.extend(list.reviews.into_iter().map(|p| (r, p))),
            Err(e) => return api_error(&viewer, Nav::Reviews, e),
        }
    }
    let body = html! {
        div data-live-source="/console/events" {
            h1 { "Reviews" }
            section id="inbox" data-live aria-labelledby="inbox-h" {
                h2 id="inbox-h" { "Waiting for a decision (" (reviews.len()) ")" }
                @if reviews.is_empty() {
                    p.muted { "Nothing to review." }
                } @else {
                    table {
                        thead { tr { th scope="col" { "Execution" } th scope="col" { "Workflow" } th scope="col" { "Node" } th scope="col" { "Branch" } th scope="col" { "Waiting since" } } }
                        tbody {
                            @for (r, p) in &reviews {
                                tr {
                                    td { a href={ "/console/reviews/" (r.run_id) "?review=" (p.correlation_id) } aria-label={ "Review execution " (r.run_id) " node " (p.node_id) } { "Review " code { (chrome::short_id(&r.run_id)) } } }
                                    td { (r.workflow_id) }
                                    td { code { (p.node_id) } @if let Some(t) = &p.tool { " · tool " code { (t) } } }
                                    td { @if let Some(b) = &p.branch { code { (b) } } @else { span.muted { "—" } } }
                                    td { (p.requested_at) }
                                }
                            }
                        }
                    }
                }
                @if !waiting.is_empty() {
                    h2 { "Paused for an external answer (" (waiting.len()) ")" }
                    ul {
                        @for r in &waiting {
                            li { a href={ "/console/executions/" (r.run_id) } { code { (chrome::short_id(&r.run_id)) } } " · " (r.workflow_id) " at " code { (r.current_node.as_deref().unwrap_or("?")) } }
                        }
                    }
                }
            }
        }
    };
    chrome::page(&viewer, "Reviews", Nav::Reviews, body).into_response()
}

/// Which pending review a review page shows (`?review=CORRELATION`; the first without).
#[derive(Deserialize)]
pub struct WhichReview {
    review: Option<String>,
}

/// `GET /console/reviews/{id}`.
pub async fn review(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    Query(which): Query<WhichReview>,
) -> Response {
    match load_run(&app, &viewer, &id).await {
        Ok(run) => review_page(&viewer, &run, which.review.as_deref(), None, StatusCode::OK),
        Err(e) => api_error(&viewer, Nav::Reviews, e),
    }
}

/// The phase of review `correlation` of the run (the first pending review when `None`): the
/// run's state with the decision routed to it shows it (docs/server.md, *Pending reviews*).
fn chosen_review(run: &RunView, correlation: Option<&str>) -> Option<ExecutionPhase> {
    let mut state = run.state.clone()?;
    if run.record.status != RunStatus::Paused {
        return None;
    }
    if let Some(c) = correlation
        && !hensu_runtime::route_review(&mut state, c)
    {
        return None;
    }
    hensu_runtime::pending_review(&state)?;
    Some(state.phase)
}

fn review_page(
    viewer: &Viewer,
    run: &RunView,
    which: Option<&str>,
    problem: Option<&str>,
    status: StatusCode,
) -> Response {
    review_page_with(viewer, run, which, problem, status, None)
}

/// The review page; `edited`: the edited arguments of a gated tool call, shown with their
/// diff ("Show changes").
fn review_page_with(
    viewer: &Viewer,
    run: &RunView,
    which: Option<&str>,
    problem: Option<&str>,
    status: StatusCode,
    edited: Option<&Map<String, Value>>,
) -> Response {
    let r = &run.record;
    let chosen = chosen_review(run, which);
    let pending = match &chosen {
        Some(ExecutionPhase::Awaiting {
            node_id,
            cached_result,
            correlation_id,
            tool_call,
            ..
        }) => Some((
            node_id.as_str(),
            cached_result,
            correlation_id.as_str(),
            tool_call.as_deref(),
        )),
        _ => None,
    };
    let title = format!("Review {}", chrome::short_id(&r.run_id));
    let body = html! {
        h1 { "Review of execution " code { (r.run_id) } }
        @if let Some(p) = problem { p.notice.error role="alert" { (p) } }
        @match pending {
            None => {
                p.notice role="status" {
                    "This execution is not waiting for a review (it is " (r.status.as_str()) "). "
                    a href={ "/console/executions/" (r.run_id) } { "See the execution" }
                }
            }
            Some((node_id, _, correlation, Some(call))) => {
                p { "Workflow " a href={ "/console/workflows/" (r.workflow_id) } { (r.workflow_id) }
                    ", node " code { (node_id) } ", waiting since " (time(r.updated_at)) "." }
                (super::tool_review::section(viewer, &r.run_id, call, correlation, edited))
            }
            Some((node_id, result, correlation, None)) => {
                @let node = run.workflow.as_ref().and_then(|w| w.node(node_id));
                p { "Workflow " a href={ "/console/workflows/" (r.workflow_id) } { (r.workflow_id) }
                    ", node " code { (node_id) } ", waiting since " (time(r.updated_at)) "." }
                section aria-labelledby="out-h" {
                    h2 id="out-h" { "Output" }
                    @match &result.output {
                        Some(o) => (output_block("review-output", "The node's output", o)),
                        None => p.muted { "The node produced no output." },
                    }
                }
                (rubric_section(run, node))
                (decision_forms(viewer, run, node, node_id, correlation))
            }
        }
    };
    (status, chrome::page(viewer, &title, Nav::Reviews, body)).into_response()
}

fn rubric_section(run: &RunView, node: Option<&Node>) -> Markup {
    let evaluation = run
        .state
        .as_ref()
        .and_then(|s| s.rubric_evaluation.as_ref());
    let rubric = node.and_then(Node::rubric);
    let prompt = match node {
        Some(Node::Standard(n)) => n.prompt.as_deref(),
        _ => None,
    };
    html! {
        @if evaluation.is_some() || rubric.is_some() {
            section aria-labelledby="rubric-h" {
                h2 id="rubric-h" { "Rubric" }
                @if let Some(e) = evaluation {
                    p { "Score " strong { (format!("{:.1}", e.score)) } " — "
                        @if e.passed { span.badge.status-completed { "passed" } } @else { span.badge.status-failed { "failed" } } }
                }
                @if let Some(rb) = rubric {
                    p.muted { (rb.name) ", pass threshold " (rb.pass_threshold) }
                    ul { @for c in &rb.criteria { li { strong { (c.name) } " (weight " (c.weight) ")" @if !c.description.is_empty() { ": " (c.description) } } } }
                }
            }
        }
        @if let Some(p) = prompt {
            details.output id="review-prompt" {
                summary { "The node's prompt" }
                pre.prompt { (p) }
            }
        }
    }
}

/// Whether the reviewed node lets the reviewer edit the context (`allowEdit = true`).
fn allows_edit(node: Option<&Node>) -> bool {
    matches!(node, Some(Node::Standard(n)) if n.review_config.as_ref().is_some_and(|r| r.allow_edit))
}

fn decision_forms(
    viewer: &Viewer,
    run: &RunView,
    node: Option<&Node>,
    node_id: &str,
    correlation: &str,
) -> Markup {
    let action = format!("/console/reviews/{}", run.record.run_id);
    let nodes: Vec<&str> = run
        .workflow
        .as_ref()
        .map(|w| {
            w.nodes
                .values()
                .filter(|n| !n.is_end())
                .map(Node::id)
                .collect()
        })
        .unwrap_or_default();
    let hidden = html! {
        input type="hidden" name="_csrf" value=(viewer.csrf);
        input type="hidden" name="correlationId" value=(correlation);
    };
    html! {
        section.decisions aria-labelledby="decide-h" {
            h2 id="decide-h" { "Decision" }
            @if allows_edit(node) {
                form.decision.stack.edit-context method="post" action=(action) {
                    (hidden)
                    input type="hidden" name="decision" value="approve";
                    label for="approve-edits" { "Context (edit before approving)" }
                    p.hint id="approve-edits-hint" { "A JSON object. Changed values are applied with the approval; a key you remove is left as it is." }
                    textarea id="approve-edits" name="contextEdits" rows="10" aria-describedby="approve-edits-hint" spellcheck="false" {
                        (serde_json::to_string_pretty(&run.output).unwrap_or_default())
                    }
                    button.primary type="submit" { "Approve" }
                }
            } @else {
                form.decision method="post" action=(action) {
                    (hidden)
                    input type="hidden" name="decision" value="approve";
                    button.primary type="submit" { "Approve" }
                }
            }
            form.decision.stack method="post" action=(action) {
                (hidden)
                input type="hidden" name="decision" value="reject";
                label for="reject-reason" { "Feedback for the rejection" }
                textarea id="reject-reason" name="reason" rows="3" required {}
                button.danger type="submit" { "Reject" }
            }
            form.decision.stack method="post" action=(action) {
                (hidden)
                input type="hidden" name="decision" value="backtrack";
                label for="backtrack-target" { "Go back to node" }
                select id="backtrack-target" name="targetStep" required {
                    @for n in &nodes { option value=(n) selected[*n == node_id] { (n) } }
                }
                label for="backtrack-reason" { "Feedback for that node" }
                textarea id="backtrack-reason" name="reason" rows="3" {}
                button type="submit" { "Backtrack" }
            }
        }
    }
}

#[derive(Deserialize)]
pub struct DecisionForm {
    #[serde(rename = "_csrf")]
    csrf: Option<String>,
    #[serde(rename = "correlationId")]
    correlation_id: String,
    decision: String,
    reason: Option<String>,
    #[serde(rename = "targetStep")]
    target_step: Option<String>,
    /// The edited context of an approval (`allowEdit = true`), as JSON text.
    #[serde(rename = "contextEdits")]
    context_edits: Option<String>,
    /// The edited arguments of a gated tool call, as JSON text.
    arguments: Option<String>,
    /// `preview`: show the edit's diff instead of deciding.
    step: Option<String>,
}

/// `POST /console/reviews/{id}`: the decision, through the service's resume.
pub async fn decide(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<DecisionForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    let backtrack = form.decision == "backtrack";
    let arguments = match form.arguments.as_deref() {
        Some(text) if form.decision == "approve" => {
            let preview = form.step.as_deref() == Some("preview");
            match tool_arguments(&app, &viewer, &id, &form.correlation_id, text, preview).await {
                Ok(a) => a,
                Err(r) => return r,
            }
        }
        _ => None,
    };
    let context_edits = match form.context_edits.as_deref() {
        Some(text) if form.decision == "approve" => {
            match approval_edits(&app, &viewer, &id, &form.correlation_id, text).await {
                Ok(edits) => edits,
                Err(r) => return r,
            }
        }
        _ => None,
    };
    let request = ResumeExecution {
        correlation_id: Some(form.correlation_id.clone()),
        decision: Some(form.decision),
        reason: form.reason.filter(|r| !r.trim().is_empty()),
        target_step: form.target_step.filter(|_| backtrack),
        context_edits,
        arguments,
    };
    let result = executions::resume(&app, &viewer.tenant, &id, request).await;
    match result {
        Ok(_) => Redirect::to(&format!("/console/executions/{id}?notice=decided")).into_response(),
        Err(e) => refusal(&app, &viewer, &id, &form.correlation_id, e).await,
    }
}

/// The edited arguments of a gated tool call's approval (`None`: the model's, unchanged).
/// The review page again instead (`Err`): with the diff for a preview, with the reason (400)
/// when the text is not a JSON object.
async fn tool_arguments(
    app: &AppState,
    viewer: &Viewer,
    id: &str,
    correlation: &str,
    text: &str,
    preview: bool,
) -> Result<Option<Map<String, Value>>, Response> {
    let run = load_run(app, viewer, id)
        .await
        .map_err(|e| api_error(viewer, Nav::Reviews, e))?;
    let Some(ExecutionPhase::Awaiting {
        tool_call: Some(call),
        ..
    }) = chosen_review(&run, Some(correlation))
    else {
        // Not waiting any more (the resume refuses it as decided) or not a tool call (the
        // resume refuses arguments for a node's review).
        return Ok(serde_json::from_str(text).ok());
    };
    let page = |problem: Option<&str>, status, edited: Option<&Map<String, Value>>| {
        review_page_with(viewer, &run, Some(correlation), problem, status, edited)
    };
    match super::tool_review::edited_arguments(&call, text) {
        Err(why) => Err(page(Some(&why), StatusCode::BAD_REQUEST, None)),
        Ok(edited) if preview => {
            let shown =
                edited.unwrap_or_else(|| call.arguments.as_object().cloned().unwrap_or_default());
            Err(page(None, StatusCode::OK, Some(&shown)))
        }
        Ok(edited) => Ok(edited),
    }
}

/// The context values an approval changes: the edited JSON object against the run's public
/// context (only keys whose value differs). Refused (the review page again, 400) when the
/// reviewed node does not allow edits or the text is not a JSON object.
async fn approval_edits(
    app: &AppState,
    viewer: &Viewer,
    id: &str,
    correlation: &str,
    text: &str,
) -> Result<Option<Map<String, Value>>, Response> {
    let run = load_run(app, viewer, id)
        .await
        .map_err(|e| api_error(viewer, Nav::Reviews, e))?;
    let Some(ExecutionPhase::Awaiting { node_id, .. }) = chosen_review(&run, Some(correlation))
    else {
        // Not waiting any more: the resume refuses the decision as already decided.
        return Ok(None);
    };
    let node = run.workflow.as_ref().and_then(|w| w.node(&node_id));
    let refuse = |why: &str| {
        review_page(
            viewer,
            &run,
            Some(correlation),
            Some(why),
            StatusCode::BAD_REQUEST,
        )
    };
    if !allows_edit(node) {
        return Err(refuse(
            "This review does not allow edits (the workflow does not set allowEdit = true).",
        ));
    }
    let edited = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err(refuse("The edited context must be a JSON object.")),
        Err(e) => {
            return Err(refuse(&format!(
                "The edited context is not valid JSON: {e}"
            )));
        }
    };
    let changed: Map<String, Value> = edited
        .into_iter()
        .filter(|(k, v)| !k.starts_with('_') && run.output.get(k) != Some(v))
        .collect();
    Ok((!changed.is_empty()).then_some(changed))
}

/// The page after a refused decision: "already decided" when the review it answered is no
/// longer the one waiting, the API's reason otherwise.
async fn refusal(
    app: &AppState,
    viewer: &Viewer,
    id: &str,
    correlation: &str,
    e: ApiError,
) -> Response {
    if e.status == StatusCode::NOT_FOUND {
        return api_error(viewer, Nav::Reviews, e);
    }
    let run = match load_run(app, viewer, id).await {
        Ok(r) => r,
        Err(e2) => return api_error(viewer, Nav::Reviews, e2),
    };
    // 409: another decision holds the run right now (it is being resumed).
    let still_waiting =
        e.status != StatusCode::CONFLICT && chosen_review(&run, Some(correlation)).is_some();
    if still_waiting {
        let text = format!("The decision was refused: {}", e.message);
        review_page(viewer, &run, Some(correlation), Some(&text), e.status)
    } else {
        let text = format!(
            "This review was already decided (the execution is now {}). Your decision was not applied.",
            run.record.status.as_str()
        );
        review_page(viewer, &run, None, Some(&text), StatusCode::CONFLICT)
    }
}
