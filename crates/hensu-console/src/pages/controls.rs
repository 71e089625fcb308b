//! Run controls on an execution's page: *Pause* and *Cancel* while it runs, *Cancel* and (for a
//! pause that is not a review) *Resume* while it is paused. Each is a CSRF-checked form that
//! calls the server's service (`cancel`, `pause`, `resume`: the functions behind the API), so
//! the console obeys exactly the API's rules; a refusal (the run ended meanwhile, it runs on
//! another server) is shown on the execution's page with the API's message. A failed run has
//! *Redrive* (the service's `time_travel::redrive`, the API's `POST …/redrive`): the new run's
//! page opens. An ended run has *Replay* (the service's `replay`, the API's `POST …/replay`;
//! its handler is [`super::execution::replay`], which renders the page with the result). A run
//! that is not finished has a *Signal* form (name and JSON payload: the service's
//! `signals::send`, the API's `POST …/signals/{name}`; docs/language.md, *Timers and signals*),
//! its name filled in when the run waits for a signal.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use hensu_server::AppState;
use hensu_server::service::control;
use hensu_server::service::executions::{self, Acknowledged, ResumeExecution};
use hensu_store::{RunRecord, RunStatus};
use maud::{Markup, html};
use serde::Deserialize;

use super::api_error;
use crate::chrome::Nav;
use crate::session::{Page, Viewer, check_post};

/// The control forms `record`'s state allows (nothing once it has ended).
pub fn forms(viewer: &Viewer, record: &RunRecord) -> Markup {
    let base = format!("/console/executions/{}", record.run_id);
    let running = record.status == RunStatus::Running;
    let paused = record.status == RunStatus::Paused;
    let plain_pause = paused && record.correlation_id.is_none();
    let form = |action: &str, class: &str, label: &str| {
        html! {
            form method="post" action={ (base) "/" (action) } {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                button class=(class) type="submit" { (label) }
            }
        }
    };
    let waiting_for = record.wait.as_ref().and_then(|w| w.signal.clone());
    let ended = matches!(
        record.status,
        RunStatus::Completed | RunStatus::Failed | RunStatus::Rejected
    );
    html! {
        @if running || paused || record.status == RunStatus::Queued {
            form.signal-form method="post" action={ (base) "/signal" } aria-label="Send a signal" {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                label { "Signal " input type="text" name="name" required value=[waiting_for.as_deref()]; }
                label { " payload (JSON) " input type="text" name="payload" placeholder="null"; }
                button type="submit" { "Signal" }
            }
        }
        @if ended {
            div.run-controls role="group" aria-label="Run controls" {
                @if record.status == RunStatus::Failed { (form("redrive", "primary", "Redrive")) }
                (form("replay", "", "Replay"))
            }
        }
        @if running || paused {
            div.run-controls role="group" aria-label="Run controls" {
                @if running && !record.cancel_requested { (form("pause", "", "Pause")) }
                @if plain_pause { (form("resume", "primary", "Resume")) }
                @if !record.cancel_requested { (form("cancel", "danger", "Cancel")) }
            }
        }
    }
}

#[derive(Deserialize)]
pub struct ControlForm {
    #[serde(rename = "_csrf")]
    pub(super) csrf: Option<String>,
}

fn back(id: &str, notice: &str) -> Response {
    Redirect::to(&format!("/console/executions/{id}?notice={notice}")).into_response()
}

/// `POST /console/executions/{id}/cancel`: the service's cancel.
pub async fn cancel(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ControlForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    match executions::cancel(&app, &viewer.tenant, &id).await {
        Ok(ack) if ack.status == Acknowledged::Cancelled => back(&id, "cancelled"),
        Ok(_) => back(&id, "cancelling"),
        Err(e) => api_error(&viewer, Nav::Executions, e),
    }
}

/// `POST /console/executions/{id}/pause`: the service's pause.
pub async fn pause(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ControlForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    match control::pause(&app, &viewer.tenant, &id).await {
        Ok(ack) if ack.status == Acknowledged::Paused => back(&id, "paused"),
        Ok(_) => back(&id, "pausing"),
        Err(e) => api_error(&viewer, Nav::Executions, e),
    }
}

/// `POST /console/executions/{id}/resume`: a plain resume (no decision) of a paused run, the
/// service's resume.
pub async fn resume(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ControlForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    match executions::resume(&app, &viewer.tenant, &id, ResumeExecution::default()).await {
        Ok(_) => back(&id, "resumed"),
        Err(e) => api_error(&viewer, Nav::Executions, e),
    }
}

/// `POST /console/executions/{id}/redrive`: the service's redrive of a failed run; opens the
/// new run's page.
pub async fn redrive(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ControlForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    let request = hensu_server::service::time_travel::RedriveExecution::default();
    match hensu_server::service::time_travel::redrive(&app, &viewer.tenant, &id, request).await {
        Ok(forked) => back(&forked.execution_id, "redriven"),
        Err(e) => api_error(&viewer, Nav::Executions, e),
    }
}

#[derive(Deserialize)]
pub struct SignalForm {
    #[serde(rename = "_csrf")]
    csrf: Option<String>,
    name: String,
    #[serde(default)]
    payload: String,
}

/// `POST /console/executions/{id}/signal`: the service's signal send (a blank payload is
/// `null`; text that is not JSON is refused as the API refuses a bad body).
pub async fn signal(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<SignalForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    let payload = if form.payload.trim().is_empty() {
        serde_json::Value::Null
    } else {
        match serde_json::from_str(&form.payload) {
            Ok(v) => v,
            Err(e) => {
                let e = hensu_server::error::ApiError::bad_request(format!(
                    "the signal's payload is not JSON: {e}"
                ))
                .with_code("invalid_body");
                return api_error(&viewer, Nav::Executions, e);
            }
        }
    };
    let request = hensu_server::service::signals::SendSignal { payload };
    match hensu_server::service::signals::send(&app, &viewer.tenant, &id, &form.name, request).await
    {
        Ok(sent) if sent.woke => back(&id, "signalled"),
        Ok(_) => back(&id, "signal-kept"),
        Err(e) => api_error(&viewer, Nav::Executions, e),
    }
}
