//! The declarative schema of the language: which statements each block accepts, their shape,
//! the value type of each property and a one-line doc. The lowering is driven by it (unknown
//! statement → E0101 with did-you-mean over [`block_schema`], statement of another block →
//! E0102) and the LSP completes and hovers from it. The types and lookups are here; the
//! per-block statement tables are in `schema/tables.rs`.

mod map_table;
mod routes;
mod tables;
mod wait_tables;
mod workflow_tables;

use tables::{
    ACTION, BRANCH, COMPENSATION, CONSENSUS, FORK, GENERIC, GENERIC_CONFIG, GRAPH, JOIN,
    ON_CONDITION_ARMS, ON_SCORE_ARMS, PARALLEL, REVIEW, STANDARD, SUB_WORKFLOW,
};
use wait_tables::{SIGNAL, WAIT};
use workflow_tables::{AGENT, AGENTS, CONFIG, OBSERVABILITY, STATE, WORKFLOW};

/// A kind of block (or statement context) of a `.hwf` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// `workflow("name") { … }`
    Workflow,
    /// `state { … }`
    State,
    /// `agents { … }`
    Agents,
    /// `agent("id") { … }`
    Agent,
    /// workflow-level `config { … }`
    Config,
    /// `observability { … }`
    Observability,
    /// `graph { … }`
    Graph,
    /// `node("id") { … }`
    StandardNode,
    /// `parallel("id") { … }`
    ParallelNode,
    /// `branch("id") { … }` of a parallel node
    Branch,
    /// `consensus { … }` of a parallel node
    Consensus,
    /// `review { … }` of a standard node
    Review,
    /// `fork("id") { … }`
    ForkNode,
    /// `join("id") { … }`
    JoinNode,
    /// `generic("id") { … }`
    GenericNode,
    /// `config { "key" to value … }` of a generic node
    GenericConfig,
    /// `action("id") { … }`
    ActionNode,
    /// `subWorkflow("id") { … }`
    SubWorkflowNode,
    /// `end("id")` — no body; listed so every node kind has an entry
    EndNode,
    /// `map("id") { … }` (docs/language.md, *Map over a list*)
    MapNode,
    /// `routes("node") { … }` of an extending workflow: the transitions that replace an
    /// inherited node's (docs/language.md, *Workflow extension*).
    Routes,
    /// `onScore { … }`
    OnScore,
    /// `onCondition("var") { … }`
    OnCondition,
    /// `compensation("id") { … }` in the graph (docs/language.md, *Saga compensation*)
    Compensation,
    /// `wait("id") { … }`, a durable timer (docs/language.md, *Timers and signals*)
    WaitNode,
    /// `awaitSignal("id") { … }`, a durable signal wait (docs/language.md, *Timers and signals*)
    SignalNode,
}

impl BlockKind {
    /// Every block kind but [`BlockKind::Routes`]: a `routes { }` block accepts only
    /// transitions, each already listed in the node blocks, so naming it in "valid in …" notes
    /// and did-you-mean searches would add nothing.
    pub const ALL: &'static [BlockKind] = &[
        BlockKind::Workflow,
        BlockKind::State,
        BlockKind::Agents,
        BlockKind::Agent,
        BlockKind::Config,
        BlockKind::Observability,
        BlockKind::Graph,
        BlockKind::StandardNode,
        BlockKind::ParallelNode,
        BlockKind::Branch,
        BlockKind::Consensus,
        BlockKind::Review,
        BlockKind::ForkNode,
        BlockKind::JoinNode,
        BlockKind::GenericNode,
        BlockKind::GenericConfig,
        BlockKind::ActionNode,
        BlockKind::SubWorkflowNode,
        BlockKind::EndNode,
        BlockKind::MapNode,
        BlockKind::OnScore,
        BlockKind::OnCondition,
        BlockKind::Compensation,
        BlockKind::WaitNode,
        BlockKind::SignalNode,
    ];

    /// How the block is named in messages (`a standard node`, `the graph block`, …).
    pub fn describe(self) -> &'static str {
        match self {
            BlockKind::Workflow => "the workflow body",
            BlockKind::State => "a `state { }` block",
            BlockKind::Agents => "an `agents { }` block",
            BlockKind::Agent => "an `agent { }` block",
            BlockKind::Config => "the workflow `config { }` block",
            BlockKind::Observability => "an `observability { }` block",
            BlockKind::Graph => "the `graph { }` block",
            BlockKind::StandardNode => "a standard node",
            BlockKind::ParallelNode => "a parallel node",
            BlockKind::Branch => "a `branch { }` block",
            BlockKind::Consensus => "a `consensus { }` block",
            BlockKind::Review => "a `review { }` block",
            BlockKind::ForkNode => "a fork node",
            BlockKind::JoinNode => "a join node",
            BlockKind::GenericNode => "a generic node",
            BlockKind::GenericConfig => "a generic node's `config { }` block",
            BlockKind::ActionNode => "an action node",
            BlockKind::SubWorkflowNode => "a subWorkflow node",
            BlockKind::EndNode => "an end node",
            BlockKind::MapNode => "a map node",
            BlockKind::Routes => "a `routes { }` block",
            BlockKind::OnScore => "an `onScore { }` block",
            BlockKind::OnCondition => "an `onCondition { }` block",
            BlockKind::Compensation => "a `compensation { }` block",
            BlockKind::WaitNode => "a wait node",
            BlockKind::SignalNode => "an awaitSignal node",
        }
    }

    /// Whether this is the body of a graph node.
    pub fn is_node(self) -> bool {
        matches!(
            self,
            BlockKind::StandardNode
                | BlockKind::ParallelNode
                | BlockKind::ForkNode
                | BlockKind::JoinNode
                | BlockKind::GenericNode
                | BlockKind::ActionNode
                | BlockKind::SubWorkflowNode
                | BlockKind::EndNode
                | BlockKind::WaitNode
                | BlockKind::SignalNode
                | BlockKind::MapNode
        )
    }
}

/// Enumerations that have DSL constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnumType {
    VarType,
    ReviewMode,
    ConsensusStrategy,
    MergeStrategy,
    ExitStatus,
    LogLevel,
    ItemFailure,
}

impl EnumType {
    /// The qualifier written before the constant (`VarType` in `VarType.STRING`).
    pub fn name(self) -> &'static str {
        match self {
            EnumType::VarType => "VarType",
            EnumType::ReviewMode => "ReviewMode",
            EnumType::ConsensusStrategy => "ConsensusStrategy",
            EnumType::MergeStrategy => "MergeStrategy",
            EnumType::ExitStatus => "ExitStatus",
            EnumType::LogLevel => "LogLevel",
            EnumType::ItemFailure => "ItemFailure",
        }
    }

    /// Every constant, in upstream order.
    pub fn constants(self) -> Vec<&'static str> {
        use hensu_ir as ir;
        match self {
            EnumType::VarType => ir::VarType::ALL.iter().map(|v| v.as_str()).collect(),
            EnumType::ReviewMode => ir::ReviewMode::ALL.iter().map(|v| v.as_str()).collect(),
            EnumType::ConsensusStrategy => ir::ConsensusStrategy::ALL
                .iter()
                .map(|v| v.as_str())
                .collect(),
            EnumType::MergeStrategy => ir::MergeStrategy::ALL.iter().map(|v| v.as_str()).collect(),
            EnumType::ExitStatus => ir::ExitStatus::ALL.iter().map(|v| v.as_str()).collect(),
            EnumType::LogLevel => ir::LogLevel::ALL.iter().map(|v| v.as_str()).collect(),
            EnumType::ItemFailure => ir::ItemFailure::ALL.iter().map(|v| v.as_str()).collect(),
        }
    }

    /// Every enum type.
    pub const ALL: &'static [EnumType] = &[
        EnumType::VarType,
        EnumType::ReviewMode,
        EnumType::ConsensusStrategy,
        EnumType::MergeStrategy,
        EnumType::ExitStatus,
        EnumType::LogLevel,
        EnumType::ItemFailure,
    ];
}

/// The `Models.*` constants and their model id strings, as the Kotlin DSL defines them
/// (docs/language.md, *Models*).
pub const MODELS: &[(&str, &str)] = &[
    ("CLAUDE_OPUS_4_6", "claude-opus-4-6"),
    ("CLAUDE_OPUS_4_5", "claude-opus-4-5"),
    ("CLAUDE_SONNET_4_6", "claude-sonnet-4-6"),
    ("CLAUDE_SONNET_4_5", "claude-sonnet-4-5"),
    ("CLAUDE_HAIKU_4_5", "claude-haiku-4-5"),
    ("GPT_4", "gpt-4"),
    ("GPT_4_TURBO", "gpt-4-turbo"),
    ("GPT_4O", "gpt-4o"),
    ("GEMINI_3_1_FLASH_LITE", "gemini-3.1-flash-lite"),
    ("GEMINI_3_1_PRO", "gemini-3.1-pro-preview"),
    ("GEMINI_2_5_FLASH", "gemini-2.5-flash"),
    ("GEMINI_2_5_PRO", "gemini-2.5-pro"),
    ("DEEPSEEK_V4_FLASH", "deepseek-v4-flash"),
    ("DEEPSEEK_V4_PRO", "deepseek-v4-pro"),
];

/// The model id of a `Models.*` constant name.
pub fn model_id(constant: &str) -> Option<&'static str> {
    MODELS
        .iter()
        .find(|(c, _)| *c == constant)
        .map(|(_, id)| *id)
}

/// The type of a property value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    String,
    /// Kotlin `Int`.
    Int,
    /// Kotlin `Long` (an Int literal is accepted).
    Long,
    /// Kotlin `Double` (an Int or Long literal is accepted).
    Double,
    /// A Kotlin duration: `30.seconds`, `500.milliseconds`, `2.minutes`, `1.hours`.
    Duration,
    Boolean,
    /// `listOf("a", "b")`.
    StringList,
    /// A constant of an enum (`VarType.STRING` or bare `STRING`).
    Enum(EnumType),
    /// A model: any string, or a `Models.*` constant.
    Model,
    /// A prompt: text, or a `*.md` file name read from `prompts/`.
    Prompt,
    /// A rubric: markdown, or a `*.md` file name read from `rubrics/`.
    Rubric,
}

impl ValueType {
    /// The type as named in messages.
    pub fn describe(self) -> &'static str {
        match self {
            ValueType::String | ValueType::Prompt | ValueType::Rubric => "String",
            ValueType::Int => "Int",
            ValueType::Long => "Long",
            ValueType::Double => "Double",
            ValueType::Duration => "Duration (`30.seconds`)",
            ValueType::Boolean => "Boolean",
            ValueType::StringList => "List<String> (`listOf(\"a\", …)`)",
            ValueType::Enum(e) => e.name(),
            ValueType::Model => "String or `Models.*`",
        }
    }
}

/// Which continuations a transition chain accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChainForms {
    /// `goto "x"`
    pub goto: bool,
    /// `withFeedback` after the goto target
    pub feedback: bool,
    /// `revise "p" retry N otherwise "x"`
    pub revise: bool,
    /// `retry N otherwise "x"` (self-retry, failure only)
    pub retry: bool,
}

const GOTO_FB: ChainForms = ChainForms {
    goto: true,
    feedback: true,
    revise: false,
    retry: false,
};
const GOTO_FB_REVISE: ChainForms = ChainForms {
    goto: true,
    feedback: true,
    revise: true,
    retry: false,
};
const FAILURE_GOTO: ChainForms = ChainForms {
    goto: true,
    feedback: false,
    revise: false,
    retry: false,
};
const FAILURE_ANY: ChainForms = ChainForms {
    goto: true,
    feedback: false,
    revise: false,
    retry: true,
};

/// How many times a statement may appear in one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Repeat {
    /// At most once; a second one is E0104 (upstream silently keeps the last).
    Once,
    /// Any number of times (declarations, transitions, accumulating lists).
    Many,
}

/// The shape of a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatementKind {
    /// `name = value`
    Property { ty: ValueType, nullable: bool },
    /// `name(args)`: `min..=max` positional arguments (`max == None`: variadic).
    Call { min: usize, max: Option<usize> },
    /// `name { … }`
    Block(BlockKind),
    /// `name(args) { … }` — a declaration with arguments and a body (`node("id") { }`).
    CallBlock {
        min: usize,
        max: usize,
        block: BlockKind,
    },
    /// `name(args)` or `name { … }` (`review(ReviewMode.X)` / `review { … }`).
    CallOrBlock {
        min: usize,
        max: usize,
        block: BlockKind,
    },
    /// An infix transition chain started by this word (`onSuccess goto "x"`).
    Transition(ChainForms),
    /// `start at "node"`.
    StartAt,
    /// An arm of `onScore { }` / `onCondition { }` (`whenScore …`, `whenValue …`, `otherwise …`).
    Arm(ChainForms),
    /// `"key" to value` entries (generic node config). The spec name is `to`.
    Entry,
}

/// One statement a block accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StatementSpec {
    pub name: &'static str,
    pub kind: StatementKind,
    pub repeat: Repeat,
    /// The syntax, as shown in completion details.
    pub syntax: &'static str,
    /// One line of documentation.
    pub doc: &'static str,
}

const fn prop(
    name: &'static str,
    ty: ValueType,
    nullable: bool,
    syntax: &'static str,
    doc: &'static str,
) -> StatementSpec {
    StatementSpec {
        name,
        kind: StatementKind::Property { ty, nullable },
        repeat: Repeat::Once,
        syntax,
        doc,
    }
}

const fn call(
    name: &'static str,
    min: usize,
    max: Option<usize>,
    repeat: Repeat,
    syntax: &'static str,
    doc: &'static str,
) -> StatementSpec {
    StatementSpec {
        name,
        kind: StatementKind::Call { min, max },
        repeat,
        syntax,
        doc,
    }
}

const fn block(
    name: &'static str,
    kind: BlockKind,
    repeat: Repeat,
    syntax: &'static str,
    doc: &'static str,
) -> StatementSpec {
    StatementSpec {
        name,
        kind: StatementKind::Block(kind),
        repeat,
        syntax,
        doc,
    }
}

const fn decl(
    name: &'static str,
    min: usize,
    max: usize,
    kind: BlockKind,
    syntax: &'static str,
    doc: &'static str,
) -> StatementSpec {
    StatementSpec {
        name,
        kind: StatementKind::CallBlock {
            min,
            max,
            block: kind,
        },
        repeat: Repeat::Many,
        syntax,
        doc,
    }
}

const fn trans(
    name: &'static str,
    forms: ChainForms,
    syntax: &'static str,
    doc: &'static str,
) -> StatementSpec {
    StatementSpec {
        name,
        kind: StatementKind::Transition(forms),
        repeat: Repeat::Many,
        syntax,
        doc,
    }
}

const fn arm(
    name: &'static str,
    forms: ChainForms,
    syntax: &'static str,
    doc: &'static str,
) -> StatementSpec {
    StatementSpec {
        name,
        kind: StatementKind::Arm(forms),
        repeat: Repeat::Many,
        syntax,
        doc,
    }
}

/// The statements `kind` accepts, in documentation order.
pub fn block_schema(kind: BlockKind) -> &'static [StatementSpec] {
    match kind {
        BlockKind::Workflow => WORKFLOW,
        BlockKind::State => STATE,
        BlockKind::Agents => AGENTS,
        BlockKind::Agent => AGENT,
        BlockKind::Config => CONFIG,
        BlockKind::Observability => OBSERVABILITY,
        BlockKind::Graph => GRAPH,
        BlockKind::StandardNode => STANDARD,
        BlockKind::ParallelNode => PARALLEL,
        BlockKind::Branch => BRANCH,
        BlockKind::Consensus => CONSENSUS,
        BlockKind::Review => REVIEW,
        BlockKind::ForkNode => FORK,
        BlockKind::JoinNode => JOIN,
        BlockKind::GenericNode => GENERIC,
        BlockKind::GenericConfig => GENERIC_CONFIG,
        BlockKind::ActionNode => ACTION,
        BlockKind::SubWorkflowNode => SUB_WORKFLOW,
        BlockKind::EndNode => &[],
        BlockKind::MapNode => map_table::MAP,
        BlockKind::Routes => routes::ROUTES,
        BlockKind::OnScore => ON_SCORE_ARMS,
        BlockKind::OnCondition => ON_CONDITION_ARMS,
        BlockKind::Compensation => COMPENSATION,
        BlockKind::WaitNode => WAIT,
        BlockKind::SignalNode => SIGNAL,
    }
}

/// The spec of `name` in `kind`, if it is accepted there.
pub fn lookup(kind: BlockKind, name: &str) -> Option<&'static StatementSpec> {
    // Every statement of a file is looked up here: the first byte rules out most names
    // without a call to compare the strings (docs/performance.md, *Round 3, fourth sitting*).
    let first = name.as_bytes().first();
    block_schema(kind)
        .iter()
        .find(|s| s.name.as_bytes().first() == first && s.name == name)
}

/// Every block (other than `kind`) that accepts `name`.
pub fn blocks_accepting(name: &str) -> Vec<BlockKind> {
    BlockKind::ALL
        .iter()
        .copied()
        .filter(|k| lookup(*k, name).is_some())
        .collect()
}

/// Names of removed upstream constructs (E0015) and the replacement to suggest.
pub const REMOVED: &[(&str, &str)] = &[
    (
        "planning",
        "planning is an agent role now: give a regular node a planning prompt, and iterate with a bounded `revise \"node\" retry N otherwise \"x\"` transition",
    ),
    (
        "plan",
        "a static plan is a sequence of nodes: write each step as a node of the graph, with `onCondition(\"var\") { … }` for decisions",
    ),
    (
        "loop",
        "iterate with a bounded transition (`onScore { whenScore lessThan 80.0 revise \"node\" retry 3 otherwise \"x\" }`) or route with `onCondition(\"var\") { … }`",
    ),
];

/// The score operators of `whenScore`.
pub const SCORE_OPERATORS: &[&str] = &[
    "greaterThan",
    "greaterThanOrEqual",
    "lessThan",
    "lessThanOrEqual",
    "in",
];

/// The operators of `whenValue`.
pub const CONDITION_OPERATORS: &[&str] = &[
    "equalTo",
    "notEqualTo",
    "greaterThan",
    "greaterThanOrEqual",
    "lessThan",
    "lessThanOrEqual",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The lowering looks for a removed construct only among names no schema accepts.
    #[test]
    fn removed_names_are_in_no_block() {
        for (name, _) in REMOVED {
            assert!(blocks_accepting(name).is_empty(), "{name}");
        }
    }

    #[test]
    fn names_are_unique_per_block() {
        for kind in BlockKind::ALL {
            let specs = block_schema(*kind);
            for (i, s) in specs.iter().enumerate() {
                assert!(
                    specs[..i].iter().all(|o| o.name != s.name),
                    "{kind:?}: {}",
                    s.name
                );
            }
        }
    }

    #[test]
    fn models_resolve() {
        assert_eq!(model_id("GEMINI_3_1_PRO"), Some("gemini-3.1-pro-preview"));
        assert_eq!(model_id("NOPE"), None);
        assert_eq!(
            EnumType::VarType.constants(),
            vec!["STRING", "NUMBER", "BOOLEAN", "LIST_STRING"]
        );
    }
}
