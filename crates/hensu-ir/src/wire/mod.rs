//! The JSON wire format: upstream's `hensu build` output plus hensu's backward-compatible
//! additions (docs/language.md, *What differs from the Kotlin DSL*).
//!
//! Writing ([`to_json`], [`to_value`]):
//! * keys in declaration order (workflow fields, node/agent maps, payloads, mappings);
//! * a top-level `"formatVersion": 1` (first key);
//! * `metadata.created` only when set;
//! * branch `rubric` as raw text (string or `null`) like node rubrics — upstream writes an object
//!   that it cannot read back;
//! * workflow `config` as upstream plus `maxSteps`;
//! * per node type, fields are omitted or always written exactly as upstream's custom serializers
//!   do; bean-serialized objects (workflow, agent, metadata, config, schema entries, branches,
//!   consensus/review configs) include `null` fields;
//! * pretty-printed by serde_json (2-space indent, `"key": value`) with a trailing newline.
//!   Upstream's Jackson spacing (`"key" : value`, `[ ]`) is not reproduced: readers do not care.
//!
//! Reading ([`from_json`], [`from_json_with_spans`]) accepts upstream output (any key order,
//! `metadata.created`, no `formatVersion`, `config` absent or `null`, missing optional fields with
//! upstream's reader defaults, branch rubric as object — ignored, the upstream quirk — or string)
//! and reports errors with a JSON path (`nodes.review.transitionRules[1].type`) and a byte offset.

mod dto;
mod read;
mod source_map;
mod write;

use serde_json::Value;

pub use read::{JsonError, JsonErrorKind, from_json, from_json_with_spans, from_value};
pub use source_map::{SourceMap, Span};
pub use write::{Wire, node_to_value, rule_to_value, to_json, to_value};

use crate::model::Workflow;

/// The `formatVersion` hensu writes.
pub const FORMAT_VERSION: i64 = 1;

impl serde::Serialize for Workflow {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        dto::WorkflowDto::from(self).serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Workflow {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(deserializer)?;
        from_value(&v).map_err(serde::de::Error::custom)
    }
}
