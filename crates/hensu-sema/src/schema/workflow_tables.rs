//! The statement tables of the blocks around the graph: the workflow's top level, `state`,
//! `agents` and an `agent`, `config` and `observability` (the graph's node kinds are in
//! `tables.rs`).

use super::{BlockKind, EnumType, Repeat, StatementSpec, ValueType as V, block, call, decl, prop};

pub(super) const WORKFLOW: &[StatementSpec] = &[
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
    call(
        "extends",
        1,
        Some(1),
        Repeat::Once,
        "extends(\"base-workflow-id\")",
        "Derive this workflow from another workflow of the project: its state, agents and nodes are inherited (docs/language.md, *Workflow extension*).",
    ),
    block(
        "graph",
        BlockKind::Graph,
        Repeat::Once,
        "graph { start at \"node\"; node(\"id\") { … } }",
        "The workflow graph (required).",
    ),
];

pub(super) const STATE: &[StatementSpec] = &[
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

pub(super) const AGENTS: &[StatementSpec] = &[decl(
    "agent",
    1,
    1,
    BlockKind::Agent,
    "agent(\"id\") { role = …; model = … }",
    "Define an agent.",
)];

pub(super) const AGENT: &[StatementSpec] = &[
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

pub(super) const CONFIG: &[StatementSpec] = &[
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

pub(super) const OBSERVABILITY: &[StatementSpec] = &[
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
