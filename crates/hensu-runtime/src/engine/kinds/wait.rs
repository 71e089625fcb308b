//! `wait` and `awaitSignal` nodes (docs/language.md, *Timers and signals*): the wake time is
//! fixed at the first arrival and kept in [`RunState::waiting`]; the run's [`Waiter`] says
//! whether the time passed, a signal came, or the run suspends (a PENDING result the run loop
//! turns into a durable pause at this node).

use hensu_ir::{WaitFor, WaitNode};
use serde_json::Value;

use crate::engine::Exec;
use crate::engine::run_loop::Flow;
use crate::error::RuntimeError;
use crate::state::{NodeResult, NodeStatus, RunState, Waiting};
use crate::template::resolve_into;
use crate::value::render;
use crate::wait::{WaitAnswer, WaitRequest};

/// `2026-05-01T09:00:00.000Z`.
fn rfc3339(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    let at = jiff::Timestamp::from_millisecond(ms).unwrap_or(jiff::Timestamp::MAX);
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// The instant an `until` template names, or why it names none.
fn until_ms(template: &str, state: &RunState) -> Result<u64, String> {
    let mut text = String::new();
    resolve_into(template, &mut text, |name| {
        state
            .context
            .get(name)
            .map(render)
            .unwrap_or(std::borrow::Cow::Borrowed(""))
    });
    let at: jiff::Timestamp = text
        .trim()
        .parse()
        .map_err(|_| format!("`until` is not an ISO-8601 timestamp: `{text}`"))?;
    Ok(u64::try_from(at.as_millisecond()).unwrap_or(0))
}

/// A signal's payload into the node's `writes`: one variable takes the whole payload, several
/// take the payload's keys of their names.
fn write_payload(node: &WaitNode, state: &mut RunState, payload: &Value) {
    match node.writes.as_slice() {
        [] => {}
        [one] => {
            state.context.insert(one.clone(), payload.clone());
        }
        many => {
            for name in many {
                if let Some(v) = payload.get(name) {
                    state.context.insert(name.clone(), v.clone());
                }
            }
        }
    }
}

pub(crate) async fn execute_wait(
    exec: &Exec<'_>,
    node: &WaitNode,
    state: &mut RunState,
    flow: Flow<'_>,
) -> Result<NodeResult, RuntimeError> {
    let waiter = exec.waiter();
    let resumed = state.waiting.as_ref().is_some_and(|w| w.node_id == node.id);
    let wake_at_ms = match &state.waiting {
        Some(w) if resumed => w.wake_at_ms,
        _ => {
            let now = waiter.arrival_ms(&node.id);
            let wake = match &node.wait {
                WaitFor::Duration { ms } => Some(now.saturating_add(*ms)),
                WaitFor::Until { template } => match until_ms(template, state) {
                    Ok(at) => Some(at),
                    Err(e) => return Ok(NodeResult::failure(e)),
                },
                WaitFor::Signal { timeout_ms, .. } => timeout_ms.map(|t| now.saturating_add(t)),
            };
            state.waiting = Some(Waiting {
                node_id: node.id.clone(),
                wake_at_ms: wake,
                signal: node.signal().map(str::to_string),
            });
            wake
        }
    };
    let answer = loop {
        // Signals another flow of the run took are not this wait's to take.
        let taken = exec.signals.with(&state.signals_taken);
        let answer = waiter
            .wait(WaitRequest {
                run_id: &state.execution_id,
                node_id: &node.id,
                wake_at_ms,
                signal: node.signal(),
                taken: &taken,
                may_suspend: !matches!(flow, Flow::Item),
                nested: !matches!(flow, Flow::Main),
                resumed,
            })
            .await?;
        match &answer {
            // Taken by a flow that waited for the same name meanwhile: ask again (a waiter
            // that answers a signal it was told is taken, as a replay does, is believed).
            WaitAnswer::Signal { seq, .. } if !taken.contains(seq) && !exec.signals.take(*seq) => {
                continue;
            }
            _ => break answer,
        }
    };
    Ok(match answer {
        WaitAnswer::Suspend => NodeResult {
            status: NodeStatus::Pending,
            output: None,
            error: None,
            metadata: Default::default(),
        },
        WaitAnswer::Elapsed => {
            state.waiting = None;
            match &node.wait {
                WaitFor::Signal { name, timeout_ms } => NodeResult::failure(format!(
                    "signal `{name}` did not come within {}",
                    crate::engine::describe_ms(timeout_ms.unwrap_or(0))
                )),
                _ => NodeResult::success(rfc3339(wake_at_ms.unwrap_or(0))),
            }
        }
        WaitAnswer::Signal { seq, payload } => {
            state.waiting = None;
            if !state.signals_taken.contains(&seq) {
                state.signals_taken.push(seq);
            }
            write_payload(node, state, &payload);
            NodeResult::success_value(payload)
        }
    })
}
