//! Durable waits (docs/language.md, *Timers and signals*): a paused run with a wake time is
//! claimed once it has passed, and signals are kept in order and wake a run waiting for them.

use hensu_store::{RecordUpdate, RunStatus, RunWait, StoreError, now_ms};
use serde_json::json;

use super::{Factory, SyncStore, opts, owner, record, snapshot, workflow};

/// The update that leaves a run paused at `node`, waiting as `wait` says.
pub(super) fn waiting(node: &str, wait: RunWait) -> RecordUpdate {
    RecordUpdate {
        status: RunStatus::Paused,
        current_node: Some(node.into()),
        correlation_id: None,
        exit_status: None,
        wait: Some(wait),
    }
}

pub fn a_waiting_run_is_claimed_once_its_wake_time_passed(f: &dyn Factory) {
    let s = f.handle(opts());
    for id in ["later", "due"] {
        s.create_run(&record(id, 1_000), &workflow(), &snapshot(0))
            .expect("create");
    }
    let now = now_ms();
    // `later` waits an hour, `due` waited until a moment ago.
    for (id, wake_at) in [("later", now + 3_600_000), ("due", now - 1)] {
        let l = s.acquire(id, &owner("runner")).expect("acquire");
        let wait = RunWait {
            wake_at: Some(wake_at),
            signal: None,
            more_signals: Vec::new(),
            signals_seen: 0,
        };
        s.checkpoint(&l, 0, &waiting("pause", wait.clone()), &snapshot(1))
            .expect("suspend");
        s.release(&l).expect("release");
        let r = s.record(id).expect("record");
        assert_eq!(r.status, RunStatus::Paused, "{}", f.name());
        assert_eq!(
            r.wait,
            Some(wait),
            "{}: the wait is on the record",
            f.name()
        );
    }
    let claimed = s.claim(&owner("worker"), 10).expect("claim");
    let ids: Vec<&str> = claimed.iter().map(|c| c.lease.run_id.as_str()).collect();
    assert_eq!(
        ids,
        ["due"],
        "{}: only the run whose time has come",
        f.name()
    );
    let due = s.record("due").expect("record");
    assert_eq!(due.status, RunStatus::Running, "{}", f.name());
    assert_eq!(due.wait, None, "{}: a claim clears the wait", f.name());
    assert_eq!(due.current_node.as_deref(), Some("pause"));
    assert!(s.claim(&owner("other"), 10).expect("claim").is_empty());
    // A resume before the time (`hensuc resume`) acquires it like any paused run.
    let l = s.acquire("later", &owner("resumer")).expect("acquire");
    s.append(
        &l,
        s.record("later").expect("record").step,
        &RecordUpdate::running("pause"),
        &super::step_entry(2),
    )
    .expect("step");
    assert_eq!(s.record("later").expect("record").wait, None);
}

pub fn signals_are_stored_in_order_and_wake_a_run_waiting_for_them(f: &dyn Factory) {
    let s = f.handle(opts());
    s.create_run(&record("r", 1_000), &workflow(), &snapshot(0))
        .expect("create");
    // Before the run waits: stored, nobody woken.
    let early = s
        .send_signal("r", "approve", &json!({"by": "ann"}))
        .expect("send");
    assert_eq!(early.seq, 0, "{}", f.name());
    assert!(!early.woke);
    // The run pauses waiting for `approve` with no wake time: only a signal wakes it.
    let l = s.acquire("r", &owner("runner")).expect("acquire");
    let wait = RunWait {
        wake_at: None,
        signal: Some("approve".into()),
        more_signals: Vec::new(),
        signals_seen: 1,
    };
    s.checkpoint(&l, 0, &waiting("gate", wait), &snapshot(1))
        .expect("suspend");
    s.release(&l).expect("release");
    assert!(
        s.claim(&owner("w"), 10).expect("claim").is_empty(),
        "{}",
        f.name()
    );
    // Another name does not wake it; its own does.
    let other = s.send_signal("r", "reject", &json!(null)).expect("send");
    assert_eq!((other.seq, other.woke), (1, false), "{}", f.name());
    assert!(s.claim(&owner("w"), 10).expect("claim").is_empty());
    let own = s.send_signal("r", "approve", &json!(2)).expect("send");
    assert_eq!((own.seq, own.woke), (2, true), "{}", f.name());
    let claimed = s.claim(&owner("w"), 10).expect("claim");
    assert_eq!(claimed.len(), 1, "{}: the signal woke it", f.name());
    let all = s.signals("r").expect("signals");
    let seen: Vec<(u64, &str)> = all.iter().map(|g| (g.seq, g.name.as_str())).collect();
    assert_eq!(
        seen,
        [(0, "approve"), (1, "reject"), (2, "approve")],
        "{}",
        f.name()
    );
    assert_eq!(all[0].payload, json!({"by": "ann"}));
    // A finished run takes no signal; an unknown one is not found.
    s.set_status(
        "r",
        Some(&claimed[0].lease),
        s.record("r").expect("record").step,
        &RecordUpdate::finished(RunStatus::Completed, None, None),
    )
    .expect("finish");
    assert!(matches!(
        s.send_signal("r", "approve", &json!(3)),
        Err(StoreError::Finished { .. })
    ));
    assert!(matches!(
        s.send_signal("nope", "approve", &json!(3)),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(s.signals("r").expect("signals").len(), 3);
}

/// A signal sent while the run decides to wait (after it looked at the signals, before its
/// wait is written) wakes it in the transaction that writes the wait.
pub fn a_signal_sent_while_the_run_decides_to_wait_wakes_it(f: &dyn Factory) {
    let s = f.handle(opts());
    s.create_run(&record("r", 1_000), &workflow(), &snapshot(0))
        .expect("create");
    let l = s.acquire("r", &owner("runner")).expect("acquire");
    // The run looked: no signal (0 seen). Then one comes, while it still runs.
    let sent = s.send_signal("r", "approve", &json!(true)).expect("send");
    assert!(!sent.woke, "{}: the run is not waiting yet", f.name());
    let wait = RunWait {
        wake_at: None,
        signal: Some("approve".into()),
        more_signals: Vec::new(),
        signals_seen: 0,
    };
    s.checkpoint(&l, 0, &waiting("gate", wait), &snapshot(1))
        .expect("suspend");
    s.release(&l).expect("release");
    let r = s.record("r").expect("record");
    assert!(
        r.wait.as_ref().and_then(|w| w.wake_at).is_some(),
        "{}: woken at once",
        f.name()
    );
    assert_eq!(s.claim(&owner("w"), 10).expect("claim").len(), 1);
}

/// Flows of one run waiting for different signals (fork branches, a sub-workflow child): the
/// record keeps every name, and a signal of any of them wakes the run — one sent while it
/// decided to wait too.
pub fn a_run_waiting_for_several_signals_wakes_on_any(f: &dyn Factory) {
    let s = f.handle(opts());
    s.create_run(&record("a", 1_000), &workflow(), &snapshot(0))
        .expect("create");
    let names = || vec!["left".to_string(), "right".to_string(), "[x]".to_string()];
    let l = s.acquire("a", &owner("runner")).expect("acquire");
    let wait = RunWait {
        signals_seen: 0,
        ..RunWait::new(Some(now_ms() + 3_600_000), names())
    };
    s.checkpoint(&l, 0, &waiting("fork", wait.clone()), &snapshot(1))
        .expect("suspend");
    s.release(&l).expect("release");
    let r = s.record("a").expect("record");
    let stored = r.wait.clone().expect("a wait");
    assert_eq!(
        stored.signals().collect::<Vec<_>>(),
        ["left", "right", "[x]"],
        "{}: every name read back",
        f.name()
    );
    assert_eq!(stored.wake_at, wait.wake_at, "{}", f.name());
    assert!(s.claim(&owner("w"), 10).expect("claim").is_empty());
    let other = s.send_signal("a", "middle", &json!(1)).expect("send");
    assert!(!other.woke, "{}: not a waited name", f.name());
    let right = s.send_signal("a", "right", &json!(2)).expect("send");
    assert!(right.woke, "{}: the second name wakes it", f.name());
    assert_eq!(s.claim(&owner("w"), 10).expect("claim").len(), 1);
    // Sent while `b` decided to wait (it had looked at none): woken in the wait's write.
    s.create_run(&record("b", 1_000), &workflow(), &snapshot(0))
        .expect("create");
    let l = s.acquire("b", &owner("runner")).expect("acquire");
    let sent = s.send_signal("b", "[x]", &json!(3)).expect("send");
    assert!(!sent.woke);
    let wait = RunWait::new(Some(now_ms() + 3_600_000), names());
    s.checkpoint(&l, 0, &waiting("fork", wait.clone()), &snapshot(1))
        .expect("suspend");
    s.release(&l).expect("release");
    let woke_at = s.record("b").expect("record").wait.and_then(|w| w.wake_at);
    assert!(
        woke_at < wait.wake_at,
        "{}: woken at once, not at its timer",
        f.name()
    );
    assert_eq!(s.claim(&owner("w"), 10).expect("claim").len(), 1);
}
