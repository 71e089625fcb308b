//! Schedules and firings (`ScheduleStore`, docs/schedules.md) on every backend: the rows, the
//! claim's compare-and-set and unique tick, taking an open firing over, and many claimers of one
//! tick (threads on one handle or on several) of which exactly one wins.

use std::sync::Arc;

use hensu_store::{FiringState, NewFiring, ScheduleRow, ScheduleStore, StoreError, TickClaim};
use serde_json::json;

use crate::conformance::block;

fn row(tenant: &str, id: &str, next: Option<u64>) -> ScheduleRow {
    ScheduleRow {
        tenant_id: tenant.into(),
        schedule_id: id.into(),
        workflow_id: "wf".into(),
        cron: "*/2 * * * * *".into(),
        time_zone: "UTC".into(),
        context: json!({"topic": "rust"}),
        overlap: "skip".into(),
        missed: "run_once".into(),
        grace_seconds: 60,
        paused: false,
        source: "api".into(),
        next_fire_at: next,
        created_at: 1_000,
        updated_at: 1_000,
    }
}

fn tc(
    tenant: &str,
    schedule: &str,
    expected: u64,
    next: Option<u64>,
    firings: Vec<NewFiring>,
    owner: &str,
    now: u64,
) -> TickClaim {
    TickClaim {
        tenant: tenant.into(),
        schedule: schedule.into(),
        expected,
        next,
        firings,
        owner: owner.into(),
        now,
    }
}

fn claimed(tick: u64) -> NewFiring {
    NewFiring {
        tick,
        state: FiringState::Claimed,
        detail: None,
    }
}

pub fn schedules_are_rows_per_tenant(s: &Arc<dyn ScheduleStore>) {
    block(s.create_schedule(&row("t1", "a", Some(10_000)))).expect("create");
    block(s.create_schedule(&row("t1", "b", Some(20_000)))).expect("create");
    block(s.create_schedule(&row("t2", "a", Some(10_000)))).expect("create");
    assert!(matches!(
        block(s.create_schedule(&row("t1", "a", None))),
        Err(StoreError::AlreadyExists { .. })
    ));
    let got = block(s.get_schedule("t1", "a"))
        .expect("get")
        .expect("some");
    assert_eq!(got, row("t1", "a", Some(10_000)));
    assert_eq!(block(s.get_schedule("t3", "a")).expect("get"), None);
    let ids: Vec<String> = block(s.list_schedules(Some("t1")))
        .expect("list")
        .into_iter()
        .map(|r| r.schedule_id)
        .collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(block(s.list_schedules(None)).expect("all").len(), 3);
    let mut changed = row("t1", "a", Some(30_000));
    changed.paused = true;
    changed.cron = "0 * * * *".into();
    changed.source = "config".into(); // not updated
    changed.updated_at = 2_000;
    assert!(block(s.update_schedule(&changed)).expect("update"));
    let got = block(s.get_schedule("t1", "a"))
        .expect("get")
        .expect("some");
    assert_eq!(
        (got.paused, got.cron.as_str(), got.source.as_str()),
        (true, "0 * * * *", "api")
    );
    assert!(!block(s.update_schedule(&row("t9", "a", None))).expect("update"));
    // Paused schedules are never due; the others in due order.
    let due: Vec<String> = block(s.due(50_000, 10))
        .expect("due")
        .into_iter()
        .map(|r| format!("{}/{}", r.tenant_id, r.schedule_id))
        .collect();
    assert_eq!(due, ["t2/a", "t1/b"]);
    assert!(block(s.due(5_000, 10)).expect("due").is_empty());
    // Deleting removes the firings too.
    block(s.insert_firing("t2", "a", &claimed(1), "me", 1)).expect("insert");
    assert!(block(s.delete_schedule("t2", "a")).expect("delete"));
    assert!(!block(s.delete_schedule("t2", "a")).expect("delete"));
    assert!(block(s.firings("t2", "a", 10)).expect("firings").is_empty());
}

pub fn a_tick_is_claimed_once(s: &Arc<dyn ScheduleStore>) {
    block(s.create_schedule(&row("c", "s", Some(10_000)))).expect("create");
    let won = block(s.claim_ticks(&tc(
        "c",
        "s",
        10_000,
        Some(12_000),
        vec![claimed(10_000)],
        "one",
        10_001,
    )))
    .expect("claim");
    assert_eq!(won, Some(vec![10_000]));
    // A second claimer read the same next_fire_at: nothing.
    let lost = block(s.claim_ticks(&tc(
        "c",
        "s",
        10_000,
        Some(12_000),
        vec![claimed(10_000)],
        "two",
        10_002,
    )))
    .expect("claim");
    assert_eq!(lost, None);
    assert_eq!(
        block(s.get_schedule("c", "s"))
            .expect("get")
            .expect("row")
            .next_fire_at,
        Some(12_000)
    );
    // A tick that has a firing is not inserted again (a run now at that time, say).
    assert!(block(s.insert_firing("c", "s", &claimed(12_000), "one", 11_000)).expect("insert"));
    assert!(!block(s.insert_firing("c", "s", &claimed(12_000), "two", 11_000)).expect("insert"));
    let missed = NewFiring {
        tick: 11_000,
        state: FiringState::Skipped,
        detail: Some("missed".into()),
    };
    let won = block(s.claim_ticks(&tc(
        "c",
        "s",
        12_000,
        Some(14_000),
        vec![missed, claimed(12_000)],
        "one",
        12_500,
    )))
    .expect("claim");
    assert_eq!(won, Some(vec![11_000]));
    let firings = block(s.firings("c", "s", 10)).expect("firings");
    let ticks: Vec<(u64, FiringState)> = firings.iter().map(|f| (f.tick, f.state)).collect();
    assert_eq!(
        ticks,
        [
            (12_000, FiringState::Claimed),
            (11_000, FiringState::Skipped),
            (10_000, FiringState::Claimed)
        ]
    );
    // A paused schedule claims nothing.
    let mut paused = block(s.get_schedule("c", "s")).expect("get").expect("row");
    paused.paused = true;
    block(s.update_schedule(&paused)).expect("pause");
    assert_eq!(
        block(s.claim_ticks(&tc(
            "c",
            "s",
            14_000,
            Some(16_000),
            vec![claimed(14_000)],
            "one",
            14_000
        )))
        .expect("claim"),
        None
    );
}

pub fn open_firings_are_taken_over_once(s: &Arc<dyn ScheduleStore>) {
    block(s.create_schedule(&row("o", "s", Some(1_000)))).expect("create");
    block(s.insert_firing("o", "s", &claimed(1_000), "dead", 1_000)).expect("insert");
    let queued = NewFiring {
        tick: 2_000,
        state: FiringState::Queued,
        detail: None,
    };
    block(s.insert_firing("o", "s", &queued, "alive", 2_000)).expect("insert");
    let open: Vec<_> = block(s.open_firings(100))
        .expect("open")
        .into_iter()
        .filter(|f| f.tenant_id == "o")
        .collect();
    assert_eq!(
        open.iter().map(|f| f.tick).collect::<Vec<_>>(),
        [1_000, 2_000]
    );
    let seen = open[0].clone();
    assert!(block(s.take_firing(&seen, "a", 5_000)).expect("take"));
    assert!(
        !block(s.take_firing(&seen, "b", 5_001)).expect("take"),
        "taken once"
    );
    block(s.set_firing("o", "s", 1_000, FiringState::Started, Some("run-1"), None)).expect("set");
    block(s.set_firing("o", "s", 2_000, FiringState::Failed, None, Some("refused"))).expect("set");
    assert_eq!(
        block(s.last_run("o", "s")).expect("last").as_deref(),
        Some("run-1")
    );
    let open = block(s.open_firings(100)).expect("open");
    assert!(!open.iter().any(|f| f.tenant_id == "o"));
    let firings = block(s.firings("o", "s", 10)).expect("firings");
    assert_eq!(firings[0].detail.as_deref(), Some("refused"));
    assert_eq!(firings[1].owner, "a");
    // Trimming keeps the latest started firing (the overlap rule reads its run).
    let far = hensu_store::now_ms() + 60_000;
    // The failed one goes (and the other tests' finished firings).
    assert!(block(s.trim_firings(far)).expect("trim") >= 1);
    assert_eq!(block(s.firings("o", "s", 10)).expect("firings").len(), 1);
    assert_eq!(
        block(s.last_run("o", "s")).expect("last").as_deref(),
        Some("run-1")
    );
}

pub fn config_schedules_keep_their_state(s: &Arc<dyn ScheduleStore>) {
    let mut cfg = row("k", "nightly", Some(5_000));
    cfg.source = "config".into();
    assert!(block(s.put_config_schedule(&cfg)).expect("put"));
    let mut paused = block(s.get_schedule("k", "nightly"))
        .expect("get")
        .expect("row");
    paused.paused = true;
    paused.next_fire_at = Some(6_000);
    block(s.update_schedule(&paused)).expect("pause");
    // The same cron again: pause and next fire time kept, the definition refreshed.
    let mut again = cfg.clone();
    again.context = json!({"topic": "go"});
    again.next_fire_at = Some(9_000);
    assert!(block(s.put_config_schedule(&again)).expect("put"));
    let got = block(s.get_schedule("k", "nightly"))
        .expect("get")
        .expect("row");
    assert_eq!((got.paused, got.next_fire_at), (true, Some(6_000)));
    assert_eq!(got.context, json!({"topic": "go"}));
    // Another cron: the next fire time follows it.
    again.cron = "0 3 * * *".into();
    assert!(block(s.put_config_schedule(&again)).expect("put"));
    let got = block(s.get_schedule("k", "nightly"))
        .expect("get")
        .expect("row");
    assert_eq!(got.next_fire_at, Some(9_000));
    // An API schedule of that id is left alone.
    block(s.create_schedule(&row("k", "mine", Some(1)))).expect("create");
    let mut clash = cfg.clone();
    clash.schedule_id = "mine".into();
    assert!(!block(s.put_config_schedule(&clash)).expect("put"));
    assert_eq!(
        block(s.get_schedule("k", "mine"))
            .expect("get")
            .expect("row")
            .source,
        "api"
    );
}

/// Eight claimers, spread over `handles` (one per server), race for each of 20 ticks: each
/// tick is won exactly once.
pub fn racing_claimers_fire_each_tick_once(handles: &[Arc<dyn ScheduleStore>]) {
    block(handles[0].create_schedule(&row("race", "s", Some(1_000)))).expect("create");
    for tick in 0..20u64 {
        let due = 1_000 + tick * 1_000;
        let wins: usize = std::thread::scope(|scope| {
            let claimers: Vec<_> = (0..8)
                .map(|i| {
                    let store = handles[i % handles.len()].clone();
                    scope.spawn(move || {
                        let got = block(store.claim_ticks(&tc(
                            "race",
                            "s",
                            due,
                            Some(due + 1_000),
                            vec![claimed(due)],
                            &format!("claimer-{i}"),
                            due,
                        )))
                        .expect("claim");
                        usize::from(got.is_some_and(|t| t == [due]))
                    })
                })
                .collect();
            claimers.into_iter().map(|c| c.join().expect("join")).sum()
        });
        assert_eq!(wins, 1, "tick {tick}");
    }
    assert_eq!(
        block(handles[0].firings("race", "s", 100))
            .expect("firings")
            .len(),
        20
    );
}
