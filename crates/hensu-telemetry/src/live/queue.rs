//! The process's trace thread and its queue. A step pushes its record under a short lock and
//! goes on; the thread takes the whole queue at once (every 2 ms while records come, parked
//! when none do: the first record after a quiet spell wakes it) and builds the spans. A full
//! queue drops records (their spans are lost) rather than making a step wait.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::Thread;
use std::time::Duration;

use super::{Rec, RunTrace};

/// Records waiting at most: ~100 bytes each, a few per step.
const MAX_QUEUED: usize = 1 << 16;
/// How long the thread lets records gather while they come.
const GATHER: Duration = Duration::from_millis(2);
/// The longest [`flush`] waits for the thread.
const FLUSH_WAIT: Duration = Duration::from_secs(10);

pub(crate) struct Msg {
    run: Arc<RunTrace>,
    at_ns: u64,
    rec: Rec,
}

#[derive(Default)]
struct Pending {
    items: Vec<Msg>,
    /// Records ever queued (dropped ones not counted).
    pushed: u64,
}

struct Queue {
    pending: Mutex<Pending>,
    /// The thread is parked until a record comes.
    sleeping: AtomicBool,
    /// Records the thread has handled, for [`flush`].
    done: Mutex<u64>,
    done_cv: Condvar,
    dropped: AtomicU64,
    thread: Thread,
}

static QUEUE: OnceLock<Arc<Queue>> = OnceLock::new();

fn queue() -> &'static Arc<Queue> {
    QUEUE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Arc<Queue>>();
        let handle = std::thread::Builder::new()
            .name("hensu-trace".into())
            .spawn(move || {
                if let Ok(q) = rx.recv() {
                    run(&q);
                }
            });
        let thread = match &handle {
            Ok(h) => h.thread().clone(),
            // No thread: records gather until the queue is full, then are dropped.
            Err(_) => std::thread::current(),
        };
        let q = Arc::new(Queue {
            pending: Mutex::new(Pending::default()),
            sleeping: AtomicBool::new(false),
            done: Mutex::new(0),
            done_cv: Condvar::new(),
            dropped: AtomicU64::new(0),
            thread,
        });
        if handle.is_ok() {
            let _ = tx.send(q.clone());
        }
        q
    })
}

/// Queues one record of `run` (taken at `at_ns`, unix nanoseconds).
pub(crate) fn push(run: &Arc<RunTrace>, at_ns: u64, rec: Rec) {
    let q = queue();
    {
        let Ok(mut p) = q.pending.lock() else {
            return;
        };
        if p.items.len() >= MAX_QUEUED {
            q.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        p.items.push(Msg {
            run: run.clone(),
            at_ns,
            rec,
        });
        p.pushed += 1;
    }
    if q.sleeping.load(Ordering::Relaxed) && q.sleeping.swap(false, Ordering::AcqRel) {
        q.thread.unpark();
    }
}

/// Records dropped because the queue was full, since the process started.
pub fn dropped() -> u64 {
    QUEUE.get().map_or(0, |q| q.dropped.load(Ordering::Relaxed))
}

/// Waits until every record queued so far has been turned into spans and handed to its sink
/// (at most 10 s).
pub fn flush() {
    let Some(q) = QUEUE.get() else {
        return;
    };
    let Ok(target) = q.pending.lock().map(|p| p.pushed) else {
        return;
    };
    q.thread.unpark();
    let Ok(done) = q.done.lock() else {
        return;
    };
    let _ = q
        .done_cv
        .wait_timeout_while(done, FLUSH_WAIT, |d| *d < target);
}

fn run(q: &Queue) {
    let mut batch: Vec<Msg> = Vec::new();
    loop {
        if let Ok(mut p) = q.pending.lock() {
            std::mem::swap(&mut p.items, &mut batch);
        }
        if batch.is_empty() {
            q.sleeping.store(true, Ordering::Release);
            let empty = q.pending.lock().is_ok_and(|p| p.items.is_empty());
            if empty {
                std::thread::park();
            }
            q.sleeping.store(false, Ordering::Release);
            continue;
        }
        let n = batch.len() as u64;
        for msg in batch.drain(..) {
            // A bug in building one span must not stop the thread (every later trace would
            // be lost and `flush` would wait out its bound).
            let _ = catch_unwind(AssertUnwindSafe(|| {
                super::spans::handle(&msg.run, msg.at_ns, msg.rec);
            }));
        }
        if let Ok(mut d) = q.done.lock() {
            *d += n;
        }
        q.done_cv.notify_all();
        std::thread::park_timeout(GATHER);
    }
}
