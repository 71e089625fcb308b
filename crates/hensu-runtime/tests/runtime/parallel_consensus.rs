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

/// A hook that records finished branches: `(node, branch key)` as told.
#[derive(Default)]
struct BranchLog(Mutex<Vec<(String, String)>>);

#[async_trait]
impl Checkpointer for BranchLog {
    async fn record_step(&self, _state: &RunState) -> Result<Boundary, RuntimeError> {
        Ok(Boundary::Continue)
    }
    async fn record_nested(
        &self,
        _frames: &[NestedFrame],
        _state: &RunState,
    ) -> Result<Boundary, RuntimeError> {
        Ok(Boundary::Continue)
    }
    async fn record_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        assert!(frames.is_empty(), "the main flow");
        self.0
            .lock()
            .unwrap()
            .push((node_id.to_string(), branch.key().to_string()));
        Ok(())
    }
}

/// Branches are told to a recording hook as they finish (not in declaration order), and a
/// state holding recorded outcomes runs only the other branches, with the same consensus.
#[tokio::test(start_paused = true)]
async fn finished_branches_are_recorded_as_they_finish_and_not_run_again() {
    let wf = parallel(
        ConsensusStrategy::MajorityVote,
        None,
        &[1.0, 1.0, 1.0],
        None,
    );
    let script = || {
        branch_script(&[
            r#"{"score": 90, "approved": true, "notes0": "a"}"#,
            r#"{"score": 10, "approved": false, "notes1": "b"}"#,
            r#"{"score": 80, "approved": true, "notes2": "c"}"#,
        ])
        .delay_on("r0", Duration::from_secs(3))
        .delay_on("r1", Duration::from_secs(1))
        .delay_on("r2", Duration::from_secs(2))
    };
    let log = BranchLog::default();
    let first = script();
    let h = harness(&first);
    let cancel = CancelToken::new();
    let clean = h
        .engine
        .run(
            &wf,
            ctx(json!({"draft": "D"})),
            h.ctx(&cancel).checkpointer(&log),
        )
        .await;
    assert_eq!(completed(&clean).1, "yes");
    let told: Vec<String> = log
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|(_, k)| k.clone())
        .collect();
    assert_eq!(told, ["b1", "b2", "b0"], "in the order they finished");

    // A run stopped after b1 finished: its state at the node, with b1's outcome recorded.
    let outcome = BranchOutcome {
        id: "b1".into(),
        success: true,
        output: Some(r#"{"score": 10, "approved": false, "notes1": "b"}"#.into()),
        error: None,
        yields: [
            ("notes1".to_string(), json!("b")),
            ("score".to_string(), json!(10)),
            ("approved".to_string(), json!(false)),
        ]
        .into_iter()
        .collect(),
    };
    let mut state = RunState::new(
        "x".into(),
        wf.id.clone(),
        "vote".into(),
        ctx(json!({"draft": "D"})),
    );
    state.nested = Some(Box::new(Nested::Parallel {
        node_id: "vote".into(),
        finished: vec![outcome],
    }));
    let second = script();
    let h = harness(&second);
    let p = h.engine.prepare(Arc::new(wf.clone())).unwrap();
    let r = h
        .engine
        .resume(&p, state, None, h.ctx(&CancelToken::new()))
        .await;
    assert_eq!(completed(&r), completed(&clean));
    let asked: Vec<bool> = (0..3)
        .map(|i| {
            second
                .prompts()
                .iter()
                .any(|(_, p)| p.contains(&format!(" as {i}")))
        })
        .collect();
    assert_eq!(asked, [true, false, true], "b1 was not asked again");
    assert_eq!(r.state.context, clean.state.context);
    assert_eq!(
        r.state.history.last().unwrap().output,
        clean.state.history.last().unwrap().output
    );
}
