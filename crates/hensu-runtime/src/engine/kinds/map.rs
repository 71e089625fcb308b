//! Map nodes: an agent, or a sub-workflow, run once per item of a list variable
//! (docs/language.md, *Map over a list*).
//!
//! The items start in list order, at most `maxParallel` at a time, each on its own copy of the
//! context with `item` and `index` set. Every settled item is an `item_settled` event and,
//! in a durable run, a record of the node's nested state (the parallel node's record, the
//! item's position as its id: [`Checkpointer::record_branch`]), so a resumed node runs only the
//! items not recorded. The answers are gathered in the list's order into the node's `writes`
//! variable; a failed item fails the node (`FAIL`: no further item starts), is left out
//! (`SKIP`) or keeps its place as `null` (`COLLECT`), and every failure is listed in
//! `failed_items`.
//!
//! [`Checkpointer::record_branch`]: crate::checkpoint::Checkpointer::record_branch

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

use hensu_ir::{ItemFailure, MapNode, SubWorkflowNode};
use indexmap::IndexMap;
use serde_json::Value;

use crate::engine::branches::BoxFuture;
use crate::engine::{Exec, Flow, Prepared};
use crate::error::RuntimeError;
use crate::events::Event;
use crate::run_types::CancelToken;
use crate::state::{BranchOutcome, FinishedBranch, Nested, NodeResult, NodeStatus, RunState};
use crate::template::resolve;
use crate::validate::validate_output;
use crate::value::{Context, render, set_current_node};

/// The items of the list `over` names: an array (its strings as they are, other values as
/// JSON text), or a text holding a JSON array (as an input may arrive). `Err`: why there is
/// no list.
fn items(ctx: &Context, over: &str) -> Result<Vec<String>, String> {
    let value = ctx
        .get(over)
        .ok_or_else(|| format!("the list `{over}` is not set"))?;
    let parsed;
    let list = match value {
        Value::Array(a) => a,
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(a)) => {
                parsed = a;
                &parsed
            }
            _ => return Err(format!("`{over}` is a text, not a list")),
        },
        other => return Err(format!("`{over}` is not a list: {}", kind_of(other))),
    };
    Ok(list.iter().map(|v| render(v).into_owned()).collect())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a Boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The outcomes a durable run recorded for the items of `node` before it stopped, by item
/// position (the record's ids are the positions); `None` when nothing was recorded.
fn recorded_items(
    state: &mut RunState,
    node: &MapNode,
    count: usize,
) -> Vec<Option<BranchOutcome>> {
    let mut by_item: Vec<Option<BranchOutcome>> = vec![None; count];
    let Some(nested) = state.nested.take() else {
        return by_item;
    };
    match *nested {
        Nested::Parallel { node_id, finished } if node_id == node.id => {
            for o in finished {
                if let Some(i) = o.id.parse::<usize>().ok().filter(|i| *i < count) {
                    by_item[i] = Some(o);
                }
            }
        }
        other => state.nested = Some(Box::new(other)),
    }
    by_item
}

/// Runs a map node in `flow`.
pub(crate) async fn execute_map(
    engine: &Exec<'_>,
    p: &Prepared,
    node: &MapNode,
    state: &mut RunState,
    cancel: &CancelToken,
    flow: Flow<'_>,
) -> Result<NodeResult, RuntimeError> {
    state.context.shift_remove("_prompt_override");
    let items = match items(&state.context, &node.over) {
        Ok(items) => items,
        Err(why) => {
            state.nested = None;
            return Ok(NodeResult::failure(format!(
                "Map over `{}` failed: {why}",
                node.over
            )));
        }
    };
    if let Some(max) = node.max_items
        && items.len() as i64 > max
    {
        state.nested = None;
        return Ok(NodeResult::failure(format!(
            "Map over `{}` failed: the list has {} items, maxItems is {max}",
            node.over,
            items.len()
        )));
    }
    let recorded = recorded_items(state, node, items.len());
    let recording = engine.branch_recording(flow);
    let runs = ItemRuns {
        engine,
        p,
        node,
        items: &items,
        base: &state.context,
        cancel,
    };
    let node_id = node.id.as_str();
    let outcomes = schedule(
        node,
        recorded,
        |i| runs.start(i),
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
        engine,
    )
    .await?;
    Ok(result(&mut state.context, node, &items, outcomes))
}

/// What the items of one visit share: who runs them and on what.
struct ItemRuns<'a, 'r> {
    engine: &'a Exec<'r>,
    p: &'a Prepared,
    node: &'a MapNode,
    items: &'a [String],
    base: &'a Context,
    cancel: &'a CancelToken,
}

impl<'a, 'r> ItemRuns<'a, 'r> {
    /// The future of item `i` on its own copy of the context (`item`, `index` set).
    fn start(&self, i: usize) -> BoxFuture<'a, BranchOutcome> {
        let (engine, node) = (self.engine, self.node);
        let mut ctx = self.base.clone();
        set_current_node(&mut ctx, &node.id);
        ctx.insert("item".into(), Value::String(self.items[i].clone()));
        ctx.insert("index".into(), Value::from(i as u64));
        ctx.insert(
            crate::stub::CURRENT_BRANCH_KEY.into(),
            Value::String(format!("{}[{i}]", node.id)),
        );
        let id = i.to_string();
        if let Some(target) = &node.target {
            return Box::pin(child_item(engine, node, target, ctx, self.cancel, id));
        }
        let prompt = resolve(node.prompt.as_deref().unwrap_or(""), &ctx);
        let agent_id = node.agent_id.clone().unwrap_or_default();
        let agent = self.p.agents.get_with_system_prompt(&agent_id);
        Box::pin(async move {
            let Some((agent, system_prompt)) = agent else {
                return failed(id, format!("Agent not found: {agent_id}"));
            };
            let timeout = engine.agent_timeout(agent.as_ref());
            let result = engine
                .call_agent(
                    agent.as_ref(),
                    system_prompt,
                    &node.id,
                    Some(&id),
                    &prompt,
                    &ctx,
                    timeout,
                    &[],
                )
                .await;
            if result.status != NodeStatus::Success {
                return failed(id, result.error.unwrap_or_default());
            }
            let text = result
                .output_text()
                .map(|c| c.into_owned())
                .unwrap_or_default();
            if let Err(v) = validate_output(&text) {
                return failed(id, format!("output {v}"));
            }
            BranchOutcome {
                id,
                success: true,
                output: Some(text),
                error: None,
                yields: IndexMap::new(),
            }
        })
    }
}

/// One item run by a sub-workflow body: the child `target` on the inputs `item` and `index`
/// (as a sub-workflow node would run it, without checkpoints of its own: a resumed node runs
/// an unrecorded item's child again from its start), its `result` variable the answer.
async fn child_item(
    engine: &Exec<'_>,
    node: &MapNode,
    target: &str,
    ctx: Context,
    cancel: &CancelToken,
    id: String,
) -> BranchOutcome {
    let call = SubWorkflowNode {
        id: node.id.clone(),
        workflow_id: target.to_string(),
        target_version: None,
        input_mapping: [("item", "item"), ("index", "index")]
            .into_iter()
            .map(|(c, p)| (c.to_string(), p.to_string()))
            .collect(),
        output_mapping: Default::default(),
        transition_rules: Vec::new(),
    };
    let mut item_state = RunState::new(String::new(), String::new(), node.id.clone(), ctx);
    let ran = super::subworkflow::execute_subworkflow(
        engine,
        &call,
        &mut item_state,
        cancel,
        Flow::Item,
        None,
    )
    .await;
    let result = node.result.as_deref().unwrap_or("");
    match ran {
        Ok(r) if r.status == NodeStatus::Success => {
            match r.output.as_ref().and_then(|o| o.get(result)) {
                Some(v) if !v.is_null() => BranchOutcome {
                    id,
                    success: true,
                    output: Some(render(v).into_owned()),
                    error: None,
                    yields: IndexMap::new(),
                },
                _ => failed(id, format!("the sub-workflow '{target}' set no `{result}`")),
            }
        }
        Ok(r) if r.status == NodeStatus::Pending => failed(
            id,
            format!("the sub-workflow '{target}' paused (a map item cannot wait for a review)"),
        ),
        Ok(r) => failed(id, r.error.unwrap_or_else(|| "failed".into())),
        Err(e) => failed(id, e.to_string()),
    }
}

fn failed(id: String, error: String) -> BranchOutcome {
    BranchOutcome {
        id,
        success: false,
        output: None,
        error: Some(error),
        yields: IndexMap::new(),
    }
}

/// What woke the scheduler.
enum Woke {
    Finished(usize, BranchOutcome),
    Recorded(Result<(), RuntimeError>),
}

/// Runs the items not `recorded`, in list order, at most `maxParallel` at a time; hands every
/// settled one to `record` (one at a time, in the order they settled, while the others run).
/// Under `FAIL`, no item starts after one failed (the running ones finish). Returns the
/// outcomes by position (`None`: not run).
async fn schedule<'r, F, S, R>(
    node: &MapNode,
    mut outcomes: Vec<Option<BranchOutcome>>,
    mut start: S,
    mut record: R,
    engine: &Exec<'_>,
) -> Result<Vec<Option<BranchOutcome>>, RuntimeError>
where
    F: Future<Output = BranchOutcome>,
    S: FnMut(usize) -> F,
    R: FnMut(&BranchOutcome) -> Option<BoxFuture<'r, Result<(), RuntimeError>>>,
{
    let limit = node.max_parallel.max(1) as usize;
    let stop_on_failure = node.on_item_failure == ItemFailure::Fail;
    let mut waiting: VecDeque<usize> = (0..outcomes.len())
        .filter(|&i| outcomes[i].is_none())
        .collect();
    let mut failed_already = outcomes.iter().flatten().any(|o| !o.success);
    let mut running: Vec<(usize, Pin<Box<F>>)> = Vec::new();
    let mut to_record: VecDeque<usize> = VecDeque::new();
    let mut recording: Option<BoxFuture<'r, Result<(), RuntimeError>>> = None;
    loop {
        while running.len() < limit && !(stop_on_failure && failed_already) {
            let Some(i) = waiting.pop_front() else { break };
            running.push((i, Box::pin(start(i))));
        }
        if running.is_empty() && to_record.is_empty() && recording.is_none() {
            return Ok(outcomes);
        }
        let woke = poll_fn(|cx| {
            if recording.is_none() {
                while let Some(i) = to_record.pop_front() {
                    recording = outcomes[i].as_ref().and_then(&mut record);
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
            for k in 0..running.len() {
                if let Poll::Ready(o) = running[k].1.as_mut().poll(cx) {
                    let (i, _) = running.remove(k);
                    return Poll::Ready(Woke::Finished(i, o));
                }
            }
            if recording.is_none() && to_record.is_empty() && running.is_empty() {
                return Poll::Ready(Woke::Recorded(Ok(())));
            }
            Poll::Pending
        })
        .await;
        match woke {
            Woke::Finished(i, o) => {
                engine.listener.on_event(&Event::ItemSettled {
                    node_id: &node.id,
                    index: i as u64,
                    success: o.success,
                    error: o.error.as_deref(),
                });
                failed_already |= !o.success;
                outcomes[i] = Some(o);
                to_record.push_back(i);
            }
            Woke::Recorded(res) => res?,
        }
    }
}

/// The node's result: the answers in list order (the output, and the `writes` variable), the
/// failed items in `failed_items` (`{index, item, error}`), FAILURE under `FAIL` when an item
/// failed (the error lists `item <i>: <error>` of each and how many did not run).
fn result(
    ctx: &mut Context,
    node: &MapNode,
    items: &[String],
    outcomes: Vec<Option<BranchOutcome>>,
) -> NodeResult {
    let mut gathered: Vec<Value> = Vec::with_capacity(items.len());
    let mut failures: Vec<Value> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut not_run = 0usize;
    for (i, o) in outcomes.into_iter().enumerate() {
        let Some(o) = o else {
            not_run += 1;
            continue;
        };
        match (o.success, o.output) {
            (true, Some(out)) => gathered.push(Value::String(out)),
            (_, _) => {
                let error = o.error.unwrap_or_else(|| "no output".into());
                errors.push(format!("item {i}: {error}"));
                let mut f = serde_json::Map::new();
                f.insert("index".into(), Value::from(i as u64));
                f.insert("item".into(), Value::String(items[i].clone()));
                f.insert("error".into(), Value::String(error));
                failures.push(Value::Object(f));
                if node.on_item_failure == ItemFailure::Collect {
                    gathered.push(Value::Null);
                }
            }
        }
    }
    let failed_count = failures.len();
    if failures.is_empty() {
        ctx.shift_remove("failed_items");
    } else {
        ctx.insert("failed_items".into(), Value::Array(failures));
    }
    let aggregate = Value::Array(gathered);
    let fails = node.on_item_failure == ItemFailure::Fail && failed_count > 0;
    if let Some(w) = node.writes.first()
        && !fails
    {
        ctx.insert(w.clone(), aggregate.clone());
    }
    let mut result = NodeResult::success_value(aggregate)
        .with_meta("item_count", Value::from(items.len() as u64))
        .with_meta("failed_count", Value::from(failed_count as u64));
    if fails {
        if not_run > 0 {
            errors.push(format!("{not_run} items not run"));
        }
        result.status = NodeStatus::Failure;
        result.error = Some(errors.join("; "));
    }
    result
}
