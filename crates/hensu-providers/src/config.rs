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
//! Sections this crate does not own are ignored; inside its sections unknown keys are errors
//! (so a typo, or a literal `api_key = "…"`, is reported instead of silently ignored). Error
//! messages never quote the offending line, so a key pasted into the file is not echoed.

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

/// A bad `hensu.toml`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("hensu.toml:{line}:{column}: {message}")]
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("hensu.toml: {path}: {message}")]
    Invalid { path: String, message: String },
}

/// The built-in provider names.
pub const BUILTIN_PROVIDERS: [&str; 4] = ["anthropic", "openai", "gemini", "deepseek"];

/// Parses and validates the provider sections of `hensu.toml`.
pub fn load_config(toml_text: &str) -> Result<ProvidersConfig, ConfigError> {
    let config: ProvidersConfig = toml::from_str(toml_text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| line_col(toml_text, s.start))
            .unwrap_or((1, 1));
        ConfigError::Parse {
            line,
            column,
            // `message()` is the bare message, without the source excerpt `Display` adds; serde
            // still quotes the offending value or key in it, which may be a pasted secret.
            message: without_values(e.message().trim()),
        }
    })?;
    validate(&config)?;
    Ok(config)
}

/// Words of the schema a message may quote: field, section and variant names. Anything else
/// quoted in a parse message is a value (or an unknown key) from the file — possibly a pasted
/// key — and is replaced by `(value not shown)`.
const SCHEMA_WORDS: &[&str] = &[
    "kind",
    "base_url",
    "api_key_env",
    "models",
    "priority",
    "enabled",
    "anthropic",
    "openai",
    "gemini",
    "max_attempts",
    "base_delay_ms",
    "max_delay_ms",
    "failure_threshold",
    "cool_down_ms",
    "call_ms",
    "max_corrections",
    "providers",
    "retry",
    "circuit_breaker",
    "timeouts",
    "structured_output",
];

/// `message` with every quoted span (`"…"`, `` `…` ``, `'…'`) that is not a schema word hidden.
fn without_values(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find(['"', '`', '\'']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        // A quote without its closing partner hides everything after it.
        let close = after.find(quote).unwrap_or(after.len());
        let quoted = &after[..close];
        if SCHEMA_WORDS.contains(&quoted) {
            out.push_str(quoted);
        } else {
            out.push_str("(value not shown)");
        }
        match after.get(close..) {
            Some(tail) if !tail.is_empty() => {
                out.push(quote);
                rest = &tail[1..];
            }
            _ => return out,
        }
    }
    out.push_str(rest);
    out
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_sections_are_ignored_and_defaults_apply() {
        let c = load_config("[project]\nname = \"x\"\n").expect("parses");
        assert_eq!(c, ProvidersConfig::default());
    }

    #[test]
    fn literal_key_is_rejected_without_echo() {
        let e = load_config("[providers.openai]\napi_key = \"sk-very-secret-value\"\n")
            .expect_err("rejected");
        let msg = e.to_string();
        assert!(msg.contains("api_key"), "{msg}");
        assert!(!msg.contains("sk-very-secret-value"), "{msg}");
    }

    /// Pasting a key into any field of a `[providers.*]` table (or any other section) never
    /// echoes it, whatever error it causes.
    #[test]
    fn pasted_key_is_never_echoed() {
        let secret = "sk-proj-AbC123secretVALUE";
        let placements = [
            format!("[providers.openai]\napi_key_env = \"{secret}\"\n"),
            format!("[providers.openai]\nkind = \"{secret}\"\n"),
            format!("[providers.openai]\npriority = \"{secret}\"\n"),
            format!("[providers.openai]\nenabled = \"{secret}\"\n"),
            format!("[providers.openai]\nmodels = \"{secret}\"\n"),
            format!("[providers.openai]\nmodels = [1, \"{secret}\"]\n"),
            format!("[providers.openai]\n{secret} = 1\n"),
            format!("[providers.openai]\n\"{secret}\" = \"x\"\n"),
            format!("[providers.{secret}]\nkind = \"nope\"\n"),
            format!("[providers.openai]\nbase_url = \"{secret}\"\n"),
            format!("[providers.openai]\nbase_url = \"http://u:{secret}@h\"\n"),
            format!("[retry]\nmax_attempts = \"{secret}\"\n"),
            format!("[timeouts]\ncall_ms = '{secret}'\n"),
            format!("[providers.openai]\napi_key_env = {secret}\n"),
        ];
        for text in &placements {
            let msg = load_config(text).expect_err(text).to_string();
            assert!(!msg.contains("AbC123secret"), "{text:?} -> {msg}");
        }
    }

    #[test]
    fn schema_words_stay_quoted_in_messages() {
        let msg = load_config("[providers.x]\nkind = \"nope\"\n")
            .expect_err("unknown kind")
            .to_string();
        assert!(msg.contains("`openai`"), "{msg}");
        assert!(!msg.contains("nope"), "{msg}");
    }
}

/// One entry of the `[lints]` table of `hensu.toml` (`W0307 = "allow"`), with the byte ranges
/// of the key and the value in the file, for diagnostics. The levels are interpreted by the
/// checker (`hensu_diagnostics::lints`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LintEntry {
    pub code: String,
    pub code_span: std::ops::Range<usize>,
    pub level: String,
    pub level_span: std::ops::Range<usize>,
}

/// The `[lints]` table of `hensu.toml`, in file order; empty when there is none. Only this
/// table is read, so a provider section `hensuc check` does not need cannot hide it.
pub fn load_lints(toml_text: &str) -> Result<Vec<LintEntry>, ConfigError> {
    #[derive(Deserialize)]
    struct LintsFile {
        #[serde(default)]
        lints: IndexMap<toml::Spanned<String>, toml::Spanned<String>>,
    }
    let file: LintsFile = toml::from_str(toml_text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| line_col(toml_text, s.start))
            .unwrap_or((1, 1));
        ConfigError::Parse {
            line,
            column,
            message: without_values(e.message().trim()),
        }
    })?;
    Ok(file
        .lints
        .into_iter()
        .map(|(code, level)| LintEntry {
            code_span: code.span(),
            code: code.into_inner(),
            level_span: level.span(),
            level: level.into_inner(),
        })
        .collect())
}
