//! Parallel nodes with consensus (upstream `ParallelNodeExecutor` + `ConsensusEvaluator`;
//! docs/language.md, *Parallel consensus*).

use hensu_ir::{ConsensusStrategy, ParallelNode, is_engine_variable};
use indexmap::IndexMap;
use serde_json::Value;

use crate::engine::branches::BoxFuture;
use crate::engine::branches::{join_all, join_all_recording};
use crate::engine::{Exec, Flow, Prepared};
use crate::enrich::{Enrichment, enrich};
use crate::error::RuntimeError;
use crate::extract::extract_object;
use crate::state::{BranchOutcome, FinishedBranch, Nested, NodeResult, NodeStatus, RunState};
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
fn recorded_outcomes(
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
    let schema = p.workflow().state_schema.as_ref();
    let timeout = Some(engine.options.branch_timeout);

    // Prepare every branch on its own copy of the context.
    let mut futures = Vec::with_capacity(node.branches.len());
    for (i, branch) in node.branches.iter().enumerate() {
        if recorded.as_ref().is_some_and(|r| r[i].is_some()) {
            continue;
        }
        let mut ctx: Context = state.context.clone();
        set_current_node(&mut ctx, &node.id);
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
        futures.push(async move {
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
        });
    }
    let ran = match recording {
        None => join_all(futures).await,
        Some(frames) => {
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
            .await?
        }
    };
    let outcomes = match recorded {
        None => ran,
        Some(restored) => {
            // Branch order: the recorded outcomes in their places, the others as they ran.
            let mut ran = ran.into_iter();
            restored
                .into_iter()
                .filter_map(|r| r.or_else(|| ran.next()))
                .collect()
        }
    };

    let failed: Vec<Value> = outcomes
        .iter()
        .filter(|o| !o.success)
        .map(|o| Value::String(o.id.clone()))
        .collect();
    if !failed.is_empty() {
        state
            .context
            .insert("failed_branches".into(), Value::Array(failed));
    }

    let Some(consensus) = consensus else {
        let all_ok = outcomes.iter().all(|o| o.success && o.output.is_some());
        let mut map = serde_json::Map::new();
        for o in &outcomes {
            let v = match (&o.output, o.success) {
                (Some(out), true) => Value::String(out.clone()),
                _ => Value::String(format!(
                    "FailureMarker[message={}]",
                    o.error.as_deref().unwrap_or("no output")
                )),
            };
            map.insert(o.id.clone(), v);
        }
        merge_yields(&mut state.context, outcomes.iter());
        let mut result = NodeResult::success_value(Value::Object(map))
            .with_meta("branch_count", Value::from(outcomes.len() as u64));
        if !all_ok {
            result.status = NodeStatus::Failure;
            result.error = Some("One or more branches failed".into());
        }
        return Ok(result);
    };

    // Votes (all strategies; they decide for the vote-based ones).
    let cut = consensus.threshold.unwrap_or(70.0);
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
    let total = votes.len();

    let (reached, reasoning, winners, judge_text): (bool, String, Vec<String>, Option<String>) =
        match consensus.strategy {
            ConsensusStrategy::MajorityVote => {
                let t = consensus.threshold.unwrap_or(0.5);
                let required = (total as f64 * t).floor() as usize;
                let reached = approve_count > required;
                (
                    reached,
                    format!(
                        "Majority vote: {approve_count} approve, {reject_count} reject out of {total} total (threshold={}%, required>{required}). {}",
                        java_fixed(t * 100.0, 0),
                        if reached {
                            "Consensus reached."
                        } else {
                            "Consensus not reached."
                        }
                    ),
                    approving(&outcomes, &votes),
                    None,
                )
            }
            ConsensusStrategy::Unanimous => {
                let reached = total > 0 && reject_count == 0;
                let reasoning = if total == 0 {
                    "Unanimous not reached: no branches to evaluate.".to_string()
                } else if reached {
                    format!("Unanimous approval: all {total} branches approved.")
                } else {
                    format!("Unanimous not reached: {reject_count} branch(es) rejected.")
                };
                (reached, reasoning, approving(&outcomes, &votes), None)
            }
            ConsensusStrategy::WeightedVote => {
                let t = consensus.threshold.unwrap_or(0.5);
                let mut a = 0.0;
                let mut r = 0.0;
                for (v, b) in votes.iter().zip(&node.branches) {
                    if v.approve {
                        a += v.score * b.weight;
                    } else {
                        r += v.score * b.weight;
                    }
                }
                let ratio = if a + r == 0.0 { 0.0 } else { a / (a + r) };
                let reached = ratio >= t;
                (
                    reached,
                    format!(
                        "Weighted vote: approve={}, reject={}, ratio={} (threshold={}). {}",
                        java_fixed(a, 2),
                        java_fixed(r, 2),
                        java_fixed(ratio, 2),
                        java_fixed(t, 2),
                        if reached {
                            "Consensus reached."
                        } else {
                            "Consensus not reached."
                        }
                    ),
                    approving(&outcomes, &votes),
                    None,
                )
            }
            ConsensusStrategy::JudgeDecides => {
                let judge_id = consensus.judge_agent_id.clone().unwrap_or_default();
                let (judge, system_prompt) = p
                    .agents
                    .get_with_system_prompt(&judge_id)
                    .ok_or_else(|| RuntimeError::JudgeNotFound {
                        agent: judge_id.clone(),
                    })?;
                let prompt = judge_prompt(&outcomes);
                let result = engine
                    .call_agent(
                        judge.as_ref(),
                        system_prompt,
                        &node.id,
                        None,
                        &prompt,
                        &state.context,
                        timeout,
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
                validate_output(&text)
                    .map_err(|violation| RuntimeError::JudgeOutput { violation })?;
                let parsed = extract_object(&text).unwrap_or_default();
                let reached = parsed.get("decision") == Some(&Value::Bool(true));
                let winner = match parsed.get("winning_branch") {
                    Some(Value::String(w)) if node.branches.iter().any(|b| &b.id == w) => {
                        Some(w.clone())
                    }
                    _ => None,
                };
                let reasoning = match parsed.get("reasoning") {
                    Some(Value::String(r)) => r.clone(),
                    _ => format!(
                        "Judge decision: {}",
                        if reached { "approved" } else { "rejected" }
                    ),
                };
                (reached, reasoning, winner.into_iter().collect(), Some(text))
            }
        };

    // Yield merge into the parent context (non-engine keys; later branches overwrite).
    if consensus.strategy == ConsensusStrategy::JudgeDecides {
        merge_yields(
            &mut state.context,
            outcomes.iter().filter(|o| winners.contains(&o.id)),
        );
    } else {
        merge_yields(&mut state.context, outcomes.iter());
    }

    if !reached {
        let feedback = if consensus.strategy == ConsensusStrategy::JudgeDecides {
            reasoning.clone()
        } else {
            outcomes
                .iter()
                .zip(&votes)
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
        state.context.insert(
            format!("consensus_feedback:{}", node.id),
            Value::String(feedback),
        );
    }

    let output = judge_text.unwrap_or_else(|| reasoning.clone());
    let mut result = NodeResult::success(output);
    if !reached {
        result.status = NodeStatus::Failure;
        result.error = Some(reasoning.clone());
    }
    let mut branch_results = serde_json::Map::new();
    for o in &outcomes {
        branch_results.insert(
            o.id.clone(),
            o.output.clone().map(Value::String).unwrap_or(Value::Null),
        );
    }
    result = result
        .with_meta("consensus_reached", Value::Bool(reached))
        .with_meta(
            "strategy",
            Value::String(consensus.strategy.as_str().to_string()),
        )
        .with_meta("approve_count", Value::from(approve_count as u64))
        .with_meta("reject_count", Value::from(reject_count as u64))
        .with_meta("average_score", f64_value(average_score))
        .with_meta("reasoning", Value::String(reasoning));
    if !winners.is_empty() {
        result = result.with_meta(
            "winning_branches",
            Value::Array(winners.into_iter().map(Value::String).collect()),
        );
    }
    Ok(result.with_meta("branch_results", Value::Object(branch_results)))
}

fn approving(outcomes: &[BranchOutcome], votes: &[Vote]) -> Vec<String> {
    outcomes
        .iter()
        .zip(votes)
        .filter(|(_, v)| v.approve)
        .map(|(o, _)| o.id.clone())
        .collect()
}

fn merge_yields<'a>(ctx: &mut Context, outcomes: impl Iterator<Item = &'a BranchOutcome>) {
    for o in outcomes {
        for (k, v) in &o.yields {
            if !is_engine_variable(k) {
                ctx.insert(k.clone(), v.clone());
            }
        }
    }
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
