//! Stub agents, reproducing upstream Hensu's `core/agent/stub` byte for byte
//! (docs/language.md, *Stub agents*).
//!
//! * Scenario: context `stub_scenario` → the provider's configured scenario (`--scenario`) →
//!   `default`. A scenario other than `default` must exist — a directory of the stub files or a
//!   programmatic registration — else the call fails naming the known scenarios
//!   (docs/security.md, *Stub scenarios*).
//! * Identifiers: `[context.current_node, agentId]` (node first). A parallel branch or map
//!   item (context `current_branch`: the branch id, or `<node>[<index>]`) is first looked up
//!   among the programmatic registrations (a `hensuc test` file's `[stubs]`), never in files,
//!   so stub files keep upstream's ladder.
//! * Ladder for the scenario: programmatic (node, agent) → files
//!   `<stubsDir>/<scenario>/<id>.txt` (node, agent); if nothing and the scenario is not
//!   `default`: files `default/` (node, agent). Programmatic `default` registrations are not
//!   consulted by that fallback. Results are cached.
//! * Found text: every `{{word}}` is replaced by the context value's `toString()` (or `""`).
//! * Nothing found: the generated fall-back of [`generate_fallback`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hensu_ir::AgentConfig;
use indexmap::IndexMap;
use serde_json::Value;

use crate::agent::{Agent, AgentError, AgentProvider, AgentRequest, AgentResponse};
use crate::value::{Context, java_to_string};

/// The context key naming the stub scenario.
pub const STUB_SCENARIO_KEY: &str = "stub_scenario";
/// The default scenario.
pub const DEFAULT_SCENARIO: &str = "default";
/// The context key naming the parallel branch (its id) or map item (`<node>[<index>]`) a call
/// belongs to; set on the branch's or item's own copy of the context only.
pub const CURRENT_BRANCH_KEY: &str = "current_branch";

/// Read access to stub files `<scenario>/<id>.txt` (the host reads them from disk:
/// `hensu-host`'s `FsStubFiles`).
#[async_trait]
pub trait StubFiles: Send + Sync {
    /// The content of `<scenario>/<id>.txt`: `Ok(None)` when there is no such file, an error
    /// when it exists but may not be read (e.g. it resolves outside the stubs directory).
    async fn read(&self, scenario: &str, id: &str) -> Result<Option<String>, String>;
    /// The scenarios there are files for, sorted.
    async fn scenarios(&self) -> Vec<String>;
}

/// In-memory stub files (tests).
#[derive(Clone, Debug, Default)]
pub struct MemoryStubFiles {
    files: HashMap<(String, String), String>,
}

impl MemoryStubFiles {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `<scenario>/<id>.txt`.
    pub fn with(mut self, scenario: &str, id: &str, text: &str) -> Self {
        self.insert(scenario, id, text);
        self
    }

    /// Adds `<scenario>/<id>.txt`.
    pub fn insert(&mut self, scenario: &str, id: &str, text: &str) {
        self.files
            .insert((scenario.to_string(), id.to_string()), text.to_string());
    }
}

#[async_trait]
impl StubFiles for MemoryStubFiles {
    async fn read(&self, scenario: &str, id: &str) -> Result<Option<String>, String> {
        Ok(self
            .files
            .get(&(scenario.to_string(), id.to_string()))
            .cloned())
    }

    async fn scenarios(&self) -> Vec<String> {
        let set: std::collections::BTreeSet<&String> = self.files.keys().map(|(s, _)| s).collect();
        set.into_iter().cloned().collect()
    }
}

/// (scenario, id) → file text (or known absence).
type StubCache = HashMap<(String, String), Option<Arc<str>>>;

/// The response store shared by every stub agent of a provider.
pub struct StubResponseRegistry {
    files: Option<Box<dyn StubFiles>>,
    programmatic: Mutex<HashMap<(String, String), String>>,
    cache: Mutex<StubCache>,
    scenario: Option<String>,
    /// The scenarios of `files`, listed once.
    file_scenarios: tokio::sync::OnceCell<Vec<String>>,
}

impl std::fmt::Debug for StubResponseRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StubResponseRegistry")
            .field("scenario", &self.scenario)
            .finish_non_exhaustive()
    }
}

impl StubResponseRegistry {
    /// A registry reading files from `files` (or none), with an optional configured scenario
    /// (the `--scenario` option; upstream's system property).
    pub fn new(files: Option<Box<dyn StubFiles>>, scenario: Option<String>) -> Self {
        StubResponseRegistry {
            files,
            programmatic: Mutex::new(HashMap::new()),
            cache: Mutex::new(HashMap::new()),
            scenario,
            file_scenarios: tokio::sync::OnceCell::new(),
        }
    }

    /// Registers a programmatic response for `scenario` and a node or agent id.
    pub fn register(&self, scenario: &str, id: &str, text: &str) {
        if let Ok(mut map) = self.programmatic.lock() {
            map.insert((scenario.to_string(), id.to_string()), text.to_string());
        }
    }

    /// The active scenario for a context.
    pub fn scenario(&self, ctx: &Context) -> String {
        match ctx.get(STUB_SCENARIO_KEY) {
            Some(v) if !v.is_null() => java_to_string(v),
            _ => self
                .scenario
                .clone()
                .unwrap_or_else(|| DEFAULT_SCENARIO.to_string()),
        }
    }

    /// Every known scenario, sorted: `default`, the file scenarios and the programmatic ones.
    pub async fn known_scenarios(&self) -> Vec<String> {
        let mut known: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        known.insert(DEFAULT_SCENARIO.to_string());
        if let Some(files) = &self.files {
            let listed = self
                .file_scenarios
                .get_or_init(|| async { files.scenarios().await })
                .await;
            known.extend(listed.iter().cloned());
        }
        if let Ok(map) = self.programmatic.lock() {
            known.extend(map.keys().map(|(s, _)| s.clone()));
        }
        known.into_iter().collect()
    }

    /// An error naming the known scenarios unless `scenario` is one of them.
    pub async fn check_scenario(&self, scenario: &str) -> Result<(), String> {
        if scenario == DEFAULT_SCENARIO {
            return Ok(());
        }
        let known = self.known_scenarios().await;
        if known.iter().any(|k| k == scenario) {
            return Ok(());
        }
        Err(format!(
            "unknown stub scenario '{scenario}'; known scenarios: {}",
            known.join(", ")
        ))
    }

    async fn file(&self, scenario: &str, id: &str) -> Result<Option<Arc<str>>, String> {
        let Some(files) = self.files.as_ref() else {
            return Ok(None);
        };
        let key = (scenario.to_string(), id.to_string());
        if let Ok(cache) = self.cache.lock()
            && let Some(hit) = cache.get(&key)
        {
            return Ok(hit.clone());
        }
        let found: Option<Arc<str>> = files.read(scenario, id).await?.map(Arc::from);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(key, found.clone());
        }
        Ok(found)
    }

    fn programmatic(&self, scenario: &str, id: &str) -> Option<Arc<str>> {
        let map = self.programmatic.lock().ok()?;
        map.get(&(scenario.to_string(), id.to_string()))
            .map(|s| Arc::from(s.as_str()))
    }

    /// Finds the raw stub text for the identifiers (node first, then agent), following the
    /// upstream ladder. `None` → the caller generates the fall-back; an error when a file may
    /// not be read.
    pub async fn lookup(&self, scenario: &str, ids: &[&str]) -> Result<Option<Arc<str>>, String> {
        for id in ids {
            if let Some(t) = self.programmatic(scenario, id) {
                return Ok(Some(t));
            }
        }
        for id in ids {
            if let Some(t) = self.file(scenario, id).await? {
                return Ok(Some(t));
            }
        }
        if scenario != DEFAULT_SCENARIO {
            for id in ids {
                if let Some(t) = self.file(DEFAULT_SCENARIO, id).await? {
                    return Ok(Some(t));
                }
            }
        }
        Ok(None)
    }

    /// The response for a call and its scenario: the found text with `{{name}}` substituted,
    /// or the generated fall-back. An unknown scenario or an unreadable file is an error.
    pub async fn response(
        &self,
        node_id: Option<&str>,
        agent_id: &str,
        model: &str,
        ctx: &Context,
        prompt: &str,
    ) -> Result<(String, String), String> {
        let scenario = self.scenario(ctx);
        self.check_scenario(&scenario).await?;
        if let Some(Value::String(branch)) = ctx.get(CURRENT_BRANCH_KEY)
            && let Some(text) = self.programmatic(&scenario, branch)
        {
            return Ok((substitute_double_braces(&text, ctx), scenario));
        }
        let mut ids: Vec<&str> = Vec::with_capacity(2);
        if let Some(n) = node_id {
            ids.push(n);
        }
        ids.push(agent_id);
        let text = match self.lookup(&scenario, &ids).await? {
            Some(text) => substitute_double_braces(&text, ctx),
            None => generate_fallback(node_id.unwrap_or(agent_id), agent_id, model, prompt),
        };
        Ok((text, scenario))
    }
}

/// Replaces every `{{word}}` (`\w+`, ASCII) by the context value's `toString()`, or `""`.
pub fn substitute_double_braces(text: &str, ctx: &Context) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("{{") {
        let after = &rest[pos + 2..];
        let word_len = after
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if word_len > 0 && after[word_len..].starts_with("}}") {
            out.push_str(&rest[..pos]);
            let name = &after[..word_len];
            match ctx.get(name) {
                Some(Value::Null) | None => {}
                Some(v) => out.push_str(&java_to_string(v)),
            }
            rest = &after[word_len + 2..];
        } else {
            out.push_str(&rest[..pos + 1]);
            rest = &rest[pos + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// The default JSON fall-back (no key hints in the prompt).
pub const DEFAULT_JSON_STUB: &str = "{\n    \"result\": \"stub_response\",\n    \"status\": \"success\",\n    \"message\": \"This is a stub JSON response\"\n}";

/// The generated fall-back response (upstream `StubResponseRegistry`): if the lowercased prompt
/// contains `json` or `output as`, a JSON object with one `"<key>": "stub_value_for_<key>"` per
/// prompt line containing `":` (key = text between the quote preceding the first `":` and it;
/// skipped when it contains a space or `<`; duplicates kept), or [`DEFAULT_JSON_STUB`] when no
/// line has one; otherwise `[STUB] Auto-generated response for '<id>' (agent: <a>, model: <m>).`
pub fn generate_fallback(identifier: &str, agent_id: &str, model: &str, prompt: &str) -> String {
    let lower = prompt.to_lowercase();
    if !(lower.contains("json") || lower.contains("output as")) {
        return format!(
            "[STUB] Auto-generated response for '{identifier}' (agent: {agent_id}, model: {model})."
        );
    }
    let mut keys: Vec<&str> = Vec::new();
    for line in prompt.split('\n') {
        let Some(colon) = line.find("\":") else {
            continue;
        };
        let Some(open) = line[..colon].rfind('"') else {
            continue;
        };
        let key = &line[open + 1..colon];
        if key.contains(' ') || key.contains('<') {
            continue;
        }
        keys.push(key);
    }
    if keys.is_empty() {
        return DEFAULT_JSON_STUB.to_string();
    }
    let mut out = String::from("{\n");
    for (i, key) in keys.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str("    \"");
        out.push_str(key);
        out.push_str("\": \"stub_value_for_");
        out.push_str(key);
        out.push('"');
    }
    out.push_str("\n}");
    out
}

/// The stub provider: serves every model (priority 1000) when enabled, never when disabled.
pub struct StubProvider {
    registry: Arc<StubResponseRegistry>,
    enabled: bool,
}

impl std::fmt::Debug for StubProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StubProvider")
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

impl StubProvider {
    /// An enabled stub provider over `files` with an optional configured scenario.
    pub fn new(files: Option<Box<dyn StubFiles>>, scenario: Option<String>) -> Self {
        StubProvider {
            registry: Arc::new(StubResponseRegistry::new(files, scenario)),
            enabled: true,
        }
    }

    /// Enables or disables the provider (disabled: priority -1, never selected).
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// The shared response registry (for programmatic registrations).
    pub fn registry(&self) -> &Arc<StubResponseRegistry> {
        &self.registry
    }
}

impl AgentProvider for StubProvider {
    fn name(&self) -> &str {
        "stub"
    }

    fn supports_model(&self, _model: &str) -> bool {
        true
    }

    fn priority(&self) -> i32 {
        if self.enabled { 1000 } else { -1 }
    }

    fn create_agent(
        &self,
        config: &AgentConfig,
        _credentials: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(StubAgent {
            config: config.clone(),
            registry: Arc::clone(&self.registry),
        }))
    }
}

/// An agent answering from the stub registry.
pub struct StubAgent {
    config: AgentConfig,
    registry: Arc<StubResponseRegistry>,
}

#[async_trait]
impl Agent for StubAgent {
    fn id(&self) -> &str {
        &self.config.id
    }

    fn config(&self) -> &AgentConfig {
        &self.config
    }

    async fn execute(&self, request: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        if let Some(delay) = stub_delay() {
            tokio::time::sleep(delay).await;
        }
        let node = match request.context.get("current_node") {
            Some(v) if !v.is_null() => Some(java_to_string(v)),
            _ => None,
        };
        let (text, scenario) = self
            .registry
            .response(
                node.as_deref(),
                &self.config.id,
                &self.config.model,
                request.context,
                request.prompt,
            )
            .await
            .map_err(|e| AgentError::new("stub", e))?;
        let mut metadata = IndexMap::new();
        metadata.insert("stub".to_string(), Value::Bool(true));
        metadata.insert(
            "model".to_string(),
            Value::String(self.config.model.clone()),
        );
        metadata.insert(
            "prompt_length".to_string(),
            Value::from(request.prompt.encode_utf16().count() as u64),
        );
        metadata.insert("scenario".to_string(), Value::String(scenario));
        // A streamed call gets the answer in a few pieces, as a model would write it.
        crate::tokens::emit_in_pieces(&text);
        Ok(AgentResponse {
            text,
            metadata,
            usage: None,
        })
    }
}

/// `HENSU_STUB_DELAY_MS`: every stub answer waits this long first (tests that need slow
/// agents, e.g. the crash tests). Read once per process.
fn stub_delay() -> Option<std::time::Duration> {
    static DELAY: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    *DELAY.get_or_init(|| {
        std::env::var("HENSU_STUB_DELAY_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map(std::time::Duration::from_millis)
    })
}
