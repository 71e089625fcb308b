//! Prometheus metrics (`GET /metrics`): executions by status, step latency, running
//! executions (the queue depth of this in-process executor) and lease takeovers.

use std::time::Duration;

use hensu_store::RunStatus;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

pub const EXECUTIONS: &str = "hensu_executions_total";
pub const STEP_SECONDS: &str = "hensu_step_duration_seconds";
pub const RUNNING: &str = "hensu_executions_running";
pub const TAKEOVERS: &str = "hensu_lease_takeovers_total";

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
            metrics::counter!(TAKEOVERS).absolute(0);
            metrics::gauge!(RUNNING).set(0.0);
            handle
        })
        .clone()
}

pub fn started() {
    metrics::counter!(EXECUTIONS, "status" => "started").increment(1);
}

pub fn resumed() {
    metrics::counter!(EXECUTIONS, "status" => "resumed").increment(1);
}

pub fn finished(status: RunStatus) {
    metrics::counter!(EXECUTIONS, "status" => status.as_str()).increment(1);
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
