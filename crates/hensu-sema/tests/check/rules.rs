//! E0204, E0205 and the transition checks E03xx, W0304, W0306, W0309 on hand-built IR.

use hensu_ir::ComparisonOperator::{Gt, Gte, Lt};
use hensu_ir::ConditionPredicate as P;
use hensu_ir::*;

use super::support::*;

#[test]
fn unknown_targets_everywhere() {
    let fork = Node::Fork(ForkNode {
        id: "fork".into(),
        targets: vec!["drafft".into()],
        transition_rules: vec![success("join")],
        ..Default::default()
    });
    let join = Node::Join(JoinNode {
        id: "join".into(),
        await_targets: vec!["frok".into()],
        writes: vec!["out".into()],
        transition_rules: vec![success("done")],
        ..Default::default()
    });
    let wf = workflow(
        "f",
        "strat",
        vec![
            std_node(
                "draft",
                vec![
                    score(vec![arm(Gt, 80.0, "doen")]),
                    bounded(Namespace::Score, always("draftt"), 2, "gone"),
                ],
            ),
            fork,
            join,
            end("done"),
        ],
    );
    let l = lines(&check(&wf));
    for name in ["strat", "drafft", "frok", "doen", "draftt", "gone"] {
        assert!(
            l.contains(&format!("E0204 unknown node `{name}`")),
            "{name} missing in {l:?}"
        );
    }
    let d = check(&wf);
    let doen = d.iter().find(|d| d.message.contains("`doen`"));
    assert_eq!(
        doen.map(|d| d.help.clone()),
        Some(vec!["did you mean `done`?".to_string()])
    );
}

#[test]
fn unknown_agents() {
    let mut wf = workflow(
        "f",
        "a",
        vec![
            Node::Standard(StandardNode {
                id: "a".into(),
                agent_id: Some("writr".into()),
                transition_rules: vec![success("p")],
                ..Default::default()
            }),
            Node::Parallel(ParallelNode {
                id: "p".into(),
                branches: vec![Branch {
                    yields: vec!["x".into()],
                    ..Branch::new("b1", "critic")
                }],
                consensus_config: Some(ConsensusConfig {
                    judge_agent_id: Some("judge".into()),
                    strategy: ConsensusStrategy::JudgeDecides,
                    threshold: None,
                }),
                transition_rules: vec![success("done")],
            }),
            end("done"),
        ],
    );
    wf = with_agents(wf, &["writer"]);
    let d = check(&wf);
    assert_eq!(
        lines(&d),
        vec![
            "E0205 unknown agent `critic`",
            "E0205 unknown agent `judge`",
            "E0205 unknown agent `writr`",
        ]
    );
    assert_eq!(d[2].help, vec!["did you mean `writer`?"]);
}

#[test]
fn score_overlap_across_regrouped_rules() {
    // Written: `whenScore lessThan 50 revise "a" …` then `whenScore lessThan 70 goto "b"`;
    // lowered: the goto group first, then the bounded arm, which is masked below 50.
    let wf = workflow(
        "f",
        "a",
        vec![
            std_node(
                "a",
                vec![
                    score(vec![arm(Lt, 70.0, "b"), arm(Gte, 90.0, "done")]),
                    bounded(Namespace::Score, score(vec![arm(Lt, 50.0, "a")]), 2, "done"),
                    always("done"),
                ],
            ),
            std_node("b", vec![success("done")]),
            end("done"),
        ],
    );
    let d = check(&wf);
    assert_eq!(
        lines(&d),
        vec!["E0301 score arms `< 70.0` and `< 50.0` overlap"]
    );
    assert_eq!(
        d[0].primary.message,
        "this arm never sees scores (-∞, 50.0)"
    );
}

#[test]
fn score_threshold_outside_range() {
    let wf = workflow(
        "f",
        "a",
        vec![
            std_node(
                "a",
                vec![
                    score(vec![arm(Gt, 120.0, "done"), range(-5.0, 10.0, "done")]),
                    always("done"),
                ],
            ),
            end("done"),
        ],
    );
    assert_eq!(
        lines(&check(&wf)),
        vec![
            "W0309 score threshold -5.0 is outside 0..100",
            "W0309 score threshold 120.0 is outside 0..100",
        ]
    );
}

#[test]
fn condition_overlap() {
    let wf = workflow(
        "f",
        "a",
        vec![
            std_writes(
                "a",
                &["status", "n"],
                vec![
                    cond("status", P::Eq("done".into()), "done"),
                    cond("n", P::Gt(3.0), "done"),
                    cond("status", P::Neq("blocked".into()), "done"),
                    cond("n", P::Eq("3".into()), "done"),
                    cond("n", P::Eq("4".into()), "done"),
                    always("done"),
                ],
            ),
            end("done"),
        ],
    );
    assert_eq!(
        lines(&check(&wf)),
        vec![
            "E0302 condition arms `== \"done\"` and `!= \"blocked\"` on `status` overlap",
            "E0302 condition arms `> 3` and `== \"4\"` on `n` overlap",
        ]
    );
}

#[test]
fn shared_namespace() {
    let wf = workflow(
        "f",
        "a",
        vec![
            std_node(
                "a",
                vec![
                    bounded(Namespace::Score, score(vec![arm(Lt, 50.0, "a")]), 2, "done"),
                    bounded(Namespace::Score, always("a"), 2, "done"),
                    retry(1, "done"),
                ],
            ),
            end("done"),
        ],
    );
    assert_eq!(
        lines(&check(&wf)),
        vec!["E0304 two bounded rules share the `score` retry namespace"]
    );
}

fn reviewed(id: &str, rules: Vec<TransitionRule>) -> Node {
    Node::Standard(StandardNode {
        id: id.into(),
        review_config: Some(ReviewConfig::default()),
        transition_rules: rules,
        ..Default::default()
    })
}

#[test]
fn review_arms() {
    let wf = workflow(
        "f",
        "a",
        vec![
            reviewed("a", vec![approval(true, "b")]),
            reviewed("b", vec![approval(false, "a"), success("c")]),
            reviewed(
                "c",
                vec![
                    bounded(Namespace::Approval, approval(false, "a"), 2, "done"),
                    approval(true, "done"),
                ],
            ),
            end("done"),
        ],
    );
    let l = lines(&check(&wf));
    assert!(
        l.contains(&"E0305 reviewed node `a` has no `onRejection` arm".to_string()),
        "{l:?}"
    );
    assert!(
        l.contains(
            &"W0305 an approval at reviewed node `b` falls through to a catch-all rule".to_string()
        ),
        "{l:?}"
    );
    assert!(!l.iter().any(|x| x.contains("`c`")), "{l:?}");
}

#[test]
fn fork_join_mismatch_and_join_writes() {
    let wf = workflow(
        "f",
        "f1",
        vec![
            Node::Fork(ForkNode {
                id: "f1".into(),
                targets: vec!["x".into()],
                transition_rules: vec![success("j1")],
                ..Default::default()
            }),
            Node::Fork(ForkNode {
                id: "f2".into(),
                targets: vec!["x".into()],
                transition_rules: vec![success("x")],
                ..Default::default()
            }),
            std_node("x", vec![success("j1")]),
            Node::Join(JoinNode {
                id: "j1".into(),
                await_targets: vec!["f2".into()],
                writes: vec!["a".into(), "b".into()],
                transition_rules: vec![success("done")],
                ..Default::default()
            }),
            Node::Fork(ForkNode {
                id: "f3".into(),
                targets: vec!["x".into()],
                ..Default::default()
            }),
            end("done"),
        ],
    );
    let l = lines(&check(&wf));
    for expected in [
        "E0306 join `j1` does not await fork `f1`",
        "E0306 fork `f2` completes into `x`, which is not a join",
        "E0309 `COLLECT_ALL` join writes 2 variables, expected exactly one",
        "E0310 node `f3` has no transition",
    ] {
        assert!(l.contains(&expected.to_string()), "{expected} not in {l:?}");
    }
}

#[test]
fn judge_decides_without_judge() {
    let wf = with_agents(
        workflow(
            "f",
            "p",
            vec![
                Node::Parallel(ParallelNode {
                    id: "p".into(),
                    branches: vec![Branch {
                        yields: vec!["v".into()],
                        ..Branch::new("b", "a")
                    }],
                    consensus_config: Some(ConsensusConfig {
                        strategy: ConsensusStrategy::JudgeDecides,
                        ..Default::default()
                    }),
                    transition_rules: vec![success("done")],
                }),
                end("done"),
            ],
        ),
        &["a"],
    );
    assert_eq!(
        lines(&check(&wf)),
        vec!["E0308 `JUDGE_DECIDES` consensus without a judge"]
    );
}

#[test]
fn unconditional_rules_hide_later_success_rules_only() {
    let wf = workflow(
        "f",
        "a",
        vec![
            std_writes(
                "a",
                &["v"],
                vec![
                    always("done"),
                    failure("b"), // can still match: no warning for it
                    cond("v", P::Eq("x".into()), "b"),
                    success("b"),
                ],
            ),
            std_node("b", vec![retry(2, "done"), success("done")]),
            end("done"),
        ],
    );
    let d = check(&wf);
    assert_eq!(
        lines(&d),
        vec!["W0304 transition after an unconditional rule can never match"]
    );
    assert_eq!(
        d[0].notes,
        vec!["1 more rules after it can never match either"]
    );
}

#[test]
fn exit_arm_after_overlapping_bounded_arm() {
    let wf = workflow(
        "f",
        "a",
        vec![
            std_writes(
                "a",
                &["status", "other"],
                vec![
                    retry(1, "done"), // onFailure retry never shadows a success arm
                    bounded(
                        Namespace::Condition,
                        cond("status", P::Eq("redo".into()), "a"),
                        2,
                        "done",
                    ),
                    cond("status", P::Eq("ok".into()), "done"), // disjoint: no warning
                    cond("other", P::Eq("x".into()), "done"),   // independent: shadowed
                    always("done"),
                ],
            ),
            end("done"),
        ],
    );
    let d = check(&wf);
    assert_eq!(
        lines(&d),
        vec!["W0306 exit arm declared after an overlapping bounded arm"]
    );
}

#[test]
fn node_without_transitions() {
    let wf = workflow("f", "a", vec![std_node("a", vec![]), end("done")]);
    let l = lines(&check(&wf));
    assert!(
        l.contains(&"E0310 node `a` has no transition".to_string()),
        "{l:?}"
    );
}
