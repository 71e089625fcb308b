//! The live trace of a run (docs/observability.md): one OTLP exporter per process and
//! settings (its batch thread shared by every run, a server's included), and the listener
//! each run's face adds to its `RunCtx` — the same for `hensuc run`, `resume`, `worker` and the
//! server. Nothing is built when telemetry is off.

use std::sync::{Arc, Mutex};

use hensu_ir::Workflow;
use hensu_providers::Redactor;
use hensu_telemetry::{Exporter, TelemetryConfig, TelemetrySection, TraceListener};

/// The process's exporter, with the settings it was built for.
static EXPORTER: Mutex<Option<(TelemetryConfig, Arc<Exporter>)>> = Mutex::new(None);

/// The export settings of `[telemetry]` and the `OTEL_*` environment (`None`: off).
pub fn resolve(section: &hensu_project::TelemetrySection) -> Option<TelemetryConfig> {
    let section = TelemetrySection {
        enabled: section.enabled,
        endpoint: section.endpoint.clone(),
        service_name: section.service_name.clone(),
        capture_content: section.capture_content,
    };
    TelemetryConfig::resolve(Some(&section), |k| std::env::var(k).ok())
}

fn exporter(config: &TelemetryConfig) -> Result<Arc<Exporter>, String> {
    let mut slot = EXPORTER.lock().map_err(|_| "telemetry exporter poisoned")?;
    if let Some((c, e)) = slot.as_ref()
        && c == config
    {
        return Ok(e.clone());
    }
    let e = Arc::new(Exporter::new(config)?);
    if let Some((_, old)) = slot.replace((config.clone(), e.clone())) {
        let _ = old.flush();
    }
    Ok(e)
}

/// The listener of a run's live trace, or `None` when telemetry is off (or its exporter
/// cannot be built: the run goes on untraced, with a note on stderr).
pub fn trace_listener(
    config: Option<&TelemetryConfig>,
    workflow: &Workflow,
    tenant: Option<&str>,
    redactor: Arc<Redactor>,
) -> Option<Arc<TraceListener>> {
    let config = config?;
    match exporter(config) {
        Ok(e) => Some(Arc::new(TraceListener::new(
            Arc::new(workflow.clone()),
            tenant.map(str::to_string),
            e,
            redactor,
            config.capture_content,
        ))),
        Err(e) => {
            eprintln!("warning: traces are not exported: {e}");
            None
        }
    }
}

/// Sends the spans still queued (a command's run ends; its process exits next).
pub fn flush() {
    let exporter = EXPORTER
        .lock()
        .ok()
        .and_then(|s| s.as_ref().map(|(_, e)| e.clone()));
    if let Some(e) = exporter
        && let Err(err) = e.flush()
    {
        eprintln!("warning: {err}");
    }
}

/// Gives `trace` what the store holds of its run `run_id`: the `traceparent` it was started
/// under and, when it continues in `resumed` (a resume, a claim or a takeover), its start
/// (the root span starts when the stored run started).
pub async fn attach(
    trace: &TraceListener,
    store: &dyn hensu_store::StateStore,
    run_id: &str,
    resumed: Option<&hensu_runtime::RunState>,
) {
    let Ok(stored) = store.load(run_id).await else {
        return;
    };
    let traceparent = crate::launch::StoredWorkflow::decode(run_id, &stored.workflow)
        .ok()
        .and_then(|s| s.options.traceparent);
    trace.set_parent(traceparent.as_deref());
    if let Some(state) = resumed {
        trace.resuming(run_id, stored.record.started_at, state);
    }
}

/// The log span of everything a server or worker logs about run `run_id`: its id, tenant,
/// and the trace and root span ids its spans carry (`hensu_telemetry::ids::run_log_ids`), so a
/// JSON log line leads to the run's trace (docs/observability.md, *Logs*). Built whether or
/// not traces are exported: the ids are a hash, nothing is sent.
pub fn log_span(run_id: &str, tenant: Option<&str>, traceparent: Option<&str>) -> tracing::Span {
    let (trace_id, span_id) = hensu_telemetry::ids::run_log_ids(run_id, traceparent);
    let span = tracing::info_span!(
        "run",
        run_id,
        tenant = tracing::field::Empty,
        trace_id,
        span_id
    );
    if let Some(t) = tenant {
        span.record("tenant", t);
    }
    span
}
