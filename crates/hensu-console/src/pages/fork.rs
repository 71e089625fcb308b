//! *Fork from here* on each step of an execution's page (docs/console.md, *Run controls*): a
//! form per visit that calls the server's `time_travel::fork` — the function behind the API's
//! `POST /api/v1/executions/{id}/fork` — at the run-log step that recorded the visit, with
//! optional context edits, and opens the new execution.
//!
//! The page lists *visits* (the history's entries), the fork takes a *log step*: the log
//! also holds journal rows, claims, status rows (pauses, reviews), a sub-workflow child's
//! boundaries and the branches of a parallel node, none of which is a visit. A visit's row is
//! the one whose delta appends it to the main flow's `/history`, or — for the first boundary
//! after a resume or a takeover, written as a full snapshot instead of a delta — the snapshot
//! row whose state first holds it (read back from the store: exact, and only those rows).

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use hensu_runtime::{HistoryStep, RunState};
use hensu_server::AppState;
use hensu_server::error::ApiError;
use hensu_server::service::time_travel::{ForkExecution, fork};
use hensu_store::{LogEntry, LogKind};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::api_error;
use crate::chrome::Nav;
use crate::session::{Page, Viewer, check_post};

/// Full-snapshot rows read back per page at most (one per resume or takeover of the run);
/// visits recorded by later ones get no fork form.
const SNAPSHOT_READS: usize = 32;

/// Where a visit was recorded: the log step to fork at and the node the fork continues with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForkPoint {
    pub log_step: u64,
    pub next: Option<String>,
}

/// The visits (history steps, compensations excluded) a row's delta appends to the main
/// flow's history.
pub fn appended_visits(entry: &LogEntry) -> Vec<u64> {
    let Some(delta) = &entry.delta else {
        return Vec::new();
    };
    let Ok(Value::Array(ops)) = serde_json::to_value(delta) else {
        return Vec::new();
    };
    ops.iter()
        .filter(|op| op.get("op").and_then(Value::as_str) == Some("add"))
        .filter(|op| op.get("path").and_then(Value::as_str) == Some("/history/-"))
        .filter_map(|op| serde_json::from_value::<HistoryStep>(op.get("value")?.clone()).ok())
        .filter(|h| h.compensates.is_none())
        .map(|h| h.step)
        .collect()
}

/// A row that holds a full state without a delta: the first boundary after a resume or a
/// takeover (the creation row holds no visit).
fn full_snapshot_row(entry: &LogEntry) -> bool {
    entry.meta.kind == LogKind::Snapshot && entry.delta.is_none()
}

/// The fork point of each visit of `log` (oldest first), by the visit's history step.
/// `state_at(step)` reads the run's state after a full-snapshot row.
pub async fn fork_points<F, Fut>(log: &[LogEntry], mut state_at: F) -> BTreeMap<u64, ForkPoint>
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = Option<RunState>>,
{
    let mut points = BTreeMap::new();
    let mut reads = 0;
    for entry in log {
        let point = || ForkPoint {
            log_step: entry.meta.step,
            next: entry.meta.node.clone(),
        };
        if full_snapshot_row(entry) {
            if reads == SNAPSHOT_READS {
                continue;
            }
            reads += 1;
            let Some(state) = state_at(entry.meta.step).await else {
                continue;
            };
            for h in state.history.iter().filter(|h| h.compensates.is_none()) {
                points.entry(h.step).or_insert_with(point);
            }
        } else {
            for step in appended_visits(entry) {
                points.entry(step).or_insert_with(point);
            }
        }
    }
    points
}

/// The fork points of the execution `run_id` whose log the page read.
pub async fn of_run(app: &AppState, run_id: &str, log: &[LogEntry]) -> BTreeMap<u64, ForkPoint> {
    let store = app.store.clone();
    fork_points(log, |step| {
        let store = store.clone();
        async move {
            let at = store.load_at(run_id, step).await.ok()?;
            serde_json::from_value(at.snapshot).ok()
        }
    })
    .await
}

/// The *Fork from here* form of one visit.
pub fn form(viewer: &Viewer, run_id: &str, visit: u64, point: &ForkPoint) -> Markup {
    let id = format!("fork-{visit}");
    html! {
        details.fork-step {
            summary { "Fork from here" }
            form.stack method="post" action={ "/console/executions/" (run_id) "/fork" } {
                input type="hidden" name="_csrf" value=(viewer.csrf);
                input type="hidden" name="step" value=(point.log_step);
                p.muted id={ (id) "-hint" } {
                    "A new execution whose history is this one's up to this step (log step "
                    (point.log_step) ")"
                    @if let Some(n) = &point.next { "; it continues at " code { (n) } }
                    ". Context edits (a JSON object) are merged in first."
                }
                label for={ (id) "-context" } { "Context edits (optional)" }
                textarea.edit-context id={ (id) "-context" } name="context" rows="3"
                    placeholder="{\"key\": \"value\"}" aria-describedby={ (id) "-hint" } {}
                button type="submit" { "Fork" }
            }
        }
    }
}

#[derive(Deserialize)]
pub struct ForkForm {
    #[serde(rename = "_csrf")]
    csrf: Option<String>,
    step: u64,
    #[serde(default)]
    context: String,
}

/// The form's context edits: blank is none; anything but a JSON object is refused as the API
/// refuses a bad body.
fn edits(text: &str) -> Result<Option<Map<String, Value>>, ApiError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(_) => Err(
            ApiError::bad_request("the context edits must be a JSON object")
                .with_code("invalid_body"),
        ),
        Err(e) => Err(
            ApiError::bad_request(format!("the context edits are not JSON: {e}"))
                .with_code("invalid_body"),
        ),
    }
}

/// `POST /console/executions/{id}/fork`: the service's fork at the form's log step; opens the
/// new execution's page.
pub async fn submit(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ForkForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    let context_edits = match edits(&form.context) {
        Ok(e) => e,
        Err(e) => return api_error(&viewer, Nav::Executions, e),
    };
    let request = ForkExecution {
        step: form.step,
        context_edits,
        workflow_id: None,
    };
    match fork(&app, &viewer.tenant, &id, request).await {
        Ok(forked) => Redirect::to(&format!(
            "/console/executions/{}?notice=forked",
            forked.execution_id
        ))
        .into_response(),
        Err(e) => api_error(&viewer, Nav::Executions, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hensu_store::{CheckpointMeta, RunStatus, StateDelta};
    use serde_json::json;

    fn row(step: u64, kind: LogKind, next: &str, delta: Option<StateDelta>) -> LogEntry {
        LogEntry {
            meta: CheckpointMeta {
                step,
                node: Some(next.to_string()),
                status: RunStatus::Running,
                at: step,
                snapshot_bytes: None,
                kind,
                executed_node: None,
                node_status: None,
                duration_ms: None,
            },
            output: None,
            delta,
            started_at: None,
        }
    }

    fn visit(step: u64, node: &str) -> Value {
        json!({"step": step, "node_id": node, "status": "SUCCESS", "at_ms": 0})
    }

    fn state_with(visits: &[(u64, &str)]) -> RunState {
        let mut s = RunState::new("r".into(), "w".into(), "x".into(), Default::default());
        s.history = visits
            .iter()
            .map(|(n, id)| serde_json::from_value(visit(*n, id)).expect("a history step"))
            .collect();
        s
    }

    /// Only the rows that put a visit into the main flow's history are fork points: a child's
    /// boundary (below `/nested`), a journal row, a claim, a compensation entry are not; a
    /// full-snapshot row holds the visits its state has that no earlier row carried.
    #[tokio::test]
    async fn each_visit_maps_to_the_row_that_recorded_it() {
        let undo = json!({"step": 1, "node_id": "undo-a", "status": "SUCCESS", "at_ms": 0,
                          "compensates": "a"});
        let log = vec![
            row(0, LogKind::Created, "a", None),
            row(1, LogKind::Journal, "a", Some(StateDelta::new())),
            row(
                2,
                LogKind::Step,
                "sub",
                Some(StateDelta::new().push(&["history"], visit(1, "a"))),
            ),
            row(
                3,
                LogKind::Step,
                "sub",
                Some(StateDelta::new().push(&["nested", "state", "history"], visit(1, "c0"))),
            ),
            row(4, LogKind::Claimed, "sub", None),
            row(5, LogKind::Snapshot, "b", None),
            row(
                6,
                LogKind::Step,
                "end",
                Some(StateDelta::new().push(&["history"], visit(3, "b"))),
            ),
            row(
                7,
                LogKind::Step,
                "end",
                Some(StateDelta::new().push(&["history"], undo)),
            ),
        ];
        let mut reads = Vec::new();
        let points = fork_points(&log, |step| {
            reads.push(step);
            async move { (step == 5).then(|| state_with(&[(1, "a"), (2, "sub")])) }
        })
        .await;
        assert_eq!(reads, [5], "only the full-snapshot row is read back");
        let got: Vec<(u64, u64, Option<&str>)> = points
            .iter()
            .map(|(v, p)| (*v, p.log_step, p.next.as_deref()))
            .collect();
        assert_eq!(
            got,
            [(1, 2, Some("sub")), (2, 5, Some("b")), (3, 6, Some("end"))]
        );
    }
}
