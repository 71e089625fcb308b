//! Span names and attributes, after the OpenTelemetry GenAI semantic conventions
//! (`gen_ai.operation.name` = `invoke_workflow`, `invoke_agent`, `chat`, `execute_tool`), with
//! hensu's own attributes under `hensu.*`. Both the live listener and the rebuild build their
//! spans here, so the two cannot disagree on a name or an attribute.

use hensu_ir::{Action, Node, Workflow};
use hensu_runtime::{NodeStatus, Usage};

use crate::ids::{Scope, SpanKey};
use crate::span::{Kind, SpanRecord, Status};

/// The run a span belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInfo {
    pub run_id: String,
    pub workflow_id: String,
    pub workflow_version: String,
    /// The server tenant whose run it is (`None`: a local run).
    pub tenant: Option<String>,
    /// The caller's trace and span the run was started under (a `traceparent`): the root span's
    /// parent and the trace's id. `None`: the trace id is the run id's hash.
    pub parent: Option<([u8; 16], [u8; 8])>,
}

impl RunInfo {
    /// The run's trace id.
    pub fn trace_id(&self) -> [u8; 16] {
        self.parent
            .map_or_else(|| crate::ids::trace_id(&self.run_id), |(t, _)| t)
    }
}

/// The root span: `invoke_workflow <workflow id>`.
pub fn run_span(run: &RunInfo) -> SpanRecord {
    let mut s = SpanRecord::new(
        &run.run_id,
        SpanKey::Run,
        None,
        format!("invoke_workflow {}", run.workflow_id),
    );
    s.parent_span_id = run.parent.map(|(_, span)| span);
    s.attr("gen_ai.operation.name", "invoke_workflow")
        .attr("gen_ai.workflow.name", run.workflow_id.as_str())
        .attr("hensu.workflow.id", run.workflow_id.as_str())
        .attr("hensu.workflow.version", run.workflow_version.as_str())
        .attr("hensu.run.id", run.run_id.as_str());
    if let Some(t) = &run.tenant {
        s.attr("hensu.tenant.id", t.as_str());
    }
    s
}

/// The span of a node visit: `invoke_agent <agent>` for a standard node with an agent (the
/// visit is the agent's invocation: prompt, call, rubric, review), `<kind> <node>` otherwise.
pub fn node_span(run_id: &str, workflow: &Workflow, step: u64, node_id: &str) -> SpanRecord {
    let node = workflow.node(node_id);
    let kind = node.map_or("node", |n| kind_word(n));
    let agent = match node {
        Some(Node::Standard(n)) => n.agent_id.as_deref(),
        _ => None,
    };
    let key = SpanKey::Node {
        step,
        node: node_id.to_string(),
    };
    let name = match agent {
        Some(a) => format!("invoke_agent {a}"),
        None => format!("{kind} {node_id}"),
    };
    let mut s = SpanRecord::new(run_id, key, Some(&SpanKey::Run), name);
    if let Some(a) = agent {
        s.attr("gen_ai.operation.name", "invoke_agent")
            .attr("gen_ai.agent.name", a)
            .attr("gen_ai.agent.id", a);
        if let Some(model) = workflow.agents.get(a).map(|c| c.model.as_str()) {
            s.attr("gen_ai.request.model", model)
                .attr("gen_ai.provider.name", provider_name(model));
        }
    }
    s.attr("hensu.node.id", node_id)
        .attr("hensu.node.kind", kind)
        .attr("hensu.step", step)
        .attr("hensu.run.id", run_id);
    s
}

/// The words of the node kinds in span names (`parallel vote`, `action publish`).
fn kind_word(node: &Node) -> &'static str {
    match node {
        Node::Standard(_) => "standard",
        Node::Parallel(_) => "parallel",
        Node::Fork(_) => "fork",
        Node::Join(_) => "join",
        Node::Generic(_) => "generic",
        Node::Action(_) => "action",
        Node::SubWorkflow(_) => "sub_workflow",
        Node::End(_) => "end",
        Node::Wait(_) => "wait",
        Node::Map(_) => "map",
    }
}

/// The span of one agent call: `chat <model>`, a client span.
pub fn agent_span(
    run_id: &str,
    key: SpanKey,
    parent: &SpanKey,
    agent_id: &str,
    model: &str,
) -> SpanRecord {
    let branch = match &key {
        SpanKey::Agent {
            branch: Some(b), ..
        } if !b.starts_with(COMPENSATION_BRANCH) => Some(b.clone()),
        _ => None,
    };
    let mut s = SpanRecord::new(run_id, key, Some(parent), format!("chat {model}"));
    s.kind = Kind::Client;
    s.attr("gen_ai.operation.name", "chat")
        .attr("gen_ai.request.model", model)
        .attr("gen_ai.provider.name", provider_name(model))
        .attr("gen_ai.agent.name", agent_id)
        .attr("hensu.run.id", run_id);
    if let Some(b) = branch {
        s.attr("hensu.branch.id", b);
    }
    s
}

/// The `branch` of an agent call made by a compensation (`compensation/<id>`).
pub const COMPENSATION_BRANCH: &str = "compensation/";

/// The key of the agent call a compensation makes.
pub fn compensation_agent_key(visit_step: u64, compensation_id: &str) -> SpanKey {
    SpanKey::Agent {
        step: visit_step,
        branch: Some(format!("{COMPENSATION_BRANCH}{compensation_id}")),
        attempt: 0,
    }
}

/// Token usage of an agent call or a visit.
pub fn usage(s: &mut SpanRecord, usage: &Usage) {
    s.attr("gen_ai.usage.input_tokens", usage.input_tokens)
        .attr("gen_ai.usage.output_tokens", usage.output_tokens);
}

/// `send:<handler>` / `execute:<command>`, as the `action_executed` event names an action.
pub fn action_label(action: &Action) -> String {
    match action {
        Action::Send { handler_id, .. } => format!("send:{handler_id}"),
        Action::Execute { command_id } => format!("execute:{command_id}"),
    }
}

/// The span of one action (a command, a webhook, any `send` handler): `execute_tool <action>`.
pub fn action_span(
    run_id: &str,
    step: u64,
    index: u32,
    scope: Scope,
    parent: &SpanKey,
    label: &str,
) -> SpanRecord {
    let key = SpanKey::Action { step, index, scope };
    let mut s = SpanRecord::new(run_id, key, Some(parent), format!("execute_tool {label}"));
    s.kind = Kind::Client;
    s.attr("gen_ai.operation.name", "execute_tool")
        .attr("gen_ai.tool.name", label)
        .attr("gen_ai.tool.type", "extension")
        .attr("hensu.action", label)
        .attr("hensu.run.id", run_id);
    s
}

/// The main-flow step of a journal visit (`7`, or `7#branch` for a parallel branch); `None`
/// for a visit inside a sub-workflow child or a fork branch's flow (`7/3`, `7#target/3`),
/// whose visits the rebuild does not have.
pub fn tool_visit_step(visit: &str) -> Option<u64> {
    if visit.contains('/') {
        return None;
    }
    let end = visit.find('#').unwrap_or(visit.len());
    visit[..end].parse().ok()
}

/// The span of one tool call of an agent's tool loop: `execute_tool <tool>` (client), a
/// child of the visit at `step` of `node_id`; its `visit` and `index` are the call's in the
/// journal (docs/security.md, *Call journal*), so the live and the rebuilt span agree.
pub fn tool_span(
    run_id: &str,
    step: u64,
    node_id: &str,
    visit: &str,
    index: u32,
    tool: &str,
    ok: bool,
) -> SpanRecord {
    let parent = SpanKey::Node {
        step,
        node: node_id.to_string(),
    };
    let key = SpanKey::Tool {
        visit: visit.to_string(),
        index,
    };
    let mut s = SpanRecord::new(run_id, key, Some(&parent), format!("execute_tool {tool}"));
    s.kind = Kind::Client;
    s.attr("gen_ai.operation.name", "execute_tool")
        .attr("gen_ai.tool.name", tool)
        .attr("gen_ai.tool.type", "function")
        .attr("hensu.tool.call_index", u64::from(index))
        .attr("hensu.run.id", run_id);
    if let Some((_, branch)) = visit.split_once('#') {
        s.attr("hensu.branch.id", branch);
    }
    s.status = if ok {
        Status::Ok
    } else {
        Status::Error("the tool call failed".into())
    };
    s
}

/// The span of the time a visit waited for a human review (a deferred review's pause).
pub fn review_span(run_id: &str, step: u64, round: u32, node_id: &str) -> SpanRecord {
    let parent = SpanKey::Node {
        step,
        node: node_id.to_string(),
    };
    let key = SpanKey::Review { step, round };
    let mut s = SpanRecord::new(run_id, key, Some(&parent), format!("review {node_id}"));
    s.attr("hensu.node.id", node_id)
        .attr("hensu.step", step)
        .attr("hensu.run.id", run_id);
    s
}

/// The span of a saga compensation of the visit at `visit_step` of `node_id`.
pub fn compensation_span(
    run_id: &str,
    visit_step: u64,
    compensation_id: &str,
    node_id: &str,
) -> SpanRecord {
    let key = SpanKey::Compensation {
        visit_step,
        id: compensation_id.to_string(),
    };
    let mut s = SpanRecord::new(
        run_id,
        key,
        Some(&SpanKey::Run),
        format!("compensate {node_id}"),
    );
    s.attr("hensu.compensation.id", compensation_id)
        .attr("hensu.compensation.visit_step", visit_step)
        .attr("hensu.node.id", node_id)
        .attr("hensu.run.id", run_id);
    s
}

/// A node status as a span status and attribute.
pub fn node_status(s: &mut SpanRecord, status: NodeStatus, error: Option<&str>) {
    s.attr("hensu.node.status", status.as_str());
    s.status = match status {
        NodeStatus::Failure => Status::Error(error.unwrap_or("FAILURE").to_string()),
        _ => Status::Ok,
    };
}

/// `gen_ai.provider.name` from the model id, by the same prefixes hensu routes models by
/// (docs/cli.md); unknown families are `hensu`'s own.
pub fn provider_name(model: &str) -> &'static str {
    let m = model.to_ascii_lowercase();
    if m.starts_with("claude") {
        "anthropic"
    } else if m.starts_with("gpt")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
    {
        "openai"
    } else if m.starts_with("gemini") {
        "gcp.gemini"
    } else if m.starts_with("deepseek") {
        "deepseek"
    } else {
        "hensu"
    }
}
