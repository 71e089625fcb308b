//! Group commit (`StateStore::append_steps`): the steps a pipelined run queued, appended in
//! order as one transaction — all of them or none.

use hensu_store::StepWrite;

use super::*;

/// Steps `from..=to` as rows of a group, with a journal row after the first; `snapshot` says
/// how each step's snapshot is handled (`OnRequest`: PostgreSQL's one-statement group,
/// `ByStore`: the checked path).
fn group(from: u64, to: u64, snapshot: &StepSnapshot) -> Vec<StepWrite> {
    let mut rows = Vec::new();
    for n in from..=to {
        rows.push(StepWrite {
            journal: false,
            update: RecordUpdate::running(format!("node{}", n + 1)),
            entry: StepEntry {
                snapshot: snapshot.clone(),
                ..step_entry(n)
            },
        });
        if n == from {
            rows.push(StepWrite {
                journal: true,
                update: RecordUpdate::running(format!("node{}", n + 1)),
                entry: StepEntry {
                    output: Some(json!({"visit": n.to_string(), "kind": "model"})),
                    snapshot: StepSnapshot::OnRequest,
                    ..StepEntry::default()
                },
            });
        }
    }
    rows
}

fn kinds(s: &Blocking, id: &str) -> Vec<LogKind> {
    s.history(id)
        .expect("history")
        .iter()
        .map(|h| h.kind)
        .collect()
}

/// A group is appended in order (steps and journal rows), replays to the state its steps
/// make, and is refused whole — nothing of it written — when its first row would be (a
/// stale step, a lost lease); a cancellation requested meanwhile is reported, a terminal
/// status at its end recorded.
pub fn a_group_of_steps_commits_whole_or_not_at_all(f: &dyn Factory) {
    for (id, snapshot) in [
        ("g-request", StepSnapshot::OnRequest),
        ("g-store", StepSnapshot::ByStore),
    ] {
        let s = f.handle(with_policy(SnapshotPolicy::every(4)));
        let lease = start_run(&s, id);
        append_steps(&s, &lease, 1, 1);
        let cp = block(s.inner.append_steps(&lease, 1, &group(2, 6, &snapshot)))
            .unwrap_or_else(|e| panic!("{} {id}: group: {e}", f.name()));
        assert_eq!(
            cp.step,
            7,
            "{} {id}: five steps and a journal row",
            f.name()
        );
        assert!(!cp.cancel_requested && !cp.pause_requested);
        let run = s.load(id).expect("load");
        assert_eq!(run.snapshot, expected_state(6), "{} {id}", f.name());
        assert_eq!(run.record.step, 7);
        assert_eq!(run.record.current_node.as_deref(), Some("node7"));
        let mut expect = vec![
            LogKind::Created,
            LogKind::Step,
            LogKind::Step,
            LogKind::Journal,
        ];
        expect.extend([LogKind::Step; 4]);
        let logged = kinds(&s, id);
        // A compaction the store made may add its snapshot to a step's row, not a row.
        assert_eq!(logged.len(), expect.len(), "{} {id}: {logged:?}", f.name());

        // Stale: refused, nothing written.
        let stale = block(s.inner.append_steps(&lease, 5, &group(7, 9, &snapshot)));
        assert!(
            matches!(stale, Err(StoreError::StepConflict { .. })),
            "{} {id}: {stale:?}",
            f.name()
        );
        assert_eq!(s.record(id).expect("record").step, 7, "{} {id}", f.name());

        // A cancellation requested meanwhile: the group is written and reports it.
        s.request_cancel(id).expect("cancel");
        let cp = block(s.inner.append_steps(&lease, 7, &group(7, 8, &snapshot)))
            .expect("group after a cancel request");
        assert!(cp.cancel_requested, "{} {id}", f.name());
        assert_eq!(cp.step, 10);

        // A terminal status at the end of a group.
        let mut last = group(9, 10, &snapshot);
        let end = last.len() - 1;
        last[end].update = RecordUpdate::finished(
            RunStatus::Completed,
            Some("node11".into()),
            Some("ok".into()),
        );
        let cp = block(s.inner.append_steps(&lease, 10, &last)).expect("final group");
        assert_eq!(cp.step, 13);
        let run = s.load(id).expect("load");
        assert_eq!(run.record.status, RunStatus::Completed, "{} {id}", f.name());
        assert_eq!(run.snapshot, expected_state(10), "{} {id}", f.name());
    }

    // A lost lease: nothing of the group is written.
    let s = f.handle(opts());
    let lease = start_run(&s, "g-lost");
    s.release(&lease).expect("release");
    let lost = block(
        s.inner
            .append_steps(&lease, 0, &group(1, 3, &StepSnapshot::OnRequest)),
    );
    assert!(lost.is_err(), "{}: {lost:?}", f.name());
    assert_eq!(s.record("g-lost").expect("record").step, 0);
    assert_eq!(kinds(&s, "g-lost"), [LogKind::Created], "{}", f.name());
}
