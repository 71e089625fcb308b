//! The typed workflow data (plain values, no I/O).
//!
//! One enum variant per node kind ([`Node`]) and per transition rule ([`TransitionRule`]); every
//! map is an [`IndexMap`] so declaration order is kept and serialization is deterministic.

use indexmap::IndexMap;

mod node;
mod saga;
mod timing;
mod transition;
mod wait;

pub use node::{
    Action, ActionNode, Branch, ConsensusConfig, Criterion, EndNode, ForkNode, GenericNode,
    JoinNode, MapNode, Node, ParallelNode, ReviewConfig, Rubric, StandardNode, SubWorkflowNode,
};
pub use saga::{COMPENSATING, COMPENSATING_OUTPUT, Compensation, CompensationBody, Saga};
pub use timing::{MAX_BACKOFF_MS, NodeTiming, Timing};
pub use transition::{ConditionPredicate, ScoreCondition, ScoreRange, TransitionRule};
pub use wait::{WaitFor, WaitNode};

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
    /// hensu extension: saga compensation (empty unless the workflow declares one).
    pub saga: Saga,
    /// hensu extension: node timeouts and retry backoff (empty unless a node sets one).
    pub timing: Timing,
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
        Wait = "WAIT",
        /// hensu extension (docs/language.md, *Map over a list*).
        Map = "MAP",
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
        /// hensu extension (docs/language.md, *Review*): a review's `onTimeout` arm.
        ReviewTimeout = "reviewTimeout",
    }
);

wire_enum!(
    /// What a map node does with an item whose body failed (docs/language.md, *Map over a
    /// list*): fail the node, leave the item out, or keep its place with the error.
    ItemFailure { Fail = "FAIL", Skip = "SKIP", Collect = "COLLECT" }
);
#[allow(clippy::derivable_impls)] // the enums are generated by `wire_enum!`
impl Default for ItemFailure {
    fn default() -> Self {
        ItemFailure::Fail
    }
}
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
