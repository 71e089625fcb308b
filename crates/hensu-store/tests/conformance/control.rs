//! Pause requests: a flag of the run in the store, seen by whoever executes it.

use hensu_store::{PauseRequest, RecordUpdate, RunStatus, StepSnapshot};
use serde_json::json;

use super::{Factory, SyncStore, opts, owner, record, short_ttl, step_entry, with_run, workflow};

/// A run's status decides what a pause request does; a running one is flagged until it leaves
/// `running`, and every write of its owner reports the flag — the in-place step included.
pub fn pause_requests_reach_the_owner_until_the_run_pauses(f: &dyn Factory) {
    let s = with_run(f, opts());
    let l = s.acquire("r1", &owner("a")).expect("acquire");
    let c = s
        .append(&l, 0, &RecordUpdate::running("node1"), &step_entry(1))
        .expect("step 1");
    assert!(!c.pause_requested, "{}", f.name());
    // Another handle (another process, another server) asks.
    assert_eq!(
        f.handle(opts()).request_pause("r1").expect("pause"),
        PauseRequest::Requested
    );
    assert!(s.record("r1").expect("record").pause_requested);
    // The next step sees it, and the one after (the flag stays until the run pauses).
    let c = s
        .append(&l, c.step, &RecordUpdate::running("node2"), &step_entry(2))
        .expect("step 2");
    assert!(
        c.pause_requested,
        "{}: an append reports the request",
        f.name()
    );
    assert!(!c.cancel_requested);
    let c = s
        .checkpoint(&l, c.step, &RecordUpdate::running("node3"), &json!({}))
        .expect("checkpoint");
    assert!(c.pause_requested, "{}: a checkpoint reports it", f.name());
    // The owner saves the run paused: the flag is cleared, the run waits for a resume.
    let paused = RecordUpdate {
        status: RunStatus::Paused,
        current_node: Some("node3".into()),
        correlation_id: None,
        exit_status: None,
        wait: None,
    };
    let c = s
        .checkpoint(&l, c.step, &paused, &json!({}))
        .expect("pause");
    s.release(&l).expect("release");
    let r = s.record("r1").expect("record");
    assert_eq!(r.status, RunStatus::Paused);
    assert!(!r.pause_requested, "{}: taken", f.name());
    assert_eq!(
        s.request_pause("r1").expect("again"),
        PauseRequest::AlreadyPaused
    );
    // Resumed, it runs on without pausing again.
    let l = s.acquire("r1", &owner("b")).expect("acquire again");
    let c = s
        .checkpoint(&l, c.step, &RecordUpdate::running("node3"), &json!({}))
        .expect("resumed");
    assert!(!c.pause_requested);
    let mut entry = step_entry(4);
    entry.snapshot = StepSnapshot::ByStore;
    let c = s
        .append(&l, c.step, &RecordUpdate::running("node4"), &entry)
        .expect("step 4");
    assert!(!c.pause_requested);
    s.set_status(
        "r1",
        Some(&l),
        c.step,
        &RecordUpdate::finished(RunStatus::Completed, Some("end".into()), None),
    )
    .expect("completed");
    assert_eq!(
        s.request_pause("r1").expect("finished"),
        PauseRequest::AlreadyFinished(RunStatus::Completed)
    );

    let mut queued = record("q1", 2_000);
    queued.status = RunStatus::Queued;
    s.create_run(&queued, &workflow(), &json!({}))
        .expect("queued");
    assert_eq!(
        s.request_pause("q1").expect("queued"),
        PauseRequest::NotStarted
    );
    assert!(!s.record("q1").expect("record").pause_requested);
}

/// A request made while the owner is gone reaches the owner that takes the run over.
pub fn a_pause_request_outlives_its_owner(f: &dyn Factory) {
    let s = with_run(f, short_ttl(100));
    let _lost = s.acquire("r1", &owner("crashed")).expect("acquire");
    assert_eq!(
        s.request_pause("r1").expect("pause"),
        PauseRequest::Requested
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let l = s.acquire("r1", &owner("next")).expect("take over");
    let c = s
        .append(&l, 0, &RecordUpdate::running("node1"), &step_entry(1))
        .expect("first step of the new owner");
    assert!(c.pause_requested, "{}", f.name());
}
