//! The node kinds: one struct per kind behind [`Node`], and the rubric a node may carry.

use indexmap::IndexMap;
use serde_json::Value;

use super::*;

/// A node of the graph; one variant per node kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Standard(StandardNode),
    Parallel(ParallelNode),
    Fork(ForkNode),
    Join(JoinNode),
    Generic(GenericNode),
    Action(ActionNode),
    SubWorkflow(SubWorkflowNode),
    End(EndNode),
    /// hensu extension: a durable timer or a signal wait (docs/language.md, *Timers and signals*).
    Wait(WaitNode),
    /// hensu extension: `map("id") { over = "list"; … }`.
    Map(MapNode),
}

impl Node {
    /// The node id.
    pub fn id(&self) -> &str {
        match self {
            Node::Standard(n) => &n.id,
            Node::Parallel(n) => &n.id,
            Node::Fork(n) => &n.id,
            Node::Join(n) => &n.id,
            Node::Generic(n) => &n.id,
            Node::Action(n) => &n.id,
            Node::SubWorkflow(n) => &n.id,
            Node::End(n) => &n.id,
            Node::Wait(n) => &n.id,
            Node::Map(n) => &n.id,
        }
    }

    /// The node kind.
    pub fn kind(&self) -> NodeKind {
        match self {
            Node::Standard(_) => NodeKind::Standard,
            Node::Parallel(_) => NodeKind::Parallel,
            Node::Fork(_) => NodeKind::Fork,
            Node::Join(_) => NodeKind::Join,
            Node::Generic(_) => NodeKind::Generic,
            Node::Action(_) => NodeKind::Action,
            Node::SubWorkflow(_) => NodeKind::SubWorkflow,
            Node::End(_) => NodeKind::End,
            Node::Wait(_) => NodeKind::Wait,
            Node::Map(_) => NodeKind::Map,
        }
    }

    /// The JSON `nodeType` (`STANDARD`, `PARALLEL`, …).
    pub fn kind_name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// The ordered rule list (empty for end nodes).
    pub fn transition_rules(&self) -> &[TransitionRule] {
        match self {
            Node::Standard(n) => &n.transition_rules,
            Node::Parallel(n) => &n.transition_rules,
            Node::Fork(n) => &n.transition_rules,
            Node::Join(n) => &n.transition_rules,
            Node::Generic(n) => &n.transition_rules,
            Node::Action(n) => &n.transition_rules,
            Node::SubWorkflow(n) => &n.transition_rules,
            Node::Wait(n) => &n.transition_rules,
            Node::Map(n) => &n.transition_rules,
            Node::End(_) => &[],
        }
    }

    /// Mutable access to the rule list (`None` for end nodes).
    pub fn transition_rules_mut(&mut self) -> Option<&mut Vec<TransitionRule>> {
        match self {
            Node::Standard(n) => Some(&mut n.transition_rules),
            Node::Parallel(n) => Some(&mut n.transition_rules),
            Node::Fork(n) => Some(&mut n.transition_rules),
            Node::Join(n) => Some(&mut n.transition_rules),
            Node::Generic(n) => Some(&mut n.transition_rules),
            Node::Action(n) => Some(&mut n.transition_rules),
            Node::SubWorkflow(n) => Some(&mut n.transition_rules),
            Node::Wait(n) => Some(&mut n.transition_rules),
            Node::Map(n) => Some(&mut n.transition_rules),
            Node::End(_) => None,
        }
    }

    /// The agent of a standard node.
    pub fn agent_id(&self) -> Option<&str> {
        match self {
            Node::Standard(n) => n.agent_id.as_deref(),
            Node::Map(n) => n.agent_id.as_deref(),
            _ => None,
        }
    }

    /// The rubric of a standard or generic node.
    pub fn rubric(&self) -> Option<&Rubric> {
        match self {
            Node::Standard(n) => n.rubric.as_ref(),
            Node::Generic(n) => n.rubric.as_ref(),
            _ => None,
        }
    }

    /// The workflow this node runs as a child: a sub-workflow node's target, or a map node's
    /// sub-workflow body (docs/language.md, *Map over a list*).
    pub fn called_workflow(&self) -> Option<&str> {
        match self {
            Node::SubWorkflow(s) => Some(s.workflow_id.as_str()),
            Node::Map(m) => m.target.as_deref(),
            _ => None,
        }
    }

    /// Whether this is an end node.
    pub fn is_end(&self) -> bool {
        matches!(self, Node::End(_))
    }

    /// Every node id this node can hand control to: rule targets (see
    /// [`TransitionRule::targets`]) followed by fork targets.
    pub fn successor_ids(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for rule in self.transition_rules() {
            out.extend(rule.targets());
        }
        if let Node::Fork(f) = self {
            out.extend(f.targets.iter().map(String::as_str));
        }
        out
    }
}

/// `node("id") { … }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StandardNode {
    pub id: String,
    pub agent_id: Option<String>,
    /// Resolved prompt text (`.md` files are inlined before the IR is built).
    pub prompt: Option<String>,
    pub rubric: Option<Rubric>,
    pub review_config: Option<ReviewConfig>,
    pub transition_rules: Vec<TransitionRule>,
    pub writes: Vec<String>,
}

/// `parallel("id") { … }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ParallelNode {
    pub id: String,
    pub branches: Vec<Branch>,
    pub consensus_config: Option<ConsensusConfig>,
    pub transition_rules: Vec<TransitionRule>,
}

impl ParallelNode {
    /// A dependency DAG (docs/language.md, *Dependency DAGs*): some branch waits for another
    /// (`after`) or runs only under a condition (`runIf`).
    pub fn is_dag(&self) -> bool {
        self.branches.iter().any(Branch::is_dag_member)
    }
}

/// One `branch("id") { … }` of a parallel node.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub id: String,
    pub agent_id: String,
    /// `None` when unset (upstream writes `""` from the DSL; hensu keeps what it was given).
    pub prompt: Option<String>,
    pub rubric: Option<Rubric>,
    pub weight: f64,
    pub yields: Vec<String>,
    /// hensu extension (docs/language.md, *Dependency DAGs*): the branches of the same node
    /// that must finish before this one starts (`after("a", "b")`).
    pub after: Vec<String>,
    /// hensu extension: the Boolean state variable that must be true for this branch to run
    /// (`runIf("v")`); otherwise it is skipped (`SKIPPED`).
    pub run_if: Option<String>,
}

impl Branch {
    /// A branch with upstream defaults (weight 1.0, no prompt, rubric or yields).
    pub fn new(id: impl Into<String>, agent_id: impl Into<String>) -> Self {
        Branch {
            id: id.into(),
            agent_id: agent_id.into(),
            prompt: None,
            rubric: None,
            weight: 1.0,
            yields: Vec::new(),
            after: Vec::new(),
            run_if: None,
        }
    }

    /// Whether the branch takes part in a dependency DAG (`after` or `runIf`).
    pub fn is_dag_member(&self) -> bool {
        !self.after.is_empty() || self.run_if.is_some()
    }
}

/// `consensus { … }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConsensusConfig {
    pub judge_agent_id: Option<String>,
    pub strategy: ConsensusStrategy,
    pub threshold: Option<f64>,
}

/// `review(…)` / `review { … }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ReviewConfig {
    pub mode: ReviewMode,
    pub allow_backtrack: bool,
    pub allow_edit: bool,
}

/// `fork("id") { … }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ForkNode {
    pub id: String,
    pub targets: Vec<String>,
    /// Per-target configuration (JSON only; never set by the DSL). Values are kept verbatim.
    pub target_configs: IndexMap<String, Value>,
    pub transition_rules: Vec<TransitionRule>,
    /// JSON `waitForAll` (DSL `waitAll`); stored but not used by the executor.
    pub wait_for_all: bool,
}

/// `join("id") { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct JoinNode {
    pub id: String,
    pub await_targets: Vec<String>,
    pub merge_strategy: MergeStrategy,
    pub writes: Vec<String>,
    pub exports: Vec<String>,
    /// `0` = no timeout.
    pub timeout_ms: i64,
    /// JSON `failOnAnyError` (DSL `failOnError`).
    pub fail_on_any_error: bool,
    pub transition_rules: Vec<TransitionRule>,
}

impl Default for JoinNode {
    fn default() -> Self {
        JoinNode {
            id: String::new(),
            await_targets: Vec::new(),
            merge_strategy: MergeStrategy::CollectAll,
            writes: Vec::new(),
            exports: Vec::new(),
            timeout_ms: 0,
            fail_on_any_error: true,
            transition_rules: Vec::new(),
        }
    }
}

/// `generic("id") { … }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct GenericNode {
    pub id: String,
    pub executor_type: String,
    pub config: IndexMap<String, Value>,
    pub transition_rules: Vec<TransitionRule>,
    pub rubric: Option<Rubric>,
}

/// `action("id") { … }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ActionNode {
    pub id: String,
    pub actions: Vec<Action>,
    pub transition_rules: Vec<TransitionRule>,
    /// hensu extension (docs/language.md, *Action node*): the state variables the actions'
    /// result is extracted into, as a standard node's `writes`; empty when unused.
    pub writes: Vec<String>,
}

/// One action of an action node.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `send("handler", mapOf(…))`.
    Send {
        handler_id: String,
        payload: IndexMap<String, Value>,
        raw_payload: bool,
    },
    /// `execute("commandId")`.
    Execute { command_id: String },
}

/// `subWorkflow("id") { … }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SubWorkflowNode {
    pub id: String,
    /// The child workflow id.
    pub workflow_id: String,
    pub target_version: Option<String>,
    /// child key → parent key.
    pub input_mapping: IndexMap<String, String>,
    /// parent key → child key.
    pub output_mapping: IndexMap<String, String>,
    pub transition_rules: Vec<TransitionRule>,
}

/// `map("id") { … }` (hensu extension; docs/language.md, *Map over a list*): the body (an
/// agent and its prompt) run once per item of the list variable `over`, at most
/// `max_parallel` items at a time, the answers gathered in the list's order into `writes`.
#[derive(Clone, Debug, PartialEq)]
pub struct MapNode {
    pub id: String,
    /// The `LIST_STRING` state variable whose items the body runs over.
    pub over: String,
    pub agent_id: Option<String>,
    /// The prompt of each item; `{item}` and `{index}` are the item and its 0-based position.
    pub prompt: Option<String>,
    /// The body as a sub-workflow instead of an agent: the child workflow run once per item,
    /// on the inputs `item` and `index`.
    pub target: Option<String>,
    /// With `target`: the child's variable whose value is the item's answer.
    pub result: Option<String>,
    /// How many items run at a time (at least 1: E0122).
    pub max_parallel: i64,
    /// The most items a run may hold (a longer list fails the node); the static bound
    /// multiplies the body's calls by it. `None`: unbounded (W0336).
    pub max_items: Option<i64>,
    pub on_item_failure: ItemFailure,
    /// The `LIST_STRING` variable the answers are gathered into (at most one).
    pub writes: Vec<String>,
    pub transition_rules: Vec<TransitionRule>,
}

impl Default for MapNode {
    fn default() -> Self {
        MapNode {
            id: String::new(),
            over: String::new(),
            agent_id: None,
            prompt: None,
            target: None,
            result: None,
            max_parallel: 1,
            max_items: None,
            on_item_failure: ItemFailure::Fail,
            writes: Vec::new(),
            transition_rules: Vec::new(),
        }
    }
}

/// `end("id"[, status])`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EndNode {
    pub id: String,
    pub status: ExitStatus,
}

/// A parsed rubric plus its raw markdown (the raw text is what the JSON stores).
#[derive(Clone, Debug, PartialEq)]
pub struct Rubric {
    pub id: String,
    pub name: String,
    pub version: String,
    pub rubric_type: RubricType,
    /// 0..=100.
    pub pass_threshold: f64,
    pub criteria: Vec<Criterion>,
    pub raw_content: String,
}

/// One rubric criterion.
#[derive(Clone, Debug, PartialEq)]
pub struct Criterion {
    pub id: String,
    pub name: String,
    pub description: String,
    pub weight: f64,
    pub min_score: f64,
    pub required: bool,
}
