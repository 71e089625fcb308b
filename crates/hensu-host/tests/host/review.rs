//! The host's reviewers: optional reviews, pending reviews that pause and resume (deferred), and
//! the interactive terminal reviewer.

use super::*;
use hensu_host::{DeferredReview, InteractiveReview, PendingReview};

#[tokio::test]
async fn optional_review_only_asks_on_failure() {
    let wf = reviewed(
        vec![success("exec"), failure(Some("cancelled"))],
        ReviewMode::Optional,
    );
    let asked = Arc::new(Mutex::new(Vec::<PendingReview>::new()));
    let sink = asked.clone();
    let handler = Arc::new(DeferredReview::with_sink(move |p| {
        sink.lock().unwrap().push(p.clone())
    }));
    let s = Script::new().on("plan", &["P"]);
    let r = harness_with(&s, |b| b.review_handler(handler.clone()))
        .run(&wf, json!({"goal": "G"}))
        .await;
    assert_eq!(completed(&r).1, "done");
    assert!(asked.lock().unwrap().is_empty());

    let s = Script::new().fail("plan", "boom");
    let r = harness_with(&s, |b| b.review_handler(handler.clone()))
        .run(&wf, json!({"goal": "G"}))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(asked.lock().unwrap()[0].node_id, "plan");
}

#[tokio::test]
async fn pending_review_pauses_and_resumes_from_a_serialized_state() {
    let wf = Arc::new(reviewed(approval_arms(), ReviewMode::Required));
    let s = Script::new().on("plan", &[r#"{"plan": "P"}"#]);
    let h = harness_with(&s, |b| b.review_handler(Arc::new(DeferredReview::new())));
    let prepared = h.engine.prepare(wf.clone()).unwrap();
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run_prepared(&prepared, ctx(json!({"goal": "G"})), RunCtx::new(&cancel))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    let (node, corr) = pending_review(&r.state).unwrap();
    assert_eq!(node, "plan");
    assert!(corr.starts_with("review-"));
    assert_eq!(r.state.history.len(), 1, "plan is not in the history yet");
    // The durable store round-trips the state through JSON.
    let saved = serde_json::to_string(&r.state).unwrap();
    let state: RunState = serde_json::from_str(&saved).unwrap();

    // Resume without a decision: the review waits on with the same correlation id (the
    // handler is not asked again; docs/server.md, *Pending reviews*).
    let again = h
        .engine
        .resume(&prepared, state.clone(), None, RunCtx::new(&cancel))
        .await;
    assert_eq!(again.outcome, RunOutcome::Paused);
    assert_eq!(pending_review(&again.state).unwrap(), ("plan", corr));
    assert_eq!(
        again.state.phase, state.phase,
        "same request time and deadline"
    );

    let ok = h
        .engine
        .resume(
            &prepared,
            state.clone(),
            Some(ReviewDecision::Approve { edits: None }),
            RunCtx::new(&cancel),
        )
        .await;
    assert_eq!(path(&ok), ["intro", "plan", "exec", "done"]);
    assert_eq!(
        s.prompts_of("plan").len(),
        1,
        "the agent is not called again"
    );
    assert_eq!(s.prompts_of("exec"), ["Run P "]);

    let rejected = h
        .engine
        .resume(
            &prepared,
            state.clone(),
            Some(ReviewDecision::Reject {
                reason: "no".into(),
            }),
            RunCtx::new(&cancel),
        )
        .await;
    assert_eq!(completed(&rejected).1, "cancelled");

    let back = h
        .engine
        .resume(
            &prepared,
            state,
            Some(ReviewDecision::Backtrack {
                target: "intro".into(),
                edits: None,
                reason: "again".into(),
            }),
            RunCtx::new(&cancel),
        )
        .await;
    // Back to intro, then plan pauses again.
    assert_eq!(back.outcome, RunOutcome::Paused);
    assert_eq!(back.state.path(), ["intro", "plan", "intro"]);

    // A finished state cannot be resumed.
    let done = h
        .engine
        .resume(&prepared, ok.state, None, h.ctx(&cancel))
        .await;
    assert_eq!(failed(&done), RuntimeError::AlreadyTerminal);
}

// Interactive terminal reviewer (piped input)

#[derive(Clone, Default)]
struct Out(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Out {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Out {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

async fn interactive(input: &str, editor: Option<&str>) -> (RunResult, String, Script) {
    let wf = reviewed(approval_arms(), ReviewMode::Required);
    let out = Out::default();
    let mut reviewer = InteractiveReview::new(std::io::Cursor::new(input.to_string()), out.clone());
    if let Some(e) = editor {
        reviewer = reviewer.with_editor(e);
    }
    let s = Script::new().on("plan", &[r#"{"plan": "old plan"}"#]);
    let r = harness_with(&s, |b| b.review_handler(Arc::new(reviewer)))
        .run(&wf, json!({"goal": "G"}))
        .await;
    (r, out.text(), s)
}

#[tokio::test]
async fn interactive_review_approve_reject_backtrack_and_eof() {
    let (r, out, _) = interactive("a\n", None).await;
    assert_eq!(completed(&r).1, "done");
    assert!(
        out.contains("── review of node 'plan' (REQUIRED) ──"),
        "{out}"
    );
    assert!(out.contains("  {\"plan\": \"old plan\"}"));
    assert!(out.contains("[a] approve  [r] reject  [b] backtrack  [e] edit context > "));

    let (r, _, _) = interactive("what\nr\nnot this\n", None).await;
    assert_eq!(completed(&r).1, "cancelled");
    assert_eq!(r.state.context["recommendation"], json!("not this"));

    // Backtrack by number (1 = intro), then approve the second review.
    let (r, out, _) = interactive("b\n1\nredo it\na\n", None).await;
    assert!(out.contains("  1. intro\n  2. plan (this node)\n"), "{out}");
    assert_eq!(path(&r), ["intro", "plan", "intro", "plan", "exec", "done"]);

    // End of input rejects; without an arm that would end the run.
    let (r, _, _) = interactive("", None).await;
    assert_eq!(completed(&r).1, "cancelled");
    assert_eq!(
        r.state.context["recommendation"],
        json!("review aborted: no reviewer input")
    );
}

#[tokio::test]
async fn interactive_review_edits_the_context_in_the_editor() {
    let (r, out, s) = interactive(
        "e\na\n",
        Some("sed -i 's/old plan/new plan/; s/\"G\"/\"G!\"/'"),
    )
    .await;
    assert!(out.contains("2 values changed: goal, plan"), "{out}");
    assert_eq!(completed(&r).1, "done");
    assert_eq!(s.prompts_of("exec"), ["Run new plan "]);
    assert_eq!(r.state.context["goal"], json!("G!"));

    // A broken edit is discarded and the reviewer is asked again.
    let (r, out, s) = interactive("e\na\n", Some("sh -c 'echo nope > \"$1\"' x")).await;
    assert!(out.contains("edit discarded: invalid JSON"), "{out}");
    assert_eq!(completed(&r).1, "done");
    assert_eq!(s.prompts_of("exec"), ["Run old plan "]);
}
