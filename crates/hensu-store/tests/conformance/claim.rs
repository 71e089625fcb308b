//! Claiming runs for workers: [`StateStore::claim`] and [`StateStore::heartbeat_owner`].

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use hensu_store::{RecordUpdate, RunStatus, StoreError, StoreOptions};

use super::{Blocking, Factory, SyncStore, opts, owner, record, snapshot, workflow};

fn ids(c: &[hensu_store::Claimed]) -> Vec<String> {
    c.iter().map(|c| c.lease.run_id.clone()).collect()
}

fn queue(s: &Blocking, n: usize) {
    for i in 0..n {
        s.create_run(
            &record(&format!("q{i:03}"), 1_000 + i as u64),
            &workflow(),
            &snapshot(0),
        )
        .expect("create");
    }
}

pub fn claim_takes_queued_runs_once_oldest_first_never_paused_or_finished(f: &dyn Factory) {
    let s = f.handle(opts());
    queue(&s, 3);
    for (id, status) in [
        ("paused", RunStatus::Paused),
        ("done", RunStatus::Completed),
    ] {
        s.create_run(&record(id, 10), &workflow(), &snapshot(0))
            .expect("create");
        let update = RecordUpdate::finished(status, Some("start".into()), None);
        s.set_status(id, None, 0, &update).expect("status");
    }
    let a = s.claim(&owner("a"), 2).expect("claim a");
    assert_eq!(ids(&a), ["q000", "q001"], "{}", f.name());
    assert!(a.iter().all(|c| !c.taken_over));
    let b = s.claim(&owner("b"), 10).expect("claim b");
    assert_eq!(ids(&b), ["q002"], "{}", f.name());
    assert!(s.claim(&owner("c"), 10).expect("claim c").is_empty());
    // A held run is not acquired by someone else; the bulk heartbeat renews all of a's.
    assert!(matches!(
        s.acquire("q000", &owner("c")),
        Err(StoreError::RunLocked { .. })
    ));
    let renewed: BTreeSet<String> = s
        .heartbeat_owner(&owner("a"))
        .expect("heartbeat")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(renewed, BTreeSet::from(["q000".into(), "q001".into()]));
    // A released run is queued again (not a takeover).
    s.release(&a[0].lease).expect("release");
    let c = s.claim(&owner("c"), 10).expect("claim c again");
    assert_eq!(ids(&c), ["q000"]);
    assert!(!c[0].taken_over);
}

pub fn expired_leases_are_taken_over_and_the_old_owner_loses_them(f: &dyn Factory) {
    // TTL 0: every lease is expired as soon as it is taken (no sleeping).
    let zero = StoreOptions {
        lease_ttl: std::time::Duration::ZERO,
        ..opts()
    };
    let s = f.handle(zero);
    queue(&s, 1);
    let a = s.claim(&owner("a"), 1).expect("a");
    assert!(!a[0].taken_over);
    let b = s.claim(&owner("b"), 1).expect("b");
    assert_eq!(ids(&b), ["q000"], "{}", f.name());
    assert!(b[0].taken_over, "a lease that expired is a takeover");
    assert!(s.heartbeat_owner(&owner("a")).expect("hb a").is_empty());
    let entry = hensu_store::StepEntry::default();
    let stale = s.append(&a[0].lease, 0, &RecordUpdate::running("n1"), &entry);
    assert!(stale.is_err(), "the old owner cannot write: {stale:?}");
}

pub fn cancel_requests_reach_the_bulk_heartbeat(f: &dyn Factory) {
    let s = f.handle(opts());
    queue(&s, 2);
    s.claim(&owner("w"), 2).expect("claim");
    s.request_cancel("q001").expect("cancel");
    let mut hb = s.heartbeat_owner(&owner("w")).expect("hb");
    hb.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(hb.len(), 2);
    assert!(!hb[0].1.cancel_requested);
    assert!(hb[1].1.cancel_requested, "{}", f.name());
}

pub fn concurrent_claimers_never_share_a_run(f: &dyn Factory) {
    let setup = f.handle(opts());
    queue(&setup, 40);
    let handles: Vec<Blocking> = (0..4).map(|_| f.handle(opts())).collect();
    let barrier = Arc::new(Barrier::new(handles.len()));
    let got: Vec<Vec<String>> = std::thread::scope(|scope| {
        let joins: Vec<_> = handles
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let barrier = barrier.clone();
                scope.spawn(move || {
                    barrier.wait();
                    let me = owner(&format!("w{i}"));
                    let mut mine = Vec::new();
                    loop {
                        match h.claim(&me, 3) {
                            Ok(c) if c.is_empty() => break,
                            Ok(c) => mine.extend(ids(&c)),
                            Err(e) => panic!("claim: {e}"),
                        }
                    }
                    mine
                })
            })
            .collect();
        joins.into_iter().map(|j| j.join().expect("join")).collect()
    });
    let all: Vec<String> = got.iter().flatten().cloned().collect();
    let unique: BTreeSet<&String> = all.iter().collect();
    assert_eq!(
        all.len(),
        40,
        "{}: every run claimed once: {got:?}",
        f.name()
    );
    assert_eq!(unique.len(), 40);
}

/// The note of the claim row at the end of `run_id`'s log.
fn last_claim(s: &Blocking, run_id: &str) -> hensu_store::ClaimNote {
    let log = s.read_log(run_id, 0, 100).expect("log");
    let row = log.last().expect("a row");
    assert_eq!(row.meta.kind, hensu_store::LogKind::Claimed, "{log:?}");
    assert_eq!(row.meta.status, RunStatus::Running);
    serde_json::from_value(row.output.clone().expect("a note")).expect("a claim note")
}

pub fn claims_are_logged_and_queued_runs_start_running(f: &dyn Factory) {
    // TTL 0: every lease is expired as soon as it is taken, so a second claim is a takeover.
    let zero = StoreOptions {
        lease_ttl: std::time::Duration::ZERO,
        ..opts()
    };
    let s = f.handle(zero);
    let mut queued = record("q", 1_000);
    queued.status = RunStatus::Queued;
    s.create_run(&queued, &workflow(), &snapshot(0))
        .expect("create");
    assert_eq!(s.record("q").expect("record").status, RunStatus::Queued);
    assert_eq!(s.list().expect("list")[0].status, RunStatus::Queued);
    // A queued run is not terminal: it can be cancelled like a running one.
    assert!(!RunStatus::Queued.is_terminal());

    let a = s.claim(&owner("a"), 1).expect("claim a");
    assert_eq!(ids(&a), ["q"], "{}", f.name());
    assert!(!a[0].taken_over);
    let r = s.record("q").expect("record");
    assert_eq!((r.status, r.step), (RunStatus::Running, 1), "{}", f.name());
    let note = last_claim(&s, "q");
    assert_eq!(note.worker, owner("a").to_string());
    assert_eq!((note.taken_over_from, note.rerun_node), (None, None));

    // b takes it over from a: the row names both and the node that runs again.
    let b = s.claim(&owner("b"), 1).expect("claim b");
    assert!(b[0].taken_over);
    let note = last_claim(&s, "q");
    assert_eq!(note.worker, owner("b").to_string());
    assert_eq!(note.taken_over_from, Some(owner("a").to_string()));
    assert_eq!(note.rerun_node.as_deref(), Some("start"));
    assert_eq!(s.record("q").expect("record").step, 2);
    // The history lists both claims.
    let kinds: Vec<_> = s
        .history("q")
        .expect("history")
        .into_iter()
        .map(|h| h.kind)
        .collect();
    use hensu_store::LogKind::{Claimed, Created};
    assert_eq!(kinds, [Created, Claimed, Claimed], "{}", f.name());
}

/// A server's takeover claims its tenants' runs only, a worker local runs only: neither sees
/// the other's, so many queued local runs (older, first in the claim's order) never starve a
/// server's takeover, and a worker never runs a tenant's run outside the server's rules.
pub fn claims_take_only_their_scope(f: &dyn Factory) {
    use hensu_store::ClaimScope;
    let s = f.handle(opts());
    queue(&s, 5);
    let reg = s.registry().expect("registry");
    let wf = serde_json::to_vec(&workflow()).expect("workflow");
    reg.create_tenant_run("acme", &record("t1", 5_000), &wf, &snapshot(0))
        .expect("tenant run");
    let server = s
        .claim_in(&owner("srv"), ClaimScope::Tenants, 1)
        .expect("claim");
    assert_eq!(ids(&server), ["t1"], "{}", f.name());
    assert!(
        s.claim_in(&owner("srv"), ClaimScope::Tenants, 10)
            .expect("claim")
            .is_empty(),
        "the local runs are not the server's"
    );
    // Given back, the tenant's run goes to another server, never to a worker.
    s.release(&server[0].lease).expect("release");
    let worker = s
        .claim_in(&owner("w"), ClaimScope::Local, 10)
        .expect("claim");
    assert_eq!(
        ids(&worker),
        ["q000", "q001", "q002", "q003", "q004"],
        "{}",
        f.name()
    );
    let again = s
        .claim_in(&owner("srv2"), ClaimScope::Tenants, 10)
        .expect("claim");
    assert_eq!(ids(&again), ["t1"], "{}", f.name());
}

/// A batch start's runs are written in one transaction: all of them with their tags, queued
/// for a server's claim; a batch that fails part-way (here a run id taken already) writes none.
pub fn a_batch_of_tenant_runs_is_written_whole_or_not_at_all(f: &dyn Factory) {
    use hensu_store::ClaimScope;
    let s = f.handle(opts());
    let reg = s.registry().expect("registry");
    let wf = serde_json::to_vec(&workflow()).expect("workflow");
    let queued = |id: &str, at: u64| {
        let mut r = record(id, at);
        r.status = RunStatus::Queued;
        (r, snapshot(0))
    };
    let batch: Vec<_> = (0..3)
        .map(|i| queued(&format!("b{i}"), 2_000 + i))
        .collect();
    reg.create_tenant_runs("acme", &batch, &wf).expect("batch");
    let mut tagged = reg.tenant_runs("acme").expect("runs");
    tagged.sort();
    assert_eq!(tagged, ["b0", "b1", "b2"], "{}", f.name());
    let claimed = s
        .claim_in(&owner("srv"), ClaimScope::Tenants, 10)
        .expect("claim");
    let mut claimed = ids(&claimed);
    claimed.sort();
    assert_eq!(claimed, ["b0", "b1", "b2"], "{}", f.name());

    let clash = vec![queued("c0", 3_000), queued("b1", 3_001)];
    assert!(reg.create_tenant_runs("acme", &clash, &wf).is_err());
    assert!(
        matches!(
            s.record("c0"),
            Err(hensu_store::StoreError::NotFound { .. })
        ),
        "the run before the failure is rolled back too ({})",
        f.name()
    );
    assert_eq!(reg.tenant_runs("acme").expect("runs").len(), 3);
}

pub fn queue_depth_counts_what_a_claim_could_take(f: &dyn Factory) {
    let s = f.handle(opts());
    assert_eq!(s.queue_depth().expect("depth"), 0, "{}", f.name());
    queue(&s, 3);
    // A paused run waits for a person, not for a claimer: not counted.
    s.create_run(&record("paused", 10), &workflow(), &snapshot(0))
        .expect("create");
    let update = RecordUpdate::finished(RunStatus::Paused, Some("start".into()), None);
    s.set_status("paused", None, 0, &update).expect("status");
    assert_eq!(s.queue_depth().expect("depth"), 3, "{}", f.name());
    // A paused run at a durable wait counts once its wake time has passed, as a claim takes
    // it then (docs/language.md, *Timers and signals*); one still waiting does not.
    let now = hensu_store::now_ms();
    for (id, wake_at) in [("due", now - 1), ("later", now + 3_600_000)] {
        s.create_run(&record(id, 2_000), &workflow(), &snapshot(0))
            .expect("create");
        let l = s.acquire(id, &owner("runner")).expect("acquire");
        let wait = hensu_store::RunWait {
            wake_at: Some(wake_at),
            signal: None,
            more_signals: Vec::new(),
            signals_seen: 0,
        };
        s.checkpoint(&l, 0, &super::waits::waiting("pause", wait), &snapshot(1))
            .expect("suspend");
        s.release(&l).expect("release");
    }
    assert_eq!(s.queue_depth().expect("depth"), 4, "{}", f.name());
    let a = s.claim(&owner("a"), 2).expect("claim");
    assert_eq!(s.queue_depth().expect("depth"), 2, "{}", f.name());
    // A released run waits again.
    s.release(&a[0].lease).expect("release");
    assert_eq!(s.queue_depth().expect("depth"), 3, "{}", f.name());
    // The claim takes exactly what was counted: the queued runs and the due one.
    let rest = s.claim(&owner("b"), 10).expect("claim");
    assert_eq!(rest.len(), 3, "{}", f.name());
    assert!(ids(&rest).contains(&"due".to_string()), "{}", f.name());
    assert_eq!(s.queue_depth().expect("depth"), 0, "{}", f.name());
}
