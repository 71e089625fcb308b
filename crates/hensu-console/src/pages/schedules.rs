//! The tenant's schedules (docs/schedules.md): each with its workflow, cadence, policies, next
//! tick and latest firing (linked to its execution), read through the server's
//! `service::schedules` with the viewer's tenant.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use hensu_server::AppState;
use hensu_server::service::schedules as service;
use maud::html;

use super::api_error;
use crate::chrome::{self, Nav};
use crate::session::{Page, Viewer};

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
pub async fn list(State(app): State<AppState>, Page(viewer): Page) -> Response {
    let rows = match load(&app, &viewer).await {
        Ok(r) => r,
        Err(e) => return api_error(&viewer, Nav::Schedules, e),
    };
    let body = html! {
        h1 { "Schedules" }
        @if rows.is_empty() {
            p.muted { "No schedules yet. Declare " code { "[[schedules]]" } " in the server's hensu.toml or create one with " code { "POST /api/v1/schedules" } "." }
        } @else {
            table {
                caption { (rows.len()) " schedules, by id" }
                thead { tr {
                    th scope="col" { "Id" } th scope="col" { "Workflow" } th scope="col" { "Cron" }
                    th scope="col" { "Next tick" } th scope="col" { "Policies" } th scope="col" { "Latest firing" }
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
                        }
                    }
                }
            }
        }
    };
    chrome::page(&viewer, "Schedules", Nav::Schedules, body).into_response()
}

/// A policy as its JSON word (`cancel_previous`, `run_once`, …).
fn policy<T: serde::Serialize>(p: &T) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
