//! Serialization views of the model in wire shape: field names, field order, which fields are
//! omitted and which are written as `null`. Upstream writes its bean-serialized objects
//! (workflow, agent, metadata, config, schema entries, branches, consensus/review configs) with
//! every field, `null` included, and node and rule payloads with its custom serializers, which
//! omit empty optional fields; each struct below follows the one it mirrors.

use indexmap::IndexMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::FORMAT_VERSION;
use crate::model::*;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_empty<T>(v: &[T]) -> bool {
    v.is_empty()
}

fn is_empty_map<V>(m: &&IndexMap<String, V>) -> bool {
    m.is_empty()
}

/// Upstream omits an empty `agentId` / `prompt` / `targetVersion` like an absent one.
fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

fn rubric_text(r: &Option<Rubric>) -> Option<&str> {
    r.as_ref().map(|r| r.raw_content.as_str())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WorkflowDto<'a> {
    format_version: i64,
    id: &'a str,
    version: &'a str,
    #[serde(serialize_with = "agents")]
    agents: &'a IndexMap<String, AgentConfig>,
    nodes: NodesDto<'a>,
    start_node: &'a str,
    config: Option<ConfigDto>,
    metadata: MetadataDto<'a>,
    state_schema: Option<StateSchemaDto<'a>>,
    /// hensu extension (docs/language.md, *Saga compensation*): absent when there is none, so
    /// a workflow without compensation is exactly upstream's shape.
    #[serde(skip_serializing_if = "is_empty_map", serialize_with = "compensations")]
    compensations: &'a IndexMap<String, Compensation>,
}

/// The node map; a node naming a compensation carries it as `compensation` (hensu extension).
struct NodesDto<'a> {
    nodes: &'a IndexMap<String, Node>,
    saga: &'a Saga,
    timing: &'a Timing,
}

impl Serialize for NodesDto<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.nodes.iter().map(|(k, n)| {
            let mut dto = NodeDto::from(n);
            dto.compensation = self.saga.node_compensations.get(k).map(String::as_str);
            let t = self.timing.of(k);
            dto.node_timeout_ms = t.timeout_ms;
            dto.retry_backoff_ms = t.backoff_ms;
            dto.review_deadline_ms = t.review_deadline_ms;
            (k, dto)
        }))
    }
}

fn compensations<S: Serializer>(
    m: &&IndexMap<String, Compensation>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(m.iter().map(|(k, c)| (k, CompensationDto::from(c))))
}

fn agents<S: Serializer>(m: &&IndexMap<String, AgentConfig>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(m.iter().map(|(k, a)| (k, AgentDto::from(a))))
}

impl<'a> From<&'a Workflow> for WorkflowDto<'a> {
    fn from(w: &'a Workflow) -> Self {
        WorkflowDto {
            format_version: FORMAT_VERSION,
            id: &w.id,
            version: &w.version,
            agents: &w.agents,
            nodes: NodesDto {
                nodes: &w.nodes,
                saga: &w.saga,
                timing: &w.timing,
            },
            start_node: &w.start_node,
            config: w.config.as_ref().map(ConfigDto::from),
            metadata: MetadataDto::from(&w.metadata),
            state_schema: w.state_schema.as_ref().map(StateSchemaDto::from),
            compensations: &w.saga.compensations,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgentDto<'a> {
    id: &'a str,
    role: &'a str,
    model: &'a str,
    temperature: f64,
    max_tokens: Option<i64>,
    tools: &'a [String],
    instructions: Option<&'a str>,
    top_p: Option<f64>,
    frequency_penalty: Option<f64>,
    presence_penalty: Option<f64>,
    timeout: Option<i64>,
    max_tool_calls: Option<i64>,
    maintain_context: bool,
}

impl<'a> From<&'a AgentConfig> for AgentDto<'a> {
    fn from(a: &'a AgentConfig) -> Self {
        AgentDto {
            id: &a.id,
            role: &a.role,
            model: &a.model,
            temperature: a.temperature,
            max_tokens: a.max_tokens,
            tools: &a.tools,
            instructions: a.instructions.as_deref(),
            top_p: a.top_p,
            frequency_penalty: a.frequency_penalty,
            presence_penalty: a.presence_penalty,
            timeout: a.timeout,
            max_tool_calls: a.max_tool_calls,
            maintain_context: a.maintain_context,
        }
    }
}

/// Upstream's `config` plus hensu's `maxSteps`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigDto {
    max_execution_time: i64,
    checkpoints: bool,
    checkpoint_interval: i64,
    observability: ObservabilityDto,
    max_steps: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ObservabilityDto {
    log_level: &'static str,
    export_metrics: bool,
}

impl From<&WorkflowConfig> for ConfigDto {
    fn from(c: &WorkflowConfig) -> Self {
        ConfigDto {
            max_execution_time: c.max_execution_time,
            checkpoints: c.checkpoints,
            checkpoint_interval: c.checkpoint_interval,
            observability: ObservabilityDto {
                log_level: c.observability.log_level.as_str(),
                export_metrics: c.observability.export_metrics,
            },
            max_steps: c.max_steps,
        }
    }
}

/// `created` only when set.
#[derive(Serialize)]
struct MetadataDto<'a> {
    name: &'a str,
    description: Option<&'a str>,
    author: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<&'a str>,
    tags: &'a [String],
}

impl<'a> From<&'a Metadata> for MetadataDto<'a> {
    fn from(m: &'a Metadata) -> Self {
        MetadataDto {
            name: &m.name,
            description: m.description.as_deref(),
            author: m.author.as_deref(),
            created: m.created.as_deref(),
            tags: &m.tags,
        }
    }
}

#[derive(Serialize)]
struct StateSchemaDto<'a> {
    variables: Vec<StateVariableDto<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StateVariableDto<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    var_type: &'static str,
    is_input: bool,
    description: Option<&'a str>,
}

impl<'a> From<&'a StateSchema> for StateSchemaDto<'a> {
    fn from(s: &'a StateSchema) -> Self {
        StateSchemaDto {
            variables: s
                .variables
                .iter()
                .map(|v| StateVariableDto {
                    name: &v.name,
                    var_type: v.var_type.as_str(),
                    is_input: v.is_input,
                    description: v.description.as_deref(),
                })
                .collect(),
        }
    }
}

// --- nodes ----------------------------------------------------------------------------------

/// `id` and `nodeType` first, then the payload of the node type.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct NodeDto<'a> {
    id: &'a str,
    node_type: &'static str,
    #[serde(flatten)]
    payload: NodePayload<'a>,
    /// hensu extension: the compensation this node names.
    #[serde(skip_serializing_if = "Option::is_none")]
    compensation: Option<&'a str>,
    /// hensu extension (docs/language.md, *Timeouts and backoff*): `timeout = …` of a node
    /// (not `timeoutMs`: a join has that key upstream, for its own timeout).
    #[serde(skip_serializing_if = "Option::is_none")]
    node_timeout_ms: Option<u64>,
    /// hensu extension: the `backoff` of the node's `onFailure retry`.
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_backoff_ms: Option<u64>,
    /// hensu extension (docs/language.md, *Review*): a review's `deadline`.
    #[serde(skip_serializing_if = "Option::is_none")]
    review_deadline_ms: Option<u64>,
}

/// One compensation: `id`, then `agentId` + `prompt` or `actions`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CompensationDto<'a> {
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    actions: Option<Vec<ActionDto<'a>>>,
}

impl<'a> From<&'a Compensation> for CompensationDto<'a> {
    fn from(c: &'a Compensation) -> Self {
        let (agent_id, prompt, actions) = match &c.body {
            CompensationBody::Agent { agent_id, prompt } => {
                (Some(agent_id.as_str()), Some(prompt.as_str()), None)
            }
            CompensationBody::Actions(a) => {
                (None, None, Some(a.iter().map(ActionDto::from).collect()))
            }
        };
        CompensationDto {
            id: &c.id,
            agent_id,
            prompt,
            actions,
        }
    }
}

#[derive(Serialize)]
#[serde(untagged)]
enum NodePayload<'a> {
    Standard(StandardDto<'a>),
    End(EndDto),
    Action(ActionNodeDto<'a>),
    Generic(GenericDto<'a>),
    Parallel(ParallelDto<'a>),
    Fork(ForkDto<'a>),
    Join(JoinDto<'a>),
    SubWorkflow(SubWorkflowDto<'a>),
    Wait(WaitDto<'a>),
    Map(MapDto<'a>),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StandardDto<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<&'a str>,
    /// The rubric's markdown as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    rubric: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    review_config: Option<ReviewConfigDto>,
    transition_rules: Vec<RuleDto<'a>>,
    #[serde(skip_serializing_if = "is_empty")]
    writes: &'a [String],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReviewConfigDto {
    mode: &'static str,
    allow_backtrack: bool,
    allow_edit: bool,
}

#[derive(Serialize)]
struct EndDto {
    status: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ActionNodeDto<'a> {
    actions: Vec<ActionDto<'a>>,
    transition_rules: Vec<RuleDto<'a>>,
    /// hensu extension: absent when the node has no `writes`, so upstream artifacts are unchanged.
    #[serde(skip_serializing_if = "is_empty")]
    writes: &'a [String],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenericDto<'a> {
    executor_type: &'a str,
    #[serde(skip_serializing_if = "is_empty_map")]
    config: &'a IndexMap<String, Value>,
    transition_rules: Vec<RuleDto<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rubric: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ParallelDto<'a> {
    branches: Vec<BranchDto<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    consensus_config: Option<ConsensusConfigDto<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    transition_rules: Vec<RuleDto<'a>>,
}

/// Branch `rubric` is raw text (string or `null`) like node rubrics; upstream writes an object
/// it cannot read back.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BranchDto<'a> {
    id: &'a str,
    agent_id: &'a str,
    prompt: Option<&'a str>,
    rubric: Option<&'a str>,
    weight: f64,
    yields: &'a [String],
    /// hensu extension (docs/language.md, *Dependency DAGs*), only when set.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    depends_on: &'a [String],
    /// hensu extension: `runIf("v")`, only when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    run_if: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConsensusConfigDto<'a> {
    judge_agent_id: Option<&'a str>,
    strategy: &'static str,
    threshold: Option<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ForkDto<'a> {
    targets: &'a [String],
    #[serde(skip_serializing_if = "is_empty_map")]
    target_configs: &'a IndexMap<String, Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    transition_rules: Vec<RuleDto<'a>>,
    #[serde(skip_serializing_if = "is_false")]
    wait_for_all: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JoinDto<'a> {
    await_targets: &'a [String],
    merge_strategy: &'static str,
    writes: &'a [String],
    #[serde(skip_serializing_if = "is_empty")]
    exports: &'a [String],
    timeout_ms: i64,
    fail_on_any_error: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    transition_rules: Vec<RuleDto<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SubWorkflowDto<'a> {
    workflow_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    target_version: Option<&'a str>,
    input_mapping: &'a IndexMap<String, String>,
    output_mapping: &'a IndexMap<String, String>,
    transition_rules: Vec<RuleDto<'a>>,
}

/// hensu's `WAIT` node (docs/language.md, *Timers and signals*): exactly one of `durationMs`,
/// `until` and `signal` (with `timeoutMs` and `writes` when set).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WaitDto<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    until: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "is_empty")]
    writes: &'a [String],
    transition_rules: Vec<RuleDto<'a>>,
}

/// hensu extension `MAP` (docs/language.md, *Map over a list*); upstream has no such node.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MapDto<'a> {
    over: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    workflow_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a str>,
    max_parallel: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_items: Option<i64>,
    on_item_failure: &'static str,
    #[serde(skip_serializing_if = "is_empty")]
    writes: &'a [String],
    transition_rules: Vec<RuleDto<'a>>,
}

impl<'a> From<&'a WaitNode> for WaitDto<'a> {
    fn from(n: &'a WaitNode) -> Self {
        let mut dto = WaitDto {
            duration_ms: None,
            until: None,
            signal: None,
            timeout_ms: None,
            writes: &n.writes,
            transition_rules: rules(&n.transition_rules),
        };
        match &n.wait {
            WaitFor::Duration { ms } => dto.duration_ms = Some(*ms),
            WaitFor::Until { template } => dto.until = Some(template),
            WaitFor::Signal { name, timeout_ms } => {
                dto.signal = Some(name);
                dto.timeout_ms = *timeout_ms;
            }
        }
        dto
    }
}

fn rules(rules: &[TransitionRule]) -> Vec<RuleDto<'_>> {
    rules.iter().map(RuleDto::from).collect()
}

impl<'a> From<&'a Node> for NodeDto<'a> {
    fn from(node: &'a Node) -> Self {
        let payload = match node {
            Node::Standard(n) => NodePayload::Standard(StandardDto {
                agent_id: non_empty(&n.agent_id),
                prompt: non_empty(&n.prompt),
                rubric: rubric_text(&n.rubric),
                review_config: n.review_config.as_ref().map(|rc| ReviewConfigDto {
                    mode: rc.mode.as_str(),
                    allow_backtrack: rc.allow_backtrack,
                    allow_edit: rc.allow_edit,
                }),
                transition_rules: rules(&n.transition_rules),
                writes: &n.writes,
            }),
            Node::End(n) => NodePayload::End(EndDto {
                status: n.status.as_str(),
            }),
            Node::Action(n) => NodePayload::Action(ActionNodeDto {
                actions: n.actions.iter().map(ActionDto::from).collect(),
                transition_rules: rules(&n.transition_rules),
                writes: &n.writes,
            }),
            Node::Generic(n) => NodePayload::Generic(GenericDto {
                executor_type: &n.executor_type,
                config: &n.config,
                transition_rules: rules(&n.transition_rules),
                rubric: rubric_text(&n.rubric),
            }),
            Node::Parallel(n) => NodePayload::Parallel(ParallelDto {
                branches: n
                    .branches
                    .iter()
                    .map(|b| BranchDto {
                        id: &b.id,
                        agent_id: &b.agent_id,
                        prompt: b.prompt.as_deref(),
                        rubric: rubric_text(&b.rubric),
                        weight: b.weight,
                        yields: &b.yields,
                        depends_on: &b.after,
                        run_if: b.run_if.as_deref(),
                    })
                    .collect(),
                consensus_config: n.consensus_config.as_ref().map(|c| ConsensusConfigDto {
                    judge_agent_id: c.judge_agent_id.as_deref(),
                    strategy: c.strategy.as_str(),
                    threshold: c.threshold,
                }),
                transition_rules: rules(&n.transition_rules),
            }),
            Node::Fork(n) => NodePayload::Fork(ForkDto {
                targets: &n.targets,
                target_configs: &n.target_configs,
                transition_rules: rules(&n.transition_rules),
                wait_for_all: n.wait_for_all,
            }),
            Node::Join(n) => NodePayload::Join(JoinDto {
                await_targets: &n.await_targets,
                merge_strategy: n.merge_strategy.as_str(),
                writes: &n.writes,
                exports: &n.exports,
                timeout_ms: n.timeout_ms,
                fail_on_any_error: n.fail_on_any_error,
                transition_rules: rules(&n.transition_rules),
            }),
            Node::SubWorkflow(n) => NodePayload::SubWorkflow(SubWorkflowDto {
                workflow_id: &n.workflow_id,
                target_version: non_empty(&n.target_version),
                input_mapping: &n.input_mapping,
                output_mapping: &n.output_mapping,
                transition_rules: rules(&n.transition_rules),
            }),
            Node::Wait(n) => NodePayload::Wait(WaitDto::from(n)),
            Node::Map(n) => NodePayload::Map(MapDto {
                over: &n.over,
                agent_id: non_empty(&n.agent_id),
                prompt: non_empty(&n.prompt),
                workflow_id: non_empty(&n.target),
                result: non_empty(&n.result),
                max_parallel: n.max_parallel,
                max_items: n.max_items,
                on_item_failure: n.on_item_failure.as_str(),
                writes: &n.writes,
                transition_rules: rules(&n.transition_rules),
            }),
        };
        NodeDto {
            id: node.id(),
            node_type: node.kind_name(),
            payload,
            compensation: None,
            node_timeout_ms: None,
            retry_backoff_ms: None,
            review_deadline_ms: None,
        }
    }
}

/// Actions are internally tagged by `type`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum ActionDto<'a> {
    #[serde(rename_all = "camelCase")]
    Send {
        handler_id: &'a str,
        #[serde(skip_serializing_if = "is_empty_map")]
        payload: &'a IndexMap<String, Value>,
        #[serde(skip_serializing_if = "is_false")]
        raw_payload: bool,
    },
    #[serde(rename_all = "camelCase")]
    Execute { command_id: &'a str },
}

impl<'a> From<&'a Action> for ActionDto<'a> {
    fn from(a: &'a Action) -> Self {
        match a {
            Action::Send {
                handler_id,
                payload,
                raw_payload,
            } => ActionDto::Send {
                handler_id,
                payload,
                raw_payload: *raw_payload,
            },
            Action::Execute { command_id } => ActionDto::Execute { command_id },
        }
    }
}

// --- transition rules -----------------------------------------------------------------------

/// `type` first, then the fields of the rule kind; `withFeedback` only when set.
#[derive(Serialize)]
pub(super) struct RuleDto<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    payload: RulePayload<'a>,
}

#[derive(Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
enum RulePayload<'a> {
    Target {
        target_node: &'a str,
        #[serde(skip_serializing_if = "is_false")]
        with_feedback: bool,
    },
    /// `targetNode` is written even when `null`.
    Failure {
        target_node: Option<&'a str>,
    },
    Approval {
        expected: bool,
        target_node: &'a str,
        #[serde(skip_serializing_if = "is_false")]
        with_feedback: bool,
    },
    Score {
        conditions: Vec<ScoreConditionDto<'a>>,
        #[serde(skip_serializing_if = "is_false")]
        with_feedback: bool,
    },
    Condition {
        variable: &'a str,
        operator: &'static str,
        expected: Expected<'a>,
        target_node: &'a str,
        #[serde(skip_serializing_if = "is_false")]
        with_feedback: bool,
    },
    Bounded {
        namespace: &'static str,
        budget: i64,
        otherwise: &'a str,
        #[serde(skip_serializing_if = "is_false")]
        escalation_with_feedback: bool,
        inner: Box<RuleDto<'a>>,
    },
    RubricFail {},
}

/// A condition's `expected`: text for `==`/`!=`, a number for comparisons.
#[derive(Serialize)]
#[serde(untagged)]
enum Expected<'a> {
    Text(&'a str),
    Number(f64),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScoreConditionDto<'a> {
    operator: &'static str,
    value: Option<f64>,
    range: Option<RangeDto>,
    target_node: &'a str,
}

#[derive(Serialize)]
struct RangeDto {
    start: f64,
    end: f64,
}

impl<'a> From<&'a TransitionRule> for RuleDto<'a> {
    fn from(rule: &'a TransitionRule) -> Self {
        let payload = match rule {
            TransitionRule::Success {
                target_node,
                with_feedback,
            }
            | TransitionRule::NoConsensus {
                target_node,
                with_feedback,
            }
            | TransitionRule::Always {
                target_node,
                with_feedback,
            } => RulePayload::Target {
                target_node,
                with_feedback: *with_feedback,
            },
            TransitionRule::Failure { target_node } => RulePayload::Failure {
                target_node: target_node.as_deref(),
            },
            TransitionRule::Approval {
                expected,
                target_node,
                with_feedback,
            } => RulePayload::Approval {
                expected: *expected,
                target_node,
                with_feedback: *with_feedback,
            },
            TransitionRule::Score {
                conditions,
                with_feedback,
            } => RulePayload::Score {
                conditions: conditions
                    .iter()
                    .map(|c| ScoreConditionDto {
                        operator: c.operator.as_str(),
                        value: c.value,
                        range: c.range.map(|r| RangeDto {
                            start: r.start,
                            end: r.end,
                        }),
                        target_node: &c.target_node,
                    })
                    .collect(),
                with_feedback: *with_feedback,
            },
            TransitionRule::Condition {
                variable,
                predicate,
                target_node,
                with_feedback,
            } => RulePayload::Condition {
                variable,
                operator: predicate.operator_name(),
                expected: match predicate {
                    ConditionPredicate::Eq(s) | ConditionPredicate::Neq(s) => Expected::Text(s),
                    ConditionPredicate::Gt(v)
                    | ConditionPredicate::Gte(v)
                    | ConditionPredicate::Lt(v)
                    | ConditionPredicate::Lte(v) => Expected::Number(*v),
                },
                target_node,
                with_feedback: *with_feedback,
            },
            TransitionRule::Bounded {
                namespace,
                budget,
                otherwise,
                escalation_with_feedback,
                inner,
            } => RulePayload::Bounded {
                namespace: namespace.as_str(),
                budget: *budget,
                otherwise,
                escalation_with_feedback: *escalation_with_feedback,
                inner: Box::new(RuleDto::from(inner.as_ref())),
            },
            TransitionRule::RubricFail => RulePayload::RubricFail {},
            TransitionRule::ReviewTimeout { target_node } => RulePayload::Target {
                target_node,
                with_feedback: false,
            },
        };
        RuleDto {
            kind: rule.kind().as_str(),
            payload,
        }
    }
}
