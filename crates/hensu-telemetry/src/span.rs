//! The span model both sides build (the live listener and the rebuild from the run log) and
//! its documented JSON (`hensuc runs trace --format json`, docs/schemas/trace.schema.json).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use crate::ids::{self, SpanKey};

/// Version of the JSON of [`Trace::to_json`].
pub const TRACE_FORMAT_VERSION: u32 = 1;

/// An attribute value (the OTLP kinds hensu uses).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Attr {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    StrList(Vec<String>),
}

impl From<&str> for Attr {
    fn from(s: &str) -> Attr {
        Attr::Str(s.to_string())
    }
}
impl From<String> for Attr {
    fn from(s: String) -> Attr {
        Attr::Str(s)
    }
}
impl From<u64> for Attr {
    fn from(n: u64) -> Attr {
        Attr::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}
impl From<bool> for Attr {
    fn from(b: bool) -> Attr {
        Attr::Bool(b)
    }
}
impl From<f64> for Attr {
    fn from(f: f64) -> Attr {
        Attr::Float(f)
    }
}

/// Ordered attributes: the same span always serializes the same.
pub type Attrs = BTreeMap<String, Attr>;

/// OTLP span kind: `client` for calls that leave the engine (models, HTTP, commands).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Internal,
    Client,
}

/// OTLP status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Unset,
    Ok,
    Error(String),
}

/// A point in a span (a backtrack, a retry, a takeover).
#[derive(Clone, Debug, PartialEq)]
pub struct SpanEvent {
    pub name: String,
    pub time_unix_nano: u64,
    pub attributes: Attrs,
}

/// One finished span.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanRecord {
    pub key: SpanKey,
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: String,
    pub kind: Kind,
    pub start_unix_nano: u64,
    pub end_unix_nano: u64,
    pub status: Status,
    pub attributes: Attrs,
    pub events: Vec<SpanEvent>,
}

impl SpanRecord {
    /// A span of run `run_id` under `parent` (`None`: the root), its id from `key`.
    pub fn new(run_id: &str, key: SpanKey, parent: Option<&SpanKey>, name: String) -> Self {
        SpanRecord {
            span_id: ids::span_id(run_id, &key),
            parent_span_id: parent.map(|p| ids::span_id(run_id, p)),
            key,
            name,
            kind: Kind::Internal,
            start_unix_nano: 0,
            end_unix_nano: 0,
            status: Status::Unset,
            attributes: Attrs::new(),
            events: Vec::new(),
        }
    }

    pub fn attr(&mut self, key: &str, value: impl Into<Attr>) -> &mut Self {
        self.attributes.insert(key.to_string(), value.into());
        self
    }

    /// Start and end from unix milliseconds (an end before the start is clamped).
    pub fn times_ms(&mut self, start_ms: u64, end_ms: u64) -> &mut Self {
        self.start_unix_nano = start_ms.saturating_mul(1_000_000);
        self.end_unix_nano = end_ms.max(start_ms).saturating_mul(1_000_000);
        self
    }

    fn to_json(&self) -> Value {
        let status = match &self.status {
            Status::Unset => json!({"code": "unset"}),
            Status::Ok => json!({"code": "ok"}),
            Status::Error(m) => json!({"code": "error", "message": m}),
        };
        json!({
            "span_id": ids::hex(&self.span_id),
            "parent_span_id": self.parent_span_id.map(|p| ids::hex(&p)),
            "name": self.name,
            "kind": self.kind,
            "start_time_unix_nano": self.start_unix_nano,
            "end_time_unix_nano": self.end_unix_nano,
            "status": status,
            "attributes": self.attributes,
            "events": self.events.iter().map(|e| json!({
                "name": e.name,
                "time_unix_nano": e.time_unix_nano,
                "attributes": e.attributes,
            })).collect::<Vec<_>>(),
        })
    }
}

/// The spans of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub run_id: String,
    pub trace_id: [u8; 16],
    /// In key order ([`sort_spans`]).
    pub spans: Vec<SpanRecord>,
}

impl Trace {
    /// The trace `trace_id` of run `run_id` ([`crate::RunInfo::trace_id`]).
    pub fn new(run_id: &str, trace_id: [u8; 16], mut spans: Vec<SpanRecord>) -> Trace {
        sort_spans(&mut spans);
        Trace {
            run_id: run_id.to_string(),
            trace_id,
            spans,
        }
    }

    /// The documented JSON (docs/schemas/trace.schema.json).
    pub fn to_json(&self) -> Value {
        json!({
            "format_version": TRACE_FORMAT_VERSION,
            "run_id": self.run_id,
            "trace_id": ids::hex(&self.trace_id),
            "spans": self.spans.iter().map(SpanRecord::to_json).collect::<Vec<_>>(),
        })
    }
}

/// Sorts spans by their key (run, then node visits by step, agent calls, actions, reviews,
/// compensations): the order depends on what ran, never on timing, so a live export and a
/// rebuild list the same spans in the same order.
pub fn sort_spans(spans: &mut [SpanRecord]) {
    spans.sort_by(|a, b| a.key.cmp(&b.key));
}
