//! Providers and routing: built-in providers (`anthropic`, `openai`, `gemini`, `deepseek`),
//! the ones of `hensu.toml`, and the stub provider (forced, or the fallback for models no
//! credentialed provider serves).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use hensu_ir::AgentConfig;
use hensu_runtime::{
    Agent, AgentError, AgentProvider, AgentRequest, AgentResponse, CancelToken, StubProvider,
};
use serde_json::json;

use crate::agent::{ModelAgent, ProviderRuntime};
use crate::config::{BUILTIN_PROVIDERS, ProviderKind, ProvidersConfig};
use crate::redact::{ApiKey, Redactor};
use crate::resilience::{
    CircuitBreaker, Clock, Resilience, RetryObserver, Sleeper, SystemClock, TokioSleeper,
    jitter_fraction,
};
use crate::tools::ToolExecutor;
use crate::transport::{ChatBackend, HttpBackend};
use crate::usage::UsageTotals;

/// Priority of the built-in providers (configured providers default to it too).
pub const DEFAULT_PRIORITY: i32 = 100;
/// Priority of the stub fallback (below every real provider; `0` is still selectable).
pub const FALLBACK_STUB_PRIORITY: i32 = 0;
/// Priority of forced stubs (upstream: 1000).
pub const FORCED_STUB_PRIORITY: i32 = 1000;
/// The variable that forces stub agents for every model (as upstream's CLI does).
pub const STUB_ENV: &str = "HENSU_STUB_ENABLED";

/// `*` matches any run of characters, `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The resolved definition of one provider.
#[derive(Clone, PartialEq)]
pub struct ProviderSpec {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    /// `None`: no authentication (local servers).
    pub api_key_env: Option<String>,
    pub models: Vec<String>,
    pub priority: i32,
}

impl fmt::Debug for ProviderSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderSpec")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key_env", &self.api_key_env)
            .field("models", &self.models)
            .field("priority", &self.priority)
            .finish()
    }
}

impl ProviderSpec {
    pub fn serves(&self, model: &str) -> bool {
        self.models.iter().any(|g| glob_match(g, model))
    }
}

/// The built-in definition of `name`.
pub fn builtin_spec(name: &str) -> Option<ProviderSpec> {
    let (kind, base, env, models): (ProviderKind, &str, &str, &[&str]) = match name {
        "anthropic" => (
            ProviderKind::Anthropic,
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            &["claude-*"],
        ),
        "openai" => (
            ProviderKind::OpenAi,
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            &["gpt-*", "o1*", "o3*", "o4*"],
        ),
        "gemini" => (
            ProviderKind::Gemini,
            "https://generativelanguage.googleapis.com",
            "GOOGLE_API_KEY",
            &["gemini-*"],
        ),
        "deepseek" => (
            ProviderKind::OpenAi,
            "https://api.deepseek.com",
            "DEEPSEEK_API_KEY",
            &["deepseek-*"],
        ),
        _ => return None,
    };
    Some(ProviderSpec {
        name: name.to_string(),
        kind,
        base_url: base.to_string(),
        api_key_env: Some(env.to_string()),
        models: models.iter().map(|m| m.to_string()).collect(),
        priority: DEFAULT_PRIORITY,
    })
}

fn default_base(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "https://api.anthropic.com",
        ProviderKind::OpenAi => "https://api.openai.com/v1",
        ProviderKind::Gemini => "https://generativelanguage.googleapis.com",
    }
}

/// The provider definitions: built-ins overridden or extended by `config` (disabled ones
/// removed), in order built-ins first.
pub fn provider_specs(config: &ProvidersConfig) -> Vec<ProviderSpec> {
    let mut specs: Vec<ProviderSpec> = Vec::new();
    for name in BUILTIN_PROVIDERS {
        let entry = config.providers.get(name);
        if entry.and_then(|e| e.enabled) == Some(false) {
            continue;
        }
        if let Some(mut spec) = builtin_spec(name) {
            if let Some(e) = entry {
                apply(&mut spec, e);
            }
            specs.push(spec);
        }
    }
    for (name, entry) in &config.providers {
        if BUILTIN_PROVIDERS.contains(&name.as_str()) || entry.enabled == Some(false) {
            continue;
        }
        let Some(kind) = entry.kind else { continue };
        let mut spec = ProviderSpec {
            name: name.clone(),
            kind,
            base_url: default_base(kind).to_string(),
            api_key_env: None,
            models: Vec::new(),
            priority: DEFAULT_PRIORITY,
        };
        apply(&mut spec, entry);
        specs.push(spec);
    }
    specs
}

fn apply(spec: &mut ProviderSpec, e: &crate::config::ProviderEntry) {
    if let Some(k) = e.kind {
        spec.kind = k;
    }
    if let Some(u) = &e.base_url {
        spec.base_url = u.clone();
    }
    if let Some(env) = &e.api_key_env {
        spec.api_key_env = (!env.is_empty()).then(|| env.clone());
    }
    if let Some(m) = &e.models {
        spec.models = m.clone();
    }
    if let Some(p) = e.priority {
        spec.priority = p;
    }
}

/// A real provider.
pub struct ModelProvider {
    spec: ProviderSpec,
    /// Whether the key is present (or none is needed).
    credentialed: bool,
    runtime: Arc<ProviderRuntime>,
}

impl fmt::Debug for ModelProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelProvider")
            .field("spec", &self.spec)
            .field("credentialed", &self.credentialed)
            .finish_non_exhaustive()
    }
}

impl ModelProvider {
    /// A provider over any backend (tests use fakes).
    pub fn new(spec: ProviderSpec, credentialed: bool, runtime: Arc<ProviderRuntime>) -> Self {
        ModelProvider {
            spec,
            credentialed,
            runtime,
        }
    }

    pub fn spec(&self) -> &ProviderSpec {
        &self.spec
    }

    pub fn runtime(&self) -> &Arc<ProviderRuntime> {
        &self.runtime
    }
}

impl AgentProvider for ModelProvider {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn supports_model(&self, model: &str) -> bool {
        self.credentialed && self.spec.serves(model)
    }

    fn priority(&self) -> i32 {
        self.spec.priority
    }

    fn create_agent(
        &self,
        config: &AgentConfig,
        _credentials: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(ModelAgent::new(
            config.clone(),
            Arc::clone(&self.runtime),
        )))
    }
}

/// The stub provider as the fallback for models no credentialed provider serves; its agents
/// mark their answers with `stub_fallback` = the reason.
pub struct FallbackStub {
    inner: Arc<dyn AgentProvider>,
    specs: Vec<(ProviderSpec, bool)>,
}

impl fmt::Debug for FallbackStub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FallbackStub").finish_non_exhaustive()
    }
}

impl FallbackStub {
    /// Why `model` falls back to stubs.
    pub fn reason(&self, model: &str) -> String {
        let missing: Vec<String> = self
            .specs
            .iter()
            .filter(|(s, has)| !has && s.serves(model))
            .map(|(s, _)| match &s.api_key_env {
                Some(env) => format!("{} needs {env}", s.name),
                None => s.name.clone(),
            })
            .collect();
        if missing.is_empty() {
            format!("no provider serves model '{model}'")
        } else {
            format!(
                "no credentials for model '{model}' ({})",
                missing.join("; ")
            )
        }
    }
}

impl AgentProvider for FallbackStub {
    fn name(&self) -> &str {
        "stub"
    }

    fn supports_model(&self, model: &str) -> bool {
        self.inner.supports_model(model)
    }

    fn priority(&self) -> i32 {
        FALLBACK_STUB_PRIORITY
    }

    fn create_agent(
        &self,
        config: &AgentConfig,
        credentials: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        let inner = self.inner.create_agent(config, credentials)?;
        Ok(Arc::new(FallbackStubAgent {
            inner,
            reason: self.reason(&config.model),
        }))
    }
}

struct FallbackStubAgent {
    inner: Arc<dyn Agent>,
    reason: String,
}

#[async_trait]
impl Agent for FallbackStubAgent {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn config(&self) -> &AgentConfig {
        self.inner.config()
    }

    async fn execute(&self, request: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        let mut r = self.inner.execute(request).await?;
        r.metadata
            .insert("stub_fallback".to_string(), json!(self.reason));
        Ok(r)
    }
}

/// The stub provider when stubs are forced: priority 1000 whatever the wrapped provider says.
struct ForcedStub {
    inner: Arc<dyn AgentProvider>,
}

impl AgentProvider for ForcedStub {
    fn name(&self) -> &str {
        "stub"
    }

    fn supports_model(&self, model: &str) -> bool {
        self.inner.supports_model(model)
    }

    fn priority(&self) -> i32 {
        FORCED_STUB_PRIORITY
    }

    fn create_agent(
        &self,
        config: &AgentConfig,
        credentials: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        self.inner.create_agent(config, credentials)
    }
}

/// Everything [`build_providers_with`] can be given.
pub struct BuildOptions {
    /// `--stub`: every model is served by the stub provider.
    pub force_stub: bool,
    /// The stub provider (with the CLI's stubs directory and scenario); default: an enabled
    /// [`StubProvider`] without files.
    pub stub: Option<Arc<dyn AgentProvider>>,
    /// Serves the agents' tools.
    pub tools: Option<Arc<dyn ToolExecutor>>,
    /// The run's cancellation token (aborts in-flight requests and backoff waits).
    pub cancel: Option<CancelToken>,
    pub sleeper: Arc<dyn Sleeper>,
    pub clock: Arc<dyn Clock>,
    pub jitter: fn() -> f64,
    /// Told before every retry (map it to an event).
    pub on_retry: Option<RetryObserver>,
    pub usage: Arc<UsageTotals>,
    /// Extra secrets to redact besides the providers' keys.
    pub extra_secrets: Redactor,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            force_stub: false,
            stub: None,
            tools: None,
            cancel: None,
            sleeper: Arc::new(TokioSleeper),
            clock: Arc::new(SystemClock),
            jitter: jitter_fraction,
            on_retry: None,
            usage: Arc::new(UsageTotals::new()),
            extra_secrets: Redactor::empty(),
        }
    }
}

impl fmt::Debug for BuildOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuildOptions")
            .field("force_stub", &self.force_stub)
            .finish_non_exhaustive()
    }
}

/// The built providers and what the run summary needs.
pub struct BuiltProviders {
    /// In registration order (stub fallback last).
    pub providers: Vec<Arc<dyn AgentProvider>>,
    /// Redacts every provider key (and the extra secrets): apply it to events, snapshots and
    /// the state store.
    pub redactor: Arc<Redactor>,
    pub usage: Arc<UsageTotals>,
    /// Whether stubs were forced (`--stub` / `HENSU_STUB_ENABLED=true`).
    pub stubs_forced: bool,
    /// Human-readable notes (providers skipped, …). Never contain secrets.
    pub notes: Vec<String>,
    specs: Vec<(ProviderSpec, bool)>,
}

impl fmt::Debug for BuiltProviders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltProviders")
            .field(
                "providers",
                &self.providers.iter().map(|p| p.name()).collect::<Vec<_>>(),
            )
            .field("redactor", &self.redactor)
            .field("stubs_forced", &self.stubs_forced)
            .field("notes", &self.notes)
            .finish_non_exhaustive()
    }
}

/// Where a model goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub provider: String,
    /// Set when the model is served by stubs only as a fallback.
    pub stub_reason: Option<String>,
}

impl BuiltProviders {
    /// The provider `model` routes to (as `AgentRegistry::from_configs` will pick it).
    pub fn route(&self, model: &str) -> Option<Route> {
        let p = hensu_runtime::select_provider(&self.providers, model)?;
        let stub_reason = (p.name() == "stub" && !self.stubs_forced).then(|| {
            FallbackStub {
                inner: Arc::clone(p),
                specs: self.specs.clone(),
            }
            .reason(model)
        });
        Some(Route {
            provider: p.name().to_string(),
            stub_reason,
        })
    }
}

/// Whether `HENSU_STUB_ENABLED` asks for stubs.
pub fn stub_env_enabled(env: &dyn Fn(&str) -> Option<String>) -> bool {
    env(STUB_ENV).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The providers for `config` with keys from `env`; stubs win when `force_stub` or
/// `HENSU_STUB_ENABLED=true`, and serve as the fallback of models without a credentialed
/// provider.
pub fn build_providers(
    config: &ProvidersConfig,
    env: &dyn Fn(&str) -> Option<String>,
    force_stub: bool,
) -> Vec<Arc<dyn AgentProvider>> {
    build_providers_with(
        config,
        env,
        BuildOptions {
            force_stub,
            ..BuildOptions::default()
        },
    )
    .providers
}

/// [`build_providers`] with every option.
pub fn build_providers_with(
    config: &ProvidersConfig,
    env: &dyn Fn(&str) -> Option<String>,
    options: BuildOptions,
) -> BuiltProviders {
    let specs = provider_specs(config);
    let mut redactor = Redactor::empty();
    let key_names: Vec<&str> = specs
        .iter()
        .filter_map(|s| s.api_key_env.as_deref())
        .collect();
    redactor.merge(&Redactor::from_lookup(&key_names, env));
    redactor.merge(&options.extra_secrets);
    let redactor = Arc::new(redactor);
    let stubs_forced = options.force_stub || stub_env_enabled(env);
    let stub: Arc<dyn AgentProvider> = options
        .stub
        .clone()
        .unwrap_or_else(|| Arc::new(StubProvider::new(None, None)));
    let mut notes = Vec::new();
    let mut providers: Vec<Arc<dyn AgentProvider>> = Vec::new();
    let mut spec_status = Vec::new();
    for spec in specs {
        let key = spec.api_key_env.as_deref().and_then(|name| {
            env(name)
                .filter(|v| !v.trim().is_empty())
                .map(|v| ApiKey::new(name, v))
        });
        let credentialed = spec.api_key_env.is_none() || key.is_some();
        spec_status.push((spec.clone(), credentialed));
        if stubs_forced {
            continue;
        }
        let backend = match HttpBackend::new(
            spec.name.clone(),
            spec.kind,
            spec.base_url.clone(),
            key,
            Arc::clone(&redactor),
        ) {
            Ok(b) => b,
            Err(e) => {
                notes.push(format!("provider '{}' skipped: {}", spec.name, e.message));
                continue;
            }
        };
        let runtime = Arc::new(ProviderRuntime {
            name: spec.name.clone(),
            backend: Arc::new(backend) as Arc<dyn ChatBackend>,
            resilience: Resilience {
                policy: config.retry.into(),
                breaker: Arc::new(CircuitBreaker::new(
                    config.circuit_breaker,
                    Arc::clone(&options.clock),
                )),
                sleeper: Arc::clone(&options.sleeper),
                cancel: options.cancel.clone(),
                jitter: options.jitter,
                on_retry: options.on_retry.clone(),
            },
            call_timeout: config.call_timeout(),
            tools: options.tools.clone(),
            redactor: Arc::clone(&redactor),
            usage: Arc::clone(&options.usage),
        });
        providers.push(Arc::new(ModelProvider::new(spec, credentialed, runtime)));
    }
    if stubs_forced {
        providers.push(Arc::new(ForcedStub { inner: stub }));
    } else {
        providers.push(Arc::new(FallbackStub {
            inner: stub,
            specs: spec_status.clone(),
        }));
    }
    BuiltProviders {
        providers,
        redactor,
        usage: options.usage,
        stubs_forced,
        notes,
        specs: spec_status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("claude-*", "claude-opus-4-6"));
        assert!(glob_match("o3*", "o3"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c*", "abcdef"));
        assert!(!glob_match("gpt-*", "gpt"));
        assert!(glob_match("*-mini", "o4-mini"));
        assert!(!glob_match("*-mini", "o4-mini-high"));
    }
}
