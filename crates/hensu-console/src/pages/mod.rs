//! The console's pages. Each reads and writes through the server's service layer
//! (`hensu_server::service`) with the viewer's tenant, so a page never shows another tenant's
//! data: a foreign execution or workflow is "not found", as in the API.

pub mod controls;
pub mod diff;
pub mod execution;
pub mod executions;
pub mod fork;
pub mod reviews;
pub mod schedules;
pub mod signin;
pub mod start;
pub mod tool_review;
pub mod workflows;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hensu_ir::Workflow;
use hensu_runtime::RunState;
use hensu_server::AppState;
use hensu_server::error::ApiError;
use hensu_server::service::executions as service;
use hensu_store::{LogEntry, RunRecord};
use maud::{Markup, html};
use serde_json::Value;

use crate::chrome::{self, Nav};
use crate::session::Viewer;

/// An error page with the status of the API's answer (its message is escaped like any text).
pub fn error_page(viewer: &Viewer, nav: Nav, status: StatusCode, message: &str) -> Response {
    let title = if status == StatusCode::NOT_FOUND {
        "Not found"
    } else {
        "Something went wrong"
    };
    let body = html! {
        h1 { (title) }
        p.notice.error role="alert" { (message) }
        p { a href="/console/executions" { "Back to the executions" } }
    };
    (status, chrome::page(viewer, title, nav, body)).into_response()
}

/// [`error_page`] of an API error.
pub fn api_error(viewer: &Viewer, nav: Nav, e: ApiError) -> Response {
    let message = if e.status == StatusCode::NOT_FOUND {
        "There is no such item for your tenant.".to_string()
    } else {
        e.message
    };
    error_page(viewer, nav, e.status, &message)
}

/// A run with what its pages show.
pub struct RunView {
    pub record: RunRecord,
    /// The latest snapshot as a run state (`None` when it does not parse).
    pub state: Option<RunState>,
    /// The public context (engine `_` keys removed).
    pub output: Value,
    /// The workflow stored with the run.
    pub workflow: Option<Workflow>,
    /// The run log, oldest first.
    pub log: Vec<LogEntry>,
}

/// Rows of the run log a page shows at most.
pub const LOG_LIMIT: usize = 1_000;

/// Loads a run of the viewer's tenant (404 for anyone else's).
pub async fn load_run(app: &AppState, viewer: &Viewer, id: &str) -> Result<RunView, ApiError> {
    let run = service::detail(app, &viewer.tenant, id, LOG_LIMIT).await?;
    Ok(RunView {
        output: service::public_context(&run.snapshot),
        state: serde_json::from_value::<RunState>(run.snapshot).ok(),
        workflow: hensu_server::exec::stored_workflow(&run.record.run_id, &run.workflow).ok(),
        record: run.record,
        log: run.log,
    })
}

/// A value as the console shows it: strings as markdown (collapsed when long), anything else
/// as indented JSON. `id` names the `<details>` so live refreshes keep it open.
pub fn output_block(id: &str, summary: &str, value: &Value) -> Markup {
    const LONG_CHARS: usize = 600;
    const LONG_LINES: usize = 12;
    // Agents often answer JSON as text: shown as JSON, not as a paragraph of braces.
    if let Value::String(s) = value
        && let t = s.trim_start()
        && (t.starts_with('{') || t.starts_with('['))
        && let Ok(parsed @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(s)
    {
        return output_block(id, summary, &parsed);
    }
    let (len, lines, body) = match value {
        Value::String(s) => (
            s.chars().count(),
            s.lines().count(),
            html! { div.markdown { (maud::PreEscaped(crate::markdown::to_html(s))) } },
        ),
        other => {
            let text = serde_json::to_string_pretty(other).unwrap_or_default();
            (
                text.chars().count(),
                text.lines().count(),
                json_view(other, 0),
            )
        }
    };
    let long = len > LONG_CHARS || lines > LONG_LINES;
    html! {
        details.output id=(id) open[!long] {
            summary { (summary) @if long { " (" (len) " characters)" } }
            (body)
        }
    }
}

/// Nesting shown as a structure; deeper values are shown as indented JSON text.
const JSON_VIEW_DEPTH: usize = 6;

/// A JSON value as a structure a person reads: an object's keys as a definition list, an
/// array's items as a list, strings as markdown (rendered safely, as every output is), the
/// rest as JSON literals. Agents return markdown inside JSON (`{"article": "# Title\n\n…"}`),
/// which as JSON text would read as one escaped line.
fn json_view(value: &Value, depth: usize) -> Markup {
    match value {
        Value::String(s) => {
            html! { div.markdown.json-string { (maud::PreEscaped(crate::markdown::to_html(s))) } }
        }
        Value::Object(m) if m.is_empty() => html! { code.json-literal { "{}" } },
        Value::Array(a) if a.is_empty() => html! { code.json-literal { "[]" } },
        Value::Object(_) | Value::Array(_) if depth >= JSON_VIEW_DEPTH => {
            let text = serde_json::to_string_pretty(value).unwrap_or_default();
            html! { pre.json { code { (text) } } }
        }
        Value::Object(m) => html! {
            dl.json-object {
                @for (k, v) in m {
                    dt { code { (k) } }
                    dd { (json_view(v, depth + 1)) }
                }
            }
        },
        Value::Array(a) => html! {
            ol.json-array start="0" {
                @for v in a { li { (json_view(v, depth + 1)) } }
            }
        },
        other => html! { code.json-literal { (other.to_string()) } },
    }
}

#[cfg(test)]
mod tests {
    use super::output_block;
    use serde_json::json;

    #[test]
    fn markdown_inside_json_strings_is_rendered_and_escaped() {
        let value = json!({
            "article": "# Durable workflows\n\n* one\n* two <script>alert(1)</script>",
            "score": 7,
        });
        let html = output_block("o", "Output", &value).into_string();
        assert!(html.contains("<h1>Durable workflows</h1>"), "{html}");
        assert!(html.contains("<li>one</li>"), "{html}");
        assert!(!html.contains("\\n"), "no escaped newlines: {html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("<code>article</code>"), "{html}");
        assert!(html.contains(">7<"), "{html}");
    }

    #[test]
    fn json_text_output_is_shown_as_structure() {
        let value = json!("{\"plan\": \"1. research\\n2. write\"}");
        let html = output_block("o", "Output", &value).into_string();
        assert!(html.contains("<ol>"), "the numbered list is a list: {html}");
        assert!(html.contains("<li>research</li>"), "{html}");
    }

    #[test]
    fn deep_values_fall_back_to_json_text() {
        let mut v = json!("leaf");
        for _ in 0..20 {
            v = json!({ "k": v });
        }
        let html = output_block("o", "Output", &v).into_string();
        assert!(html.contains("<pre class=\"json\">"), "{html}");
    }
}
