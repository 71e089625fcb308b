//! The describe part of `hensuc graph --format json` (docs/language.md, *Describe*): the topology
//! export plus, per node, the variables it `requires` (reads) and `provides` (writes), and
//! where an inherited node of an extending workflow was declared (`inheritedFrom`); per edge,
//! whether it ends the run (`terminal`) and whether it is taken only when a condition holds
//! (`conditional`). Only fields are added, so `schemaVersion` stays 1.

use hensu_ir::{Node, Workflow};
use hensu_sema::check::access::{node_reads, node_writes};
use hensu_sema::origins::Origins;
use serde_json::Value;

/// Edge kinds taken on every run that leaves the node with that outcome.
const UNCONDITIONAL: &[&str] = &["success", "failure", "fork"];

/// The described topology of a (merged) workflow.
pub fn describe(workflow: &Workflow, origins: &Origins) -> Value {
    let mut top = hensu_ir::workflow_topology_json(workflow);
    let schema = workflow.state_schema.as_ref();
    let names =
        |list: Vec<&str>| Value::from(list.into_iter().map(Value::from).collect::<Vec<_>>());
    if let Some(Value::Array(nodes)) = top.get_mut("nodes") {
        for n in nodes.iter_mut() {
            let Some(m) = n.as_object_mut() else { continue };
            let Some(node) = m
                .get("id")
                .and_then(Value::as_str)
                .and_then(|id| workflow.nodes.get(id))
            else {
                continue;
            };
            m.insert("requires".into(), names(node_reads(node, schema)));
            m.insert("provides".into(), names(node_writes(node, schema)));
            if let Some(base) = origins
                .derived
                .as_ref()
                .and_then(|d| d.declared_in(node.id()))
            {
                m.insert("inheritedFrom".into(), Value::from(base.id.as_str()));
            }
        }
    }
    if let Some(Value::Array(edges)) = top.get_mut("edges") {
        for e in edges.iter_mut() {
            let Some(m) = e.as_object_mut() else { continue };
            let terminal = m
                .get("to")
                .and_then(Value::as_str)
                .and_then(|to| workflow.nodes.get(to))
                .is_some_and(|n| matches!(n, Node::End(_)));
            let kind = m.get("kind").and_then(Value::as_str).unwrap_or_default();
            let escalation = m.get("escalation").and_then(Value::as_bool) == Some(true);
            let conditional = escalation || !UNCONDITIONAL.contains(&kind);
            m.insert("terminal".into(), Value::Bool(terminal));
            m.insert("conditional".into(), Value::Bool(conditional));
        }
    }
    if let Some(d) = &origins.derived {
        let bases = d
            .bases
            .iter()
            .map(|b| {
                let mut m = serde_json::Map::new();
                m.insert("id".into(), Value::from(b.id.as_str()));
                m.insert("version".into(), Value::from(b.version.as_str()));
                Value::Object(m)
            })
            .collect::<Vec<_>>();
        if let Some(m) = top.as_object_mut() {
            m.insert("extends".into(), Value::Array(bases));
        }
    }
    top
}
