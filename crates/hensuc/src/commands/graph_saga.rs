//! The saga part of `hensuc graph` (docs/language.md, *Saga compensation*): compensations are
//! not nodes of the flow, so they are drawn beside it, each with a dashed edge pointing back
//! at the node it undoes (the direction the work is unwound).

use std::fmt::Write as _;

use hensu_ir::{CompensationBody, Workflow};
use serde_json::{Map, Value, json};

/// (compensation id, what it does, the nodes naming it), in declaration order.
fn compensations(wf: &Workflow) -> Vec<(&str, String, Vec<&str>)> {
    wf.saga
        .compensations
        .values()
        .map(|c| {
            let what = match &c.body {
                CompensationBody::Agent { agent_id, .. } => format!("agent {agent_id}"),
                CompensationBody::Actions(a) => {
                    format!("{} action{}", a.len(), if a.len() == 1 { "" } else { "s" })
                }
            };
            let undoes = wf
                .saga
                .node_compensations
                .iter()
                .filter(|(_, n)| **n == c.id)
                .map(|(node, _)| node.as_str())
                .collect();
            (c.id.as_str(), what, undoes)
        })
        .collect()
}

/// The text graph's closing section: one box per compensation.
pub(super) fn text(
    wf: &Workflow,
    out: &mut String,
    (bold, dim, cyan, reset): (&str, &str, &str, &str),
) {
    let list = compensations(wf);
    if list.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{bold}Compensations{reset} {dim}(run newest first when the run ends unsuccessfully){reset}\n"
    );
    for (id, what, undoes) in list {
        let _ = writeln!(out, "┌─ {bold}{id}{reset} {dim}(COMPENSATION){reset}");
        let _ = writeln!(out, "│  {:<9} {what}", "does");
        for node in undoes {
            let _ = writeln!(out, "│  {cyan}↩{reset} {node:<14} undoes");
        }
        let _ = writeln!(out, "└─\n");
    }
}

/// Mermaid: the compensation shapes (inside the workflow's subgraph) and their dashed edges.
pub(super) fn mermaid_nodes(
    wf: &Workflow,
    out: &mut String,
    styles: &mut Vec<String>,
    id_of: impl Fn(&str) -> String,
) {
    for (id, what, _) in compensations(wf) {
        let m = id_of(id);
        let _ = writeln!(out, "    {m}[\\\"{id}\\n(compensation: {what})\"\\]");
        styles.push(m);
    }
}

pub(super) fn mermaid_edges(wf: &Workflow, out: &mut String, id_of: impl Fn(&str) -> String) {
    for (id, _, undoes) in compensations(wf) {
        for node in undoes {
            let _ = writeln!(out, "  {} -.->|undoes| {}", id_of(id), id_of(node));
        }
    }
}

/// DOT: a dashed note per compensation; each edge keeps the flow's direction for the layout
/// (node above its compensation) and is drawn reversed (`dir=back`), dashed.
pub(super) fn dot(wf: &Workflow, out: &mut String, quote: impl Fn(&str) -> String) {
    for (id, what, undoes) in compensations(wf) {
        let label = format!("{id}\n(compensation: {what})");
        let _ = writeln!(
            out,
            "  {} [shape=note, style=dashed, label={}];",
            quote(id),
            quote(&label)
        );
        for node in undoes {
            let _ = writeln!(
                out,
                "  {} -> {} [label=\"undoes\", style=dashed, dir=back];",
                quote(node),
                quote(id)
            );
        }
    }
}

/// `hensuc graph --format json`: `compensations` beside the topology (absent without saga).
pub(super) fn json(wf: &Workflow, topology: &mut Value) {
    let list = compensations(wf);
    if list.is_empty() {
        return;
    }
    let items: Vec<Value> = wf
        .saga
        .compensations
        .values()
        .zip(list)
        .map(|(c, (id, _, undoes))| {
            let mut m = Map::new();
            m.insert("id".into(), json!(id));
            match &c.body {
                CompensationBody::Agent { agent_id, .. } => {
                    m.insert("kind".into(), json!("agent"));
                    m.insert("agent".into(), json!(agent_id));
                }
                CompensationBody::Actions(a) => {
                    m.insert("kind".into(), json!("actions"));
                    m.insert("actions".into(), json!(a.len()));
                }
            }
            m.insert("undoes".into(), json!(undoes));
            Value::Object(m)
        })
        .collect();
    if let Value::Object(top) = topology {
        top.insert("compensations".into(), Value::Array(items));
    }
}
