//! hensu-ir — the typed workflow IR of hensu, its JSON wire format and the executable graph.
//!
//! * [`model`]: plain data ([`Workflow`], [`Node`], [`TransitionRule`], …), no I/O.
//! * [`rubric`]: the rubric markdown parser ([`parse_rubric`]), exactly as upstream's `RubricParser`.
//! * [`wire`]: [`to_json`] / [`from_json`] — the upstream wire format (upstream-reference §4) with
//!   hensu's backward-compatible additions (language.md §7).
//! * [`graph`]: [`ExecGraph`], the petgraph-based executable graph with pre-resolved targets, and
//!   [`topology_json`].

pub mod graph;
pub mod model;
mod number;
pub mod rubric;
pub mod wire;

pub use graph::*;
pub use model::*;
pub use number::{canonical_int, canonical_number, java_double_to_string};
/// Graph node index ([`ExecGraph`] indices are dense declaration positions).
pub use petgraph::stable_graph::NodeIndex;
pub use rubric::{RubricError, parse_rubric};
pub use wire::{
    JsonError, JsonErrorKind, SourceMap, Span, from_json, from_json_with_spans, from_value,
    to_json, to_value,
};

/// Upstream workflow-id derivation (upstream-reference §1.2): spaces → `_`, then every char
/// outside `[A-Za-z0-9_-]` is dropped, then lowercase.
///
/// `"My Test Workflow!!!"` → `my_test_workflow`; `"GeorgiaDiscovery"` → `georgiadiscovery`.
pub fn workflow_id_from_name(name: &str) -> String {
    name.chars()
        .map(|c| if c == ' ' { '_' } else { c })
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}
