//! The change one node step made to a [`RunState`], as a [`StateDelta`] for the run log.
//!
//! A [`Shadow`] remembers what the store already holds (the state as of the last write) in a
//! form that is cheap to compare: the context entries, the lengths of the append-only lists
//! (`history`, `backtracks`) with their last element, and the small fields serialized. The
//! delta of the next boundary is then
//! - one `add` per context entry that changed or appeared, one `remove` per entry that went;
//! - one `add …/-` per new history / backtrack / compensation element (the whole list is rewritten only if an
//!   element already stored changed, which the engine never does today);
//! - one `add` per small field (current node, phase, counters, …) whose JSON changed.
//!
//! The cost is O(context entries + the step's changes): independent of the run's length,
//! except through the context itself. Values are redacted before they enter the delta; the
//! comparison is against the unredacted state.

use std::time::Instant;

use hensu_runtime::{Context, RunState};
use hensu_store::{StateDelta, StepEntry};
use serde_json::{Map, Value};

use crate::durable::SnapshotRedactor;

/// The fields of [`RunState`] besides `context`, `history`, `backtracks` and `compensations`, serialized as
/// the snapshot does (a field that is `None` is absent). Kept in one place: the round-trip
/// test in `tests/` rebuilds the whole state from deltas and fails on a field missing here.
fn small_fields(state: &RunState) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    let mut put = |k: &str, v: Result<Value, serde_json::Error>| -> Result<(), String> {
        m.insert(
            k.to_string(),
            v.map_err(|e| format!("`{k}` does not serialize: {e}"))?,
        );
        Ok(())
    };
    put(
        "execution_id",
        Ok(Value::String(state.execution_id.clone())),
    )?;
    put("workflow_id", Ok(Value::String(state.workflow_id.clone())))?;
    put(
        "current_node",
        Ok(Value::String(state.current_node.clone())),
    )?;
    put(
        "retry_counters",
        serde_json::to_value(&state.retry_counters),
    )?;
    put("phase", serde_json::to_value(&state.phase))?;
    put("steps", Ok(Value::from(state.steps)))?;
    if let Some(r) = &state.rubric_evaluation {
        put("rubric_evaluation", serde_json::to_value(r))?;
    }
    put("node_redirected", Ok(Value::Bool(state.node_redirected)))?;
    if let Some(v) = &state.review_verdict {
        put("review_verdict", serde_json::to_value(v))?;
    }
    // The compensations left to run (docs/language.md, *Saga compensation*): small, and
    // rewritten as one field each time one finishes.
    if let Some(c) = &state.compensating {
        put("compensating", serde_json::to_value(c))?;
    }
    Ok(m)
}

/// What the store holds of a run, as of the last write.
#[derive(Debug)]
pub(crate) struct Shadow {
    context: Context,
    history_len: usize,
    history_last: Option<hensu_runtime::HistoryStep>,
    backtracks_len: usize,
    backtracks_last: Option<hensu_runtime::Backtrack>,
    compensations_len: usize,
    compensations_last: Option<hensu_runtime::CompensationRecord>,
    small: Map<String, Value>,
    at: Instant,
}

impl Shadow {
    /// The shadow of a state just written in full.
    pub(crate) fn of(state: &RunState) -> Result<Shadow, String> {
        Ok(Shadow {
            context: state.context.clone(),
            history_len: state.history.len(),
            history_last: state.history.last().cloned(),
            backtracks_len: state.backtracks.len(),
            backtracks_last: state.backtracks.last().cloned(),
            compensations_len: state.compensations.len(),
            compensations_last: state.compensations.last().cloned(),
            small: small_fields(state)?,
            at: Instant::now(),
        })
    }

    /// The log entry taking the stored state to `state`; the shadow moves to `state` (if the
    /// write then fails, the run writes nothing more, so the shadow is not needed again).
    pub(crate) fn step(
        &mut self,
        state: &RunState,
        redact: Option<&SnapshotRedactor>,
    ) -> Result<StepEntry, String> {
        let redacted = |mut v: Value| {
            if let Some(r) = redact {
                r(&mut v);
            }
            v
        };
        let key = |k: &str| match redacted(Value::String(k.to_string())) {
            Value::String(s) => s,
            _ => k.to_string(),
        };
        let mut delta = StateDelta::new();
        let context = &mut self.context;
        // Context: changed or new entries, then removed ones.
        for (k, v) in &state.context {
            if context.get(k) != Some(v) {
                delta = delta.set(&["context", &key(k)], redacted(v.clone()));
                context.insert(k.clone(), v.clone());
            }
        }
        if context.len() != state.context.len() {
            context.retain(|k, _| {
                let keep = state.context.contains_key(k);
                if !keep {
                    delta = std::mem::take(&mut delta).remove(&["context", &key(k)]);
                }
                keep
            });
        }
        // History and backtracks: appended elements (or the whole list if a stored one changed).
        delta = list_delta(
            delta,
            "history",
            &state.history,
            self.history_len,
            self.history_last.as_ref(),
            &redacted,
        )?;
        delta = list_delta(
            delta,
            "backtracks",
            &state.backtracks,
            self.backtracks_len,
            self.backtracks_last.as_ref(),
            &redacted,
        )?;
        // `compensations` is absent from the state while empty: its first element writes the
        // whole list (an append needs the list to exist).
        delta = if self.compensations_len == 0 && !state.compensations.is_empty() {
            list_delta(
                delta,
                "compensations",
                &state.compensations,
                1,
                None,
                &redacted,
            )?
        } else {
            list_delta(
                delta,
                "compensations",
                &state.compensations,
                self.compensations_len,
                self.compensations_last.as_ref(),
                &redacted,
            )?
        };
        // Small fields.
        let small = small_fields(state)?;
        for (k, v) in &small {
            if self.small.get(k) != Some(v) {
                delta = delta.set(&[k], redacted(v.clone()));
            }
        }
        for k in self.small.keys() {
            if !small.contains_key(k) {
                delta = delta.remove(&[k]);
            }
        }
        let executed = (state.history.len() > self.history_len)
            .then(|| state.history.last())
            .flatten();
        let now = Instant::now();
        let entry = StepEntry {
            node: executed.map(|h| h.node_id.clone()),
            node_status: executed.map(|h| h.status.as_str().to_string()),
            output: executed.and_then(|h| h.output.clone()).map(redacted),
            delta,
            started_at: None,
            duration_ms: Some(u64::try_from((now - self.at).as_millis()).unwrap_or(u64::MAX)),
        };
        self.history_len = state.history.len();
        self.history_last = state.history.last().cloned();
        self.backtracks_len = state.backtracks.len();
        self.backtracks_last = state.backtracks.last().cloned();
        self.compensations_len = state.compensations.len();
        self.compensations_last = state.compensations.last().cloned();
        self.small = small;
        self.at = now;
        Ok(entry)
    }
}

/// Appends `items[stored_len..]` to the list `name`, or rewrites the list when the element
/// stored last is no longer the same.
fn list_delta<T: serde::Serialize + PartialEq>(
    mut delta: StateDelta,
    name: &str,
    items: &[T],
    stored_len: usize,
    stored_last: Option<&T>,
    redacted: &dyn Fn(Value) -> Value,
) -> Result<StateDelta, String> {
    let to_json = |v: &T| {
        serde_json::to_value(v)
            .map(redacted)
            .map_err(|e| format!("`{name}` does not serialize: {e}"))
    };
    let unchanged_prefix =
        items.len() >= stored_len && (stored_len == 0 || items.get(stored_len - 1) == stored_last);
    if !unchanged_prefix {
        let all = items.iter().map(to_json).collect::<Result<Vec<_>, _>>()?;
        return Ok(delta.set(&[name], Value::Array(all)));
    }
    for item in &items[stored_len..] {
        delta = delta.push(&[name], to_json(item)?);
    }
    Ok(delta)
}
