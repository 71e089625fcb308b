//! Recorded answers (docs/cli.md, *Replay*): every outside call of a run — agent calls,
//! `send` actions, `execute` commands, `api-caller` nodes, review decisions — answered from a
//! recording instead of the world. [`RecordedAnswers`] holds the answers, keyed by call site
//! and visit; the engine receives them through the run recipe
//! ([`crate::launch::Extras::recorded`]) as one provider ([`ReplayProvider`]) and a set of
//! handlers, so nothing else of the engine changes: a replayed run spawns no process, sends no
//! request and asks no human. Its `wait` and `awaitSignal` nodes are answered by
//! [`RecordedWaits`], the replay's waiter: nothing sleeps, no signal is read.
//!
//! A call the recording does not have is never made live: it is answered with a failure and
//! noted as a [`Miss`], which the replay reports as a divergence.
//!
//! Keys: an agent call is `(node id, branch id, visit)` — the branch of a parallel node, else
//! none; the visit counts the calls of that key, from 1. A `send` or `execute` action is keyed
//! by its label (`send:<handler>`, `execute:<command>`) and visit, a generic node by its node
//! id and visit, a review by its node id and visit. [`recording`] fills them from a stored run's
//! log; another source (a journal of each call) can fill them with the same builder methods.

pub mod recording;

mod handlers;
mod waits;

use std::collections::HashMap;
use std::sync::Mutex;

use hensu_ir::{ConsensusStrategy, Node, Workflow};
use hensu_runtime::{ActionResult, Context, NodeStatus, ReviewDecision, Usage};
use serde_json::Value;

pub use handlers::{
    RecordedActions, RecordedApiCaller, RecordedCommands, RecordedReview, ReplayAgent,
    ReplayProvider,
};
pub use waits::RecordedWaits;

/// What an agent answered once: its text, or its failure.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentAnswer {
    pub result: Result<String, String>,
    pub usage: Option<Usage>,
}

/// What a node that is not an agent call produced once (a generic node).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAnswer {
    pub status: NodeStatus,
    pub output: Option<Value>,
    pub error: Option<String>,
}

/// How a review was answered once.
#[derive(Clone, Debug, PartialEq)]
pub enum ReviewAnswer {
    Decided(ReviewDecision),
    /// The recording ends waiting for this review.
    Pending {
        correlation_id: String,
    },
}

/// A call the recording had no answer for (answered with a failure, never live).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Miss {
    /// What was called: `agent`, `send:<handler>`, `execute:<command>`, `api-caller`, `review`.
    pub call: String,
    /// The node (for actions: the label's call site is not a node, so the label).
    pub node: String,
    pub branch: Option<String>,
    /// 1-based.
    pub visit: u32,
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} call at `{}`", self.call, self.node)?;
        if let Some(b) = &self.branch {
            write!(f, " branch `{b}`")?;
        }
        write!(f, " (visit {})", self.visit)
    }
}

/// The branches of a parallel node and its judge agent, to tell which branch an agent call
/// of the node serves.
#[derive(Clone, Debug, Default)]
struct ParallelShape {
    branches: Vec<BranchShape>,
    judge: Option<String>,
}

#[derive(Clone, Debug)]
struct BranchShape {
    id: String,
    agent: String,
    /// The branch's prompt template: the call's prompt starts with it, resolved.
    prompt: String,
}

/// A recording's answers to every outside call of a run, with the cursor of each key. One
/// value serves one replay (the cursors advance as calls come).
#[derive(Debug, Default)]
pub struct RecordedAnswers {
    agents: HashMap<(String, Option<String>), Vec<AgentAnswer>>,
    actions: HashMap<String, Vec<ActionResult>>,
    generic: HashMap<String, Vec<NodeAnswer>>,
    reviews: HashMap<String, Vec<ReviewAnswer>>,
    /// Every review is approved (the run was recorded under `auto-approve`).
    auto_approve: bool,
    parallel: HashMap<String, ParallelShape>,
    /// Map nodes with an agent body: an item's call is keyed by its position (`index`).
    maps: std::collections::HashSet<String>,
    cursors: Mutex<HashMap<String, u32>>,
    misses: Mutex<Vec<Miss>>,
}

impl RecordedAnswers {
    /// No answers yet; `workflows` are those the run can execute (to resolve the branches of
    /// parallel nodes).
    pub fn new<'a>(workflows: impl IntoIterator<Item = &'a Workflow>) -> RecordedAnswers {
        let mut parallel = HashMap::new();
        let mut maps = std::collections::HashSet::new();
        for wf in workflows {
            for node in wf.nodes.values() {
                if let Node::Map(m) = node {
                    maps.insert(m.id.clone());
                }
                if let Node::Parallel(p) = node {
                    parallel.insert(
                        p.id.clone(),
                        ParallelShape {
                            branches: p
                                .branches
                                .iter()
                                .map(|b| BranchShape {
                                    id: b.id.clone(),
                                    agent: b.agent_id.clone(),
                                    prompt: b.prompt.clone().unwrap_or_default(),
                                })
                                .collect(),
                            judge: p
                                .consensus_config
                                .as_ref()
                                .filter(|c| c.strategy == ConsensusStrategy::JudgeDecides)
                                .and_then(|c| c.judge_agent_id.clone()),
                        },
                    );
                }
            }
        }
        RecordedAnswers {
            parallel,
            maps,
            ..RecordedAnswers::default()
        }
    }

    /// Approve every review without a recorded decision (a run recorded under
    /// `auto-approve`).
    pub fn approve_reviews(mut self) -> RecordedAnswers {
        self.auto_approve = true;
        self
    }

    /// The next answer of agent calls at `node` (and `branch` of a parallel node).
    pub fn push_agent(&mut self, node: &str, branch: Option<&str>, answer: AgentAnswer) {
        self.agents
            .entry((node.to_string(), branch.map(str::to_string)))
            .or_default()
            .push(answer);
    }

    /// The next result of the action labelled `label` (`send:<handler>`, `execute:<id>`).
    pub fn push_action(&mut self, label: &str, result: ActionResult) {
        self.actions
            .entry(label.to_string())
            .or_default()
            .push(result);
    }

    /// The next result of generic node `node`.
    pub fn push_generic(&mut self, node: &str, answer: NodeAnswer) {
        self.generic
            .entry(node.to_string())
            .or_default()
            .push(answer);
    }

    /// The next review decision at `node`.
    pub fn push_review(&mut self, node: &str, answer: ReviewAnswer) {
        self.reviews
            .entry(node.to_string())
            .or_default()
            .push(answer);
    }

    /// How many agent answers are recorded (for reports).
    pub fn agent_answers(&self) -> usize {
        self.agents.values().map(Vec::len).sum()
    }

    /// The calls answered with a failure because the recording lacked them, in call order.
    pub fn misses(&self) -> Vec<Miss> {
        self.misses.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Advances the cursor of `key`; the 0-based visit.
    fn take_visit(&self, key: &str) -> u32 {
        let Ok(mut cursors) = self.cursors.lock() else {
            return 0;
        };
        let c = cursors.entry(key.to_string()).or_insert(0);
        let visit = *c;
        *c += 1;
        visit
    }

    fn visits(&self, key: &str) -> u32 {
        self.cursors
            .lock()
            .ok()
            .and_then(|c| c.get(key).copied())
            .unwrap_or(0)
    }

    fn miss(&self, call: &str, node: &str, branch: Option<&str>, visit: u32) {
        if let Ok(mut m) = self.misses.lock() {
            m.push(Miss {
                call: call.to_string(),
                node: node.to_string(),
                branch: branch.map(str::to_string),
                visit: visit + 1,
            });
        }
    }

    /// Which branch of `node` a call of `agent` with `prompt` serves. Among the parallel
    /// node's branches with that agent, those whose prompt template, resolved against the
    /// call's `context`, begins the prompt (the engine renders a branch's prompt, then adds
    /// its instructions); among those, the one answered least often in this visit, in
    /// declaration order (answers come at once, so that is the engine's order). A call of the
    /// judge's agent that no branch's prompt begins, made once every branch of the visit was
    /// answered, is the judge's. `None` outside parallel nodes and for the judge. An item of
    /// a map node is its position in the list (the item's `index`, as its record names it).
    fn branch_for(
        &self,
        node: &str,
        agent: &str,
        prompt: &str,
        context: &Context,
    ) -> Option<String> {
        if self.maps.contains(node) {
            return context
                .get("index")
                .and_then(serde_json::Value::as_u64)
                .map(|i| i.to_string());
        }
        let shape = self.parallel.get(node)?;
        let by_agent: Vec<&BranchShape> =
            shape.branches.iter().filter(|b| b.agent == agent).collect();
        let by_prompt: Vec<&BranchShape> = by_agent
            .iter()
            .copied()
            .filter(|b| {
                let rendered = hensu_runtime::resolve(&b.prompt, context);
                !rendered.is_empty() && prompt.starts_with(&rendered)
            })
            .collect();
        // No prompt matches (a template reading a value the branch's own copy of the context
        // no longer holds): by the counts alone, the judge once every branch was answered.
        let judge = by_prompt.is_empty() && shape.judge.as_deref() == Some(agent);
        let candidates = if by_prompt.is_empty() {
            by_agent
        } else {
            by_prompt
        };
        let counts: Vec<u32> = candidates
            .iter()
            .map(|b| self.visits(&agent_key(node, Some(&b.id))))
            .collect();
        let least = counts.iter().copied().min()?;
        if judge && self.visits(&agent_key(node, None)) < least {
            return None;
        }
        let at = counts.iter().position(|c| *c == least)?;
        Some(candidates[at].id.clone())
    }

    /// The answer to an agent call of `agent` at `node` with `prompt` (rendered against
    /// `context`).
    pub fn agent_call(
        &self,
        node: &str,
        agent: &str,
        prompt: &str,
        context: &Context,
    ) -> Result<AgentAnswer, Miss> {
        let branch = self.branch_for(node, agent, prompt, context);
        let visit = self.take_visit(&agent_key(node, branch.as_deref()));
        let found = self
            .agents
            .get(&(node.to_string(), branch.clone()))
            .and_then(|v| v.get(visit as usize));
        match found {
            Some(a) => Ok(a.clone()),
            None => {
                self.miss("agent", node, branch.as_deref(), visit);
                Err(Miss {
                    call: "agent".into(),
                    node: node.into(),
                    branch,
                    visit: visit + 1,
                })
            }
        }
    }

    /// The result of the action labelled `label`.
    pub fn action_call(&self, label: &str) -> ActionResult {
        let visit = self.take_visit(&format!("action\u{1f}{label}"));
        match self.actions.get(label).and_then(|v| v.get(visit as usize)) {
            Some(r) => r.clone(),
            None => {
                self.miss(label, label, None, visit);
                ActionResult::failure(format!(
                    "the recording has no result of `{label}` (visit {})",
                    visit + 1
                ))
            }
        }
    }

    /// The result of generic node `node`.
    pub fn generic_call(&self, call: &str, node: &str) -> Option<NodeAnswer> {
        let visit = self.take_visit(&format!("generic\u{1f}{node}"));
        let found = self.generic.get(node).and_then(|v| v.get(visit as usize));
        if found.is_none() {
            self.miss(call, node, None, visit);
        }
        found.cloned()
    }

    /// The decision of the review at `node`.
    pub fn review_call(&self, node: &str) -> ReviewAnswer {
        if self.auto_approve {
            return ReviewAnswer::Decided(ReviewDecision::Approve { edits: None });
        }
        let visit = self.take_visit(&format!("review\u{1f}{node}"));
        match self.reviews.get(node).and_then(|v| v.get(visit as usize)) {
            Some(a) => a.clone(),
            None => {
                self.miss("review", node, None, visit);
                ReviewAnswer::Decided(ReviewDecision::Reject {
                    reason: format!(
                        "the recording has no review decision at `{node}` (visit {})",
                        visit + 1
                    ),
                })
            }
        }
    }

    /// The handler ids of `send` actions that have answers or appear in `workflows`, for
    /// which a replay registers a recorded handler.
    pub fn send_handlers<'a>(
        &self,
        workflows: impl IntoIterator<Item = &'a Workflow>,
    ) -> Vec<String> {
        let mut ids: Vec<String> = self
            .actions
            .keys()
            .filter_map(|l| l.strip_prefix("send:").map(str::to_string))
            .collect();
        for wf in workflows {
            let actions = wf
                .nodes
                .values()
                .filter_map(|n| match n {
                    Node::Action(a) => Some(a.actions.as_slice()),
                    _ => None,
                })
                .chain(
                    wf.saga
                        .compensations
                        .values()
                        .filter_map(|c| match &c.body {
                            hensu_ir::CompensationBody::Actions(a) => Some(a.as_slice()),
                            hensu_ir::CompensationBody::Agent { .. } => None,
                        }),
                );
            for list in actions {
                for a in list {
                    if let hensu_ir::Action::Send { handler_id, .. } = a {
                        ids.push(handler_id.clone());
                    }
                }
            }
        }
        ids.sort();
        ids.dedup();
        // `log` needs no recording: it is pure, and the replay runs the real one.
        ids.retain(|id| id != "log");
        ids
    }
}

fn agent_key(node: &str, branch: Option<&str>) -> String {
    format!("agent\u{1f}{node}\u{1f}{}", branch.unwrap_or(""))
}
