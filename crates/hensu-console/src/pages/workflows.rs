//! The tenant's workflows: the list (id, name, version, size) and one workflow's graph, whose
//! nodes link to cards with their prompt, agent, rubric, review mode and transitions.

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use hensu_ir::{Node, Workflow, bfs_order, node_details, node_edges};
use hensu_server::AppState;
use hensu_server::error::ApiError;
use hensu_server::service::workflows as service;
use maud::{Markup, html};

use super::api_error;
use crate::chrome::{self, Nav};
use crate::graph::{self, Marks};
use crate::session::{Page, Viewer};

/// A stored workflow of the viewer's tenant, loaded (404 when the tenant has none by that id).
pub async fn load(app: &AppState, viewer: &Viewer, id: &str) -> Result<Workflow, ApiError> {
    service::load(app, &viewer.tenant, id).await
}

/// `GET /console/workflows`.
pub async fn list(State(app): State<AppState>, Page(viewer): Page) -> Response {
    let rows = match service::list_loaded(&app, &viewer.tenant).await {
        Ok(r) => r,
        Err(e) => return api_error(&viewer, Nav::Workflows, e),
    };
    let body = html! {
        h1 { "Workflows" }
        @if rows.is_empty() {
            p.muted { "No workflows yet. Push one with " code { "hensuc push FILE --server URL" } "." }
        } @else {
            table {
                caption { (rows.len()) " workflows, by id" }
                thead { tr { th scope="col" { "Id" } th scope="col" { "Name" } th scope="col" { "Version" } th scope="col" { "Nodes" } th scope="col" { span.visually-hidden { "Actions" } } } }
                tbody {
                    @for (entry, wf) in &rows {
                        @let (id, version) = (&entry.id, &entry.version);
                        tr {
                            td { a href={ "/console/workflows/" (id) } { (id) } }
                            td { (wf.as_ref().map(|w| w.metadata.name.as_str()).unwrap_or("")) }
                            td { (version) }
                            td { (wf.as_ref().map(|w| w.nodes.len()).unwrap_or(0)) }
                            td { a href={ "/console/workflows/" (id) "/start" } aria-label={ "Start a run of " (id) } { "Start a run" } }
                        }
                    }
                }
            }
        }
    };
    chrome::page(&viewer, "Workflows", Nav::Workflows, body).into_response()
}

/// `GET /console/workflows/{id}`.
pub async fn detail(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
) -> Response {
    let wf = match load(&app, &viewer, &id).await {
        Ok(w) => w,
        Err(e) => return api_error(&viewer, Nav::Workflows, e),
    };
    let order = bfs_order(&wf);
    let body = html! {
        h1 { (wf.metadata.name) " " span.muted { "(" code { (wf.id) } ", version " (wf.version) ")" } }
        @if let Some(d) = &wf.metadata.description { p { (d) } }
        p { a.button href={ "/console/workflows/" (wf.id) "/start" } { "Start a run" } }
        section aria-labelledby="graph-h" {
            h2 id="graph-h" { "Graph" }
            p.hint { "Select a node to see its prompt, agent, rubric and transitions." }
            div.graph-box { (graph::render(&wf, &Marks::default(), "")) }
        }
        div.node-panel {
            nav aria-label="Nodes" {
                h2 { "Nodes" }
                ol.node-index {
                    @for (node, _) in &order {
                        li { a href={ "#node-" (node.id()) } { code { (node.id()) } } " " span.muted { (node.kind_name().to_ascii_lowercase()) } }
                    }
                }
            }
            div.node-cards {
                @for (node, _) in &order { (node_card(&wf, node)) }
            }
        }
        @if let Some(schema) = &wf.state_schema {
            section aria-labelledby="state-h" {
                h2 id="state-h" { "State" }
                table {
                    thead { tr { th scope="col" { "Variable" } th scope="col" { "Type" } th scope="col" { "Input" } th scope="col" { "Description" } } }
                    tbody {
                        @for v in &schema.variables {
                            tr { td { code { (v.name) } } td { (v.var_type.as_str()) } td { (if v.is_input { "yes" } else { "no" }) } td { (v.description.as_deref().unwrap_or("")) } }
                        }
                    }
                }
            }
        }
    };
    chrome::page(&viewer, &wf.metadata.name, Nav::Workflows, body).into_response()
}

fn node_card(wf: &Workflow, node: &Node) -> Markup {
    let id = node.id();
    html! {
        section.node-card id={ "node-" (id) } tabindex="-1" aria-labelledby={ "node-h-" (id) } {
            h3 id={ "node-h-" (id) } { code { (id) } " " span.muted { (node.kind_name().to_ascii_lowercase()) } }
            dl.facts {
                @if let Node::Standard(n) = node {
                    @if let Some(a) = &n.agent_id {
                        dt { "Agent" }
                        dd {
                            code { (a) }
                            @if let Some(cfg) = wf.agents.get(a) { " — " (cfg.role) ", model " code { (cfg.model) } }
                        }
                    }
                    @if let Some(r) = &n.review_config { dt { "Review" } dd { (r.mode.as_str().to_ascii_lowercase()) } }
                    @if !n.writes.is_empty() { dt { "Writes" } dd { (n.writes.join(", ")) } }
                } @else {
                    @for (k, v) in node_details(node) {
                        @if k.is_empty() { dd { (v.trim()) } } @else { dt { (k) } dd { (v) } }
                    }
                }
                @if let Some(r) = node.rubric() {
                    dt { "Rubric" }
                    dd {
                        (r.name) ", pass threshold " (r.pass_threshold)
                        ul { @for c in &r.criteria { li { strong { (c.name) } " (weight " (c.weight) ")" @if !c.description.is_empty() { ": " (c.description) } } } }
                    }
                }
                dt { "Transitions" }
                dd {
                    @let edges = node_edges(node);
                    @if edges.is_empty() { span.muted { "none (end of the workflow)" } }
                    ul {
                        @for e in &edges {
                            li {
                                "→ "
                                @match &e.target { Some(t) => a href={ "#node-" (t) } { code { (t) } }, None => "itself" }
                                " " span.muted { (if e.label.is_empty() { "on success" } else { e.label.as_str() }) }
                            }
                        }
                    }
                }
            }
            @if let Node::Standard(n) = node {
                @if let Some(p) = &n.prompt {
                    h4 { "Prompt" }
                    pre.prompt { (p) }
                }
            }
        }
    }
}
