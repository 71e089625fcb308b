//! The change one node step made to a [`RunState`], as a [`StateDelta`] for the run log:
//! computed here, beside the type it diffs, with no I/O (the host writes it to the store).
//!
//! A [`StateShadow`] remembers what the store already holds (the state as of the last write) in a
//! form that is cheap to compare: the context entries, the lengths of the append-only lists
//! (`history`, `backtracks`) with their last element, and the small fields serialized. The
//! delta of the next boundary is then
//! - one `add` per context entry that changed or appeared, one `remove` per entry that went;
//! - one `add …/-` per new history / backtrack / compensation element (the whole list is rewritten only if an
//!   element already stored changed, which the engine never does today);
//! - one `add` per small field (current node, phase, counters, …) whose JSON changed.
//!
//! - the `nested` field (a sub-workflow child, saved fork branches) whole when it appears, a
//!   `remove` when it goes; a sub-workflow child is recorded at its own boundaries
//!   ([`StateShadow::nested_step`]) as a delta below `/nested/state`, the same way; a branch of a
//!   parallel or fork node that finished ([`StateShadow::branch_step`]) as one element of
//!   `/nested/finished` or `/nested/branches` (appended, or set in place when the stored
//!   list already holds that branch), the list created with the first one.
//!
//! The context's entries compared are the keys its change log lists as written since the
//! shadow's last step (`crate::context`; the whole context when the log cannot tell: the
//! first step after a full write, a bulk mutation, more than 64 writes in a step), so the cost
//! is O(the step's changes), independent of the run's length and of the context's size. Values are redacted before they enter the delta; the
//! comparison is against the unredacted state.

use std::time::Instant;

use hensu_delta::StateDelta;
use serde_json::{Map, Value};

use crate::context::{Changes, ContextMark};
use crate::{
    Backtrack, CompensationRecord, Context, FinishedBranch, HistoryStep, Nested, NestedFrame,
    RunState,
};

/// What values pass through before they enter a delta or a step's output (the host's secret
/// redaction; provider keys never reach the store).
pub type Redact = dyn Fn(&mut Value) + Send + Sync;

/// One step of a run as the log records it: the node it executed (if any, named with its
/// sub-workflow path), that node's status and output, the change to the state, and the time
/// since the previous write of the same state.
#[derive(Debug)]
pub struct StepChange {
    pub node: Option<String>,
    pub node_status: Option<String>,
    pub output: Option<Value>,
    pub delta: StateDelta,
    pub duration_ms: u64,
}

/// The fields of [`RunState`] besides `context`, `history`, `backtracks` and `compensations`, serialized as
/// the snapshot does (a field that is `None` is absent). Kept beside the type: the test below
/// fails on a field of a full state that neither this list nor the step diff covers.
fn small_fields(state: &RunState) -> Result<SmallFields, String> {
    let mut m = SmallFields::with_capacity(10);
    let mut put = |k: &'static str, v: Result<Value, serde_json::Error>| -> Result<(), String> {
        m.push((k, v.map_err(|e| format!("`{k}` does not serialize: {e}"))?));
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
    if let Some(f) = &state.failure {
        put("failure", serde_json::to_value(f))?;
    }
    // A durable wait (docs/language.md, *Timers and signals*).
    if let Some(w) = &state.waiting {
        put("waiting", serde_json::to_value(w))?;
    }
    if !state.signals_taken.is_empty() {
        put("signals_taken", serde_json::to_value(&state.signals_taken))?;
    }
    Ok(m)
}

/// A step that ran no node of the main flow (a child saved whole, a finished branch): only
/// its change to the state.
fn bookkeeping_step(delta: StateDelta) -> StepChange {
    StepChange {
        node: None,
        node_status: None,
        output: None,
        delta,
        duration_ms: 0,
    }
}

/// The small fields of a state by name, in a fixed order (a list: a step compares ten of
/// them, cheaper without hashing or owned keys).
type SmallFields = Vec<(&'static str, Value)>;

fn small_field<'a>(fields: &'a SmallFields, name: &str) -> Option<&'a Value> {
    fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// What the store holds of a run, as of the last write.
#[derive(Debug)]
pub struct StateShadow {
    context: Context,
    /// The state's context log position this shadow is at: the next step's context delta
    /// reads the keys written since (the whole context is compared when the log cannot tell).
    mark: ContextMark,
    history_len: usize,
    history_last: Option<HistoryStep>,
    backtracks_len: usize,
    backtracks_last: Option<Backtrack>,
    compensations_len: usize,
    compensations_last: Option<CompensationRecord>,
    small: SmallFields,
    nested: NestedShadow,
    at: Instant,
}

/// What the store holds of a state's `nested` field.
#[derive(Debug)]
enum NestedShadow {
    None,
    /// The branches of parallel or fork node `node_id` (`Nested::Parallel` /
    /// `Nested::Fork`), known by their keys (branch ids / targets) in stored order.
    Branches {
        node_id: String,
        parallel: bool,
        keys: Vec<String>,
    },
    /// A sub-workflow child recorded boundary by boundary.
    Child {
        execution_id: String,
        shadow: Box<StateShadow>,
    },
}

impl NestedShadow {
    fn of(nested: Option<&Nested>) -> Result<NestedShadow, String> {
        Ok(match nested {
            None => NestedShadow::None,
            Some(Nested::Child { state, .. }) => NestedShadow::Child {
                execution_id: state.execution_id.clone(),
                shadow: Box::new(StateShadow::of(state)?),
            },
            Some(Nested::Fork { node_id, branches }) => NestedShadow::Branches {
                node_id: node_id.clone(),
                parallel: false,
                keys: branches.iter().map(|b| b.target.clone()).collect(),
            },
            Some(Nested::Parallel { node_id, finished }) => NestedShadow::Branches {
                node_id: node_id.clone(),
                parallel: true,
                keys: finished.iter().map(|o| o.id.clone()).collect(),
            },
        })
    }
}

/// `prefix` + `tail` as JSON Pointer segments.
fn segs<'a>(prefix: &'a [&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    prefix.iter().chain(tail).copied().collect()
}

/// The path of a nested child's state below its parent's: `nested/state`.
const CHILD_STATE: [&str; 2] = ["nested", "state"];

impl StateShadow {
    /// The shadow of a state just written in full.
    pub fn of(state: &RunState) -> Result<StateShadow, String> {
        Ok(StateShadow {
            context: state.context.clone(),
            mark: state.context.mark(),
            history_len: state.history.len(),
            history_last: state.history.last().cloned(),
            backtracks_len: state.backtracks.len(),
            backtracks_last: state.backtracks.last().cloned(),
            compensations_len: state.compensations.len(),
            compensations_last: state.compensations.last().cloned(),
            small: small_fields(state)?,
            nested: NestedShadow::of(state.nested.as_deref())?,
            at: Instant::now(),
        })
    }

    /// The current node of the stored state.
    pub fn current_node(&self) -> Option<&str> {
        small_field(&self.small, "current_node").and_then(Value::as_str)
    }

    /// The log entry taking the stored state to `state`; the shadow moves to `state` (if the
    /// write then fails, the run writes nothing more, so the shadow is not needed again).
    pub fn step(
        &mut self,
        state: &RunState,
        redact: Option<&Redact>,
    ) -> Result<StepChange, String> {
        self.step_at(&[], state, redact, StateDelta::new(), "")
    }

    /// The log entry recording `state`, the state of the sub-workflow child reached through
    /// `frames` (outermost first), at one of its boundaries: a delta below
    /// `/nested/state/…` (the child's whole state when it is new to the store). The executed
    /// node is named with its path (`sub/node`).
    pub fn nested_step(
        &mut self,
        frames: &[NestedFrame],
        state: &RunState,
        redact: Option<&Redact>,
    ) -> Result<StepChange, String> {
        let Some((last, outer)) = frames.split_last() else {
            return self.step(state, redact);
        };
        let mut prefix: Vec<&str> = Vec::with_capacity(frames.len() * 2);
        let parent = self.descend(outer, &mut prefix)?;
        let path: String = frames.iter().map(|f| format!("{}/", f.node_id)).collect();
        let known = matches!(&parent.nested, NestedShadow::Child { execution_id, .. }
            if *execution_id == last.execution_id);
        if !known {
            // A new child: its whole state.
            let mut child = serde_json::to_value(state)
                .map_err(|e| format!("the child state does not serialize: {e}"))?;
            if let Some(r) = redact {
                r(&mut child);
            }
            let value = serde_json::json!({
                "kind": "child",
                "node_id": last.node_id,
                "state": child,
            });
            let delta = StateDelta::new().set(&segs(&prefix, &["nested"]), value);
            parent.nested = NestedShadow::Child {
                execution_id: last.execution_id.clone(),
                shadow: Box::new(StateShadow::of(state)?),
            };
            return Ok(bookkeeping_step(delta));
        }
        let NestedShadow::Child { shadow, .. } = &mut parent.nested else {
            return Err("internal: the child shadow vanished".into());
        };
        prefix.extend(CHILD_STATE);
        shadow.step_at(&prefix, state, redact, StateDelta::new(), &path)
    }

    /// The shadow of the sub-workflow child reached through `frames` (this one when empty),
    /// with the path to its state pushed onto `prefix`.
    fn descend(
        &mut self,
        frames: &[NestedFrame],
        prefix: &mut Vec<&str>,
    ) -> Result<&mut StateShadow, String> {
        let mut at = self;
        for frame in frames {
            match &mut at.nested {
                NestedShadow::Child {
                    execution_id,
                    shadow,
                } if *execution_id == frame.execution_id => {
                    prefix.extend(CHILD_STATE);
                    at = shadow;
                }
                _ => {
                    return Err(format!(
                        "the sub-workflow child of node `{}` was never recorded",
                        frame.node_id
                    ));
                }
            }
        }
        Ok(at)
    }

    /// The log entry recording that a branch of parallel or fork node `node_id` finished, in
    /// the flow reached through `frames` (the main flow when empty): the branch set into the
    /// stored `nested` list of that node (the list created when the stored `nested` is not
    /// that node's). Nothing else of the state changes.
    pub fn branch_step(
        &mut self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
        redact: Option<&Redact>,
    ) -> Result<StepChange, String> {
        let mut prefix: Vec<&str> = Vec::with_capacity(frames.len() * 2 + 3);
        let at = self.descend(frames, &mut prefix)?;
        let redacted = |mut v: Value| {
            if let Some(r) = redact {
                r(&mut v);
            }
            v
        };
        let (parallel, list, value) = match branch {
            FinishedBranch::Parallel(o) => (true, "finished", serde_json::to_value(o)),
            FinishedBranch::Fork(b) => (false, "branches", serde_json::to_value(b)),
        };
        let value = redacted(value.map_err(|e| format!("the branch does not serialize: {e}"))?);
        let key = branch.key();
        let delta = match &mut at.nested {
            NestedShadow::Branches {
                node_id: stored,
                parallel: p,
                keys,
            } if stored == node_id && *p == parallel => {
                prefix.extend(["nested", list]);
                match keys.iter().position(|k| k == key) {
                    Some(i) => {
                        let i = i.to_string();
                        prefix.push(&i);
                        StateDelta::new().replace(&prefix, value)
                    }
                    None => {
                        keys.push(key.to_string());
                        StateDelta::new().push(&prefix, value)
                    }
                }
            }
            _ => {
                let mut nested = Map::new();
                nested.insert(
                    "kind".into(),
                    Value::from(if parallel { "parallel" } else { "fork" }),
                );
                nested.insert("node_id".into(), Value::from(node_id));
                nested.insert(list.into(), Value::Array(vec![value]));
                at.nested = NestedShadow::Branches {
                    node_id: node_id.to_string(),
                    parallel,
                    keys: vec![key.to_string()],
                };
                prefix.push("nested");
                StateDelta::new().set(&prefix, Value::Object(nested))
            }
        };
        Ok(bookkeeping_step(delta))
    }

    /// [`StateShadow::step`] for the state stored at `prefix`; executed nodes are named `path` +
    /// node id.
    fn step_at(
        &mut self,
        prefix: &[&str],
        state: &RunState,
        redact: Option<&Redact>,
        mut delta: StateDelta,
        path: &str,
    ) -> Result<StepChange, String> {
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
        delta = self.context_delta(prefix, &state.context, delta, &redacted, &key);
        // History and backtracks: appended elements (or the whole list if a stored one changed).
        delta = list_delta(
            delta,
            &segs(prefix, &["history"]),
            &state.history,
            self.history_len,
            self.history_last.as_ref(),
            &redacted,
        )?;
        delta = list_delta(
            delta,
            &segs(prefix, &["backtracks"]),
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
                &segs(prefix, &["compensations"]),
                &state.compensations,
                1,
                None,
                &redacted,
            )?
        } else {
            list_delta(
                delta,
                &segs(prefix, &["compensations"]),
                &state.compensations,
                self.compensations_len,
                self.compensations_last.as_ref(),
                &redacted,
            )?
        };
        // Small fields.
        let small = small_fields(state)?;
        for (k, v) in &small {
            if small_field(&self.small, k) != Some(v) {
                delta = delta.set(&segs(prefix, &[k]), redacted(v.clone()));
            }
        }
        for (k, _) in &self.small {
            if small_field(&small, k).is_none() {
                delta = delta.remove(&segs(prefix, &[k]));
            }
        }
        // Nested flows: saved ones are written whole (a run stops inside them rarely); a
        // stored one that is gone is removed.
        match (&state.nested, &self.nested) {
            (Some(nested), _) => {
                let v = serde_json::to_value(nested)
                    .map(&redacted)
                    .map_err(|e| format!("`nested` does not serialize: {e}"))?;
                delta = delta.set(&segs(prefix, &["nested"]), v);
                self.nested = NestedShadow::of(Some(nested))?;
            }
            (None, NestedShadow::None) => {}
            (None, _) => {
                delta = delta.remove(&segs(prefix, &["nested"]));
                self.nested = NestedShadow::None;
            }
        }
        let executed = (state.history.len() > self.history_len)
            .then(|| state.history.last())
            .flatten();
        let now = Instant::now();
        let entry = StepChange {
            node: executed.map(|h| format!("{path}{}", h.node_id)),
            node_status: executed.map(|h| h.status.as_str().to_string()),
            output: executed.and_then(|h| h.output.clone()).map(redacted),
            delta,
            duration_ms: u64::try_from((now - self.at).as_millis()).unwrap_or(u64::MAX),
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

impl StateShadow {
    /// The context's part of a step: one `add` per entry that changed or appeared, one
    /// `remove` per entry that went. Only the keys the context's change log lists since the
    /// shadow's mark are looked at when it can tell (the cost of a step is then independent of
    /// the context's size); else the whole context is compared.
    fn context_delta(
        &mut self,
        prefix: &[&str],
        now: &Context,
        mut delta: StateDelta,
        redacted: &dyn Fn(Value) -> Value,
        key: &dyn Fn(&str) -> String,
    ) -> StateDelta {
        let context = &mut self.context;
        match now.changed_since(self.mark) {
            Changes::Keys(mut written) => {
                // Each key once, in the order of its first write.
                let mut seen = rustc_hash::FxHashSet::default();
                written.retain(|k| seen.insert(*k));
                for k in written {
                    match now.get(k) {
                        Some(v) if context.get(k) != Some(v) => {
                            delta = delta
                                .set(&segs(prefix, &["context", &key(k)]), redacted(v.clone()));
                            context.insert(k.to_string(), v.clone());
                        }
                        Some(_) => {}
                        None => {
                            if context.shift_remove(k).is_some() {
                                delta = delta.remove(&segs(prefix, &["context", &key(k)]));
                            }
                        }
                    }
                }
            }
            Changes::Unknown => {
                // Changed or new entries, then removed ones.
                for (k, v) in now {
                    if context.get(k) != Some(v) {
                        delta =
                            delta.set(&segs(prefix, &["context", &key(k)]), redacted(v.clone()));
                        context.insert(k.clone(), v.clone());
                    }
                }
                if context.len() != now.len() {
                    context.retain(|k, _| {
                        let keep = now.contains_key(k);
                        if !keep {
                            delta = std::mem::take(&mut delta)
                                .remove(&segs(prefix, &["context", &key(k)]));
                        }
                        keep
                    });
                }
            }
        }
        self.mark = now.mark();
        delta
    }
}

/// Appends `items[stored_len..]` to the list `name`, or rewrites the list when the element
/// stored last is no longer the same.
fn list_delta<T: serde::Serialize + PartialEq>(
    mut delta: StateDelta,
    name: &[&str],
    items: &[T],
    stored_len: usize,
    stored_last: Option<&T>,
    redacted: &dyn Fn(Value) -> Value,
) -> Result<StateDelta, String> {
    let to_json = |v: &T| {
        serde_json::to_value(v)
            .map(redacted)
            .map_err(|e| format!("`{}` does not serialize: {e}", name.join("/")))
    };
    let unchanged_prefix =
        items.len() >= stored_len && (stored_len == 0 || items.get(stored_len - 1) == stored_last);
    if !unchanged_prefix {
        let all = items.iter().map(to_json).collect::<Result<Vec<_>, _>>()?;
        return Ok(delta.set(name, Value::Array(all)));
    }
    for item in &items[stored_len..] {
        delta = delta.push(name, to_json(item)?);
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Compensating, EndCause, ReviewVerdict, RubricEvaluation, RunFailure};

    /// A state with every optional field set.
    fn full_state() -> RunState {
        let mut s = RunState::new("r1".into(), "w".into(), "a".into(), Context::default());
        s.rubric_evaluation = Some(RubricEvaluation {
            rubric_id: "q".into(),
            score: 1.0,
            passed: true,
        });
        s.review_verdict = Some(ReviewVerdict {
            approved: true,
            reason: None,
            timed_out: false,
        });
        s.compensating = Some(Compensating {
            cause: EndCause::Rejected {
                reason: "no".into(),
            },
            pending: Vec::new(),
        });
        s.failure = Some(RunFailure {
            message: "m".into(),
            node: None,
            cause: None,
        });
        s.waiting = Some(crate::Waiting {
            node_id: "a".into(),
            wake_at_ms: Some(1),
            signal: Some("go".into()),
        });
        s.signals_taken = vec![0];
        s
    }

    #[test]
    fn every_field_of_the_state_is_diffed() {
        let state = full_state();
        let Value::Object(fields) = serde_json::to_value(&state).expect("serializes") else {
            panic!("a state is an object");
        };
        let small = small_fields(&state).expect("small fields");
        // Diffed on their own: the context entry by entry, the lists by their tails, the
        // nested flows whole.
        let diffed = [
            "context",
            "history",
            "backtracks",
            "compensations",
            "nested",
        ];
        for key in fields.keys() {
            assert!(
                diffed.contains(&key.as_str()) || small_field(&small, key).is_some(),
                "`{key}` of RunState is in no delta: add it to `small_fields`"
            );
        }
    }

    #[test]
    fn a_step_s_delta_takes_the_stored_state_to_the_new_one() {
        let before = RunState::new("r1".into(), "w".into(), "a".into(), Context::default());
        let mut shadow = StateShadow::of(&before).expect("shadow");
        let mut after = full_state();
        after.context.insert("x".into(), Value::from(1));
        after.steps = 3;
        let change = shadow.step(&after, None).expect("step");
        let mut stored = serde_json::to_value(&before).expect("serializes");
        change.delta.apply(&mut stored).expect("applies");
        assert_eq!(stored, serde_json::to_value(&after).expect("serializes"));
        // Nothing changed since: an empty delta.
        assert!(shadow.step(&after, None).expect("step").delta.is_empty());
    }

    /// Applies each step's delta to the stored JSON and checks it against the state: the
    /// context's change log (tracked) must give the same result as a whole comparison, through
    /// overwrites with the same value, removals, re-insertions, `get_mut`, a bulk `retain` and
    /// a step writing more keys than the log keeps.
    #[test]
    fn the_change_log_s_delta_takes_the_stored_context_to_the_new_one() {
        let mut state = RunState::new("r1".into(), "w".into(), "a".into(), Context::default());
        for i in 0..1_000 {
            state.context.insert(format!("k{i}"), Value::from(i));
        }
        state.context.track_changes();
        let mut shadow = StateShadow::of(&state).expect("shadow");
        let mut stored = serde_json::to_value(&state).expect("serializes");
        let mut step = |state: &RunState, ops: Option<usize>| {
            let change = shadow.step(state, None).expect("step");
            if let Some(n) = ops {
                assert_eq!(change.delta.len(), n, "{:?}", change.delta);
            }
            change.delta.apply(&mut stored).expect("applies");
            assert_eq!(stored, serde_json::to_value(state).expect("serializes"));
        };
        // The first step after the full write compares the whole context.
        state.context.insert("k1".into(), Value::from("one"));
        step(&state, Some(1));
        state.context.insert("new".into(), Value::from(true));
        state.context.insert("k2".into(), Value::from(2));
        step(&state, Some(1));
        state.context.shift_remove("k3");
        state.context.shift_remove("k4");
        state.context.insert("k4".into(), Value::from(4));
        state.context.shift_remove("not there");
        step(&state, Some(1));
        if let Some(v) = state.context.get_mut("k5") {
            *v = Value::from("five");
        }
        if let Some(v) = state.context.get_mut("k6") {
            *v = Value::from(6);
        }
        step(&state, Some(1));
        state.context.insert("k3".into(), Value::from(3));
        state.context.retain(|k, _| k != "k7");
        step(&state, Some(2));
        for i in 0..100 {
            state.context.insert(format!("k{i}"), Value::from(-i));
        }
        step(&state, Some(99));
        step(&state, Some(0));
    }
}
