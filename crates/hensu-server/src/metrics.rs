//! Prometheus metrics (`GET /metrics`, docs/observability.md, *Metrics*): executions by
//! status and tenant, step latency, running executions, lease takeovers, the store's queue
//! depth, and model calls, tokens, cost and latency per tenant and model.
//!
//! Label values come from tenants' tokens and workflows, so their number is bounded: past
//! [`MAX_LABEL_VALUES`] distinct tenants (or models) a new one is counted as `_other`.

use std::time::Duration;

use hensu_store::RunStatus;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

pub const EXECUTIONS: &str = "hensu_executions_total";
pub const STEP_SECONDS: &str = "hensu_step_duration_seconds";
pub const RUNNING: &str = "hensu_executions_running";
pub const TAKEOVERS: &str = "hensu_lease_takeovers_total";
pub const QUEUE_DEPTH: &str = "hensu_queue_depth";
pub const MODEL_CALLS: &str = "hensu_model_calls_total";
pub const MODEL_TOKENS: &str = "hensu_model_tokens_total";
pub const MODEL_COST: &str = "hensu_model_cost_micros_total";
pub const MODEL_SECONDS: &str = "hensu_model_call_duration_seconds";

/// Distinct values a label takes before new ones are counted as `_other`.
pub const MAX_LABEL_VALUES: usize = 256;

/// Installs the process-wide recorder once; later calls get the same handle.
pub fn install() -> PrometheusHandle {
    static HANDLE: std::sync::OnceLock<PrometheusHandle> = std::sync::OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    metrics_exporter_prometheus::Matcher::Full(STEP_SECONDS.into()),
                    &[0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0, 120.0],
                )
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        metrics_exporter_prometheus::Matcher::Full(MODEL_SECONDS.into()),
                        &[0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0],
                    )
                })
                .map(PrometheusBuilder::build_recorder)
                .unwrap_or_else(|_| PrometheusBuilder::new().build_recorder());
            let handle = recorder.handle();
            // Another recorder already installed (tests in one process): ours still renders.
            let _ = metrics::set_global_recorder(recorder);
            metrics::describe_counter!(
                EXECUTIONS,
                "Executions by event: started, resumed, or the status they ended in"
            );
            metrics::describe_histogram!(STEP_SECONDS, "Time between two node boundaries of a run");
            metrics::describe_gauge!(RUNNING, "Executions running in this process");
            metrics::describe_counter!(
                TAKEOVERS,
                "Runs taken over from an owner whose lease expired"
            );
            metrics::describe_gauge!(
                QUEUE_DEPTH,
                "Runs in the store waiting for a server or worker: queued, or orphaned by an \
                 owner whose lease expired"
            );
            metrics::describe_counter!(MODEL_CALLS, "Model calls by tenant, model and outcome");
            metrics::describe_counter!(
                MODEL_TOKENS,
                "Tokens by tenant, model and direction (input, output), as providers report them"
            );
            metrics::describe_counter!(
                MODEL_COST,
                "Cost of model calls by tenant and model, in millionths of the money of \
                 [pricing] (models without a price are not counted)"
            );
            metrics::describe_histogram!(MODEL_SECONDS, "Duration of a model call");
            metrics::counter!(TAKEOVERS).absolute(0);
            metrics::gauge!(RUNNING).set(0.0);
            handle
        })
        .clone()
}

pub fn started(tenant: &str) {
    execution(tenant, "started");
}

pub fn resumed(tenant: &str) {
    execution(tenant, "resumed");
}

pub fn finished(tenant: &str, status: RunStatus) {
    execution(tenant, status.as_str());
}

fn execution(tenant: &str, status: &'static str) {
    let tenant = TENANTS.label(tenant);
    metrics::counter!(EXECUTIONS, "status" => status, "tenant" => tenant).increment(1);
}

pub fn queue_depth(n: u64) {
    metrics::gauge!(QUEUE_DEPTH).set(n as f64);
}

pub fn step_latency(d: Duration) {
    metrics::histogram!(STEP_SECONDS).record(d.as_secs_f64());
}

pub fn running_delta(d: f64) {
    metrics::gauge!(RUNNING).increment(d);
}

pub fn takeover() {
    metrics::counter!(TAKEOVERS).increment(1);
}

static TENANTS: BoundedLabel = BoundedLabel::new();
static MODELS: BoundedLabel = BoundedLabel::new();

/// The values one label has taken, at most [`MAX_LABEL_VALUES`].
struct BoundedLabel(std::sync::Mutex<Option<std::collections::HashSet<String>>>);

impl BoundedLabel {
    const fn new() -> BoundedLabel {
        BoundedLabel(std::sync::Mutex::new(None))
    }

    /// `value`, or `_other` once the label has its maximum of other values.
    fn label(&self, value: &str) -> String {
        let Ok(mut seen) = self.0.lock() else {
            return "_other".into();
        };
        let seen = seen.get_or_insert_with(Default::default);
        if seen.contains(value) {
            return value.into();
        }
        if seen.len() < MAX_LABEL_VALUES {
            seen.insert(value.into());
            return value.into();
        }
        "_other".into()
    }
}

/// Counts a run's model calls, tokens, cost and latency under its tenant (a listener of each
/// server run, next to its trace).
pub struct ModelMetrics {
    tenant: String,
    pricing: indexmap::IndexMap<String, hensu_project::PriceEntry>,
}

impl ModelMetrics {
    pub fn new(
        tenant: &str,
        pricing: indexmap::IndexMap<String, hensu_project::PriceEntry>,
    ) -> ModelMetrics {
        ModelMetrics {
            tenant: tenant.into(),
            pricing,
        }
    }
}

impl hensu_runtime::ExecutionListener for ModelMetrics {
    fn on_event(&self, event: &hensu_runtime::Event<'_>) {
        let hensu_runtime::Event::AgentCall {
            model,
            error,
            duration_us,
            usage,
            ..
        } = event
        else {
            return;
        };
        let tenant = TENANTS.label(&self.tenant);
        let model_label = MODELS.label(model);
        let outcome = if error.is_some() { "error" } else { "ok" };
        metrics::counter!(MODEL_CALLS, "tenant" => tenant.clone(), "model" => model_label.clone(), "outcome" => outcome)
            .increment(1);
        metrics::histogram!(MODEL_SECONDS, "tenant" => tenant.clone(), "model" => model_label.clone())
            .record(Duration::from_micros(*duration_us).as_secs_f64());
        let Some(usage) = usage else {
            return;
        };
        for (direction, n) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
        ] {
            metrics::counter!(MODEL_TOKENS, "tenant" => tenant.clone(), "model" => model_label.clone(), "direction" => direction)
                .increment(n);
        }
        if let Some(price) = self.pricing.get(*model) {
            let cost = (usage.input_tokens as f64 * price.input_per_mtok
                + usage.output_tokens as f64 * price.output_per_mtok)
                / 1_000_000.0;
            // Counters are integers: the cost is counted in millionths.
            metrics::counter!(MODEL_COST, "tenant" => tenant, "model" => model_label)
                .increment((cost * 1_000_000.0).round() as u64);
        }
    }
}
