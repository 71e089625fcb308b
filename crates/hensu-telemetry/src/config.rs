//! Export settings: `[telemetry]` of hensu.toml, overridden by the standard OpenTelemetry
//! environment variables (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_SDK_DISABLED`).

/// The settings of `[telemetry]` in hensu.toml (docs/observability.md), as hensu-project
/// reads them (its `TelemetrySection` maps onto this one field for field).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TelemetrySection {
    /// Export traces of runs (default: when an endpoint is set).
    pub enabled: Option<bool>,
    /// The OTLP/HTTP base URL (`/v1/traces` is appended), e.g. `http://127.0.0.1:4318`.
    pub endpoint: Option<String>,
    /// `service.name` of the exported resource (default `hensu`).
    pub service_name: Option<String>,
    /// Export prompts and responses (redacted) as span attributes. Default off.
    pub capture_content: Option<bool>,
}

/// The resolved settings of an enabled export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// OTLP/HTTP base URL, without `/v1/traces`.
    pub endpoint: String,
    /// A full traces URL that wins over `endpoint` (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
    pub traces_endpoint: Option<String>,
    pub service_name: String,
    pub capture_content: bool,
    pub timeout_ms: u64,
    pub max_queue_size: usize,
    pub scheduled_delay_ms: u64,
}

/// The default OTLP/HTTP endpoint of the specification.
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

impl TelemetryConfig {
    /// Settings for `endpoint` with the defaults.
    pub fn for_endpoint(endpoint: &str) -> TelemetryConfig {
        TelemetryConfig {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            traces_endpoint: None,
            service_name: "hensu".into(),
            capture_content: false,
            timeout_ms: 10_000,
            max_queue_size: 4_096,
            scheduled_delay_ms: 1_000,
        }
    }

    /// The URL spans are posted to.
    pub fn traces_endpoint(&self) -> String {
        match &self.traces_endpoint {
            Some(t) => t.clone(),
            None if self.endpoint.ends_with("/v1/traces") => self.endpoint.clone(),
            None => format!("{}/v1/traces", self.endpoint),
        }
    }

    /// The settings from `[telemetry]` and the environment (`env` looks a variable up), or
    /// `None` when export is off: the default, `OTEL_TRACES_EXPORTER=none`,
    /// `OTEL_SDK_DISABLED=true` or `enabled = false` without an environment override.
    pub fn resolve(
        section: Option<&TelemetrySection>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Option<TelemetryConfig> {
        let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return None;
        }
        let exporter = env("OTEL_TRACES_EXPORTER").map(|v| v.to_ascii_lowercase());
        if exporter.as_deref() == Some("none") {
            return None;
        }
        let section = section.cloned().unwrap_or_default();
        let env_endpoint = env("OTEL_EXPORTER_OTLP_ENDPOINT");
        let env_traces = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        let asked = exporter.as_deref() == Some("otlp")
            || env_endpoint.is_some()
            || env_traces.is_some()
            || section.enabled.unwrap_or(section.endpoint.is_some());
        if !asked {
            return None;
        }
        let endpoint = env_endpoint
            .or(section.endpoint)
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        let mut config = TelemetryConfig::for_endpoint(&endpoint);
        config.traces_endpoint = env_traces;
        if let Some(name) = env("OTEL_SERVICE_NAME").or(section.service_name) {
            config.service_name = name;
        }
        config.capture_content = section.capture_content.unwrap_or(false);
        Some(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn off_by_default_on_with_an_endpoint() {
        assert_eq!(TelemetryConfig::resolve(None, env(&[])), None);
        let c = TelemetryConfig::resolve(
            None,
            env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/")]),
        );
        let c = c.expect("on");
        assert_eq!(c.traces_endpoint(), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(c.service_name, "hensu");
    }

    #[test]
    fn environment_overrides_the_section() {
        let section = TelemetrySection {
            enabled: Some(true),
            endpoint: Some("http://collector:4318".into()),
            service_name: Some("from-toml".into()),
            capture_content: Some(true),
        };
        let c = TelemetryConfig::resolve(Some(&section), env(&[("OTEL_SERVICE_NAME", "svc")]))
            .expect("on");
        assert_eq!(c.service_name, "svc");
        assert_eq!(c.endpoint, "http://collector:4318");
        assert!(c.capture_content);
        let off =
            TelemetryConfig::resolve(Some(&section), env(&[("OTEL_TRACES_EXPORTER", "none")]));
        assert_eq!(off, None);
    }
}
