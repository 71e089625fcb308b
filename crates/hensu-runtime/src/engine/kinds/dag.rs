//! Dependency DAGs: a parallel node whose branches wait for each other (`after`) or run only
//! under a condition (`runIf`) (docs/language.md, *Dependency DAGs*; tnsai's `DAGExecutor`).
//!
//! A branch starts as soon as every branch it names has finished; independent branches run
//! together. A branch whose dependency failed does not run: it fails with `Dependency '<id>'
//! failed`. A branch whose `runIf` flag is not true does not run either: it succeeds with the
//! output `SKIPPED`, which its dependents see like any output. One timeout bounds the whole
//! node: when it passes, the node fails with the results collected so far. Each settled branch
//! (run, failed, skipped) is handed to the run's checkpointer as it settles, so a resumed node
//! runs only the rest.
//!
//! The scheduler knows nothing of agents: the parallel node gives it a `start` function (a
//! branch's future on its own copy of the context) and a `record` function.

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use hensu_ir::ParallelNode;
use indexmap::IndexMap;
use serde_json::Value;

use crate::engine::branches::{BoxFuture, merge_yields, note_failed_branches};
use crate::error::RuntimeError;
use crate::events::{Event, ExecutionListener};
use crate::state::{BranchOutcome, NodeResult, NodeStatus};
use crate::value::Context;

/// The output of a branch whose `runIf` flag was not true.
pub const SKIPPED: &str = "SKIPPED";

/// What the branches of a DAG came to.
pub(crate) struct DagRun {
    /// By branch position; `None` for a branch still waiting or running when the node's
    /// timeout passed.
    pub outcomes: Vec<Option<BranchOutcome>>,
    /// The node's timeout passed before every branch settled.
    pub timed_out: Option<Duration>,
}

/// What woke the scheduler.
enum Woke {
    Finished(usize, BranchOutcome),
    Recorded(Result<(), RuntimeError>),
    Deadline,
}

/// For each branch, the positions of the branches it waits for. A name that is no branch of
/// the node (E0312, refused before a run) is left out.
fn dependency_positions(node: &ParallelNode) -> Vec<Vec<usize>> {
    node.branches
        .iter()
        .map(|b| {
            b.after
                .iter()
                .filter_map(|d| node.branches.iter().position(|o| &o.id == d))
                .collect()
        })
        .collect()
}

/// The context a branch starts on: the node's, plus, for every branch that finished before it
/// (its dependencies, theirs, …, in branch order), that branch's output under its id and its
/// yields.
fn context_for(
    base: &Context,
    node: &ParallelNode,
    deps: &[Vec<usize>],
    outcomes: &[Option<BranchOutcome>],
    branch: usize,
) -> Context {
    let mut upstream = vec![false; deps.len()];
    let mut todo: Vec<usize> = deps[branch].clone();
    while let Some(d) = todo.pop() {
        if !std::mem::replace(&mut upstream[d], true) {
            todo.extend(deps[d].iter().copied());
        }
    }
    let mut ctx = base.clone();
    let finished = node
        .branches
        .iter()
        .zip(outcomes)
        .zip(upstream)
        .filter(|(_, up)| *up)
        .filter_map(|((b, o), _)| Some((b, o.as_ref()?)))
        .filter(|(_, o)| o.success);
    for (b, o) in finished {
        if let Some(out) = &o.output {
            ctx.insert(b.id.clone(), Value::String(out.clone()));
        }
        merge_yields(&mut ctx, std::iter::once(o));
    }
    ctx
}

/// `runIf`'s flag is true: the Boolean `true` (or the text `true`, as an input may arrive).
fn flag_is_true(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.trim().eq_ignore_ascii_case("true"),
        _ => false,
    }
}

fn failed(id: &str, error: String) -> BranchOutcome {
    BranchOutcome {
        id: id.to_string(),
        success: false,
        output: None,
        error: Some(error),
        yields: IndexMap::new(),
    }
}

/// The branches of one run of a DAG: which have settled (and how), which run, which wait to be
/// recorded.
struct Branches<'n, F> {
    node: &'n ParallelNode,
    deps: Vec<Vec<usize>>,
    outcomes: Vec<Option<BranchOutcome>>,
    started: Vec<bool>,
    running: Vec<(usize, Pin<Box<F>>)>,
    to_record: VecDeque<usize>,
}

impl<'n, F: Future<Output = BranchOutcome>> Branches<'n, F> {
    fn new(node: &'n ParallelNode, recorded: Option<Vec<Option<BranchOutcome>>>) -> Self {
        let n = node.branches.len();
        let outcomes: Vec<Option<BranchOutcome>> = match recorded {
            Some(r) if r.len() == n => r,
            _ => vec![None; n],
        };
        Branches {
            node,
            deps: dependency_positions(node),
            started: outcomes.iter().map(Option::is_some).collect(),
            outcomes,
            running: Vec::new(),
            to_record: VecDeque::new(),
        }
    }

    /// Starts (or settles) every branch whose dependencies have settled; a settled one may
    /// make others ready, so until nothing changes.
    fn start_ready(
        &mut self,
        base: &Context,
        start: &mut impl FnMut(usize, Context) -> F,
        listener: &dyn ExecutionListener,
    ) {
        let node = self.node;
        let not_run = |branch: &str, success: bool, reason: &str| {
            listener.on_event(&Event::BranchSkipped {
                node_id: &node.id,
                branch_id: branch,
                success,
                reason,
            });
        };
        let mut progressed = true;
        while progressed {
            progressed = false;
            for i in 0..node.branches.len() {
                if self.started[i] || !self.deps[i].iter().all(|&d| self.outcomes[d].is_some()) {
                    continue;
                }
                self.started[i] = true;
                progressed = true;
                let branch = &node.branches[i];
                let failed_dep = self.deps[i]
                    .iter()
                    .find(|&&d| self.outcomes[d].as_ref().is_some_and(|o| !o.success));
                if let Some(&d) = failed_dep {
                    let error = format!("Dependency '{}' failed", node.branches[d].id);
                    not_run(&branch.id, false, &error);
                    self.settle(i, failed(&branch.id, error));
                    continue;
                }
                let ctx = context_for(base, node, &self.deps, &self.outcomes, i);
                if let Some(flag) = &branch.run_if
                    && !flag_is_true(ctx.get(flag.as_str()))
                {
                    not_run(
                        &branch.id,
                        true,
                        &format!("runIf flag `{flag}` is not true"),
                    );
                    self.settle(
                        i,
                        BranchOutcome {
                            id: branch.id.clone(),
                            success: true,
                            output: Some(SKIPPED.to_string()),
                            error: None,
                            yields: IndexMap::new(),
                        },
                    );
                    continue;
                }
                self.running.push((i, Box::pin(start(i, ctx))));
            }
        }
    }

    fn settle(&mut self, i: usize, outcome: BranchOutcome) {
        self.outcomes[i] = Some(outcome);
        self.to_record.push_back(i);
    }

    /// Every branch settled — or what is left waits around a cycle (E0313, refused before a
    /// run): it can never start, so it fails.
    fn finish(mut self) -> DagRun {
        for (i, o) in self.outcomes.iter_mut().enumerate() {
            if o.is_none() {
                let error = "Dependency cycle: the branch waits for itself".to_string();
                *o = Some(failed(&self.node.branches[i].id, error));
            }
        }
        DagRun {
            outcomes: self.outcomes,
            timed_out: None,
        }
    }
}

/// Runs the DAG: starts each branch when its dependencies have settled (`start` gives its
/// future on its context), settles the branches that need no run (reporting them to
/// `listener`), hands every settled branch to `record` (one at a time, in the order they
/// settled, while the others run) and stops at `limit`. `recorded` are the outcomes a durable
/// run saved before it stopped.
pub(crate) async fn schedule<'r, F, S, R>(
    node: &ParallelNode,
    base: &Context,
    recorded: Option<Vec<Option<BranchOutcome>>>,
    mut start: S,
    mut record: R,
    limit: Option<Duration>,
    listener: &dyn ExecutionListener,
) -> Result<DagRun, RuntimeError>
where
    F: Future<Output = BranchOutcome>,
    S: FnMut(usize, Context) -> F,
    R: FnMut(&BranchOutcome) -> Option<BoxFuture<'r, Result<(), RuntimeError>>>,
{
    let mut b = Branches::new(node, recorded);
    let mut recording: Option<BoxFuture<'r, Result<(), RuntimeError>>> = None;
    let mut deadline = limit.map(|d| Box::pin(tokio::time::sleep(d)));
    loop {
        b.start_ready(base, &mut start, listener);
        if b.running.is_empty() && b.to_record.is_empty() && recording.is_none() {
            return Ok(b.finish());
        }
        let woke = poll_fn(|cx| {
            if recording.is_none() {
                while let Some(i) = b.to_record.pop_front() {
                    recording = b.outcomes[i].as_ref().and_then(&mut record);
                    if recording.is_some() {
                        break;
                    }
                }
            }
            if let Some(r) = recording.as_mut()
                && let Poll::Ready(res) = r.as_mut().poll(cx)
            {
                recording = None;
                return Poll::Ready(Woke::Recorded(res));
            }
            for k in 0..b.running.len() {
                if let Poll::Ready(o) = b.running[k].1.as_mut().poll(cx) {
                    let (i, _) = b.running.remove(k);
                    return Poll::Ready(Woke::Finished(i, o));
                }
            }
            if let Some(d) = deadline.as_mut()
                && d.as_mut().poll(cx).is_ready()
            {
                return Poll::Ready(Woke::Deadline);
            }
            if recording.is_none() && b.to_record.is_empty() && b.running.is_empty() {
                // Nothing to wait for (no checkpointer took the settled ones): go round.
                return Poll::Ready(Woke::Recorded(Ok(())));
            }
            Poll::Pending
        })
        .await;
        match woke {
            Woke::Finished(i, o) => b.settle(i, o),
            Woke::Recorded(res) => res?,
            Woke::Deadline => {
                return Ok(DagRun {
                    outcomes: b.outcomes,
                    timed_out: limit,
                });
            }
        }
    }
}

/// The node's result: every settled branch's output (`SKIPPED` for a skipped one, a failure
/// marker for a failed one) by branch id, the yields of the successful ones merged into `ctx`;
/// FAILURE when a branch failed or the timeout passed, with an error naming each failed
/// branch (`<id>: <error>; …`), after `timed out after D (not finished: …)` when it passed.
pub(crate) fn result(ctx: &mut Context, node: &ParallelNode, run: DagRun) -> NodeResult {
    let settled: Vec<&BranchOutcome> = run.outcomes.iter().flatten().collect();
    let mut map = serde_json::Map::new();
    for o in &settled {
        let v = match (&o.output, o.success) {
            (Some(out), true) => Value::String(out.clone()),
            _ => Value::String(format!(
                "FailureMarker[message={}]",
                o.error.as_deref().unwrap_or("no output")
            )),
        };
        map.insert(o.id.clone(), v);
    }
    merge_yields(ctx, settled.iter().copied().filter(|o| o.success));
    let owned: Vec<BranchOutcome> = settled.iter().map(|o| (*o).clone()).collect();
    note_failed_branches(ctx, &owned);
    let mut errors: Vec<String> = Vec::new();
    if let Some(limit) = run.timed_out {
        let open: Vec<&str> = node
            .branches
            .iter()
            .zip(&run.outcomes)
            .filter(|(_, o)| o.is_none())
            .map(|(b, _)| b.id.as_str())
            .collect();
        errors.push(format!(
            "timed out after {} (not finished: {})",
            crate::engine::describe_ms(limit.as_millis() as u64),
            open.join(", ")
        ));
    }
    for o in settled.iter().filter(|o| !o.success) {
        errors.push(format!(
            "{}: {}",
            o.id,
            o.error.as_deref().unwrap_or("no output")
        ));
    }
    let mut result = NodeResult::success_value(Value::Object(map))
        .with_meta("branch_count", Value::from(node.branches.len() as u64));
    if !errors.is_empty() {
        result.status = NodeStatus::Failure;
        result.error = Some(errors.join("; "));
    }
    result
}
