//! Node timeouts and retry backoff (docs/language.md, *Timeouts and backoff*), on tokio's paused
//! clock: a slow agent is a scripted delay, a wait costs no real time.

use super::*;

fn timed(
    mut wf: Workflow,
    node: &str,
    timeout_ms: Option<u64>,
    backoff_ms: Option<u64>,
) -> Workflow {
    wf.timing.nodes.insert(
        node.into(),
        NodeTiming {
            timeout_ms,
            backoff_ms,
            review_deadline_ms: None,
        },
    );
    wf
}

/// `a` retries on failure up to `budget` times, then goes to `failed`.
fn retrying(budget: i64) -> Workflow {
    workflow(
        "a",
        vec![
            node(
                "a",
                "x",
                &[],
                vec![
                    success("done"),
                    bounded(Namespace::Failure, budget, "failed", false, failure(None)),
                ],
            ),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    )
}

#[tokio::test(start_paused = true)]
async fn a_node_slower_than_its_timeout_fails_into_its_failure_route() {
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("done"), failure(Some("late"))]),
            end("done", ExitStatus::Success),
            end("late", ExitStatus::Failure),
        ],
    );
    let wf = timed(wf, "a", Some(30_000), None);
    let s = Script::new().delay_on("a", Duration::from_secs(600));
    let h = harness(&s);
    let started = tokio::time::Instant::now();
    let r = h.run(&wf, json!({})).await;
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(30),
        "abandoned at the timeout"
    );
    assert_eq!(completed(&r), (ExitStatus::Failure, "late".into()));
    let done = h.events_of("node_completed");
    assert_eq!(done[0]["status"], "FAILURE");
    assert_eq!(done[0]["error"], "timed out after 30s");
    let taken = h.events_of("transition_taken");
    assert_eq!(taken[0]["cause"]["rule"], "failure");
}

#[tokio::test(start_paused = true)]
async fn a_node_within_its_timeout_is_untouched() {
    let wf = timed(retrying(1), "a", Some(30_000), None);
    let s = Script::new().delay_on("a", Duration::from_secs(29));
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_node_without_a_failure_route_fails_the_run_naming_the_node() {
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("done")]),
            end("done", ExitStatus::Success),
        ],
    );
    let wf = timed(wf, "a", Some(1_500), None);
    let s = Script::new().delay_on("a", Duration::from_secs(60));
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert!(
        matches!(failed(&r), RuntimeError::NoValidTransition { ref node, .. } if node == "a"),
        "{:?}",
        r.outcome
    );
    assert_eq!(
        h.events_of("node_completed")[0]["error"],
        "timed out after 1500ms"
    );
    assert_eq!(
        failed(&r).to_string(),
        "No valid transition from a; rules tried: the node timed out after 1500ms; onSuccess: the node's status is FAILURE"
    );
}

#[tokio::test(start_paused = true)]
async fn timeouts_feed_retries_each_attempt_timed_on_its_own() {
    let wf = timed(retrying(2), "a", Some(1_000), None);
    let s = Script::new().delay_on("a", Duration::from_secs(60));
    let h = harness(&s);
    let started = tokio::time::Instant::now();
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    assert_eq!(path(&r), ["a", "a", "a", "failed"]);
    assert_eq!(started.elapsed(), Duration::from_secs(3));
}

/// The waits between the attempts of `a`, read off the paused clock at each `node_started`.
struct Starts(Mutex<Vec<tokio::time::Instant>>);

impl ExecutionListener for Starts {
    fn on_event(&self, e: &Event<'_>) {
        if let Event::NodeStarted { .. } = e {
            self.0.lock().unwrap().push(tokio::time::Instant::now());
        }
    }
}

async fn waits(wf: &Workflow) -> (RunResult, Vec<Duration>) {
    let s = Script::new().fail("a", "503 from the API");
    let starts = Starts(Mutex::default());
    let r = harness(&s).run_with(wf, json!({}), &starts).await;
    let t = starts.0.into_inner().unwrap();
    (r, t.windows(2).map(|w| w[1] - w[0]).collect())
}

#[tokio::test(start_paused = true)]
async fn backoff_doubles_per_attempt_with_a_bounded_deterministic_jitter() {
    let wf = timed(retrying(3), "a", None, Some(2_000));
    let (r, waits_once) = waits(&wf).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    assert_eq!(waits_once.len(), 3, "three retries: {waits_once:?}");
    for (wait, full) in waits_once.iter().zip([2_000u64, 4_000, 8_000]) {
        let ms = wait.as_millis() as u64;
        assert!(
            ms <= full && ms >= full - full / 4,
            "{ms} ms outside [{}, {full}]",
            full - full / 4
        );
    }
    // The same waits on every run: reproducible under tests.
    let (_, again) = waits(&wf).await;
    assert_eq!(waits_once, again);
    // The retry count is the bounded counter the events report.
    let h = harness(&Script::new().fail("a", "503"));
    h.run(&wf, json!({})).await;
    let counts: Vec<Value> = h
        .events_of("transition_taken")
        .iter()
        .map(|e| e["bounded"]["count"].clone())
        .collect();
    assert_eq!(counts, [json!(1), json!(2), json!(3), json!(3)]);
}

#[tokio::test(start_paused = true)]
async fn backoff_is_capped() {
    let wf = timed(retrying(3), "a", None, Some(4 * 60_000));
    let (_, w) = waits(&wf).await;
    let cap = Duration::from_millis(MAX_BACKOFF_MS);
    assert!(w.iter().all(|w| *w <= cap), "{w:?}");
    assert!(w[1] >= cap * 3 / 4 && w[2] >= cap * 3 / 4, "{w:?}");
}

/// Keeps the state of the boundary before the `n`-th node, as a store would.
struct KeepAt(u64, Mutex<Option<RunState>>);

impl ExecutionListener for KeepAt {
    fn on_checkpoint(&self, state: &RunState) {
        if state.steps + 1 == self.0 {
            *self.1.lock().unwrap() = Some(state.clone());
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_resumed_run_keeps_the_retry_count_and_its_backoff() {
    let wf = timed(retrying(3), "a", None, Some(1_000));
    let s = Script::new().fail("a", "503");
    // A crash before the third attempt: the store holds the boundary before it.
    let keep = KeepAt(3, Mutex::default());
    harness(&s).run_with(&wf, json!({}), &keep).await;
    let stored = keep.1.into_inner().unwrap().unwrap();
    assert_eq!(
        stored.retry_counters.values().copied().collect::<Vec<_>>(),
        [2]
    );
    let stored: RunState = serde_json::from_value(serde_json::to_value(&stored).unwrap()).unwrap();

    let h = harness(&s);
    let p = h.engine.prepare(Arc::new(wf.clone())).unwrap();
    let started = tokio::time::Instant::now();
    let r = h
        .engine
        .resume(&p, stored, None, h.ctx(&CancelToken::new()))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    // The third attempt runs again, then the fourth; the count did not restart at 0.
    assert_eq!(h.events_of("node_started").len(), 2);
    let counts: Vec<Value> = h
        .events_of("transition_taken")
        .iter()
        .map(|e| e["bounded"]["count"].clone())
        .collect();
    assert_eq!(counts, [json!(3), json!(3)]);
    // Only the wait before the fourth attempt (the third retry, 4 s less jitter) was slept.
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(3_000) && waited <= Duration::from_millis(4_000),
        "{waited:?}"
    );
}
