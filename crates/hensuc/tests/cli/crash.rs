//! Crash safety, for real: `hensuc run` as a child process on a generated 50-node workflow
//! (a chain with three bounded loops, slow stub agents), killed with SIGKILL at random times
//! (mostly mid-agent-call) and right after node starts, resumed with `hensuc resume` until it
//! completes. The final context and path must equal an uninterrupted run's, and no node may
//! start more than once except the one in flight at each kill (node starts are counted from the
//! `--events` JSONL file of every attempt).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hensu_store::{SqliteStore, StateStore};
use serde_json::Value;

const NODES: usize = 49; // + the end node = 50
const LOOPS: [usize; 3] = [10, 25, 40];
const DELAY_MS: u64 = 12;
const SEEDS: [u64; 5] = [
    0x9E37_79B9_7F4A_7C15,
    0x2545_F491_4F6C_DD1D,
    0xDEAD_BEEF_CAFE_F00D,
    0x0123_4567_89AB_CDEF,
    0x5851_F42D_4C95_7F2D,
];

fn workflow_text() -> String {
    let mut s = String::from(
        "fun crashChain() = workflow(\"crash-chain\") {\n    version = \"1.0.0\"\n\n    agents {\n        agent(\"a\") { role = \"Worker\"; model = Models.GPT_4O }\n    }\n\n    graph {\n        start at \"n0\"\n\n",
    );
    for i in 0..NODES {
        let next = if i + 1 == NODES {
            "done".to_string()
        } else {
            format!("n{}", i + 1)
        };
        let prompt = if i == 0 {
            "first step".to_string()
        } else {
            format!("step {i} after {{n{}}}", i - 1)
        };
        if LOOPS.contains(&i) {
            s.push_str(&format!(
                "        node(\"n{i}\") {{\n            agent = \"a\"\n            prompt = \"{prompt}\"\n            writes(\"status{i}\")\n            onCondition(\"status{i}\") {{\n                whenValue equalTo \"done\" goto \"{next}\"\n                otherwise revise \"n{}\" retry 2 otherwise \"{next}\"\n            }}\n        }}\n\n",
                i - 2
            ));
        } else {
            s.push_str(&format!(
                "        node(\"n{i}\") {{\n            agent = \"a\"\n            prompt = \"{prompt}\"\n            onSuccess goto \"{next}\"\n        }}\n\n"
            ));
        }
    }
    s.push_str("        end(\"done\")\n    }\n}\n");
    s
}

fn project(dir: &Path) -> PathBuf {
    let stubs = dir.join("stubs").join("default");
    std::fs::create_dir_all(&stubs).unwrap();
    for i in 0..NODES {
        let text = if LOOPS.contains(&i) {
            format!("{{\"status{i}\": \"again\"}}")
        } else {
            format!("output of n{i}")
        };
        std::fs::write(stubs.join(format!("n{i}.txt")), text).unwrap();
    }
    let wf = dir.join("crash.hwf");
    std::fs::write(&wf, workflow_text()).unwrap();
    // Each step committed before the next node starts: the promise checked below (no node
    // starts twice but the one in flight at a kill). A pipelined run may also run again the
    // steps whose commit was in flight (tests/cli/pipelined.rs).
    std::fs::write(dir.join("hensu.toml"), "[store]\ncommit = \"each-step\"\n").unwrap();
    wf
}

/// Deterministic pseudo-random numbers (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }
}

/// The `node_started` events of one attempt: (step, node).
fn starts(events: &Path) -> Vec<(u64, String)> {
    let text = std::fs::read_to_string(events).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "node_started")
        .map(|e| {
            (
                e["step"].as_u64().unwrap(),
                e["node_id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn final_state(dir: &Path, run_id: &str) -> (Value, Vec<String>, Value) {
    let store = SqliteStore::open(dir).unwrap();
    let run = crate::wait(store.load(run_id)).unwrap();
    assert_eq!(run.record.status, hensu_store::RunStatus::Completed);
    let s = run.snapshot;
    let path = s["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["node_id"].as_str().unwrap().to_string())
        .collect();
    (s["context"].clone(), path, s["retry_counters"].clone())
}

fn completed(dir: &Path, run_id: &str) -> bool {
    let store = SqliteStore::open(dir).unwrap();
    crate::wait(store.load(run_id)).unwrap().record.status == hensu_store::RunStatus::Completed
}

fn only_run(dir: &Path) -> Option<String> {
    if !dir.join(".hensu/state.db").exists() {
        return None;
    }
    only_run_of(&SqliteStore::open(dir).unwrap())
}

/// The id of the store's one run (`None` before it exists; more than one fails the test).
pub(super) fn only_run_of(store: &dyn hensu_store::StateStore) -> Option<String> {
    let runs = crate::wait(store.list()).unwrap();
    assert!(runs.len() <= 1, "one run expected: {runs:?}");
    runs.first().map(|r| r.run_id.clone())
}

/// `hensuc run WF --stub -d DIR` (or `resume RUN_ID -d DIR`), output discarded but stderr.
pub(super) fn run_or_resume(dir: &Path, wf: &Path, run_id: Option<&str>) -> std::process::Command {
    let mut c = crate::hensuc();
    match run_id {
        None => c.arg("run").arg(wf).arg("--stub"),
        Some(id) => c.arg("resume").arg(id),
    };
    c.arg("-d")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn spawn(dir: &Path, wf: &Path, run_id: Option<&str>, events: &Path, delay: u64) -> Child {
    run_or_resume(dir, wf, run_id)
        .arg("--events")
        .arg(events)
        .env("HENSU_STUB_DELAY_MS", delay.to_string())
        .spawn()
        .unwrap()
}

/// Runs `wf` in `dir` to its end without delay or kill (events in `dir/events.jsonl`): the
/// final context, path and retry counters of the stored run.
fn uninterrupted(dir: &Path, wf: &Path) -> (Value, Vec<String>, Value) {
    let out = spawn(dir, wf, None, &dir.join("events.jsonl"), 0)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = only_run(dir).unwrap();
    final_state(dir, &id)
}

fn baseline() -> (Value, Vec<String>, Vec<(u64, String)>) {
    let tmp = tempfile::tempdir().unwrap();
    let wf = project(tmp.path());
    let (ctx, path, counters) = uninterrupted(tmp.path(), &wf);
    assert!(counters.is_object());
    (ctx, path, starts(&tmp.path().join("events.jsonl")))
}

#[test]
fn killed_runs_resume_to_the_same_result() {
    let t0 = Instant::now();
    let (base_ctx, base_path, base_starts) = baseline();
    // 49 nodes, three loops going back two nodes twice each: 49 + 3 * 2 * 3 executions.
    assert_eq!(base_starts.len(), NODES + LOOPS.len() * 2 * 3);
    assert_eq!(base_path.len(), base_starts.len());

    let mut total_kills = 0;
    for seed in SEEDS {
        let mut rng = Rng(seed);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let wf = project(dir);
        let mut attempts: Vec<Vec<(u64, String)>> = Vec::new();
        let mut killed: Vec<bool> = Vec::new();
        let mut done = false;
        for attempt in 0..80 {
            let run_id = only_run(dir);
            // A kill can land after the run recorded its completion but before the process
            // exited: the run is done, there is nothing to resume.
            if run_id.as_deref().is_some_and(|id| completed(dir, id)) {
                done = true;
                break;
            }
            let events = dir.join(format!("events-{attempt}.jsonl"));
            let mut child = spawn(dir, &wf, run_id.as_deref(), &events, DELAY_MS);
            let by_event = attempt % 2 == 1;
            let target = rng.range(1, 12) as usize;
            let wait = Duration::from_millis(rng.range(20, 400));
            let started = Instant::now();
            let mut was_killed = false;
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    let mut err = String::new();
                    if let Some(mut e) = child.stderr.take() {
                        use std::io::Read;
                        let _ = e.read_to_string(&mut err);
                    }
                    assert!(
                        status.success(),
                        "seed {seed:x} attempt {attempt}: {status}\n{err}"
                    );
                    done = true;
                    break;
                }
                let fire = if by_event {
                    starts(&events).len() >= target
                } else {
                    started.elapsed() >= wait
                };
                if fire {
                    child.kill().unwrap(); // SIGKILL
                    let _ = child.wait();
                    was_killed = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(if by_event { 1 } else { 3 }));
            }
            attempts.push(starts(&events));
            killed.push(was_killed);
            if was_killed {
                total_kills += 1;
            }
            if done {
                break;
            }
        }
        assert!(done, "seed {seed:x}: did not complete within 80 attempts");
        let id = only_run(dir).unwrap();
        let (ctx, path, _) = final_state(dir, &id);
        assert_eq!(ctx, base_ctx, "seed {seed:x}: final context differs");
        assert_eq!(path, base_path, "seed {seed:x}: path differs");

        // Every step ran the baseline's node; a step runs in two attempts only when it was the
        // one in flight at the earlier attempt's kill (and is the next attempt's first).
        let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
        for (a, list) in attempts.iter().enumerate() {
            for (i, (step, node)) in list.iter().enumerate() {
                let base = &base_starts[(*step - 1) as usize];
                assert_eq!(
                    (step, node),
                    (&base.0, &base.1),
                    "seed {seed:x} attempt {a}: step {step} ran {node}"
                );
                if let Some(prev) = seen.insert(*step, a) {
                    let prev_list = &attempts[prev];
                    let was_last = prev_list.last().map(|s| s.0) == Some(*step);
                    assert!(
                        killed[prev]
                            && was_last
                            && i == 0
                            && attempts[prev + 1..a].iter().all(Vec::is_empty),
                        "seed {seed:x}: step {step} ({node}) ran in attempt {prev} and again in attempt {a} \
                         without being in flight at a kill"
                    );
                }
            }
        }
        let all: u64 = seen.keys().copied().max().unwrap_or(0);
        assert_eq!(
            all as usize,
            base_starts.len(),
            "seed {seed:x}: steps missing"
        );
        let history = crate::wait(SqliteStore::open(dir).unwrap().history(&id)).unwrap();
        assert!(history.len() > base_starts.len());
    }
    eprintln!(
        "crash test: {total_kills} kills over {} seeds, {:.1} s",
        SEEDS.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(total_kills >= 6, "too few kills: {total_kills}");
}

/// Kills inside a snapshot compaction: with a compaction due every 5 steps, the process aborts
/// (as a `kill -9` would) between the statements of the compaction, alternately after the new
/// snapshot is inserted and after the old one is deleted. The transaction rolls back; each
/// resume continues from the last recorded step, and the run ends as an uninterrupted one.
#[test]
fn kills_during_snapshot_compaction_lose_nothing() {
    let (base_ctx, base_path, _) = baseline();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let wf = project(dir);
    let mut steps_before = 0;
    for (attempt, stage) in ["insert", "delete", "insert", "delete"].iter().enumerate() {
        let run_id = only_run(dir);
        let events = dir.join(format!("events-{attempt}.jsonl"));
        let mut child = spawn_with(
            dir,
            &wf,
            run_id.as_deref(),
            &events,
            &[
                ("HENSU_INTERNAL_SNAPSHOT_EVERY", "5"),
                ("HENSU_INTERNAL_COMPACTION_ABORT", stage),
            ],
        );
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "attempt {attempt}: the compaction should have aborted the process"
        );
        // The store is intact and the run moved forward (4 steps recorded per attempt).
        let id = only_run(dir).unwrap();
        let store = SqliteStore::open(dir).unwrap();
        let run = crate::wait(store.load(&id)).unwrap();
        let steps = run.snapshot["steps"].as_u64().unwrap();
        assert!(
            steps > steps_before,
            "attempt {attempt}: {steps} after {steps_before}"
        );
        steps_before = steps;
    }
    let id = only_run(dir).unwrap();
    let events = dir.join("events-last.jsonl");
    let out = spawn_with(
        dir,
        &wf,
        Some(&id),
        &events,
        &[("HENSU_INTERNAL_SNAPSHOT_EVERY", "5")],
    )
    .wait_with_output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (ctx, path, _) = final_state(dir, &id);
    assert_eq!(ctx, base_ctx, "final context differs");
    assert_eq!(path, base_path, "path differs");
}

fn spawn_with(
    dir: &Path,
    wf: &Path,
    run_id: Option<&str>,
    events: &Path,
    env: &[(&str, &str)],
) -> Child {
    let mut c = crate::hensuc();
    match run_id {
        None => c.arg("run").arg(wf).arg("--stub"),
        Some(id) => c.arg("resume").arg(id),
    };
    c.arg("-d")
        .arg(dir)
        .arg("--events")
        .arg(events)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c.spawn().unwrap()
}

/// A fork whose targets `quick1` and `quick2` end after one stub call while `slow` runs a
/// chain of six: killed once the chain is well on its way, the run resumes the fork with the
/// two quick targets recorded as finished (they never run again) and re-runs only `slow`,
/// from its start (the target in flight at the kill: its calls repeat, at least once).
#[test]
fn a_run_killed_inside_a_fork_resumes_only_the_unfinished_targets() {
    const SLOW: usize = 6;
    let mut text = String::from(
        "fun forkCrash() = workflow(\"fork-crash\") {\n    version = \"1.0.0\"\n\n    agents {\n        agent(\"a\") { role = \"Worker\"; model = Models.GPT_4O }\n    }\n\n    graph {\n        start at \"f\"\n\n        fork(\"f\") {\n            targets(\"quick1\", \"quick2\", \"slow0\")\n            onComplete goto \"j\"\n        }\n\n",
    );
    let mut nodes: Vec<(String, String)> =
        vec![("quick1".into(), "j".into()), ("quick2".into(), "j".into())];
    for i in 0..SLOW {
        let next = if i + 1 == SLOW {
            "j".to_string()
        } else {
            format!("slow{}", i + 1)
        };
        nodes.push((format!("slow{i}"), next));
    }
    for (id, next) in &nodes {
        text.push_str(&format!(
            "        node(\"{id}\") {{\n            agent = \"a\"\n            prompt = \"do {id}\"\n            onSuccess goto \"{next}\"\n        }}\n\n"
        ));
    }
    text.push_str("        join(\"j\") {\n            await(\"f\")\n            mergeStrategy = MergeStrategy.COLLECT_ALL\n            writes(\"all\")\n            onSuccess goto \"done\"\n        }\n\n        end(\"done\")\n    }\n}\n");
    let setup = |dir: &Path| {
        let stubs = dir.join("stubs").join("default");
        std::fs::create_dir_all(&stubs).unwrap();
        for (id, _) in &nodes {
            std::fs::write(stubs.join(format!("{id}.txt")), format!("output of {id}")).unwrap();
        }
        let wf = dir.join("fork.hwf");
        std::fs::write(&wf, &text).unwrap();
        wf
    };
    let delay = 150;
    let count = |list: &[(u64, String)], id: &str| list.iter().filter(|(_, n)| n == id).count();

    // The reference run, uninterrupted.
    let clean = tempfile::tempdir().unwrap();
    let wf = setup(clean.path());
    let (base_ctx, base_path, _) = uninterrupted(clean.path(), &wf);

    // Killed (SIGKILL) once `slow3` started: `quick1` and `quick2` finished long before.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let wf = setup(dir);
    let first = dir.join("events-0.jsonl");
    let mut child = spawn(dir, &wf, None, &first, delay);
    let t0 = Instant::now();
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the kill"
        );
        if count(&starts(&first), "slow3") > 0 {
            child.kill().unwrap();
            let _ = child.wait();
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "slow3 never started"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let id = only_run(dir).unwrap();
    let second = dir.join("events-1.jsonl");
    let out = spawn(dir, &wf, Some(&id), &second, delay)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (first, second) = (starts(&first), starts(&second));
    for quick in ["quick1", "quick2"] {
        assert_eq!(
            (count(&first, quick), count(&second, quick)),
            (1, 0),
            "{quick} finished before the kill: recorded, not run again"
        );
    }
    for i in 0..SLOW {
        let slow = format!("slow{i}");
        assert_eq!(count(&second, &slow), 1, "{slow} ran once after the resume");
    }
    let (ctx, path, _) = final_state(dir, &id);
    assert_eq!(ctx, base_ctx, "final context differs");
    assert_eq!(path, base_path, "path differs");
}

/// The `agent_call` events of one attempt's branches: their branch ids, in order.
fn branch_calls(events: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(events).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "agent_call")
        .filter_map(|e| e["branch_id"].as_str().map(String::from))
        .collect()
}

/// A dependency DAG (docs/language.md, *Dependency DAGs*): `a → c`, `b → d`, `c, d → e`,
/// `e → publish` (runIf a flag `e` yields false: SKIPPED) `→ finish`, each call slow. Killed
/// while `e` runs, the run resumes the node with `a`–`d` recorded as settled (they never run
/// again) and runs only `e` and what follows; the result equals an uninterrupted run's.
#[test]
fn a_run_killed_inside_a_dag_resumes_only_the_unsettled_branches() {
    let text = r#"fun dagCrash() = workflow("dag-crash") {
    version = "1.0.0"

    state {
        variable("publish", VarType.BOOLEAN)
        variable("summary", VarType.STRING)
    }

    agents {
        agent("a") { role = "Worker"; model = Models.GPT_4O }
        agent("b") { role = "Worker"; model = Models.GPT_4O }
        agent("c") { role = "Worker"; model = Models.GPT_4O }
        agent("d") { role = "Worker"; model = Models.GPT_4O }
        agent("e") { role = "Worker"; model = Models.GPT_4O }
        agent("f") { role = "Worker"; model = Models.GPT_4O }
        agent("g") { role = "Worker"; model = Models.GPT_4O }
    }

    graph {
        start at "dag"

        parallel("dag") {
            branch("a") { agent = "a"; prompt = "do a" }
            branch("b") { agent = "b"; prompt = "do b" }
            branch("c") {
                after("a")
                agent = "c"
                prompt = "do c after {a}"
            }
            branch("d") {
                after("b")
                agent = "d"
                prompt = "do d after {b}"
            }
            branch("e") {
                after("c", "d")
                agent = "e"
                prompt = "do e after {c} and {d}"
                yields("summary", "publish")
            }
            branch("publish") {
                after("e")
                runIf("publish")
                agent = "f"
                prompt = "publish {summary}"
            }
            branch("finish") {
                after("publish")
                agent = "g"
                prompt = "finish after {publish}"
            }
            onSuccess goto "done"
        }

        end("done")
    }
}
"#;
    let setup = |dir: &Path| {
        let stubs = dir.join("stubs").join("default");
        std::fs::create_dir_all(&stubs).unwrap();
        for x in ["a", "b", "c", "d", "f", "g"] {
            std::fs::write(stubs.join(format!("{x}.txt")), format!("output of {x}")).unwrap();
        }
        std::fs::write(stubs.join("e.txt"), r#"{"summary": "S", "publish": false}"#).unwrap();
        let wf = dir.join("dag.hwf");
        std::fs::write(&wf, text).unwrap();
        wf
    };
    let delay = 300;
    let count = |list: &[String], id: &str| list.iter().filter(|n| *n == id).count();

    // The reference run, uninterrupted.
    let clean = tempfile::tempdir().unwrap();
    let wf = setup(clean.path());
    let (base_ctx, base_path, _) = uninterrupted(clean.path(), &wf);
    let base_calls = branch_calls(&clean.path().join("events.jsonl"));
    assert_eq!(count(&base_calls, "publish"), 0, "skipped: no call");
    assert_eq!(base_calls.len(), 6);

    // Killed (SIGKILL) while `e` runs: `c` and `d` (and so `a` and `b`) have finished.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let wf = setup(dir);
    let first = dir.join("events-0.jsonl");
    let mut child = spawn(dir, &wf, None, &first, delay);
    let t0 = Instant::now();
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the kill"
        );
        let calls = branch_calls(&first);
        if count(&calls, "c") > 0 && count(&calls, "d") > 0 {
            // Well inside e's call (300 ms), after c's and d's outcomes are recorded.
            std::thread::sleep(Duration::from_millis(100));
            child.kill().unwrap();
            let _ = child.wait();
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "c and d never ran");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        count(&branch_calls(&first), "e"),
        0,
        "killed before e finished"
    );
    let id = only_run(dir).unwrap();
    let second = dir.join("events-1.jsonl");
    let out = spawn(dir, &wf, Some(&id), &second, delay)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = branch_calls(&second);
    assert_eq!(
        calls,
        ["e", "finish"],
        "a–d settled before the kill are not run again; e and finish run once"
    );
    let (ctx, path, _) = final_state(dir, &id);
    assert_eq!(ctx, base_ctx, "final context differs");
    assert_eq!(path, base_path, "path differs");
    let store = SqliteStore::open(dir).unwrap();
    let snapshot = crate::wait(store.load(&id)).unwrap().snapshot;
    let output = &snapshot["history"][0]["output"];
    assert_eq!(output["publish"], "SKIPPED", "{output}");
    assert_eq!(output["finish"], "output of g");
}

/// A map over a list (docs/language.md, *Map over a list*): six items, two at a time, each
/// call slow. Killed while the third pair runs, the run resumes the node with the four
/// settled items recorded (never asked again) and asks only the two in flight; the gathered
/// list equals an uninterrupted run's, in the items' order.
#[test]
fn a_run_killed_inside_a_map_resumes_only_the_unfinished_items() {
    let text = r#"fun mapCrash() = workflow("map-crash") {
    version = "1.0.0"

    state {
        variable("papers", VarType.LIST_STRING)
        variable("summaries", VarType.LIST_STRING)
    }

    agents {
        agent("lister") { role = "Lister"; model = Models.GPT_4O }
        agent("summarizer") { role = "Summarizer"; model = Models.GPT_4O }
    }

    graph {
        start at "list"

        node("list") {
            agent = "lister"
            prompt = "List the papers"
            writes("papers")
            onSuccess goto "summarize"
        }

        map("summarize") {
            over = "papers"
            agent = "summarizer"
            prompt = "Summarize {item}"
            maxParallel = 2
            maxItems = 10
            writes("summaries")
            onSuccess goto "done"
        }

        end("done")
    }
}
"#;
    let setup = |dir: &Path| {
        let stubs = dir.join("stubs").join("default");
        std::fs::create_dir_all(&stubs).unwrap();
        let papers = r#"{"papers": ["p0", "p1", "p2", "p3", "p4", "p5"]}"#;
        std::fs::write(stubs.join("list.txt"), papers).unwrap();
        std::fs::write(stubs.join("summarize.txt"), "summary of {{item}}").unwrap();
        let wf = dir.join("map.hwf");
        std::fs::write(&wf, text).unwrap();
        wf
    };
    let delay = 300;
    let settled = |events: &Path| -> Vec<u64> {
        let text = std::fs::read_to_string(events).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["event"] == "item_settled")
            .filter_map(|e| e["index"].as_u64())
            .collect()
    };

    // The reference run, uninterrupted.
    let clean = tempfile::tempdir().unwrap();
    let wf = setup(clean.path());
    let (base_ctx, base_path, _) = uninterrupted(clean.path(), &wf);
    assert_eq!(
        base_ctx["summaries"],
        serde_json::json!([
            "summary of p0",
            "summary of p1",
            "summary of p2",
            "summary of p3",
            "summary of p4",
            "summary of p5"
        ])
    );
    assert_eq!(branch_calls(&clean.path().join("events.jsonl")).len(), 6);

    // Killed (SIGKILL) while items 4 and 5 run: 0–3 have settled.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let wf = setup(dir);
    let first = dir.join("events-0.jsonl");
    let mut child = spawn(dir, &wf, None, &first, delay);
    let t0 = Instant::now();
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the kill"
        );
        if settled(&first).len() >= 4 {
            // Well inside the last pair's calls (300 ms), after 2 and 3 are recorded.
            std::thread::sleep(Duration::from_millis(100));
            child.kill().unwrap();
            let _ = child.wait();
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "four items never settled"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let before = settled(&first);
    assert_eq!(
        before.len(),
        4,
        "killed before the last pair settled: {before:?}"
    );
    let id = only_run(dir).unwrap();
    let second = dir.join("events-1.jsonl");
    let out = spawn(dir, &wf, Some(&id), &second, delay)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut calls = branch_calls(&second);
    calls.sort();
    assert_eq!(
        calls,
        ["4", "5"],
        "the items settled before the kill are not asked again"
    );
    let (ctx, path, _) = final_state(dir, &id);
    assert_eq!(ctx, base_ctx, "final context differs");
    assert_eq!(path, base_path, "path differs");
}
