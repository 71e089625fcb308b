//! The waits of a replayed run (docs/cli.md, *Replay*; docs/language.md, *Timers and
//! signals*): a `wait` or `awaitSignal` node is answered from the recording at once — nothing
//! sleeps, no signal is read from a store. A visit of a wait node in the recorded history is
//! its step: a timer's elapsed wake time, a delivered signal's payload (its sequence number is
//! the one the recorded run took), a signal wait's timeout. A visit the recording does not
//! have (the recorded run is still waiting there) suspends the replay, as the run did.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use hensu_ir::{Node, WaitFor, Workflow};
use hensu_runtime::{NodeStatus, RunState, RuntimeError, WaitAnswer, WaitRequest, Waiter};
use serde_json::Value;

/// One recorded visit of a wait node.
#[derive(Clone, Debug, PartialEq)]
enum Visit {
    /// The wake time passed (a timer, or a signal wait's timeout); `arrival_ms` is when a
    /// timer's duration started, when the recording tells it.
    Elapsed { arrival_ms: Option<u64> },
    /// The signal came with this payload.
    Signal(Value),
}

/// A [`Waiter`] answering each wait from the recorded run's history.
#[derive(Debug)]
pub struct RecordedWaits {
    visits: Mutex<HashMap<String, VecDeque<Visit>>>,
    /// The sequence numbers of the signals the recorded run took, in the order it took them.
    taken: Vec<u64>,
    delivered: AtomicUsize,
    /// The clock of a replay: the recorded run's last known instant (its end, else now).
    now_ms: u64,
}

impl RecordedWaits {
    /// The waits of `workflow`'s main flow between `start` and `end` of a recorded run.
    pub fn new(workflow: &Workflow, start: &RunState, end: &RunState) -> RecordedWaits {
        let mut visits: HashMap<String, VecDeque<Visit>> = HashMap::new();
        let steps = end.history.get(start.history.len()..).unwrap_or_default();
        for step in steps {
            let Some(Node::Wait(node)) = workflow.nodes.get(&step.node_id) else {
                continue;
            };
            let visit = match (&node.wait, &step.status) {
                (WaitFor::Signal { .. }, NodeStatus::Success) => {
                    Visit::Signal(step.output.clone().unwrap_or(Value::Null))
                }
                (WaitFor::Signal { .. }, _) => Visit::Elapsed { arrival_ms: None },
                (WaitFor::Duration { ms }, NodeStatus::Success) => Visit::Elapsed {
                    arrival_ms: step
                        .output
                        .as_ref()
                        .and_then(Value::as_str)
                        .and_then(hensu_store::parse_rfc3339)
                        .map(|wake| wake.saturating_sub(*ms)),
                },
                (WaitFor::Until { .. }, NodeStatus::Success) => Visit::Elapsed { arrival_ms: None },
                // A timer that failed (an `until` that names no instant) failed before it
                // waited: the replay fails it the same way without asking.
                _ => continue,
            };
            visits
                .entry(step.node_id.clone())
                .or_default()
                .push_back(visit);
        }
        let taken = end
            .signals_taken
            .iter()
            .filter(|s| !start.signals_taken.contains(s))
            .copied()
            .collect();
        RecordedWaits {
            visits: Mutex::new(visits),
            taken,
            delivered: AtomicUsize::new(0),
            now_ms: hensu_store::now_ms(),
        }
    }

    fn next(&self, node_id: &str, take: bool) -> Result<Option<Visit>, RuntimeError> {
        let mut visits = self.visits.lock().map_err(|_| RuntimeError::Store {
            message: "the replay's recorded waits are poisoned".into(),
        })?;
        let queue = visits.get_mut(node_id);
        Ok(if take {
            queue.and_then(VecDeque::pop_front)
        } else {
            queue.and_then(|q| q.front().cloned())
        })
    }
}

#[async_trait]
impl Waiter for RecordedWaits {
    fn now_ms(&self) -> u64 {
        self.now_ms
    }

    fn arrival_ms(&self, node_id: &str) -> u64 {
        match self.next(node_id, false) {
            Ok(Some(Visit::Elapsed {
                arrival_ms: Some(at),
            })) => at,
            _ => self.now_ms,
        }
    }

    async fn wait(&self, request: WaitRequest<'_>) -> Result<WaitAnswer, RuntimeError> {
        Ok(match self.next(request.node_id, true)? {
            Some(Visit::Elapsed { .. }) => WaitAnswer::Elapsed,
            Some(Visit::Signal(payload)) => {
                let n = self.delivered.fetch_add(1, Ordering::SeqCst);
                let seq = self.taken.get(n).copied().unwrap_or_else(|| {
                    // Not in the record: the first number the run has not taken.
                    (0..).find(|s| !request.taken.contains(s)).unwrap_or(0)
                });
                WaitAnswer::Signal { seq, payload }
            }
            // The recorded run is still waiting here; a wait inside a child or a branch,
            // which the main history does not hold, had ended (the run went on past it).
            None if request.may_suspend && !request.nested => WaitAnswer::Suspend,
            None => WaitAnswer::Elapsed,
        })
    }
}
