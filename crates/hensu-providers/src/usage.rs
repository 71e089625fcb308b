//! Usage accounting for the run summary.

use std::sync::Mutex;
use std::time::Duration;

use indexmap::IndexMap;
use serde::Serialize;

/// Totals of one provider (or of the whole run).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UsageCounters {
    /// Agent calls (one `execute`).
    pub calls: u64,
    pub failed_calls: u64,
    /// Model requests that got an answer or failed (tool turns and corrections included).
    pub requests: u64,
    pub retries: u64,
    pub tool_calls: u64,
    pub corrections: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Wall time of the agent calls.
    pub latency_ms: u64,
}

impl UsageCounters {
    fn add(&mut self, r: &CallRecord) {
        self.calls += 1;
        if !r.success {
            self.failed_calls += 1;
        }
        self.requests += u64::from(r.requests);
        self.retries += u64::from(r.retries);
        self.tool_calls += u64::from(r.tool_calls);
        self.input_tokens += r.input_tokens;
        self.output_tokens += r.output_tokens;
        self.latency_ms += u64::try_from(r.latency.as_millis()).unwrap_or(u64::MAX);
    }
}

/// A snapshot of the run's usage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UsageSummary {
    #[serde(flatten)]
    pub total: UsageCounters,
    pub by_provider: IndexMap<String, UsageCounters>,
}

/// One agent call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallRecord {
    pub provider: String,
    pub success: bool,
    pub requests: u32,
    pub retries: u32,
    pub tool_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub latency: Duration,
}

/// Accumulates usage over a run (shared by every agent of the built providers).
#[derive(Debug, Default)]
pub struct UsageTotals {
    inner: Mutex<UsageSummary>,
}

impl UsageTotals {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, UsageSummary> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records one agent call.
    pub fn record(&self, record: &CallRecord) {
        let mut s = self.lock();
        s.total.add(record);
        s.by_provider
            .entry(record.provider.clone())
            .or_default()
            .add(record);
    }

    /// Records one structured-output correction.
    pub fn record_correction(&self, provider: &str) {
        let mut s = self.lock();
        s.total.corrections += 1;
        s.by_provider
            .entry(provider.to_string())
            .or_default()
            .corrections += 1;
    }

    /// Records the usage of an answer produced elsewhere (e.g. by the runtime from
    /// `AgentResponse.usage`, for agents not built by this crate).
    pub fn record_response(
        &self,
        provider: &str,
        response: &hensu_runtime::AgentResponse,
        latency: Duration,
    ) {
        let usage = response.usage.unwrap_or_default();
        self.record(&CallRecord {
            provider: provider.to_string(),
            success: true,
            requests: 1,
            retries: 0,
            tool_calls: 0,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            latency,
        });
    }

    /// The totals so far.
    pub fn snapshot(&self) -> UsageSummary {
        self.lock().clone()
    }
}
