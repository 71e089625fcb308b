//! Node execution: enum dispatch over the node kinds, standard (agent) nodes, the agent call
//! with its timeout, and action nodes.

use std::time::{Duration, Instant};

use hensu_ir::{Node, StandardNode};
use serde_json::Value;

use super::Exec;
use super::Prepared;
use super::run_loop::Flow;
use crate::agent::AgentRequest;
use crate::enrich::{Enrichment, enrich};
use crate::error::RuntimeError;
use crate::events::Event;
use crate::review::ReviewDecision;
use crate::run_types::CancelToken;
use crate::state::{NodeResult, NodeStatus, RunState};
use crate::template::resolve_into;
use crate::value::{Context, render};
use crate::value::{remove_var, set_current_node};

impl Exec<'_> {
    /// Node executors (enum dispatch over the node kinds). `flow` is the flow the node runs
    /// in; `resume` answers a review pending in the node's saved nested flows.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn execute_node(
        &self,
        p: &Prepared,
        idx: usize,
        node: &Node,
        state: &mut RunState,
        cancel: &CancelToken,
        started: Instant,
        flow: Flow<'_>,
        resume: Option<ReviewDecision>,
        prompt: &mut String,
    ) -> Result<NodeResult, RuntimeError> {
        match node {
            Node::Standard(s) => self.execute_standard(p, idx, s, state, prompt).await,
            Node::Generic(g) => {
                let handler = self.generic.get(&g.executor_type).ok_or_else(|| {
                    RuntimeError::NoGenericHandler {
                        executor_type: g.executor_type.clone(),
                    }
                })?;
                let scope = self.call_scope(&g.id);
                Ok(
                    crate::trace_context::in_call(scope, handler.handle(g, &mut state.context))
                        .await,
                )
            }
            // Rare or large futures are boxed so the hot standard-node future stays small.
            Node::Action(a) => Ok(Box::pin(self.execute_action(a, state)).await),
            Node::Parallel(par) => {
                Box::pin(super::kinds::parallel::execute_parallel(
                    self, p, par, state, flow,
                ))
                .await
            }
            Node::Fork(f) => {
                super::kinds::fork::execute_fork(
                    self, p, idx, f, state, cancel, started, resume, flow,
                )
                .await
            }
            Node::Join(j) => Ok(super::kinds::join::execute_join(j, state)),
            Node::Wait(w) => Box::pin(super::kinds::wait::execute_wait(self, w, state, flow)).await,
            Node::Map(m) => {
                Box::pin(super::kinds::map::execute_map(
                    self, p, m, state, cancel, flow,
                ))
                .await
            }
            Node::SubWorkflow(s) => {
                super::kinds::subworkflow::execute_subworkflow(self, s, state, cancel, flow, resume)
                    .await
            }
            Node::End(_) => Ok(NodeResult {
                status: NodeStatus::End,
                output: None,
                error: None,
                metadata: Default::default(),
            }),
        }
    }

    /// Standard node (upstream `StandardNodeExecutor` + `AgentLifecycleRunner`); the prompt is
    /// rendered into `prompt` (the flow's reused buffer).
    pub(super) async fn execute_standard(
        &self,
        p: &Prepared,
        idx: usize,
        node: &StandardNode,
        state: &mut RunState,
        prompt: &mut String,
    ) -> Result<NodeResult, RuntimeError> {
        let pn = &p.plan.nodes[idx];
        let ctx = &mut state.context;
        let prompt_override = remove_var(ctx, "_prompt_override");
        set_current_node(ctx, &node.id);
        prompt.clear();
        {
            let template: &str = match &prompt_override {
                Some(Value::String(s)) => s,
                _ => node.prompt.as_deref().unwrap_or(""),
            };
            let ctx_ref: &Context = ctx;
            resolve_into(template, prompt, |name| {
                ctx_ref
                    .get(name)
                    .map(render)
                    .unwrap_or(std::borrow::Cow::Borrowed(""))
            });
        }
        for w in &node.writes {
            remove_var(ctx, w);
        }
        let agent_id = node
            .agent_id
            .as_deref()
            .ok_or_else(|| RuntimeError::NoAgent {
                node: node.id.clone(),
            })?;
        let (agent, system_prompt) =
            p.agents.get_with_system_prompt(agent_id).ok_or_else(|| {
                RuntimeError::AgentNotFound {
                    agent: agent_id.to_string(),
                }
            })?;
        let enrichment = Enrichment {
            recommendation: match ctx.get("recommendation") {
                Some(Value::String(s)) => Some(s.as_str()),
                _ => None,
            },
            rubric: node.rubric.as_ref(),
            needs_score: pn.needs_score,
            needs_approved: pn.needs_approved,
            needs_recommendation: pn.needs_recommendation,
            writes: &node.writes,
            yields: &[],
            schema: p.workflow().state_schema.as_ref(),
        };
        if !enrichment.is_empty() {
            enrich(prompt, &enrichment);
        }
        let timeout = self.agent_timeout(agent.as_ref());
        // A JSON answer is expected when more than the single raw-output write is extracted.
        let json_mode = pn.extract_keys.len() > 1 || pn.has_engine_vars;
        let mut required: Vec<&str> = Vec::new();
        if json_mode {
            required.extend(node.writes.iter().map(String::as_str));
            if pn.needs_score {
                required.push("score");
            }
            if pn.needs_approved {
                required.push("approved");
            }
        }
        Ok(self
            .call_agent(
                agent.as_ref(),
                system_prompt,
                &node.id,
                None,
                prompt,
                ctx,
                timeout,
                &required,
            )
            .await)
    }

    /// The overall time limit of one agent call: the agent's own `timeout` (seconds) unless the
    /// agent manages its timeouts itself, else the run's default.
    pub(crate) fn agent_timeout(&self, agent: &dyn crate::agent::Agent) -> Option<Duration> {
        if agent.manages_timeouts() {
            return self.options.default_agent_timeout;
        }
        agent
            .config()
            .timeout
            .filter(|t| *t > 0)
            .map(|t| Duration::from_secs(t as u64))
            .or(self.options.default_agent_timeout)
    }

    /// Calls an agent, with an optional timeout, and reports the call. `required_keys` are the
    /// JSON keys the answer must carry (empty: no structured-output correction).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn call_agent(
        &self,
        agent: &dyn crate::agent::Agent,
        system_prompt: &str,
        node_id: &str,
        branch_id: Option<&str>,
        prompt: &str,
        ctx: &Context,
        timeout: Option<Duration>,
        required_keys: &[&str],
    ) -> NodeResult {
        // Only the `AgentCall` event reads the call's duration.
        let call_started = self.step_events.then(Instant::now);
        let request = AgentRequest {
            node_id,
            prompt,
            system_prompt,
            context: ctx,
        };
        let call = crate::trace_context::in_call(self.call_scope(node_id), async {
            let call = async {
                match (&self.structured, required_keys.is_empty()) {
                    (Some(s), false) => s.call(agent, request, required_keys, self.listener).await,
                    _ => agent.execute(request).await,
                }
            };
            // A parallel branch numbers its calls apart from its siblings'. A streamed call
            // (docs/server.md, *Token events*) is boxed, so the future of a call nobody
            // watches stays as small as before (deep sub-workflow chains nest it).
            match (branch_id, self.token_scope(node_id, branch_id)) {
                (None, None) => call.await,
                (Some(b), None) => crate::journal::in_nested(b, call).await,
                (b, scope @ Some(_)) => {
                    let call = async move {
                        match b {
                            Some(b) => crate::journal::in_nested(b, call).await,
                            None => call.await,
                        }
                    };
                    Box::pin(crate::tokens::in_call(scope, call)).await
                }
            }
        });
        let response = match timeout {
            None => call.await,
            Some(t) => match tokio::time::timeout(t, call).await {
                Ok(r) => r,
                Err(_) => Err(crate::agent::AgentError::new(
                    "timeout",
                    format!(
                        "Agent '{}' did not answer within {} ms",
                        agent.id(),
                        t.as_millis()
                    ),
                )),
            },
        };
        let duration_us = || call_started.map_or(0, |t| t.elapsed().as_micros() as u64);
        match response {
            Ok(resp) => {
                if self.step_events {
                    self.listener.on_event(&Event::AgentCall {
                        node_id,
                        agent_id: agent.id(),
                        branch_id,
                        model: &agent.config().model,
                        prompt,
                        response: Some(&resp.text),
                        error: None,
                        prompt_bytes: prompt.len(),
                        response_bytes: resp.text.len(),
                        duration_us: duration_us(),
                        usage: resp.usage,
                    });
                }
                let mut metadata = resp.metadata;
                if let Some(u) = resp.usage {
                    metadata.insert("input_tokens".into(), Value::from(u.input_tokens));
                    metadata.insert("output_tokens".into(), Value::from(u.output_tokens));
                }
                NodeResult {
                    status: NodeStatus::Success,
                    output: Some(Value::String(resp.text)),
                    error: None,
                    metadata,
                }
            }
            Err(e) => {
                if self.step_events {
                    self.listener.on_event(&Event::AgentCall {
                        node_id,
                        agent_id: agent.id(),
                        branch_id,
                        model: &agent.config().model,
                        prompt,
                        response: None,
                        error: Some(&e.message),
                        prompt_bytes: prompt.len(),
                        response_bytes: 0,
                        duration_us: duration_us(),
                        usage: None,
                    });
                }
                NodeResult::failure(e.message).with_meta("errorType", Value::String(e.kind))
            }
        }
    }

    /// Action node: every action in order, no short-circuit. On success, the output is the
    /// result of the last action that has one (a command's stdout, a handler's answer other
    /// than `log`'s; docs/language.md, *Action node*), else "Actions completed".
    pub(super) async fn execute_action(
        &self,
        node: &hensu_ir::ActionNode,
        state: &mut RunState,
    ) -> NodeResult {
        // As for a standard node: a stale value of a `writes` key cannot leak into this attempt.
        for w in &node.writes {
            remove_var(&mut state.context, w);
        }
        let (mut result, outputs) = self
            .execute_actions(&node.id, &node.actions, &state.context)
            .await;
        if result.status == NodeStatus::Success
            && let Some(last) = node
                .actions
                .iter()
                .zip(outputs)
                .rev()
                .find(|(a, _)| self.gives_result(a))
                .map(|(_, o)| o)
        {
            result.output = Some(Value::String(last));
        }
        result
    }

    /// Whether an action's output is a result (a command, a handler other than `log`).
    pub(super) fn gives_result(&self, action: &hensu_ir::Action) -> bool {
        match action {
            hensu_ir::Action::Execute { .. } => true,
            hensu_ir::Action::Send { handler_id, .. } => self
                .actions
                .get(handler_id)
                .is_some_and(|h| h.produces_result()),
        }
    }

    /// Runs `actions` in order, all of them, reporting each under `owner_id` (an action node or
    /// a compensation); FAILURE when any failed. Also returns each action's output text.
    pub(super) async fn execute_actions(
        &self,
        owner_id: &str,
        actions: &[hensu_ir::Action],
        context: &Context,
    ) -> (NodeResult, Vec<String>) {
        let mut first_failure: Option<String> = None;
        let mut outputs = Vec::with_capacity(actions.len());
        for action in actions {
            let (label, result) = match action {
                hensu_ir::Action::Send {
                    handler_id,
                    payload,
                    raw_payload,
                } => {
                    let label = format!("send:{handler_id}");
                    let result = match self.actions.get(handler_id) {
                        None => crate::action::ActionResult::failure(format!(
                            "Action handler not found: '{handler_id}'. Registered handlers: [{}]",
                            self.actions.ids().join(", ")
                        )),
                        Some(h) => {
                            let resolved;
                            let payload = if *raw_payload {
                                payload
                            } else {
                                resolved = payload
                                    .iter()
                                    .map(|(k, v)| {
                                        let v = match v {
                                            Value::String(s) => {
                                                Value::String(crate::template::resolve(s, context))
                                            }
                                            other => other.clone(),
                                        };
                                        (k.clone(), v)
                                    })
                                    .collect();
                                &resolved
                            };
                            let scope = self.call_scope(owner_id);
                            crate::trace_context::in_call(scope, h.execute(payload, context)).await
                        }
                    };
                    (label, result)
                }
                hensu_ir::Action::Execute { command_id } => (
                    format!("execute:{command_id}"),
                    self.commands.execute(command_id, context).await,
                ),
            };
            self.listener.on_event(&Event::ActionExecuted {
                node_id: owner_id,
                action: &label,
                success: result.success,
                output: &result.output,
            });
            if !result.success && first_failure.is_none() {
                first_failure = Some(format!("{label}: {}", result.output));
            }
            outputs.push(result.output);
        }
        let result = match first_failure {
            None => NodeResult::success("Actions completed"),
            // Upstream's words, then the first failed action and what it said (a command's
            // error, a refusal, an HTTP status), so the cause reaches the run's record.
            Some(cause) => NodeResult::failure(format!("One or more actions failed: {cause}")),
        };
        (result, outputs)
    }
}
