//! Pipelined group commit of a durable run (`[store] commit = "pipelined"`,
//! docs/cli.md, *Durable runs on many machines*; ARCHITECTURE.md, *hensu-host*): the run queues each write and goes
//! on; one writer task per run commits the queue **in order**, everything that queued while
//! the previous commit was in flight as one transaction ([`StateStore::append_steps`]), so the
//! stored log is always a prefix of the run. A write whose effect others may see next (a tool
//! call's journal entry, the final status, a full checkpoint before a lease hand-over) waits
//! for its own commit — and with it for everything queued before it: the durability barrier.
//!
//! One writer per run, not per store connection: the lease, the expected step and the order
//! are the run's, so a failure (a lost lease) stops exactly the run it belongs to, and two runs
//! never wait on each other's commits. The first failure ends the writer's work: every later
//! write, waited or not, fails with it, and nothing queued after it is written.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hensu_store::{Checkpointed, Lease, RecordUpdate, StateStore, StepWrite, StoreError};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// Writes a run may queue before queuing waits for the writer.
const QUEUE: usize = 1024;
/// Rows committed in one transaction at most.
const MAX_GROUP: usize = 256;

/// One queued write.
pub(super) enum Queued {
    Row(StepWrite),
    /// A full snapshot ([`StateStore::checkpoint`]).
    Full(RecordUpdate, Value),
    /// Nothing to write: its waiter is told once everything before it is committed.
    Flush,
}

struct Item {
    write: Queued,
    /// Told once the write is committed (or failed).
    done: Option<oneshot::Sender<Result<Checkpointed, StoreError>>>,
}

/// What the writer learnt from its commits, read by the run.
#[derive(Debug, Default)]
pub(super) struct Booked {
    /// The step the store is at after the last commit.
    pub step: AtomicU64,
    /// A commit reported a cancellation request.
    pub cancel_requested: AtomicBool,
    /// A commit reported a pause request not yet acted on.
    pub pause_requested: AtomicBool,
    /// The last commit asked for a full snapshot with the next step.
    pub snapshot_wanted: AtomicBool,
    /// How long the last commit took.
    pub last_write: Mutex<Option<Duration>>,
    /// The first failure (taken by the first write that reports it).
    failure: Mutex<Option<Failure>>,
    failed: AtomicBool,
}

#[derive(Debug)]
struct Failure {
    error: Option<StoreError>,
    message: String,
    lease_lost: Option<(String, String)>,
}

impl Booked {
    /// The flags of the commits so far, as one checkpoint result (`at`: when, if known).
    fn so_far(&self, at: u64) -> Checkpointed {
        Checkpointed {
            step: self.step.load(Ordering::SeqCst),
            at,
            lease_expires_at: 0,
            cancel_requested: self.cancel_requested.load(Ordering::SeqCst),
            pause_requested: self.pause_requested.load(Ordering::SeqCst),
            snapshot_written: false,
            snapshot_wanted: self.snapshot_wanted.load(Ordering::SeqCst),
        }
    }

    fn failure_seen(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    fn book(&self, cp: &Checkpointed, took: Duration) {
        self.step.store(cp.step, Ordering::SeqCst);
        if cp.cancel_requested {
            self.cancel_requested.store(true, Ordering::SeqCst);
        }
        if cp.pause_requested {
            self.pause_requested.store(true, Ordering::SeqCst);
        }
        self.snapshot_wanted
            .store(cp.snapshot_wanted, Ordering::SeqCst);
        if let Ok(mut d) = self.last_write.lock() {
            *d = Some(took);
        }
    }

    fn fail(&self, e: StoreError) {
        let lease_lost = match &e {
            StoreError::LeaseLost { run_id, owner } => Some((run_id.clone(), owner.clone())),
            _ => None,
        };
        if let Ok(mut f) = self.failure.lock()
            && f.is_none()
        {
            *f = Some(Failure {
                message: e.to_string(),
                error: Some(e),
                lease_lost,
            });
        }
        self.failed.store(true, Ordering::SeqCst);
    }

    /// The writer's failure, if any: the original error for the first caller, its copy after.
    pub fn failure(&self) -> Option<StoreError> {
        if !self.failed.load(Ordering::SeqCst) {
            return None;
        }
        let mut slot = self.failure.lock().ok()?;
        let f = slot.as_mut()?;
        Some(f.error.take().unwrap_or_else(|| copy(f)))
    }
}

fn copy(f: &Failure) -> StoreError {
    match &f.lease_lost {
        Some((run_id, owner)) => StoreError::LeaseLost {
            run_id: run_id.clone(),
            owner: owner.clone(),
        },
        None => StoreError::Invalid(format!("an earlier step was not committed: {}", f.message)),
    }
}

/// The queue of one run and its writer task (started with the first write, on the runtime
/// the run runs on).
pub(super) struct Pipeline {
    store: Arc<dyn StateStore>,
    lease: Lease,
    pub booked: Arc<Booked>,
    tx: Mutex<Option<mpsc::Sender<Item>>>,
    /// Called after each commit that wrote something ([`Pipeline::on_commit`]).
    on_commit: Arc<Mutex<Option<OnCommit>>>,
}

/// What a pipelined run's owner wants told after each of its commits (the server wakes the
/// run's event streams then: a step is readable only once committed).
pub type OnCommit = Arc<dyn Fn() + Send + Sync>;

impl Pipeline {
    pub fn new(store: Arc<dyn StateStore>, lease: Lease, step: u64) -> Pipeline {
        let booked = Booked::default();
        booked.step.store(step, Ordering::SeqCst);
        Pipeline {
            store,
            lease,
            booked: Arc::new(booked),
            tx: Mutex::new(None),
            on_commit: Arc::default(),
        }
    }

    /// Calls `f` after each commit from now on.
    pub fn on_commit(&self, f: OnCommit) {
        if let Ok(mut slot) = self.on_commit.lock() {
            *slot = Some(f);
        }
    }

    /// The sender, starting the writer on first use.
    fn sender(&self) -> Result<mpsc::Sender<Item>, StoreError> {
        let mut slot = self
            .tx
            .lock()
            .map_err(|_| StoreError::Invalid("the durable run's queue is poisoned".into()))?;
        if let Some(tx) = slot.as_ref() {
            return Ok(tx.clone());
        }
        let rt = tokio::runtime::Handle::try_current().map_err(|e| {
            StoreError::Invalid(format!(
                "a pipelined durable run needs a tokio runtime: {e}"
            ))
        })?;
        let (tx, rx) = mpsc::channel(QUEUE);
        rt.spawn(writer(
            self.store.clone(),
            self.lease.clone(),
            (self.booked.clone(), self.on_commit.clone()),
            rx,
        ));
        *slot = Some(tx.clone());
        Ok(tx)
    }

    /// Queues `write` (call it in the run's write order); with `wait`, the answer resolves
    /// once it (and everything before it) is committed. Without, it is what the commits so
    /// far reported (the run goes on).
    pub async fn enqueue(&self, write: Queued, wait: bool) -> Result<Pending, StoreError> {
        if let Some(e) = self.booked.failure() {
            return Err(e);
        }
        let (done, answer) = match wait {
            true => {
                let (t, r) = oneshot::channel();
                (Some(t), Some(r))
            }
            false => (None, None),
        };
        self.sender()?
            .send(Item { write, done })
            .await
            .map_err(|_| stopped())?;
        Ok(match answer {
            Some(r) => Pending::Waiting(r),
            None => Pending::Now(self.booked.so_far(0)),
        })
    }

    /// Waits until everything queued so far is committed.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let idle = self.tx.lock().map(|s| s.is_none()).unwrap_or(false);
        if idle {
            return self.booked.failure().map_or(Ok(()), Err);
        }
        self.enqueue(Queued::Flush, true)
            .await?
            .wait()
            .await
            .map(|_| ())
    }
}

fn stopped() -> StoreError {
    StoreError::Invalid("the durable run's writer stopped before its commit".into())
}

/// A queued write's answer.
pub(super) enum Pending {
    Now(Checkpointed),
    Waiting(oneshot::Receiver<Result<Checkpointed, StoreError>>),
}

impl Pending {
    pub async fn wait(self) -> Result<Checkpointed, StoreError> {
        match self {
            Pending::Now(cp) => Ok(cp),
            Pending::Waiting(r) => r.await.map_err(|_| stopped())?,
        }
    }
}

/// Commits the queue in order until the run drops its sender; groups what queued meanwhile.
async fn writer(
    store: Arc<dyn StateStore>,
    lease: Lease,
    (booked, on_commit): (Arc<Booked>, Arc<Mutex<Option<OnCommit>>>),
    mut rx: mpsc::Receiver<Item>,
) {
    let mut items: Vec<Item> = Vec::new();
    while let Some(first) = rx.recv().await {
        items.push(first);
        while items.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(i) => items.push(i),
                Err(_) => break,
            }
        }
        if commit(store.as_ref(), &lease, &booked, &mut items).await {
            let told = on_commit.lock().ok().and_then(|f| f.clone());
            if let Some(f) = told {
                f();
            }
        }
    }
}

/// Commits `items` (drained): runs of rows as one group each, a full snapshot alone; every
/// waiter told the result of the commit its write was in (after a failure: the failure).
/// Returns whether a commit wrote something.
async fn commit(
    store: &dyn StateStore,
    lease: &Lease,
    booked: &Booked,
    items: &mut Vec<Item>,
) -> bool {
    let mut wrote = false;
    let mut rest = std::mem::take(items).into_iter().peekable();
    while let Some(item) = rest.next() {
        let mut waiters = vec![item.done];
        let started = Instant::now();
        let step = booked.step.load(Ordering::SeqCst);
        let outcome = match item.write {
            _ if booked.failure_seen() => None,
            Queued::Flush => None,
            Queued::Full(update, snap) => Some(store.checkpoint(lease, step, &update, &snap).await),
            Queued::Row(first) => {
                // A row carrying the full state is a group of its own: the others keep the
                // store's fast path (PostgreSQL's one statement takes no snapshot).
                let alone = carries_state(&first);
                let mut rows = vec![first];
                while !alone
                    && let Some(next) = rest.next_if(|i| match &i.write {
                        Queued::Row(r) => !carries_state(r),
                        Queued::Flush => true,
                        Queued::Full(..) => false,
                    })
                {
                    waiters.push(next.done);
                    if let Queued::Row(r) = next.write {
                        rows.push(r);
                    }
                }
                Some(store.append_steps(lease, step, &rows).await)
            }
        };
        match outcome {
            Some(Ok(cp)) => {
                booked.book(&cp, started.elapsed());
                wrote = true;
            }
            Some(Err(e)) => booked.fail(e),
            None => {}
        }
        for w in waiters.into_iter().flatten() {
            let answer = match booked.failure() {
                Some(e) => Err(e),
                None => Ok(booked.so_far(hensu_store::now_ms())),
            };
            let _ = w.send(answer);
        }
    }
    wrote
}

fn carries_state(row: &StepWrite) -> bool {
    matches!(row.entry.snapshot, hensu_store::StepSnapshot::State(_))
}
