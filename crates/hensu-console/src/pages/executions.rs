//! The executions list: status, workflow, start, duration, current node; filtered by status and
//! workflow, paginated, and kept current by the tenant's event stream (the script re-renders a
//! row when its execution reports an event; there is no polling loop).

use std::collections::BTreeSet;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use hensu_server::AppState;
use hensu_server::routes::executions::{last_event_id, sse_response};
use hensu_server::service::outcome::shown_status;
use hensu_server::service::{events, executions};
use hensu_store::{RunRecord, RunStatus};
use maud::{Markup, html};
use serde::Deserialize;

use super::api_error;
use crate::chrome::{self, Nav, duration, short_id, status_badge, time};
use crate::session::Page;

/// Rows per page.
pub const PAGE_SIZE: usize = 50;

/// Every status a filter may name, in lifecycle order.
pub const STATUSES: [&str; 6] = [
    "running",
    "paused",
    "completed",
    "failed",
    "rejected",
    "cancelled",
];

/// The list's query: `?status=…&workflow=…&page=…` (unknown values are ignored, not echoed).
#[derive(Deserialize, Default, Clone, Debug)]
pub struct Filter {
    pub status: Option<String>,
    pub workflow: Option<String>,
    pub page: Option<usize>,
}

impl Filter {
    fn status(&self) -> Option<&str> {
        self.status.as_deref().filter(|s| STATUSES.contains(s))
    }
    fn workflow(&self) -> Option<&str> {
        self.workflow.as_deref().filter(|w| !w.is_empty())
    }
    fn matches(&self, r: &RunRecord) -> bool {
        // The status a person is shown: a run ended at a FAILURE end is listed as failed.
        self.status().is_none_or(|s| shown_status(r) == s)
            && self.workflow().is_none_or(|w| r.workflow_id == w)
    }
    /// The query string of this filter on page `page`.
    fn query(&self, page: usize) -> String {
        let mut parts = Vec::new();
        if let Some(s) = self.status() {
            parts.push(format!("status={s}"));
        }
        if let Some(w) = self.workflow() {
            parts.push(format!("workflow={}", encode(w)));
        }
        if page > 1 {
            parts.push(format!("page={page}"));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }
}

/// Percent-encodes a query value (everything but unreserved characters).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// How long a run has taken: until its last write when it stopped, until now while it runs.
pub fn elapsed(r: &RunRecord, now: u64) -> u64 {
    let end = if r.status == RunStatus::Running {
        now
    } else {
        r.updated_at
    };
    end.saturating_sub(r.started_at)
}

/// One row of the list.
pub fn row(r: &RunRecord, now: u64) -> Markup {
    let status = shown_status(r);
    html! {
        tr id={ "run-" (r.run_id) } data-status=(status) {
            td data-label="Execution" {
                a href={ "/console/executions/" (r.run_id) } aria-label={ "Execution " (r.run_id) } {
                    code { (short_id(&r.run_id)) }
                }
            }
            td data-label="Workflow" { a href={ "/console/workflows/" (r.workflow_id) } { (r.workflow_id) } }
            td data-label="Status" { (status_badge(status)) }
            td data-label="Started" { (time(r.started_at)) }
            td data-label="Duration" { (duration(elapsed(r, now))) }
            td data-label="Current node" {
                @match (&r.current_node, r.status) {
                    (Some(n), RunStatus::Running | RunStatus::Paused) => code { (n) },
                    (Some(n), _) => span.muted { "ended at " code { (n) } },
                    (None, _) => span.muted { "—" },
                }
            }
        }
    }
}

/// `GET /console/executions`.
pub async fn list(
    State(app): State<AppState>,
    Page(viewer): Page,
    Query(filter): Query<Filter>,
) -> Response {
    let records = match executions::records(&app, &viewer.tenant).await {
        Ok(r) => r,
        Err(e) => return api_error(&viewer, Nav::Executions, e),
    };
    let workflows: BTreeSet<&str> = records.iter().map(|r| r.workflow_id.as_str()).collect();
    let matching: Vec<&RunRecord> = records.iter().filter(|r| filter.matches(r)).collect();
    let pages = matching.len().div_ceil(PAGE_SIZE).max(1);
    let page = filter.page.unwrap_or(1).clamp(1, pages);
    let now = chrome::now_ms();
    let shown = matching.iter().skip((page - 1) * PAGE_SIZE).take(PAGE_SIZE);
    let body = html! {
        h1 { "Executions" }
        form.filters method="get" action="/console/executions" {
            label for="f-status" { "Status" }
            select id="f-status" name="status" {
                option value="" { "any" }
                @for s in STATUSES {
                    option value=(s) selected[filter.status() == Some(s)] { (s) }
                }
            }
            label for="f-workflow" { "Workflow" }
            select id="f-workflow" name="workflow" {
                option value="" { "any" }
                @for w in &workflows {
                    option value=(w) selected[filter.workflow() == Some(*w)] { (w) }
                }
            }
            button type="submit" { "Filter" }
        }
        table.runs data-live-list data-first-page=(if page == 1 { "true" } else { "false" }) {
            caption {
                span data-run-count { (matching.len()) } " executions"
                @if matching.len() != records.len() { " (of " (records.len()) ")" }
                ", newest first"
            }
            thead {
                tr {
                    th scope="col" { "Execution" }
                    th scope="col" { "Workflow" }
                    th scope="col" { "Status" }
                    th scope="col" { "Started" }
                    th scope="col" { "Duration" }
                    th scope="col" { "Current node" }
                }
            }
            tbody {
                @for r in shown { (row(r, now)) }
                @if matching.is_empty() {
                    tr id="no-runs" { td colspan="6" { "No executions yet." } }
                }
            }
        }
        @if pages > 1 {
            nav.pager aria-label="Pages" {
                @if page > 1 {
                    a href={ "/console/executions" (filter.query(page - 1)) } rel="prev" { "← Newer" }
                }
                span { "Page " (page) " of " (pages) }
                @if page < pages {
                    a href={ "/console/executions" (filter.query(page + 1)) } rel="next" { "Older →" }
                }
            }
        }
    };
    chrome::page(&viewer, "Executions", Nav::Executions, body).into_response()
}

/// `GET /console/executions/{id}/row`: the row of one execution under the list's filter, or
/// 204 when the execution does not match it (the script then removes the row).
pub async fn row_fragment(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    Query(filter): Query<Filter>,
) -> Response {
    match executions::owned_record(&app, &viewer.tenant, &id).await {
        Ok(r) if filter.matches(&r) => {
            Html(row(&r, chrome::now_ms()).into_string()).into_response()
        }
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => e.into_response(),
    }
}

/// `GET /console/events`: the API's tenant stream, authenticated by the console session
/// (`EventSource` cannot send an `Authorization` header).
pub async fn tenant_events(
    State(app): State<AppState>,
    Page(viewer): Page,
    headers: HeaderMap,
) -> Response {
    match events::tenant_events(&app, &viewer.tenant, last_event_id(&headers)).await {
        Ok(stream) => sse_response(stream),
        Err(e) => e.into_response(),
    }
}

/// `GET /console/executions/{id}/events`: the API's stream of one execution, by session.
pub async fn events(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match events::execution_events(&app, &viewer.tenant, &id, last_event_id(&headers)).await {
        Ok(stream) => sse_response(stream),
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_query_keeps_known_values_only() {
        let f = Filter {
            status: Some("paused".into()),
            workflow: Some("a b&c".into()),
            page: None,
        };
        assert_eq!(f.query(2), "?status=paused&workflow=a%20b%26c&page=2");
        let bad = Filter {
            status: Some("<script>".into()),
            ..Filter::default()
        };
        assert_eq!(bad.query(1), "");
    }
}
