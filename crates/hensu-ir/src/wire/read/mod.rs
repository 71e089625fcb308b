//! Reading: wire JSON → [`Workflow`], with upstream's reader defaults and errors that carry a
//! JSON path and a byte span. Node, rule and action payloads are read in `nodes`.
//!
//! Why this walks a `serde_json::Value` instead of deriving `Deserialize` on the DTOs (tried with
//! `serde_path_to_error`): the checker's diagnostics for bad JSON are pinned by snapshots, and
//! serde changes them for the worse. An error inside an internally tagged node (`nodeType`) is
//! reported at the node (`nodes.a`) instead of the field (`nodes.a.transitionRules[0].targetNode`),
//! because the tagged enum buffers its content outside the path tracker; serde reports the first
//! error in *document* order, not the reader's field order (`id` before `nodes`); a missing field
//! is reported at its parent, a `null` required field as a type error, and a whole-number float
//! (`3.0`, which Jackson may write) as a type error for an integer field.

mod nodes;
mod saga;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::FORMAT_VERSION;
use super::source_map::{SourceMap, Span, child_path, index_path};
use crate::model::*;
use crate::rubric::{RubricError, parse_rubric};

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
        sm.shift(base);
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
        let mut saga = Saga::default();
        let mut timing = Timing::default();
        match Self::field(m, "nodes") {
            None => {}
            Some(Value::Object(o)) => {
                for (k, nv) in o {
                    let p = child_path("nodes", k);
                    nodes.insert(k.clone(), self.node(nv, &p, k)?);
                    if let Some(c) = self.node_compensation(nv, &p)? {
                        saga.node_compensations.insert(k.clone(), c);
                    }
                    let t = self.node_timing(nv, &p)?;
                    if !t.is_empty() {
                        timing.nodes.insert(k.clone(), t);
                    }
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
        saga.compensations = self.compensations(m)?;
        Ok(Workflow {
            id,
            version,
            metadata,
            agents,
            nodes,
            start_node,
            config,
            state_schema,
            saga,
            timing,
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
    RuleKind,
    ItemFailure
);
