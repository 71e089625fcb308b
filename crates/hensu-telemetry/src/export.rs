//! Export over OTLP (HTTP/protobuf or gRPC) through the official SDK: a batching span processor on its
//! own thread (a full queue drops spans, it never blocks the caller) and the OTLP exporter.
//! hensu builds its spans itself ([`SpanRecord`], with their deterministic ids and times) and
//! hands each finished one to the SDK with those ids.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{
    SpanBuilder, SpanContext, SpanId, SpanKind, Status as OtelStatus, TraceContextExt, TraceFlags,
    TraceId, TraceState, Tracer as _,
};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value as OtelValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracer, SdkTracerProvider,
};

use crate::config::TelemetryConfig;
use crate::span::{Attr, Attrs, Kind, SpanRecord, Status, Trace};

/// A tracer provider exporting to one OTLP endpoint. Cheap to share (`Arc`); dropping it
/// without [`Exporter::shutdown`] may lose the last batch.
pub struct Exporter {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// The gRPC transport's runtime (tonic's channel lives on it; one worker thread), kept
    /// as long as the exporter; `None` over HTTP, whose client needs none.
    grpc_runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        // Not a blocking shutdown: an exporter may be dropped on an async task.
        if let Some(rt) = self.grpc_runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter").finish_non_exhaustive()
    }
}

impl Exporter {
    /// An exporter to `config`'s traces endpoint. Builds an HTTP client on a thread of its own
    /// (no network I/O yet).
    pub fn new(config: &TelemetryConfig) -> Result<Exporter, String> {
        let timeout = Duration::from_millis(config.timeout_ms);
        let (exporter, grpc_runtime) = match config.protocol {
            crate::config::Protocol::HttpProtobuf => {
                let e = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(config.traces_endpoint())
                    .with_timeout(timeout)
                    .build();
                (e, None)
            }
            crate::config::Protocol::Grpc => {
                // tonic's channel needs a Tokio runtime that runs while the batch thread
                // exports (hensuc run drives its own only inside block_on): one of its own.
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("hensu-otlp-grpc")
                    .enable_all()
                    .build()
                    .map_err(|e| format!("OTLP exporter: {e}"))?;
                let e = {
                    let _in_rt = rt.enter();
                    opentelemetry_otlp::SpanExporter::builder()
                        .with_tonic()
                        .with_endpoint(config.traces_endpoint())
                        .with_timeout(timeout)
                        .build()
                };
                (e, Some(rt))
            }
        };
        let exporter = exporter.map_err(|e| format!("OTLP exporter: {e}"))?;
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(config.max_queue_size)
            .with_scheduled_delay(Duration::from_millis(config.scheduled_delay_ms))
            .build();
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(batch)
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_sampler(Sampler::AlwaysOn)
            .with_resource(
                Resource::builder_empty()
                    .with_service_name(config.service_name.clone())
                    .build(),
            )
            .build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "hensu");
        Ok(Exporter {
            provider,
            tracer,
            grpc_runtime,
        })
    }

    /// Queues one finished span of the trace `trace_id`.
    pub fn emit(&self, trace_id: [u8; 16], span: &SpanRecord) {
        self.emit_owned(trace_id, span.clone());
    }

    /// [`Exporter::emit`] of a span the caller gives away: its strings move into the SDK's
    /// span instead of being copied.
    pub fn emit_owned(&self, trace_id: [u8; 16], span: SpanRecord) {
        let trace_id = TraceId::from_bytes(trace_id);
        let cx = match span.parent_span_id {
            Some(parent) => Context::new().with_remote_span_context(SpanContext::new(
                trace_id,
                SpanId::from_bytes(parent),
                TraceFlags::SAMPLED,
                true,
                TraceState::default(),
            )),
            None => Context::new(),
        };
        let SpanRecord {
            span_id,
            name,
            kind,
            start_unix_nano,
            end_unix_nano,
            status,
            attributes,
            events,
            ..
        } = span;
        let mut builder = SpanBuilder::from_name(name)
            .with_kind(match kind {
                Kind::Internal => SpanKind::Internal,
                Kind::Client => SpanKind::Client,
            })
            .with_start_time(at(start_unix_nano))
            .with_attributes(key_values(attributes))
            .with_status(match status {
                Status::Unset => OtelStatus::Unset,
                Status::Ok => OtelStatus::Ok,
                Status::Error(m) => OtelStatus::error(m),
            });
        if !events.is_empty() {
            builder = builder.with_events(
                events
                    .into_iter()
                    .map(|e| {
                        opentelemetry::trace::Event::new(
                            e.name,
                            at(e.time_unix_nano),
                            key_values(e.attributes),
                            0,
                        )
                    })
                    .collect(),
            );
        }
        builder.trace_id = Some(trace_id);
        builder.span_id = Some(SpanId::from_bytes(span_id));
        let mut s = self.tracer.build_with_context(builder, &cx);
        opentelemetry::trace::Span::end_with_timestamp(&mut s, at(end_unix_nano));
    }

    /// Queues every span of `trace`.
    pub fn emit_trace(&self, trace: &Trace) {
        for s in &trace.spans {
            self.emit(trace.trace_id, s);
        }
    }

    /// Sends what is queued and waits for it (bounded by the exporter's timeout).
    pub fn flush(&self) -> Result<(), String> {
        // The spans of the events so far are built on the trace thread first.
        crate::live::flush();
        self.provider
            .force_flush()
            .map_err(|e| format!("OTLP export: {e}"))
    }

    /// Flushes and stops the export thread.
    pub fn shutdown(&self) -> Result<(), String> {
        crate::live::flush();
        self.provider
            .shutdown()
            .map_err(|e| format!("OTLP export: {e}"))
    }
}

fn at(unix_nano: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(unix_nano)
}

fn key_values(attrs: Attrs) -> Vec<KeyValue> {
    attrs
        .into_iter()
        .map(|(k, v)| {
            let value = match v {
                Attr::Str(s) => OtelValue::from(s),
                Attr::Int(i) => OtelValue::I64(i),
                Attr::Float(f) => OtelValue::F64(f),
                Attr::Bool(b) => OtelValue::Bool(b),
                Attr::StrList(l) => OtelValue::Array(Array::String(
                    l.into_iter().map(StringValue::from).collect(),
                )),
            };
            KeyValue::new(k, value)
        })
        .collect()
}
