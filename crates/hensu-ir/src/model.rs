//! The typed workflow data (plain values, no I/O).
//!
//! One enum variant per node kind ([`Node`]) and per transition rule ([`TransitionRule`]); every
//! map is an [`IndexMap`] so declaration order is kept and serialization is deterministic.

use indexmap::IndexMap;
use serde_json::Value;

use crate::number::{canonical_number, java_double_to_string};

/// The upstream default workflow version.
pub const DEFAULT_VERSION: &str = "1.0.0";
/// The default of `config { maxSteps }` (docs/language.md, *Workflow config*).
pub const DEFAULT_MAX_STEPS: i64 = 1000;
/// The default of `maxExecutionTime` in milliseconds (2 h).
pub const DEFAULT_MAX_EXECUTION_TIME_MS: i64 = 7_200_000;
/// The default of `checkpointInterval` in milliseconds (5 min).
pub const DEFAULT_CHECKPOINT_INTERVAL_MS: i64 = 300_000;
/// The default agent temperature.
pub const DEFAULT_TEMPERATURE: f64 = 0.7;
/// The engine variables (`score`, `approved`, `recommendation`).
pub const ENGINE_VARIABLES: [&str; 3] = ["score", "approved", "recommendation"];

/// Whether `name` is one of the engine variables `score`, `approved`, `recommendation`.
pub fn is_engine_variable(name: &str) -> bool {
    ENGINE_VARIABLES.contains(&name)
}

/// A whole compiled workflow.
#[derive(Clone, Debug, PartialEq)]
pub struct Workflow {
    /// Sanitized id (see [`crate::workflow_id_from_name`]).
    pub id: String,
    pub version: String,
    pub metadata: Metadata,
    pub agents: IndexMap<String, AgentConfig>,
    /// Node id → node, in declaration order.
    pub nodes: IndexMap<String, Node>,
    pub start_node: String,
    /// `None` = no `config { }` block (JSON `null`).
    pub config: Option<WorkflowConfig>,
    /// `None` = no `state { }` block (JSON `null`).
    pub state_schema: Option<StateSchema>,
}

impl Workflow {
    /// The workflow config, or the defaults when none was given.
    pub fn effective_config(&self) -> WorkflowConfig {
        self.config.clone().unwrap_or_default()
    }

    /// Looks a node up by id.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.get(id)
    }
}

/// `metadata` of a workflow.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Metadata {
    /// The name as written in `workflow("…")`.
    pub name: String,
    pub description: Option<String>,
    pub author: Option<String>,
    /// ISO-8601 instant; hensu leaves it `None` unless asked (reproducible builds).
    pub created: Option<String>,
    pub tags: Vec<String>,
}

/// An agent definition (the `agents` map of the wire format).
#[derive(Clone, Debug, PartialEq)]
pub struct AgentConfig {
    pub id: String,
    pub role: String,
    pub model: String,
    pub temperature: f64,
    pub max_tokens: Option<i64>,
    pub tools: Vec<String>,
    pub instructions: Option<String>,
    pub top_p: Option<f64>,
    pub frequency_penalty: Option<f64>,
    pub presence_penalty: Option<f64>,
    /// Seconds.
    pub timeout: Option<i64>,
    pub max_tool_calls: Option<i64>,
    pub maintain_context: bool,
}

impl AgentConfig {
    /// An agent with upstream defaults for everything but id, role and model.
    pub fn new(id: impl Into<String>, role: impl Into<String>, model: impl Into<String>) -> Self {
        AgentConfig {
            id: id.into(),
            role: role.into(),
            model: model.into(),
            temperature: DEFAULT_TEMPERATURE,
            max_tokens: None,
            tools: Vec::new(),
            instructions: None,
            top_p: None,
            frequency_penalty: None,
            presence_penalty: None,
            timeout: None,
            max_tool_calls: None,
            maintain_context: false,
        }
    }
}

/// Workflow-level `config { }`: upstream fields plus hensu's `max_steps`.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkflowConfig {
    /// Milliseconds; enforced by hensu.
    pub max_execution_time: i64,
    pub checkpoints: bool,
    /// Milliseconds.
    pub checkpoint_interval: i64,
    pub observability: Observability,
    /// hensu addition (JSON `maxSteps`): maximum node steps of one run.
    pub max_steps: i64,
}

impl Default for WorkflowConfig {
    fn default() -> Self {
        WorkflowConfig {
            max_execution_time: DEFAULT_MAX_EXECUTION_TIME_MS,
            checkpoints: false,
            checkpoint_interval: DEFAULT_CHECKPOINT_INTERVAL_MS,
            observability: Observability::default(),
            max_steps: DEFAULT_MAX_STEPS,
        }
    }
}

/// `observability { }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Observability {
    pub log_level: LogLevel,
    pub export_metrics: bool,
}

impl Default for Observability {
    fn default() -> Self {
        Observability {
            log_level: LogLevel::Info,
            export_metrics: true,
        }
    }
}

/// `state { }`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StateSchema {
    pub variables: Vec<StateVariable>,
}

impl StateSchema {
    /// Looks a variable up by name.
    pub fn variable(&self, name: &str) -> Option<&StateVariable> {
        self.variables.iter().find(|v| v.name == name)
    }
}

/// One `input(...)` / `variable(...)` declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct StateVariable {
    pub name: String,
    pub var_type: VarType,
    pub is_input: bool,
    pub description: Option<String>,
}

macro_rules! wire_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $variant),+ }

        impl $name {
            /// Every value, in upstream declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire (JSON / DSL constant) spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }

            /// Parses the wire spelling (exact match).
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($wire => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum!(
    /// State variable types (recorded; checked by hensu's E0405 only).
    VarType { String = "STRING", Number = "NUMBER", Boolean = "BOOLEAN", ListString = "LIST_STRING" }
);
wire_enum!(
    /// Human review modes.
    ReviewMode { Required = "REQUIRED", Optional = "OPTIONAL", Disabled = "DISABLED" }
);
wire_enum!(
    /// Parallel consensus strategies.
    ConsensusStrategy {
        MajorityVote = "MAJORITY_VOTE",
        Unanimous = "UNANIMOUS",
        WeightedVote = "WEIGHTED_VOTE",
        JudgeDecides = "JUDGE_DECIDES",
    }
);
wire_enum!(
    /// Join merge strategies.
    MergeStrategy {
        CollectAll = "COLLECT_ALL",
        FirstSuccessful = "FIRST_SUCCESSFUL",
        Concatenate = "CONCATENATE",
        MergeMaps = "MERGE_MAPS",
    }
);
wire_enum!(
    /// End node exit status.
    ExitStatus { Success = "SUCCESS", Failure = "FAILURE", Cancel = "CANCEL" }
);
wire_enum!(
    /// Observability log level.
    LogLevel { Trace = "TRACE", Debug = "DEBUG", Info = "INFO", Warn = "WARN", Error = "ERROR" }
);
wire_enum!(
    /// Score comparison operators (`EQ` has no DSL spelling).
    ComparisonOperator { Gte = "GTE", Lt = "LT", Lte = "LTE", Range = "RANGE", Gt = "GT", Eq = "EQ" }
);
wire_enum!(
    /// Rubric types.
    RubricType {
        Standard = "STANDARD",
        CodeQuality = "CODE_QUALITY",
        Security = "SECURITY",
        Performance = "PERFORMANCE",
        Documentation = "DOCUMENTATION",
        Custom = "CUSTOM",
    }
);
wire_enum!(
    /// Retry-counter namespaces of bounded rules.
    Namespace {
        Failure = "failure",
        Approval = "approval",
        Consensus = "consensus",
        Score = "score",
        Condition = "condition",
    }
);
wire_enum!(
    /// Node kinds; the spelling is the JSON `nodeType`.
    NodeKind {
        Standard = "STANDARD",
        Parallel = "PARALLEL",
        SubWorkflow = "SUB_WORKFLOW",
        End = "END",
        Generic = "GENERIC",
        Fork = "FORK",
        Join = "JOIN",
        Action = "ACTION",
    }
);
wire_enum!(
    /// Transition rule kinds; the spelling is the JSON rule `type`.
    RuleKind {
        Success = "success",
        Failure = "failure",
        NoConsensus = "noConsensus",
        Approval = "approval",
        Score = "score",
        Condition = "condition",
        Always = "always",
        Bounded = "bounded",
        RubricFail = "rubricFail",
    }
);

#[allow(clippy::derivable_impls)] // the enums are generated by `wire_enum!`
impl Default for ReviewMode {
    fn default() -> Self {
        ReviewMode::Required
    }
}
#[allow(clippy::derivable_impls)] // the enums are generated by `wire_enum!`
impl Default for ConsensusStrategy {
    fn default() -> Self {
        ConsensusStrategy::MajorityVote
    }
}
#[allow(clippy::derivable_impls)] // the enums are generated by `wire_enum!`
impl Default for MergeStrategy {
    fn default() -> Self {
        MergeStrategy::CollectAll
    }
}
#[allow(clippy::derivable_impls)] // the enums are generated by `wire_enum!`
impl Default for ExitStatus {
    fn default() -> Self {
        ExitStatus::Success
    }
}
#[allow(clippy::derivable_impls)] // the enums are generated by `wire_enum!`
impl Default for LogLevel {
    fn default() -> Self {
        LogLevel::Info
    }
}
#[allow(clippy::derivable_impls)] // the enums are generated by `wire_enum!`
impl Default for RubricType {
    fn default() -> Self {
        RubricType::Standard
    }
}

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
            Node::End(_) => None,
        }
    }

    /// The agent of a standard node.
    pub fn agent_id(&self) -> Option<&str> {
        match self {
            Node::Standard(n) => n.agent_id.as_deref(),
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
        }
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

/// One transition rule; one variant per rule kind (the `transitionRules` of a node).
#[derive(Clone, Debug, PartialEq)]
pub enum TransitionRule {
    /// `onSuccess` / `onConsensus` / `onComplete goto`.
    Success {
        target_node: String,
        with_feedback: bool,
    },
    /// `onFailure goto "x"` (`Some`) or the self-retry inner rule of `onFailure retry` (`None`).
    Failure { target_node: Option<String> },
    /// `onNoConsensus goto`.
    NoConsensus {
        target_node: String,
        with_feedback: bool,
    },
    /// `onApproval` (`expected = true`) / `onRejection` (`false`).
    Approval {
        expected: bool,
        target_node: String,
        with_feedback: bool,
    },
    /// A group of `whenScore` arms; the first matching condition wins.
    Score {
        conditions: Vec<ScoreCondition>,
        with_feedback: bool,
    },
    /// One `whenValue` arm of `onCondition("variable")`.
    Condition {
        variable: String,
        predicate: ConditionPredicate,
        target_node: String,
        with_feedback: bool,
    },
    /// An `otherwise` else-arm.
    Always {
        target_node: String,
        with_feedback: bool,
    },
    /// `revise … retry N otherwise "x"` / `onFailure retry N otherwise "x"`.
    Bounded {
        namespace: Namespace,
        budget: i64,
        /// The escalation target once the budget is exhausted.
        otherwise: String,
        escalation_with_feedback: bool,
        inner: Box<TransitionRule>,
    },
    /// Java-API-only rule; reads back as a rule that never matches.
    RubricFail,
}

impl TransitionRule {
    /// The outer rule kind (`Bounded` for a bounded rule).
    pub fn kind(&self) -> RuleKind {
        match self {
            TransitionRule::Success { .. } => RuleKind::Success,
            TransitionRule::Failure { .. } => RuleKind::Failure,
            TransitionRule::NoConsensus { .. } => RuleKind::NoConsensus,
            TransitionRule::Approval { .. } => RuleKind::Approval,
            TransitionRule::Score { .. } => RuleKind::Score,
            TransitionRule::Condition { .. } => RuleKind::Condition,
            TransitionRule::Always { .. } => RuleKind::Always,
            TransitionRule::Bounded { .. } => RuleKind::Bounded,
            TransitionRule::RubricFail => RuleKind::RubricFail,
        }
    }

    /// The innermost rule kind (a bounded rule's trigger is its inner rule's kind).
    pub fn trigger(&self) -> RuleKind {
        self.trigger_rule().kind()
    }

    /// The innermost rule (self for non-bounded rules).
    pub fn trigger_rule(&self) -> &TransitionRule {
        let mut r = self;
        while let TransitionRule::Bounded { inner, .. } = r {
            r = inner;
        }
        r
    }

    /// Every target node id, in order: own targets (score: one per condition), for bounded the
    /// inner targets then `otherwise`. The self-retry `None` of a failure rule is skipped.
    pub fn targets(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_targets(&mut out);
        out
    }

    fn collect_targets<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            TransitionRule::Success { target_node, .. }
            | TransitionRule::NoConsensus { target_node, .. }
            | TransitionRule::Approval { target_node, .. }
            | TransitionRule::Condition { target_node, .. }
            | TransitionRule::Always { target_node, .. } => out.push(target_node),
            TransitionRule::Failure { target_node } => {
                if let Some(t) = target_node {
                    out.push(t);
                }
            }
            TransitionRule::Score { conditions, .. } => {
                out.extend(conditions.iter().map(|c| c.target_node.as_str()));
            }
            TransitionRule::Bounded {
                otherwise, inner, ..
            } => {
                inner.collect_targets(out);
                out.push(otherwise);
            }
            TransitionRule::RubricFail => {}
        }
    }

    /// The context variables this rule routes on (upstream `requiredRoutingVars()`): score →
    /// `score, recommendation`; approval → `approved, recommendation`; condition → its variable,
    /// `recommendation`; bounded → its inner rule's; others none.
    pub fn required_routing_vars(&self) -> Vec<&str> {
        match self.trigger_rule() {
            TransitionRule::Score { .. } => vec!["score", "recommendation"],
            TransitionRule::Approval { .. } => vec!["approved", "recommendation"],
            TransitionRule::Condition { variable, .. } => vec![variable.as_str(), "recommendation"],
            _ => Vec::new(),
        }
    }

    /// The feedback flag that applies when this rule matches forward: `with_feedback` of plain
    /// rules, `escalation_with_feedback` of a bounded rule.
    pub fn with_feedback(&self) -> bool {
        match self {
            TransitionRule::Success { with_feedback, .. }
            | TransitionRule::NoConsensus { with_feedback, .. }
            | TransitionRule::Approval { with_feedback, .. }
            | TransitionRule::Score { with_feedback, .. }
            | TransitionRule::Condition { with_feedback, .. }
            | TransitionRule::Always { with_feedback, .. } => *with_feedback,
            TransitionRule::Bounded {
                escalation_with_feedback,
                ..
            } => *escalation_with_feedback,
            TransitionRule::Failure { .. } | TransitionRule::RubricFail => false,
        }
    }

    /// The bounded wrapper's `(namespace, budget)`, if any.
    pub fn bounded(&self) -> Option<(Namespace, i64)> {
        match self {
            TransitionRule::Bounded {
                namespace, budget, ..
            } => Some((*namespace, *budget)),
            _ => None,
        }
    }

    /// Whether the rule is unconditional on a successful result (`always`, or bounded `always`).
    pub fn is_unconditional(&self) -> bool {
        matches!(self.trigger(), RuleKind::Always)
    }
}

/// One arm of a score rule.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreCondition {
    pub operator: ComparisonOperator,
    /// The threshold; `Some(0.0)` for DSL-built RANGE arms, `None` when absent in JSON.
    pub value: Option<f64>,
    /// Closed range for `RANGE`.
    pub range: Option<ScoreRange>,
    pub target_node: String,
}

impl ScoreCondition {
    /// Whether `score` satisfies this condition (a missing operand never matches).
    pub fn matches(&self, score: f64) -> bool {
        match self.operator {
            ComparisonOperator::Range => self
                .range
                .is_some_and(|r| score >= r.start && score <= r.end),
            op => match self.value {
                None => false,
                Some(v) => match op {
                    ComparisonOperator::Gt => score > v,
                    ComparisonOperator::Gte => score >= v,
                    ComparisonOperator::Lt => score < v,
                    ComparisonOperator::Lte => score <= v,
                    ComparisonOperator::Eq => score == v,
                    ComparisonOperator::Range => false,
                },
            },
        }
    }

    /// Upstream visualize rendering: `LT 70.0`, `RANGE 50.0..79.0` (Java double formatting).
    pub fn describe(&self) -> String {
        match self.operator {
            ComparisonOperator::Range => match self.range {
                Some(r) => format!(
                    "RANGE {}..{}",
                    java_double_to_string(r.start),
                    java_double_to_string(r.end)
                ),
                None => "RANGE".to_string(),
            },
            op => match self.value {
                Some(v) => format!("{} {}", op.as_str(), java_double_to_string(v)),
                None => op.as_str().to_string(),
            },
        }
    }
}

/// A closed score interval `[start, end]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub start: f64,
    pub end: f64,
}

/// The predicate of a condition arm. Equality operands are stored in canonical string form
/// (see [`crate::canonical_number`]); ordering operands as numbers.
#[derive(Clone, Debug, PartialEq)]
pub enum ConditionPredicate {
    /// `equalTo` — JSON `EQ`.
    Eq(String),
    /// `notEqualTo` — JSON `NEQ`.
    Neq(String),
    /// `greaterThan` — JSON `GT`.
    Gt(f64),
    /// `greaterThanOrEqual` — JSON `GTE`.
    Gte(f64),
    /// `lessThan` — JSON `LT`.
    Lt(f64),
    /// `lessThanOrEqual` — JSON `LTE`.
    Lte(f64),
}

impl ConditionPredicate {
    /// The JSON `operator`.
    pub fn operator_name(&self) -> &'static str {
        match self {
            ConditionPredicate::Eq(_) => "EQ",
            ConditionPredicate::Neq(_) => "NEQ",
            ConditionPredicate::Gt(_) => "GT",
            ConditionPredicate::Gte(_) => "GTE",
            ConditionPredicate::Lt(_) => "LT",
            ConditionPredicate::Lte(_) => "LTE",
        }
    }

    /// The numeric operand of an ordering predicate.
    pub fn numeric_operand(&self) -> Option<f64> {
        match self {
            ConditionPredicate::Gt(v)
            | ConditionPredicate::Gte(v)
            | ConditionPredicate::Lt(v)
            | ConditionPredicate::Lte(v) => Some(*v),
            _ => None,
        }
    }

    /// Upstream `describe()`: `== "x"`, `!= "x"`, `> 0.9`, `>= 80`, `< 5`, `<= 5`.
    pub fn describe(&self) -> String {
        match self {
            ConditionPredicate::Eq(s) => format!("== \"{s}\""),
            ConditionPredicate::Neq(s) => format!("!= \"{s}\""),
            ConditionPredicate::Gt(v) => format!("> {}", canonical_number(*v)),
            ConditionPredicate::Gte(v) => format!(">= {}", canonical_number(*v)),
            ConditionPredicate::Lt(v) => format!("< {}", canonical_number(*v)),
            ConditionPredicate::Lte(v) => format!("<= {}", canonical_number(*v)),
        }
    }
}
