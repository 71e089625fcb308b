//! Rubric score boundaries and consensus boundaries.

use super::*;
use crate::parallel_consensus::{branch_script, parallel};

fn rubric_node(id: &str, rubric_id: &str, rules: Vec<TransitionRule>) -> Node {
    let rubric = parse_rubric(
        rubric_id,
        &format!("# Rubric: {rubric_id}\n\n## Metadata\n- pass_threshold: 70\n\n## Criteria\n\n### Clarity (weight: 100)\n\n#### Clear\n- points: 10\n- evaluation: Is clear.\n"),
    )
    .unwrap();
    let mut n = node(id, id, &["text"], rules);
    if let Node::Standard(s) = &mut n {
        s.rubric = Some(rubric);
    }
    n
}

#[tokio::test]
async fn rubric_critical_moderate_and_scaled_scores() {
    let wf = workflow(
        "start",
        vec![
            node("start", "s", &[], vec![success("r1")]),
            rubric_node("r1", "one", vec![success("r2")]),
            rubric_node("r2", "two", vec![success("done")]),
            end("done", ExitStatus::Success),
        ],
    );
    // Critical (< 30) at r2: back to the first history node with a rubric (r1).
    let s = Script::new()
        .on("r1", &[r#"{"text": "a", "score": 90}"#])
        .on(
            "r2",
            &[
                r#"{"text": "b", "score": 29.9}"#,
                r#"{"text": "b", "score": 95}"#,
            ],
        );
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["start", "r1", "r2", "r1", "r2", "done"]);
    assert_eq!(r.state.backtracks[0].to, "r1");
    assert_eq!(
        r.state.context["backtrack_reason"],
        json!("Critical rubric failure: 29.9")
    );

    // Moderate (< 60): the latest history node with a different rubric.
    let s = Script::new()
        .on("r1", &[r#"{"text": "a", "score": 90}"#])
        .on(
            "r2",
            &[
                r#"{"text": "b", "score": 59}"#,
                r#"{"text": "b", "score": 80}"#,
            ],
        );
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["start", "r1", "r2", "r1", "r2", "done"]);
    assert_eq!(
        r.state.context["backtrack_reason"],
        json!("Moderate rubric failure: 59.0")
    );

    // 0..1 scores are scaled: 0.75 → 75 passes; 0.5 → 50 with no earlier rubric → retry.
    let s = Script::new()
        .on("r1", &[r#"{"text": "a", "score": 0.75}"#])
        .on("r2", &[r#"{"text": "b", "score": 1}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(r.state.history[1].rubric.as_ref().unwrap().score, 75.0);
    assert!(r.state.backtracks.is_empty());
    let s = Script::new()
        .on(
            "r1",
            &[
                r#"{"text": "a", "score": 0.5}"#,
                r#"{"text": "a", "score": 70}"#,
            ],
        )
        .on("r2", &[r#"{"text": "b", "score": 100}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(r.state.backtracks[0].to, "r1");
    assert_eq!(r.state.backtracks[0].reason, "Rubric score: 50.0");

    // An explicit score rule that matches wins over auto-backtrack.
    let wf = workflow(
        "r1",
        vec![
            rubric_node(
                "r1",
                "one",
                vec![score_rule(
                    vec![(ComparisonOperator::Lt, 70.0, "done")],
                    false,
                )],
            ),
            end("done", ExitStatus::Failure),
        ],
    );
    let s = Script::new().on("r1", &[r#"{"text": "a", "score": 10}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["r1", "done"]);
}

// Consensus boundaries

#[tokio::test]
async fn consensus_boundaries() {
    // 3 branches @0.5 need 2 approvals (2 > floor(1.5) = 1).
    let wf = parallel(
        ConsensusStrategy::MajorityVote,
        None,
        &[1.0, 1.0, 1.0],
        None,
    );
    let s = branch_script(&[
        r#"{"approved": true}"#,
        r#"{"approved": true}"#,
        r#"{"approved": false}"#,
    ]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "yes");

    // Weighted: 0-score approvals weigh nothing → ratio 0 → not reached.
    let wf = parallel(ConsensusStrategy::WeightedVote, None, &[1.0, 1.0], None);
    let s = branch_script(&[r#"{"approved": true}"#, r#"{"approved": true}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "no");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some(
            "Weighted vote: approve=0.00, reject=0.00, ratio=0.00 (threshold=0.50). Consensus not reached."
        )
    );
    // ratio exactly at the threshold is reached (>=).
    let s = branch_script(&[
        r#"{"approved": true, "score": 50}"#,
        r#"{"approved": false, "score": 50}"#,
    ]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "yes");

    // A failed branch votes REJECT with empty yields and is listed in failed_branches.
    let wf = parallel(ConsensusStrategy::Unanimous, None, &[1.0, 1.0], None);
    let mut s = Script::new();
    s.custom = Some(Arc::new(|req: &AgentRequest<'_>| {
        if req.prompt.contains(" as 1") {
            Err(AgentError::new("scripted", "down"))
        } else {
            Ok(AgentResponse::text(r#"{"approved": true}"#))
        }
    }));
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "no");
    assert_eq!(r.state.context["failed_branches"], json!(["b1"]));
    assert!(
        r.state.context["consensus_feedback:vote"]
            .as_str()
            .unwrap()
            .contains("b1 (REJECT): Branch execution failed: down")
    );

    // Per-branch timeout: a slow branch fails, the others still vote.
    let wf = parallel(ConsensusStrategy::MajorityVote, None, &[1.0], None);
    let mut s = branch_script(&[r#"{"approved": true}"#]);
    s.delay = Some(Duration::from_secs(5));
    let h = harness_with(&s, |b| {
        b.options(RunOptions {
            branch_timeout: Duration::from_millis(30),
            ..RunOptions::default()
        })
    });
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "no");
    assert_eq!(r.state.context["failed_branches"], json!(["b0"]));
}
