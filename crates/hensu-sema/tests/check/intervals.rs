//! The interval logic of E0301/E0302 at its boundaries.

use hensu_ir::ComparisonOperator::{Gt, Gte, Lt, Lte};
use hensu_ir::ConditionPredicate as P;
use hensu_sema::check::intervals::{
    Interval, condition_arms_overlap, describe_score_arm, score_arms_overlap, score_overlap,
};

use super::support::{arm, range};

#[test]
fn shared_endpoint_overlaps_only_if_both_inclusive() {
    // GTE 70 / LT 70: 70 is in the first only.
    assert!(!score_arms_overlap(
        &arm(Gte, 70.0, "a"),
        &arm(Lt, 70.0, "b")
    ));
    // GT 70 / LTE 70.
    assert!(!score_arms_overlap(
        &arm(Gt, 70.0, "a"),
        &arm(Lte, 70.0, "b")
    ));
    // GTE 70 / LTE 70: both contain 70.
    let common = score_overlap(&arm(Gte, 70.0, "a"), &arm(Lte, 70.0, "b"));
    assert_eq!(common.map(|i| i.render()).as_deref(), Some("70.0"));
    // GT 70 / LT 70: nothing in common.
    assert!(!score_arms_overlap(
        &arm(Gt, 70.0, "a"),
        &arm(Lt, 70.0, "b")
    ));
    // Same direction always overlaps.
    assert!(score_arms_overlap(
        &arm(Gt, 80.0, "a"),
        &arm(Gte, 90.0, "b")
    ));
    assert!(score_arms_overlap(
        &arm(Lt, 10.0, "a"),
        &arm(Lte, 50.0, "b")
    ));
}

#[test]
fn range_against_open_intervals() {
    // [50, 79] vs > 79: disjoint (79 excluded from GT).
    assert!(!score_arms_overlap(
        &range(50.0, 79.0, "a"),
        &arm(Gt, 79.0, "b")
    ));
    // [50, 79] vs >= 79: 79 in both.
    assert!(score_arms_overlap(
        &range(50.0, 79.0, "a"),
        &arm(Gte, 79.0, "b")
    ));
    // [50, 79] vs < 50: disjoint; vs <= 50: 50 in both.
    assert!(!score_arms_overlap(
        &range(50.0, 79.0, "a"),
        &arm(Lt, 50.0, "b")
    ));
    assert!(score_arms_overlap(
        &range(50.0, 79.0, "a"),
        &arm(Lte, 50.0, "b")
    ));
    // Adjacent closed ranges sharing an endpoint overlap; separated ones do not.
    assert!(score_arms_overlap(
        &range(0.0, 50.0, "a"),
        &range(50.0, 100.0, "b")
    ));
    assert!(!score_arms_overlap(
        &range(0.0, 49.0, "a"),
        &range(50.0, 100.0, "b")
    ));
    // The common part is rendered with Java doubles.
    let common = score_overlap(&range(50.0, 90.0, "a"), &arm(Gt, 80.0, "b"));
    assert_eq!(common.map(|i| i.render()).as_deref(), Some("(80.0, 90.0]"));
    // A reversed range (E0307) matches nothing and overlaps nothing.
    assert!(!score_arms_overlap(
        &range(90.0, 10.0, "a"),
        &arm(Gt, 0.0, "b")
    ));
}

#[test]
fn score_arm_rendering() {
    assert_eq!(describe_score_arm(&arm(Gte, 80.0, "x")), ">= 80.0");
    assert_eq!(describe_score_arm(&arm(Lt, 0.5, "x")), "< 0.5");
    assert_eq!(describe_score_arm(&range(50.0, 79.0, "x")), "in 50.0..79.0");
    let i = Interval::of_score(&arm(Lt, 50.0, "x")).map(|i| i.render());
    assert_eq!(i.as_deref(), Some("(-∞, 50.0)"));
}

#[test]
fn condition_overlap_table() {
    let eq = |s: &str| P::Eq(s.to_string());
    let neq = |s: &str| P::Neq(s.to_string());
    // Equals / Equals iff same canonical value.
    assert!(condition_arms_overlap(&eq("done"), &eq("done")));
    assert!(!condition_arms_overlap(&eq("done"), &eq("blocked")));
    // Equals / NotEquals iff different values.
    assert!(condition_arms_overlap(&eq("done"), &neq("blocked")));
    assert!(!condition_arms_overlap(&eq("done"), &neq("done")));
    assert!(!condition_arms_overlap(&neq("done"), &eq("done")));
    // NotEquals / NotEquals always; NotEquals / Compare always.
    assert!(condition_arms_overlap(&neq("a"), &neq("b")));
    assert!(condition_arms_overlap(&neq("a"), &P::Gt(3.0)));
    assert!(condition_arms_overlap(&P::Lt(3.0), &neq("a")));
    // Equals / Compare iff the Equals value is a number inside the interval.
    assert!(condition_arms_overlap(&eq("5"), &P::Gt(3.0)));
    assert!(condition_arms_overlap(&P::Gte(5.0), &eq("5")));
    assert!(!condition_arms_overlap(&eq("5"), &P::Gt(5.0)));
    assert!(!condition_arms_overlap(&eq("five"), &P::Gt(3.0)));
    assert!(condition_arms_overlap(&eq("0.9"), &P::Gte(0.9)));
    // Compare / Compare iff the intervals intersect (shared endpoint: both inclusive).
    assert!(!condition_arms_overlap(&P::Gt(6.0), &P::Lte(6.0)));
    assert!(condition_arms_overlap(&P::Gte(6.0), &P::Lte(6.0)));
    assert!(condition_arms_overlap(&P::Gt(0.5), &P::Gt(0.9)));
    assert!(!condition_arms_overlap(&P::Gte(0.9), &P::Lt(0.5)));
}
