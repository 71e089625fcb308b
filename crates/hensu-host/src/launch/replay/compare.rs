//! The first difference between a recorded run and its replay: step by step (node, status,
//! output, error, rubric), then the backtracks, the context, where the run is and how it
//! ended. Times, usage and run ids are not compared: they are not behaviour.

use hensu_diagnostics::codes;
use hensu_runtime::{HistoryStep, RunState};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::recorded::Miss;

/// What differs first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// Another node ran at this step (or none, or one more).
    Path,
    /// The same node ended with another status.
    Status,
    /// The same node produced another output or error.
    Output,
    /// The flow went back differently (rubric, review or `revise` backtracks).
    Backtrack,
    /// A context entry differs at the end.
    Context,
    /// The run ended differently (status, end node, failure).
    End,
}

impl DivergenceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::Path => "path",
            DivergenceKind::Status => "status",
            DivergenceKind::Output => "output",
            DivergenceKind::Backtrack => "backtrack",
            DivergenceKind::Context => "context",
            DivergenceKind::End => "end",
        }
    }
}

/// The first difference between the recorded run and the replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    /// `E0916`; `E0917` when a call the recording lacks caused it.
    pub code: String,
    pub kind: DivergenceKind,
    /// The step (1-based, as the history numbers them) where it shows; `None` for the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// The node at that step (the recorded one; the replay's when the recording has none).
    pub node: String,
    /// The context key, for a context difference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub expected: Value,
    pub got: Value,
    /// One line, as `hensuc replay` prints it.
    pub message: String,
}

fn step_value(h: &HistoryStep) -> Value {
    json!({
        "node": h.node_id,
        "status": h.status,
        "output": h.output,
        "error": h.error,
    })
}

/// The first difference, with the first missing call as its cause when there is one.
pub(super) fn first_divergence(
    start: &RunState,
    expected: &RunState,
    got: &RunState,
    (recorded_status, replayed_status): (&str, &str),
    miss: Option<&Miss>,
) -> Option<Divergence> {
    let found = history(start, expected, got)
        .or_else(|| backtracks(start, expected, got))
        .or_else(|| context(expected, got))
        .or_else(|| end(expected, got, recorded_status, replayed_status))?;
    Some(match miss {
        Some(m) => Divergence {
            code: codes::E0917.to_string(),
            message: format!(
                "{}; the recording has no answer for the {m}, which was not made live",
                found.message
            ),
            ..found
        },
        None => found,
    })
}

fn history(start: &RunState, expected: &RunState, got: &RunState) -> Option<Divergence> {
    let from = start.history.len();
    let exp = expected.history.get(from..).unwrap_or_default();
    let rep = got.history.get(from..).unwrap_or_default();
    for i in 0..exp.len().max(rep.len()) {
        let step = (from + i + 1) as u64;
        let (e, g) = (exp.get(i), rep.get(i));
        let (kind, node, what) = match (e, g) {
            (Some(e), Some(g)) if e.node_id != g.node_id => (
                DivergenceKind::Path,
                e.node_id.clone(),
                format!("`{}` ran instead of `{}`", g.node_id, e.node_id),
            ),
            (Some(e), Some(g)) if e.status != g.status => (
                DivergenceKind::Status,
                e.node_id.clone(),
                format!("`{}` ended {} instead of {}", e.node_id, g.status, e.status),
            ),
            (Some(e), Some(g))
                if e.output != g.output || e.error != g.error || e.rubric != g.rubric =>
            {
                (
                    DivergenceKind::Output,
                    e.node_id.clone(),
                    format!("`{}` produced another result", e.node_id),
                )
            }
            (Some(_), Some(_)) => continue,
            (Some(e), None) => (
                DivergenceKind::Path,
                e.node_id.clone(),
                format!("the replay stopped before `{}`", e.node_id),
            ),
            (None, Some(g)) => (
                DivergenceKind::Path,
                g.node_id.clone(),
                format!(
                    "the replay ran `{}`, which the recording did not",
                    g.node_id
                ),
            ),
            (None, None) => continue,
        };
        return Some(Divergence {
            code: codes::E0916.to_string(),
            kind,
            step: Some(step),
            node,
            key: None,
            expected: e.map(step_value).unwrap_or(Value::Null),
            got: g.map(step_value).unwrap_or(Value::Null),
            message: format!("the replay diverges at step {step}: {what}"),
        });
    }
    None
}

fn backtracks(start: &RunState, expected: &RunState, got: &RunState) -> Option<Divergence> {
    let from = start.backtracks.len();
    let exp = expected.backtracks.get(from..).unwrap_or_default();
    let rep = got.backtracks.get(from..).unwrap_or_default();
    let at = (0..exp.len().max(rep.len())).find(|&i| exp.get(i) != rep.get(i))?;
    let as_json = |b: Option<&hensu_runtime::Backtrack>| {
        b.map_or(
            Value::Null,
            |b| json!({"from": b.from, "to": b.to, "kind": b.kind, "reason": b.reason}),
        )
    };
    let node = exp
        .get(at)
        .or(rep.get(at))
        .map(|b| b.from.clone())
        .unwrap_or_default();
    Some(Divergence {
        code: codes::E0916.to_string(),
        kind: DivergenceKind::Backtrack,
        step: None,
        node: node.clone(),
        key: None,
        expected: as_json(exp.get(at)),
        got: as_json(rep.get(at)),
        message: format!(
            "the replay diverges at backtrack {} (from `{node}`)",
            from + at + 1
        ),
    })
}

fn context(expected: &RunState, got: &RunState) -> Option<Divergence> {
    let keys = expected.context.keys().chain(
        got.context
            .keys()
            .filter(|k| !expected.context.contains_key(*k)),
    );
    for key in keys {
        let (e, g) = (expected.context.get(key), got.context.get(key));
        if e == g {
            continue;
        }
        return Some(Divergence {
            code: codes::E0916.to_string(),
            kind: DivergenceKind::Context,
            step: None,
            node: expected.current_node.clone(),
            key: Some(key.clone()),
            expected: e.cloned().unwrap_or(Value::Null),
            got: g.cloned().unwrap_or(Value::Null),
            message: format!("the replay's context differs at `{key}`"),
        });
    }
    None
}

fn end(
    expected: &RunState,
    got: &RunState,
    recorded_status: &str,
    replayed_status: &str,
) -> Option<Divergence> {
    let failure = |s: &RunState| s.failure.as_ref().map(|f| f.message.clone());
    let same = recorded_status == replayed_status
        && expected.current_node == got.current_node
        && failure(expected) == failure(got);
    if same {
        return None;
    }
    let as_json = |s: &RunState, status: &str| json!({"status": status, "node": s.current_node, "failure": failure(s)});
    Some(Divergence {
        code: codes::E0916.to_string(),
        kind: DivergenceKind::End,
        step: None,
        node: expected.current_node.clone(),
        key: None,
        expected: as_json(expected, recorded_status),
        got: as_json(got, replayed_status),
        message: format!(
            "the replay ends {replayed_status} at `{}`, the recording {recorded_status} at `{}`",
            got.current_node, expected.current_node
        ),
    })
}
