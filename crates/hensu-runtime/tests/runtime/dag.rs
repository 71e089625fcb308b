//! Dependency DAGs (docs/language.md, *Dependency DAGs*): parallel branches with `after` and
//! `runIf`, on tokio's paused clock (a slow agent is a scripted delay).

use super::*;

fn member(id: &str, after: &[&str], prompt: &str, yields: &[&str]) -> Branch {
    let mut b = Branch::new(id, id);
    b.prompt = Some(prompt.into());
    b.after = after.iter().map(|s| s.to_string()).collect();
    b.yields = yields.iter().map(|s| s.to_string()).collect();
    b
}

fn dag(branches: Vec<Branch>, timeout_ms: Option<u64>) -> Workflow {
    let mut wf = workflow(
        "research",
        vec![
            Node::Parallel(ParallelNode {
                id: "research".into(),
                branches,
                consensus_config: None,
                transition_rules: vec![success("done"), failure(Some("failed"))],
            }),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    if let Some(t) = timeout_ms {
        wf.timing.nodes.insert(
            "research".into(),
            NodeTiming {
                timeout_ms: Some(t),
                backoff_ms: None,
                review_deadline_ms: None,
            },
        );
    }
    wf
}

/// web ∥ papers → merge → translate (runIf "translate").
fn report(translate_if: bool) -> Vec<Branch> {
    let mut translate = member("translate", &["merge"], "Translate {merge}", &[]);
    if translate_if {
        translate.run_if = Some("translate".into());
    }
    vec![
        member("web", &[], "Search the web for {topic}", &["web_notes"]),
        member("papers", &[], "Search papers on {topic}", &[]),
        member(
            "merge",
            &["web", "papers"],
            "Merge {web_notes} | {papers}",
            &[],
        ),
        translate,
    ]
}

fn slow_script() -> Script {
    Script::new()
        .on("web", &[r#"{"web_notes": "W"}"#])
        .on("papers", &["P"])
        .on("merge", &["M"])
        .on("translate", &["T"])
        .delay_on("web", Duration::from_secs(2))
        .delay_on("papers", Duration::from_secs(3))
        .delay_on("merge", Duration::from_secs(1))
        .delay_on("translate", Duration::from_secs(1))
}

fn output_of(r: &RunResult, node: &str) -> Value {
    let entry = r
        .state
        .history
        .iter()
        .find(|h| h.node_id == node)
        .expect("the node ran");
    entry.output.clone().unwrap_or(Value::Null)
}

#[tokio::test(start_paused = true)]
async fn independent_branches_run_together_and_a_dependent_starts_when_all_finished() {
    let s = slow_script();
    let h = harness(&s);
    let started = tokio::time::Instant::now();
    let r = h
        .run(&dag(report(false), None), json!({"topic": "T"}))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    // web and papers together (3 s), then merge (1 s), then translate (1 s).
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    let asked: Vec<String> = s.prompts().into_iter().map(|(_, p)| p).collect();
    let first_word = |p: &String| p.split_whitespace().next().unwrap_or("").to_string();
    let order: Vec<String> = asked.iter().map(first_word).collect();
    assert_eq!(
        order[2..],
        ["Merge", "Translate"],
        "dependents after their dependencies"
    );
    let merge = &asked[2];
    assert!(
        merge.starts_with("Merge W | P"),
        "a dependent sees its dependencies' yields and outputs: {merge}"
    );
    assert!(asked[3].starts_with("Translate M"), "{}", asked[3]);
    let out = output_of(&r, "research");
    assert_eq!(out["merge"], "M");
    assert_eq!(out["translate"], "T");
    assert_eq!(
        r.state.context["web_notes"], "W",
        "yields reach the run's context"
    );
}

#[tokio::test(start_paused = true)]
async fn dependents_of_a_failed_branch_fail_naming_it_and_the_others_keep_running() {
    let s = slow_script().fail("web", "boom");
    let h = harness(&s);
    let r = h
        .run(&dag(report(false), None), json!({"topic": "T"}))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    let asked: Vec<String> = s.prompts().into_iter().map(|(_, p)| p).collect();
    assert_eq!(asked.len(), 2, "only web and papers were asked: {asked:?}");
    let entry = r
        .state
        .history
        .iter()
        .find(|h| h.node_id == "research")
        .unwrap();
    assert_eq!(
        entry.error.as_deref(),
        Some(
            "web: Branch execution failed: boom; merge: Dependency 'web' failed; translate: Dependency 'merge' failed"
        )
    );
    let out = output_of(&r, "research");
    assert_eq!(out["papers"], "P", "the independent branch finished");
    assert_eq!(
        out["merge"],
        "FailureMarker[message=Dependency 'web' failed]"
    );
    assert_eq!(
        r.state.context["failed_branches"],
        json!(["web", "merge", "translate"])
    );
    let not_run: Vec<(Value, Value, Value)> = h
        .events_of("branch_skipped")
        .into_iter()
        .map(|e| {
            (
                e["branch_id"].clone(),
                e["success"].clone(),
                e["reason"].clone(),
            )
        })
        .collect();
    assert_eq!(
        not_run,
        [
            (
                json!("merge"),
                json!(false),
                json!("Dependency 'web' failed")
            ),
            (
                json!("translate"),
                json!(false),
                json!("Dependency 'merge' failed")
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_false_run_if_skips_the_branch_and_its_dependents_see_skipped() {
    let mut branches = report(true);
    branches.push(member(
        "publish",
        &["translate"],
        "Publish {translate}",
        &[],
    ));
    let s = slow_script().on("publish", &["done"]);
    let h = harness(&s);
    let r = h
        .run(
            &dag(branches.clone(), None),
            json!({"topic": "T", "translate": false}),
        )
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    let out = output_of(&r, "research");
    assert_eq!(out["translate"], "SKIPPED");
    let skipped = h.events_of("branch_skipped");
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["branch_id"], "translate");
    assert_eq!(skipped[0]["success"], true);
    assert_eq!(skipped[0]["reason"], "runIf flag `translate` is not true");
    assert!(
        s.prompts().iter().all(|(_, p)| !p.starts_with("Translate")),
        "the skipped branch asked no agent"
    );
    assert!(
        s.prompts()
            .iter()
            .any(|(_, p)| p.starts_with("Publish SKIPPED")),
        "SKIPPED is passed on: {:?}",
        s.prompts()
    );

    let s = slow_script().on("publish", &["done"]);
    let r = harness(&s)
        .run(
            &dag(branches, None),
            json!({"topic": "T", "translate": true}),
        )
        .await;
    assert_eq!(
        output_of(&r, "research")["translate"],
        "T",
        "a true flag runs it"
    );
}

#[tokio::test(start_paused = true)]
async fn the_block_timeout_fails_the_node_with_the_results_collected_so_far() {
    let s = slow_script().delay_on("papers", Duration::from_secs(60));
    let h = harness(&s);
    let started = tokio::time::Instant::now();
    let r = h
        .run(&dag(report(false), Some(10_000)), json!({"topic": "T"}))
        .await;
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(10),
        "one timeout for the block"
    );
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    let entry = r
        .state
        .history
        .iter()
        .find(|h| h.node_id == "research")
        .unwrap();
    assert_eq!(
        entry.error.as_deref(),
        Some("timed out after 10s (not finished: papers, merge, translate)")
    );
    let out = output_of(&r, "research");
    assert_eq!(
        out,
        json!({"web": r#"{"web_notes": "W"}"#}),
        "what finished is kept"
    );
    assert_eq!(r.state.context["web_notes"], "W");
}

/// Records the key of each settled branch.
#[derive(Default)]
struct Settled(Mutex<Vec<String>>);

#[async_trait]
impl Checkpointer for Settled {
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
        _frames: &[NestedFrame],
        _node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        self.0.lock().unwrap().push(branch.key().to_string());
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn settled_branches_are_recorded_and_a_resumed_node_runs_only_the_rest() {
    let wf = dag(report(true), None);
    let input = json!({"topic": "T", "translate": false});
    let log = Settled::default();
    let first = slow_script();
    let h = harness(&first);
    let cancel = CancelToken::new();
    let clean = h
        .engine
        .run(&wf, ctx(input.clone()), h.ctx(&cancel).checkpointer(&log))
        .await;
    assert_eq!(completed(&clean).1, "done");
    assert_eq!(
        *log.0.lock().unwrap(),
        ["web", "papers", "merge", "translate"],
        "every settled branch, the skipped one too, in the order they settled"
    );

    // A run stopped while merge ran: web and papers recorded.
    let recorded = |id: &str, output: &str, yields: &[(&str, &str)]| BranchOutcome {
        id: id.into(),
        success: true,
        output: Some(output.into()),
        error: None,
        yields: yields
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect(),
    };
    let mut state = RunState::new("x".into(), wf.id.clone(), "research".into(), ctx(input));
    state.nested = Some(Box::new(Nested::Parallel {
        node_id: "research".into(),
        finished: vec![
            recorded("papers", "P", &[]),
            recorded("web", r#"{"web_notes": "W"}"#, &[("web_notes", "W")]),
        ],
    }));
    let second = slow_script();
    let h = harness(&second);
    let p = h.engine.prepare(Arc::new(wf.clone())).unwrap();
    let r = h
        .engine
        .resume(&p, state, None, h.ctx(&CancelToken::new()))
        .await;
    assert_eq!(completed(&r), completed(&clean));
    let asked: Vec<String> = second.prompts().into_iter().map(|(_, p)| p).collect();
    assert_eq!(asked.len(), 1, "only merge runs again: {asked:?}");
    assert!(asked[0].starts_with("Merge W | P"), "{}", asked[0]);
    assert_eq!(r.state.context, clean.state.context);
    assert_eq!(output_of(&r, "research"), output_of(&clean, "research"));
}

/// A cycle or an unknown dependency (E0313, E0312: refused before a run, but an engine given
/// such IR directly must not wait forever): the branches of the cycle fail, an unknown name is
/// no dependency.
#[tokio::test(start_paused = true)]
async fn a_dependency_cycle_fails_its_branches_instead_of_waiting_forever() {
    let branches = vec![
        member("a", &["b"], "A", &[]),
        member("b", &["a"], "B", &[]),
        member("c", &["nowhere"], "C", &[]),
    ];
    let s = Script::new();
    let r = harness(&s).run(&dag(branches, None), json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    let out = output_of(&r, "research");
    assert_eq!(out["c"], "ok", "the unknown name is no dependency");
    assert_eq!(
        out["a"],
        "FailureMarker[message=Dependency cycle: the branch waits for itself]"
    );
    assert_eq!(s.prompts().len(), 1);
}
