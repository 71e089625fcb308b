//! Export settings: `[telemetry]` of hensu.toml, overridden by the standard OpenTelemetry
//! environment variables (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`,
//! `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, `OTEL_SERVICE_NAME`, `OTEL_SDK_DISABLED`).

/// The settings of `[telemetry]` in hensu.toml (docs/observability.md), as hensu-project
/// reads them (its `TelemetrySection` maps onto this one field for field).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TelemetrySection {
    /// Export traces of runs (default: when an endpoint is set).
    pub enabled: Option<bool>,
    /// The OTLP/HTTP base URL (`/v1/traces` is appended), e.g. `http://127.0.0.1:4318`, or
    /// the gRPC endpoint, e.g. `http://127.0.0.1:4317`.
    pub endpoint: Option<String>,
    /// `service.name` of the exported resource (default `hensu`).
    pub service_name: Option<String>,
    /// Export prompts and responses (redacted) as span attributes. Default off.
    pub capture_content: Option<bool>,
    /// The transport (default OTLP/HTTP with protobuf bodies).
    pub protocol: Option<Protocol>,
}

/// How spans travel to the collector (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: `POST <endpoint>/v1/traces` (port 4318 by convention).
    #[default]
    HttpProtobuf,
    /// `grpc`: the OTLP trace service over HTTP/2 (port 4317 by convention).
    Grpc,
}

impl Protocol {
    /// The value of the `OTEL_EXPORTER_OTLP_PROTOCOL` variable; `None` for another
    /// (`http/json` is not built in).
    pub fn parse(value: &str) -> Option<Protocol> {
        match value.trim().to_ascii_lowercase().as_str() {
            "http/protobuf" => Some(Protocol::HttpProtobuf),
            "grpc" => Some(Protocol::Grpc),
            _ => None,
        }
    }

    /// The endpoint of the specification for this transport.
    pub fn default_endpoint(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => DEFAULT_ENDPOINT,
            Protocol::Grpc => DEFAULT_GRPC_ENDPOINT,
        }
    }
}

/// The resolved settings of an enabled export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// OTLP/HTTP base URL, without `/v1/traces`; the gRPC endpoint as it is.
    pub endpoint: String,
    pub protocol: Protocol,
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

/// The default OTLP/gRPC endpoint of the specification.
pub const DEFAULT_GRPC_ENDPOINT: &str = "http://localhost:4317";

impl TelemetryConfig {
    /// Settings for `endpoint` with the defaults.
    pub fn for_endpoint(endpoint: &str) -> TelemetryConfig {
        TelemetryConfig {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            protocol: Protocol::HttpProtobuf,
            traces_endpoint: None,
            service_name: "hensu".into(),
            capture_content: false,
            timeout_ms: 10_000,
            max_queue_size: 4_096,
            scheduled_delay_ms: 1_000,
        }
    }

    /// The URL spans are posted to (for gRPC, the endpoint itself).
    pub fn traces_endpoint(&self) -> String {
        match &self.traces_endpoint {
            Some(t) => t.clone(),
            None if self.protocol == Protocol::Grpc => self.endpoint.clone(),
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
        // The traces variable wins over the general one; a value neither transport knows
        // leaves the default, as the specification asks (a note says so).
        let protocol = match env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
        {
            Some(v) => Protocol::parse(&v).unwrap_or_else(|| {
                eprintln!(
                    "note: OTEL_EXPORTER_OTLP_PROTOCOL={v}: not `grpc` or `http/protobuf`; \
                     traces go over http/protobuf"
                );
                Protocol::HttpProtobuf
            }),
            None => section.protocol.unwrap_or_default(),
        };
        let endpoint = env_endpoint
            .or(section.endpoint)
            .unwrap_or_else(|| protocol.default_endpoint().to_string());
        let mut config = TelemetryConfig::for_endpoint(&endpoint);
        config.protocol = protocol;
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
            protocol: None,
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

    #[test]
    fn the_protocol_comes_from_the_environment_or_the_section() {
        let c = TelemetryConfig::resolve(
            None,
            env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ]),
        )
        .expect("on");
        assert_eq!(c.protocol, Protocol::Grpc);
        assert_eq!(c.traces_endpoint(), "http://127.0.0.1:4317");
        let section = TelemetrySection {
            enabled: Some(true),
            protocol: Some(Protocol::Grpc),
            ..TelemetrySection::default()
        };
        let c = TelemetryConfig::resolve(Some(&section), env(&[])).expect("on");
        assert_eq!(c.traces_endpoint(), DEFAULT_GRPC_ENDPOINT);
        // The traces variable wins; an unknown value keeps http/protobuf.
        let c = TelemetryConfig::resolve(
            Some(&section),
            env(&[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")]),
        )
        .expect("on");
        assert_eq!(c.protocol, Protocol::HttpProtobuf);
        assert_eq!(c.traces_endpoint(), "http://localhost:4318/v1/traces");
        let c = TelemetryConfig::resolve(
            Some(&section),
            env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")]),
        )
        .expect("on");
        assert_eq!(c.protocol, Protocol::HttpProtobuf);
    }
}
