//! Workers: a loop that claims runs from a shared [`StateStore`] and executes them, so any
//! machine continues any run (`hensuc worker`, and servers embedding [`run_worker`]).
//!
//! * On PostgreSQL the worker `LISTEN`s for queued runs and claims at once when notified; the
//!   poll (then four times `poll`) is the fallback for runs that become claimable with time.
//! * Every `poll` interval, while it has free slots, the worker claims up to that many
//!   claimable runs ([`StateStore::claim`]: queued, or orphaned — their lease expired because
//!   their owner stopped heartbeating). Paused runs wait for a human and are never claimed.
//! * Every `heartbeat` interval it renews all its leases in one statement
//!   ([`StateStore::heartbeat_owner`]). A run missing from the answer was taken over by
//!   another worker (this one stalled past the TTL): its token is cancelled and, having lost
//!   its lease, it writes nothing more. A cancellation request cancels the run's token.
//! * A taken-over run continues from its last recorded step: only the node that was in flight
//!   when its owner died runs again (an agent call may therefore repeat: at-least-once for the
//!   in-flight node, exactly-once for every recorded step). [`WorkerEvent::TakenOver`] makes
//!   it visible.
//! * `shutdown` (checked every `poll`) stops claiming; the runs in progress finish first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hensu_runtime::CancelToken;
use hensu_store::{ClaimScope, Claimed, OwnerId, StateStore, StoredRun};

use crate::durable::DurableRun;

/// Worker timing and size. Defaults: 4 runs at a time, heartbeat every 30 s against a 90 s
/// lease (a run is taken over 90 s after its worker died), poll every 500 ms.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    pub concurrency: usize,
    /// How often the worker renews its leases; keep it well under the store's lease TTL.
    pub heartbeat: Duration,
    /// How often an idle slot looks for queued or orphaned runs.
    pub poll: Duration,
    /// Return once nothing runs and nothing is claimable (batch mode, tests).
    pub exit_when_idle: bool,
    /// Whose runs it takes: a `hensuc worker` takes local runs only (a server's run needs the
    /// server's rules), a server's takeover worker its tenants' runs only.
    pub scope: ClaimScope,
}

/// The lease TTL workers use by default (the store's [`hensu_store::StoreOptions::lease_ttl`]).
pub const WORKER_LEASE_TTL: Duration = Duration::from_secs(90);

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            concurrency: 4,
            heartbeat: Duration::from_secs(30),
            poll: Duration::from_millis(500),
            exit_when_idle: false,
            scope: ClaimScope::Local,
        }
    }
}

/// A run handed to an executor: its lease held (as a [`DurableRun`] whose leases the worker
/// renews), its stored record, workflow and state.
pub struct ClaimedRun {
    pub durable: DurableRun,
    pub stored: StoredRun,
    /// It had another owner whose lease expired.
    pub taken_over: bool,
    /// Cancelled when the run is cancelled from outside or its lease is lost.
    pub cancel: CancelToken,
}

/// Executes one claimed run to its end (or pause) and records it through `run.durable`
/// (its boundary hook and [`DurableRun::finish`]).
#[async_trait]
pub trait RunExecutor: Send + Sync {
    async fn execute(&self, run: ClaimedRun);
}

/// What a worker reports as it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerEvent {
    Claimed {
        run_id: String,
    },
    /// The run's previous owner stopped heartbeating; it continues at `node` (the node in
    /// flight then runs again).
    TakenOver {
        run_id: String,
        node: Option<String>,
    },
    Finished {
        run_id: String,
    },
    /// The run's lease was renewed by nobody in time and another worker has it now.
    LeaseLost {
        run_id: String,
    },
    /// A store call failed (the worker keeps going).
    StoreError {
        message: String,
    },
}

/// Totals of one [`run_worker`] call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    pub claimed: u64,
    pub taken_over: u64,
    pub finished: u64,
}

type Running = Arc<Mutex<HashMap<String, CancelToken>>>;

/// Claims and executes runs until `shutdown` is cancelled (then waits for the runs in
/// progress). Store errors are reported through `on_event` and retried at the next tick.
pub async fn run_worker(
    store: Arc<dyn StateStore>,
    owner: OwnerId,
    executor: Arc<dyn RunExecutor>,
    opts: WorkerOptions,
    shutdown: CancelToken,
    on_event: Arc<dyn Fn(WorkerEvent) + Send + Sync>,
) -> WorkerStats {
    let running: Running = Arc::new(Mutex::new(HashMap::new()));
    let mut tasks = tokio::task::JoinSet::new();
    let mut stats = WorkerStats::default();
    let mut heartbeat = tokio::time::interval(opts.heartbeat);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Wake-ups when a run is queued (PostgreSQL's LISTEN): then the poll is only the fallback
    // for runs that become claimable with time (timers, expired leases), four times as long.
    let mut wakeups = store.work_wakeups().await.ok().flatten();
    let every = if wakeups.is_some() {
        opts.poll.saturating_mul(4)
    } else {
        opts.poll
    };
    let mut poll = tokio::time::interval(every);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let concurrency = opts.concurrency.max(1);
    loop {
        tokio::select! {
            biased;
            woke = next_wakeup(&mut wakeups) => {
                if woke.is_none() {
                    // The LISTEN connection is gone: poll at the configured interval.
                    wakeups = None;
                    poll = tokio::time::interval(opts.poll);
                    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                }
                poll.reset_immediately();
            }
            Some(done) = tasks.join_next() => {
                if let Ok(run_id) = done {
                    if let Ok(mut r) = running.lock() {
                        r.remove(&run_id);
                    }
                    stats.finished += 1;
                    on_event(WorkerEvent::Finished { run_id });
                }
                // A slot is free: look for work at once.
                poll.reset_immediately();
            }
            _ = heartbeat.tick() => {
                renew(&store, &owner, &running, &on_event).await;
            }
            _ = poll.tick() => {
                if shutdown.is_cancelled() {
                    break;
                }
                let free = concurrency.saturating_sub(tasks.len());
                if free == 0 {
                    continue;
                }
                let claimed = match store.claim(&owner, opts.scope, free).await {
                    Ok(c) => c,
                    Err(e) => {
                        on_event(WorkerEvent::StoreError { message: e.to_string() });
                        continue;
                    }
                };
                if claimed.is_empty() && tasks.is_empty() && opts.exit_when_idle {
                    break;
                }
                for c in claimed {
                    match start(&store, c, &running, &on_event).await {
                        Some((run, taken_over)) => {
                            stats.claimed += 1;
                            stats.taken_over += u64::from(taken_over);
                            let exec = executor.clone();
                            tasks.spawn(async move {
                                let id = run.durable.run_id().to_string();
                                exec.execute(run).await;
                                id
                            });
                        }
                        None => continue,
                    }
                }
            }
        }
    }
    while let Some(done) = tasks.join_next().await {
        if let Ok(run_id) = done {
            stats.finished += 1;
            on_event(WorkerEvent::Finished { run_id });
        }
    }
    stats
}

/// The next wake-up of `wakeups` (`None`: the connection is gone); pending forever without
/// them.
async fn next_wakeup(wakeups: &mut Option<hensu_store::EventWakeups>) -> Option<()> {
    match wakeups {
        Some(w) => w.next().await,
        None => std::future::pending().await,
    }
}

/// Loads a claimed run and wraps its lease; `None` (lease released) when it cannot start.
async fn start(
    store: &Arc<dyn StateStore>,
    c: Claimed,
    running: &Running,
    on_event: &Arc<dyn Fn(WorkerEvent) + Send + Sync>,
) -> Option<(ClaimedRun, bool)> {
    let run_id = c.lease.run_id.clone();
    let stored = match store.load(&run_id).await {
        Ok(stored) => stored,
        Err(e) => {
            on_event(WorkerEvent::StoreError {
                message: format!("run {run_id}: {e}"),
            });
            let _ = store.release(&c.lease).await;
            return None;
        }
    };
    on_event(WorkerEvent::Claimed {
        run_id: run_id.clone(),
    });
    if c.taken_over {
        on_event(WorkerEvent::TakenOver {
            run_id: run_id.clone(),
            node: stored.record.current_node.clone(),
        });
    }
    let cancel = CancelToken::new();
    if let Ok(mut r) = running.lock() {
        r.insert(run_id, cancel.clone());
    }
    let durable =
        DurableRun::claimed(store.clone(), c.lease, stored.record.step).with_cancel(cancel.clone());
    Some((
        ClaimedRun {
            durable,
            stored,
            taken_over: c.taken_over,
            cancel,
        },
        c.taken_over,
    ))
}

/// One bulk heartbeat: cancels runs whose lease is gone or whose cancellation was requested.
async fn renew(
    store: &Arc<dyn StateStore>,
    owner: &OwnerId,
    running: &Running,
    on_event: &Arc<dyn Fn(WorkerEvent) + Send + Sync>,
) {
    let renewed = match store.heartbeat_owner(owner).await {
        Ok(r) => r,
        Err(e) => {
            on_event(WorkerEvent::StoreError {
                message: e.to_string(),
            });
            return;
        }
    };
    let renewed: HashMap<String, bool> = renewed
        .into_iter()
        .map(|(id, r)| (id, r.cancel_requested))
        .collect();
    let Ok(mut r) = running.lock() else { return };
    r.retain(|run_id, cancel| match renewed.get(run_id) {
        Some(true) => {
            cancel.cancel();
            true
        }
        Some(false) => true,
        None => {
            // Finished between the claim and now, or taken over: either way not ours.
            if !cancel.is_cancelled() {
                on_event(WorkerEvent::LeaseLost {
                    run_id: run_id.clone(),
                });
                cancel.cancel();
            }
            false
        }
    });
}
