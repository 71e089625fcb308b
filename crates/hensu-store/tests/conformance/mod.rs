//! The store's contract, one generic suite instantiated per backend (SQLite file, SQLite
//! in memory, PostgreSQL) by [`conformance_suite!`]: every test takes a [`Factory`] making
//! handles on one fresh store.
#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hensu_store::{
    CancelRequest, CompactionStage, FailAction, Failpoint, Heartbeat, Lease, LogKind, OwnerId,
    RecordUpdate, RunRecord, RunStatus, SnapshotPolicy, StateDelta, StepEntry, StepSnapshot,
    StoreError, StoreOptions, local_host, rfc3339,
};
use serde_json::{Value, json};

mod blocking;
mod claim;
mod control;
mod fork;
mod group;
mod log;
mod waits;
pub use blocking::*;
pub use claim::*;
pub use control::*;
pub use fork::*;
pub use group::*;
pub use log::*;
pub use waits::*;

/// Instantiates every conformance test for one backend: `conformance_suite!(make_factory)`,
/// or `conformance_suite!(#[ignore = "reason"] => make_factory)`.
#[macro_export]
macro_rules! conformance_suite {
    (#[ignore = $reason:literal] => $make:expr) => {
        $crate::conformance_suite!(@each [#[ignore = $reason]] $make;
            round_trip, list_is_newest_first_then_by_id, checkpoints_history_and_latest_snapshot,
            stale_writer_fails_instead_of_overwriting, one_writer_per_run,
            lease_expires_and_heartbeat_keeps_it, dead_owner_on_this_host_is_broken_at_once,
            concurrent_acquirers_exactly_one_wins, cancel_paused_directly_running_by_flag,
            crashed_run_can_be_marked_failed_after_expiry, snapshot_version_mismatch,
            heartbeat_thread_keeps_lease_and_reports_cancel,
            append_log_replays_to_the_same_state, snapshot_policy_bounds_the_replay,
            compaction_failure_loses_nothing, checkpoint_and_append_mix,
            caller_sends_the_snapshot_when_asked, appends_see_a_cancel_requested_elsewhere,
            history_and_log_read_from_the_log, appends_are_checked_like_checkpoints,
            undecodable_delta_is_corrupt, journal_rows_are_steps_that_change_no_state,
            claim_takes_queued_runs_once_oldest_first_never_paused_or_finished,
            expired_leases_are_taken_over_and_the_old_owner_loses_them,
            cancel_requests_reach_the_bulk_heartbeat, concurrent_claimers_never_share_a_run,
            claims_are_logged_and_queued_runs_start_running, claims_take_only_their_scope,
            a_batch_of_tenant_runs_is_written_whole_or_not_at_all,
            fork_reads_the_parents_prefix_then_its_own_steps,
            forks_of_forks_and_fork_points_in_a_prefix, compaction_keeps_forks_readable,
            fork_refusals_write_nothing, fork_failure_writes_nothing,
            pause_requests_reach_the_owner_until_the_run_pauses, a_pause_request_outlives_its_owner,
            a_waiting_run_is_claimed_once_its_wake_time_passed,
            signals_are_stored_in_order_and_wake_a_run_waiting_for_them,
            a_signal_sent_while_the_run_decides_to_wait_wakes_it,
            a_run_waiting_for_several_signals_wakes_on_any,
            queue_depth_counts_what_a_claim_could_take,
            a_group_of_steps_commits_whole_or_not_at_all,
        );
    };
    ($make:expr) => {
        $crate::conformance_suite!(@each [] $make;
            round_trip, list_is_newest_first_then_by_id, checkpoints_history_and_latest_snapshot,
            stale_writer_fails_instead_of_overwriting, one_writer_per_run,
            lease_expires_and_heartbeat_keeps_it, dead_owner_on_this_host_is_broken_at_once,
            concurrent_acquirers_exactly_one_wins, cancel_paused_directly_running_by_flag,
            crashed_run_can_be_marked_failed_after_expiry, snapshot_version_mismatch,
            heartbeat_thread_keeps_lease_and_reports_cancel,
            append_log_replays_to_the_same_state, snapshot_policy_bounds_the_replay,
            compaction_failure_loses_nothing, checkpoint_and_append_mix,
            caller_sends_the_snapshot_when_asked, appends_see_a_cancel_requested_elsewhere,
            history_and_log_read_from_the_log, appends_are_checked_like_checkpoints,
            undecodable_delta_is_corrupt, journal_rows_are_steps_that_change_no_state,
            claim_takes_queued_runs_once_oldest_first_never_paused_or_finished,
            expired_leases_are_taken_over_and_the_old_owner_loses_them,
            cancel_requests_reach_the_bulk_heartbeat, concurrent_claimers_never_share_a_run,
            claims_are_logged_and_queued_runs_start_running, claims_take_only_their_scope,
            a_batch_of_tenant_runs_is_written_whole_or_not_at_all,
            fork_reads_the_parents_prefix_then_its_own_steps,
            forks_of_forks_and_fork_points_in_a_prefix, compaction_keeps_forks_readable,
            fork_refusals_write_nothing, fork_failure_writes_nothing,
            pause_requests_reach_the_owner_until_the_run_pauses, a_pause_request_outlives_its_owner,
            a_waiting_run_is_claimed_once_its_wake_time_passed,
            signals_are_stored_in_order_and_wake_a_run_waiting_for_them,
            a_signal_sent_while_the_run_decides_to_wait_wakes_it,
            a_run_waiting_for_several_signals_wakes_on_any,
            queue_depth_counts_what_a_claim_could_take,
            a_group_of_steps_commits_whole_or_not_at_all,
        );
    };
    (@each $attrs:tt $make:expr; $name:ident, $($rest:ident,)*) => {
        $crate::conformance_suite!(@one $attrs $make; $name);
        $crate::conformance_suite!(@each $attrs $make; $($rest,)*);
    };
    (@each $attrs:tt $make:expr;) => {};
    (@one [$(#[$attr:meta])*] $make:expr; $name:ident) => {
        #[test]
        $(#[$attr])*
        fn $name() {
            let factory = $make;
            conformance::$name(&factory);
        }
    };
}

// ---------------------------------------------------------------------------------------------
// Fixtures

/// Makes handles on one store (for SQLite: separate connections to one file).
pub trait Factory {
    fn handle(&self, opts: StoreOptions) -> Blocking;
    fn name(&self) -> &'static str;
}

pub fn opts() -> StoreOptions {
    StoreOptions::default()
}

pub fn short_ttl(ms: u64) -> StoreOptions {
    StoreOptions {
        lease_ttl: Duration::from_millis(ms),
        ..StoreOptions::default()
    }
}

pub fn record(id: &str, started_at: u64) -> RunRecord {
    let mut r = RunRecord::new(id, "wf", "v1", Some("start".into()));
    r.started_at = started_at;
    r.updated_at = started_at;
    r
}

pub fn snapshot(n: u64) -> Value {
    json!({
        "execution_id": "r1",
        "current_node": format!("node{n}"),
        "context": {"topic": "rust", "draft": "x".repeat(64), "n": n},
        "history": [{"step": n, "node_id": format!("node{n}"), "status": "SUCCESS"}],
        "phase": {"type": "INITIAL"},
    })
}

pub fn workflow() -> Value {
    json!({"id": "wf", "version": "v1", "nodes": {"start": {"type": "standard"}}})
}

/// A store with one run `r1`.
pub fn with_run(f: &dyn Factory, o: StoreOptions) -> Blocking {
    let s = f.handle(o);
    s.create_run(&record("r1", 1_000), &workflow(), &snapshot(0))
        .expect("create r1");
    s
}

pub fn owner(nonce: &str) -> OwnerId {
    OwnerId {
        nonce: nonce.to_string(),
        ..OwnerId::current()
    }
}

/// A pid that existed and is gone.
pub fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait true");
    pid
}

// ---------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------
// Contract tests (both stores)

pub fn round_trip(f: &dyn Factory) {
    {
        let s = with_run(f, opts());
        let run = s.load("r1").expect("load");
        assert_eq!(run.record, record("r1", 1_000), "{}", f.name());
        assert_eq!(run.workflow, workflow());
        assert_eq!(run.snapshot, snapshot(0));
        assert_eq!(run.snapshot_version, 1);
        assert_eq!(s.record("r1").expect("record"), run.record);
        // A second handle sees the same data.
        let s2 = f.handle(opts());
        assert_eq!(s2.load("r1").expect("load 2").snapshot, snapshot(0));
        assert!(matches!(
            s.create_run(&record("r1", 5), &workflow(), &snapshot(0)),
            Err(StoreError::AlreadyExists { .. })
        ));
        assert!(matches!(s.load("nope"), Err(StoreError::NotFound { .. })));
        assert!(matches!(
            s.history("nope"),
            Err(StoreError::NotFound { .. })
        ));
        assert!(matches!(
            s.acquire("nope", &owner("a")),
            Err(StoreError::NotFound { .. })
        ));
    }
}

pub fn list_is_newest_first_then_by_id(f: &dyn Factory) {
    {
        let s = f.handle(opts());
        for (id, at) in [("a", 1_000), ("b", 3_000), ("c", 2_000), ("d", 3_000)] {
            s.create_run(&record(id, at), &workflow(), &json!({}))
                .expect("create");
        }
        let ids: Vec<String> = s
            .list()
            .expect("list")
            .into_iter()
            .map(|r| r.run_id)
            .collect();
        assert_eq!(ids, ["d", "b", "c", "a"], "{}", f.name());
    }
}

pub fn checkpoints_history_and_latest_snapshot(f: &dyn Factory) {
    {
        let s = with_run(f, opts());
        let lease = s.acquire("r1", &owner("a")).expect("acquire");
        let mut step = 0;
        for n in 1..=3 {
            let c = s
                .checkpoint(
                    &lease,
                    step,
                    &RecordUpdate::running(format!("node{n}")),
                    &snapshot(n),
                )
                .expect("checkpoint");
            assert_eq!(c.step, step + 1);
            assert!(!c.cancel_requested);
            step = c.step;
        }
        let c = s
            .checkpoint(
                &lease,
                step,
                &RecordUpdate::paused("review", "corr-1"),
                &snapshot(4),
            )
            .expect("pause");
        step = c.step;
        let paused = s.record("r1").expect("record");
        assert_eq!(paused.status, RunStatus::Paused);
        assert_eq!(paused.correlation_id.as_deref(), Some("corr-1"));
        assert_eq!(paused.current_node.as_deref(), Some("review"));
        assert_eq!(
            s.find_by_correlation("corr-1")
                .expect("find")
                .map(|r| r.run_id),
            Some("r1".to_string())
        );
        assert_eq!(s.find_by_correlation("other").expect("find"), None);
        s.release(&lease).expect("release");

        // Resume from another handle/owner: reload, checkpoint, complete.
        let s2 = f.handle(opts());
        let l2 = s2.acquire("r1", &owner("b")).expect("reacquire");
        let run = s2.load("r1").expect("load");
        assert_eq!(run.snapshot, snapshot(4));
        assert_eq!(run.record.step, step);
        let done = s2
            .set_status(
                "r1",
                Some(&l2),
                step,
                &RecordUpdate::finished(
                    RunStatus::Completed,
                    Some("done".into()),
                    Some("SUCCESS".into()),
                ),
            )
            .expect("complete");
        assert_eq!(done.status, RunStatus::Completed);
        assert_eq!(done.exit_status.as_deref(), Some("SUCCESS"));
        assert_eq!(done.step, step + 1);

        let h = s.history("r1").expect("history");
        let steps: Vec<u64> = h.iter().map(|m| m.step).collect();
        assert_eq!(steps, [0, 1, 2, 3, 4, 5], "{}", f.name());
        let nodes: Vec<Option<&str>> = h.iter().map(|m| m.node.as_deref()).collect();
        assert_eq!(
            nodes,
            [
                Some("start"),
                Some("node1"),
                Some("node2"),
                Some("node3"),
                Some("review"),
                Some("done")
            ]
        );
        assert_eq!(h[4].status, RunStatus::Paused);
        assert_eq!(h[5].status, RunStatus::Completed);
        assert!(h[1].snapshot_bytes.is_some_and(|b| b > 50));
        assert_eq!(h[5].snapshot_bytes, None);
        assert!(h.windows(2).all(|w| w[0].at <= w[1].at));
        // The snapshot is still the last one written.
        assert_eq!(s.load("r1").expect("load").snapshot, snapshot(4));
        // A terminal run is never acquired or written again.
        assert!(matches!(
            s.acquire("r1", &owner("c")),
            Err(StoreError::Finished {
                status: RunStatus::Completed,
                ..
            })
        ));
        assert!(matches!(
            s2.checkpoint(&l2, step + 1, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::Finished { .. })
        ));
    }
}

pub fn stale_writer_fails_instead_of_overwriting(f: &dyn Factory) {
    {
        let s = with_run(f, opts());
        let lease = s.acquire("r1", &owner("a")).expect("acquire");
        s.checkpoint(&lease, 0, &RecordUpdate::running("n1"), &snapshot(1))
            .expect("first");
        let err = s
            .checkpoint(&lease, 0, &RecordUpdate::running("stale"), &snapshot(99))
            .expect_err("stale write must fail");
        match err {
            StoreError::StepConflict {
                expected, actual, ..
            } => assert_eq!((expected, actual), (0, 1), "{}", f.name()),
            other => panic!("{}: unexpected {other}", f.name()),
        }
        let run = s.load("r1").expect("load");
        assert_eq!(run.snapshot, snapshot(1));
        assert_eq!(run.record.current_node.as_deref(), Some("n1"));
        assert_eq!(s.history("r1").expect("history").len(), 2);
        // set_status is checked the same way.
        assert!(matches!(
            s.set_status("r1", Some(&lease), 0, &RecordUpdate::running("x")),
            Err(StoreError::StepConflict { .. })
        ));
    }
}

pub fn one_writer_per_run(f: &dyn Factory) {
    {
        let s = with_run(f, opts());
        let a = owner("a");
        let la = s.acquire("r1", &a).expect("a acquires");
        // Re-acquiring one's own lease renews it, keeping its start.
        let again = s.acquire("r1", &a).expect("a re-acquires");
        assert_eq!(again.acquired_at, la.acquired_at);

        let s2 = f.handle(opts());
        let err = s2
            .acquire("r1", &owner("b"))
            .expect_err("b must not acquire");
        match &err {
            StoreError::RunLocked {
                run_id,
                owner,
                since,
                ..
            } => {
                assert_eq!(run_id, "r1");
                assert_eq!(owner, &a.to_string());
                assert_eq!(*since, la.acquired_at);
            }
            other => panic!("{}: unexpected {other}", f.name()),
        }
        let msg = err.to_string();
        assert!(msg.contains("run `r1` is locked by"), "{msg}");
        assert!(msg.contains(&a.to_string()), "{msg}");
        assert!(msg.contains(&rfc3339(la.acquired_at)), "{msg}");

        // A lease token that is not the holder's cannot write.
        let forged = Lease {
            owner: owner("b"),
            ..la.clone()
        };
        assert!(matches!(
            s2.checkpoint(&forged, 0, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::RunLocked { .. })
        ));
        assert!(matches!(
            s2.set_status("r1", None, 0, &RecordUpdate::running("x")),
            Err(StoreError::RunLocked { .. })
        ));

        // After release, b gets it and a's token is dead.
        s.release(&la).expect("release");
        let lb = s2.acquire("r1", &owner("b")).expect("b acquires");
        assert!(matches!(
            s.checkpoint(&la, 0, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::RunLocked { .. })
        ));
        s2.release(&lb).expect("release b");
        assert!(matches!(
            s.checkpoint(&la, 0, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::LeaseLost { .. })
        ));
        assert!(matches!(
            s.heartbeat(&la),
            Err(StoreError::LeaseLost { .. })
        ));
    }
}

pub fn lease_expires_and_heartbeat_keeps_it(f: &dyn Factory) {
    {
        let s = with_run(f, short_ttl(300));
        let la = s.acquire("r1", &owner("a")).expect("a");
        let other = f.handle(short_ttl(300));
        // Heartbeats keep it alive past the TTL.
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(120));
            let r = s.heartbeat(&la).expect("heartbeat");
            assert!(!r.cancel_requested);
        }
        assert!(matches!(
            other.acquire("r1", &owner("b")),
            Err(StoreError::RunLocked { .. })
        ));
        // A silent owner loses it after the TTL.
        std::thread::sleep(Duration::from_millis(400));
        let lb = other.acquire("r1", &owner("b")).expect("b after expiry");
        assert!(lb.expires_at > lb.acquired_at);
        assert!(matches!(
            s.checkpoint(&la, 0, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::RunLocked { .. })
        ));
        // An expired lease nobody took is still the owner's: a checkpoint renews it.
        std::thread::sleep(Duration::from_millis(400));
        other
            .checkpoint(&lb, 0, &RecordUpdate::running("n1"), &json!({"k": 1}))
            .expect("own expired lease still writes");
        assert!(matches!(
            s.acquire("r1", &owner("a")),
            Err(StoreError::RunLocked { .. })
        ));
    }
}

pub fn dead_owner_on_this_host_is_broken_at_once(f: &dyn Factory) {
    {
        let s = with_run(f, opts()); // 30 s TTL
        let ghost = OwnerId {
            host: local_host().to_string(),
            pid: dead_pid(),
            nonce: "ghost".into(),
        };
        s.acquire("r1", &ghost).expect("ghost acquires");
        if cfg!(target_os = "linux") {
            s.acquire("r1", &owner("a"))
                .expect("a dead pid's lease is broken");
        }
        // The same pid on another host is not ours to judge.
        let s2 = with_other_run(&s, "r2");
        let remote = OwnerId {
            host: "some-other-host".into(),
            ..ghost
        };
        s2.acquire("r2", &remote).expect("remote acquires");
        assert!(matches!(
            s2.acquire("r2", &owner("a")),
            Err(StoreError::RunLocked { .. })
        ));
    }
}

pub fn with_other_run<'a>(s: &'a Blocking, id: &str) -> &'a Blocking {
    s.create_run(&record(id, 2_000), &workflow(), &json!({}))
        .expect("create");
    s
}

pub fn concurrent_acquirers_exactly_one_wins(f: &dyn Factory) {
    {
        let s = f.handle(opts());
        for round in 0..5 {
            let id = format!("race{round}");
            s.create_run(&record(&id, round), &workflow(), &json!({}))
                .expect("create");
            let n = 6;
            let barrier = Arc::new(Barrier::new(n));
            let handles: Vec<Blocking> = (0..n).map(|_| f.handle(opts())).collect();
            let results: Vec<Result<Lease, StoreError>> = std::thread::scope(|scope| {
                let joins: Vec<_> = handles
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let barrier = Arc::clone(&barrier);
                        let id = id.clone();
                        scope.spawn(move || {
                            barrier.wait();
                            h.acquire(&id, &owner(&format!("t{i}")))
                        })
                    })
                    .collect();
                joins
                    .into_iter()
                    .map(|j| j.join().expect("thread"))
                    .collect()
            });
            let winners = results.iter().filter(|r| r.is_ok()).count();
            assert_eq!(winners, 1, "{}: {results:?}", f.name());
            assert!(
                results
                    .iter()
                    .filter_map(|r| r.as_ref().err())
                    .all(|e| matches!(e, StoreError::RunLocked { .. })),
                "{results:?}"
            );
        }
    }
}

pub fn cancel_paused_directly_running_by_flag(f: &dyn Factory) {
    {
        let s = f.handle(opts());
        s.create_run(&record("paused", 1), &workflow(), &json!({}))
            .expect("create");
        let l = s.acquire("paused", &owner("a")).expect("acquire");
        s.checkpoint(&l, 0, &RecordUpdate::paused("review", "c1"), &json!({}))
            .expect("pause");
        s.release(&l).expect("release");
        match s.request_cancel("paused").expect("cancel") {
            CancelRequest::Cancelled(r) => {
                assert_eq!(r.status, RunStatus::Cancelled);
                assert_eq!(r.step, 2);
            }
            other => panic!("{}: {other:?}", f.name()),
        }
        assert_eq!(
            s.request_cancel("paused").expect("again"),
            CancelRequest::AlreadyFinished(RunStatus::Cancelled)
        );

        s.create_run(&record("busy", 2), &workflow(), &json!({}))
            .expect("create");
        let a = owner("a");
        let l = s.acquire("busy", &a).expect("acquire");
        assert_eq!(
            f.handle(opts()).request_cancel("busy").expect("cancel"),
            CancelRequest::Requested {
                owner: a.to_string()
            }
        );
        assert!(s.heartbeat(&l).expect("heartbeat").cancel_requested);
        let c = s
            .checkpoint(&l, 0, &RecordUpdate::running("n"), &json!({}))
            .expect("checkpoint");
        assert!(c.cancel_requested);
        let r = s
            .set_status(
                "busy",
                Some(&l),
                c.step,
                &RecordUpdate::finished(RunStatus::Cancelled, Some("n".into()), None),
            )
            .expect("cancelled");
        assert_eq!(r.status, RunStatus::Cancelled);
        // A terminal status frees the lease.
        assert!(matches!(s.heartbeat(&l), Err(StoreError::LeaseLost { .. })));
    }
}

pub fn crashed_run_can_be_marked_failed_after_expiry(f: &dyn Factory) {
    {
        let s = with_run(f, short_ttl(100));
        let _lost = s.acquire("r1", &owner("crashed")).expect("acquire");
        assert!(matches!(
            s.set_status(
                "r1",
                None,
                0,
                &RecordUpdate::finished(RunStatus::Failed, None, None)
            ),
            Err(StoreError::RunLocked { .. })
        ));
        std::thread::sleep(Duration::from_millis(200));
        let r = s
            .set_status(
                "r1",
                None,
                0,
                &RecordUpdate::finished(RunStatus::Failed, Some("start".into()), None),
            )
            .expect("mark failed");
        assert_eq!(r.status, RunStatus::Failed);
    }
}

pub fn snapshot_version_mismatch(f: &dyn Factory) {
    {
        let _s = with_run(f, opts());
        let v2 = f.handle(StoreOptions {
            snapshot_version: 2,
            ..StoreOptions::default()
        });
        match v2.load("r1") {
            Err(StoreError::SnapshotVersion {
                run_id,
                found,
                expected,
            }) => {
                assert_eq!(
                    (run_id.as_str(), found, expected),
                    ("r1", 1, 2),
                    "{}",
                    f.name()
                )
            }
            other => panic!("{}: unexpected {other:?}", f.name()),
        }
        // Records and history do not depend on the snapshot format.
        assert_eq!(v2.list().expect("list").len(), 1);
    }
}

pub fn heartbeat_thread_keeps_lease_and_reports_cancel(f: &dyn Factory) {
    {
        let s = with_run(f, short_ttl(300));
        let lease = s.acquire("r1", &owner("a")).expect("acquire");
        let _rt = runtime().enter();
        let cancelled = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancelled);
        let hb = Heartbeat::spawn(
            Arc::clone(&s.inner),
            lease.clone(),
            Duration::from_millis(60),
            Box::new(move || flag.store(true, Ordering::SeqCst)),
        )
        .expect("spawn");
        std::thread::sleep(Duration::from_millis(700));
        let other = f.handle(short_ttl(300));
        assert!(matches!(
            other.acquire("r1", &owner("b")),
            Err(StoreError::RunLocked { .. })
        ));
        assert!(matches!(
            other.request_cancel("r1").expect("cancel"),
            CancelRequest::Requested { .. }
        ));
        let deadline = Instant::now() + Duration::from_secs(5);
        while !cancelled.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(cancelled.load(Ordering::SeqCst), "{}", f.name());
        block(hb.stop()).expect("clean stop");
    }
}
