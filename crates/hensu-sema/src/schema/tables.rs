//! The statement tables of the graph and its node kinds: for each block, the statements it
//! accepts with their shape, value type and one-line doc (a table; [`super::block_schema`]
//! maps a [`BlockKind`] to its table; the blocks around the graph are in `workflow_tables.rs`).

use super::{
    BlockKind, ChainForms, EnumType, FAILURE_ANY, FAILURE_GOTO, GOTO_FB, GOTO_FB_REVISE, Repeat,
    StatementKind, StatementSpec, ValueType as V, arm, block, call, decl, prop, trans,
};

pub(super) const ON_SUCCESS: StatementSpec = trans(
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
pub(super) const ON_FAILURE_ANY: StatementSpec = trans(
    "onFailure",
    FAILURE_ANY,
    "onFailure goto \"node\" | onFailure retry N [backoff D] otherwise \"node\"",
    "On a failed result, go to the node, or re-run this node up to N times (waiting D, then twice as long each time, with `backoff`) and then escalate.",
);
const ON_SCORE: StatementSpec = block(
    "onScore",
    BlockKind::OnScore,
    Repeat::Many,
    "onScore { whenScore … goto \"node\" }",
    "Route on the engine `score` (0–100) produced by the agent.",
);
const COMPENSATION_REF: StatementSpec = prop(
    "compensation",
    V::String,
    false,
    "compensation = \"compensation-id\"",
    "The compensation that undoes this node's work when the run ends unsuccessfully (saga).",
);
pub(super) const NODE_TIMEOUT: StatementSpec = prop(
    "timeout",
    V::Duration,
    false,
    "timeout = 30.seconds",
    "Fail the node when one execution takes longer (a failure like any other: `onFailure`, retries); docs/language.md, *Timeouts and backoff*.",
);
const REVIEW_DOC: &str = "Human review of the node result: `review(ReviewMode.X)` or `review { mode = …; allowBacktrack = …; allowEdit = … }` (block default mode REQUIRED).";

pub(super) const GRAPH: &[StatementSpec] = &[
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
    decl(
        "wait",
        1,
        1,
        BlockKind::WaitNode,
        "wait(\"id\") { duration = 30.minutes; onSuccess goto \"next\" }",
        "Wait durably for a time or until an instant (docs/language.md, *Timers and signals*).",
    ),
    decl(
        "awaitSignal",
        1,
        1,
        BlockKind::SignalNode,
        "awaitSignal(\"id\") { timeout = 48.hours; writes(\"v\"); onSignal goto \"x\"; onTimeout goto \"y\" }",
        "Wait durably for a named signal sent to the run (docs/language.md, *Timers and signals*).",
    ),
    decl(
        "map",
        1,
        1,
        BlockKind::MapNode,
        "map(\"id\") { over = \"list\"; agent = …; prompt = \"… {item} …\" }",
        "Run an agent once per item of a list variable, gathering the answers in order.",
    ),
    decl(
        "routes",
        1,
        1,
        BlockKind::Routes,
        "routes(\"node\") { onSuccess goto \"x\" }",
        "In an extending workflow: replaces every transition of the inherited node.",
    ),
    decl(
        "compensation",
        1,
        1,
        BlockKind::Compensation,
        "compensation(\"id\") { agent = …; prompt = … } | { execute(…) }",
        "Undoes the work of the nodes naming it when the run ends unsuccessfully; not a node of the graph.",
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

pub(super) const STANDARD: &[StatementSpec] = &[
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
    NODE_TIMEOUT,
    COMPENSATION_REF,
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

pub(super) const REVIEW: &[StatementSpec] = &[
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
    prop(
        "deadline",
        V::Duration,
        false,
        "deadline = 48.hours",
        "How long the review may take: not decided by then, `onTimeout` routes it (without one it is rejected and `onRejection` routes it) — durably, the run waits without a process (docs/language.md, *Review*).",
    ),
    trans(
        "onTimeout",
        FAILURE_GOTO,
        "onTimeout goto \"node\"",
        "Where a review not decided by its `deadline` goes (instead of a rejection).",
    ),
];

pub(super) const PARALLEL: &[StatementSpec] = &[
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
    NODE_TIMEOUT,
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

pub(super) const BRANCH: &[StatementSpec] = &[
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
    call(
        "after",
        1,
        None,
        Repeat::Once,
        "after(\"a\", \"b\")",
        "Start this branch only when the named branches of the same node have finished; their yields and outputs are in its context, and a failed one fails it (docs/language.md, *Dependency DAGs*).",
    ),
    call(
        "runIf",
        1,
        Some(1),
        Repeat::Once,
        "runIf(\"flag\")",
        "Run this branch only when the Boolean state variable is true; otherwise it is SKIPPED, a success passed on to its dependents (docs/language.md, *Dependency DAGs*).",
    ),
];

pub(super) const CONSENSUS: &[StatementSpec] = &[
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

pub(super) const FORK: &[StatementSpec] = &[
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
    NODE_TIMEOUT,
    trans(
        "onComplete",
        GOTO_FB,
        "onComplete goto \"join\" [withFeedback]",
        "The join that merges the targets' results.",
    ),
];

pub(super) const JOIN: &[StatementSpec] = &[
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
        "timeout = 60.seconds",
        "Timeout of the whole fork: a duration, or upstream's Long of milliseconds (0 = none).",
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

pub(super) const GENERIC: &[StatementSpec] = &[
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
    NODE_TIMEOUT,
    COMPENSATION_REF,
    ON_SUCCESS,
    ON_FAILURE_ANY,
    ON_SCORE,
];

pub(super) const GENERIC_CONFIG: &[StatementSpec] = &[StatementSpec {
    name: "to",
    kind: StatementKind::Entry,
    repeat: Repeat::Many,
    syntax: "\"key\" to value",
    doc: "A configuration entry: a String, number, Boolean, `listOf(…)` or `mapOf(…)` value.",
}];

pub(super) const ACTION: &[StatementSpec] = &[
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
    call(
        "writes",
        0,
        None,
        Repeat::Once,
        "writes(\"a\", \"b\")",
        "State variables the actions' result provides (a command's stdout, an MCP tool's result, a webhook's response body).",
    ),
    NODE_TIMEOUT,
    COMPENSATION_REF,
    ON_SUCCESS,
    ON_FAILURE_ANY,
];

pub(super) const SUB_WORKFLOW: &[StatementSpec] = &[
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
    NODE_TIMEOUT,
    COMPENSATION_REF,
    ON_SUCCESS,
    ON_FAILURE_GOTO,
];

pub(super) const COMPENSATION: &[StatementSpec] = &[
    prop(
        "agent",
        V::String,
        false,
        "agent = \"agentId\"",
        "The agent that runs this compensation (with `prompt`; not with actions).",
    ),
    prop(
        "prompt",
        V::Prompt,
        false,
        "prompt = \"…\" | \"file.md\"",
        "The compensation prompt; `{compensating}` is the compensated node, `{compensating_output}` its output.",
    ),
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
];

const SCORE_ARM_FORMS: ChainForms = ChainForms {
    goto: true,
    feedback: true,
    revise: true,
    retry: false,
};

pub(super) const ON_SCORE_ARMS: &[StatementSpec] = &[
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

pub(super) const ON_CONDITION_ARMS: &[StatementSpec] = &[
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
