//! The run log: append, snapshot policy, replay, compaction failures.

use super::*;

/// The state before any step.
pub fn initial_state() -> Value {
    json!({
        "execution_id": "r1",
        "current_node": "node1",
        "context": {"topic": "rust"},
        "history": [],
        "steps": 0,
    })
}

/// The change step `n` (1-based) makes: a new output in the context, every fifth step drops
/// the output of five steps before, a history row, the next node, the step count, and a key
/// that needs JSON Pointer escaping.
pub fn step_delta(n: u64) -> StateDelta {
    let mut d = StateDelta::new().set(
        &["context", &format!("out_{n}")],
        json!({"n": n, "text": "x".repeat((n % 7 * 10) as usize)}),
    );
    if n.is_multiple_of(5) && n >= 10 {
        d = d.remove(&["context", &format!("out_{}", n - 5)]);
    }
    d.push(
        &["history"],
        json!({"step": n, "node_id": format!("node{n}"), "status": "SUCCESS"}),
    )
    .replace(&["current_node"], json!(format!("node{}", n + 1)))
    .replace(&["steps"], json!(n))
    .set(&["context", "a/b~c"], json!(n))
}

/// The state after `n` steps, built directly (not by applying patches).
pub fn expected_state(n: u64) -> Value {
    let mut context = serde_json::Map::new();
    context.insert("topic".into(), json!("rust"));
    for k in 1..=n {
        let removed = k.is_multiple_of(5) && k >= 5 && k + 5 <= n;
        if !removed {
            context.insert(
                format!("out_{k}"),
                json!({"n": k, "text": "x".repeat((k % 7 * 10) as usize)}),
            );
        }
    }
    if n >= 1 {
        context.insert("a/b~c".into(), json!(n));
    }
    let history: Vec<Value> = (1..=n)
        .map(|k| json!({"step": k, "node_id": format!("node{k}"), "status": "SUCCESS"}))
        .collect();
    json!({
        "execution_id": "r1",
        "current_node": format!("node{}", n + 1),
        "context": context,
        "history": history,
        "steps": n,
    })
}

pub fn step_entry(n: u64) -> StepEntry {
    StepEntry {
        node: Some(format!("node{n}")),
        node_status: Some("SUCCESS".into()),
        output: Some(json!({"n": n})),
        delta: step_delta(n),
        started_at: Some(1_000 + n),
        duration_ms: Some(n % 3),
        snapshot: StepSnapshot::ByStore,
    }
}

pub fn with_policy(policy: SnapshotPolicy) -> StoreOptions {
    StoreOptions {
        snapshot_policy: policy,
        ..StoreOptions::default()
    }
}

/// Creates run `id` at the initial state and takes its lease.
pub fn start_run(s: &Blocking, id: &str) -> Lease {
    s.create_run(&record(id, 1_000), &workflow(), &initial_state())
        .expect("create");
    s.acquire(id, &owner("log")).expect("acquire")
}

/// Appends steps `from..=to` (the run is at step `from - 1`).
pub fn append_steps(s: &Blocking, lease: &Lease, from: u64, to: u64) {
    for n in from..=to {
        let update = RecordUpdate::running(format!("node{}", n + 1));
        s.append(lease, n - 1, &update, &step_entry(n))
            .unwrap_or_else(|e| panic!("append step {n}: {e}"));
    }
}

/// A journal row (the call journal of the node in flight) is written, checked and counted like
/// a step, keeps the record's node, changes no state, and reads back with its kind and output.
pub fn journal_rows_are_steps_that_change_no_state(f: &dyn Factory) {
    let s = f.handle(with_policy(SnapshotPolicy::every(2)));
    let lease = start_run(&s, "j1");
    append_steps(&s, &lease, 1, 1);
    let entry = StepEntry {
        node: Some("node2".into()),
        output: Some(json!({"visit": "2", "index": 0, "kind": "tool", "phase": "started"})),
        snapshot: StepSnapshot::OnRequest,
        ..StepEntry::default()
    };
    let update = RecordUpdate::running("node2");
    let c = s
        .append_journal(&lease, 1, &update, &entry)
        .expect("journal");
    assert_eq!(c.step, 2);
    assert!(!c.snapshot_written, "{}", f.name());
    // A stale step is refused as for any append.
    assert!(s.append_journal(&lease, 1, &update, &entry).is_err());
    let run = s.load("j1").expect("load");
    assert_eq!(run.snapshot, expected_state(1), "{}", f.name());
    assert_eq!(run.record.step, 2);
    assert_eq!(run.record.current_node.as_deref(), Some("node2"));
    let log = s.read_log("j1", 1, 10).expect("log");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].meta.kind, LogKind::Journal, "{}", f.name());
    assert_eq!(log[0].output, entry.output);
    // The run goes on from the journal row's step.
    let next = StepEntry {
        delta: step_delta(2),
        ..step_entry(2)
    };
    let c = s
        .append(&lease, 2, &RecordUpdate::running("node3"), &next)
        .expect("step after the journal");
    assert_eq!(c.step, 3);
    let history = s.history("j1").expect("history");
    let kinds: Vec<LogKind> = history.iter().map(|h| h.kind).collect();
    assert_eq!(
        kinds,
        [
            LogKind::Created,
            LogKind::Step,
            LogKind::Journal,
            LogKind::Step
        ],
        "{}",
        f.name()
    );
    assert_eq!(s.load("j1").expect("load").snapshot, expected_state(2));
}

pub fn append_log_replays_to_the_same_state(f: &dyn Factory) {
    let policies = [
        ("never", SnapshotPolicy::NEVER),
        ("every3", SnapshotPolicy::every(3)),
        ("default", SnapshotPolicy::default()),
    ];
    for (id, policy) in policies {
        let s = f.handle(with_policy(policy));
        let lease = start_run(&s, id);
        for n in 1..=40u64 {
            let c = s
                .append(
                    &lease,
                    n - 1,
                    &RecordUpdate::running(format!("node{}", n + 1)),
                    &step_entry(n),
                )
                .expect("append");
            assert_eq!(c.step, n);
            let expect_snapshot = match id {
                "every3" => n.is_multiple_of(3),
                _ => false,
            };
            assert_eq!(
                c.snapshot_written,
                expect_snapshot,
                "{} {id} step {n}",
                f.name()
            );
            if id == "every3" || n % 10 == 0 {
                let run = s.load(id).expect("load");
                assert_eq!(
                    run.snapshot,
                    expected_state(n),
                    "{} {id} step {n}",
                    f.name()
                );
                assert_eq!(run.record.step, n);
                assert_eq!(run.record.current_node, Some(format!("node{}", n + 1)));
            }
        }
        // Another handle (another connection) replays the same state.
        let other = f.handle(opts());
        assert_eq!(other.load(id).expect("load").snapshot, expected_state(40));
    }
}

pub fn snapshot_policy_bounds_the_replay(f: &dyn Factory) {
    let policy = SnapshotPolicy {
        every_steps: 1_000,
        max_log_bytes: 1_500,
        min_log_percent: 50,
    };
    let s = f.handle(with_policy(policy));
    // A large first snapshot: the floor (half its size) holds compaction back well past
    // max_log_bytes.
    let mut initial = initial_state();
    initial["blob"] = json!("b".repeat(20_000));
    s.create_run(&record("big", 1), &workflow(), &initial)
        .expect("create");
    let lease = s.acquire("big", &owner("p")).expect("acquire");
    let mut snapshot_bytes = s.history("big").expect("history")[0]
        .snapshot_bytes
        .expect("created row has the snapshot size");
    let (mut rows, mut bytes) = (0u64, 0u64);
    let mut snapshots = 0;
    for n in 1..=150u64 {
        let entry = step_entry(n);
        let delta_len = serde_json::to_vec(&entry.delta).expect("delta").len() as u64;
        rows += 1;
        bytes += delta_len;
        let due = policy.due(rows, bytes, snapshot_bytes);
        let c = s
            .append(&lease, n - 1, &RecordUpdate::running("n"), &entry)
            .expect("append");
        assert_eq!(
            c.snapshot_written,
            due,
            "{} step {n} ({bytes} bytes)",
            f.name()
        );
        if due {
            assert!(bytes >= snapshot_bytes / 2, "the floor holds");
            snapshots += 1;
            snapshot_bytes = s.history("big").expect("history")[n as usize]
                .snapshot_bytes
                .expect("the compacting step records the snapshot size");
            (rows, bytes) = (0, 0);
        }
    }
    assert!(snapshots >= 1, "{}: no compaction in 150 steps", f.name());
    let mut expected = expected_state(150);
    expected["blob"] = json!("b".repeat(20_000));
    assert_eq!(s.load("big").expect("load").snapshot, expected);
}

pub fn compaction_failure_loses_nothing(f: &dyn Factory) {
    for (i, stage) in [
        CompactionStage::AfterSnapshotInsert,
        CompactionStage::AfterOldSnapshotDelete,
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("fail{i}");
        let failing = f.handle(StoreOptions {
            failpoint: Some(Failpoint {
                stage,
                action: FailAction::Error,
            }),
            ..with_policy(SnapshotPolicy::every(4))
        });
        let lease = start_run(&failing, &id);
        append_steps(&failing, &lease, 1, 3);
        let err = failing
            .append(&lease, 3, &RecordUpdate::running("node5"), &step_entry(4))
            .expect_err("the compaction fails");
        assert!(matches!(err, StoreError::Invalid(_)), "{}: {err}", f.name());
        // The step that compacted is not recorded; nothing before it is lost.
        let run = failing.load(&id).expect("load");
        assert_eq!(run.record.step, 3, "{} {stage:?}", f.name());
        assert_eq!(run.snapshot, expected_state(3));
        assert_eq!(failing.history(&id).expect("history").len(), 4);
        // A writer without the failpoint redoes the step and compacts.
        let s = f.handle(with_policy(SnapshotPolicy::every(4)));
        let c = s
            .append(&lease, 3, &RecordUpdate::running("node5"), &step_entry(4))
            .expect("append after the failure");
        assert!(c.snapshot_written);
        append_steps(&s, &lease, 5, 9);
        assert_eq!(s.load(&id).expect("load").snapshot, expected_state(9));
        let snaps: Vec<u64> = s
            .history(&id)
            .expect("history")
            .iter()
            .filter(|m| m.snapshot_bytes.is_some())
            .map(|m| m.step)
            .collect();
        assert_eq!(snaps, [0, 4, 8], "{}", f.name());
    }
}

/// A caller that holds the state sends the snapshot when asked ([`StepSnapshot::OnRequest`]
/// → `snapshot_wanted` → [`StepSnapshot::State`]): the store writes what it is given instead
/// of replaying its log, and the log still replays to the same state.
pub fn caller_sends_the_snapshot_when_asked(f: &dyn Factory) {
    let s = f.handle(with_policy(SnapshotPolicy::every(4)));
    let lease = start_run(&s, "asked");
    let mut wanted = false;
    let mut written_at = Vec::new();
    for n in 1..=10u64 {
        let entry = StepEntry {
            snapshot: if wanted {
                StepSnapshot::State(expected_state(n))
            } else {
                StepSnapshot::OnRequest
            },
            ..step_entry(n)
        };
        let c = s
            .append(&lease, n - 1, &RecordUpdate::running("n"), &entry)
            .expect("append");
        // Due at step 4 (four rows since the snapshot): asked for, not written; the answer
        // comes with step 5, which resets the count.
        assert_eq!(c.snapshot_wanted, n == 4 || n == 9, "{} step {n}", f.name());
        assert_eq!(c.snapshot_written, wanted, "{} step {n}", f.name());
        if c.snapshot_written {
            written_at.push(n);
        }
        wanted = c.snapshot_wanted;
        assert_eq!(s.load("asked").expect("load").snapshot, expected_state(n));
    }
    assert_eq!(written_at, [5, 10], "{}", f.name());
    let snaps: Vec<u64> = s
        .history("asked")
        .expect("history")
        .iter()
        .filter(|m| m.snapshot_bytes.is_some())
        .map(|m| m.step)
        .collect();
    assert_eq!(snaps, [0, 5, 10], "{}", f.name());
    // What the caller sends is the snapshot: the store does not rebuild it from the log.
    let c = s
        .append(
            &lease,
            10,
            &RecordUpdate::running("n"),
            &StepEntry {
                snapshot: StepSnapshot::State(json!({"sent": "by the caller"})),
                ..step_entry(11)
            },
        )
        .expect("append");
    assert!(c.snapshot_written && !c.snapshot_wanted);
    assert_eq!(
        s.load("asked").expect("load").snapshot,
        json!({"sent": "by the caller"})
    );
}

/// A run appending step after step notices a cancellation requested through another handle
/// (another connection, on a file) at its next append, and the counters it keeps between
/// appends stay those of the store.
pub fn appends_see_a_cancel_requested_elsewhere(f: &dyn Factory) {
    let s = f.handle(with_policy(SnapshotPolicy::every(3)));
    let lease = start_run(&s, "watched");
    append_steps(&s, &lease, 1, 4);
    assert_eq!(
        f.handle(opts()).request_cancel("watched").expect("cancel"),
        CancelRequest::Requested {
            owner: lease.owner.to_string()
        },
        "{}",
        f.name()
    );
    let c = s
        .append(&lease, 4, &RecordUpdate::running("n"), &step_entry(5))
        .expect("append");
    assert!(c.cancel_requested, "{}", f.name());
    assert!(!c.snapshot_written, "{}", f.name());
    let c = s
        .append(&lease, 5, &RecordUpdate::running("n"), &step_entry(6))
        .expect("append");
    assert!(c.cancel_requested && c.snapshot_written, "{}", f.name());
    assert_eq!(s.load("watched").expect("load").snapshot, expected_state(6));
}

pub fn checkpoint_and_append_mix(f: &dyn Factory) {
    let s = f.handle(with_policy(SnapshotPolicy::every(4)));
    let lease = start_run(&s, "mix");
    append_steps(&s, &lease, 1, 5);
    // A full checkpoint (the old API) of the state after step 6 …
    let c = s
        .checkpoint(
            &lease,
            5,
            &RecordUpdate::running("node7"),
            &expected_state(6),
        )
        .expect("checkpoint");
    assert!(c.snapshot_written);
    // … then deltas on top of it, and a status change in between.
    append_steps(&s, &lease, 7, 9);
    s.set_status(
        "mix",
        Some(&lease),
        9,
        &RecordUpdate::paused("node10", "corr-mix"),
    )
    .expect("pause");
    s.release(&lease).expect("release");
    let run = s.load("mix").expect("load");
    assert_eq!(run.snapshot, expected_state(9), "{}", f.name());
    assert_eq!(run.record.step, 10);
    assert_eq!(run.record.status, RunStatus::Paused);
    let lease = s.acquire("mix", &owner("again")).expect("reacquire");
    for n in 10..=13u64 {
        s.append(&lease, n, &RecordUpdate::running("n"), &step_entry(n))
            .expect("append");
    }
    assert_eq!(s.load("mix").expect("load").snapshot, expected_state(13));
}

pub fn history_and_log_read_from_the_log(f: &dyn Factory) {
    let s = f.handle(with_policy(SnapshotPolicy::every(2)));
    let lease = start_run(&s, "h");
    append_steps(&s, &lease, 1, 3);
    s.set_status(
        "h",
        Some(&lease),
        3,
        &RecordUpdate::finished(
            RunStatus::Completed,
            Some("end".into()),
            Some("SUCCESS".into()),
        ),
    )
    .expect("complete");
    let h = s.history("h").expect("history");
    let kinds: Vec<LogKind> = h.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        [
            LogKind::Created,
            LogKind::Step,
            LogKind::Step,
            LogKind::Step,
            LogKind::Status
        ],
        "{}",
        f.name()
    );
    assert_eq!(h[2].executed_node.as_deref(), Some("node2"));
    assert_eq!(h[2].node.as_deref(), Some("node3"));
    assert_eq!(h[2].node_status.as_deref(), Some("SUCCESS"));
    assert_eq!(h[2].duration_ms, Some(2));
    assert!(h[2].snapshot_bytes.is_some(), "step 2 compacted");
    assert_eq!(h[3].snapshot_bytes, None);
    assert_eq!(h[4].status, RunStatus::Completed);
    // Pages of the log, payloads as written.
    let page = s.read_log("h", 0, 2).expect("read_log");
    assert_eq!(page.iter().map(|e| e.meta.step).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(page[0].output, Some(json!({"n": 1})));
    assert_eq!(page[0].delta.as_ref(), Some(&step_delta(1)));
    assert_eq!(page[0].started_at, Some(1_001));
    let rest = s.read_log("h", 2, 100).expect("read_log");
    assert_eq!(rest.iter().map(|e| e.meta.step).collect::<Vec<_>>(), [3, 4]);
    assert_eq!(rest[1].delta, None);
    assert_eq!(rest[1].output, None);
    assert!(s.read_log("h", 4, 10).expect("read_log").is_empty());
    assert!(matches!(
        s.read_log("nope", 0, 1),
        Err(StoreError::NotFound { .. })
    ));
}

pub fn appends_are_checked_like_checkpoints(f: &dyn Factory) {
    let s = f.handle(opts());
    let lease = start_run(&s, "chk");
    append_steps(&s, &lease, 1, 2);
    assert!(matches!(
        s.append(&lease, 1, &RecordUpdate::running("x"), &step_entry(2)),
        Err(StoreError::StepConflict {
            expected: 1,
            actual: 2,
            ..
        })
    ));
    let forged = Lease {
        owner: owner("forger"),
        ..lease.clone()
    };
    assert!(matches!(
        s.append(&forged, 2, &RecordUpdate::running("x"), &step_entry(3)),
        Err(StoreError::RunLocked { .. })
    ));
    // A terminal append ends the run and frees the lease.
    let done = RecordUpdate::finished(RunStatus::Completed, Some("end".into()), None);
    s.append(&lease, 2, &done, &step_entry(3))
        .expect("final step");
    assert!(matches!(
        s.heartbeat(&lease),
        Err(StoreError::LeaseLost { .. })
    ));
    assert!(matches!(
        s.append(&lease, 3, &RecordUpdate::running("x"), &step_entry(4)),
        Err(StoreError::Finished { .. })
    ));
    assert_eq!(s.load("chk").expect("load").snapshot, expected_state(3));
}

pub fn undecodable_delta_is_corrupt(f: &dyn Factory) {
    let bad = StepEntry {
        delta: StateDelta::new().remove(&["context", "missing"]),
        ..step_entry(1)
    };
    // Not validated on append (that would cost O(state)); the load reports it.
    let s = f.handle(with_policy(SnapshotPolicy::NEVER));
    let lease = start_run(&s, "bad");
    s.append(&lease, 0, &RecordUpdate::running("n"), &bad)
        .expect("append");
    match s.load("bad") {
        Err(StoreError::Corrupt { detail, .. }) => {
            assert!(detail.contains("does not apply"), "{detail}")
        }
        other => panic!("{}: expected Corrupt, got {other:?}", f.name()),
    }
    // A compaction over it fails the step that triggered it, atomically.
    let s = f.handle(with_policy(SnapshotPolicy::every(1)));
    let lease = start_run(&s, "bad2");
    assert!(matches!(
        s.append(&lease, 0, &RecordUpdate::running("n"), &bad),
        Err(StoreError::Corrupt { .. })
    ));
    assert_eq!(s.record("bad2").expect("record").step, 0);
    assert_eq!(s.load("bad2").expect("load").snapshot, initial_state());
}

/// The child half of a crash test: appends steps 1.. with compaction every 5 steps and a
/// failpoint that aborts the process inside the compaction of step 5 (as a `kill -9` would).
pub fn crash_in_compaction_child(s: &Blocking) {
    let lease = start_run(s, "crash");
    append_steps(s, &lease, 1, 5);
    unreachable!("the failpoint aborts the process inside step 5's compaction");
}

/// The parent half: after the child died, the run is at step 4 with its state intact, and
/// another owner continues it (the dead pid's lease is broken at once on Linux).
pub fn crash_in_compaction_check(s: &Blocking) {
    let run = s.load("crash").expect("load after the crash");
    assert_eq!(run.record.step, 4);
    assert_eq!(run.snapshot, expected_state(4));
    assert_eq!(s.history("crash").expect("history").len(), 5);
    if cfg!(target_os = "linux") {
        let lease = s.acquire("crash", &owner("survivor")).expect("take over");
        append_steps(s, &lease, 5, 12);
        assert_eq!(s.load("crash").expect("load").snapshot, expected_state(12));
    }
}

pub fn crash_child_options() -> StoreOptions {
    StoreOptions {
        failpoint: Some(Failpoint {
            stage: CompactionStage::AfterOldSnapshotDelete,
            action: FailAction::Abort,
        }),
        ..with_policy(SnapshotPolicy::every(5))
    }
}
