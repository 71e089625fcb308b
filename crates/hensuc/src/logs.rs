//! The logs of `hensuc serve`, `worker` and `mcp connect` (docs/observability.md, *Logs*): on stderr,
//! filtered by `RUST_LOG` (default `info`), as text for a person or as JSON lines for a log
//! pipeline (`--log-format json`).
//!
//! A JSON line is one object: `timestamp` (RFC 3339, UTC), `level`, `target`, `message`, the
//! event's fields, then the fields of the spans it happened in, outermost first, an inner
//! span's field winning. Everything a server or worker logs about a run happens inside the
//! run's span (`hensu_host::launch::telemetry::log_span`), so its lines carry `run_id`,
//! `tenant`, `trace_id` and `span_id` at the top level — the ids of the run's exported and
//! rebuilt trace. Request lines carry `method` and `path` (never headers).

use std::io::Write;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer};

/// How `serve` and `worker` write their logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Lines for a person (colours only on a terminal, never with `NO_COLOR`).
    #[default]
    Text,
    /// One JSON object per line, with the run's trace ids.
    Json,
}

/// Installs the process's log subscriber (once; a second call keeps the first).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // An error: a subscriber is installed already (tests calling twice); it stays.
    let _ = match format {
        LogFormat::Text => tracing_subscriber::fmt()
            .with_ansi(crate::output::Color::Auto.enabled_for_stderr())
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .try_init()
            .map_err(|e| e.to_string()),
        LogFormat::Json => tracing_subscriber::registry()
            .with(filter)
            .with(JsonLines::new(std::io::stderr))
            .try_init()
            .map_err(|e| e.to_string()),
    };
}

/// The fields of a span, kept in its extensions for the lines logged inside it.
struct SpanFields(Map<String, Value>);

/// Writes each event as one JSON line to what `make_writer` returns.
pub struct JsonLines<W> {
    make_writer: W,
}

impl<W, O> JsonLines<W>
where
    W: Fn() -> O + Send + Sync + 'static,
    O: Write,
{
    pub fn new(make_writer: W) -> JsonLines<W> {
        JsonLines { make_writer }
    }
}

impl<S, W, O> Layer<S> for JsonLines<W>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: Fn() -> O + Send + Sync + 'static,
    O: Write,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields(Map::new());
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanFields(fields.0));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let mut ext = span.extensions_mut();
            if let Some(SpanFields(map)) = ext.get_mut::<SpanFields>() {
                let mut fields = Fields(std::mem::take(map));
                values.record(&mut fields);
                *map = fields.0;
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let meta = event.metadata();
        let mut line = Map::new();
        line.insert(
            "timestamp".into(),
            jiff::Timestamp::now().to_string().into(),
        );
        line.insert("level".into(), meta.level().as_str().into());
        line.insert("target".into(), meta.target().into());
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        if let Some(message) = fields.0.shift_remove("message") {
            line.insert("message".into(), message);
        }
        line.extend(fields.0);
        if let Some(scope) = ctx.event_scope(event) {
            let mut spans = Vec::new();
            for span in scope.from_root() {
                spans.push(Value::from(span.name()));
                if let Some(SpanFields(map)) = span.extensions().get::<SpanFields>() {
                    for (k, v) in map {
                        // The event's own fields and the line's keys stay what they were.
                        line.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            line.insert("spans".into(), Value::Array(spans));
        }
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        // One write per line: concurrent lines never interleave inside a line.
        let _ = (self.make_writer)().write_all(text.as_bytes());
    }
}

/// Collects fields as JSON values (numbers and booleans as such, the rest as text).
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0.insert(field.name().into(), value.to_string().into());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("buffer").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn lines(f: impl FnOnce()) -> Vec<Value> {
        let buf = Buffer::default();
        let out = buf.clone();
        let subscriber = tracing_subscriber::registry().with(JsonLines::new(move || out.clone()));
        tracing::subscriber::with_default(subscriber, f);
        let text = String::from_utf8(buf.0.lock().expect("buffer").clone()).expect("utf-8");
        text.lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect()
    }

    #[test]
    fn a_line_carries_the_run_span_s_trace_ids_and_its_own_fields() {
        let got = lines(|| {
            let run = hensu_host::launch::telemetry::log_span("run-1", Some("acme"), None);
            let _g = run.enter();
            let http = tracing::info_span!("http", method = "POST", path = "/x");
            let _h = http.enter();
            tracing::warn!(attempt = 2_u64, ok = false, "lease lost");
        });
        let [line] = got.as_slice() else {
            panic!("one line: {got:?}")
        };
        let (trace, span) = hensu_telemetry::ids::run_log_ids("run-1", None);
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["message"], "lease lost");
        assert_eq!(line["attempt"], 2);
        assert_eq!(line["ok"], false);
        assert_eq!(line["run_id"], "run-1");
        assert_eq!(line["tenant"], "acme");
        assert_eq!(line["trace_id"], trace.as_str());
        assert_eq!(line["span_id"], span.as_str());
        assert_eq!(line["method"], "POST");
        assert_eq!(line["spans"], serde_json::json!(["run", "http"]));
        assert!(
            line["timestamp"]
                .as_str()
                .is_some_and(|t| t.parse::<jiff::Timestamp>().is_ok()),
            "{line}"
        );
    }

    #[test]
    fn lines_outside_a_run_have_no_trace_ids_and_a_local_run_no_tenant() {
        let got = lines(|| {
            tracing::info!("listening");
            let run = hensu_host::launch::telemetry::log_span("run-2", None, None);
            run.in_scope(|| tracing::info!("finished"));
        });
        assert_eq!(got.len(), 2);
        assert_eq!(got[0]["message"], "listening");
        assert!(got[0].get("trace_id").is_none() && got[0].get("spans").is_none());
        assert_eq!(got[1]["run_id"], "run-2");
        assert!(got[1].get("tenant").is_none(), "{}", got[1]);
    }
}
