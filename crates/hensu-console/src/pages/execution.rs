//! One execution: its path on the graph (visited nodes, the current node highlighted), the
//! step history with each node's output, backtracks, events, errors, compensations, token
//! usage and the public context. While it runs, the script re-renders the `data-live` regions
//! on each event of the execution's stream.

use std::collections::BTreeMap;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use hensu_runtime::{Backtrack, BacktrackKind, ExecutionPhase, HistoryStep, RunState};
use hensu_server::AppState;
use hensu_server::service::events::{self, ExecutionEvent};
use hensu_server::service::listing;
use hensu_server::service::outcome::{shown_status, succeeded};
use hensu_server::service::replay::ExecutionReplayed;
use hensu_store::{RunQuery, RunRecord, RunStatus};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;

use super::{RunView, api_error, load_run, output_block};
use crate::chrome::{self, Nav, duration, status_badge, time};
use crate::graph::{self, Marks};
use crate::session::{Page, Viewer, check_post};

#[derive(Deserialize)]
pub struct DetailQuery {
    notice: Option<String>,
}

/// `GET /console/executions/{id}`.
pub async fn detail(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    Query(q): Query<DetailQuery>,
) -> Response {
    page(&app, &viewer, &id, q.notice.as_deref(), None).await
}

/// The execution's page, with the result of a replay when one was asked for (the *Replay*
/// button, [`replay`]).
pub async fn page(
    app: &AppState,
    viewer: &Viewer,
    id: &str,
    notice: Option<&str>,
    replayed: Option<&ExecutionReplayed>,
) -> Response {
    let run = match load_run(app, viewer, id).await {
        Ok(r) => r,
        Err(e) => return api_error(viewer, Nav::Executions, e),
    };
    let forks = match forks_of(app, viewer, &run.record).await {
        Ok(f) => f,
        Err(e) => return api_error(viewer, Nav::Executions, e),
    };
    let points = super::fork::of_run(app, &run.record.run_id, &run.log).await;
    let live = !run.record.status.is_terminal();
    let title = format!("Execution {}", chrome::short_id(&run.record.run_id));
    let body = html! {
        div data-live-source=[live.then(|| format!("/console/executions/{}/events", run.record.run_id))]
            data-live-ends="true" {
            h1 { "Execution " code { (run.record.run_id) } }
            (chrome::notice(notice))
            @if let Some(r) = replayed { (replay_section(r)) }
            (summary(viewer, &run))
            // The text of the node in flight as it is written (docs/console.md, *Live
            // updates*): filled by the script from the stream's `execution.token` events.
            @if live {
                section id="run-writing" hidden data-writing aria-labelledby="writing-h" {
                    h2 id="writing-h" { "Being written: " span data-writing-node {} }
                    pre.output data-writing-text {}
                }
            }
            (forks_section(&run.record.run_id, &forks))
            (path_section(&run))
            (steps_section(viewer, &run, &points))
            (super::diff::compare_form(&run.record.run_id))
            (events_section(&run))
            section id="run-context" data-live {
                h2 { "Context" }
                (output_block("context-output", "Public context (keys starting with _ hidden)", &run.output))
            }
        }
    };
    chrome::page(viewer, &title, Nav::Executions, body).into_response()
}

/// The tenant's executions forked from `record` (forks and redrives), newest first: its runs
/// started since it, whose record names it as parent.
async fn forks_of(
    app: &AppState,
    viewer: &Viewer,
    record: &RunRecord,
) -> Result<Vec<RunRecord>, hensu_server::error::ApiError> {
    let query = RunQuery {
        since: Some(record.started_at),
        ..RunQuery::default()
    };
    let runs = listing::all_records(app, &viewer.tenant, query).await?;
    Ok(runs
        .into_iter()
        .filter(|r| r.parent.as_ref().is_some_and(|p| p.run_id == record.run_id))
        .collect())
}

/// The forks of this execution (its children), each linked with its fork point and status.
fn forks_section(record_id: &str, forks: &[RunRecord]) -> Markup {
    if forks.is_empty() {
        return html! {};
    }
    html! {
        section id="run-forks" aria-labelledby="forks-h" {
            h2 id="forks-h" { "Forks" }
            ul.lineage {
                @for f in forks {
                    li {
                        a href={ "/console/executions/" (f.run_id) } { code { (f.run_id) } }
                        " " span.muted { "from step " (f.parent.as_ref().map_or(0, |p| p.step)) }
                        " " (status_badge(shown_status(f)))
                        " · " a href={ "/console/executions/" (f.run_id) "/diff/" (record_id) } { "compare with this one" }
                    }
                }
            }
        }
    }
}

/// The result of a replay from the recorded outputs: identical, or the first divergence.
fn replay_section(r: &ExecutionReplayed) -> Markup {
    html! {
        section id="run-replay" aria-labelledby="replay-h" {
            h2 id="replay-h" { "Replay" }
            p.muted {
                "Replayed from its recorded outputs (steps " (r.from_step) " to " (r.to_step)
                ", " (r.recorded_answers) " recorded answers): no model call, no side effect."
            }
            @match &r.divergence {
                None => p.notice role="status" data-replay="identical" {
                    "Identical: the same path, transitions, outputs, context and end ("
                    (r.replayed_status) ")."
                },
                Some(d) => div.notice.error role="alert" data-replay="diverged" {
                    p { strong { (d.code) } ": " (d.message) }
                    dl.facts {
                        dt { "Node" } dd { code { (d.node) } }
                        @if let Some(k) = &d.key { dt { "Key" } dd { code { (k) } } }
                        dt { "Expected" } dd { code { (d.expected) } }
                        dt { "Got" } dd { code { (d.got) } }
                    }
                },
            }
        }
    }
}

fn tokens(state: Option<&RunState>) -> Option<(u64, u64)> {
    let mut total: Option<(u64, u64)> = None;
    for u in state
        .into_iter()
        .flat_map(|s| &s.history)
        .filter_map(|h| h.usage)
    {
        let t = total.get_or_insert((0, 0));
        t.0 += u.input_tokens;
        t.1 += u.output_tokens;
    }
    total
}

fn summary(viewer: &Viewer, run: &RunView) -> Markup {
    let r = &run.record;
    let status = shown_status(r);
    let version = run
        .workflow
        .as_ref()
        .map(|w| w.version.as_str())
        .unwrap_or("?");
    let pending = run.state.as_ref().and_then(hensu_runtime::pending_review);
    html! {
        section id="run-summary" data-live aria-labelledby="summary-h" {
            h2 id="summary-h" .visually-hidden { "Summary" }
            dl.facts {
                dt { "Status" } dd { (status_badge(status))
                    @if let Some(x) = &r.exit_status { " " span.muted { "exit " (x) } }
                    @if r.cancel_requested { " " span.muted { "(cancel requested)" } } }
                dt { "Workflow" } dd { a href={ "/console/workflows/" (r.workflow_id) } { (r.workflow_id) } " " span.muted { "version " (version) } }
                dt { "Started" } dd { (time(r.started_at)) }
                @if let Some(p) = &r.parent {
                    dt { "Forked from" } dd.lineage {
                        a href={ "/console/executions/" (p.run_id) } { code { (p.run_id) } }
                        " " span.muted { "at step " (p.step) }
                        " · " a href={ "/console/executions/" (r.run_id) "/diff/" (p.run_id) } { "compare with it" }
                    }
                }
                dt { "Duration" } dd { (duration(super::executions::elapsed(r, chrome::now_ms()))) }
                dt { "Current node" } dd {
                    @match &r.current_node { Some(n) => code { (n) }, None => "—" }
                }
                dt { "Token usage" } dd {
                    @match tokens(run.state.as_ref()) {
                        Some((i, o)) => { (i) " in · " (o) " out · " (i + o) " total" },
                        None => span.muted { "not reported by the providers of this run" },
                    }
                }
            }
            (super::controls::forms(viewer, r))
            @if let Some((node, _)) = pending {
                p.notice.attention role="status" {
                    "Waiting for a review of " code { (node) } ". "
                    a href={ "/console/reviews/" (r.run_id) } { "Review it" }
                }
            } @else if r.status == RunStatus::Paused {
                p.notice.attention role="status" { "Paused at " code { (r.current_node.as_deref().unwrap_or("?")) } " (paused from the console, or the node waits for an external answer). Resume continues it." }
            }
            @if r.status == RunStatus::Failed {
                p.notice.error role="alert" {
                    "The execution failed"
                    @if let Some(n) = &r.current_node { " at " code { (n) } }
                    @match run.state.as_ref().and_then(|s| s.failure.as_ref()) {
                        Some(f) => { ": " span.failure { (f.describe()) } }
                        None => {
                            "."
                            @if let Some(e) = last_error(run.state.as_ref()) { " Last error: " (e) }
                        }
                    }
                }
            } @else if succeeded(r) == Some(false) && r.status == RunStatus::Completed {
                p.notice.error role="alert" {
                    "The execution ended at "
                    @if let Some(n) = &r.current_node { code { (n) } " " }
                    "with exit status " (r.exit_status.as_deref().unwrap_or("?")) "."
                    @if let Some(e) = last_error(run.state.as_ref()) { " Last error: " (e) }
                }
            }
        }
    }
}

fn last_error(state: Option<&RunState>) -> Option<&str> {
    state?.history.iter().rev().find_map(|h| h.error.as_deref())
}

fn path_section(run: &RunView) -> Markup {
    // The visits in order (a compensation undoes a visit; it is not one).
    let mut path: Vec<&str> = run
        .state
        .as_ref()
        .map(|s| {
            s.history
                .iter()
                .filter(|h| h.compensates.is_none())
                .map(|h| h.node_id.as_str())
                .collect()
        })
        .unwrap_or_default();
    let current = match run.record.status {
        RunStatus::Running | RunStatus::Paused => run.record.current_node.as_deref(),
        _ => None,
    };
    // The end node a finished run reached is not a history step; it ends the path.
    if let (Some(end), true) = (
        run.record.current_node.as_deref(),
        run.record.status.is_terminal(),
    ) && path.last() != Some(&end)
    {
        path.push(end);
    }
    // The node running now continues the path on the graph (the edge into it is taken).
    let mut drawn = path.clone();
    if let Some(c) = current
        && drawn.last() != Some(&c)
    {
        drawn.push(c);
    }
    let marks = Marks::of_path(&drawn, current);
    html! {
        section id="run-path" data-live aria-labelledby="path-h" {
            h2 id="path-h" { "Path" }
            p {
                @if path.is_empty() { span.muted { "No node has finished yet." } }
                @for (i, n) in path.iter().enumerate() {
                    @if i > 0 { " → " }
                    code { (n) }
                }
                @if let Some(c) = current { " → " strong { code { (c) } } " (now)" }
            }
            @if let Some(wf) = &run.workflow {
                div.graph-box { (graph::render(wf, &marks, &format!("/console/workflows/{}", wf.id))) }
                p.legend { span.key.visited {} "visited" span.key.current {} "current node" span.key.plain {} "not visited" span.key.edge-taken {} "edge taken" span.key.edge-not-taken {} "edge not taken" }
            }
        }
    }
}

fn steps_section(
    viewer: &Viewer,
    run: &RunView,
    points: &BTreeMap<u64, super::fork::ForkPoint>,
) -> Markup {
    let Some(state) = &run.state else {
        return html! { section id="run-steps" data-live { h2 { "Steps" } p.muted { "The stored state could not be read." } } };
    };
    let awaiting = match &state.phase {
        ExecutionPhase::Awaiting {
            node_id,
            cached_result,
            ..
        } => Some((node_id, cached_result)),
        _ => None,
    };
    // Compensations are listed under their own heading: their history entries carry the
    // step number of the visit they undo, which is not a step of their own.
    let visits: Vec<&HistoryStep> = state
        .history
        .iter()
        .filter(|h| h.compensates.is_none())
        .collect();
    let (retries, backtracks): (Vec<&Backtrack>, Vec<&Backtrack>) =
        state.backtracks.iter().partition(|b| is_retry(b));
    html! {
        section id="run-steps" data-live aria-labelledby="steps-h" {
            h2 id="steps-h" { "Steps" }
            @if visits.is_empty() && awaiting.is_none() {
                @match (&run.record.current_node, run.record.status.is_terminal()) {
                    (Some(n), true) => p.muted { "No node finished: the execution stopped at " code { (n) } " before its first step was recorded." },
                    _ => p.muted { "No steps yet." },
                }
            }
            ol.steps {
                @for h in &visits {
                    li {
                        div.step-head {
                            span.step-no { "#" (h.step) }
                            code { (h.node_id) }
                            span class={ "badge node-" (h.status.as_str().to_ascii_lowercase()) } { (h.status.as_str()) }
                            span.muted { "at +" (duration(h.at_ms)) }
                            @if let Some(rb) = &h.rubric {
                                span.muted { "rubric " (rb.rubric_id) ": " (format!("{:.1}", rb.score)) (if rb.passed { " (passed)" } else { " (failed)" }) }
                            }
                            @if let Some(u) = h.usage { span.muted { (u.input_tokens) " + " (u.output_tokens) " tokens" } }
                        }
                        @if let Some(e) = &h.error { p.notice.error { "Error: " (e) } }
                        @if let Some(o) = &h.output { (output_block(&format!("step-{}-{}", h.step, h.node_id), "Output", o)) }
                        @if let Some(p) = points.get(&h.step) { (super::fork::form(viewer, &run.record.run_id, h.step, p)) }
                    }
                }
                @if let Some((node, result)) = awaiting {
                    li.awaiting {
                        div.step-head { span.step-no { "…" } code { (node) } span.badge.status-paused { "awaiting" } }
                        @if let Some(o) = &result.output { (output_block(&format!("awaiting-{node}"), "Output under review", o)) }
                    }
                }
            }
            @if !backtracks.is_empty() {
                h3 { "Backtracks" }
                div.table-scroll {
                    table {
                        thead { tr { th scope="col" { "From" } th scope="col" { "To" } th scope="col" { "Kind" } th scope="col" { "Reason" } } }
                        tbody {
                            @for b in &backtracks {
                                tr { td { code { (b.from) } } td { code { (b.to) } } td { (format!("{:?}", b.kind).to_ascii_lowercase()) } td { (b.reason) } }
                            }
                        }
                    }
                }
            }
            @if !retries.is_empty() {
                h3 { "Retries" }
                ul.retries {
                    @for b in &retries {
                        li { code { (b.from) } " failed and ran again"
                            @if b.to != b.from { " from " code { (b.to) } } }
                    }
                }
            }
            (compensations(state))
        }
    }
}

/// A retry is a bounded `onFailure` rule under its budget: the engine records it as a
/// `revise` backtrack caused by the failure (`TransitionCause::Failure`, "on failure").
fn is_retry(b: &Backtrack) -> bool {
    b.kind == BacktrackKind::Revise && b.reason == "on failure"
}

/// The saga compensations the run ran, newest visit first as they ran, each with the visit it
/// undid.
fn compensations(state: &RunState) -> Markup {
    html! {
        @if !state.compensations.is_empty() {
            h3 { "Compensations" }
            ol.steps.compensations {
                @for c in &state.compensations {
                    li {
                        div.step-head {
                            span.step-no { "undo" }
                            code { (c.compensation_id) }
                            span class={ "badge node-" (c.status.as_str().to_ascii_lowercase()) } { (c.status.as_str()) }
                            span.muted { "undoes step #" (c.visit_step) " (" code { (c.node_id) } ")" }
                        }
                        @if let Some(e) = &c.error { p.notice.error { "Error: " (e) } }
                        @if let Some(o) = &c.output { (output_block(&format!("undo-{}-{}", c.visit_step, c.compensation_id), "Output", o)) }
                    }
                }
            }
        }
    }
}

fn events_section(run: &RunView) -> Markup {
    let r = &run.record;
    let none = || Value::Null;
    // The creation row is step 0, before the first row `read_log` returns: built from the
    // record, as the API's streams do. The tenant is the viewer's own (not shown).
    let events: Vec<(u64, ExecutionEvent)> = std::iter::once((0, events::started_event(r, "")))
        .chain(run.log.iter().filter(|e| e.meta.step > 0).filter_map(|e| {
            events::log_event(&r.run_id, &r.workflow_id, "", e, &none).map(|v| (e.meta.step, v))
        }))
        .collect();
    html! {
        section id="run-events" data-live aria-labelledby="events-h" {
            h2 id="events-h" { "Events" }
            details id="events-list" open[events.len() <= 20] {
                summary { (events.len()) " events from the run log" }
                table {
                    thead { tr { th scope="col" { "#" } th scope="col" { "Event" } th scope="col" { "Node" } th scope="col" { "Time" } } }
                    tbody {
                        @for (step, ev) in &events {
                            tr {
                                td { (step) }
                                td { (ev.kind()) }
                                td { @if let Some(n) = ev.node() { code { (n) } } }
                                td { (ev.timestamp()) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST /console/executions/{id}/replay`: the service's replay of an execution from its
/// recorded outputs; the execution's page shows the result.
pub async fn replay(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<super::controls::ControlForm>,
) -> Response {
    if let Err(r) = check_post(&headers, &viewer.csrf, form.csrf.as_deref()) {
        return r.into_response();
    }
    let request = hensu_server::service::replay::ReplayExecution::default();
    match hensu_server::service::replay::replay(&app, &viewer.tenant, &id, request).await {
        Ok(report) => page(&app, &viewer, &id, None, Some(&report)).await,
        Err(e) => api_error(&viewer, Nav::Executions, e),
    }
}
