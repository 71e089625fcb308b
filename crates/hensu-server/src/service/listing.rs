//! The paged execution list (`GET /api/v1/executions`; docs/server.md, *Paging*): the query
//! parameters, checked into a [`RunQuery`], and one page of the tenant's executions read in
//! one SQL query (`WorkflowRegistry::tenant_runs_page`).

use hensu_store::{RunCursor, RunPage, RunQuery, RunRecord, RunStatus};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::service::executions::{ExecutionStatus, PausedExecution};

/// The query parameters of the list. Every one is optional; values are checked here (not by
/// the extractor) so that a bad one is a JSON 400 with a `code`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Comma-separated statuses (`running,paused`); any status when absent.
    pub status: Option<String>,
    /// Only executions of this workflow id.
    pub workflow: Option<String>,
    /// Only executions started at or after this RFC 3339 time.
    pub since: Option<String>,
    /// Only executions started before this RFC 3339 time.
    pub until: Option<String>,
    /// The `X-Next-Cursor` of the previous page, unchanged.
    pub cursor: Option<String>,
    /// Executions per page: default 50, at most 500 (a larger value is clamped). Read as text
    /// so a bad value is this API's JSON 400; documented as the integer it must be.
    #[param(value_type = Option<u32>, minimum = 1)]
    pub limit: Option<String>,
}

/// A bad query parameter: 400 `invalid_parameter`.
fn invalid(name: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("{name}: {why}")).with_code("invalid_parameter")
}

fn time(name: &str, value: &Option<String>) -> ApiResult<Option<u64>> {
    value
        .as_deref()
        .map(|v| {
            hensu_store::parse_rfc3339(v)
                .ok_or_else(|| invalid(name, "must be an RFC 3339 time, e.g. 2026-05-01T12:00:00Z"))
        })
        .transpose()
}

impl ListParams {
    /// The store query of these parameters, or a 400 naming the bad one (`invalid_cursor`
    /// for a cursor no page produced, `invalid_parameter` for the others).
    pub fn to_query(&self) -> ApiResult<RunQuery> {
        let statuses = match self.status.as_deref().map(str::trim) {
            None | Some("") => Vec::new(),
            Some(list) => list
                .split(',')
                .map(|s| {
                    RunStatus::parse(s.trim()).ok_or_else(|| {
                        let known: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
                        let shown: String = s.chars().take(32).collect();
                        invalid(
                            "status",
                            format!("unknown status `{shown}` (one of {})", known.join(", ")),
                        )
                    })
                })
                .collect::<ApiResult<Vec<RunStatus>>>()?,
        };
        let workflow_id = match self.workflow.as_deref() {
            None | Some("") => None,
            Some(w) => {
                crate::validate::check_id("workflow", w)
                    .map_err(|e| e.with_code("invalid_parameter"))?;
                Some(w.to_string())
            }
        };
        let limit = match self.limit.as_deref() {
            None | Some("") => 0,
            Some(text) => match text.parse::<u64>() {
                Ok(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
                _ => {
                    return Err(invalid(
                        "limit",
                        "must be a whole number from 1 (at most 500 are returned)",
                    ));
                }
            },
        };
        let cursor = match self.cursor.as_deref() {
            None | Some("") => None,
            Some(text) => Some(RunCursor::decode(text).map_err(|e| {
                ApiError::bad_request(format!("cursor: {e}")).with_code("invalid_cursor")
            })?),
        };
        Ok(RunQuery {
            statuses,
            workflow_id,
            since: time("since", &self.since)?,
            until: time("until", &self.until)?,
            cursor,
            limit,
        })
    }

    /// The path and query of the next page: these parameters (normalized) with `cursor`.
    pub fn next_page_link(&self, base: &str, cursor: &str) -> String {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for (name, value) in [
            ("status", &self.status),
            ("workflow", &self.workflow),
            ("since", &self.since),
            ("until", &self.until),
            ("limit", &self.limit),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                pairs.push((name, v));
            }
        }
        pairs.push(("cursor", cursor));
        let query: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{k}={}", percent_encode(v)))
            .collect();
        format!("{base}?{}", query.join("&"))
    }
}

/// `text` with every byte outside RFC 3986's unreserved set percent-encoded (a `+` of a time
/// zone must not come back as a space).
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One page of the tenant's executions, newest first, and the cursor of the next one.
pub struct ExecutionPage {
    pub items: Vec<ExecutionStatus>,
    pub next_cursor: Option<String>,
}

/// One page of the tenant's run records matching `query` (the console's list too).
pub async fn records_page(app: &AppState, tenant: &Tenant, query: &RunQuery) -> ApiResult<RunPage> {
    Ok(app
        .registry
        .tenant_runs_page(&tenant.tenant_id, query)
        .await?)
}

/// Every run record of the tenant matching `query`, newest first, read page by page (each
/// page one query of at most 500 rows).
pub async fn all_records(
    app: &AppState,
    tenant: &Tenant,
    mut query: RunQuery,
) -> ApiResult<Vec<RunRecord>> {
    query.limit = hensu_store::MAX_PAGE_LIMIT;
    let mut out = Vec::new();
    loop {
        let page = records_page(app, tenant, &query).await?;
        out.extend(page.records);
        match page.next_cursor {
            Some(c) => query.cursor = Some(c),
            None => return Ok(out),
        }
    }
}

/// `GET /api/v1/executions`: one page of the tenant's executions.
pub async fn list(
    app: &AppState,
    tenant: &Tenant,
    params: &ListParams,
) -> ApiResult<ExecutionPage> {
    let page = records_page(app, tenant, &params.to_query()?).await?;
    Ok(ExecutionPage {
        items: page.records.iter().map(ExecutionStatus::from).collect(),
        next_cursor: page.next_cursor.map(|c| c.encode()),
    })
}

/// The tenant's paused executions (review or pending pauses), oldest first: the status is
/// filtered in SQL, so this reads only the paused runs' records.
pub async fn paused(app: &AppState, tenant: &Tenant) -> ApiResult<Vec<PausedExecution>> {
    let query = hensu_store::RunQuery {
        statuses: vec![RunStatus::Paused],
        ..hensu_store::RunQuery::default()
    };
    let all = all_records(app, tenant, query).await?;
    Ok(all
        .iter()
        .rev()
        .map(|r| PausedExecution {
            execution_id: r.run_id.clone(),
            workflow_id: r.workflow_id.clone(),
            created_at: hensu_store::rfc3339(r.started_at),
            current_node_id: r.current_node.clone(),
            correlation_id: r.correlation_id.clone(),
        })
        .collect())
}
