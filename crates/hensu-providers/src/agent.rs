//! [`ModelAgent`]: a workflow agent backed by a real model provider, with the tool loop
//! (docs/language.md, *Agents*) and `maintainContext` conversation memory.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hensu_ir::AgentConfig;
use hensu_runtime::journal::Approval;
use hensu_runtime::{Agent, AgentError, AgentRequest, AgentResponse, Usage};
use indexmap::IndexMap;
use serde_json::{Value, json};

use crate::error::{ErrorKind, ProviderError};
use crate::journal::ToolRun;
use crate::redact::Redactor;
use crate::resilience::{AttemptStats, Resilience, or_cancel};
use crate::tools::ToolExecutor;
use crate::transport::ChatBackend;
use crate::usage::{CallRecord, UsageTotals};
use crate::wire::{ChatRequest, GenParams, ToolOutcome, ToolSpec, Turn};

/// The engine default of `maxToolCalls`.
pub const DEFAULT_MAX_TOOL_CALLS: u32 = 10;

/// The turn sent when the tool budget is spent.
pub fn budget_exhausted_prompt(max: u32) -> String {
    format!(
        "The tool-call budget of this task ({max} calls) is exhausted. Give your final answer now, without calling any tool."
    )
}

/// The tool error a model gets for a call the reviewer rejected.
pub fn rejected_message(tool: &str, reason: &str) -> String {
    format!(
        "The reviewer rejected this call of '{tool}', so it was not run. Reviewer's reason: {reason}"
    )
}

/// Everything the agents of one provider share.
pub struct ProviderRuntime {
    pub name: String,
    pub backend: Arc<dyn ChatBackend>,
    pub resilience: Resilience,
    /// Per-request timeout when the agent declares none.
    pub call_timeout: Duration,
    pub tools: Option<Arc<dyn ToolExecutor>>,
    pub redactor: Arc<Redactor>,
    pub usage: Arc<UsageTotals>,
}

impl fmt::Debug for ProviderRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderRuntime")
            .field("name", &self.name)
            .field("resilience", &self.resilience)
            .field("call_timeout", &self.call_timeout)
            .field("redactor", &self.redactor)
            .finish_non_exhaustive()
    }
}

/// An agent answering through a provider.
pub struct ModelAgent {
    config: AgentConfig,
    runtime: Arc<ProviderRuntime>,
    /// The conversation so far (`maintainContext` agents only).
    history: Option<Mutex<Vec<Turn>>>,
}

impl fmt::Debug for ModelAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelAgent")
            .field("id", &self.config.id)
            .field("model", &self.config.model)
            .field("provider", &self.runtime.name)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct CallState {
    requests: u32,
    retries: u32,
    tool_log: Vec<Value>,
    usage: Usage,
    finish_reason: Option<String>,
}

impl ModelAgent {
    pub fn new(config: AgentConfig, runtime: Arc<ProviderRuntime>) -> Self {
        let history = config.maintain_context.then(|| Mutex::new(Vec::new()));
        ModelAgent {
            config,
            runtime,
            history,
        }
    }

    /// The conversation kept for `maintainContext` (empty otherwise).
    pub fn history(&self) -> Vec<Turn> {
        self.history
            .as_ref()
            .map(|h| h.lock().map(|h| h.clone()).unwrap_or_default())
            .unwrap_or_default()
    }

    /// Forgets the conversation (a new run).
    pub fn reset_history(&self) {
        if let Some(h) = &self.history
            && let Ok(mut h) = h.lock()
        {
            h.clear();
        }
    }

    fn request_timeout(&self) -> Duration {
        self.config
            .timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_secs(t.unsigned_abs()))
            .unwrap_or(self.runtime.call_timeout)
    }

    /// The tool specs of the declared tools; a declared tool nobody serves is an error.
    fn resolve_tools(&self) -> Result<Vec<ToolSpec>, ProviderError> {
        if self.config.tools.is_empty() {
            return Ok(Vec::new());
        }
        let executor = self.runtime.tools.as_ref();
        let missing: Vec<&str> = self
            .config
            .tools
            .iter()
            .filter(|t| executor.is_none_or(|e| !e.has_tool(t)))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            let available = executor.map(|e| e.available()).unwrap_or_default();
            return Err(ProviderError::new(
                ErrorKind::Config,
                format!(
                    "Unresolvable tools for agent '{}': declared=[{}], missing=[{}], available=[{}]",
                    self.config.id,
                    self.config.tools.join(", "),
                    missing.join(", "),
                    available.join(", ")
                ),
            ));
        }
        Ok(self
            .config
            .tools
            .iter()
            .map(|t| executor.map_or_else(|| ToolSpec::generic(t), |e| e.spec(t)))
            .collect())
    }

    /// Runs one tool call through the run's call journal (docs/security.md, *Call journal*):
    /// the tool's output or error message, and whether it succeeded.
    async fn call_tool(
        &self,
        call: &crate::wire::ToolCall,
    ) -> Result<(String, bool), ProviderError> {
        let rt = &self.runtime;
        let result = match &rt.tools {
            Some(exec) => {
                // A gated tool (docs/mcp.md, *Tool approval*): a reviewer decides first; a
                // rejection never calls it and tells the model why.
                let mut arguments = call.arguments.clone();
                if exec.requires_approval(&call.name) {
                    match hensu_runtime::journal::approve_tool_call(&call.name, &arguments).await? {
                        Approval::Approved(a) => arguments = a,
                        Approval::Rejected(reason) => {
                            return Ok((rejected_message(&call.name, &reason), false));
                        }
                    }
                }
                let run = or_cancel(
                    rt.resilience.cancel.as_ref(),
                    exec.call(&call.name, arguments),
                );
                crate::journal::tool_call(&call.name, exec.declared(&call.name), run).await?
            }
            None => ToolRun::Done(Err(format!("unknown tool '{}'", call.name))),
        };
        match result {
            ToolRun::Cancelled => Err(ProviderError::new(
                ErrorKind::Cancelled,
                format!("tool '{}' cancelled", call.name),
            )),
            ToolRun::Done(Ok(out)) => Ok((out, true)),
            ToolRun::Done(Err(err)) => Ok((err, false)),
        }
    }

    async fn run(
        &self,
        request: &AgentRequest<'_>,
        st: &mut CallState,
    ) -> Result<(String, Vec<Turn>), ProviderError> {
        let rt = &self.runtime;
        let tools = self.resolve_tools()?;
        let mut turns = self.history();
        let first_new = turns.len();
        turns.push(Turn::User(request.prompt.to_string()));
        let system = if request.system_prompt.is_empty() {
            hensu_runtime::system_prompt(&self.config)
        } else {
            request.system_prompt.to_string()
        };
        let mut chat = ChatRequest {
            model: self.config.model.clone(),
            system,
            turns,
            params: GenParams::from_agent(&self.config),
            tools,
        };
        let max_calls = self
            .config
            .max_tool_calls
            .filter(|n| *n >= 0)
            .map_or(DEFAULT_MAX_TOOL_CALLS, |n| {
                u32::try_from(n).unwrap_or(u32::MAX)
            });
        let timeout = self.request_timeout();
        let mut used = 0u32;
        let mut exhausted = false;
        loop {
            let mut stats = AttemptStats::default();
            // Journaled before it is used; a node run again replays it (docs/security.md,
            // *Call journal*).
            let result = crate::journal::model_call(
                &self.config.model,
                rt.resilience
                    .call(rt.backend.as_ref(), &chat, timeout, &mut stats),
            )
            .await;
            st.requests += stats.attempts;
            st.retries += stats.retries;
            let resp = result?;
            st.usage.input_tokens += resp.usage.input_tokens;
            st.usage.output_tokens += resp.usage.output_tokens;
            st.finish_reason = resp.finish_reason.clone();
            if resp.tool_calls.is_empty() || chat.tools.is_empty() {
                let text = if resp.text.is_empty() {
                    // Upstream: a tool request outside the tool loop answers `Tool: <name>`.
                    resp.tool_calls
                        .first()
                        .map(|c| format!("Tool: {}", c.name))
                        .unwrap_or_default()
                } else {
                    resp.text
                };
                chat.turns.push(Turn::Assistant {
                    text: text.clone(),
                    tool_calls: Vec::new(),
                    raw: None,
                });
                let new_turns = chat.turns.split_off(first_new);
                return Ok((text, new_turns));
            }
            if exhausted {
                let names: Vec<&str> = resp.tool_calls.iter().map(|c| c.name.as_str()).collect();
                return Err(ProviderError::new(
                    ErrorKind::ToolBudget,
                    format!(
                        "Agent '{}' still requested tools [{}] after its tool-call budget of {} was exhausted",
                        self.config.id,
                        names.join(", "),
                        max_calls
                    ),
                ));
            }
            let calls = resp.tool_calls.clone();
            chat.turns.push(Turn::Assistant {
                text: resp.text,
                tool_calls: resp.tool_calls,
                raw: resp.raw,
            });
            let mut outcomes = Vec::with_capacity(calls.len());
            for call in calls {
                let (content, ok) = if used >= max_calls {
                    exhausted = true;
                    (
                        "Not executed: the tool-call budget is exhausted.".to_string(),
                        false,
                    )
                } else if !self.config.tools.contains(&call.name) {
                    used += 1;
                    (
                        format!(
                            "Unknown tool '{}'. Available tools: {}.",
                            call.name,
                            self.config.tools.join(", ")
                        ),
                        false,
                    )
                } else if let (Value::String(_), Some(_)) = (&call.arguments, &rt.tools) {
                    used += 1;
                    (
                        "The tool arguments were not a valid JSON object.".to_string(),
                        false,
                    )
                } else {
                    used += 1;
                    self.call_tool(&call).await?
                };
                st.tool_log.push(json!({"name": call.name, "ok": ok}));
                outcomes.push(ToolOutcome {
                    call_id: call.id,
                    name: call.name,
                    // Tool output may carry secrets; the model never sees them.
                    content: rt.redactor.redact_string(content),
                    is_error: !ok,
                });
            }
            chat.turns.push(Turn::ToolResults(outcomes));
            if used >= max_calls {
                exhausted = true;
                chat.turns
                    .push(Turn::User(budget_exhausted_prompt(max_calls)));
            }
        }
    }
}

#[async_trait]
impl Agent for ModelAgent {
    fn id(&self) -> &str {
        &self.config.id
    }

    fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Per-attempt timeouts and retries happen inside `execute`.
    fn manages_timeouts(&self) -> bool {
        true
    }

    async fn execute(&self, request: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        let rt = &self.runtime;
        let started = Instant::now();
        let mut st = CallState::default();
        let result = self.run(&request, &mut st).await;
        let latency = started.elapsed();
        rt.usage.record(&CallRecord {
            provider: rt.name.clone(),
            success: result.is_ok(),
            requests: st.requests,
            retries: st.retries,
            tool_calls: u32::try_from(st.tool_log.len()).unwrap_or(u32::MAX),
            input_tokens: st.usage.input_tokens,
            output_tokens: st.usage.output_tokens,
            latency,
        });
        match result {
            Ok((text, new_turns)) => {
                if let Some(h) = &self.history
                    && let Ok(mut h) = h.lock()
                {
                    h.extend(new_turns);
                }
                let mut metadata = IndexMap::new();
                metadata.insert("provider".to_string(), json!(rt.name));
                metadata.insert("model".to_string(), json!(self.config.model));
                metadata.insert(
                    "latency_ms".to_string(),
                    json!(u64::try_from(latency.as_millis()).unwrap_or(u64::MAX)),
                );
                metadata.insert("requests".to_string(), json!(st.requests));
                metadata.insert("retries".to_string(), json!(st.retries));
                if !st.tool_log.is_empty() {
                    metadata.insert("tool_calls".to_string(), Value::Array(st.tool_log));
                }
                if let Some(r) = st.finish_reason {
                    metadata.insert("finish_reason".to_string(), json!(r));
                }
                let mut response = AgentResponse {
                    text: rt.redactor.redact_string(text),
                    metadata,
                    usage: Some(st.usage),
                };
                let mut meta =
                    Value::Object(std::mem::take(&mut response.metadata).into_iter().collect());
                rt.redactor.redact_json(&mut meta);
                if let Value::Object(m) = meta {
                    response.metadata = m.into_iter().collect();
                }
                Ok(response)
            }
            Err(e) => {
                let mut e = e;
                e.message = format!(
                    "Agent '{}' ({}, model {}) failed: {}",
                    self.config.id, rt.name, self.config.model, e.message
                );
                Err(e.into_agent_error(&rt.redactor))
            }
        }
    }
}
