//! OpenTelemetry traces of hensu runs (docs/observability.md), after the GenAI semantic
//! conventions: a span per run (`invoke_workflow`), per node visit, per agent call (`chat`),
//! per action (`execute_tool`), per review wait and per compensation.
//!
//! The same trace comes two ways, with the same ids (a hash of the run id and the span's
//! key, [`ids`]):
//! - rebuilt from a stored run's log ([`rebuild()`], `hensuc runs trace`);
//! - live, from the run's events ([`live::TraceListener`]), exported over OTLP
//!   ([`export::Exporter`]) as the run goes.

pub mod config;
pub mod export;
pub mod ids;
pub mod live;
pub mod rebuild;
pub mod semconv;
pub mod span;

pub use config::{Protocol, TelemetryConfig, TelemetrySection};
pub use export::Exporter;
pub use ids::{Scope, SpanKey};
pub use live::{CollectingSink, SpanSink, TraceListener};
pub use rebuild::{RunLog, rebuild};
pub use semconv::RunInfo;
pub use span::{Attr, Attrs, Kind, SpanEvent, SpanRecord, Status, TRACE_FORMAT_VERSION, Trace};
