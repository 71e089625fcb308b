//! Every check (one `docs/diagnostics/CODE.md` per code) that runs over the typed IR and its span side table
//! ([`Origins`]): references (E0204, E0205), transitions (E03xx), state and schema (E04xx),
//! projects of several workflows (E05xx) and the warnings W03xx.
//!
//! No I/O. The pure analyses the checks use are public so the LSP and the graph export can reuse
//! them: [`graph`] (node graph, reachability, unbounded cycles), [`intervals`] (score and condition
//! arm overlap); the did-you-mean is [`crate::suggest`].
//!
//! Every check is linear in the size of the workflow (arm-overlap checks are quadratic only in the
//! number of arms of one node), never indexes an origins vector (a missing origin falls back to a
//! coarser span) and never panics on any IR.

pub mod access;
pub mod graph;
pub mod intervals;

mod actions;
mod compensation;
mod consumed;
mod coverage;
mod dag;
mod dataflow;
mod flow;
mod fxhash;
mod map;
mod project;
mod refs;
mod rules;
mod state;
mod text;
mod timing;
mod tools;
mod waits;

use hensu_diagnostics::{Diagnostic, FileId, Span};
use hensu_ir::{TransitionRule, Workflow};

use crate::origins::{NodeOrigin, Origins, RuleOrigin};

pub use actions::{KnownActions, check_actions};
pub use coverage::BUILTIN_HANDLERS;
pub use graph::{
    Cycle, EdgeInfo, EdgeSource, NodeGraph, RuleTarget, TargetSlot, for_each_rule_target,
    rule_targets,
};
pub use project::check_project;
pub use text::placeholders;
pub use tools::check_offered_tools;

pub use crate::origins::InputKind;

/// One workflow of a project (the files on the command line plus `<dir>/workflows/*`).
#[derive(Clone, Copy, Debug)]
pub struct ProjectUnit<'a> {
    pub file: FileId,
    pub workflow: &'a Workflow,
    pub origins: &'a Origins,
}

/// Runs every single-workflow check (E0204–E0205, E03xx, E04xx, W03xx) and returns the
/// diagnostics in source order. Project checks (E05xx) are [`check_project`].
pub fn check_workflow(wf: &Workflow, origins: &Origins, input: InputKind) -> Vec<Diagnostic> {
    let graph = NodeGraph::build(wf);
    let mut cx = Ctx::new(wf, origins, input);
    refs::check(&mut cx, &graph);
    compensation::check(&mut cx);
    rules::check(&mut cx);
    state::check(&mut cx);
    flow::check(&mut cx, &graph);
    coverage::check(&mut cx);
    actions::mcp_payloads(&mut cx);
    actions::writes_without_result(&mut cx);
    dataflow::check(&mut cx, &graph);
    consumed::check(&mut cx, &graph);
    timing::check(&mut cx);
    waits::check(&mut cx);
    dag::check(&mut cx);
    map::check(&mut cx);
    let diagnostics = crate::cascade::settle_checks(origins, cx.diagnostics);
    // Suppressions are matched in the workflow's own span space (a merged extending workflow's
    // base spans included), before the diagnostics are placed into their real files.
    let mut diagnostics: Vec<Diagnostic> =
        crate::suppress::apply(&origins.suppressions, origins.file, diagnostics)
            .into_iter()
            .map(|d| origins.place(d))
            .collect();
    hensu_diagnostics::sort_diagnostics(&mut diagnostics);
    diagnostics
}

/// Shared state of the single-workflow checks: the inputs, span look-ups with fallbacks, and the
/// diagnostics found so far.
pub(crate) struct Ctx<'a> {
    pub wf: &'a Workflow,
    pub origins: &'a Origins,
    pub input: InputKind,
    pub diagnostics: Vec<Diagnostic>,
}

impl<'a> Ctx<'a> {
    pub fn new(wf: &'a Workflow, origins: &'a Origins, input: InputKind) -> Self {
        Ctx {
            wf,
            origins,
            input,
            diagnostics: Vec::new(),
        }
    }

    /// Records a diagnostic in this workflow's file.
    pub fn emit(&mut self, d: Diagnostic) {
        self.diagnostics.push(d.in_file(self.origins.file));
    }

    pub fn fallback(&self) -> Span {
        self.origins.fallback
    }

    pub fn node_origin(&self, id: &str) -> Option<&'a NodeOrigin> {
        self.origins.nodes.get(id)
    }

    /// The node id string, or the fallback.
    pub fn node_span(&self, id: &str) -> Span {
        self.origins.node_id(id)
    }

    /// A node property value (`agent`, `prompt`, `target`, …), or the node id.
    pub fn prop_span(&self, id: &str, prop: &str) -> Span {
        self.node_origin(id)
            .and_then(|n| n.props.get(prop).copied())
            .unwrap_or_else(|| self.node_span(id))
    }

    pub fn rule_origin(&self, id: &str, rule: usize) -> Option<&'a RuleOrigin> {
        self.node_origin(id).and_then(|n| n.rules.get(rule))
    }

    /// The statement (or arm) a rule was compiled from, or the node id.
    pub fn rule_span(&self, id: &str, rule: usize) -> Span {
        self.rule_origin(id, rule)
            .map(|r| r.stmt)
            .unwrap_or_else(|| self.node_span(id))
    }

    /// The trigger word of a rule, or its statement.
    pub fn trigger_span(&self, id: &str, rule: usize) -> Span {
        match self.rule_origin(id, rule) {
            Some(r) => r.trigger.unwrap_or(r.stmt),
            None => self.node_span(id),
        }
    }

    /// The span of one target of a rule (see [`TargetSlot`]).
    pub fn target_span(&self, id: &str, rule: usize, slot: TargetSlot) -> Span {
        let Some(r) = self.rule_origin(id, rule) else {
            return self.node_span(id);
        };
        match slot {
            TargetSlot::Target => r.target.unwrap_or(r.stmt),
            TargetSlot::Condition(j) => r
                .condition_targets
                .get(j)
                .copied()
                .or(r.target)
                .unwrap_or(r.stmt),
            TargetSlot::SelfRetry => r.budget.or(r.trigger).unwrap_or(r.stmt),
            TargetSlot::Otherwise => r.otherwise.unwrap_or(r.stmt),
        }
    }

    /// The span of the `j`-th condition (arm) of a score rule, or the rule statement.
    pub fn condition_span(&self, id: &str, rule: usize, j: usize) -> Span {
        match self.rule_origin(id, rule) {
            Some(r) => r.conditions.get(j).copied().unwrap_or(r.stmt),
            None => self.node_span(id),
        }
    }

    /// The operand of a condition arm, or its statement.
    pub fn operand_span(&self, id: &str, rule: usize) -> Span {
        match self.rule_origin(id, rule) {
            Some(r) => r.operand.unwrap_or(r.stmt),
            None => self.node_span(id),
        }
    }

    /// The variable string of `onCondition("v")`, or the rule statement.
    pub fn variable_span(&self, id: &str, rule: usize) -> Span {
        match self.rule_origin(id, rule) {
            Some(r) => r.variable.unwrap_or(r.stmt),
            None => self.node_span(id),
        }
    }

    /// The `i`-th entry of a per-node span list, or the node id.
    pub fn list_span(&self, id: &str, pick: impl Fn(&NodeOrigin) -> &Vec<Span>, i: usize) -> Span {
        self.node_origin(id)
            .and_then(|n| pick(n).get(i).copied())
            .unwrap_or_else(|| self.node_span(id))
    }
}

/// `goto "x"` / `revise "x" retry N otherwise "y"` …: a short rendering of a rule for messages.
pub(crate) fn describe_rule(rule: &TransitionRule) -> String {
    match rule {
        TransitionRule::Success { target_node, .. } => format!("onSuccess goto \"{target_node}\""),
        TransitionRule::Failure {
            target_node: Some(t),
        } => format!("onFailure goto \"{t}\""),
        TransitionRule::Failure { target_node: None } => "onFailure retry".to_string(),
        TransitionRule::NoConsensus { target_node, .. } => {
            format!("onNoConsensus goto \"{target_node}\"")
        }
        TransitionRule::Approval {
            expected,
            target_node,
            ..
        } => format!(
            "{} goto \"{target_node}\"",
            if *expected {
                "onApproval"
            } else {
                "onRejection"
            }
        ),
        TransitionRule::Score { .. } => "onScore arm".to_string(),
        TransitionRule::Condition {
            variable,
            predicate,
            ..
        } => format!("onCondition(\"{variable}\") {}", predicate.describe()),
        TransitionRule::Always { target_node, .. } => format!("otherwise goto \"{target_node}\""),
        TransitionRule::ReviewTimeout { target_node } => {
            format!("review {{ onTimeout goto \"{target_node}\" }}")
        }
        TransitionRule::Bounded {
            budget,
            otherwise,
            inner,
            ..
        } => match inner.as_ref() {
            TransitionRule::Failure { target_node: None } => {
                format!("onFailure retry {budget} otherwise \"{otherwise}\"")
            }
            other => {
                let target = other.targets().first().copied().unwrap_or("");
                format!("revise \"{target}\" retry {budget} otherwise \"{otherwise}\"")
            }
        },
        TransitionRule::RubricFail => "rubricFail".to_string(),
    }
}
