//! Canonical numbers (Java doubles), predicate descriptions, workflow ids.

use super::*;

#[test]
fn canonical_numbers() {
    for (n, e) in [
        (5.0, "5"),
        (0.90, "0.9"),
        (100.0, "100"),
        (1e-7, "0.0000001"),
        (-0.0, "0"),
        (-2.50, "-2.5"),
        (1e21, "1000000000000000000000"),
        (0.1 + 0.2, "0.30000000000000004"),
    ] {
        assert_eq!(canonical_number(n), e, "{n}");
    }
    assert_eq!(canonical_int(5), "5");
}

#[test]
fn java_doubles() {
    for (n, e) in [
        (70.0, "70.0"),
        (0.5, "0.5"),
        (1e-7, "1.0E-7"),
        (1.234e10, "1.234E10"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (0.001, "0.001"),
        (0.0, "0.0"),
    ] {
        assert_eq!(java_double_to_string(n), e, "{n}");
    }
}

#[test]
fn predicate_describe() {
    assert_eq!(ConditionPredicate::Eq(s("x")).describe(), "== \"x\"");
    assert_eq!(ConditionPredicate::Neq(s("x")).describe(), "!= \"x\"");
    assert_eq!(ConditionPredicate::Gt(0.9).describe(), "> 0.9");
    assert_eq!(ConditionPredicate::Gte(80.0).describe(), ">= 80");
    assert_eq!(ConditionPredicate::Lt(5.0).describe(), "< 5");
    assert_eq!(ConditionPredicate::Lte(5.0).describe(), "<= 5");
}

#[test]
fn workflow_ids() {
    assert_eq!(
        workflow_id_from_name("My Test Workflow!!!"),
        "my_test_workflow"
    );
    assert_eq!(
        workflow_id_from_name("GeorgiaDiscovery"),
        "georgiadiscovery"
    );
    assert_eq!(workflow_id_from_name("Mini Review"), "mini_review");
    assert_eq!(workflow_id_from_name("a-b_c d.e"), "a-b_c_de");
    assert_eq!(workflow_id_from_name("Ünïcode Flow"), "ncode_flow");
    assert_eq!(workflow_id_from_name(""), "");
}
