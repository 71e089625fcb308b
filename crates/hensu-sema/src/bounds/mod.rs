//! A static worst-case bound of one run (docs/bounds.md): for each workflow, the most node
//! executions and agent calls (per agent and per model) a run can make, derived from the graph
//! and every budget, and with prices the worst-case cost. Pure: sub-workflows come in through a
//! lookup closure, prices through [`BoundsOptions`].
//!
//! * [`edges`]: which edges are budgeted and by how much (one rule per construct).
//! * [`count`]: executions per node from those edges.
//! * this file: agent calls, sub-workflow expansion, cost, JSON.

pub mod count;
pub mod edges;

use std::collections::BTreeMap;

use hensu_ir::{CompensationBody, ConsensusStrategy, Node, Workflow};
use serde_json::{Value, json};

/// Version of the `bounds` JSON section.
pub const BOUNDS_FORMAT_VERSION: u32 = 1;
/// Deepest sub-workflow nesting the runtime allows (docs/language.md, *Sub-workflows at run
/// time*: "nested at most 16 deep"); a deeper call fails its node without running anything.
pub const MAX_SUBWORKFLOW_DEPTH: u32 = 16;
/// Automatic rubric back-tracks to an *earlier* node (score below 60) one node may make, when no
/// `onScore` rule takes the score: the runtime's documented cap (docs/language.md, *Rubric
/// evaluation*). Kept as an option so the bound follows the runtime's constant.
pub const DEFAULT_AUTO_BACKTRACK_CAP: u64 = 3;
/// `maxTokens` assumed for an agent that declares none.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;
/// Input tokens assumed per call (prompts grow with context; this is an estimate, not a bound).
pub const DEFAULT_INPUT_TOKENS_PER_CALL: u64 = 4000;

/// A count that may be unbounded (a cycle without a budget; only `maxSteps` stops it).
/// Ordered: every finite count is below `Unbounded`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Count {
    Finite(u64),
    Unbounded,
}

impl Count {
    pub fn plus(self, other: Count) -> Count {
        match (self, other) {
            (Count::Finite(a), Count::Finite(b)) => Count::Finite(a.saturating_add(b)),
            _ => Count::Unbounded,
        }
    }

    pub fn scaled(self, k: u64) -> Count {
        match self {
            Count::Finite(a) => Count::Finite(a.saturating_mul(k)),
            Count::Unbounded if k == 0 => Count::Finite(0),
            Count::Unbounded => Count::Unbounded,
        }
    }

    pub fn times(self, other: Count) -> Count {
        match other {
            Count::Finite(k) => self.scaled(k),
            Count::Unbounded if self == Count::Finite(0) => Count::Finite(0),
            Count::Unbounded => Count::Unbounded,
        }
    }

    pub fn finite(self) -> Option<u64> {
        match self {
            Count::Finite(n) => Some(n),
            Count::Unbounded => None,
        }
    }

    pub fn to_json(self) -> Value {
        match self {
            Count::Finite(n) => json!(n),
            Count::Unbounded => json!("unbounded"),
        }
    }
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Count::Finite(n) => write!(f, "{n}"),
            Count::Unbounded => f.write_str("unbounded"),
        }
    }
}

/// Price of a model in money per million tokens (`[pricing."model"]` of `hensu.toml`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

/// What the bound needs besides the workflows.
#[derive(Clone, Debug)]
pub struct BoundsOptions {
    /// Structured-output corrective re-prompts per call (`[structured_output] max_corrections`).
    pub max_corrections: u32,
    pub auto_backtrack_cap: u64,
    pub default_max_tokens: u64,
    pub input_tokens_per_call: u64,
    /// Prices by model id; a model named `stub` is free.
    pub pricing: BTreeMap<String, Price>,
}

impl Default for BoundsOptions {
    fn default() -> Self {
        BoundsOptions {
            max_corrections: 1,
            auto_backtrack_cap: DEFAULT_AUTO_BACKTRACK_CAP,
            default_max_tokens: DEFAULT_MAX_TOKENS,
            input_tokens_per_call: DEFAULT_INPUT_TOKENS_PER_CALL,
            pricing: BTreeMap::new(),
        }
    }
}

/// Agent calls of one agent, with what its cost needs.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentCalls {
    pub model: String,
    pub max_tokens: u64,
    pub calls: Count,
}

/// The worst case of one run of a workflow (sub-workflows included).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkflowBounds {
    pub workflow_id: String,
    /// Node executions of the workflow itself, by node id.
    pub per_node: BTreeMap<String, Count>,
    /// Node executions, sub-workflow runs included.
    pub node_executions: Count,
    /// Agent calls by agent; agents of sub-workflows are `<workflow id>/<agent id>`.
    pub agent_calls: BTreeMap<String, AgentCalls>,
    pub model_calls: BTreeMap<String, Count>,
    /// Each cycle without a budget (node ids), W0303.
    pub unbounded_cycles: Vec<Vec<String>>,
    /// The run's step limit, the only cap of an unbounded run.
    pub max_steps: i64,
    /// Sub-workflows not found (counted as zero).
    pub missing_workflows: Vec<String>,
    /// Durable waits (docs/language.md, *Timers and signals*), sub-workflows included.
    pub waits: Waits,
}

/// The durable waits of a run at worst: how many timer and signal waits, and how long they
/// keep it waiting in all (unbounded with an `until`, or a signal wait without a timeout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waits {
    pub timers: Count,
    pub signals: Count,
    pub wait_ms: Count,
}

impl Default for Waits {
    fn default() -> Self {
        Waits {
            timers: Count::Finite(0),
            signals: Count::Finite(0),
            wait_ms: Count::Finite(0),
        }
    }
}

impl Waits {
    fn is_none(&self) -> bool {
        *self == Waits::default()
    }

    fn plus(self, other: Waits) -> Waits {
        Waits {
            timers: self.timers.plus(other.timers),
            signals: self.signals.plus(other.signals),
            wait_ms: self.wait_ms.plus(other.wait_ms),
        }
    }

    fn times(self, runs: Count) -> Waits {
        Waits {
            timers: self.timers.times(runs),
            signals: self.signals.times(runs),
            wait_ms: self.wait_ms.times(runs),
        }
    }

    /// A wait node that runs `runs` times.
    fn of(node: &hensu_ir::WaitNode, runs: Count) -> Waits {
        let once = node.max_wait_ms().map_or(Count::Unbounded, Count::Finite);
        let (timers, signals) = if node.signal().is_some() {
            (Count::Finite(0), runs)
        } else {
            (runs, Count::Finite(0))
        };
        Waits {
            timers,
            signals,
            wait_ms: once.times(runs),
        }
    }
}

/// Worst-case cost in money.
#[derive(Clone, Debug, PartialEq)]
pub enum CostBound {
    Finite(f64),
    /// Some calls are unbounded.
    Unbounded,
    /// These models have calls but no price.
    Unpriced(Vec<String>),
}

/// The bound of `workflow`; `lookup` finds sub-workflows by id.
pub fn analyze<'a>(
    workflow: &'a Workflow,
    lookup: &dyn Fn(&str) -> Option<&'a Workflow>,
    options: &BoundsOptions,
) -> WorkflowBounds {
    let mut missing = Vec::new();
    let mut b = analyze_at(workflow, lookup, options, 0, &mut missing);
    missing.sort();
    missing.dedup();
    b.missing_workflows = missing;
    b
}

/// The most items a map node's list may hold: `maxItems`, else unbounded.
fn map_items(m: &hensu_ir::MapNode) -> Count {
    match m.max_items {
        Some(n) => Count::Finite(n.max(0) as u64),
        None => Count::Unbounded,
    }
}

fn analyze_at<'a>(
    workflow: &'a Workflow,
    lookup: &dyn Fn(&str) -> Option<&'a Workflow>,
    options: &BoundsOptions,
    depth: u32,
    missing: &mut Vec<String>,
) -> WorkflowBounds {
    let edges = edges::Edges::of(workflow, options);
    let counts = count::count(&edges);
    let ids: Vec<&String> = workflow.nodes.keys().collect();
    let mut per_node = BTreeMap::new();
    let mut node_executions = Count::Finite(0);
    let mut agent_calls: BTreeMap<String, AgentCalls> = BTreeMap::new();
    let per_call = 1 + u64::from(options.max_corrections);
    let add_calls = |agent_calls: &mut BTreeMap<String, AgentCalls>, agent: &str, n: Count| {
        let config = workflow.agents.get(agent);
        let entry = agent_calls
            .entry(agent.to_string())
            .or_insert_with(|| AgentCalls {
                model: config.map_or_else(String::new, |c| c.model.clone()),
                max_tokens: config
                    .and_then(|c| c.max_tokens)
                    .and_then(|t| u64::try_from(t).ok())
                    .unwrap_or(options.default_max_tokens),
                calls: Count::Finite(0),
            });
        entry.calls = entry.calls.plus(n);
    };
    // A run ends at its first end node: all end nodes together run at most once.
    let mut ends = Count::Finite(0);
    let mut waits = Waits::default();
    for (i, node) in workflow.nodes.values().enumerate() {
        let mut runs = counts.per_node[i];
        if node.is_end() {
            runs = if runs == Count::Finite(0) {
                runs
            } else {
                Count::Finite(1)
            };
            ends = Count::Finite(1);
        } else {
            node_executions = node_executions.plus(runs);
        }
        per_node.insert(ids[i].clone(), runs);
        // An agent compensation runs at most once per completed visit of a node naming it (no
        // corrections: it asks for no JSON keys; docs/language.md, *Saga compensation*).
        if let Some(c) = workflow.saga.compensation_of(ids[i])
            && let CompensationBody::Agent { agent_id, .. } = &c.body
        {
            add_calls(&mut agent_calls, agent_id, runs);
        }
        match node {
            Node::Standard(s) => {
                if let Some(agent) = &s.agent_id {
                    // Corrections re-prompt only an answer that lacks expected JSON keys.
                    let wants_json = !s.writes.is_empty()
                        || s.rubric.is_some()
                        || s.transition_rules
                            .iter()
                            .any(|r| !r.required_routing_vars().is_empty());
                    let per = if wants_json { per_call } else { 1 };
                    add_calls(&mut agent_calls, agent, runs.scaled(per));
                }
            }
            Node::Parallel(p) => {
                for branch in &p.branches {
                    let wants_json = p.consensus_config.is_some() || !branch.yields.is_empty();
                    let per = if wants_json { per_call } else { 1 };
                    add_calls(&mut agent_calls, &branch.agent_id, runs.scaled(per));
                }
                if let Some(c) = &p.consensus_config
                    && c.strategy == ConsensusStrategy::JudgeDecides
                    && let Some(judge) = &c.judge_agent_id
                {
                    add_calls(&mut agent_calls, judge, runs.scaled(per_call));
                }
            }
            Node::Map(m) => {
                // One call per item, at most `maxItems` items a visit; without it the list's
                // length is only known at run time (W0336; docs/bounds.md).
                if let Some(agent) = &m.agent_id {
                    add_calls(&mut agent_calls, agent, runs.times(map_items(m)));
                }
            }
            Node::Wait(w) if runs != Count::Finite(0) => waits = waits.plus(Waits::of(w, runs)),
            _ => {}
        }
        // A sub-workflow node runs its child once per run, a map node's sub-workflow body once
        // per item.
        let called = match node {
            Node::SubWorkflow(sub) => Some((sub.workflow_id.as_str(), runs)),
            Node::Map(m) => m.target.as_deref().map(|t| (t, runs.times(map_items(m)))),
            _ => None,
        };
        if let Some((child_id, times)) = called
            && times != Count::Finite(0)
        {
            // The runtime refuses a call at MAX_SUBWORKFLOW_DEPTH: nothing runs below it.
            if depth >= MAX_SUBWORKFLOW_DEPTH {
                continue;
            }
            let Some(child) = lookup(child_id) else {
                missing.push(child_id.to_string());
                continue;
            };
            let inner = analyze_at(child, lookup, options, depth + 1, missing);
            node_executions = node_executions.plus(inner.node_executions.times(times));
            waits = waits.plus(inner.waits.times(times));
            for (agent, calls) in inner.agent_calls {
                let key = if agent.contains('/') {
                    agent
                } else {
                    format!("{}/{agent}", child.id)
                };
                let entry = agent_calls.entry(key).or_insert(AgentCalls {
                    calls: Count::Finite(0),
                    ..calls.clone()
                });
                entry.calls = entry.calls.plus(calls.calls.times(times));
            }
        }
    }
    node_executions = node_executions.plus(ends);
    let mut model_calls: BTreeMap<String, Count> = BTreeMap::new();
    for calls in agent_calls.values() {
        let e = model_calls
            .entry(calls.model.clone())
            .or_insert(Count::Finite(0));
        *e = e.plus(calls.calls);
    }
    let unbounded_cycles = counts
        .cycles
        .iter()
        .map(|c| c.iter().map(|&i| ids[i].clone()).collect())
        .collect();
    WorkflowBounds {
        workflow_id: workflow.id.clone(),
        per_node,
        node_executions,
        agent_calls,
        model_calls,
        unbounded_cycles,
        max_steps: workflow.config.as_ref().map_or_else(
            || hensu_ir::WorkflowConfig::default().max_steps,
            |c| c.max_steps,
        ),
        missing_workflows: Vec::new(),
        waits,
    }
}

impl WorkflowBounds {
    /// Worst-case cost: every call uses its agent's `maxTokens` of output and the assumed input.
    pub fn cost(&self, options: &BoundsOptions) -> CostBound {
        let mut total = 0.0;
        let mut unpriced = Vec::new();
        let mut unbounded = false;
        for calls in self.agent_calls.values() {
            if calls.calls == Count::Finite(0) || calls.model == "stub" {
                continue;
            }
            let Some(price) = options.pricing.get(&calls.model) else {
                unpriced.push(calls.model.clone());
                continue;
            };
            let Some(n) = calls.calls.finite() else {
                unbounded = true;
                continue;
            };
            let per_call = (options.input_tokens_per_call as f64 * price.input_per_mtok
                + calls.max_tokens as f64 * price.output_per_mtok)
                / 1_000_000.0;
            total += n as f64 * per_call;
        }
        unpriced.sort();
        unpriced.dedup();
        if !unpriced.is_empty() {
            CostBound::Unpriced(unpriced)
        } else if unbounded {
            CostBound::Unbounded
        } else {
            CostBound::Finite(total)
        }
    }

    /// The JSON object of this workflow in the `bounds` section.
    pub fn to_json(&self, options: &BoundsOptions) -> Value {
        let agents: serde_json::Map<String, Value> = self
            .agent_calls
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    json!({"model": v.model, "max_tokens": v.max_tokens, "calls": v.calls.to_json()}),
                )
            })
            .collect();
        let models: serde_json::Map<String, Value> = self
            .model_calls
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect();
        let nodes: serde_json::Map<String, Value> = self
            .per_node
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect();
        let cost = match self.cost(options) {
            CostBound::Finite(c) => json!(round_cents(c)),
            CostBound::Unbounded => json!("unbounded"),
            CostBound::Unpriced(models) => json!({"unpriced_models": models}),
        };
        let mut out = json!({
            "workflow": self.workflow_id,
            "node_executions": self.node_executions.to_json(),
            "nodes": nodes,
            "agent_calls": agents,
            "model_calls": models,
            "unbounded_cycles": self.unbounded_cycles,
            "max_steps": self.max_steps,
            "missing_workflows": self.missing_workflows,
            "worst_case_cost": cost,
        });
        // Only a workflow with durable waits has the key (docs/bounds.md).
        if !self.waits.is_none()
            && let Some(o) = out.as_object_mut()
        {
            o.insert(
                "waits".into(),
                json!({
                    "timers": self.waits.timers.to_json(),
                    "signals": self.waits.signals.to_json(),
                    "wait_ms": self.waits.wait_ms.to_json(),
                }),
            );
        }
        out
    }
}

/// Money rounded up to 1/10000 (so a bound never rounds below the true worst case).
pub fn round_cents(x: f64) -> f64 {
    (x * 10_000.0).ceil() / 10_000.0
}

/// The `bounds` section: `{"format_version": 1, "workflows": [...]}`.
pub fn section_json(bounds: &[WorkflowBounds], options: &BoundsOptions) -> Value {
    json!({
        "format_version": BOUNDS_FORMAT_VERSION,
        "assumptions": {
            "max_corrections": options.max_corrections,
            "auto_backtrack_cap": options.auto_backtrack_cap,
            "rubric_rerun_limit": edges::RUBRIC_RERUN_LIMIT,
            "default_max_tokens": options.default_max_tokens,
            "input_tokens_per_call": options.input_tokens_per_call,
            "max_subworkflow_depth": MAX_SUBWORKFLOW_DEPTH,
        },
        "workflows": bounds.iter().map(|b| b.to_json(options)).collect::<Vec<_>>(),
    })
}
