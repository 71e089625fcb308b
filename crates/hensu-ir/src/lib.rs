//! hensu-ir — the typed workflow IR of hensu, its JSON wire format and the executable graph.
//!
//! * The model: plain data ([`Workflow`], [`Node`], [`TransitionRule`], …), no I/O.
//! * Rubrics: the rubric markdown parser ([`parse_rubric`]), exactly as upstream's `RubricParser`.
//! * The wire format: [`to_json`] / [`from_json`] — upstream's JSON wire format with hensu's
//!   backward-compatible additions (docs/language.md, *What differs from the Kotlin DSL*);
//!   [`from_json_with_spans`] also returns the [`SourceMap`] that points diagnostics into the JSON.
//! * The graph: [`ExecGraph`], the petgraph-based executable graph with pre-resolved targets, and
//!   [`topology_json`].
//! * The drawing layout: [`bfs_order`], [`node_edges`], [`connections`], [`node_details`] (`hensuc graph` and the
//!   web console draw from them).
//!
//! Every item is exported here, at the crate root; the modules are private.

mod graph;
mod layout;
mod model;
mod number;
mod rubric;
mod wire;

pub use graph::{
    CompiledRule, CompiledScoreCondition, EdgeKind, ExecGraph, GraphEdge, GraphNode, Target,
    UnresolvedEdge, topology_json, workflow_topology_json,
};
pub use layout::{
    Connection, DrawnEdge, bfs_order, connections, node_details, node_edges, timed_node_details,
    timed_node_edges,
};
pub use model::{
    Action, ActionNode, AgentConfig, Branch, COMPENSATING, COMPENSATING_OUTPUT, ComparisonOperator,
    Compensation, CompensationBody, ConditionPredicate, ConsensusConfig, ConsensusStrategy,
    Criterion, DEFAULT_CHECKPOINT_INTERVAL_MS, DEFAULT_MAX_EXECUTION_TIME_MS, DEFAULT_MAX_STEPS,
    DEFAULT_TEMPERATURE, DEFAULT_VERSION, ENGINE_VARIABLES, EndNode, ExitStatus, ForkNode,
    GenericNode, ItemFailure, JoinNode, LogLevel, MAX_BACKOFF_MS, MapNode, MergeStrategy, Metadata,
    Namespace, Node, NodeKind, NodeTiming, Observability, ParallelNode, ReviewConfig, ReviewMode,
    Rubric, RubricType, RuleKind, Saga, ScoreCondition, ScoreRange, StandardNode, StateSchema,
    StateVariable, SubWorkflowNode, Timing, TransitionRule, VarType, WaitFor, WaitNode, Workflow,
    WorkflowConfig, is_engine_variable,
};
pub use number::{canonical_int, canonical_number, java_double_to_string};
/// Graph node index ([`ExecGraph`] indices are dense declaration positions).
pub use petgraph::stable_graph::NodeIndex;
pub use rubric::{
    DEFAULT_PASS_THRESHOLD, DEFAULT_RUBRIC_VERSION, RubricError, parse_rubric, rubric_type_from_str,
};
pub use wire::{
    FORMAT_VERSION, JsonError, JsonErrorKind, SourceMap, Span, Wire, from_json,
    from_json_with_spans, from_value, node_to_value, rule_to_value, to_json, to_value,
};

/// The id rule, `[a-zA-Z0-9][a-zA-Z0-9._-]{0,254}`, shared by every id the toolchain accepts:
/// workflow / node / agent / variable ids (E0207), server path and body ids
/// (docs/server.md, *Input rules*) and MCP gateway client ids.
pub fn is_valid_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.len() <= 255
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The workflow id upstream derives from a workflow's name: spaces → `_`, then every char
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
