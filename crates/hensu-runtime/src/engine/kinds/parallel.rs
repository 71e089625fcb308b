//! Parallel nodes with consensus (upstream `ParallelNodeExecutor` + `ConsensusEvaluator`;
//! docs/language.md, *Parallel consensus*).

use std::future::Future;
use std::time::Duration;

use hensu_ir::{Branch, ConsensusConfig, ConsensusStrategy, ParallelNode};
use indexmap::IndexMap;
use serde_json::Value;

use crate::engine::branches::BoxFuture;
use crate::engine::branches::{join_all, join_all_recording, merge_yields, note_failed_branches};
use crate::engine::{Exec, Flow, Prepared};
use crate::enrich::{Enrichment, enrich};
use crate::error::RuntimeError;
use crate::extract::extract_object;
use crate::state::{
    BranchOutcome, FinishedBranch, Nested, NestedFrame, NodeResult, NodeStatus, RunState,
};
use crate::template::resolve;
use crate::validate::validate_output;
use crate::value::set_current_node;
use crate::value::{Context, f64_value};

/// A branch's vote.
#[derive(Clone, Debug)]
struct Vote {
    approve: bool,
    score: f64,
}

fn java_fixed(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// The outcomes a durable run recorded for the branches of `node` before it stopped (taken
/// from the state), by branch position; `None` when nothing was recorded.
pub(super) fn recorded_outcomes(
    state: &mut RunState,
    node: &ParallelNode,
) -> Option<Vec<Option<BranchOutcome>>> {
    let Nested::Parallel { node_id, finished } = *state.nested.take()? else {
        return None;
    };
    if node_id != node.id {
        return None;
    }
    let mut finished: Vec<Option<BranchOutcome>> = finished.into_iter().map(Some).collect();
    let by_branch = node
        .branches
        .iter()
        .map(|b| {
            finished
                .iter_mut()
                .find(|o| o.as_ref().is_some_and(|o| o.id == b.id))
                .and_then(Option::take)
        })
        .collect();
    Some(by_branch)
}

/// Runs a parallel node in `flow`. A durable run records each branch outcome as the branch
/// finishes ([`Engine::record_branch`]); resuming it runs only the branches not recorded, and
/// the consensus sees every outcome in branch order as an uninterrupted run would.
pub(crate) async fn execute_parallel(
    engine: &Exec<'_>,
    p: &Prepared,
    node: &ParallelNode,
    state: &mut RunState,
    flow: Flow<'_>,
) -> Result<NodeResult, RuntimeError> {
    state.context.shift_remove("_prompt_override");
    let recorded = recorded_outcomes(state, node);
    let recording = engine.branch_recording(flow);
    let consensus = node.consensus_config.as_ref();
    let self_scoring = consensus.is_some_and(|c| c.strategy != ConsensusStrategy::JudgeDecides);
    let timeout = Some(engine.options.branch_timeout);

    let runs = BranchRuns {
        engine,
        p,
        node,
        self_scoring,
        timeout,
    };
    if node.is_dag() {
        let limit = p
            .workflow()
            .timing
            .of(&node.id)
            .timeout_ms
            .map(Duration::from_millis);
        let node_id = node.id.as_str();
        let run = super::dag::schedule(
            node,
            &state.context,
            recorded,
            |i, ctx| runs.start(&node.branches[i], ctx),
            |outcome: &BranchOutcome| {
                let frames = recording?;
                let outcome = outcome.clone();
                let record: BoxFuture<'_, _> = Box::pin(async move {
                    engine
                        .record_branch(frames, node_id, FinishedBranch::Parallel(&outcome))
                        .await
                });
                Some(record)
            },
            limit,
            engine.listener,
        )
        .await?;
        return Ok(super::dag::result(&mut state.context, node, run));
    }
    let futures = runs.prepare(state, recorded.as_deref());
    let ran = join_branches(engine, node, futures, recording).await?;
    let outcomes = in_branch_order(recorded, ran);
    note_failed_branches(&mut state.context, &outcomes);

    let Some(consensus) = consensus else {
        return Ok(without_consensus(&mut state.context, &outcomes));
    };
    // Votes (all strategies; they decide for the vote-based ones).
    let tally = Tally::of(&outcomes, consensus.threshold.unwrap_or(70.0));
    let decision = match consensus.strategy {
        ConsensusStrategy::MajorityVote => majority_vote(consensus, &outcomes, &tally),
        ConsensusStrategy::Unanimous => unanimous(&outcomes, &tally),
        ConsensusStrategy::WeightedVote => weighted_vote(consensus, node, &outcomes, &tally),
        ConsensusStrategy::JudgeDecides => {
            judge_decides(&runs, consensus, &state.context, &outcomes).await?
        }
    };
    apply_consensus(
        &mut state.context,
        node,
        consensus.strategy,
        &outcomes,
        &tally,
        &decision,
    );
    Ok(consensus_result(
        consensus.strategy,
        &outcomes,
        &tally,
        decision,
    ))
}

/// What the branches of one call of a parallel node share: who runs them and how.
struct BranchRuns<'a, 'r> {
    engine: &'a Exec<'r>,
    p: &'a Prepared,
    node: &'a ParallelNode,
    /// The branches answer `score` / `approved` / `recommendation` themselves (every strategy
    /// but `JUDGE_DECIDES`).
    self_scoring: bool,
    timeout: Option<Duration>,
}

impl<'a, 'r> BranchRuns<'a, 'r> {
    /// One future per branch not `recorded` yet, each on its own copy of the context with its
    /// prompt rendered and enriched (all copies taken before any branch runs).
    fn prepare(
        &self,
        state: &RunState,
        recorded: Option<&[Option<BranchOutcome>]>,
    ) -> Vec<impl Future<Output = BranchOutcome> + use<'a, 'r>> {
        let node = self.node;
        let mut futures = Vec::with_capacity(node.branches.len());
        for (i, branch) in node.branches.iter().enumerate() {
            if recorded.is_some_and(|r| r[i].is_some()) {
                continue;
            }
            futures.push(self.start(branch, state.context.clone()));
        }
        futures
    }

    /// The future of one branch on `ctx`, its own copy of the context: the prompt rendered
    /// and enriched, then the agent call.
    fn start(
        &self,
        branch: &'a Branch,
        mut ctx: Context,
    ) -> impl Future<Output = BranchOutcome> + use<'a, 'r> {
        let (engine, p, node) = (self.engine, self.p, self.node);
        let (self_scoring, timeout) = (self.self_scoring, self.timeout);
        let schema = p.workflow().state_schema.as_ref();
        set_current_node(&mut ctx, &node.id);
        ctx.insert(
            crate::stub::CURRENT_BRANCH_KEY.into(),
            Value::String(branch.id.clone()),
        );
        let mut prompt = resolve(branch.prompt.as_deref().unwrap_or(""), &ctx);
        for y in &branch.yields {
            ctx.shift_remove(y.as_str());
        }
        let recommendation = match ctx.get("recommendation") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        enrich(
            &mut prompt,
            &Enrichment {
                recommendation: recommendation.as_deref(),
                rubric: None,
                needs_score: self_scoring,
                needs_approved: self_scoring,
                needs_recommendation: self_scoring,
                writes: &[],
                yields: &branch.yields,
                schema,
            },
        );
        let agent = p.agents.get_with_system_prompt(&branch.agent_id);
        let node_id = node.id.as_str();
        async move {
            let Some((agent, system_prompt)) = agent else {
                return BranchOutcome {
                    id: branch.id.clone(),
                    success: false,
                    output: None,
                    error: Some(format!(
                        "Branch execution failed: Agent not found: {}",
                        branch.agent_id
                    )),
                    yields: IndexMap::new(),
                };
            };
            let result = engine
                .call_agent(
                    agent.as_ref(),
                    system_prompt,
                    node_id,
                    Some(&branch.id),
                    &prompt,
                    &ctx,
                    timeout,
                    &branch.yields.iter().map(String::as_str).collect::<Vec<_>>(),
                )
                .await;
            branch_outcome(&branch.id, result, &branch.yields, self_scoring)
        }
    }
}

/// Runs the branch futures together, in the order they were prepared. With `recording` (a
/// durable run) each outcome is recorded as its branch finishes, while the others run.
async fn join_branches<F: Future<Output = BranchOutcome>>(
    engine: &Exec<'_>,
    node: &ParallelNode,
    futures: Vec<F>,
    recording: Option<&[NestedFrame]>,
) -> Result<Vec<BranchOutcome>, RuntimeError> {
    let Some(frames) = recording else {
        return Ok(join_all(futures).await);
    };
    let node_id = node.id.as_str();
    let pinned = futures.into_iter().map(Box::pin).collect();
    join_all_recording(pinned, |outcome: &mut BranchOutcome| {
        let outcome = outcome.clone();
        let record: BoxFuture<'_, _> = Box::pin(async move {
            engine
                .record_branch(frames, node_id, FinishedBranch::Parallel(&outcome))
                .await
        });
        Some(record)
    })
    .await
}

/// Every outcome in branch order: the recorded ones in their places, the others as they ran.
fn in_branch_order(
    recorded: Option<Vec<Option<BranchOutcome>>>,
    ran: Vec<BranchOutcome>,
) -> Vec<BranchOutcome> {
    match recorded {
        None => ran,
        Some(restored) => {
            let mut ran = ran.into_iter();
            restored
                .into_iter()
                .filter_map(|r| r.or_else(|| ran.next()))
                .collect()
        }
    }
}

/// A parallel node without consensus: every branch's output (or failure marker) by branch id,
/// every branch's yields merged; FAILURE when a branch failed or gave no output.
fn without_consensus(ctx: &mut Context, outcomes: &[BranchOutcome]) -> NodeResult {
    let all_ok = outcomes.iter().all(|o| o.success && o.output.is_some());
    let mut map = serde_json::Map::new();
    for o in outcomes {
        let v = match (&o.output, o.success) {
            (Some(out), true) => Value::String(out.clone()),
            _ => Value::String(format!(
                "FailureMarker[message={}]",
                o.error.as_deref().unwrap_or("no output")
            )),
        };
        map.insert(o.id.clone(), v);
    }
    merge_yields(ctx, outcomes.iter());
    let mut result = NodeResult::success_value(Value::Object(map))
        .with_meta("branch_count", Value::from(outcomes.len() as u64));
    if !all_ok {
        result.status = NodeStatus::Failure;
        result.error = Some("One or more branches failed".into());
    }
    result
}

/// The branches' votes, counted.
struct Tally {
    votes: Vec<Vote>,
    approve_count: usize,
    reject_count: usize,
    average_score: f64,
}

impl Tally {
    /// A branch approves when it says so, else when its score reaches `cut`.
    fn of(outcomes: &[BranchOutcome], cut: f64) -> Tally {
        let votes: Vec<Vote> = outcomes
            .iter()
            .map(|o| {
                let score = match o.yields.get("score") {
                    Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
                    _ => 0.0,
                };
                let approve = match o.yields.get("approved") {
                    Some(Value::Bool(b)) => *b,
                    _ => score >= cut,
                };
                Vote { approve, score }
            })
            .collect();
        let approve_count = votes.iter().filter(|v| v.approve).count();
        let reject_count = votes.len() - approve_count;
        let average_score = if votes.is_empty() {
            0.0
        } else {
            votes.iter().map(|v| v.score).sum::<f64>() / votes.len() as f64
        };
        Tally {
            votes,
            approve_count,
            reject_count,
            average_score,
        }
    }
}

/// What a consensus strategy decided.
struct Decision {
    reached: bool,
    reasoning: String,
    /// The winning branches (the approving ones; the judge's pick).
    winners: Vec<String>,
    /// The judge's answer, the node's output (`JUDGE_DECIDES` only).
    judge_text: Option<String>,
}

fn reached_text(reached: bool) -> &'static str {
    if reached {
        "Consensus reached."
    } else {
        "Consensus not reached."
    }
}

fn majority_vote(
    consensus: &ConsensusConfig,
    outcomes: &[BranchOutcome],
    tally: &Tally,
) -> Decision {
    let (approve_count, reject_count) = (tally.approve_count, tally.reject_count);
    let total = tally.votes.len();
    let t = consensus.threshold.unwrap_or(0.5);
    let required = (total as f64 * t).floor() as usize;
    let reached = approve_count > required;
    Decision {
        reached,
        reasoning: format!(
            "Majority vote: {approve_count} approve, {reject_count} reject out of {total} total (threshold={}%, required>{required}). {}",
            java_fixed(t * 100.0, 0),
            reached_text(reached)
        ),
        winners: approving(outcomes, &tally.votes),
        judge_text: None,
    }
}

fn unanimous(outcomes: &[BranchOutcome], tally: &Tally) -> Decision {
    let (reject_count, total) = (tally.reject_count, tally.votes.len());
    let reached = total > 0 && reject_count == 0;
    let reasoning = if total == 0 {
        "Unanimous not reached: no branches to evaluate.".to_string()
    } else if reached {
        format!("Unanimous approval: all {total} branches approved.")
    } else {
        format!("Unanimous not reached: {reject_count} branch(es) rejected.")
    };
    Decision {
        reached,
        reasoning,
        winners: approving(outcomes, &tally.votes),
        judge_text: None,
    }
}

fn weighted_vote(
    consensus: &ConsensusConfig,
    node: &ParallelNode,
    outcomes: &[BranchOutcome],
    tally: &Tally,
) -> Decision {
    let t = consensus.threshold.unwrap_or(0.5);
    let mut a = 0.0;
    let mut r = 0.0;
    for (v, b) in tally.votes.iter().zip(&node.branches) {
        if v.approve {
            a += v.score * b.weight;
        } else {
            r += v.score * b.weight;
        }
    }
    let ratio = if a + r == 0.0 { 0.0 } else { a / (a + r) };
    let reached = ratio >= t;
    Decision {
        reached,
        reasoning: format!(
            "Weighted vote: approve={}, reject={}, ratio={} (threshold={}). {}",
            java_fixed(a, 2),
            java_fixed(r, 2),
            java_fixed(ratio, 2),
            java_fixed(t, 2),
            reached_text(reached)
        ),
        winners: approving(outcomes, &tally.votes),
        judge_text: None,
    }
}

/// `JUDGE_DECIDES`: the judge agent reads every branch's result and answers with the decision
/// and the winning branch. A missing judge, a failed call or an invalid answer ends the node.
async fn judge_decides(
    runs: &BranchRuns<'_, '_>,
    consensus: &ConsensusConfig,
    ctx: &Context,
    outcomes: &[BranchOutcome],
) -> Result<Decision, RuntimeError> {
    let node = runs.node;
    let judge_id = consensus.judge_agent_id.clone().unwrap_or_default();
    let (judge, system_prompt) =
        runs.p
            .agents
            .get_with_system_prompt(&judge_id)
            .ok_or_else(|| RuntimeError::JudgeNotFound {
                agent: judge_id.clone(),
            })?;
    let prompt = judge_prompt(outcomes);
    let result = runs
        .engine
        .call_agent(
            judge.as_ref(),
            system_prompt,
            &node.id,
            None,
            &prompt,
            ctx,
            runs.timeout,
            &[],
        )
        .await;
    if result.status != NodeStatus::Success {
        return Err(RuntimeError::JudgeFailed {
            message: result.error.unwrap_or_default(),
        });
    }
    let text = result
        .output_text()
        .map(|c| c.into_owned())
        .unwrap_or_default();
    validate_output(&text).map_err(|violation| RuntimeError::JudgeOutput { violation })?;
    let parsed = extract_object(&text).unwrap_or_default();
    let reached = parsed.get("decision") == Some(&Value::Bool(true));
    let winner = match parsed.get("winning_branch") {
        Some(Value::String(w)) if node.branches.iter().any(|b| &b.id == w) => Some(w.clone()),
        _ => None,
    };
    let reasoning = match parsed.get("reasoning") {
        Some(Value::String(r)) => r.clone(),
        _ => format!(
            "Judge decision: {}",
            if reached { "approved" } else { "rejected" }
        ),
    };
    Ok(Decision {
        reached,
        reasoning,
        winners: winner.into_iter().collect(),
        judge_text: Some(text),
    })
}

/// The decision's effect on the parent context: the yields merged (non-engine keys; later
/// branches overwrite; only the judge's winners under `JUDGE_DECIDES`) and, when consensus was
/// not reached, `consensus_feedback:<node>` for a retry.
fn apply_consensus(
    ctx: &mut Context,
    node: &ParallelNode,
    strategy: ConsensusStrategy,
    outcomes: &[BranchOutcome],
    tally: &Tally,
    decision: &Decision,
) {
    if strategy == ConsensusStrategy::JudgeDecides {
        merge_yields(
            ctx,
            outcomes.iter().filter(|o| decision.winners.contains(&o.id)),
        );
    } else {
        merge_yields(ctx, outcomes.iter());
    }
    if decision.reached {
        return;
    }
    let feedback = if strategy == ConsensusStrategy::JudgeDecides {
        decision.reasoning.clone()
    } else {
        outcomes
            .iter()
            .zip(&tally.votes)
            .map(|(o, v)| {
                format!(
                    "{} ({}): {}",
                    o.id,
                    if v.approve { "APPROVE" } else { "REJECT" },
                    o.output.as_deref().or(o.error.as_deref()).unwrap_or("")
                )
            })
            .collect::<Vec<_>>()
            .join("\n---\n")
    };
    ctx.insert(
        format!("consensus_feedback:{}", node.id),
        Value::String(feedback),
    );
}

/// The node's result under consensus: the judge's answer or the reasoning as output, FAILURE
/// when consensus was not reached, and the tally and the branch results as metadata.
fn consensus_result(
    strategy: ConsensusStrategy,
    outcomes: &[BranchOutcome],
    tally: &Tally,
    decision: Decision,
) -> NodeResult {
    let Decision {
        reached,
        reasoning,
        winners,
        judge_text,
    } = decision;
    let output = judge_text.unwrap_or_else(|| reasoning.clone());
    let mut result = NodeResult::success(output);
    if !reached {
        result.status = NodeStatus::Failure;
        result.error = Some(reasoning.clone());
    }
    let mut branch_results = serde_json::Map::new();
    for o in outcomes {
        branch_results.insert(
            o.id.clone(),
            o.output.clone().map(Value::String).unwrap_or(Value::Null),
        );
    }
    result = result
        .with_meta("consensus_reached", Value::Bool(reached))
        .with_meta("strategy", Value::String(strategy.as_str().to_string()))
        .with_meta("approve_count", Value::from(tally.approve_count as u64))
        .with_meta("reject_count", Value::from(tally.reject_count as u64))
        .with_meta("average_score", f64_value(tally.average_score))
        .with_meta("reasoning", Value::String(reasoning));
    if !winners.is_empty() {
        result = result.with_meta(
            "winning_branches",
            Value::Array(winners.into_iter().map(Value::String).collect()),
        );
    }
    result.with_meta("branch_results", Value::Object(branch_results))
}

fn approving(outcomes: &[BranchOutcome], votes: &[Vote]) -> Vec<String> {
    outcomes
        .iter()
        .zip(votes)
        .filter(|(_, v)| v.approve)
        .map(|(o, _)| o.id.clone())
        .collect()
}

fn branch_outcome(
    id: &str,
    result: NodeResult,
    yields: &[String],
    self_scoring: bool,
) -> BranchOutcome {
    if result.status != NodeStatus::Success {
        return BranchOutcome {
            id: id.to_string(),
            success: false,
            output: None,
            error: Some(format!(
                "Branch execution failed: {}",
                result.error.unwrap_or_default()
            )),
            yields: IndexMap::new(),
        };
    }
    let text = result
        .output_text()
        .map(|c| c.into_owned())
        .unwrap_or_default();
    if let Err(v) = validate_output(&text) {
        return BranchOutcome {
            id: id.to_string(),
            success: false,
            output: None,
            error: Some(format!("Branch [{id}] output {v}")),
            yields: IndexMap::new(),
        };
    }
    let mut found = IndexMap::new();
    if let Some(mut map) = extract_object(&text) {
        let engine_keys: &[&str] = if self_scoring {
            &["score", "approved", "recommendation"]
        } else {
            &[]
        };
        for k in yields
            .iter()
            .map(String::as_str)
            .chain(engine_keys.iter().copied())
        {
            if let Some(v) = map.shift_remove(k) {
                found.insert(k.to_string(), v);
            }
        }
    }
    BranchOutcome {
        id: id.to_string(),
        success: true,
        output: Some(text),
        error: None,
        yields: found,
    }
}

/// The judge prompt of `JUDGE_DECIDES` (upstream text; branch ids in declaration order).
pub fn judge_prompt(outcomes: &[BranchOutcome]) -> String {
    let mut s = String::from(
        "You are the judge for a consensus decision. Review the following branch results and make a final decision.\n## Branch Results:\n\n",
    );
    for o in outcomes {
        s.push_str("### Branch: ");
        s.push_str(&o.id);
        s.push_str("\nOutput:\n```\n");
        match (&o.output, &o.error) {
            (Some(out), _) => s.push_str(out),
            (None, Some(e)) => s.push_str(e),
            (None, None) => {}
        }
        s.push_str("\n```\n\n");
    }
    s.push_str("## Valid branch IDs: [");
    s.push_str(
        &outcomes
            .iter()
            .map(|o| o.id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.push_str("]\n\n## Your Task:\n1. Analyze all branch outputs\n2. Determine if the overall result should be approved or rejected\n3. Select the winning branch\nRespond with a JSON object containing ONLY these fields:\n- \"decision\": true if approved, false if rejected\n- \"winning_branch\": one of the valid branch IDs listed above\n- \"reasoning\": brief explanation of your decision");
    s
}
