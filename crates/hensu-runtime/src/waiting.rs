//! The waits of a suspended run across its flows (docs/language.md, *Timers and signals*): a
//! `wait` or `awaitSignal` node suspends the run wherever it is — the main flow, a
//! sub-workflow child, a fork branch — and the run's record must say when to wake it and which
//! signals wake it earlier. [`waiting_waits`] lists every waiting node of a saved state (as
//! [`waiting_reviews`](crate::waiting_reviews) lists its reviews).
//!
//! Signals are taken exactly once per run, whichever flow takes them: the flows of one run
//! share a [`SignalLedger`] (seeded from every flow's `signals_taken`), and a flow that ends
//! hands its taken signals to the flow it returns to.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::state::{Nested, RunState};

/// One `wait` or `awaitSignal` node a suspended run waits at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingWait {
    /// The wait node.
    pub node_id: String,
    /// The fork target whose branch waits (innermost), `None` outside fork branches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The fork and sub-workflow nodes the wait is nested in, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<String>,
    /// When it ends without a signal (unix milliseconds); `None`: a signal wait without a
    /// timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_at_ms: Option<u64>,
    /// The signal it waits for (`None`: a timer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

/// Every wait node `state` is suspended at, in the order the run's flows hold them (the main
/// flow's, else its nested flows: a child's, fork branches in target order, depth first). A
/// flow counts as waiting only while it stands at its wait node.
pub fn waiting_waits(state: &RunState) -> Vec<WaitingWait> {
    let mut out = Vec::new();
    collect(state, &mut Vec::new(), None, &mut out);
    out
}

fn collect(
    state: &RunState,
    within: &mut Vec<String>,
    branch: Option<&str>,
    out: &mut Vec<WaitingWait>,
) {
    let Some(nested) = state.nested.as_deref() else {
        if let Some(w) = &state.waiting
            && w.node_id == state.current_node
        {
            out.push(WaitingWait {
                node_id: w.node_id.clone(),
                branch: branch.map(str::to_string),
                within: within.clone(),
                wake_at_ms: w.wake_at_ms,
                signal: w.signal.clone(),
            });
        }
        return;
    };
    within.push(nested.node_id().to_string());
    match nested {
        Nested::Child { state, .. } => collect(state, within, branch, out),
        Nested::Fork { branches, .. } => {
            for b in branches.iter().filter(|b| b.ended.is_none()) {
                collect(&b.state, within, Some(&b.target), out);
            }
        }
        Nested::Parallel { .. } => {}
    }
    within.pop();
}

/// The signals taken by any flow of `state`: its own and every saved nested flow's (ended fork
/// branches included), each once.
pub(crate) fn all_signals_taken(state: &RunState) -> Vec<u64> {
    fn walk(state: &RunState, out: &mut Vec<u64>) {
        for &s in &state.signals_taken {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        match state.nested.as_deref() {
            Some(Nested::Child { state, .. }) => walk(state, out),
            Some(Nested::Fork { branches, .. }) => {
                for b in branches {
                    walk(&b.state, out);
                }
            }
            Some(Nested::Parallel { .. }) | None => {}
        }
    }
    let mut out = Vec::new();
    walk(state, &mut out);
    out
}

/// Adds `from`'s taken signals to `into`'s (a branch joined, a child ended).
pub(crate) fn merge_taken(into: &mut Vec<u64>, from: &[u64]) {
    for &s in from {
        if !into.contains(&s) {
            into.push(s);
        }
    }
}

/// The signals one run has taken, shared by all its flows while it runs: two branches waiting
/// for the same name never take the same signal.
#[derive(Debug, Default)]
pub(crate) struct SignalLedger {
    taken: Mutex<Vec<u64>>,
}

impl SignalLedger {
    /// Adds the signals `state`'s flows took before (a resumed run).
    pub(crate) fn seed(&self, state: &RunState) {
        let seeded = all_signals_taken(state);
        if let Ok(mut t) = self.taken.lock() {
            merge_taken(&mut t, &seeded);
        }
    }

    /// `own` and every signal another flow of the run took.
    pub(crate) fn with(&self, own: &[u64]) -> Vec<u64> {
        let mut all = own.to_vec();
        if let Ok(t) = self.taken.lock() {
            merge_taken(&mut all, &t);
        }
        all
    }

    /// Takes signal `seq` for one wait: `false` when another flow took it first.
    pub(crate) fn take(&self, seq: u64) -> bool {
        match self.taken.lock() {
            Ok(mut t) if !t.contains(&seq) => {
                t.push(seq);
                true
            }
            Ok(_) => false,
            // A poisoned ledger cannot tell: the flow's own list still keeps it once.
            Err(_) => true,
        }
    }
}
