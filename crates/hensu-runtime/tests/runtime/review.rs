//! Review decisions: approve, reject, backtrack (the deferred and interactive reviewers, which
//! pause runs and talk to a terminal, are tested in hensu-host).

use super::*;

// Review decisions

pub(crate) struct Fixed(pub(crate) ReviewDecision);

#[async_trait]
impl ReviewHandler for Fixed {
    async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
        ReviewOutcome::Decided(self.0.clone())
    }
}

#[tokio::test]
async fn reviewer_verdict_outranks_the_agents_approved() {
    let wf = reviewed(approval_arms(), ReviewMode::Required);
    let s = Script::new().on("plan", &[r#"{"plan": "P", "approved": false}"#]);
    let h = harness_with(&s, |b| {
        b.review_handler(Arc::new(Fixed(ReviewDecision::Approve {
            edits: Some(ctx(json!({"note": "edited"}))),
        })))
    });
    let r = h.run(&wf, json!({"goal": "G"})).await;
    assert_eq!(path(&r), ["intro", "plan", "exec", "done"]);
    assert_eq!(s.prompts_of("exec"), ["Run P edited"]);
    let t = &h.events_of("transition_taken")[1];
    assert_eq!(t["cause"]["from_review"], json!(true));
}

#[tokio::test]
async fn reject_routes_through_an_arm_or_ends_the_run() {
    let reject = || {
        Arc::new(Fixed(ReviewDecision::Reject {
            reason: "too vague".into(),
        }))
    };
    let wf = reviewed(approval_arms(), ReviewMode::Required);
    let s = Script::new().on("plan", &[r#"{"plan": "P", "approved": true}"#]);
    let r = harness_with(&s, |b| b.review_handler(reject()))
        .run(&wf, json!({"goal": "G"}))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Cancel, "cancelled".into()));
    assert_eq!(r.state.context["recommendation"], json!("too vague"));

    // Without an onRejection arm the rejection is terminal.
    let wf = reviewed(vec![success("exec")], ReviewMode::Required);
    let r = harness_with(&s, |b| b.review_handler(reject()))
        .run(&wf, json!({"goal": "G"}))
        .await;
    assert_eq!(
        r.outcome,
        RunOutcome::Rejected {
            reason: "too vague".into()
        }
    );
    assert_eq!(r.state.phase, ExecutionPhase::Terminal);

    // Approve on a node without approval arms: its success rule fires.
    let r = harness(&s).run(&wf, json!({"goal": "G"})).await;
    assert_eq!(path(&r), ["intro", "plan", "exec", "done"]);
}

#[tokio::test]
async fn backtrack_goes_to_the_target_with_the_reason_as_feedback() {
    let wf = reviewed(approval_arms(), ReviewMode::Required);
    let s = Script::new().on("plan", &[r#"{"plan": "P"}"#]);
    let calls = Arc::new(Mutex::new(0));
    struct Once(Arc<Mutex<i32>>);
    #[async_trait]
    impl ReviewHandler for Once {
        async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
            let mut n = self.0.lock().unwrap();
            *n += 1;
            ReviewOutcome::Decided(if *n == 1 {
                ReviewDecision::Backtrack {
                    target: "intro".into(),
                    edits: Some(ctx(json!({"goal": "G2"}))),
                    reason: "start over".into(),
                }
            } else {
                ReviewDecision::Approve { edits: None }
            })
        }
    }
    let h = harness_with(&s, |b| b.review_handler(Arc::new(Once(calls.clone()))));
    let r = h.run(&wf, json!({"goal": "G"})).await;
    assert_eq!(path(&r), ["intro", "plan", "intro", "plan", "exec", "done"]);
    assert_eq!(r.state.backtracks[0].kind, BacktrackKind::Manual);
    assert_eq!(r.state.backtracks[0].reason, "start over");
    assert!(s.prompts_of("intro")[1].contains("### Previous Feedback\nstart over"));
    assert_eq!(s.prompts_of("plan")[1].lines().next(), Some("Plan G2"));
}
