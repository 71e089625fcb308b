//! Transition rules: success/failure, retry budgets, approval, score, condition, always, bounded revise loops.

use super::*;

#[tokio::test]
async fn success_and_failure_rules_route_by_status() {
    let wf = workflow(
        "a",
        vec![
            node("a", "go", &[], vec![success("ok"), failure(Some("bad"))]),
            end("ok", ExitStatus::Success),
            end("bad", ExitStatus::Failure),
        ],
    );
    let s = Script::new().on("a", &["fine"]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Success, "ok".into()));
    assert_eq!(
        r.state.context["a"],
        json!("fine"),
        "legacy output under the node id"
    );

    let s = Script::new().fail("a", "model exploded");
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "bad".into()));
    assert_eq!(r.state.history[0].error.as_deref(), Some("model exploded"));
    assert!(!r.state.context.contains_key("a"));
}

#[tokio::test]
async fn failure_retry_runs_budget_plus_one_times_then_escalates() {
    let wf = workflow(
        "a",
        vec![
            node(
                "a",
                "go",
                &[],
                vec![
                    success("ok"),
                    bounded(Namespace::Failure, 2, "gave-up", false, failure(None)),
                ],
            ),
            end("ok", ExitStatus::Success),
            end("gave-up", ExitStatus::Failure),
        ],
    );
    let s = Script::new().fail("a", "boom");
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["a", "a", "a", "gave-up"]);
    assert!(
        r.state.retry_counters.is_empty(),
        "escalation is a forward move: counters reset"
    );

    // Recovers on the second try: the counter is reset by the forward move.
    let s = Script::new().on("a", &[]);
    s.queues.lock().unwrap().insert(
        "a".into(),
        VecDeque::from(vec![Err("boom".to_string()), Ok("fine".to_string())]),
    );
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["a", "a", "ok"]);
    assert!(r.state.retry_counters.is_empty());
}

#[tokio::test]
async fn approval_reads_the_approved_variable_and_falls_through_when_absent() {
    let wf = workflow(
        "r",
        vec![
            node(
                "r",
                "review",
                &[],
                vec![
                    approval(true, "yes"),
                    approval(false, "no"),
                    always("neither", false),
                ],
            ),
            end("yes", ExitStatus::Success),
            end("no", ExitStatus::Failure),
            end("neither", ExitStatus::Cancel),
        ],
    );
    for (answer, expected) in [
        (r#"{"approved": true}"#, "yes"),
        (r#"{"approved": "FALSE", "recommendation": "x"}"#, "no"),
        (r#"{"approved": "maybe"}"#, "neither"),
        ("no json here", "neither"),
    ] {
        let s = Script::new().on("r", &[answer]);
        let r = harness(&s).run(&wf, json!({})).await;
        assert_eq!(completed(&r).1, expected, "answer {answer}");
        assert!(
            !r.state.context.contains_key("approved"),
            "routing var removed on transition"
        );
    }
}

#[tokio::test]
async fn approval_and_score_ignore_the_node_status() {
    // A failed node with an auto-approved REQUIRED review still routes onApproval.
    let mut n = node(
        "r",
        "review",
        &[],
        vec![approval(true, "yes"), failure(Some("failed"))],
    );
    if let Node::Standard(s) = &mut n {
        s.review_config = Some(ReviewConfig {
            mode: ReviewMode::Required,
            ..ReviewConfig::default()
        });
    }
    let wf = workflow(
        "r",
        vec![
            n,
            end("yes", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let s = Script::new().fail("r", "broken");
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "yes");
    let t = &h.events_of("transition_taken")[0];
    assert_eq!(t["cause"]["rule"], "approval");
    assert_eq!(t["cause"]["from_review"], true);

    // A failed node routes on a score already in the context.
    let wf = workflow(
        "s",
        vec![
            node(
                "s",
                "x",
                &[],
                vec![
                    score_rule(vec![(ComparisonOperator::Gte, 80.0, "high")], false),
                    failure(Some("failed")),
                ],
            ),
            end("high", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let s = Script::new().fail("s", "broken");
    let r = harness(&s).run(&wf, json!({"score": "85"})).await;
    assert_eq!(completed(&r).1, "high");
    assert!(!r.state.context.contains_key("score"));
}

#[tokio::test]
async fn score_rule_first_matching_condition_wins() {
    let wf = workflow(
        "s",
        vec![
            node(
                "s",
                "x",
                &[],
                vec![score_rule(
                    vec![
                        (ComparisonOperator::Gt, 79.0, "publish"),
                        (ComparisonOperator::Gte, 50.0, "improve"),
                        (ComparisonOperator::Lt, 50.0, "abandon"),
                    ],
                    false,
                )],
            ),
            end("publish", ExitStatus::Success),
            end("improve", ExitStatus::Success),
            end("abandon", ExitStatus::Failure),
        ],
    );
    for (score, target) in [
        ("80", "publish"),
        ("79", "improve"),
        ("50.0", "improve"),
        ("12", "abandon"),
    ] {
        let s = Script::new().on("s", &[&format!("{{\"score\": {score}}}")]);
        let r = harness(&s).run(&wf, json!({})).await;
        assert_eq!(completed(&r).1, target, "score {score}");
    }
    // Scores 0..1 are not rescaled by the score rule (only the rubric does that).
    let s = Script::new().on("s", &["{\"score\": 0.9}"]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "abandon");
}

#[tokio::test]
async fn condition_rules_compare_canonically_and_warn_on_type_mismatch() {
    let wf = workflow(
        "c",
        vec![
            node(
                "c",
                "x",
                &["status", "quality"],
                vec![
                    condition("quality", ConditionPredicate::Gt(6.0), "good"),
                    condition("status", ConditionPredicate::Eq("5".into()), "five"),
                    condition("status", ConditionPredicate::Neq("done".into()), "not-done"),
                    always("other", false),
                ],
            ),
            end("good", ExitStatus::Success),
            end("five", ExitStatus::Success),
            end("not-done", ExitStatus::Success),
            end("other", ExitStatus::Success),
        ],
    );
    let cases = [
        (r#"{"status": "done", "quality": "7"}"#, "good", 0),
        (r#"{"status": 5.0, "quality": 2}"#, "five", 0),
        (r#"{"status": "wip", "quality": "high"}"#, "not-done", 1),
        (r#"{"status": "done"}"#, "other", 1),
        (r#"{"status": {"a": 1}, "quality": [1]}"#, "other", 3),
    ];
    for (answer, target, warnings) in cases {
        let s = Script::new().on("c", &[answer]);
        let h = harness(&s);
        let r = h.run(&wf, json!({})).await;
        assert_eq!(completed(&r).1, target, "answer {answer}");
        assert_eq!(
            h.events_of("transition_warning").len(),
            warnings,
            "answer {answer}"
        );
        assert!(
            !r.state.context.contains_key("status"),
            "condition variables are removed on transition"
        );
        assert!(!r.state.context.contains_key("quality"));
    }
    let s = Script::new().on("c", &[r#"{"status": "done", "quality": "high"}"#]);
    let h = harness(&s);
    h.run(&wf, json!({})).await;
    assert_eq!(
        h.events_of("transition_warning")[0]["message"],
        "Condition on variable 'quality' (> 6) could not be evaluated: actual value is String 'high'"
    );
}

#[tokio::test]
async fn always_fires_only_on_success() {
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![always("next", false)]),
            end("next", ExitStatus::Success),
        ],
    );
    let s = Script::new().fail("a", "nope");
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(
        failed(&r),
        RuntimeError::NoValidTransition {
            node: "a".into(),
            tried: vec!["always: the node's status is FAILURE".into()],
        }
    );
    assert_eq!(
        failed(&r).to_string(),
        "No valid transition from a; rules tried: always: the node's status is FAILURE"
    );
    assert_eq!(r.state.history.len(), 1, "state intact");
}

/// writer → reviewer; the reviewer's rejection revises the writer at most twice.
pub(crate) fn revise_workflow(with_feedback: bool, escalation_feedback: bool) -> Workflow {
    workflow(
        "write",
        vec![
            node(
                "write",
                "Write about {topic}",
                &["article"],
                vec![success("review")],
            ),
            node(
                "review",
                "Review {article}",
                &[],
                vec![
                    approval(true, "done"),
                    bounded(
                        Namespace::Approval,
                        2,
                        "needs-work",
                        escalation_feedback,
                        TransitionRule::Approval {
                            expected: false,
                            target_node: "write".into(),
                            with_feedback,
                        },
                    ),
                ],
            ),
            node(
                "needs-work",
                "Explain: {recommendation}",
                &[],
                vec![success("failed")],
            ),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    )
}

#[tokio::test]
async fn bounded_revise_counter_is_owned_by_the_rule_node_and_escalates() {
    let wf = revise_workflow(true, true);
    let s = Script::new().on("write", &["draft"]).on(
        "review",
        &[r#"{"approved": false, "recommendation": "more depth"}"#],
    );
    let counters = Arc::new(Mutex::new(Vec::new()));
    struct Spy(Arc<Mutex<Vec<IndexMap<String, i64>>>>);
    impl ExecutionListener for Spy {
        fn on_checkpoint(&self, state: &RunState) {
            self.0.lock().unwrap().push(state.retry_counters.clone());
        }
    }
    let h = harness(&s);
    let r = h
        .run_with(&wf, json!({"topic": "rust"}), &Spy(counters.clone()))
        .await;
    assert_eq!(
        path(&r),
        [
            "write",
            "review",
            "write",
            "review",
            "write",
            "review",
            "needs-work",
            "failed"
        ]
    );
    // The writer's own forward moves never reset the reviewer's counter.
    let seen = counters.lock().unwrap().clone();
    let at_third_write: Vec<i64> = seen
        .iter()
        .map(|c| c.get("approval:review").copied().unwrap_or(0))
        .collect();
    assert_eq!(at_third_write, [0, 0, 1, 1, 2, 2, 0]);
    assert!(r.state.retry_counters.is_empty());
    // Revise keeps the recommendation for the writer; escalation withFeedback keeps it too.
    let writes = s.prompts_of("write");
    assert!(!writes[0].contains("Previous Feedback"));
    assert!(writes[1].ends_with("### Previous Feedback\nmore depth\n\nEngine output requirement: your JSON response MUST include:\n  \"article\""), "{}", writes[1]);
    assert!(s.prompts_of("needs-work")[0].starts_with("Explain: more depth"));
    assert_eq!(r.state.backtracks.len(), 2);
    assert!(
        r.state
            .backtracks
            .iter()
            .all(|b| b.kind == BacktrackKind::Revise)
    );
}

#[tokio::test]
async fn forward_move_resets_counters_and_drops_recommendation_without_feedback() {
    let wf = revise_workflow(true, false);
    let s = Script::new().on("write", &["draft"]).on(
        "review",
        &[
            r#"{"approved": false, "recommendation": "fix intro"}"#,
            r#"{"approved": true, "recommendation": "good now"}"#,
        ],
    );
    let r = harness(&s).run(&wf, json!({"topic": "rust"})).await;
    assert_eq!(path(&r), ["write", "review", "write", "review", "done"]);
    assert!(
        r.state.retry_counters.is_empty(),
        "forward move deletes the owner's counters"
    );
    assert!(
        !r.state.context.contains_key("recommendation"),
        "no withFeedback: removed"
    );
    assert!(!r.state.context.contains_key("approved"));
    assert_eq!(r.state.context["article"], json!("draft"));
}

#[tokio::test]
async fn with_feedback_keeps_recommendation_on_forward_moves() {
    let wf = workflow(
        "s",
        vec![
            node(
                "s",
                "x",
                &[],
                vec![
                    score_rule(vec![(ComparisonOperator::Lt, 80.0, "improve")], true),
                    success("done"),
                ],
            ),
            node("improve", "Improve", &[], vec![success("done")]),
            end("done", ExitStatus::Success),
        ],
    );
    let s = Script::new().on("s", &[r#"{"score": 60, "recommendation": "shorter"}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(path(&r), ["s", "improve", "done"]);
    assert!(s.prompts_of("improve")[0].ends_with("### Previous Feedback\nshorter"));
    assert_eq!(h.events_of("transition_taken")[0]["feedback"], true);
    assert!(
        !r.state.context.contains_key("recommendation"),
        "improve moved on without feedback"
    );
}

#[tokio::test]
async fn retry_feedback_failure_trigger_removes_recommendation() {
    let wf = workflow(
        "a",
        vec![
            node(
                "a",
                "x",
                &[],
                vec![
                    success("ok"),
                    bounded(Namespace::Failure, 1, "ko", false, failure(None)),
                ],
            ),
            end("ok", ExitStatus::Success),
            end("ko", ExitStatus::Failure),
        ],
    );
    let s = Script::new().fail("a", "nope");
    let r = harness(&s).run(&wf, json!({"recommendation": "old"})).await;
    assert_eq!(path(&r), ["a", "a", "ko"]);
    assert!(s.prompts_of("a")[0].contains("Previous Feedback\nold"));
    assert!(!s.prompts_of("a")[1].contains("Previous Feedback"));
}

#[tokio::test]
async fn rubric_auto_backtrack_retries_the_node_at_most_three_times() {
    let rubric = parse_rubric(
        "quality",
        "# Rubric: quality\n\n## Metadata\n- pass_threshold: 70\n\n## Criteria\n\n### Clarity (weight: 100)\n\n#### Clear\n- points: 10\n- evaluation: Is clear.\n",
    )
    .unwrap();
    let mut n = node("w", "Write", &["text"], vec![success("done")]);
    if let Node::Standard(s) = &mut n {
        s.rubric = Some(rubric);
    }
    let wf = workflow("w", vec![n, end("done", ExitStatus::Success)]);
    let s = Script::new().on("w", &[r#"{"text": "meh", "score": 65}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(path(&r), ["w", "w", "w", "w", "done"]);
    assert_eq!(h.events_of("backtrack").len(), 3);
    assert_eq!(r.state.backtracks[0].reason, "Rubric score: 65.0");
    assert_eq!(
        r.state.history[0].rubric.as_ref().map(|e| e.passed),
        Some(false)
    );
    // The rubric block and the rubric engine vars are in the prompt.
    let p = &s.prompts_of("w")[0];
    assert!(
        p.contains("\n\n---\n\nScore the content above using these criteria:\n\n- **"),
        "{p}"
    );
    assert!(
        !p.contains("\"score\" with a numeric"),
        "no score rule: no score instruction"
    );
}

/// The "No valid transition" error names each rule and what it saw: a score in a gap, a
/// missing `approved`.
#[tokio::test]
async fn no_valid_transition_says_what_each_rule_saw() {
    let wf = workflow(
        "a",
        vec![
            node(
                "a",
                "x",
                &[],
                vec![
                    score_rule(
                        vec![
                            (ComparisonOperator::Gte, 60.0, "good"),
                            (ComparisonOperator::Lt, 50.0, "bad"),
                        ],
                        false,
                    ),
                    approval(true, "good"),
                ],
            ),
            end("good", ExitStatus::Success),
            end("bad", ExitStatus::Failure),
        ],
    );
    let s = Script::new().on("a", &[r#"{"score": 55}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    let message = failed(&r).to_string();
    assert!(
        message.contains("whenScore: score 55.0 is in none of [GTE 60.0, LT 50.0]"),
        "{message}"
    );
    assert!(
        message.contains("onApproval: `approved` is missing from the output"),
        "{message}"
    );
}

fn rubric_node(id: &str, rules: Vec<TransitionRule>) -> Node {
    let rubric = parse_rubric(
        "quality",
        "# Rubric: quality\n\n## Metadata\n- pass_threshold: 70\n\n## Criteria\n\n### Clarity (weight: 100)\n\n#### Clear\n- points: 10\n- evaluation: Is clear.\n",
    )
    .unwrap();
    let mut n = node(id, "Write", &["text"], rules);
    if let Node::Standard(s) = &mut n {
        s.rubric = Some(rubric);
    }
    n
}

/// An output without a numeric score was a critical failure (score 0) that backtracked without
/// any cap until `maxSteps`. Now the missing score is reported and the automatic backtracks
/// count against the run's limit; then the node's own transitions decide.
#[tokio::test]
async fn rubric_without_a_score_is_reported_and_its_backtracks_are_capped() {
    let wf = workflow(
        "w",
        vec![
            rubric_node("w", vec![success("done")]),
            end("done", ExitStatus::Success),
        ],
    );
    let s = Script::new().on("w", &[r#"{"text": "no score here"}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(
        completed(&r),
        (ExitStatus::Success, "done".to_string()),
        "{:?}",
        r.outcome
    );
    assert_eq!(
        h.events_of("backtrack").len() as u64,
        DEFAULT_RUBRIC_BACKTRACK_LIMIT
    );
    assert_eq!(h.events_of("rubric_score_missing").len(), 4);
    assert_eq!(h.events_of("rubric_backtracks_spent").len(), 1);
}

/// With a `revise … retry N` rule, the automatic backtracks use its budget.
#[tokio::test]
async fn rubric_backtracks_count_against_the_revise_budget() {
    let wf = workflow(
        "w",
        vec![
            rubric_node(
                "w",
                vec![
                    bounded(
                        Namespace::Approval,
                        1,
                        "gave-up",
                        false,
                        approval(false, "w"),
                    ),
                    success("done"),
                ],
            ),
            end("done", ExitStatus::Success),
            end("gave-up", ExitStatus::Failure),
        ],
    );
    let s = Script::new().on("w", &[r#"{"text": "meh", "score": 10}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(path(&r), ["w", "w", "done"]);
    assert_eq!(h.events_of("backtrack").len(), 1);
    assert_eq!(h.events_of("rubric_backtracks_spent")[0]["limit"], 1);
}
