//! Tool loops in `hensuc test` (docs/testing.md, *Tool calls*): a test's `[[tool_calls]]` make
//! the stub agent of a node (or agent) call tools before it answers, and `[[tool_results]]`
//! script what each call returns, by tool name and call order. The calls go through the run's
//! call journal like a real tool loop's (docs/security.md, *Call journal*), so they are
//! numbered, keyed and reported as `tool_call` events of the test's trace.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hensu_ir::AgentConfig;
use hensu_runtime::journal::{
    Approval, CallEvent, CallKind, CallObserver, CallSpec, Declared, Journaled, approve_tool_call,
    journaled,
};
use hensu_runtime::{Agent, AgentError, AgentProvider, AgentRequest, AgentResponse};
use serde_json::Value;

use super::spec::{TestSpec, ToolResultScript};

/// The scripted results of a test and how often each tool was called.
#[derive(Default)]
struct Results {
    script: Vec<ToolResultScript>,
    calls: Mutex<BTreeMap<String, u32>>,
}

impl Results {
    /// The result of the next call of `tool`: the entry for this call number, else the one
    /// without, else a tool error naming what is missing. `(ok, content)`.
    fn next(&self, tool: &str) -> (bool, String) {
        let n = {
            let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            let n = calls.entry(tool.to_string()).or_insert(0);
            *n += 1;
            *n
        };
        let find = |want: Option<u32>| {
            self.script
                .iter()
                .find(|r| r.tool == tool && r.call.as_ref().map(|c| *c.get_ref()) == want)
        };
        match find(Some(n)).or_else(|| find(None)) {
            Some(r) => (!r.error, r.result.clone()),
            None => (
                false,
                format!(
                    "no scripted result for tool `{tool}` (call {n}) in the test's [[tool_results]]"
                ),
            ),
        }
    }
}

/// The tools each node or agent calls, in order, with their arguments.
type Calls = BTreeMap<String, Vec<(String, Value)>>;

/// Wraps the test's stub provider: its agents run their scripted tool calls first.
pub struct ToolLoopStubs {
    inner: Arc<dyn AgentProvider>,
    calls: Arc<Calls>,
    results: Arc<Results>,
    /// The project's `[mcp]` section: the tools `require_approval` gates.
    mcp: Arc<hensu_mcp::McpConfig>,
}

impl ToolLoopStubs {
    /// `inner` with the test's `[[tool_calls]]` and `[[tool_results]]`.
    /// `inner` with the test's `[[tool_calls]]` and `[[tool_results]]`; `mcp` gates tools.
    pub fn new(
        inner: Arc<dyn AgentProvider>,
        spec: &TestSpec,
        mcp: hensu_mcp::McpConfig,
    ) -> ToolLoopStubs {
        let mut calls: Calls = BTreeMap::new();
        for c in &spec.tool_calls {
            calls
                .entry(c.node.get_ref().clone())
                .or_default()
                .push((c.tool.clone(), Value::Object(c.arguments.clone())));
        }
        ToolLoopStubs {
            inner,
            mcp: Arc::new(mcp),
            calls: Arc::new(calls),
            results: Arc::new(Results {
                script: spec.tool_results.clone(),
                calls: Mutex::default(),
            }),
        }
    }
}

impl AgentProvider for ToolLoopStubs {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn supports_model(&self, model: &str) -> bool {
        self.inner.supports_model(model)
    }
    fn priority(&self) -> i32 {
        self.inner.priority()
    }
    fn create_agent(
        &self,
        config: &AgentConfig,
        credentials: &std::collections::HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        let inner = self.inner.create_agent(config, credentials)?;
        Ok(Arc::new(ToolLoopAgent {
            inner,
            calls: self.calls.clone(),
            results: self.results.clone(),
            mcp: self.mcp.clone(),
        }))
    }
}

/// A stub agent that calls its scripted tools before answering; `{{tool.NAME}}` in its answer
/// becomes the last result of tool NAME.
struct ToolLoopAgent {
    inner: Arc<dyn Agent>,
    calls: Arc<Calls>,
    results: Arc<Results>,
    mcp: Arc<hensu_mcp::McpConfig>,
}

#[async_trait]
impl Agent for ToolLoopAgent {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn config(&self) -> &AgentConfig {
        self.inner.config()
    }
    fn manages_timeouts(&self) -> bool {
        self.inner.manages_timeouts()
    }
    async fn execute(&self, request: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        let script = self
            .calls
            .get(request.node_id)
            .or_else(|| self.calls.get(self.inner.id()));
        let mut last: BTreeMap<&str, String> = BTreeMap::new();
        for (tool, arguments) in script.into_iter().flatten() {
            // A gated tool (docs/mcp.md, *Tool approval*): the scripted decision first; a
            // rejected call is not made, its answer is the rejection the model would read.
            if self.mcp.requires_approval(None, tool) {
                match approve_tool_call(tool, arguments).await {
                    Ok(Approval::Approved(_)) => {}
                    Ok(Approval::Rejected(reason)) => {
                        last.insert(tool, hensu_providers::rejected_message(tool, &reason));
                        continue;
                    }
                    Err(e) => return Err(AgentError::new(e.kind(), e.to_string())),
                }
            }
            let spec = CallSpec {
                kind: CallKind::Tool,
                name: tool,
                declared: Declared::default(),
            };
            let results = &self.results;
            let call = journaled(spec, |_slot| async move {
                let (ok, content) = results.next(tool);
                Ok::<_, std::convert::Infallible>(((ok, content), ok))
            })
            .await;
            match call {
                Ok((_, content)) => {
                    last.insert(tool, content);
                }
                Err(Journaled::Call(e)) => return Err(AgentError::new(e.kind(), e.to_string())),
                Err(Journaled::Effect(never)) => match never {},
            }
        }
        let mut response = self.inner.execute(request).await?;
        for (tool, content) in last {
            response.text = response
                .text
                .replace(&format!("{{{{tool.{tool}}}}}"), &content);
        }
        Ok(response)
    }
}

/// The `tool_call` events of a test's trace: tool, node, branch, call number and outcome (no
/// arguments, results or times), as `--events` writes them when the call finished.
pub struct ToolEvents(pub Arc<Mutex<Vec<Value>>>);

impl CallObserver for ToolEvents {
    fn on_call(&self, event: &CallEvent<'_>) {
        // The `--events` line of the finished call, without its duration (it varies).
        if event.finished.is_none() {
            return;
        }
        let Some(mut v) = event.to_json() else {
            return;
        };
        if let Some(obj) = v.as_object_mut() {
            obj.remove("duration_ms");
        }
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(v);
    }
}
