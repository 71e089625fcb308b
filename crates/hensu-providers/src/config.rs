//! The provider part of the project file `hensu.toml`.
//!
//! ```toml
//! [providers.local]
//! kind = "openai"                 # anthropic | openai | gemini
//! base_url = "http://127.0.0.1:11434/v1"
//! api_key_env = "LOCAL_API_KEY"   # optional; must end in _API_KEY
//! models = ["llama*", "qwen*"]
//! priority = 200
//!
//! [retry]
//! max_attempts = 3
//! base_delay_ms = 500
//! max_delay_ms = 30000
//!
//! [circuit_breaker]
//! failure_threshold = 5
//! cool_down_ms = 30000
//!
//! [timeouts]
//! call_ms = 120000
//!
//! [structured_output]
//! max_corrections = 1
//! ```
//!
//! The file is parsed by hensu-project (its `ProjectConfig` holds these types, so each section
//! is read with the same error policy and spans); this module owns the types and [`validate`],
//! the rules `serde` cannot express. Inside these sections unknown keys are errors (so a typo, or
//! a literal `api_key = "…"`, is reported instead of silently ignored).

use std::time::Duration;

use indexmap::IndexMap;
use serde::Deserialize;

/// A wire protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
    /// OpenAI-compatible chat completions (`POST {base}/chat/completions`).
    #[serde(rename = "openai")]
    OpenAi,
    /// Google Gemini (`POST {base}/v1beta/models/{model}:generateContent`).
    Gemini,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Gemini => "gemini",
        }
    }
}

/// `[providers.NAME]`. Every field is optional for the built-in names (`anthropic`, `openai`,
/// `gemini`, `deepseek`), whose defaults it overrides; `kind` is required for other names.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    pub kind: Option<ProviderKind>,
    pub base_url: Option<String>,
    /// The environment variable holding the key (`*_API_KEY`); `""` = no authentication.
    pub api_key_env: Option<String>,
    /// Model-id globs (`*` any run, `?` one character).
    pub models: Option<Vec<String>>,
    /// Higher wins among providers serving a model (built-ins: 100; stubs: 1000 when forced).
    pub priority: Option<i32>,
    /// `false` removes the provider (for built-ins).
    pub enabled: Option<bool>,
}

/// `[retry]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryConfig {
    /// Attempts per model request, the first included (1 = no retry).
    pub max_attempts: u32,
    pub base_delay_ms: u64,
    /// Cap of one backoff delay; a `Retry-After` longer than this fails the call at once.
    pub max_delay_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_attempts: 3,
            base_delay_ms: 500,
            max_delay_ms: 30_000,
        }
    }
}

/// `[circuit_breaker]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CircuitBreakerConfig {
    /// Consecutive failed requests (429, 5xx, timeouts, transport errors) that open the
    /// breaker; 0 disables it.
    pub failure_threshold: u32,
    /// Time the breaker stays open before one probe request is let through (half-open).
    pub cool_down_ms: u64,
}

impl Default for CircuitBreakerConfig {
    fn default() -> Self {
        CircuitBreakerConfig {
            failure_threshold: 5,
            cool_down_ms: 30_000,
        }
    }
}

/// `[timeouts]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutConfig {
    /// Timeout of one HTTP request when the agent declares no `timeout`.
    pub call_ms: u64,
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        TimeoutConfig { call_ms: 120_000 }
    }
}

/// `[structured_output]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StructuredOutputConfig {
    /// Corrective re-prompts when an answer lacks the expected JSON.
    pub max_corrections: u32,
}

impl Default for StructuredOutputConfig {
    fn default() -> Self {
        StructuredOutputConfig { max_corrections: 1 }
    }
}

/// The provider configuration (the defaults when there is no `hensu.toml`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ProvidersConfig {
    pub providers: IndexMap<String, ProviderEntry>,
    pub retry: RetryConfig,
    pub circuit_breaker: CircuitBreakerConfig,
    pub timeouts: TimeoutConfig,
    pub structured_output: StructuredOutputConfig,
}

impl ProvidersConfig {
    pub fn call_timeout(&self) -> Duration {
        Duration::from_millis(self.timeouts.call_ms)
    }
}

/// A provider setting of `hensu.toml` that breaks a rule of [`validate`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("hensu.toml: {path}: {message}")]
    Invalid { path: String, message: String },
}

/// The built-in provider names.
pub const BUILTIN_PROVIDERS: [&str; 4] = ["anthropic", "openai", "gemini", "deepseek"];

fn invalid(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        path: path.into(),
        message: message.into(),
    }
}

/// Whether `name` is an acceptable key variable: `[A-Z0-9_]+_API_KEY`.
pub fn valid_key_env_name(name: &str) -> bool {
    name.len() > "_API_KEY".len()
        && name.ends_with("_API_KEY")
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Checks the semantic rules `serde` cannot express.
pub fn validate(config: &ProvidersConfig) -> Result<(), ConfigError> {
    for (name, entry) in &config.providers {
        let path = format!("providers.{name}");
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(invalid(
                &path,
                "provider names use letters, digits, '-' and '_'",
            ));
        }
        if name == "stub" {
            return Err(invalid(&path, "'stub' is reserved for the stub provider"));
        }
        if entry.kind.is_none() && !BUILTIN_PROVIDERS.contains(&name.as_str()) {
            return Err(invalid(
                &path,
                "`kind` is required (\"anthropic\", \"openai\" or \"gemini\")",
            ));
        }
        if let Some(url) = &entry.base_url {
            let parsed = reqwest::Url::parse(url)
                .map_err(|e| invalid(format!("{path}.base_url"), format!("not a URL: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(invalid(
                    format!("{path}.base_url"),
                    "only http and https URLs are supported",
                ));
            }
            if !parsed.username().is_empty() || parsed.password().is_some() {
                return Err(invalid(
                    format!("{path}.base_url"),
                    "credentials in the URL are not allowed; use api_key_env",
                ));
            }
        }
        if let Some(env) = &entry.api_key_env
            && !env.is_empty()
            && !valid_key_env_name(env)
        {
            return Err(invalid(
                format!("{path}.api_key_env"),
                // The value is not quoted: a key pasted here instead of a variable name is the
                // usual reason for this error.
                "not an API-key variable name (expected upper-case letters, digits and '_', \
                 ending in _API_KEY); the value is not shown in case it is a key",
            ));
        }
        if let Some(models) = &entry.models
            && models.iter().any(|m| m.trim().is_empty())
        {
            return Err(invalid(format!("{path}.models"), "empty model pattern"));
        }
    }
    let r = &config.retry;
    if r.max_attempts == 0 || r.max_attempts > 20 {
        return Err(invalid("retry.max_attempts", "must be between 1 and 20"));
    }
    if r.base_delay_ms > r.max_delay_ms {
        return Err(invalid(
            "retry.base_delay_ms",
            "must not exceed retry.max_delay_ms",
        ));
    }
    if config.timeouts.call_ms == 0 {
        return Err(invalid("timeouts.call_ms", "must be positive"));
    }
    if config.structured_output.max_corrections > 5 {
        return Err(invalid(
            "structured_output.max_corrections",
            "must be between 0 and 5",
        ));
    }
    Ok(())
}
