//! Two executions side by side (docs/console.md, *Pages*): the server's `service::diff` — the
//! comparison behind `hensuc runs diff` and the API's `GET …/{id}/diff/{other}` — rendered as
//! a table of the steps of both, the first step where they part, and the final public context
//! keys that differ. A fork's page links it to its parent; every execution's page has a form
//! to compare it with another.

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use hensu_server::AppState;
use hensu_server::service::diff::{DiffRun, DiffStepSide, Difference, RunsDiff};
use maud::{Markup, html};
use serde::Deserialize;

use super::{api_error, output_block};
use crate::chrome::{self, Nav, status_badge};
use crate::session::{Page, Viewer};

/// `GET /console/executions/{id}/diff/{other}`.
pub async fn page(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path((id, other)): Path<(String, String)>,
) -> Response {
    match hensu_server::service::diff::diff(&app, &viewer.tenant, &id, &other).await {
        Ok(d) => render(&viewer, &d),
        Err(e) => api_error(&viewer, Nav::Executions, e),
    }
}

#[derive(Deserialize)]
pub struct WithQuery {
    with: Option<String>,
}

/// `GET /console/executions/{id}/diff?with=OTHER`: the compare form's target, redirected to
/// the page's path (an id that is not one is refused as the API refuses it).
pub async fn with(
    Page(viewer): Page,
    Path(id): Path<String>,
    Query(q): Query<WithQuery>,
) -> Response {
    let other = q.with.unwrap_or_default();
    let other = other.trim();
    if let Err(e) = hensu_server::validate::check_id("otherExecutionId", other) {
        return api_error(&viewer, Nav::Executions, e);
    }
    if let Err(e) = hensu_server::validate::check_id("executionId", &id) {
        return api_error(&viewer, Nav::Executions, e);
    }
    Redirect::to(&format!("/console/executions/{id}/diff/{other}")).into_response()
}

/// The form on an execution's page that opens its comparison with another.
pub fn compare_form(run_id: &str) -> Markup {
    html! {
        form.signal-form method="get" action={ "/console/executions/" (run_id) "/diff" } aria-label="Compare with another execution" {
            label { "Compare with execution " input type="text" name="with" required placeholder="execution id"; }
            button type="submit" { "Compare" }
        }
    }
}

fn run_facts(label: &str, r: &DiffRun) -> Markup {
    html! {
        dt { (label) }
        dd {
            a href={ "/console/executions/" (r.run_id) } { code { (r.run_id) } }
            " " (status_badge(&r.status))
            @if let Some(x) = &r.exit_status { " " span.muted { "exit " (x) } }
            " " span.muted { (r.workflow) " version " (r.workflow_version) }
        }
    }
}

fn cell(side: &str, step: u64, s: Option<&DiffStepSide>) -> Markup {
    html! {
        td {
            @match s {
                None => span.muted { "—" },
                Some(s) => {
                    code { (s.node) } " "
                    span class={ "badge node-" (s.status.to_ascii_lowercase()) } { (s.status) }
                    @if let Some(e) = &s.error { p.notice.error { "Error: " (e) } }
                    @if let Some(o) = &s.output { (output_block(&format!("diff-{side}-{step}"), "Output", o)) }
                }
            }
        }
    }
}

fn verdict(d: &RunsDiff) -> Markup {
    html! {
        @match &d.first_difference {
            Some(f) => p.notice.attention role="status" data-diff="differs" {
                "First difference at step " (f.step) ": "
                @match f.differs_in {
                    Some(Difference::Node) => {
                        "A ran " code { (f.node_a.as_deref().unwrap_or("")) }
                        ", B ran " code { (f.node_b.as_deref().unwrap_or("")) } "."
                    },
                    Some(Difference::Missing) => "one execution ended before it.",
                    Some(w) => { "the " (w.as_str()) "s of " code { (f.node_a.as_deref().unwrap_or("")) } " differ." },
                    None => "",
                }
            },
            None if d.same => p.notice role="status" data-diff="same" {
                "Same path, outputs, context and status."
            },
            None => p.notice.attention role="status" data-diff="differs" {
                "Same steps; the final context or status differs."
            },
        }
    }
}

fn render(viewer: &Viewer, d: &RunsDiff) -> Response {
    let title = format!(
        "Compare {} with {}",
        chrome::short_id(&d.a.run_id),
        chrome::short_id(&d.b.run_id)
    );
    let body = html! {
        h1 { "Compare two executions" }
        dl.facts { (run_facts("A", &d.a)) (run_facts("B", &d.b)) }
        (verdict(d))
        section id="diff-steps" aria-labelledby="diff-steps-h" {
            h2 id="diff-steps-h" { "Steps" }
            div.table-scroll {
                table.diff {
                    caption.visually-hidden { "The steps of A and B by position" }
                    thead { tr { th scope="col" { "#" } th scope="col" { "A" } th scope="col" { "B" } th scope="col" { "Differs in" } } }
                    tbody {
                        @for s in &d.steps {
                            tr class=[s.differs_in.map(|_| "differs")] {
                                td { (s.step) }
                                (cell("a", s.step, s.a.as_ref()))
                                (cell("b", s.step, s.b.as_ref()))
                                td { @match s.differs_in { Some(w) => strong { (w.as_str()) }, None => span.muted { "—" } } }
                            }
                        }
                    }
                }
            }
        }
        section id="diff-context" aria-labelledby="diff-context-h" {
            h2 id="diff-context-h" { "Context" }
            @if d.context.is_empty() {
                p.muted { "The final public contexts are the same." }
            } @else {
                div.table-scroll {
                    table {
                        caption.visually-hidden { "The final public context keys that differ" }
                        thead { tr { th scope="col" { "Key" } th scope="col" { "A" } th scope="col" { "B" } } }
                        tbody {
                            @for c in &d.context {
                                tr {
                                    td { code { (c.key) } }
                                    td { @match &c.a { Some(v) => code { (v.to_string()) }, None => span.muted { "(absent)" } } }
                                    td { @match &c.b { Some(v) => code { (v.to_string()) }, None => span.muted { "(absent)" } } }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    chrome::page(viewer, &title, Nav::Executions, body).into_response()
}
