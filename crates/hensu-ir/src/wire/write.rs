//! Writing: [`Workflow`] → wire JSON through the serialization views in `dto`.

use serde_json::Value;

use super::dto::{NodeDto, RuleDto, WorkflowDto};
use crate::model::*;

/// Serializes a workflow to pretty-printed JSON (2-space indent, trailing newline).
pub fn to_json(workflow: &Workflow) -> String {
    let mut out = serde_json::to_string_pretty(&WorkflowDto::from(workflow))
        .unwrap_or_else(|_| String::from("{}"));
    out.push('\n');
    out
}

/// A workflow as its wire JSON, for serializing it inside another document without building
/// a [`Value`] of it first (`serde_json::to_vec(&Wire(&workflow))`).
#[derive(Clone, Copy, Debug)]
pub struct Wire<'a>(pub &'a Workflow);

impl serde::Serialize for Wire<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WorkflowDto::from(self.0).serialize(serializer)
    }
}

/// Serializes a workflow to a [`Value`] (object keys in wire order).
pub fn to_value(workflow: &Workflow) -> Value {
    serde_json::to_value(WorkflowDto::from(workflow)).unwrap_or(Value::Null)
}

/// Serializes one node (`id`, `nodeType`, then the per-type fields).
pub fn node_to_value(node: &Node) -> Value {
    serde_json::to_value(NodeDto::from(node)).unwrap_or(Value::Null)
}

/// Serializes one transition rule (`type` first).
pub fn rule_to_value(rule: &TransitionRule) -> Value {
    serde_json::to_value(RuleDto::from(rule)).unwrap_or(Value::Null)
}
