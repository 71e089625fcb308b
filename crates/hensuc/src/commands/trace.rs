//! `hensuc runs trace RUN [--format json | --otlp URL]`: the OpenTelemetry trace of a stored
//! run, rebuilt from its run log (docs/observability.md): printed as a tree, as the JSON of
//! docs/schemas/trace.schema.json, or exported to an OTLP/HTTP endpoint with the same span ids
//! a live export of the run used.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use hensu_store::StateStore;
use hensu_telemetry::{Attr, Exporter, SpanRecord, Status, TelemetryConfig, Trace, ids};

use crate::exit;

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// The run id.
    pub id: String,
    /// Export the trace to this OTLP/HTTP endpoint (base URL, e.g. `http://127.0.0.1:4318`;
    /// `/v1/traces` is appended) instead of printing it.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
}

pub fn execute(
    store: &dyn StateStore,
    args: &TraceArgs,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let trace = crate::commands::session::block(hensu_host::trace::stored_trace(store, &args.id))?
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(url) = &args.otlp {
        let mut config = TelemetryConfig::for_endpoint(url);
        if let Ok(name) = std::env::var("OTEL_SERVICE_NAME")
            && !name.trim().is_empty()
        {
            config.service_name = name;
        }
        let exporter = Exporter::new(&config).map_err(|e| anyhow::anyhow!("{e}"))?;
        exporter.emit_trace(&trace);
        exporter.flush().map_err(|e| anyhow::anyhow!("{e}"))?;
        let _ = exporter.shutdown();
        eprintln!(
            "exported {} spans of trace {} to {}",
            trace.spans.len(),
            ids::hex(&trace.trace_id),
            config.traces_endpoint()
        );
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let mut out = std::io::stdout().lock();
    if as_json {
        let _ = writeln!(out, "{}", trace.to_json());
    } else {
        print_tree(&mut out, &trace);
    }
    Ok(ExitCode::from(exit::SUCCESS))
}

/// The spans as an indented tree, children in key order, with duration and status.
fn print_tree(out: &mut impl Write, trace: &Trace) {
    let _ = writeln!(
        out,
        "trace {}  run {}",
        ids::hex(&trace.trace_id),
        trace.run_id
    );
    let roots: Vec<&SpanRecord> = trace
        .spans
        .iter()
        .filter(|s| {
            s.parent_span_id
                .is_none_or(|p| !trace.spans.iter().any(|o| o.span_id == p))
        })
        .collect();
    for r in roots {
        print_span(out, trace, r, 0);
    }
}

fn print_span(out: &mut impl Write, trace: &Trace, span: &SpanRecord, depth: usize) {
    let ms = span.end_unix_nano.saturating_sub(span.start_unix_nano) / 1_000_000;
    let status = match &span.status {
        Status::Unset => String::new(),
        Status::Ok => "  ok".to_string(),
        Status::Error(m) => format!("  error: {m}"),
    };
    let tokens = match (
        span.attributes.get("gen_ai.usage.input_tokens"),
        span.attributes.get("gen_ai.usage.output_tokens"),
    ) {
        (Some(Attr::Int(i)), Some(Attr::Int(o))) => format!("  tokens {i}/{o}"),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "{:indent$}{}  {} ms{}{}  [{}]",
        "",
        span.name,
        ms,
        tokens,
        status,
        ids::hex(&span.span_id),
        indent = depth * 2 + 2
    );
    // Bounded depth: a malformed parent chain cannot recurse without end.
    if depth > 32 {
        return;
    }
    for child in trace
        .spans
        .iter()
        .filter(|c| c.parent_span_id == Some(span.span_id))
    {
        print_span(out, trace, child, depth + 1);
    }
}
