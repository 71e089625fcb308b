//! `[[schedules]]` and `[budget]`: the file's checks (E0913, E0914, E0518, E0906), cadences in a
//! time zone, and the budget check (E0515, E0516, W0602; docs/schedules.md).

use hensu_diagnostics::SourceFile;
use hensu_project::ProjectFile;
use hensu_project::schedules::{
    BudgetVerdict, Cadence, CadenceError, MissedPolicy, OverlapPolicy, check_budget,
};
use hensu_sema::bounds::CostBound;

fn codes_and_lines(text: &str) -> Vec<(&'static str, u32)> {
    let file = ProjectFile::parse(text);
    let source = SourceFile::new("hensu.toml", text);
    file.diagnostics
        .iter()
        .map(|d| (d.code, source.line_col(d.primary.span.start).line))
        .collect()
}

/// 2026-03-28T12:00:00Z, the Saturday before Europe's switch to summer time.
const SAT_NOON: u64 = 1_774_699_200_000;

#[test]
fn a_valid_schedule_is_typed_with_its_defaults() {
    let text = r#"
[budget]
per_day = 20.0

[[schedules]]
name = "nightly"
workflow = "report"
cron = "0 2 * * *"
time_zone = "Europe/Berlin"
context = { topic = "rust", depth = 2 }
overlap = "queue"
missed = "run_all"

[[schedules]]
name = "often"
workflow = "report"
cron = "*/5 * * * * *"
"#;
    let file = ProjectFile::parse(text);
    assert!(file.diagnostics.is_empty(), "{:#?}", file.diagnostics);
    let c = &file.config;
    assert_eq!(c.budget.per_day, Some(20.0));
    assert_eq!(c.schedules.len(), 2);
    let s = &c.schedules[0];
    assert_eq!(s.zone(), "Europe/Berlin");
    assert_eq!(s.overlap, OverlapPolicy::Queue);
    assert_eq!(s.missed, MissedPolicy::RunAll);
    assert_eq!(s.context["topic"], "rust");
    let t = &c.schedules[1];
    assert_eq!(
        (t.zone(), t.overlap, t.missed),
        ("UTC", OverlapPolicy::Skip, MissedPolicy::RunOnce)
    );
    assert_eq!(t.grace(), 60);
}

#[test]
fn bad_cron_time_zone_duplicate_and_budget_are_each_reported_at_their_value() {
    let text = r#"
[budget]
per_day = -1

[[schedules]]
name = "a"
workflow = "w"
cron = "0 25 * * *"

[[schedules]]
name = "b"
workflow = "w"
cron = "0 1 * * *"
time_zone = "Europe/Berln"

[[schedules]]
name = "a"
workflow = "w"
cron = "0 1 * * *"
"#;
    let mut found = codes_and_lines(text);
    found.sort();
    assert_eq!(
        found,
        vec![("E0518", 17), ("E0906", 3), ("E0913", 8), ("E0914", 14)]
    );
}

#[test]
fn an_unknown_key_in_a_schedule_is_e0907() {
    let found = codes_and_lines(
        "[[schedules]]\nname = \"a\"\nworkflow = \"w\"\ncron = \"* * * * *\"\ncorn = 1\n",
    );
    assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), vec!["E0907"]);
}

#[test]
fn cadences_follow_their_time_zone_across_a_dst_change() {
    let daily = Cadence::parse("0 9 * * *", "Europe/Berlin").expect("valid");
    // Saturday 09:00 CET is 08:00Z; Sunday 09:00 CEST (after the switch) is 07:00Z.
    let sun = daily.next_after(SAT_NOON).expect("valid");
    assert_eq!(sun, SAT_NOON + 19 * 3_600_000);
    let mon = daily.next_after(sun).expect("valid");
    assert_eq!(mon - sun, 24 * 3_600_000);
    let seconds = Cadence::parse("*/2 * * * * *", "UTC").expect("valid");
    assert_eq!(seconds.next_after(SAT_NOON), Some(SAT_NOON + 2_000));
    let (ticks, dropped) = seconds.between(SAT_NOON, SAT_NOON + 10_000, 100);
    assert_eq!(ticks.len(), 6);
    assert!(!dropped);
    let (ticks, dropped) = seconds.between(SAT_NOON, SAT_NOON + 10_000, 2);
    assert_eq!(ticks, vec![SAT_NOON + 8_000, SAT_NOON + 10_000]);
    assert!(dropped);
    assert!(matches!(
        Cadence::parse("nope", "UTC"),
        Err(CadenceError::Cron(_))
    ));
    assert!(matches!(
        Cadence::parse("* * * * *", "Mars/Olympus"),
        Err(CadenceError::TimeZone)
    ));
}

#[test]
fn the_busiest_day_counts_weekday_and_monthly_patterns() {
    let weekdays = Cadence::parse("0 * * * MON-FRI", "UTC").expect("valid");
    assert_eq!(weekdays.busiest_day(SAT_NOON, u64::MAX), 24);
    let first = Cadence::parse("*/10 * 1 * *", "UTC").expect("valid");
    assert_eq!(first.busiest_day(SAT_NOON, u64::MAX), 144);
    // Stops after the first day over the limit (counted whole: the rest of today).
    let every_second = Cadence::parse("* * * * * *", "UTC").expect("valid");
    assert_eq!(every_second.busiest_day(SAT_NOON, 100), 86_400);
}

#[test]
fn the_budget_check_refuses_what_a_day_of_firings_could_overspend() {
    let every_10_min = Cadence::parse("*/10 * * * *", "UTC").expect("valid");
    let cost = CostBound::Finite(0.5);
    assert_eq!(
        check_budget(&cost, &every_10_min, Some(20.0), SAT_NOON),
        BudgetVerdict::Over {
            cost: 0.5,
            firings: 144,
            per_day: 20.0
        }
    );
    let two_hourly = Cadence::parse("0 */2 * * *", "UTC").expect("valid");
    assert_eq!(
        check_budget(&cost, &two_hourly, Some(20.0), SAT_NOON),
        BudgetVerdict::Within
    );
    assert_eq!(
        check_budget(&cost, &every_10_min, None, SAT_NOON),
        BudgetVerdict::Within
    );
    assert_eq!(
        check_budget(&CostBound::Finite(0.0), &every_10_min, Some(0.0), SAT_NOON),
        BudgetVerdict::Within
    );
    let unbounded = check_budget(&CostBound::Unbounded, &two_hourly, Some(20.0), SAT_NOON);
    let d = unbounded
        .diagnostic("s", "w", Default::default())
        .expect("valid");
    assert_eq!(d.code, "E0516");
    let unpriced = check_budget(
        &CostBound::Unpriced(vec!["gpt-4o".into()]),
        &two_hourly,
        Some(20.0),
        SAT_NOON,
    );
    assert_eq!(
        unpriced
            .diagnostic("s", "w", Default::default())
            .expect("some")
            .code,
        "W0602"
    );
    let over = check_budget(&cost, &every_10_min, Some(20.0), SAT_NOON);
    let d = over
        .diagnostic("s", "w", Default::default())
        .expect("valid");
    assert_eq!(d.code, "E0515");
    assert!(d.message.contains("72.00"), "{}", d.message);
}

#[test]
fn times_in_a_dst_gap_or_overlap_fire_once() {
    // 2026-03-29 02:30 does not exist in Berlin (02:00 → 03:00): it fires at 03:00 CEST, 01:00Z.
    let gap = Cadence::parse("30 2 * * *", "Europe/Berlin").expect("valid");
    let sun = gap.next_after(SAT_NOON).expect("some");
    assert_eq!(sun, SAT_NOON + 13 * 3_600_000);
    assert_eq!(
        gap.next_after(sun).expect("some") - sun,
        24 * 3_600_000 - 1_800_000
    );
    // 2026-10-25 02:30 happens twice in Berlin: once.
    let oct_24_noon = 1_792_843_200_000;
    let overlap = Cadence::parse("30 2 * * *", "Europe/Berlin").expect("valid");
    let (ticks, _) = overlap.between(oct_24_noon, oct_24_noon + 2 * 86_400_000, 10);
    assert_eq!(ticks.len(), 2, "{ticks:?}");
}

#[test]
fn retention_is_typed_and_bad_ages_are_e0915() {
    let text = r#"
[retention]
max_age_days = 30
max_count = 1000
failed_max_age_days = 90
interval_minutes = 15

[retention.workflows."nightly"]
max_count = 10

[retention.tenants."acme"]
max_age_days = -2
"#;
    let file = ProjectFile::parse(text);
    let found: Vec<(&str, u32)> = codes_and_lines(text);
    assert_eq!(found, vec![("E0915", 12)]);
    let r = &file.config.retention;
    assert_eq!(r.max_count, Some(1000));
    assert_eq!(r.interval(), std::time::Duration::from_secs(900));
    let nightly = r.rule_for("nightly", Some("other"));
    assert_eq!(
        (nightly.max_count, nightly.max_age_days),
        (Some(10), Some(30.0))
    );
    assert_eq!(
        r.rule_for("x", Some("acme")).failed_max_age_days,
        Some(90.0)
    );
    let found = codes_and_lines("[retention]\nmax_age = 3\n");
    assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), vec!["E0907"]);
}
