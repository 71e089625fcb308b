//! The one serde type of `hensu.toml`: [`ProjectConfig`], a field per top-level section.
//!
//! Sections whose settings a crate already owns keep their type there (`[providers]`, `[retry]`,
//! `[circuit_breaker]`, `[timeouts]`, `[structured_output]` in hensu-providers, `[mcp]` in
//! hensu-mcp); the others are defined here. Policy, the same for every section: inside a section
//! an unknown key is an error (E0907: a typo, or a literal secret, must not pass silently); an
//! unknown top-level section is a warning (W0903) and is ignored. To add a section, add a field
//! with its type here (`#[serde(deny_unknown_fields)]` on that type) and a line to docs/cli.md,
//! *Project file*; the loader ([`crate::ProjectFile`]) needs no change.

use std::net::SocketAddr;
use std::path::PathBuf;

use hensu_mcp::McpConfig;
use hensu_providers::{
    CircuitBreakerConfig, ProviderEntry, ProvidersConfig, RetryConfig, StructuredOutputConfig,
    TimeoutConfig,
};
use indexmap::IndexMap;
use serde::Deserialize;

use crate::Limits;
use toml::Spanned;

/// Every section of `hensu.toml`, each defaulted when absent.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectConfig {
    /// `[providers.NAME]`: model providers (hensu-providers).
    pub providers: IndexMap<String, ProviderEntry>,
    /// `[retry]` of model requests.
    pub retry: RetryConfig,
    /// `[circuit_breaker]` of model providers.
    pub circuit_breaker: CircuitBreakerConfig,
    /// `[timeouts]` of model requests.
    pub timeouts: TimeoutConfig,
    /// `[structured_output]`: corrective re-prompts.
    pub structured_output: StructuredOutputConfig,
    /// `[mcp]`: MCP servers and call limits (hensu-mcp).
    pub mcp: McpConfig,
    /// `[network]`: what an offline run may reach.
    pub network: NetworkConfig,
    /// `[lints]`: `CODE = "allow" | "warn" | "deny"`, with the spans of key and value.
    pub lints: IndexMap<Spanned<String>, Spanned<String>>,
    /// `[pricing."MODEL"]`: money per million tokens, for the cost bound (docs/bounds.md).
    pub pricing: IndexMap<String, PriceEntry>,
    /// `[bounds]`: assumptions of the static bound (docs/bounds.md).
    pub bounds: BoundsSection,
    /// `[store]`: where durable runs are kept.
    pub store: StoreSection,
    /// `[server]`: `hensuc serve` (docs/server.md).
    pub server: ServerSection,
    /// `[handlers.NAME]`: action handlers of `send("NAME", …)` (docs/mcp.md, *Declared action
    /// handlers*).
    pub handlers: IndexMap<String, crate::HandlerEntry>,
    /// `[telemetry]`: OpenTelemetry traces of runs (docs/observability.md).
    pub telemetry: TelemetrySection,
    /// `[[schedules]]`: workflows `hensuc serve` starts on a cron cadence (docs/schedules.md).
    pub schedules: Vec<crate::schedules::ScheduleEntry>,
    /// `[budget]`: the most a schedule may cost per day (docs/schedules.md).
    pub budget: crate::schedules::BudgetSection,
    /// `[retention]`: which finished runs a purge deletes (docs/retention.md; the type is
    /// hensu-store's, which applies it).
    pub retention: hensu_store::retention::RetentionSection,
}

/// `[telemetry]`: export of run traces over OTLP/HTTP; the `OTEL_*` environment variables win
/// over it (hensu-telemetry resolves the two).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetrySection {
    /// Export traces (default: when `endpoint` is set).
    pub enabled: Option<bool>,
    /// The OTLP/HTTP base URL (`/v1/traces` is appended), e.g. `http://127.0.0.1:4318`, or
    /// the gRPC endpoint (`protocol = "grpc"`), e.g. `http://127.0.0.1:4317`.
    pub endpoint: Option<String>,
    /// `service.name` of the exported resource (default `hensu`).
    pub service_name: Option<String>,
    /// Export prompts and responses (redacted) as span attributes. Default off.
    pub capture_content: Option<bool>,
    /// `"http/protobuf"` (the default) or `"grpc"`.
    pub protocol: Option<OtlpProtocol>,
}

/// `[telemetry] protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum OtlpProtocol {
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    #[serde(rename = "grpc")]
    Grpc,
}

/// `[network]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkConfig {
    /// Host names an offline (stub) run may really send webhook and api-caller requests to.
    pub allow_hosts: Vec<String>,
}

/// `[pricing."MODEL"]`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceEntry {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

/// `[bounds]`: each unset key keeps the analysis' default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoundsSection {
    pub default_max_tokens: Option<u64>,
    pub input_tokens_per_call: Option<u64>,
    pub auto_backtrack_cap: Option<u64>,
}

/// `[store]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreSection {
    /// A `postgres://…` URL or a SQLite path (`HENSU_DATABASE_URL` wins over it).
    pub url: Option<String>,
    /// `commit = "pipelined" | "each-step"`: how durable runs commit their steps
    /// (docs/cli.md, *Durable runs on many machines*; unset: pipelined).
    pub commit: Option<hensu_store::CommitMode>,
}

/// `[server]`: settings of `hensuc serve`; its flags and environment variables win over them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSection {
    pub listen: Option<SocketAddr>,
    pub store: Option<String>,
    /// A PEM file with the public key that verifies tenants' JWTs (relative to the project).
    pub jwt_public_key_file: Option<PathBuf>,
    pub jwt_issuer: Option<String>,
    pub jwt_audience: Option<String>,
    /// Tenant `T`'s stub scenarios under `<tenant_stubs>/T/` (relative to the project; JWT
    /// mode only: without it a server with tenants reads no stub files).
    pub tenant_stubs: Option<PathBuf>,
    /// `[server.limits]`: connection and resource limits.
    pub limits: Limits,
    /// `[server.egress]`: what tenants' workflows may make the server reach.
    pub egress: EgressSection,
    /// A URL told (`execution.review_requested`, JSON) when a run pauses for a review
    /// (docs/server.md, *Review notifications*).
    pub review_webhook: Option<String>,
    /// A `jwt_secret` key, which `hensuc serve` refuses: secrets are never read from
    /// `hensu.toml`. Its value is never kept.
    pub jwt_secret: Option<SecretInFile>,
}

/// `[server.egress]` (docs/server.md, *Egress*): a server run's `webhook` and `api-caller`
/// requests may not reach loopback, private, link-local and other non-public addresses
/// (hensu-egress) except what `allow` lists.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EgressSection {
    /// Host names (exact, case-insensitive) and address ranges (`10.1.2.0/24`, or one
    /// address) the server's runs may reach although they are not public. Each entry is
    /// checked by [`hensu_egress::AllowEntry::parse`] (E0906 otherwise).
    pub allow: Vec<String>,
}

impl EgressSection {
    /// The policy of a server run under this section (the file's check refused bad entries).
    pub fn policy(&self) -> Result<hensu_egress::EgressPolicy, String> {
        hensu_egress::EgressPolicy::from_entries(&self.allow)
    }
}

/// A secret written in `hensu.toml` where only the environment may hold it: its presence is
/// recorded, its value dropped unread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SecretInFile;

impl<'de> Deserialize<'de> for SecretInFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SecretInFile, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| SecretInFile)
    }
}

impl ProjectConfig {
    /// The provider sections as hensu-providers takes them.
    pub fn providers_config(&self) -> ProvidersConfig {
        ProvidersConfig {
            providers: self.providers.clone(),
            retry: self.retry,
            circuit_breaker: self.circuit_breaker,
            timeouts: self.timeouts,
            structured_output: self.structured_output,
        }
    }

    /// The options of the static bound: `[pricing]`, `[bounds]`, `[structured_output]`.
    pub fn bounds_options(&self) -> hensu_sema::bounds::BoundsOptions {
        let mut options = hensu_sema::bounds::BoundsOptions::default();
        for (model, price) in &self.pricing {
            options.pricing.insert(
                model.clone(),
                hensu_sema::bounds::Price {
                    input_per_mtok: price.input_per_mtok,
                    output_per_mtok: price.output_per_mtok,
                },
            );
        }
        let b = self.bounds;
        if let Some(v) = b.default_max_tokens {
            options.default_max_tokens = v;
        }
        if let Some(v) = b.input_tokens_per_call {
            options.input_tokens_per_call = v;
        }
        if let Some(v) = b.auto_backtrack_cap {
            options.auto_backtrack_cap = v;
        }
        options.max_corrections = self.structured_output.max_corrections;
        options
    }
}
