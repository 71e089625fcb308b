//! Writing: [`Workflow`] → wire JSON, keys in wire order.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::FORMAT_VERSION;
use crate::model::*;

/// Serializes a workflow to pretty-printed JSON (2-space indent, trailing newline).
pub fn to_json(workflow: &Workflow) -> String {
    let value = to_value(workflow);
    let mut out = serde_json::to_string_pretty(&value).unwrap_or_else(|_| String::from("{}"));
    out.push('\n');
    out
}

/// Serializes a workflow to a [`Value`] (object keys in wire order).
pub fn to_value(workflow: &Workflow) -> Value {
    let mut m = Map::new();
    m.insert("formatVersion".into(), Value::from(FORMAT_VERSION));
    m.insert("id".into(), Value::from(workflow.id.as_str()));
    m.insert("version".into(), Value::from(workflow.version.as_str()));
    let agents: Map<String, Value> = workflow
        .agents
        .iter()
        .map(|(k, a)| (k.clone(), agent_to_value(a)))
        .collect();
    m.insert("agents".into(), Value::Object(agents));
    let nodes: Map<String, Value> = workflow
        .nodes
        .iter()
        .map(|(k, n)| (k.clone(), node_to_value(n)))
        .collect();
    m.insert("nodes".into(), Value::Object(nodes));
    m.insert(
        "startNode".into(),
        Value::from(workflow.start_node.as_str()),
    );
    m.insert(
        "config".into(),
        workflow
            .config
            .as_ref()
            .map_or(Value::Null, config_to_value),
    );
    m.insert("metadata".into(), metadata_to_value(&workflow.metadata));
    m.insert(
        "stateSchema".into(),
        workflow
            .state_schema
            .as_ref()
            .map_or(Value::Null, schema_to_value),
    );
    Value::Object(m)
}

fn opt_str(s: &Option<String>) -> Value {
    s.as_deref().map_or(Value::Null, Value::from)
}
fn opt_f64(v: Option<f64>) -> Value {
    v.map_or(Value::Null, Value::from)
}
fn opt_i64(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::from)
}
fn str_list(v: &[String]) -> Value {
    Value::Array(v.iter().map(|s| Value::from(s.as_str())).collect())
}
fn value_map(m: &IndexMap<String, Value>) -> Value {
    Value::Object(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}
fn string_map(m: &IndexMap<String, String>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect(),
    )
}

fn agent_to_value(a: &AgentConfig) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(a.id.as_str()));
    m.insert("role".into(), Value::from(a.role.as_str()));
    m.insert("model".into(), Value::from(a.model.as_str()));
    m.insert("temperature".into(), Value::from(a.temperature));
    m.insert("maxTokens".into(), opt_i64(a.max_tokens));
    m.insert("tools".into(), str_list(&a.tools));
    m.insert("instructions".into(), opt_str(&a.instructions));
    m.insert("topP".into(), opt_f64(a.top_p));
    m.insert("frequencyPenalty".into(), opt_f64(a.frequency_penalty));
    m.insert("presencePenalty".into(), opt_f64(a.presence_penalty));
    m.insert("timeout".into(), opt_i64(a.timeout));
    m.insert("maxToolCalls".into(), opt_i64(a.max_tool_calls));
    m.insert("maintainContext".into(), Value::from(a.maintain_context));
    Value::Object(m)
}

fn config_to_value(c: &WorkflowConfig) -> Value {
    let mut obs = Map::new();
    obs.insert(
        "logLevel".into(),
        Value::from(c.observability.log_level.as_str()),
    );
    obs.insert(
        "exportMetrics".into(),
        Value::from(c.observability.export_metrics),
    );
    let mut m = Map::new();
    m.insert("maxExecutionTime".into(), Value::from(c.max_execution_time));
    m.insert("checkpoints".into(), Value::from(c.checkpoints));
    m.insert(
        "checkpointInterval".into(),
        Value::from(c.checkpoint_interval),
    );
    m.insert("observability".into(), Value::Object(obs));
    m.insert("maxSteps".into(), Value::from(c.max_steps));
    Value::Object(m)
}

fn metadata_to_value(md: &Metadata) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::from(md.name.as_str()));
    m.insert("description".into(), opt_str(&md.description));
    m.insert("author".into(), opt_str(&md.author));
    if let Some(c) = &md.created {
        m.insert("created".into(), Value::from(c.as_str()));
    }
    m.insert("tags".into(), str_list(&md.tags));
    Value::Object(m)
}

fn schema_to_value(s: &StateSchema) -> Value {
    let vars = s
        .variables
        .iter()
        .map(|v| {
            let mut m = Map::new();
            m.insert("name".into(), Value::from(v.name.as_str()));
            m.insert("type".into(), Value::from(v.var_type.as_str()));
            m.insert("isInput".into(), Value::from(v.is_input));
            m.insert("description".into(), opt_str(&v.description));
            Value::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("variables".into(), Value::Array(vars));
    Value::Object(m)
}

fn rules_to_value(rules: &[TransitionRule]) -> Value {
    Value::Array(rules.iter().map(rule_to_value).collect())
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// Serializes one node (`id`, `nodeType`, then the per-type fields).
pub fn node_to_value(node: &Node) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(node.id()));
    m.insert("nodeType".into(), Value::from(node.kind_name()));
    match node {
        Node::Standard(n) => {
            if let Some(a) = non_empty(&n.agent_id) {
                m.insert("agentId".into(), Value::from(a));
            }
            if let Some(p) = non_empty(&n.prompt) {
                m.insert("prompt".into(), Value::from(p));
            }
            if let Some(r) = &n.rubric {
                m.insert("rubric".into(), Value::from(r.raw_content.as_str()));
            }
            if let Some(rc) = &n.review_config {
                let mut r = Map::new();
                r.insert("mode".into(), Value::from(rc.mode.as_str()));
                r.insert("allowBacktrack".into(), Value::from(rc.allow_backtrack));
                r.insert("allowEdit".into(), Value::from(rc.allow_edit));
                m.insert("reviewConfig".into(), Value::Object(r));
            }
            m.insert(
                "transitionRules".into(),
                rules_to_value(&n.transition_rules),
            );
            if !n.writes.is_empty() {
                m.insert("writes".into(), str_list(&n.writes));
            }
        }
        Node::End(n) => {
            m.insert("status".into(), Value::from(n.status.as_str()));
        }
        Node::Action(n) => {
            m.insert(
                "actions".into(),
                Value::Array(n.actions.iter().map(action_to_value).collect()),
            );
            m.insert(
                "transitionRules".into(),
                rules_to_value(&n.transition_rules),
            );
        }
        Node::Generic(n) => {
            m.insert("executorType".into(), Value::from(n.executor_type.as_str()));
            if !n.config.is_empty() {
                m.insert("config".into(), value_map(&n.config));
            }
            m.insert(
                "transitionRules".into(),
                rules_to_value(&n.transition_rules),
            );
            if let Some(r) = &n.rubric {
                m.insert("rubric".into(), Value::from(r.raw_content.as_str()));
            }
        }
        Node::Parallel(n) => {
            m.insert(
                "branches".into(),
                Value::Array(n.branches.iter().map(branch_to_value).collect()),
            );
            if let Some(c) = &n.consensus_config {
                let mut cm = Map::new();
                cm.insert("judgeAgentId".into(), opt_str(&c.judge_agent_id));
                cm.insert("strategy".into(), Value::from(c.strategy.as_str()));
                cm.insert("threshold".into(), opt_f64(c.threshold));
                m.insert("consensusConfig".into(), Value::Object(cm));
            }
            if !n.transition_rules.is_empty() {
                m.insert(
                    "transitionRules".into(),
                    rules_to_value(&n.transition_rules),
                );
            }
        }
        Node::Fork(n) => {
            m.insert("targets".into(), str_list(&n.targets));
            if !n.target_configs.is_empty() {
                m.insert("targetConfigs".into(), value_map(&n.target_configs));
            }
            if !n.transition_rules.is_empty() {
                m.insert(
                    "transitionRules".into(),
                    rules_to_value(&n.transition_rules),
                );
            }
            if n.wait_for_all {
                m.insert("waitForAll".into(), Value::Bool(true));
            }
        }
        Node::Join(n) => {
            m.insert("awaitTargets".into(), str_list(&n.await_targets));
            m.insert(
                "mergeStrategy".into(),
                Value::from(n.merge_strategy.as_str()),
            );
            m.insert("writes".into(), str_list(&n.writes));
            if !n.exports.is_empty() {
                m.insert("exports".into(), str_list(&n.exports));
            }
            m.insert("timeoutMs".into(), Value::from(n.timeout_ms));
            m.insert("failOnAnyError".into(), Value::from(n.fail_on_any_error));
            if !n.transition_rules.is_empty() {
                m.insert(
                    "transitionRules".into(),
                    rules_to_value(&n.transition_rules),
                );
            }
        }
        Node::SubWorkflow(n) => {
            m.insert("workflowId".into(), Value::from(n.workflow_id.as_str()));
            if let Some(v) = non_empty(&n.target_version) {
                m.insert("targetVersion".into(), Value::from(v));
            }
            m.insert("inputMapping".into(), string_map(&n.input_mapping));
            m.insert("outputMapping".into(), string_map(&n.output_mapping));
            m.insert(
                "transitionRules".into(),
                rules_to_value(&n.transition_rules),
            );
        }
    }
    Value::Object(m)
}

fn branch_to_value(b: &Branch) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(b.id.as_str()));
    m.insert("agentId".into(), Value::from(b.agent_id.as_str()));
    m.insert("prompt".into(), opt_str(&b.prompt));
    m.insert(
        "rubric".into(),
        b.rubric
            .as_ref()
            .map_or(Value::Null, |r| Value::from(r.raw_content.as_str())),
    );
    m.insert("weight".into(), Value::from(b.weight));
    m.insert("yields".into(), str_list(&b.yields));
    Value::Object(m)
}

fn action_to_value(a: &Action) -> Value {
    let mut m = Map::new();
    match a {
        Action::Send {
            handler_id,
            payload,
            raw_payload,
        } => {
            m.insert("type".into(), Value::from("send"));
            m.insert("handlerId".into(), Value::from(handler_id.as_str()));
            if !payload.is_empty() {
                m.insert("payload".into(), value_map(payload));
            }
            if *raw_payload {
                m.insert("rawPayload".into(), Value::Bool(true));
            }
        }
        Action::Execute { command_id } => {
            m.insert("type".into(), Value::from("execute"));
            m.insert("commandId".into(), Value::from(command_id.as_str()));
        }
    }
    Value::Object(m)
}

fn with_fb(m: &mut Map<String, Value>, fb: bool) {
    if fb {
        m.insert("withFeedback".into(), Value::Bool(true));
    }
}

/// Serializes one transition rule (`type` first).
pub fn rule_to_value(rule: &TransitionRule) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::from(rule.kind().as_str()));
    match rule {
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
        } => {
            m.insert("targetNode".into(), Value::from(target_node.as_str()));
            with_fb(&mut m, *with_feedback);
        }
        TransitionRule::Failure { target_node } => {
            m.insert("targetNode".into(), opt_str(target_node));
        }
        TransitionRule::Approval {
            expected,
            target_node,
            with_feedback,
        } => {
            m.insert("expected".into(), Value::Bool(*expected));
            m.insert("targetNode".into(), Value::from(target_node.as_str()));
            with_fb(&mut m, *with_feedback);
        }
        TransitionRule::Score {
            conditions,
            with_feedback,
        } => {
            let conds = conditions
                .iter()
                .map(|c| {
                    let mut cm = Map::new();
                    cm.insert("operator".into(), Value::from(c.operator.as_str()));
                    cm.insert("value".into(), opt_f64(c.value));
                    cm.insert(
                        "range".into(),
                        c.range.map_or(Value::Null, |r| {
                            let mut rm = Map::new();
                            rm.insert("start".into(), Value::from(r.start));
                            rm.insert("end".into(), Value::from(r.end));
                            Value::Object(rm)
                        }),
                    );
                    cm.insert("targetNode".into(), Value::from(c.target_node.as_str()));
                    Value::Object(cm)
                })
                .collect();
            m.insert("conditions".into(), Value::Array(conds));
            with_fb(&mut m, *with_feedback);
        }
        TransitionRule::Condition {
            variable,
            predicate,
            target_node,
            with_feedback,
        } => {
            m.insert("variable".into(), Value::from(variable.as_str()));
            m.insert("operator".into(), Value::from(predicate.operator_name()));
            let expected = match predicate {
                ConditionPredicate::Eq(s) | ConditionPredicate::Neq(s) => Value::from(s.as_str()),
                ConditionPredicate::Gt(v)
                | ConditionPredicate::Gte(v)
                | ConditionPredicate::Lt(v)
                | ConditionPredicate::Lte(v) => Value::from(*v),
            };
            m.insert("expected".into(), expected);
            m.insert("targetNode".into(), Value::from(target_node.as_str()));
            with_fb(&mut m, *with_feedback);
        }
        TransitionRule::Bounded {
            namespace,
            budget,
            otherwise,
            escalation_with_feedback,
            inner,
        } => {
            m.insert("namespace".into(), Value::from(namespace.as_str()));
            m.insert("budget".into(), Value::from(*budget));
            m.insert("otherwise".into(), Value::from(otherwise.as_str()));
            if *escalation_with_feedback {
                m.insert("escalationWithFeedback".into(), Value::Bool(true));
            }
            m.insert("inner".into(), rule_to_value(inner));
        }
        TransitionRule::RubricFail => {}
    }
    Value::Object(m)
}
