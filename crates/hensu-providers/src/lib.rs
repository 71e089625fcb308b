//! hensu-providers — real model providers behind the runtime's [`hensu_runtime::AgentProvider`].
//!
//! * Protocols: Anthropic Messages, OpenAI-compatible chat completions (OpenAI, DeepSeek,
//!   Ollama, vLLM, any base URL), Google Gemini `generateContent` — hand-written over the
//!   workspace's `reqwest` (rustls), keys sent in headers only.
//! * Routing ([`build_providers`]): `claude-*` → anthropic, `gpt-*`/`o1*`/`o3*`/`o4*` → openai,
//!   `gemini-*` → gemini, `deepseek-*` → deepseek, plus `[providers.NAME]` of `hensu.toml`
//!   (read by hensu-project into [`ProvidersConfig`]); stubs win when forced and serve models without a credentialed provider.
//! * Agents ([`ModelAgent`]): role + instructions as the system prompt, sampling parameters,
//!   per-request timeout, `maintainContext` history, the tool loop over a [`ToolExecutor`].
//! * Fault tolerance ([`Resilience`]): retries with exponential backoff and jitter honouring
//!   `Retry-After`, a circuit breaker per provider, cancellation (dropping the future aborts the
//!   HTTP request; the runtime's `CancelToken` is honoured too).
//! * Structured output ([`with_structured_output`]): bounded corrective re-prompts.
//! * Secret safety ([`Redactor`]): every error, answer, tool result and metadata value leaving
//!   the crate is redacted; keys never appear in `Debug` output.
//! * Usage ([`UsageTotals`]): tokens, requests, retries, tool calls and latency per provider.
//!
//! Every item is exported here, at the crate root; the modules are private.

mod agent;
mod config;
mod error;
mod journal;
mod listener;
mod protocol;
mod provider;
mod redact;
mod resilience;
mod stream_redact;
mod structured;
mod tools;
mod transport;
mod usage;
mod wire;

pub use agent::{DEFAULT_MAX_TOOL_CALLS, ModelAgent, ProviderRuntime, rejected_message};
pub use config::{
    CircuitBreakerConfig, ConfigError, ProviderEntry, ProviderKind, ProvidersConfig, RetryConfig,
    StructuredOutputConfig, TimeoutConfig, validate,
};
pub use error::{ErrorKind, ProviderError};
pub use listener::{RedactingJsonListener, RedactingJsonlListener};
pub use provider::{
    BuildOptions, BuiltProviders, ModelProvider, ProviderSpec, Route, build_providers,
    build_providers_with, glob_match, provider_specs, stub_env_enabled,
};
pub use redact::{ApiKey, Redactor};
pub use resilience::{
    AttemptStats, BreakerState, CircuitBreaker, Clock, Resilience, RetryNotice, RetryObserver,
    RetryPolicy, Sleeper, SystemClock, TokioSleeper,
};
pub use stream_redact::{RedactingTokenSink, StreamRedactor};
pub use structured::{
    Correction, StructuredError, StructuredOutcome, StructuredOutput, StructuredProblem,
    check_structured, with_structured_output, with_structured_output_observed,
};
pub use tools::{ActionToolExecutor, ToolExecutor};
pub use transport::{ChatBackend, HttpBackend, parse_retry_after};
pub use usage::{CallRecord, UsageCounters, UsageSummary, UsageTotals};
pub use wire::{ChatRequest, ChatResponse, GenParams, ToolCall, ToolOutcome, ToolSpec, Turn};
