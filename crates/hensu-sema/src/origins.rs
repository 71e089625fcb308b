//! Where each part of a workflow was written: the span side table that lets checks over the IR
//! point at the exact offending token. The lowering fills it from the syntax tree; for a `.json`
//! workflow it is filled from the JSON (as precisely as known, else the `fallback` span).
//!
//! Vectors that are "parallel to" an IR list have the same length and order as that list when
//! filled by the lowering; checks must still use `.get(i)` and fall back, never index.

use hensu_diagnostics::{FileId, Span};
use indexmap::IndexMap;

#[derive(Clone, Debug, Default)]
pub struct Origins {
    pub file: FileId,
    /// Used when nothing more precise is known (e.g. the whole JSON file, or the workflow call).
    pub fallback: Span,
    /// The `workflow("name")` call head (name string).
    pub workflow: Option<Span>,
    /// The `version = "…"` value.
    pub version: Option<Span>,
    /// The target string of `start at "x"`.
    pub start: Option<Span>,
    pub graph: Option<Span>,
    pub state: Option<Span>,
    /// `maxSteps`, `maxExecutionTime`, … values inside `config { }`, by property name.
    pub config: IndexMap<String, Span>,
    pub agents: IndexMap<String, AgentOrigin>,
    pub variables: IndexMap<String, VariableOrigin>,
    /// Keyed by node id with the Fx hash: checks look a node's origin up several times per node,
    /// and ids come from the workflow itself (HashDoS resistance buys nothing).
    pub nodes: IndexMap<String, NodeOrigin, rustc_hash::FxBuildHasher>,
    /// `compensation("id") { … }` statements by id: `id`, `decl`, `props` (`agent`, `prompt`),
    /// `actions`, `action_ids` and `placeholders` are filled, like a node's.
    pub compensations: IndexMap<String, NodeOrigin>,
    /// Compensations dropped because their id was already taken (E0201): a node naming one
    /// gets no echo "unknown compensation" (E0212).
    pub rejected_compensations: Vec<String>,
    /// The worst phase that reported an error for this file, so the checks report no cascade
    /// of it (see `check::check_workflow`).
    pub damage: Damage,
    /// The primary spans of the errors reported before the checks.
    pub error_spans: Vec<Span>,
    /// Set on the origins of a merged extending workflow (docs/language.md, *Workflow
    /// extension*): which file each span is in, and where the inherited parts come from.
    pub derived: Option<Box<Derivation>>,
    /// Where the workflow was read from: `Json` when [`crate::origins_from_json`] built these
    /// origins. The project checks read it (their units carry no input kind); the
    /// single-workflow checks take it as an argument.
    pub input: InputKind,
    /// The `@Suppress("W…")` annotations of the file, in source order.
    pub suppressions: Vec<crate::suppress::Suppression>,
}

/// Which earlier phase reported an error for a file (docs/diagnostics/README.md, *Root cause
/// first*).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Damage {
    /// No error before the checks.
    #[default]
    None,
    /// The lowering rejected a statement (E01xx/E02xx): a node, an arm or a declaration may be
    /// missing from the IR.
    Lowering,
    /// The lexer or parser reported an error (E00xx): the tree itself was recovered.
    Syntax,
}

#[derive(Clone, Debug, Default)]
pub struct AgentOrigin {
    /// The id string in `agent("id")`.
    pub id: Span,
    /// The whole `agent("id") { … }` statement.
    pub decl: Span,
    /// Property values by property name (`role`, `model`, `temperature`, …).
    pub props: IndexMap<&'static str, Span>,
    /// Each `tools = listOf(…)` entry (the string literal), in order; empty for JSON.
    pub tools: Vec<Span>,
}

#[derive(Clone, Debug, Default)]
pub struct VariableOrigin {
    /// The name string in `input("name", …)` / `variable("name", …)`.
    pub name: Span,
    pub decl: Span,
    /// The `VarType.X` argument.
    pub var_type: Option<Span>,
}

#[derive(Clone, Debug, Default)]
pub struct NodeOrigin {
    /// The id string in `node("id")`, `end("id")`, ….
    pub id: Span,
    /// The whole node statement.
    pub decl: Span,
    /// Property values by property name (`agent`, `prompt`, `rubric`, `executorType`, `target`,
    /// `targetVersion`, `mergeStrategy`, `timeout`, `waitAll`, `failOnError`, …).
    pub props: IndexMap<&'static str, Span>,
    /// The `review(…)` / `review { }` statement.
    pub review: Option<Span>,
    /// The `consensus { }` block and its properties (`strategy`, `judge`, `threshold`).
    pub consensus: Option<Span>,
    pub consensus_props: IndexMap<&'static str, Span>,
    /// Each name string of `writes(…)` (standard, join, sub-workflow), parallel to the IR list.
    pub writes: Vec<Span>,
    /// Each name of sub-workflow `imports(…)`, parallel to the IR mapping order: the parent-side
    /// name (for JSON, the `inputMapping` value).
    pub imports: Vec<Span>,
    /// The child-side name of each import when it is written apart from the parent-side one
    /// (JSON `inputMapping` keys); empty when they are the same (`.hwf`), then `imports`.
    pub imports_child: Vec<Span>,
    /// The child-side name of each sub-workflow write when it is written apart (JSON
    /// `outputMapping` values); empty when the same (`.hwf`), then `writes`.
    pub writes_child: Vec<Span>,
    /// Each name of join `exports(…)`.
    pub exports: Vec<Span>,
    /// Each fork target string, parallel to `targets`.
    pub targets: Vec<Span>,
    /// Each join `await` string, parallel to `await_targets`.
    pub awaits: Vec<Span>,
    /// Parallel branches, parallel to `branches`.
    pub branches: Vec<BranchOrigin>,
    /// Actions of an action node, parallel to `actions` (the `send(…)`/`execute(…)` call).
    pub actions: Vec<Span>,
    /// The command or handler id string of each action, parallel to `actions`.
    pub action_ids: Vec<Span>,
    /// Transition rules, parallel to `transition_rules`.
    pub rules: Vec<RuleOrigin>,
    /// The `{name}` placeholders found in the node prompt (or, for an action node, in the
    /// top-level string values of `send` payloads), with the span of the whole `{name}` when the
    /// text maps to source one to one (else the prompt value span; for a `.md` prompt the span of
    /// the file-name string).
    pub placeholders: Vec<(String, Span)>,
    /// Sub-workflow `imports(…)` / `writes(…)` names written more than once in one call:
    /// `("imports" | "writes", name, span of the repeat)`. The IR mapping holds each name once.
    pub repeated_names: Vec<(String, String, Span)>,
}

#[derive(Clone, Debug, Default)]
pub struct BranchOrigin {
    pub id: Span,
    pub decl: Span,
    pub props: IndexMap<&'static str, Span>,
    /// Each `yields(…)` name, parallel to the IR list.
    pub yields: Vec<Span>,
    pub placeholders: Vec<(String, Span)>,
    /// Each `after(…)` name, parallel to the IR list.
    pub after: Vec<Span>,
    /// The variable name of `runIf("v")`.
    pub run_if: Option<Span>,
}

#[derive(Clone, Debug, Default)]
pub struct RuleOrigin {
    /// The statement (or `onScore`/`onCondition` arm) the rule was compiled from.
    pub stmt: Span,
    /// The trigger word (`onSuccess`, `whenScore`, `whenValue`, `otherwise`, …).
    pub trigger: Option<Span>,
    /// The target string of `goto "x"` / `revise "x"` (the inner target for bounded rules).
    pub target: Option<Span>,
    /// The escalation string of `… retry N otherwise "x"`.
    pub otherwise: Option<Span>,
    /// The `retry N` number.
    pub budget: Option<Span>,
    /// For a score rule: one span per condition (the arm), parallel to `conditions`, and the
    /// target string of each.
    pub conditions: Vec<Span>,
    pub condition_targets: Vec<Span>,
    /// For a condition rule: the variable string of `onCondition("v")` and the operand.
    pub variable: Option<Span>,
    pub operand: Option<Span>,
}

impl Origins {
    /// The fallback span used for anything without a more precise origin.
    pub fn or_fallback(&self, span: Option<Span>) -> Span {
        span.unwrap_or(self.fallback)
    }

    pub fn node(&self, id: &str) -> Option<&NodeOrigin> {
        self.nodes.get(id)
    }

    /// The span of a node's id, or the fallback.
    pub fn node_id(&self, id: &str) -> Span {
        self.nodes.get(id).map(|n| n.id).unwrap_or(self.fallback)
    }
}

/// Where a workflow came from: `.hwf`/`.kt` source, or a `.json` artifact (docs/language.md, *The JSON
/// artifact*: an engine variable in a standard node's `writes` is then W0310 instead of E0401).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InputKind {
    #[default]
    Source,
    Json,
}

/// A range of the merged span space and the file it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub file: FileId,
    /// Where the file's byte 0 is in the merged span space.
    pub start: u32,
    /// The file's length (a span may end at `start + len`).
    pub len: u32,
}

/// A base of a derived workflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseRef {
    pub id: String,
    pub version: String,
    pub file: FileId,
}

/// How a merged workflow was derived (on [`Origins::derived`]).
#[derive(Clone, Debug, Default)]
pub struct Derivation {
    /// The derived workflow's id.
    pub workflow: String,
    /// The `extends("…")` string in the derived file.
    pub extends: Span,
    /// The derived file first, then each base's file.
    pub segments: Vec<Segment>,
    /// The chain of bases, nearest first.
    pub bases: Vec<BaseRef>,
    /// Each inherited node id → the index in `bases` of the workflow that declares it.
    pub inherited: IndexMap<String, usize>,
}

impl Derivation {
    /// The base that declares an inherited node.
    pub fn declared_in(&self, node: &str) -> Option<&BaseRef> {
        self.inherited.get(node).and_then(|i| self.bases.get(*i))
    }
}
