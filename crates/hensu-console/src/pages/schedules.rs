//! The tenant's schedules (docs/schedules.md): each with its workflow, cadence, policies, next
//! tick and latest firing (linked to its execution), read through the server's
//! `service::schedules` with the viewer's tenant; *Pause*, *Resume* and *Run now* are the
//! service's `set_paused` and `run_now` (the API's `POST /api/v1/schedules/{id}/pause`,
//! `…/resume`, `…/run`).

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use hensu_server::AppState;
use hensu_server::service::schedules as service;
use maud::{Markup, html};
use serde::Deserialize;

use super::api_error;
use super::controls::ControlForm;
use crate::chrome::{self, Nav};
use crate::session::{Page, Viewer, check_post};

#[derive(Deserialize)]
pub struct ListQuery {
    notice: Option<String>,
}

/// The schedules with their details; the list is short (a tenant's schedules), one read each.
async fn load(
    app: &AppState,
    viewer: &Viewer,
) -> Result<Vec<service::ScheduleDetail>, hensu_server::error::ApiError> {
    let mut out = Vec::new();
    for s in service::list(app, &viewer.tenant).await? {
        out.push(service::get(app, &viewer.tenant, &s.id).await?);
    }
    Ok(out)
}

/// `GET /console/schedules`.
pub async fn list(
    State(app): State<AppState>,
    Page(viewer): Page,
    Query(q): Query<ListQuery>,
) -> Response {
    let rows = match load(&app, &viewer).await {
        Ok(r) => r,
        Err(e) => return api_error(&viewer, Nav::Schedules, e),
    };
    let body = html! {
        h1 { "Schedules" }
        (chrome::notice(q.notice.as_deref()))
        @if rows.is_empty() {
            p.muted { "No schedules yet. Declare " code { "[[schedules]]" } " in the server's hensu.toml or create one with " code { "POST /api/v1/schedules" } "." }
        } @else {
            table {
                caption { (rows.len()) " schedules, by id" }
                thead { tr {
                    th scope="col" { "Id" } th scope="col" { "Workflow" } th scope="col" { "Cron" }
                    th scope="col" { "Next tick" } th scope="col" { "Policies" } th scope="col" { "Latest firing" }
                    th scope="col" { "Controls" }
                } }
                tbody {
                    @for d in &rows {
                        @let s = &d.schedule;
                        tr {
                            td { code { (s.id) } @if s.source == "config" { " " span.muted { "(hensu.toml)" } } }
                            td { a href={ "/console/workflows/" (s.workflow_id) } { (s.workflow_id) } }
                            td { code { (s.cron) } " " span.muted { (s.time_zone) } }
                            td {
                                @if s.paused { (chrome::status_badge("paused")) }
                                @else if let Some(next) = &s.next_fire_at { (next) }
                                @else { span.muted { "none" } }
                            }
                            td { "overlap " (policy(&s.overlap)) ", missed " (policy(&s.missed)) }
                            td {
                                @if let Some(f) = d.firings.first() {
                                    (f.tick) " " (chrome::status_badge(&f.state))
                                    @if let Some(run) = &f.execution_id {
                                        " " a href={ "/console/executions/" (run) } { "execution" }
                                    }
                                    @if let Some(why) = &f.detail { " " span.muted { (why) } }
                                } @else { span.muted { "none yet" } }
                            }
                            td { (controls(&viewer, &s.id, s.paused)) }
                        }
                    }
                }
            }
        }
    };
    chrome::page(&viewer, "Schedules", Nav::Schedules, body).into_response()
}

/// The forms of one schedule: *Run now*, and *Pause* or *Resume*.
fn controls(viewer: &Viewer, id: &str, paused: bool) -> Markup {
    let form = |action: &str, class: &str, label: &str| {
        html! {
            form method="post" action={ "/console/schedules/" (id) "/" (action) } {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                button class=(class) type="submit" aria-label={ (label) " " (id) } { (label) }
            }
        }
    };
    html! {
        div.run-controls role="group" aria-label={ "Controls of " (id) } {
            (form("run", "primary", "Run now"))
            @if paused { (form("resume", "", "Resume")) } @else { (form("pause", "", "Pause")) }
        }
    }
}

/// `POST /console/schedules/{id}/pause`.
pub async fn pause(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ControlForm>,
) -> Response {
    set_paused(&app, &viewer, &id, &headers, &form, true).await
}

/// `POST /console/schedules/{id}/resume`.
pub async fn resume(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ControlForm>,
) -> Response {
    set_paused(&app, &viewer, &id, &headers, &form, false).await
}

async fn set_paused(
    app: &AppState,
    viewer: &Viewer,
    id: &str,
    headers: &HeaderMap,
    form: &ControlForm,
    paused: bool,
) -> Response {
    if let Err(r) = check_post(headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    match service::set_paused(app, &viewer.tenant, id, paused).await {
        Ok(_) => {
            let notice = if paused {
                "schedule-paused"
            } else {
                "schedule-resumed"
            };
            Redirect::to(&format!("/console/schedules?notice={notice}")).into_response()
        }
        Err(e) => api_error(viewer, Nav::Schedules, e),
    }
}

/// `POST /console/schedules/{id}/run`: fires the schedule now; opens the execution it started
/// (or the list, when its overlap policy skipped or queued the firing).
pub async fn run_now(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ControlForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    match service::run_now(&app, &viewer.tenant, &id).await {
        Ok(f) => match &f.execution_id {
            Some(run) => Redirect::to(&format!("/console/executions/{run}?notice=started")),
            None => Redirect::to("/console/schedules?notice=schedule-fired"),
        }
        .into_response(),
        Err(e) => api_error(&viewer, Nav::Schedules, e),
    }
}

/// A policy as its JSON word (`cancel_previous`, `run_once`, …).
fn policy<T: serde::Serialize>(p: &T) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
