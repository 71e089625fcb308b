//! Durable timers and signal waits, a hensu extension of the upstream model (docs/language.md,
//! *Timers and signals*): `wait("id") { duration = 30.minutes }`, `wait("id") { until =
//! "{deadline}" }` and `awaitSignal("id") { signal = "name"; timeout = 48.hours; writes("v") }`.
//! An upstream engine does not know the `WAIT` node type; a workflow without one serializes
//! exactly as upstream's.

use super::TransitionRule;

/// What a wait node waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitFor {
    /// A fixed time from the node's first visit (milliseconds, > 0).
    Duration { ms: u64 },
    /// An ISO-8601 (RFC 3339) instant, a template filled from the state (`"{deadline}"`).
    Until { template: String },
    /// A signal sent to the run by name; with a timeout, the node fails when none came in
    /// time (the timeout transition).
    Signal {
        name: String,
        timeout_ms: Option<u64>,
    },
}

/// `wait("id") { … }` / `awaitSignal("id") { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitNode {
    pub id: String,
    pub wait: WaitFor,
    /// The state variables a signal's payload is written to (a signal wait only).
    pub writes: Vec<String>,
    pub transition_rules: Vec<TransitionRule>,
}

impl WaitNode {
    /// The signal this node waits for, if it is a signal wait.
    pub fn signal(&self) -> Option<&str> {
        match &self.wait {
            WaitFor::Signal { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The longest the node can wait, when it is known statically (a duration or a signal's
    /// timeout; `None` for `until` and a signal without a timeout).
    pub fn max_wait_ms(&self) -> Option<u64> {
        match &self.wait {
            WaitFor::Duration { ms } => Some(*ms),
            WaitFor::Signal { timeout_ms, .. } => *timeout_ms,
            WaitFor::Until { .. } => None,
        }
    }
}
