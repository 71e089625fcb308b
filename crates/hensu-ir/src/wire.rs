//! The JSON wire format: upstream's `hensu build` output (upstream-reference §4) plus hensu's
//! backward-compatible additions (language.md §7).
//!
//! Writing ([`to_json`], [`to_value`]):
//! * keys in declaration order (workflow fields, node/agent maps, payloads, mappings);
//! * a top-level `"formatVersion": 1` (first key);
//! * `metadata.created` only when set;
//! * branch `rubric` as raw text (string or `null`) like node rubrics — upstream writes an object
//!   that it cannot read back;
//! * workflow `config` as upstream plus `maxSteps`;
//! * per node type, fields are omitted or always written exactly as upstream's custom serializers
//!   do; bean-serialized objects (workflow, agent, metadata, config, schema entries, branches,
//!   consensus/review configs) include `null` fields;
//! * pretty-printed by serde_json (2-space indent, `"key": value`) with a trailing newline.
//!   Upstream's Jackson spacing (`"key" : value`, `[ ]`) is not reproduced: readers do not care.
//!
//! Reading ([`from_json`], [`from_json_with_spans`]) accepts upstream output (any key order,
//! `metadata.created`, no `formatVersion`, `config` absent or `null`, missing optional fields with
//! upstream's reader defaults, branch rubric as object — ignored, the upstream quirk — or string)
//! and reports errors with a JSON path (`nodes.review.transitionRules[1].type`) and a byte offset.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::model::*;
use crate::number::canonical_number;
use crate::rubric::{RubricError, parse_rubric};

/// The `formatVersion` hensu writes.
pub const FORMAT_VERSION: i64 = 1;

// ------------------------------------------------------------------------------------------------
// Writing
// ------------------------------------------------------------------------------------------------

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

impl serde::Serialize for Workflow {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        to_value(self).serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Workflow {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(deserializer)?;
        from_value(&v).map_err(serde::de::Error::custom)
    }
}

// ------------------------------------------------------------------------------------------------
// Source map: byte spans of every value, keyed by JSON path
// ------------------------------------------------------------------------------------------------

/// A byte range `start..end` in the JSON input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Byte spans of the values (and object keys) of a JSON document, keyed by path.
///
/// Paths: object members are joined with `.` (`nodes.review.agentId`), array elements use
/// `[i]` (`nodes.review.transitionRules[1].type`); the root is `""`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceMap {
    values: IndexMap<String, Span>,
    keys: IndexMap<String, Span>,
}

impl SourceMap {
    /// Indexes `text`, which should be valid JSON (indexing stops silently at malformed input).
    pub fn index(text: &str) -> SourceMap {
        let mut sm = SourceMap::default();
        let mut sc = Scanner {
            text,
            b: text.as_bytes(),
            pos: 0,
            map: &mut sm,
        };
        sc.skip_ws();
        sc.value(String::new(), 0);
        sm
    }

    /// The span of the value at `path`.
    pub fn value_span(&self, path: &str) -> Option<Span> {
        self.values.get(path).copied()
    }

    /// The span of the key (including quotes) of the object member at `path`
    /// (e.g. `nodes.review` → the `"review"` key).
    pub fn key_span(&self, path: &str) -> Option<Span> {
        self.keys.get(path).copied()
    }

    /// The span of `path` or, if it does not exist (a missing field), of its nearest ancestor.
    pub fn nearest_span(&self, path: &str) -> Option<Span> {
        let mut p = path;
        loop {
            if let Some(s) = self.values.get(p) {
                return Some(*s);
            }
            if p.is_empty() {
                return None;
            }
            p = parent_path(p);
        }
    }

    /// Every indexed value path with its span, in document order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Span)> {
        self.values.iter().map(|(k, v)| (k.as_str(), *v))
    }
}

fn parent_path(p: &str) -> &str {
    let cut = p.rfind(['.', '[']).unwrap_or(0);
    &p[..cut]
}

/// `parent.key` (or `key` at the root).
pub fn child_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `parent[i]`.
pub fn index_path(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

struct Scanner<'a, 'm> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    map: &'m mut SourceMap,
}

impl Scanner<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Scans a string starting at the opening quote; returns its end (after the closing quote).
    fn string_end(&mut self) -> Option<usize> {
        if self.peek() != Some(b'"') {
            return None;
        }
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(self.pos);
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Returns false when the input is malformed (scan stops).
    fn value(&mut self, path: String, depth: usize) -> bool {
        if depth > 512 {
            return false;
        }
        let start = self.pos;
        let ok = match self.peek() {
            Some(b'{') => self.object(&path, depth),
            Some(b'[') => self.array(&path, depth),
            Some(b'"') => self.string_end().is_some(),
            Some(_) => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.pos += 1;
                }
                self.pos > start
            }
            None => false,
        };
        if ok {
            self.map.values.insert(
                path,
                Span {
                    start,
                    end: self.pos,
                },
            );
        }
        ok
    }

    fn object(&mut self, path: &str, depth: usize) -> bool {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return true;
        }
        loop {
            self.skip_ws();
            let key_start = self.pos;
            let Some(key_end) = self.string_end() else {
                return false;
            };
            let key: String = self
                .text
                .get(key_start..key_end)
                .and_then(|raw| serde_json::from_str(raw).ok())
                .unwrap_or_default();
            let member = child_path(path, &key);
            self.map.keys.insert(
                member.clone(),
                Span {
                    start: key_start,
                    end: key_end,
                },
            );
            self.skip_ws();
            if self.peek() != Some(b':') {
                return false;
            }
            self.pos += 1;
            self.skip_ws();
            if !self.value(member, depth + 1) {
                return false;
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, path: &str, depth: usize) -> bool {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return true;
        }
        let mut i = 0;
        loop {
            self.skip_ws();
            if !self.value(index_path(path, i), depth + 1) {
                return false;
            }
            i += 1;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Reading
// ------------------------------------------------------------------------------------------------

/// What went wrong while reading a workflow JSON.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonErrorKind {
    /// Not JSON at all (serde_json's message).
    Syntax,
    /// A required field is absent or `null`.
    MissingField,
    /// A field has the wrong JSON type.
    WrongType,
    /// `nodeType` is not one of the eight node types.
    UnknownNodeType,
    /// A rule `type` is unknown.
    UnknownRuleType,
    /// A score or condition `operator` is unknown.
    UnknownOperator,
    /// An action `type` is unknown.
    UnknownActionType,
    /// An enum value (`status`, `mode`, `strategy`, `mergeStrategy`, `type`, `logLevel`,
    /// `namespace`) is unknown.
    UnknownEnumValue,
    /// A rubric's markdown is invalid (the checker reports E0107).
    InvalidRubric(Box<RubricError>),
    /// A node's / agent's `id` differs from its map key.
    IdMismatch,
    /// `formatVersion` is newer than this reader.
    UnsupportedFormatVersion,
}

/// A read error: kind, message, JSON path and (when known) byte position in the input.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonError {
    pub kind: JsonErrorKind,
    pub message: String,
    /// JSON path of the offending value (`""` for the root or a syntax error).
    pub path: String,
    /// Byte span in the input (the value at `path`, its nearest ancestor for a missing field, or
    /// the position of a syntax error).
    pub span: Option<Span>,
    /// 1-based line and column of `span.start` (column counted in bytes).
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl JsonError {
    /// Byte offset of the error in the input, if known.
    pub fn offset(&self) -> Option<usize> {
        self.span.map(|s| s.start)
    }
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)?;
        } else {
            write!(f, "{}: {}", self.path, self.message)?;
        }
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, " (line {l}, column {c})")?;
        }
        Ok(())
    }
}

impl std::error::Error for JsonError {}

/// Reads a workflow from JSON text.
pub fn from_json(text: &str) -> Result<Workflow, JsonError> {
    from_json_with_spans(text).map(|(w, _)| w)
}

/// Reads a workflow from JSON text and returns the source map of the input as well (byte spans of
/// every value and object key by JSON path), so a checker can point into the JSON.
pub fn from_json_with_spans(text: &str) -> Result<(Workflow, SourceMap), JsonError> {
    let text_nobom = text.strip_prefix('\u{feff}');
    let (body, base) = match text_nobom {
        Some(t) => (t, 3usize),
        None => (text, 0usize),
    };
    let value: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(e) => {
            let off = base + line_col_to_offset(body, e.line(), e.column());
            return Err(JsonError {
                kind: JsonErrorKind::Syntax,
                message: strip_serde_position(&e.to_string()),
                path: String::new(),
                span: Some(Span {
                    start: off,
                    end: off,
                }),
                line: Some(e.line()),
                column: Some(e.column()),
            });
        }
    };
    let mut sm = SourceMap::index(body);
    if base > 0 {
        for s in sm.values.values_mut().chain(sm.keys.values_mut()) {
            s.start += base;
            s.end += base;
        }
    }
    let reader = Reader { spans: Some(&sm) };
    match reader.workflow(&value) {
        Ok(w) => Ok((w, sm)),
        Err(mut e) => {
            if let Some(sp) = e.span {
                let (l, c) = offset_to_line_col(text, sp.start);
                e.line = Some(l);
                e.column = Some(c);
            }
            Err(e)
        }
    }
}

/// Reads a workflow from an already-parsed [`Value`] (errors carry a path but no position).
pub fn from_value(value: &Value) -> Result<Workflow, JsonError> {
    Reader { spans: None }.workflow(value)
}

fn strip_serde_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn line_col_to_offset(text: &str, line: usize, column: usize) -> usize {
    let mut off = 0usize;
    if line > 1 {
        let mut seen = 1usize;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                seen += 1;
                if seen == line {
                    off = i + 1;
                    break;
                }
            }
        }
    }
    (off + column.saturating_sub(1)).min(text.len())
}

fn offset_to_line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (line, offset - line_start + 1)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

type R<T> = Result<T, JsonError>;
type Obj = Map<String, Value>;

struct Reader<'s> {
    spans: Option<&'s SourceMap>,
}

impl Reader<'_> {
    fn err(&self, kind: JsonErrorKind, path: &str, message: impl Into<String>) -> JsonError {
        JsonError {
            kind,
            message: message.into(),
            path: path.to_string(),
            span: self.spans.and_then(|s| s.nearest_span(path)),
            line: None,
            column: None,
        }
    }

    fn wrong_type(&self, path: &str, expected: &str, found: &Value) -> JsonError {
        self.err(
            JsonErrorKind::WrongType,
            path,
            format!("expected {expected}, found {}", type_name(found)),
        )
    }

    fn missing(&self, path: &str) -> JsonError {
        self.err(JsonErrorKind::MissingField, path, "missing required field")
    }

    fn unknown(
        &self,
        kind: JsonErrorKind,
        path: &str,
        what: &str,
        value: &str,
        allowed: &[&str],
    ) -> JsonError {
        self.err(
            kind,
            path,
            format!(
                "unknown {what} '{value}' (expected one of {})",
                allowed.join(", ")
            ),
        )
    }

    // --- field helpers --------------------------------------------------------------------

    fn obj<'v>(&self, v: &'v Value, path: &str) -> R<&'v Obj> {
        v.as_object()
            .ok_or_else(|| self.wrong_type(path, "an object", v))
    }

    /// The field, `None` when absent or `null`.
    fn field<'v>(m: &'v Obj, key: &str) -> Option<&'v Value> {
        m.get(key).filter(|v| !v.is_null())
    }

    fn req_str(&self, m: &Obj, path: &str, key: &str) -> R<String> {
        let p = child_path(path, key);
        match Self::field(m, key) {
            None => Err(self.missing(&p)),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(self.wrong_type(&p, "a string", v)),
        }
    }

    fn opt_str(&self, m: &Obj, path: &str, key: &str) -> R<Option<String>> {
        match Self::field(m, key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong_type(&child_path(path, key), "a string", v)),
        }
    }

    fn str_or(&self, m: &Obj, path: &str, key: &str, default: &str) -> R<String> {
        Ok(self
            .opt_str(m, path, key)?
            .unwrap_or_else(|| default.to_string()))
    }

    fn str_list(&self, m: &Obj, path: &str, key: &str) -> R<Vec<String>> {
        let p = child_path(path, key);
        match Self::field(m, key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(self.wrong_type(&index_path(&p, i), "a string", other)),
                })
                .collect(),
            Some(v) => Err(self.wrong_type(&p, "an array of strings", v)),
        }
    }

    fn opt_f64(&self, m: &Obj, path: &str, key: &str) -> R<Option<f64>> {
        match Self::field(m, key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.wrong_type(&child_path(path, key), "a number", v)),
        }
    }

    fn f64_or(&self, m: &Obj, path: &str, key: &str, default: f64) -> R<f64> {
        Ok(self.opt_f64(m, path, key)?.unwrap_or(default))
    }

    fn as_int(v: &Value) -> Option<i64> {
        v.as_i64().or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        })
    }

    fn opt_i64(&self, m: &Obj, path: &str, key: &str) -> R<Option<i64>> {
        match Self::field(m, key) {
            None => Ok(None),
            Some(v) => Self::as_int(v)
                .map(Some)
                .ok_or_else(|| self.wrong_type(&child_path(path, key), "an integer", v)),
        }
    }

    fn i64_or(&self, m: &Obj, path: &str, key: &str, default: i64) -> R<i64> {
        Ok(self.opt_i64(m, path, key)?.unwrap_or(default))
    }

    fn bool_or(&self, m: &Obj, path: &str, key: &str, default: bool) -> R<bool> {
        match Self::field(m, key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.wrong_type(&child_path(path, key), "a boolean", v)),
        }
    }

    fn req_bool(&self, m: &Obj, path: &str, key: &str) -> R<bool> {
        let p = child_path(path, key);
        match Self::field(m, key) {
            None => Err(self.missing(&p)),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.wrong_type(&p, "a boolean", v)),
        }
    }

    fn enum_value<E: Copy>(
        &self,
        m: &Obj,
        path: &str,
        key: &str,
        default: Option<E>,
        parse: fn(&str) -> Option<E>,
        all: &[&str],
    ) -> R<E> {
        let p = child_path(path, key);
        match Self::field(m, key) {
            None => default.ok_or_else(|| self.missing(&p)),
            Some(Value::String(s)) => parse(s).ok_or_else(|| {
                self.unknown(
                    JsonErrorKind::UnknownEnumValue,
                    &p,
                    &format!("{key} value"),
                    s,
                    all,
                )
            }),
            Some(v) => Err(self.wrong_type(&p, "a string", v)),
        }
    }

    fn value_map(&self, m: &Obj, path: &str, key: &str) -> R<IndexMap<String, Value>> {
        match Self::field(m, key) {
            None => Ok(IndexMap::new()),
            Some(Value::Object(o)) => Ok(o.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            Some(v) => Err(self.wrong_type(&child_path(path, key), "an object", v)),
        }
    }

    fn string_map(&self, m: &Obj, path: &str, key: &str) -> R<IndexMap<String, String>> {
        let p = child_path(path, key);
        match Self::field(m, key) {
            None => Ok(IndexMap::new()),
            Some(Value::Object(o)) => o
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    other => Err(self.wrong_type(&child_path(&p, k), "a string", other)),
                })
                .collect(),
            Some(v) => Err(self.wrong_type(&p, "an object of strings", v)),
        }
    }

    fn rubric(&self, m: &Obj, path: &str, owner_id: &str) -> R<Option<Rubric>> {
        let p = child_path(path, "rubric");
        match Self::field(m, "rubric") {
            // Upstream writes branch rubrics as objects it cannot read back: ignore them.
            None | Some(Value::Object(_)) => Ok(None),
            Some(Value::String(raw)) => parse_rubric(owner_id, raw).map(Some).map_err(|e| {
                let msg = e.to_string();
                self.err(JsonErrorKind::InvalidRubric(Box::new(e)), &p, msg)
            }),
            Some(v) => Err(self.wrong_type(&p, "a string", v)),
        }
    }

    // --- structure ------------------------------------------------------------------------

    fn workflow(&self, v: &Value) -> R<Workflow> {
        let m = self.obj(v, "")?;
        if let Some(fv) = Self::field(m, "formatVersion") {
            match Self::as_int(fv) {
                Some(n) if n <= FORMAT_VERSION => {}
                Some(n) => {
                    return Err(self.err(
                        JsonErrorKind::UnsupportedFormatVersion,
                        "formatVersion",
                        format!(
                            "unsupported formatVersion {n} (this hensu reads up to {FORMAT_VERSION})"
                        ),
                    ));
                }
                None => return Err(self.wrong_type("formatVersion", "an integer", fv)),
            }
        }
        let id = self.req_str(m, "", "id")?;
        let version = self.str_or(m, "", "version", DEFAULT_VERSION)?;

        let mut agents = IndexMap::new();
        match Self::field(m, "agents") {
            None => {}
            Some(Value::Object(o)) => {
                for (k, av) in o {
                    let p = child_path("agents", k);
                    agents.insert(k.clone(), self.agent(av, &p, k)?);
                }
            }
            Some(other) => return Err(self.wrong_type("agents", "an object", other)),
        }

        let mut nodes = IndexMap::new();
        match Self::field(m, "nodes") {
            None => {}
            Some(Value::Object(o)) => {
                for (k, nv) in o {
                    let p = child_path("nodes", k);
                    nodes.insert(k.clone(), self.node(nv, &p, k)?);
                }
            }
            Some(other) => return Err(self.wrong_type("nodes", "an object", other)),
        }

        let start_node = self.req_str(m, "", "startNode")?;
        let config = match Self::field(m, "config") {
            None => None,
            Some(cv) => Some(self.config(cv, "config")?),
        };
        let metadata = match Self::field(m, "metadata") {
            None => Metadata {
                name: id.clone(),
                ..Metadata::default()
            },
            Some(mv) => self.metadata(mv, "metadata", &id)?,
        };
        let state_schema = match Self::field(m, "stateSchema") {
            None => None,
            Some(sv) => Some(self.schema(sv, "stateSchema")?),
        };
        Ok(Workflow {
            id,
            version,
            metadata,
            agents,
            nodes,
            start_node,
            config,
            state_schema,
        })
    }

    fn check_id(&self, m: &Obj, path: &str, key: &str) -> R<String> {
        match self.opt_str(m, path, "id")? {
            None => Ok(key.to_string()),
            Some(id) if id == key => Ok(id),
            Some(id) => Err(self.err(
                JsonErrorKind::IdMismatch,
                &child_path(path, "id"),
                format!("id '{id}' does not match its key '{key}'"),
            )),
        }
    }

    fn agent(&self, v: &Value, path: &str, key: &str) -> R<AgentConfig> {
        let m = self.obj(v, path)?;
        Ok(AgentConfig {
            id: self.check_id(m, path, key)?,
            role: self.req_str(m, path, "role")?,
            model: self.req_str(m, path, "model")?,
            temperature: self.f64_or(m, path, "temperature", DEFAULT_TEMPERATURE)?,
            max_tokens: self.opt_i64(m, path, "maxTokens")?,
            tools: self.str_list(m, path, "tools")?,
            instructions: self.opt_str(m, path, "instructions")?,
            top_p: self.opt_f64(m, path, "topP")?,
            frequency_penalty: self.opt_f64(m, path, "frequencyPenalty")?,
            presence_penalty: self.opt_f64(m, path, "presencePenalty")?,
            timeout: self.opt_i64(m, path, "timeout")?,
            max_tool_calls: self.opt_i64(m, path, "maxToolCalls")?,
            maintain_context: self.bool_or(m, path, "maintainContext", false)?,
        })
    }

    fn config(&self, v: &Value, path: &str) -> R<WorkflowConfig> {
        let m = self.obj(v, path)?;
        let observability = match Self::field(m, "observability") {
            None => Observability::default(),
            Some(ov) => {
                let op = child_path(path, "observability");
                let o = self.obj(ov, &op)?;
                Observability {
                    log_level: self.enum_value(
                        o,
                        &op,
                        "logLevel",
                        Some(LogLevel::Info),
                        LogLevel::parse,
                        &names(LogLevel::ALL),
                    )?,
                    export_metrics: self.bool_or(o, &op, "exportMetrics", true)?,
                }
            }
        };
        Ok(WorkflowConfig {
            max_execution_time: self.i64_or(
                m,
                path,
                "maxExecutionTime",
                DEFAULT_MAX_EXECUTION_TIME_MS,
            )?,
            checkpoints: self.bool_or(m, path, "checkpoints", false)?,
            checkpoint_interval: self.i64_or(
                m,
                path,
                "checkpointInterval",
                DEFAULT_CHECKPOINT_INTERVAL_MS,
            )?,
            observability,
            max_steps: self.i64_or(m, path, "maxSteps", DEFAULT_MAX_STEPS)?,
        })
    }

    fn metadata(&self, v: &Value, path: &str, id: &str) -> R<Metadata> {
        let m = self.obj(v, path)?;
        let created = match Self::field(m, "created") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            // Jackson with timestamps enabled writes epoch seconds as a number.
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(other) => {
                return Err(self.wrong_type(&child_path(path, "created"), "a string", other));
            }
        };
        Ok(Metadata {
            name: self.str_or(m, path, "name", id)?,
            description: self.opt_str(m, path, "description")?,
            author: self.opt_str(m, path, "author")?,
            created,
            tags: self.str_list(m, path, "tags")?,
        })
    }

    fn schema(&self, v: &Value, path: &str) -> R<StateSchema> {
        let m = self.obj(v, path)?;
        let vp = child_path(path, "variables");
        let items = match Self::field(m, "variables") {
            None => return Ok(StateSchema::default()),
            Some(Value::Array(items)) => items,
            Some(other) => return Err(self.wrong_type(&vp, "an array", other)),
        };
        let mut variables = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = index_path(&vp, i);
            let o = self.obj(item, &p)?;
            variables.push(StateVariable {
                name: self.req_str(o, &p, "name")?,
                var_type: self.enum_value(
                    o,
                    &p,
                    "type",
                    None,
                    VarType::parse,
                    &names(VarType::ALL),
                )?,
                is_input: self.bool_or(o, &p, "isInput", false)?,
                description: self.opt_str(o, &p, "description")?,
            });
        }
        Ok(StateSchema { variables })
    }

    fn rules(&self, m: &Obj, path: &str) -> R<Vec<TransitionRule>> {
        let p = child_path(path, "transitionRules");
        match Self::field(m, "transitionRules") {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, r)| self.rule(r, &index_path(&p, i)))
                .collect(),
            Some(other) => Err(self.wrong_type(&p, "an array", other)),
        }
    }

    fn node(&self, v: &Value, path: &str, key: &str) -> R<Node> {
        let m = self.obj(v, path)?;
        let id = self.check_id(m, path, key)?;
        let tp = child_path(path, "nodeType");
        let node_type = match Self::field(m, "nodeType") {
            None => return Err(self.missing(&tp)),
            Some(Value::String(s)) => s.as_str(),
            Some(other) => return Err(self.wrong_type(&tp, "a string", other)),
        };
        let Some(kind) = NodeKind::parse(node_type) else {
            return Err(self.unknown(
                JsonErrorKind::UnknownNodeType,
                &tp,
                "nodeType",
                node_type,
                &names(NodeKind::ALL),
            ));
        };
        let node = match kind {
            NodeKind::Standard => {
                let review_config = match Self::field(m, "reviewConfig") {
                    None => None,
                    Some(rv) => {
                        let rp = child_path(path, "reviewConfig");
                        let r = self.obj(rv, &rp)?;
                        Some(ReviewConfig {
                            mode: self.enum_value(
                                r,
                                &rp,
                                "mode",
                                None,
                                ReviewMode::parse,
                                &names(ReviewMode::ALL),
                            )?,
                            allow_backtrack: self.req_bool(r, &rp, "allowBacktrack")?,
                            allow_edit: self.req_bool(r, &rp, "allowEdit")?,
                        })
                    }
                };
                Node::Standard(StandardNode {
                    agent_id: self.opt_str(m, path, "agentId")?,
                    prompt: self.opt_str(m, path, "prompt")?,
                    rubric: self.rubric(m, path, &id)?,
                    review_config,
                    transition_rules: self.rules(m, path)?,
                    writes: self.str_list(m, path, "writes")?,
                    id,
                })
            }
            NodeKind::End => Node::End(EndNode {
                status: self.enum_value(
                    m,
                    path,
                    "status",
                    Some(ExitStatus::Success),
                    ExitStatus::parse,
                    &names(ExitStatus::ALL),
                )?,
                id,
            }),
            NodeKind::Action => {
                let ap = child_path(path, "actions");
                let actions = match Self::field(m, "actions") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, a)| self.action(a, &index_path(&ap, i)))
                        .collect::<R<Vec<_>>>()?,
                    Some(other) => return Err(self.wrong_type(&ap, "an array", other)),
                };
                Node::Action(ActionNode {
                    actions,
                    transition_rules: self.rules(m, path)?,
                    id,
                })
            }
            NodeKind::Generic => Node::Generic(GenericNode {
                executor_type: self.req_str(m, path, "executorType")?,
                config: self.value_map(m, path, "config")?,
                transition_rules: self.rules(m, path)?,
                rubric: self.rubric(m, path, &id)?,
                id,
            }),
            NodeKind::Parallel => {
                let bp = child_path(path, "branches");
                let branches = match Self::field(m, "branches") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, b)| self.branch(b, &index_path(&bp, i)))
                        .collect::<R<Vec<_>>>()?,
                    Some(other) => return Err(self.wrong_type(&bp, "an array", other)),
                };
                let consensus_config = match Self::field(m, "consensusConfig") {
                    None => None,
                    Some(cv) => {
                        let cp = child_path(path, "consensusConfig");
                        let c = self.obj(cv, &cp)?;
                        Some(ConsensusConfig {
                            judge_agent_id: self.opt_str(c, &cp, "judgeAgentId")?,
                            strategy: self.enum_value(
                                c,
                                &cp,
                                "strategy",
                                Some(ConsensusStrategy::MajorityVote),
                                ConsensusStrategy::parse,
                                &names(ConsensusStrategy::ALL),
                            )?,
                            threshold: self.opt_f64(c, &cp, "threshold")?,
                        })
                    }
                };
                Node::Parallel(ParallelNode {
                    branches,
                    consensus_config,
                    transition_rules: self.rules(m, path)?,
                    id,
                })
            }
            NodeKind::Fork => Node::Fork(ForkNode {
                targets: self.str_list(m, path, "targets")?,
                target_configs: self.value_map(m, path, "targetConfigs")?,
                transition_rules: self.rules(m, path)?,
                wait_for_all: self.bool_or(m, path, "waitForAll", false)?,
                id,
            }),
            NodeKind::Join => Node::Join(JoinNode {
                await_targets: self.str_list(m, path, "awaitTargets")?,
                merge_strategy: self.enum_value(
                    m,
                    path,
                    "mergeStrategy",
                    Some(MergeStrategy::CollectAll),
                    MergeStrategy::parse,
                    &names(MergeStrategy::ALL),
                )?,
                writes: self.str_list(m, path, "writes")?,
                exports: self.str_list(m, path, "exports")?,
                timeout_ms: self.i64_or(m, path, "timeoutMs", 0)?,
                fail_on_any_error: self.bool_or(m, path, "failOnAnyError", true)?,
                transition_rules: self.rules(m, path)?,
                id,
            }),
            NodeKind::SubWorkflow => Node::SubWorkflow(SubWorkflowNode {
                workflow_id: self.req_str(m, path, "workflowId")?,
                target_version: self.opt_str(m, path, "targetVersion")?,
                input_mapping: self.string_map(m, path, "inputMapping")?,
                output_mapping: self.string_map(m, path, "outputMapping")?,
                transition_rules: self.rules(m, path)?,
                id,
            }),
        };
        Ok(node)
    }

    fn branch(&self, v: &Value, path: &str) -> R<Branch> {
        let m = self.obj(v, path)?;
        let id = self.req_str(m, path, "id")?;
        Ok(Branch {
            agent_id: self.req_str(m, path, "agentId")?,
            prompt: self.opt_str(m, path, "prompt")?,
            rubric: self.rubric(m, path, &id)?,
            weight: self.f64_or(m, path, "weight", 1.0)?,
            yields: self.str_list(m, path, "yields")?,
            id,
        })
    }

    fn action(&self, v: &Value, path: &str) -> R<Action> {
        let m = self.obj(v, path)?;
        let tp = child_path(path, "type");
        match self.req_str(m, path, "type")?.as_str() {
            "send" => Ok(Action::Send {
                handler_id: self.req_str(m, path, "handlerId")?,
                payload: self.value_map(m, path, "payload")?,
                raw_payload: self.bool_or(m, path, "rawPayload", false)?,
            }),
            "execute" => Ok(Action::Execute {
                command_id: self.req_str(m, path, "commandId")?,
            }),
            other => Err(self.unknown(
                JsonErrorKind::UnknownActionType,
                &tp,
                "action type",
                other,
                &["send", "execute"],
            )),
        }
    }

    fn rule(&self, v: &Value, path: &str) -> R<TransitionRule> {
        let m = self.obj(v, path)?;
        let tp = child_path(path, "type");
        let ty = self.req_str(m, path, "type")?;
        let Some(kind) = RuleKind::parse(&ty) else {
            return Err(self.unknown(
                JsonErrorKind::UnknownRuleType,
                &tp,
                "transition rule type",
                &ty,
                &names(RuleKind::ALL),
            ));
        };
        let fb = |r: &Self| r.bool_or(m, path, "withFeedback", false);
        Ok(match kind {
            RuleKind::Success => TransitionRule::Success {
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Failure => TransitionRule::Failure {
                target_node: self.opt_str(m, path, "targetNode")?,
            },
            RuleKind::NoConsensus => TransitionRule::NoConsensus {
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Approval => TransitionRule::Approval {
                expected: self.req_bool(m, path, "expected")?,
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Always => TransitionRule::Always {
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Score => {
                let cp = child_path(path, "conditions");
                let conditions = match Self::field(m, "conditions") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, c)| self.score_condition(c, &index_path(&cp, i)))
                        .collect::<R<Vec<_>>>()?,
                    Some(other) => return Err(self.wrong_type(&cp, "an array", other)),
                };
                TransitionRule::Score {
                    conditions,
                    with_feedback: fb(self)?,
                }
            }
            RuleKind::Condition => TransitionRule::Condition {
                variable: self.req_str(m, path, "variable")?,
                predicate: self.predicate(m, path)?,
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Bounded => {
                let ip = child_path(path, "inner");
                let inner = match Self::field(m, "inner") {
                    None => return Err(self.missing(&ip)),
                    Some(iv) => self.rule(iv, &ip)?,
                };
                TransitionRule::Bounded {
                    namespace: self.enum_value(
                        m,
                        path,
                        "namespace",
                        None,
                        Namespace::parse,
                        &names(Namespace::ALL),
                    )?,
                    budget: match self.opt_i64(m, path, "budget")? {
                        Some(b) => b,
                        None => return Err(self.missing(&child_path(path, "budget"))),
                    },
                    otherwise: self.req_str(m, path, "otherwise")?,
                    escalation_with_feedback: self.bool_or(
                        m,
                        path,
                        "escalationWithFeedback",
                        false,
                    )?,
                    inner: Box::new(inner),
                }
            }
            RuleKind::RubricFail => TransitionRule::RubricFail,
        })
    }

    fn score_condition(&self, v: &Value, path: &str) -> R<ScoreCondition> {
        let m = self.obj(v, path)?;
        let op = self.req_str(m, path, "operator")?;
        let Some(operator) = ComparisonOperator::parse(&op) else {
            return Err(self.unknown(
                JsonErrorKind::UnknownOperator,
                &child_path(path, "operator"),
                "score operator",
                &op,
                &names(ComparisonOperator::ALL),
            ));
        };
        let range = match Self::field(m, "range") {
            None => None,
            Some(rv) => {
                let rp = child_path(path, "range");
                let r = self.obj(rv, &rp)?;
                let start = self.opt_f64(r, &rp, "start")?;
                let end = self.opt_f64(r, &rp, "end")?;
                match (start, end) {
                    (Some(start), Some(end)) => Some(ScoreRange { start, end }),
                    (None, _) => return Err(self.missing(&child_path(&rp, "start"))),
                    (_, None) => return Err(self.missing(&child_path(&rp, "end"))),
                }
            }
        };
        Ok(ScoreCondition {
            operator,
            value: self.opt_f64(m, path, "value")?,
            range,
            target_node: self.req_str(m, path, "targetNode")?,
        })
    }

    fn predicate(&self, m: &Obj, path: &str) -> R<ConditionPredicate> {
        let op = self.req_str(m, path, "operator")?;
        let ep = child_path(path, "expected");
        let expected = Self::field(m, "expected");
        let as_text = || -> R<String> {
            match expected {
                None => Err(self.missing(&ep)),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(Value::Bool(b)) => Ok(b.to_string()),
                Some(Value::Number(n)) => Ok(match n.as_i64() {
                    Some(i) => i.to_string(),
                    None => canonical_number(n.as_f64().unwrap_or(0.0)),
                }),
                Some(v) => Err(self.wrong_type(&ep, "a string, number or boolean", v)),
            }
        };
        let as_num = || -> R<f64> {
            match expected {
                None => Err(self.missing(&ep)),
                Some(Value::Number(n)) => n
                    .as_f64()
                    .ok_or_else(|| self.err(JsonErrorKind::WrongType, &ep, "number out of range")),
                Some(Value::String(s)) => s
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| {
                        self.err(
                            JsonErrorKind::WrongType,
                            &ep,
                            format!("expected a number, found string '{s}'"),
                        )
                    }),
                Some(v) => Err(self.wrong_type(&ep, "a number", v)),
            }
        };
        Ok(match op.as_str() {
            "EQ" => ConditionPredicate::Eq(as_text()?),
            "NEQ" => ConditionPredicate::Neq(as_text()?),
            "GT" => ConditionPredicate::Gt(as_num()?),
            "GTE" => ConditionPredicate::Gte(as_num()?),
            "LT" => ConditionPredicate::Lt(as_num()?),
            "LTE" => ConditionPredicate::Lte(as_num()?),
            other => {
                return Err(self.unknown(
                    JsonErrorKind::UnknownOperator,
                    &child_path(path, "operator"),
                    "condition operator",
                    other,
                    &["EQ", "NEQ", "GT", "GTE", "LT", "LTE"],
                ));
            }
        })
    }
}

fn names<E: WireName + Copy>(all: &[E]) -> Vec<&'static str> {
    all.iter().map(|e| e.wire_name()).collect()
}

/// The wire spelling of the generated enums (for error messages).
trait WireName {
    fn wire_name(self) -> &'static str;
}

macro_rules! impl_wire_name {
    ($($t:ty),*) => { $(impl WireName for $t { fn wire_name(self) -> &'static str { self.as_str() } })* };
}
impl_wire_name!(
    VarType,
    ReviewMode,
    ConsensusStrategy,
    MergeStrategy,
    ExitStatus,
    LogLevel,
    ComparisonOperator,
    RubricType,
    Namespace,
    NodeKind,
    RuleKind
);
