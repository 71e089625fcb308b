//! Sub-workflow nodes: depth limit, input/output mapping, tenant and depth propagation, failures; engine futures are Send.

use super::*;
use crate::review::Fixed;

fn sub_node(id: &str, child: &str, inputs: &[(&str, &str)], outputs: &[(&str, &str)]) -> Node {
    Node::SubWorkflow(SubWorkflowNode {
        id: id.into(),
        workflow_id: child.into(),
        input_mapping: inputs
            .iter()
            .map(|(c, p)| (c.to_string(), p.to_string()))
            .collect(),
        output_mapping: outputs
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect(),
        transition_rules: vec![success("done"), failure(Some("failed"))],
        ..SubWorkflowNode::default()
    })
}

/// w0 → w1 → … → wN, each passing `x` down and back up; wN doubles nothing and just ends.
fn chain(n: usize) -> (Workflow, MapRepository) {
    let mut repo = MapRepository::new();
    let mut first = None;
    for i in 0..=n {
        let mut wf = if i < n {
            workflow(
                "call",
                vec![
                    sub_node("call", &format!("w{}", i + 1), &[("x", "x")], &[("x", "x")]),
                    end("done", ExitStatus::Success),
                    end("failed", ExitStatus::Failure),
                ],
            )
        } else {
            workflow("done", vec![end("done", ExitStatus::Success)])
        };
        wf.id = format!("w{i}");
        if i == 0 {
            first = Some(wf.clone());
        }
        repo.insert(wf);
    }
    (first.unwrap(), repo)
}

#[tokio::test]
async fn sub_workflow_depth_16_passes_and_17_fails() {
    let (w0, repo) = chain(16);
    let h = harness_with(&Script::new(), |b| b.workflows(Arc::new(repo)));
    let r = h.run(&w0, json!({"x": 7})).await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(r.state.context["x"], json!(7));

    let (w0, repo) = chain(17);
    let h = harness_with(&Script::new(), |b| b.workflows(Arc::new(repo)));
    let r = h.run(&w0, json!({"x": 7})).await;
    assert_eq!(
        failed(&r).to_string(),
        "sub-workflow node 'call': maximum sub-workflow depth 16 exceeded: this workflow already runs at depth 16, so it cannot start 'w17'"
    );
}

#[tokio::test]
async fn sub_workflow_maps_inputs_and_outputs_and_propagates_tenant_and_depth() {
    let mut child = workflow(
        "work",
        vec![
            node(
                "work",
                "Child sees {draft}/{secret}/{_tenant_id}/{_sub_workflow_depth}",
                &["summary"],
                vec![success("end")],
            ),
            end("end", ExitStatus::Failure),
        ],
    );
    child.id = "child".into();
    let parent = workflow(
        "call",
        vec![
            sub_node(
                "call",
                "child",
                &[("draft", "notes")],
                &[("tl_dr", "summary"), ("nothing", "absent")],
            ),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let repo: MapRepository = [child].into_iter().collect();
    let s = Script::new().on("work", &["short"]);
    let h = harness_with(&s, |b| b.workflows(Arc::new(repo)));
    let r = h
        .run(
            &parent,
            json!({"notes": "N", "secret": "S", "_tenant_id": "acme"}),
        )
        .await;
    // A child ending at a FAILURE end node still makes the parent node SUCCESS.
    assert_eq!(completed(&r).1, "done");
    assert!(s.prompts_of("work")[0].starts_with("Child sees N//acme/1\n"));
    assert_eq!(r.state.context["tl_dr"], json!("short"));
    assert_eq!(r.state.context["nothing"], Value::Null);
    assert!(!r.state.context.contains_key("summary"), "no leakage");
    assert!(!r.state.context.contains_key("_sub_workflow_depth"));

    // A missing input is an error naming the parent key.
    let r = h.run(&parent, json!({"secret": "S"})).await;
    assert_eq!(
        failed(&r).to_string(),
        "sub-workflow node 'call': Missing input: notes"
    );
}

#[tokio::test]
async fn rejected_child_fails_the_node_and_unknown_children_are_named() {
    let mut child = workflow(
        "work",
        vec![
            node("work", "x", &[], vec![success("end")]),
            end("end", ExitStatus::Success),
        ],
    );
    if let Some(Node::Standard(s)) = child.nodes.get_mut("work") {
        s.review_config = Some(ReviewConfig {
            mode: ReviewMode::Required,
            allow_backtrack: false,
            allow_edit: false,
        });
    }
    child.id = "child".into();
    let parent = workflow(
        "call",
        vec![
            sub_node("call", "child", &[], &[]),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let repo: MapRepository = [child].into_iter().collect();
    let h = harness_with(&Script::new(), |b| {
        b.workflows(Arc::new(repo))
            .review_handler(Arc::new(Fixed(ReviewDecision::Reject {
                reason: "nope".into(),
            })))
    });
    let r = h.run(&parent, json!({})).await;
    assert_eq!(completed(&r).1, "failed");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("Sub-workflow failed: 'child' was rejected: nope")
    );

    let h = harness_with(&Script::new(), |b| {
        b.workflows(Arc::new(MapRepository::new()))
    });
    let r = h.run(&parent, json!({})).await;
    assert_eq!(
        failed(&r).to_string(),
        "sub-workflow node 'call': Sub-workflow not found: child"
    );
}

#[tokio::test]
async fn engine_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let h = harness(&Script::new());
    let wf = workflow("done", vec![end("done", ExitStatus::Success)]);
    let cancel = CancelToken::new();
    let fut = h.engine.run(&wf, Context::default(), h.ctx(&cancel));
    assert_send(&fut);
    fut.await;
}
