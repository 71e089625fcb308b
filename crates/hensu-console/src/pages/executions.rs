//! The executions list: status, workflow, start, duration, current node; filtered by status and
//! workflow, one page at a time through the API's paged query (one SQL query a page, a cursor
//! for the next: docs/server.md, *Paging*), and kept current by the tenant's event stream (the
//! script re-renders a row when its execution reports an event; there is no polling loop).

use std::collections::BTreeSet;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use hensu_server::AppState;
use hensu_server::routes::executions::{last_event_id, sse_response};
use hensu_server::service::outcome::shown_status;
use hensu_server::service::{events, executions, listing};
use hensu_store::{RunCursor, RunQuery, RunRecord, RunStatus};
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

/// The list's query: `?status=…&workflow=…&cursor=…` (unknown values are ignored, not echoed;
/// a cursor no page produced shows the first page).
#[derive(Deserialize, Default, Clone, Debug)]
pub struct Filter {
    pub status: Option<String>,
    pub workflow: Option<String>,
    pub cursor: Option<String>,
}

impl Filter {
    fn status(&self) -> Option<&str> {
        self.status.as_deref().filter(|s| STATUSES.contains(s))
    }
    fn workflow(&self) -> Option<&str> {
        self.workflow.as_deref().filter(|w| !w.is_empty())
    }
    fn cursor(&self) -> Option<RunCursor> {
        self.cursor
            .as_deref()
            .and_then(|c| RunCursor::decode(c).ok())
    }
    /// The stored statuses that can show as the filter's status: a run that ended at a
    /// FAILURE end is stored `completed` and shown `failed` (the page is filtered again by
    /// [`Filter::matches`]).
    fn stored_statuses(&self) -> Vec<RunStatus> {
        match self.status() {
            None => Vec::new(),
            Some("failed") => vec![RunStatus::Failed, RunStatus::Completed],
            Some(s) => RunStatus::parse(s).into_iter().collect(),
        }
    }
    fn matches(&self, r: &RunRecord) -> bool {
        // The status a person is shown: a run ended at a FAILURE end is listed as failed.
        self.status().is_none_or(|s| shown_status(r) == s)
            && self.workflow().is_none_or(|w| r.workflow_id == w)
    }
    /// The query string of this filter on the page after `cursor` (the first page: `None`).
    fn query(&self, cursor: Option<&str>) -> String {
        let mut parts = Vec::new();
        if let Some(s) = self.status() {
            parts.push(format!("status={s}"));
        }
        if let Some(w) = self.workflow() {
            parts.push(format!("workflow={}", encode(w)));
        }
        if let Some(c) = cursor {
            parts.push(format!("cursor={}", encode(c)));
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
    let query = RunQuery {
        statuses: filter.stored_statuses(),
        workflow_id: filter.workflow().map(str::to_string),
        cursor: filter.cursor(),
        limit: PAGE_SIZE,
        ..RunQuery::default()
    };
    let page = match listing::records_page(&app, &viewer.tenant, &query).await {
        Ok(p) => p,
        Err(e) => return api_error(&viewer, Nav::Executions, e),
    };
    // The dropdown offers the tenant's workflows (and a filtered one that was deleted since).
    let listed = app
        .registry
        .list_workflows(&viewer.tenant.tenant_id)
        .await
        .unwrap_or_default();
    let mut workflows: BTreeSet<&str> = listed.iter().map(|w| w.workflow_id.as_str()).collect();
    workflows.extend(filter.workflow());
    let matching: Vec<&RunRecord> = page.records.iter().filter(|r| filter.matches(r)).collect();
    let first_page = query.cursor.is_none();
    let next = page.next_cursor.as_ref().map(RunCursor::encode);
    let now = chrome::now_ms();
    let shown = matching.iter();
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
        table.runs data-live-list data-first-page=(if first_page { "true" } else { "false" }) {
            caption {
                span data-run-count { (matching.len()) } " executions"
                @if !first_page || next.is_some() { " on this page" }
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
        @if !first_page || next.is_some() {
            nav.pager aria-label="Pages" {
                @if !first_page {
                    a href={ "/console/executions" (filter.query(None)) } rel="first" { "← Newest" }
                }
                @if let Some(c) = &next {
                    a href={ "/console/executions" (filter.query(Some(c))) } rel="next" { "Next page (older) →" }
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
    match hensu_server::service::tenant_stream::tenant_events(
        &app,
        &viewer.tenant,
        last_event_id(&headers),
    )
    .await
    {
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
            cursor: None,
        };
        assert_eq!(
            f.query(Some("3a31")),
            "?status=paused&workflow=a%20b%26c&cursor=3a31"
        );
        let bad = Filter {
            status: Some("<script>".into()),
            cursor: Some("not a cursor".into()),
            ..Filter::default()
        };
        assert_eq!(bad.query(None), "");
        assert_eq!(bad.cursor(), None);
    }
}
