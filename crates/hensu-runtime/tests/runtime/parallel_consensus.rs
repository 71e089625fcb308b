//! Parallel nodes: majority, weighted, unanimous and judge consensus.

use super::*;

pub(crate) fn parallel(
    strategy: ConsensusStrategy,
    threshold: Option<f64>,
    weights: &[f64],
    judge: Option<&str>,
) -> Workflow {
    let branches = weights
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut b = Branch::new(format!("b{i}"), format!("r{i}"));
            b.prompt = Some(format!("Review {{draft}} as {i}"));
            b.weight = *w;
            b.yields = vec![format!("notes{i}")];
            b
        })
        .collect();
    workflow(
        "vote",
        vec![
            Node::Parallel(ParallelNode {
                id: "vote".into(),
                branches,
                consensus_config: Some(ConsensusConfig {
                    judge_agent_id: judge.map(String::from),
                    strategy,
                    threshold,
                }),
                transition_rules: vec![
                    success("yes"),
                    TransitionRule::NoConsensus {
                        target_node: "no".into(),
                        with_feedback: true,
                    },
                ],
            }),
            end("yes", ExitStatus::Success),
            end("no", ExitStatus::Failure),
        ],
    )
}

pub(crate) fn branch_script(answers: &[&str]) -> Script {
    let answers: Vec<String> = answers.iter().map(|s| s.to_string()).collect();
    let mut s = Script::new();
    s.custom = Some(Arc::new(move |req: &AgentRequest<'_>| {
        let i: usize = req
            .prompt
            .split(" as ")
            .nth(1)
            .and_then(|t| t[..1].parse().ok())
            .unwrap_or(0);
        Ok(AgentResponse::text(answers[i].clone()))
    }));
    s
}

#[tokio::test]
async fn majority_vote_strict_greater_than_floor() {
    let wf = parallel(
        ConsensusStrategy::MajorityVote,
        Some(0.5),
        &[1.0, 1.0, 1.0, 1.0],
        None,
    );
    let ok = r#"{"approved": true, "notes{}": "fine", "score": 90}"#;
    let s = branch_script(&[ok, ok, r#"{"score": 0.4}"#, r#"{"approved": false}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({"draft": "D"})).await;
    assert_eq!(completed(&r).1, "no", "4 @0.5 need 3");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some(
            "Majority vote: 2 approve, 2 reject out of 4 total (threshold=50%, required>2). Consensus not reached."
        )
    );
    assert!(
        r.state.context["consensus_feedback:vote"]
            .as_str()
            .unwrap()
            .contains("b2 (REJECT): {\"score\": 0.4}\n---\nb3 (REJECT)")
    );
    // Branch prompts were enriched with the self-scoring instructions and yields.
    let p = &s.prompts()[0].1;
    assert!(p.starts_with("Review D as "));
    assert!(p.contains(APPROVED_INSTRUCTION));
    assert!(p.contains("Engine yield requirement: your JSON response MUST include:\n  \"notes"));

    let s = branch_script(&[ok, ok, "{\"score\": 71}", "{}"]);
    let r = harness(&s).run(&wf, json!({"draft": "D"})).await;
    assert_eq!(
        completed(&r).1,
        "yes",
        "the threshold 0.5 doubles as the score cut-off: 71 approves → 3 > 2"
    );
}

#[tokio::test]
async fn majority_vote_reaches_consensus_and_merges_yields() {
    let wf = parallel(
        ConsensusStrategy::MajorityVote,
        None,
        &[1.0, 1.0, 1.0],
        None,
    );
    let s = branch_script(&[
        r#"{"approved": true, "notes0": "a"}"#,
        r#"{"score": 75, "notes1": "b"}"#,
        r#"{"approved": false, "notes2": "c"}"#,
    ]);
    let r = harness(&s).run(&wf, json!({"draft": "D"})).await;
    assert_eq!(completed(&r).1, "yes");
    for (k, v) in [("notes0", "a"), ("notes1", "b"), ("notes2", "c")] {
        assert_eq!(r.state.context[k], json!(v));
    }
    assert!(!r.state.context.contains_key("approved"));
}

#[tokio::test]
async fn weighted_and_unanimous_votes() {
    let wf = parallel(
        ConsensusStrategy::WeightedVote,
        Some(0.6),
        &[0.3, 0.3, 1.4],
        None,
    );
    let s = branch_script(&[
        r#"{"approved": false, "score": 40}"#,
        r#"{"approved": false, "score": 50}"#,
        r#"{"approved": true, "score": 90}"#,
    ]);
    let r = harness(&s).run(&wf, json!({"draft": "D"})).await;
    assert_eq!(completed(&r).1, "yes");
    let h = &r.state.history[0];
    assert_eq!(
        h.output,
        Some(json!(
            "Weighted vote: approve=126.00, reject=27.00, ratio=0.82 (threshold=0.60). Consensus reached."
        ))
    );

    let wf = parallel(ConsensusStrategy::Unanimous, None, &[1.0, 1.0], None);
    let s = branch_script(&[r#"{"approved": true}"#, r#"{"score": 69.9}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "no");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("Unanimous not reached: 1 branch(es) rejected.")
    );
}

#[tokio::test]
async fn judge_decides_merges_only_the_winner() {
    let wf = parallel(
        ConsensusStrategy::JudgeDecides,
        None,
        &[1.0, 1.0],
        Some("judge"),
    );
    let mut s = Script::new();
    s.custom = Some(Arc::new(|req: &AgentRequest<'_>| {
        if req.prompt.starts_with("You are the judge") {
            return Ok(AgentResponse::text(
                r#"{"decision": true, "winning_branch": "b1", "reasoning": "calmer"}"#,
            ));
        }
        let i = if req.prompt.contains("as 0") { 0 } else { 1 };
        Ok(AgentResponse::text(format!(
            r#"{{"notes0": "from{i}", "notes1": "from{i}", "score": 99}}"#
        )))
    }));
    let h = harness(&s);
    let r = h.run(&wf, json!({"draft": "D"})).await;
    assert_eq!(completed(&r).1, "yes");
    assert_eq!(r.state.context.get("notes1"), Some(&json!("from1")));
    assert!(
        !r.state.context.contains_key("notes0"),
        "b1 only yields notes1"
    );
    let judge_prompt = &s
        .prompts()
        .iter()
        .find(|(_, p)| p.starts_with("You are"))
        .unwrap()
        .1
        .clone();
    insta::with_settings!({ prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("runtime__judge_prompt", judge_prompt);
    });
    assert!(
        !s.prompts()[0].1.contains("\"score\" with"),
        "judge strategy: no self-scoring"
    );
}
