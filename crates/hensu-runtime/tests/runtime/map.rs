//! Map nodes (docs/language.md, *Map over a list*): an agent per item of a list, at most
//! `maxParallel` at a time, the answers in the list's order, the failure policies and the
//! per-item records of a durable run; on tokio's paused clock (an item `name:N` takes N
//! seconds, an item starting with `bad` fails).

use super::*;

/// Answers `Summarize <item>` with `S(<item>)` after the item's delay; counts the items in
/// flight.
#[derive(Default)]
struct Items {
    asked: Mutex<Vec<String>>,
    in_flight: Mutex<(usize, usize)>,
}

struct ItemAgent {
    config: AgentConfig,
    items: Arc<Items>,
}

#[async_trait]
impl Agent for ItemAgent {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn config(&self) -> &AgentConfig {
        &self.config
    }
    async fn execute(&self, req: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        // The first line: a child's standard node appends its output requirement.
        let first = req.prompt.lines().next().unwrap_or("");
        let item = first
            .strip_prefix("Summarize ")
            .unwrap_or(first)
            .to_string();
        self.items.asked.lock().unwrap().push(item.clone());
        {
            let mut f = self.items.in_flight.lock().unwrap();
            f.0 += 1;
            f.1 = f.1.max(f.0);
        }
        let secs = item
            .split(':')
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        tokio::time::sleep(Duration::from_secs(secs)).await;
        self.items.in_flight.lock().unwrap().0 -= 1;
        if item.starts_with("bad") {
            return Err(AgentError::new("scripted", format!("cannot read {item}")));
        }
        Ok(AgentResponse::text(format!("S({item})")))
    }
}

struct ItemProvider(Arc<Items>);

impl AgentProvider for ItemProvider {
    fn name(&self) -> &str {
        "items"
    }
    fn supports_model(&self, _m: &str) -> bool {
        true
    }
    fn priority(&self) -> i32 {
        3000
    }
    fn create_agent(
        &self,
        config: &AgentConfig,
        _c: &std::collections::HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(ItemAgent {
            config: config.clone(),
            items: self.0.clone(),
        }))
    }
}

fn items_harness() -> (Harness, Arc<Items>) {
    let items = Arc::new(Items::default());
    let provider = Arc::new(ItemProvider(items.clone()));
    (
        harness_with(&Script::new(), |b| b.provider(provider)),
        items,
    )
}

fn map_wf(max_parallel: i64, max_items: Option<i64>, policy: ItemFailure) -> Workflow {
    workflow(
        "summarize",
        vec![
            Node::Map(MapNode {
                id: "summarize".into(),
                over: "papers".into(),
                agent_id: Some("summarizer".into()),
                prompt: Some("Summarize {item} #{index}".into()),
                target: None,
                result: None,
                max_parallel,
                max_items,
                on_item_failure: policy,
                writes: vec!["summaries".into()],
                transition_rules: vec![success("done"), failure(Some("failed"))],
            }),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    )
}

fn history_of<'r>(r: &'r RunResult, node: &str) -> &'r HistoryStep {
    r.state
        .history
        .iter()
        .find(|h| h.node_id == node)
        .expect("the node ran")
}

#[tokio::test(start_paused = true)]
async fn items_run_max_parallel_at_a_time_and_gather_in_list_order() {
    let (h, items) = items_harness();
    let started = tokio::time::Instant::now();
    let papers = json!(["a:4", "b:1", "c:1", "d:1", "e:2"]);
    let r = h
        .run(
            &map_wf(2, Some(10), ItemFailure::Fail),
            json!({ "papers": papers }),
        )
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    // a runs 4 s beside b, c, d (1 s each, one after the other), then e (2 s) after d.
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(items.in_flight.lock().unwrap().1, 2, "never more than 2");
    assert_eq!(
        *items.asked.lock().unwrap(),
        ["a:4 #0", "b:1 #1", "c:1 #2", "d:1 #3", "e:2 #4"],
        "started in list order, `{{index}}` is the position"
    );
    let gathered = json!([
        "S(a:4 #0)",
        "S(b:1 #1)",
        "S(c:1 #2)",
        "S(d:1 #3)",
        "S(e:2 #4)"
    ]);
    assert_eq!(
        r.state.context["summaries"], gathered,
        "in the list's order, not the order they finished"
    );
    assert_eq!(history_of(&r, "summarize").output, Some(gathered));
    let settled: Vec<u64> = h
        .events_of("item_settled")
        .iter()
        .map(|e| e["index"].as_u64().unwrap())
        .collect();
    assert_eq!(settled, [1, 2, 3, 0, 4], "one event per item as it settles");
}

#[tokio::test(start_paused = true)]
async fn a_failed_item_fails_the_node_and_starts_no_further_item() {
    let (h, items) = items_harness();
    let r = h
        .run(
            &map_wf(1, Some(10), ItemFailure::Fail),
            json!({"papers": ["a", "bad", "c"]}),
        )
        .await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    assert_eq!(items.asked.lock().unwrap().len(), 2, "c never started");
    assert_eq!(
        history_of(&r, "summarize").error.as_deref(),
        Some("item 1: cannot read bad #1; 1 items not run")
    );
    assert!(
        r.state.context.get("summaries").is_none(),
        "a failed map writes nothing"
    );
    assert_eq!(
        r.state.context["failed_items"],
        json!([{"index": 1, "item": "bad", "error": "cannot read bad #1"}])
    );
}

#[tokio::test(start_paused = true)]
async fn skip_leaves_failed_items_out_and_collect_keeps_their_place() {
    let input = json!({"papers": ["a", "bad", "c"]});
    let (h, _) = items_harness();
    let r = h
        .run(&map_wf(3, Some(10), ItemFailure::Skip), input.clone())
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(r.state.context["summaries"], json!(["S(a #0)", "S(c #2)"]));
    assert_eq!(r.state.context["failed_items"][0]["index"], 1);

    let (h, _) = items_harness();
    let r = h
        .run(&map_wf(3, Some(10), ItemFailure::Collect), input)
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        r.state.context["summaries"],
        json!(["S(a #0)", null, "S(c #2)"])
    );
    assert_eq!(
        r.state.context["failed_items"][0]["error"],
        "cannot read bad #1"
    );
}

#[tokio::test(start_paused = true)]
async fn a_list_longer_than_max_items_or_no_list_fails_the_node_before_any_call() {
    let (h, items) = items_harness();
    let r = h
        .run(
            &map_wf(2, Some(2), ItemFailure::Fail),
            json!({"papers": ["a", "b", "c"]}),
        )
        .await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    assert_eq!(
        history_of(&r, "summarize").error.as_deref(),
        Some("Map over `papers` failed: the list has 3 items, maxItems is 2")
    );
    let r = h
        .run(&map_wf(2, None, ItemFailure::Fail), json!({"papers": 4}))
        .await;
    assert_eq!(
        history_of(&r, "summarize").error.as_deref(),
        Some("Map over `papers` failed: `papers` is not a list: a number")
    );
    let r = h
        .run(
            &map_wf(2, None, ItemFailure::Fail),
            json!({"papers": "[\"x\"]"}),
        )
        .await;
    assert_eq!(
        r.state.context["summaries"],
        json!(["S(x #0)"]),
        "a JSON text is a list"
    );
    assert_eq!(items.asked.lock().unwrap().len(), 1);
    let r = h
        .run(&map_wf(2, None, ItemFailure::Fail), json!({"papers": []}))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        r.state.context["summaries"],
        json!([]),
        "an empty list maps to an empty one"
    );
}

/// Records the key of each settled item.
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
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        assert_eq!(node_id, "summarize");
        self.0.lock().unwrap().push(branch.key().to_string());
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn settled_items_are_recorded_and_a_resumed_node_runs_only_the_rest() {
    let wf = map_wf(2, Some(10), ItemFailure::Fail);
    let input = json!({"papers": ["a:3", "b:1", "c:1", "d:1"]});
    let log = Settled::default();
    let (h, _) = items_harness();
    let cancel = CancelToken::new();
    let clean = h
        .engine
        .run(&wf, ctx(input.clone()), h.ctx(&cancel).checkpointer(&log))
        .await;
    assert_eq!(completed(&clean).1, "done");
    assert_eq!(
        *log.0.lock().unwrap(),
        ["1", "2", "0", "3"],
        "as they settled"
    );

    // Stopped while a and d ran: b and c recorded.
    let recorded = |id: &str, output: &str| BranchOutcome {
        id: id.into(),
        success: true,
        output: Some(output.into()),
        error: None,
        yields: IndexMap::new(),
    };
    let mut state = RunState::new("x".into(), wf.id.clone(), "summarize".into(), ctx(input));
    state.nested = Some(Box::new(Nested::Parallel {
        node_id: "summarize".into(),
        finished: vec![recorded("1", "S(b:1 #1)"), recorded("2", "S(c:1 #2)")],
    }));
    let (h, items) = items_harness();
    let p = h.engine.prepare(Arc::new(wf.clone())).unwrap();
    let r = h
        .engine
        .resume(&p, state, None, h.ctx(&CancelToken::new()))
        .await;
    assert_eq!(completed(&r), completed(&clean));
    assert_eq!(
        *items.asked.lock().unwrap(),
        ["a:3 #0", "d:1 #3"],
        "only the unrecorded items run again"
    );
    assert_eq!(
        r.state.context["summaries"],
        clean.state.context["summaries"]
    );
}

/// A sub-workflow body: the child runs once per item on `item` and `index`, its `result`
/// variable is the item's answer, gathered in order; a child that fails fails its item.
#[tokio::test(start_paused = true)]
async fn a_sub_workflow_body_runs_the_child_per_item_and_gathers_its_result() {
    let mut child = workflow(
        "work",
        vec![
            node(
                "work",
                "Summarize {item} #{index}",
                &["summary"],
                vec![success("done")],
            ),
            end("done", ExitStatus::Success),
        ],
    );
    child.id = "one".into();
    let mut wf = map_wf(2, Some(10), ItemFailure::Collect);
    if let Some(Node::Map(m)) = wf.nodes.get_mut("summarize") {
        m.agent_id = None;
        m.prompt = None;
        m.target = Some("one".into());
        m.result = Some("summary".into());
    }
    let items = Arc::new(Items::default());
    let provider = Arc::new(ItemProvider(items.clone()));
    let repo: MapRepository = [child].into_iter().collect();
    let h = harness_with(&Script::new(), |b| {
        b.provider(provider).workflows(Arc::new(repo))
    });
    let r = h.run(&wf, json!({"papers": ["a:2", "bad", "c:1"]})).await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        r.state.context["summaries"],
        json!(["S(a:2 #0)", null, "S(c:1 #2)"]),
        "in order; the failed child keeps its place under COLLECT"
    );
    assert_eq!(*items.asked.lock().unwrap(), ["a:2 #0", "bad #1", "c:1 #2"]);
    // The child's failed node has no failure route: its run fails, and with it the item.
    assert_eq!(r.state.context["failed_items"][0]["index"], 1);
    let error = r.state.context["failed_items"][0]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("No valid transition from work"), "{error}");

    // An unknown child fails every item, naming it.
    let h = harness_with(&Script::new(), |b| {
        b.workflows(Arc::new(MapRepository::new()))
    });
    let r = h.run(&wf, json!({"papers": ["x"]})).await;
    let error = r.state.context["failed_items"][0]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("Sub-workflow not found: one"), "{error}");
}
