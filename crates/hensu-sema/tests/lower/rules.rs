//! Rule-list compilation order: the order the Kotlin DSL compiles transitions, `onScore` and
//! `onCondition` arms in (docs/language.md, *Transitions*).

use hensu_ir::{ComparisonOperator, Namespace, Node, TransitionRule};

use super::{codes, lower_str};

fn wrap(node_body: &str) -> String {
    format!(
        "workflow(\"t\") {{\n  agents {{ agent(\"a\") {{ role = \"r\"; model = \"m\" }} }}\n  graph {{\n    start at \"n\"\n    node(\"n\") {{\n      agent = \"a\"\n{node_body}\n    }}\n    end(\"x\")\n    end(\"y\")\n    end(\"z\")\n  }}\n}}\n"
    )
}

fn rules(node_body: &str) -> Vec<TransitionRule> {
    let l = lower_str(&wrap(node_body));
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    let wf = l.workflow.expect("workflow");
    let rules = wf.nodes["n"].transition_rules().to_vec();
    assert_eq!(
        l.origins.nodes["n"].rules.len(),
        rules.len(),
        "origins parallel to rules"
    );
    rules
}

#[test]
fn on_score_regroups_plain_feedback_bounded_else() {
    let r = rules(
        r#"
      onScore {
        whenScore lessThan 10.0 revise "n" retry 1 otherwise "z"
        whenScore greaterThan 90.0 goto "x" withFeedback
        whenScore `in` 50.0..60.0 goto "y"
        otherwise goto "z" withFeedback
      }
      onSuccess goto "x"
"#,
    );
    assert_eq!(r.len(), 5);
    match &r[0] {
        TransitionRule::Score {
            conditions,
            with_feedback: false,
        } => {
            assert_eq!(conditions.len(), 1);
            assert_eq!(conditions[0].operator, ComparisonOperator::Range);
            assert_eq!(conditions[0].value, Some(0.0));
            assert_eq!(conditions[0].target_node, "y");
        }
        other => panic!("plain group first, got {other:?}"),
    }
    match &r[1] {
        TransitionRule::Score {
            conditions,
            with_feedback: true,
        } => {
            assert_eq!(conditions[0].operator, ComparisonOperator::Gt);
            assert_eq!(conditions[0].target_node, "x");
        }
        other => panic!("feedback group second, got {other:?}"),
    }
    match &r[2] {
        TransitionRule::Bounded {
            namespace: Namespace::Score,
            budget: 1,
            otherwise,
            inner,
            ..
        } => {
            assert_eq!(otherwise, "z");
            assert!(
                matches!(&**inner, TransitionRule::Score { conditions, .. } if conditions[0].target_node == "n")
            );
        }
        other => panic!("bounded third, got {other:?}"),
    }
    assert!(
        matches!(&r[3], TransitionRule::Always { target_node, with_feedback: true } if target_node == "z")
    );
    assert!(matches!(&r[4], TransitionRule::Success { target_node, .. } if target_node == "x"));
}

#[test]
fn on_score_groups_keep_declaration_order_within_group() {
    let r = rules(
        r#"
      onScore {
        whenScore greaterThanOrEqual 80 goto "x"
        whenScore lessThan 20.0 goto "z" withFeedback
        whenScore lessThanOrEqual 50.0 goto "y"
      }
"#,
    );
    assert_eq!(r.len(), 2);
    let TransitionRule::Score { conditions, .. } = &r[0] else {
        panic!("{r:?}")
    };
    let targets: Vec<&str> = conditions.iter().map(|c| c.target_node.as_str()).collect();
    assert_eq!(targets, ["x", "y"]);
    assert_eq!(
        conditions[0].value,
        Some(80.0),
        "an Int threshold widens to Double"
    );
}

#[test]
fn arm_after_otherwise_is_e0303_but_compiled_before_else() {
    let l = lower_str(&wrap(
        r#"
      onScore {
        otherwise goto "z"
        whenScore greaterThan 50.0 goto "x"
        otherwise goto "y"
      }
"#,
    ));
    assert_eq!(codes(&l), ["E0303", "E0303"]);
    let wf = l.workflow.expect("workflow");
    let r = wf.nodes["n"].transition_rules();
    assert_eq!(r.len(), 2);
    assert!(matches!(&r[0], TransitionRule::Score { .. }));
    assert!(matches!(&r[1], TransitionRule::Always { target_node, .. } if target_node == "z"));
}

#[test]
fn statement_order_across_blocks() {
    let r = rules(
        r#"
      writes("s")
      onFailure retry 2 otherwise "z"
      onCondition("s") {
        whenValue equalTo 5.0 goto "x"
        whenValue greaterThan 3 revise "n" withFeedback retry 1 otherwise "y" withFeedback
        otherwise revise "n" retry 2 otherwise "z"
      }
      onApproval goto "x" withFeedback
      onRejection revise "n" retry 3 otherwise "z"
"#,
    );
    let kinds: Vec<String> = r
        .iter()
        .map(|r| match r.bounded() {
            Some((ns, b)) => format!("bounded:{ns}:{b}:{}", r.trigger()),
            None => r.kind().to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "bounded:failure:2:failure",
            "condition",
            "bounded:condition:1:condition",
            "bounded:condition:2:always",
            "approval",
            "bounded:approval:3:approval",
        ]
    );
    match &r[1] {
        TransitionRule::Condition { predicate, .. } => assert_eq!(predicate.describe(), "== \"5\""),
        other => panic!("{other:?}"),
    }
    match &r[2] {
        TransitionRule::Bounded {
            escalation_with_feedback,
            inner,
            ..
        } => {
            assert!(*escalation_with_feedback);
            assert!(
                !inner.with_feedback(),
                "the revise edge never carries feedback"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn with_feedback_on_when_value_and_otherwise_goto() {
    let r = rules(
        r#"
      writes("s")
      onCondition("s") {
        whenValue notEqualTo "a" goto "x" withFeedback
        otherwise goto "y" withFeedback
      }
"#,
    );
    assert!(r.iter().all(|r| r.with_feedback()));
}

#[test]
fn review_block_defaults_to_required() {
    let l = lower_str(&wrap(
        "      review { allowEdit = true }\n      onApproval goto \"x\"\n      onRejection goto \"y\"",
    ));
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    let wf = l.workflow.expect("workflow");
    let Node::Standard(n) = &wf.nodes["n"] else {
        panic!()
    };
    let r = n.review_config.as_ref().expect("review");
    assert_eq!(r.mode, hensu_ir::ReviewMode::Required);
    assert!(r.allow_edit && !r.allow_backtrack);
}

#[test]
fn placeholders_have_exact_spans() {
    let src =
        wrap("      prompt = \"Write about {topic} and {other}.\"\n      onSuccess goto \"x\"");
    let l = lower_str(&src);
    let o = &l.origins.nodes["n"];
    let names: Vec<&str> = o.placeholders.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["topic", "other"]);
    assert_eq!(&src[o.placeholders[0].1.range()], "{topic}");
    assert_eq!(&src[o.placeholders[1].1.range()], "{other}");
    let rule = &o.rules[0];
    assert_eq!(rule.target.map(|s| &src[s.range()]), Some("\"x\""));
}
