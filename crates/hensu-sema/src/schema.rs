//! The declarative schema of the language: which statements each block accepts, their shape,
//! the value type of each property and a one-line doc. The lowering is driven by it (unknown
//! statement → E0101 with did-you-mean over [`block_schema`], statement of another block →
//! E0102) and the LSP completes and hovers from it.

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
    /// `onScore { … }`
    OnScore,
    /// `onCondition("var") { … }`
    OnCondition,
}

impl BlockKind {
    /// Every block kind.
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
        BlockKind::OnScore,
        BlockKind::OnCondition,
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
            BlockKind::OnScore => "an `onScore { }` block",
            BlockKind::OnCondition => "an `onCondition { }` block",
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

use ValueType as V;

const ON_SUCCESS: StatementSpec = trans(
    "onSuccess",
    GOTO_FB,
    "onSuccess goto \"node\" [withFeedback]",
    "On a successful result, go to the node.",
);
const ON_FAILURE_GOTO: StatementSpec = trans(
    "onFailure",
    FAILURE_GOTO,
    "onFailure goto \"node\"",
    "On a failed result, go to the node.",
);
const ON_FAILURE_ANY: StatementSpec = trans(
    "onFailure",
    FAILURE_ANY,
    "onFailure goto \"node\" | onFailure retry N otherwise \"node\"",
    "On a failed result, go to the node, or re-run this node up to N times and then escalate.",
);
const ON_SCORE: StatementSpec = block(
    "onScore",
    BlockKind::OnScore,
    Repeat::Many,
    "onScore { whenScore … goto \"node\" }",
    "Route on the engine `score` (0–100) produced by the agent.",
);
const REVIEW_DOC: &str = "Human review of the node result: `review(ReviewMode.X)` or `review { mode = …; allowBacktrack = …; allowEdit = … }` (block default mode REQUIRED).";

const WORKFLOW: &[StatementSpec] = &[
    prop(
        "description",
        V::String,
        true,
        "description = \"…\"",
        "Workflow description (metadata.description).",
    ),
    prop(
        "version",
        V::String,
        false,
        "version = \"1.0.0\"",
        "Workflow version (default \"1.0.0\").",
    ),
    block(
        "state",
        BlockKind::State,
        Repeat::Once,
        "state { input(…); variable(…) }",
        "The state schema: inputs and variables the workflow reads and writes.",
    ),
    block(
        "agents",
        BlockKind::Agents,
        Repeat::Many,
        "agents { agent(\"id\") { … } }",
        "Agent definitions; may be repeated, agents accumulate.",
    ),
    block(
        "config",
        BlockKind::Config,
        Repeat::Once,
        "config { maxSteps = 1000; … }",
        "Run limits and observability settings.",
    ),
    block(
        "graph",
        BlockKind::Graph,
        Repeat::Once,
        "graph { start at \"node\"; node(\"id\") { … } }",
        "The workflow graph (required).",
    ),
];

const STATE: &[StatementSpec] = &[
    call(
        "input",
        2,
        Some(2),
        Repeat::Many,
        "input(\"name\", VarType.STRING)",
        "Declare a required input variable.",
    ),
    call(
        "variable",
        2,
        Some(3),
        Repeat::Many,
        "variable(\"name\", VarType.STRING[, \"description\"])",
        "Declare a state variable; the description guides the agent that writes it.",
    ),
];

const AGENTS: &[StatementSpec] = &[decl(
    "agent",
    1,
    1,
    BlockKind::Agent,
    "agent(\"id\") { role = …; model = … }",
    "Define an agent.",
)];

const AGENT: &[StatementSpec] = &[
    prop(
        "role",
        V::String,
        false,
        "role = \"…\"",
        "The agent's role (system prompt); required.",
    ),
    prop(
        "model",
        V::Model,
        false,
        "model = Models.GPT_4O | \"model-id\"",
        "The model id; required.",
    ),
    prop(
        "temperature",
        V::Double,
        false,
        "temperature = 0.7",
        "Sampling temperature in [0, 2] (default 0.7).",
    ),
    prop(
        "maxTokens",
        V::Int,
        true,
        "maxTokens = 1024",
        "Maximum output tokens.",
    ),
    prop(
        "tools",
        V::StringList,
        false,
        "tools = listOf(\"tool\")",
        "Tool ids the agent may call.",
    ),
    prop(
        "maintainContext",
        V::Boolean,
        false,
        "maintainContext = false",
        "Keep the conversation across executions.",
    ),
    prop(
        "instructions",
        V::String,
        true,
        "instructions = \"…\"",
        "Extra instructions appended to the role.",
    ),
    prop(
        "topP",
        V::Double,
        true,
        "topP = 0.9",
        "Nucleus sampling in [0, 1].",
    ),
    prop(
        "frequencyPenalty",
        V::Double,
        true,
        "frequencyPenalty = 0.0",
        "Frequency penalty.",
    ),
    prop(
        "presencePenalty",
        V::Double,
        true,
        "presencePenalty = 0.0",
        "Presence penalty.",
    ),
    prop(
        "timeout",
        V::Long,
        true,
        "timeout = 60",
        "Request timeout in seconds.",
    ),
    prop(
        "maxToolCalls",
        V::Int,
        true,
        "maxToolCalls = 10",
        "Maximum tool calls per execution (engine default 10).",
    ),
];

const CONFIG: &[StatementSpec] = &[
    prop(
        "maxSteps",
        V::Int,
        false,
        "maxSteps = 1000",
        "Maximum node steps of one run (default 1000); guards against runaway loops.",
    ),
    prop(
        "maxExecutionTime",
        V::Long,
        false,
        "maxExecutionTime = 7_200_000",
        "Maximum run time in milliseconds (default 2 h).",
    ),
    prop(
        "checkpoints",
        V::Boolean,
        false,
        "checkpoints = true",
        "Save a checkpoint before every node.",
    ),
    block(
        "observability",
        BlockKind::Observability,
        Repeat::Once,
        "observability { logLevel = LogLevel.INFO; exportMetrics = true }",
        "Logging and metrics.",
    ),
];

const OBSERVABILITY: &[StatementSpec] = &[
    prop(
        "logLevel",
        V::Enum(EnumType::LogLevel),
        false,
        "logLevel = LogLevel.INFO",
        "Log level (TRACE, DEBUG, INFO, WARN, ERROR).",
    ),
    prop(
        "exportMetrics",
        V::Boolean,
        false,
        "exportMetrics = true",
        "Export run metrics (default true).",
    ),
];

const GRAPH: &[StatementSpec] = &[
    StatementSpec {
        name: "start",
        kind: StatementKind::StartAt,
        repeat: Repeat::Once,
        syntax: "start at \"node\"",
        doc: "The entry node (required).",
    },
    decl(
        "node",
        1,
        1,
        BlockKind::StandardNode,
        "node(\"id\") { agent = …; prompt = … }",
        "A standard node: one agent call.",
    ),
    decl(
        "parallel",
        1,
        1,
        BlockKind::ParallelNode,
        "parallel(\"id\") { branch(\"b\") { … } }",
        "Run branches concurrently, optionally deciding by consensus.",
    ),
    decl(
        "fork",
        1,
        1,
        BlockKind::ForkNode,
        "fork(\"id\") { targets(…); onComplete goto \"join\" }",
        "Run target sub-flows concurrently up to a join.",
    ),
    decl(
        "join",
        1,
        1,
        BlockKind::JoinNode,
        "join(\"id\") { await(\"fork\"); writes(\"v\") }",
        "Merge the results of a fork.",
    ),
    decl(
        "generic",
        1,
        1,
        BlockKind::GenericNode,
        "generic(\"id\") { executorType = \"…\" }",
        "Run a registered handler instead of an agent.",
    ),
    decl(
        "action",
        1,
        1,
        BlockKind::ActionNode,
        "action(\"id\") { send(…); execute(…) }",
        "Send messages or execute commands.",
    ),
    decl(
        "subWorkflow",
        1,
        1,
        BlockKind::SubWorkflowNode,
        "subWorkflow(\"id\") { target = \"workflow-id\" }",
        "Run another workflow as a node.",
    ),
    call(
        "end",
        1,
        Some(2),
        Repeat::Many,
        "end(\"id\"[, ExitStatus.FAILURE])",
        "An end node (default ExitStatus.SUCCESS).",
    ),
];

const STANDARD: &[StatementSpec] = &[
    prop(
        "agent",
        V::String,
        true,
        "agent = \"agentId\"",
        "The agent that executes this node.",
    ),
    prop(
        "prompt",
        V::Prompt,
        true,
        "prompt = \"…\" | \"file.md\"",
        "The prompt; `{name}` placeholders are filled from the state; a `.md` value is read from prompts/.",
    ),
    prop(
        "rubric",
        V::Rubric,
        true,
        "rubric = \"file.md\"",
        "A rubric the result is scored against; a `.md` value is read from rubrics/.",
    ),
    call(
        "writes",
        0,
        None,
        Repeat::Once,
        "writes(\"a\", \"b\")",
        "State variables the agent's JSON output writes.",
    ),
    StatementSpec {
        name: "review",
        kind: StatementKind::CallOrBlock {
            min: 1,
            max: 1,
            block: BlockKind::Review,
        },
        repeat: Repeat::Once,
        syntax: "review(ReviewMode.REQUIRED) | review { … }",
        doc: REVIEW_DOC,
    },
    ON_SUCCESS,
    ON_FAILURE_ANY,
    trans(
        "onApproval",
        GOTO_FB,
        "onApproval goto \"node\" [withFeedback]",
        "When the review (or the `approved` variable) approves, go to the node.",
    ),
    trans(
        "onRejection",
        GOTO_FB_REVISE,
        "onRejection goto \"node\" | onRejection revise \"node\" retry N otherwise \"node\"",
        "When the review rejects: go to a node, or send the flow back for revision up to N times.",
    ),
    ON_SCORE,
    StatementSpec {
        name: "onCondition",
        kind: StatementKind::CallBlock {
            min: 1,
            max: 1,
            block: BlockKind::OnCondition,
        },
        repeat: Repeat::Many,
        syntax: "onCondition(\"var\") { whenValue equalTo \"x\" goto \"node\" }",
        doc: "Route on a state variable this node writes.",
    },
];

const REVIEW: &[StatementSpec] = &[
    prop(
        "mode",
        V::Enum(EnumType::ReviewMode),
        false,
        "mode = ReviewMode.REQUIRED",
        "REQUIRED (always ask), OPTIONAL (ask on failure) or DISABLED.",
    ),
    prop(
        "allowBacktrack",
        V::Boolean,
        false,
        "allowBacktrack = true",
        "Let the reviewer send the flow back to an earlier node.",
    ),
    prop(
        "allowEdit",
        V::Boolean,
        false,
        "allowEdit = true",
        "Let the reviewer edit the result.",
    ),
];

const PARALLEL: &[StatementSpec] = &[
    decl(
        "branch",
        1,
        1,
        BlockKind::Branch,
        "branch(\"id\") { agent = …; prompt = … }",
        "A branch run concurrently with the others.",
    ),
    block(
        "consensus",
        BlockKind::Consensus,
        Repeat::Once,
        "consensus { strategy = ConsensusStrategy.MAJORITY_VOTE }",
        "Decide the node result by a vote of the branches.",
    ),
    trans(
        "onConsensus",
        GOTO_FB,
        "onConsensus goto \"node\" [withFeedback]",
        "When consensus is reached (or all branches succeed), go to the node.",
    ),
    ON_SUCCESS,
    trans(
        "onNoConsensus",
        GOTO_FB_REVISE,
        "onNoConsensus goto \"node\" | onNoConsensus revise \"node\" retry N otherwise \"node\"",
        "When consensus is not reached: go to a node, or revise up to N times.",
    ),
    ON_FAILURE_GOTO,
];

const BRANCH: &[StatementSpec] = &[
    prop(
        "agent",
        V::String,
        false,
        "agent = \"agentId\"",
        "The agent of this branch (required).",
    ),
    prop(
        "prompt",
        V::Prompt,
        true,
        "prompt = \"…\" | \"file.md\"",
        "The branch prompt; a `.md` value is read from prompts/.",
    ),
    prop(
        "rubric",
        V::Rubric,
        true,
        "rubric = \"file.md\"",
        "A rubric for this branch (recorded, not used for voting).",
    ),
    prop(
        "weight",
        V::Double,
        false,
        "weight = 1.0",
        "The branch weight for WEIGHTED_VOTE (default 1.0, > 0).",
    ),
    call(
        "yields",
        0,
        None,
        Repeat::Many,
        "yields(\"a\", \"b\")",
        "State variables this branch contributes.",
    ),
];

const CONSENSUS: &[StatementSpec] = &[
    prop(
        "strategy",
        V::Enum(EnumType::ConsensusStrategy),
        false,
        "strategy = ConsensusStrategy.MAJORITY_VOTE",
        "MAJORITY_VOTE, UNANIMOUS, WEIGHTED_VOTE or JUDGE_DECIDES.",
    ),
    prop(
        "judge",
        V::String,
        true,
        "judge = \"agentId\"",
        "The judge agent (required by JUDGE_DECIDES).",
    ),
    prop(
        "threshold",
        V::Double,
        true,
        "threshold = 0.5",
        "The consensus threshold in (0, 1].",
    ),
];

const FORK: &[StatementSpec] = &[
    call(
        "targets",
        0,
        None,
        Repeat::Many,
        "targets(\"a\", \"b\")",
        "The nodes started concurrently.",
    ),
    prop(
        "waitAll",
        V::Boolean,
        false,
        "waitAll = true",
        "Wait for every target (recorded; the fork always waits).",
    ),
    trans(
        "onComplete",
        GOTO_FB,
        "onComplete goto \"join\" [withFeedback]",
        "The join that merges the targets' results.",
    ),
];

const JOIN: &[StatementSpec] = &[
    call(
        "await",
        0,
        None,
        Repeat::Many,
        "await(\"fork\")",
        "The fork(s) this join waits for.",
    ),
    prop(
        "mergeStrategy",
        V::Enum(EnumType::MergeStrategy),
        false,
        "mergeStrategy = MergeStrategy.COLLECT_ALL",
        "How the branch results are merged.",
    ),
    call(
        "writes",
        0,
        None,
        Repeat::Many,
        "writes(\"merged\")",
        "The variable(s) receiving the merged result.",
    ),
    call(
        "exports",
        0,
        None,
        Repeat::Many,
        "exports(\"a\")",
        "Branch keys to merge (default: every changed key).",
    ),
    prop(
        "timeout",
        V::Long,
        false,
        "timeout = 60000",
        "Timeout of the whole fork in milliseconds (0 = none).",
    ),
    prop(
        "failOnError",
        V::Boolean,
        false,
        "failOnError = true",
        "Fail the join when any branch failed (default true).",
    ),
    ON_SUCCESS,
    ON_FAILURE_ANY,
];

const GENERIC: &[StatementSpec] = &[
    prop(
        "executorType",
        V::String,
        false,
        "executorType = \"validator\"",
        "The registered handler to run (required).",
    ),
    block(
        "config",
        BlockKind::GenericConfig,
        Repeat::Many,
        "config { \"key\" to value }",
        "Handler configuration entries.",
    ),
    prop(
        "rubric",
        V::Rubric,
        true,
        "rubric = \"file.md\"",
        "A rubric; a `.md` value is read from rubrics/.",
    ),
    ON_SUCCESS,
    ON_FAILURE_ANY,
    ON_SCORE,
];

const GENERIC_CONFIG: &[StatementSpec] = &[StatementSpec {
    name: "to",
    kind: StatementKind::Entry,
    repeat: Repeat::Many,
    syntax: "\"key\" to value",
    doc: "A configuration entry: a String, number, Boolean, `listOf(…)` or `mapOf(…)` value.",
}];

const ACTION: &[StatementSpec] = &[
    call(
        "send",
        1,
        Some(2),
        Repeat::Many,
        "send(\"handler\"[, mapOf(\"k\" to v)])",
        "Send a payload to a registered handler; string values may use `{name}` placeholders.",
    ),
    call(
        "execute",
        1,
        Some(1),
        Repeat::Many,
        "execute(\"commandId\")",
        "Execute a command from commands.yaml.",
    ),
    ON_SUCCESS,
    ON_FAILURE_ANY,
];

const SUB_WORKFLOW: &[StatementSpec] = &[
    prop(
        "target",
        V::String,
        false,
        "target = \"workflow-id\"",
        "The id of the child workflow (required).",
    ),
    prop(
        "targetVersion",
        V::String,
        true,
        "targetVersion = \"1.0.0\"",
        "The expected version of the child workflow.",
    ),
    call(
        "imports",
        0,
        None,
        Repeat::Once,
        "imports(\"a\")",
        "Variables copied from this workflow into the child.",
    ),
    call(
        "writes",
        0,
        None,
        Repeat::Once,
        "writes(\"b\")",
        "Variables copied back from the child.",
    ),
    ON_SUCCESS,
    ON_FAILURE_GOTO,
];

const SCORE_ARM_FORMS: ChainForms = ChainForms {
    goto: true,
    feedback: true,
    revise: true,
    retry: false,
};

const ON_SCORE_ARMS: &[StatementSpec] = &[
    arm(
        "whenScore",
        SCORE_ARM_FORMS,
        "whenScore greaterThan 80.0 goto \"node\"",
        "A score arm: greaterThan, greaterThanOrEqual, lessThan, lessThanOrEqual or `in` a..b.",
    ),
    arm(
        "otherwise",
        SCORE_ARM_FORMS,
        "otherwise goto \"node\"",
        "The else-arm: taken when no arm matched (must be last).",
    ),
];

const ON_CONDITION_ARMS: &[StatementSpec] = &[
    arm(
        "whenValue",
        SCORE_ARM_FORMS,
        "whenValue equalTo \"x\" goto \"node\"",
        "A condition arm: equalTo, notEqualTo, greaterThan, greaterThanOrEqual, lessThan, lessThanOrEqual.",
    ),
    arm(
        "otherwise",
        SCORE_ARM_FORMS,
        "otherwise goto \"node\"",
        "The else-arm: taken when no arm matched (must be last).",
    ),
];

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
        BlockKind::OnScore => ON_SCORE_ARMS,
        BlockKind::OnCondition => ON_CONDITION_ARMS,
    }
}

/// The spec of `name` in `kind`, if it is accepted there.
pub fn lookup(kind: BlockKind, name: &str) -> Option<&'static StatementSpec> {
    block_schema(kind).iter().find(|s| s.name == name)
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
