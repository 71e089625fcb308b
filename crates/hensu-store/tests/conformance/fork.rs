//! Forked runs: a fork references its parent's log prefix; readers of the fork see the
//! prefix, then its own rows; compaction on either side keeps it readable.

use hensu_store::{ForkSpec, RunParent};

use super::*;

/// The edit every fork below makes to the parent's state.
fn edits() -> StateDelta {
    StateDelta::new().set(&["context", "edited"], json!("yes"))
}

fn edited(mut state: Value) -> Value {
    state["context"]["edited"] = json!("yes");
    state
}

/// Forks `parent` at `step` as run `id` (queued, at `node`), with [`edits`].
pub fn fork_as(s: &Blocking, parent: &str, step: u64, id: &str) -> Result<RunRecord, StoreError> {
    let mut record = record(id, 0);
    record.status = RunStatus::Queued;
    record.current_node = Some(format!("node{}", step + 1));
    s.fork(&ForkSpec {
        parent: RunParent {
            run_id: parent.into(),
            step,
        },
        record,
        workflow: None,
        edits: edits(),
        tenant: None,
    })
}

/// Appends, on a fork whose own log starts after `fork_step`, the parent's steps
/// `from..=to` (the fork's step numbers are one more than the parent's: its `forked` row).
fn append_on_fork(s: &Blocking, lease: &Lease, from: u64, to: u64) {
    for n in from..=to {
        let update = RecordUpdate::running(format!("node{}", n + 1));
        s.append(lease, n, &update, &step_entry(n))
            .unwrap_or_else(|e| panic!("append step {n} on the fork: {e}"));
    }
}

pub fn fork_reads_the_parents_prefix_then_its_own_steps(f: &dyn Factory) {
    let s = f.handle(with_policy(SnapshotPolicy::NEVER));
    let lease = start_run(&s, "p");
    append_steps(&s, &lease, 1, 30);
    let child = fork_as(&s, "p", 10, "c").expect("fork");
    assert_eq!(child.step, 11, "{}", f.name());
    assert_eq!(child.status, RunStatus::Queued);
    assert_eq!(
        child.parent,
        Some(RunParent {
            run_id: "p".into(),
            step: 10
        })
    );
    assert_eq!(s.record("c").expect("record"), child);
    // The fork's state: the parent's after step 10, with the edits.
    let loaded = s.load("c").expect("load fork");
    assert_eq!(loaded.snapshot, edited(expected_state(10)), "{}", f.name());
    assert_eq!(loaded.workflow, workflow(), "the parent's workflow");
    // The parent is untouched; both can be read at any of their steps.
    assert_eq!(s.load("p").expect("load").snapshot, expected_state(30));
    assert_eq!(s.load_at("p", 10).expect("at").snapshot, expected_state(10));
    assert_eq!(s.load_at("c", 4).expect("at").snapshot, expected_state(4));
    assert!(matches!(s.load_at("c", 12), Err(StoreError::Invalid(_))));
    // History: the parent's rows 0..=10, then the fork's own row.
    let kinds: Vec<(u64, LogKind)> = s
        .history("c")
        .expect("history")
        .iter()
        .map(|m| (m.step, m.kind))
        .collect();
    assert_eq!(kinds.len(), 12);
    assert_eq!(kinds[0], (0, LogKind::Created));
    assert_eq!(kinds[10], (10, LogKind::Step));
    assert_eq!(kinds[11], (11, LogKind::Forked));
    let log = s.read_log("c", 8, 100).expect("read_log");
    let steps: Vec<u64> = log.iter().map(|e| e.meta.step).collect();
    assert_eq!(steps, [9, 10, 11]);
    assert_eq!(log[0].output, Some(json!({"n": 9})), "the parent's output");
    assert_eq!(log[2].output, Some(json!({"run_id": "p", "step": 10})));
    assert_eq!(s.read_log("c", 0, 3).expect("paged").len(), 3);
    assert_eq!(s.read_log("c", 11, 10).expect("past the end").len(), 0);
    // The fork runs on: its own steps, on top of the prefix.
    let mine = s.acquire("c", &owner("fork")).expect("acquire fork");
    append_on_fork(&s, &mine, 11, 15);
    assert_eq!(
        s.load("c").expect("load").snapshot,
        edited(expected_state(15)),
        "{}",
        f.name()
    );
    assert_eq!(s.history("c").expect("history").len(), 17);
    assert_eq!(s.load("p").expect("load").snapshot, expected_state(30));
    assert_eq!(s.history("p").expect("history").len(), 31);
}

pub fn forks_of_forks_and_fork_points_in_a_prefix(f: &dyn Factory) {
    let s = f.handle(with_policy(SnapshotPolicy::NEVER));
    let lease = start_run(&s, "p");
    append_steps(&s, &lease, 1, 20);
    fork_as(&s, "p", 10, "c").expect("fork");
    let mine = s.acquire("c", &owner("fork")).expect("acquire");
    append_on_fork(&s, &mine, 11, 14); // the fork's steps 12..=15
    // A fork of the fork after its own fork point reads both prefixes.
    let g = fork_as(&s, "c", 13, "g").expect("fork of a fork");
    assert_eq!(g.parent.as_ref().map(|p| p.run_id.as_str()), Some("c"));
    let want = edited(expected_state(12));
    assert_eq!(s.load("g").expect("load").snapshot, want, "{}", f.name());
    let kinds: Vec<LogKind> = s
        .history("g")
        .expect("history")
        .iter()
        .map(|m| m.kind)
        .collect();
    assert_eq!(kinds.len(), 15);
    assert_eq!(kinds[11], LogKind::Forked);
    assert_eq!(kinds[14], LogKind::Forked);
    // A fork point inside the fork's prefix belongs to the parent.
    let h = fork_as(&s, "c", 5, "h").expect("fork in the prefix");
    assert_eq!(
        h.parent,
        Some(RunParent {
            run_id: "p".into(),
            step: 5
        })
    );
    assert_eq!(
        s.load("h").expect("load").snapshot,
        edited(expected_state(5))
    );
}

pub fn compaction_keeps_forks_readable(f: &dyn Factory) {
    // The parent compacts every 3 steps, also after forks were taken, and before one at its
    // creation: every fork reads its prefix through the parent's snapshots.
    let s = f.handle(with_policy(SnapshotPolicy::every(3)));
    let lease = start_run(&s, "p");
    append_steps(&s, &lease, 1, 8);
    fork_as(&s, "p", 4, "a").expect("fork a");
    fork_as(&s, "p", 0, "z").expect("fork at the creation");
    append_steps(&s, &lease, 9, 40);
    fork_as(&s, "p", 7, "b").expect("fork b");
    append_steps(&s, &lease, 41, 50);
    // A full snapshot from the caller compacts too.
    s.checkpoint(
        &lease,
        50,
        &RecordUpdate::running("node51"),
        &expected_state(50),
    )
    .expect("checkpoint");
    for (id, step) in [("a", 4), ("z", 0), ("b", 7)] {
        assert_eq!(
            s.load(id).expect("load").snapshot,
            edited(expected_state(step)),
            "{} fork {id}",
            f.name()
        );
    }
    assert_eq!(s.load("p").expect("load").snapshot, expected_state(50));
    assert_eq!(s.load_at("p", 4).expect("at").snapshot, expected_state(4));
    // The fork compacts its own log: it gets a snapshot of its own and stays right.
    let s3 = f.handle(with_policy(SnapshotPolicy::every(3)));
    let mine = s3.acquire("a", &owner("fork")).expect("acquire");
    append_on_fork(&s3, &mine, 5, 12);
    assert_eq!(
        s3.load("a").expect("load").snapshot,
        edited(expected_state(12)),
        "{}",
        f.name()
    );
    assert_eq!(
        s3.load_at("a", 3).expect("prefix").snapshot,
        expected_state(3)
    );
    assert_eq!(s3.history("a").expect("history").len(), 14);
}

pub fn fork_refusals_write_nothing(f: &dyn Factory) {
    let s = f.handle(opts());
    let lease = start_run(&s, "p");
    append_steps(&s, &lease, 1, 3);
    assert!(
        matches!(
            fork_as(&s, "nope", 1, "x"),
            Err(StoreError::NotFound { .. })
        ),
        "{}",
        f.name()
    );
    assert!(matches!(
        fork_as(&s, "p", 4, "x"),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        fork_as(&s, "p", 2, "p"),
        Err(StoreError::AlreadyExists { .. })
    ));
    assert!(matches!(s.record("x"), Err(StoreError::NotFound { .. })));
    assert_eq!(s.list().expect("list").len(), 1);
    // A fork of a tenant's run is tagged with the tenant in its transaction.
    let reg = s.registry().expect("registry");
    let mut record = record("t", 0);
    record.status = RunStatus::Queued;
    s.fork(&ForkSpec {
        parent: RunParent {
            run_id: "p".into(),
            step: 3,
        },
        record,
        workflow: Some(serde_json::to_vec(&json!({"id": "other"})).expect("json")),
        edits: StateDelta::new(),
        tenant: Some("acme".into()),
    })
    .expect("tenant fork");
    assert_eq!(reg.run_tenant("t").expect("tag"), Some("acme".into()));
    assert_eq!(s.load("t").expect("load").workflow, json!({"id": "other"}));
    assert_eq!(s.load("t").expect("load").snapshot, expected_state(3));
    // A run id taken by a tenant tag is refused too, and writes nothing.
    reg.tag_run("u", "acme", "wf").expect("tag u");
    let mut taken = super::record("u", 0);
    taken.status = RunStatus::Queued;
    let again = s.fork(&ForkSpec {
        parent: RunParent {
            run_id: "p".into(),
            step: 1,
        },
        record: taken,
        workflow: None,
        edits: StateDelta::new(),
        tenant: Some("acme".into()),
    });
    assert!(matches!(again, Err(StoreError::AlreadyExists { .. })));
    assert!(matches!(s.record("u"), Err(StoreError::NotFound { .. })));
}

/// A fork that fails between its writes (the failpoint after the record) leaves nothing: no
/// record, no tenant tag, no row; the parent is as it was, and the same fork then succeeds.
pub fn fork_failure_writes_nothing(f: &dyn Factory) {
    let s = f.handle(opts());
    let lease = start_run(&s, "p");
    append_steps(&s, &lease, 1, 3);
    s.registry().expect("registry");
    let failing = f.handle(fork_fails(FailAction::Error));
    let mut record = record("c", 0);
    record.status = RunStatus::Queued;
    let spec = ForkSpec {
        parent: RunParent {
            run_id: "p".into(),
            step: 2,
        },
        record,
        workflow: None,
        edits: edits(),
        tenant: Some("acme".into()),
    };
    assert!(failing.fork(&spec).is_err(), "{}", f.name());
    crash_in_fork_check(&s);
    assert_eq!(
        s.registry()
            .expect("registry")
            .run_tenant("c")
            .expect("tag"),
        None
    );
    s.fork(&spec).expect("the same fork, without the failpoint");
    assert_eq!(
        s.load("c").expect("load").snapshot,
        edited(expected_state(2))
    );
}

/// Options whose forks stop between the record and the `forked` row.
pub fn fork_fails(action: FailAction) -> StoreOptions {
    StoreOptions {
        failpoint: Some(Failpoint {
            stage: CompactionStage::ForkAfterRunInsert,
            action,
        }),
        ..opts()
    }
}

/// The child half of a kill during a fork: forks run `p` (created here) and aborts inside the
/// fork's transaction.
pub fn crash_in_fork_child(s: &Blocking, killed: &Blocking) {
    let lease = start_run(s, "p");
    append_steps(s, &lease, 1, 3);
    let _ = fork_as(killed, "p", 2, "c");
    unreachable!("the failpoint aborts the process inside the fork");
}

/// The parent half: no trace of the fork, the parent whole.
pub fn crash_in_fork_check(s: &Blocking) {
    assert!(matches!(s.record("c"), Err(StoreError::NotFound { .. })));
    assert!(matches!(
        s.load_at("c", 1),
        Err(StoreError::NotFound { .. })
    ));
    let ids: Vec<String> = s
        .list()
        .expect("list")
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(ids, ["p"]);
    assert_eq!(s.load("p").expect("load").snapshot, expected_state(3));
    assert_eq!(s.history("p").expect("history").len(), 4);
}
