//! Schedules across `hensuc serve` processes (docs/schedules.md): two servers on one
//! PostgreSQL database (`scripts/pg-test.sh`) run a `[[schedules]]` entry of their hensu.toml
//! firing every second; over 20 ticks and more, every tick is fired exactly once — one firing
//! row, one run — whichever server claims it. And `hensuc check` / `hensuc serve` refuse a
//! schedule the budget check refuses.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use hensu_store::{FiringState, StateStore};

use crate::serve::{ServeProcess as Serve, spawn_serve};

const TICK: &str = r#"fun tick() = workflow("Tick") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write about {topic}."
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const SCHEDULED: &str = r#"[[schedules]]
name = "tick"
workflow = "tick"
cron = "* * * * * *"
context = { topic = "time" }
paused = true
"#;

const TICKS: usize = 20;

/// `POST path` with an empty body to the server at `url` (dev mode: no token); the status.
fn post(url: &str, path: &str) -> u16 {
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("answer");
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

fn serve(dir: &Path, store: &str) -> Serve {
    spawn_serve(
        crate::hensuc()
            .args(["serve", "--listen", "127.0.0.1:0", "--stub"])
            .arg("--store")
            .arg(store)
            .arg("-d")
            .arg(dir),
    )
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn two_servers_fire_each_tick_exactly_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("hensu.toml"), SCHEDULED).expect("write");
    std::fs::write(dir.join("tick.hwf"), TICK).expect("write");
    let (store, url) = crate::pg_schema();

    let a = serve(dir, &url);
    let b = serve(dir, &url);
    let push = crate::hensuc()
        .arg("push")
        .arg(dir.join("tick.hwf"))
        .args(["--server", &a.url])
        .output()
        .expect("push");
    assert!(push.status.success(), "{}", crate::stderr(&push));
    // The schedule of hensu.toml is paused until the workflow is there; resumed on B.
    assert_eq!(post(&b.url, "/api/v1/schedules/tick/resume"), 200);

    let schedules = store.schedules();
    let settled =
        |f: &hensu_store::Firing| !matches!(f.state, FiringState::Claimed | FiringState::Queued);
    let t = Instant::now();
    loop {
        let firings = crate::wait(schedules.firings("dev-tenant", "tick", 1_000)).expect("firings");
        if firings.iter().filter(|f| settled(f)).count() > TICKS {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "only {} firings",
            firings.len()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(post(&a.url, "/api/v1/schedules/tick/pause"), 200);
    // The firings in flight settle; then both servers stop.
    std::thread::sleep(Duration::from_millis(1_500));
    drop((a, b));

    let mut firings = crate::wait(schedules.firings("dev-tenant", "tick", 1_000)).expect("firings");
    firings.reverse();
    assert!(firings.len() > TICKS, "{}", firings.len());
    assert!(firings.iter().all(settled), "{firings:#?}");
    // One firing per tick, every second from the first to the last: none missing, none twice.
    for pair in firings.windows(2) {
        assert_eq!(pair[1].tick - pair[0].tick, 1_000, "{pair:#?}");
    }
    // One run per started firing, and no run besides them.
    let started: Vec<&str> = firings
        .iter()
        .filter(|f| f.state == FiringState::Started)
        .filter_map(|f| f.run_id.as_deref())
        .collect();
    let mut distinct = started.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), started.len(), "a run started twice");
    let runs: Vec<String> = crate::wait(store.list())
        .expect("runs")
        .into_iter()
        .filter(|r| r.workflow_id == "tick")
        .map(|r| r.run_id)
        .collect();
    assert_eq!(runs.len(), started.len(), "every run is a firing's");
    assert!(
        started.len() >= TICKS,
        "{} of {} started",
        started.len(),
        firings.len()
    );
    let mut owners: Vec<&str> = firings.iter().map(|f| f.owner.as_str()).collect();
    owners.sort_unstable();
    owners.dedup();
    eprintln!(
        "{} ticks, {} runs, fired by {} server(s)",
        firings.len(),
        runs.len(),
        owners.len()
    );
}

const PRICED: &str = r#"fun priced() = workflow("Priced") {
    agents {
        agent("writer") { role = "Writer"; model = "gpt-4o"; maxTokens = 1000 }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write about {topic}."
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const BUDGET: &str = r#"[budget]
per_day = 20.0

[pricing."gpt-4o"]
input_per_mtok = 2.5
output_per_mtok = 10

[[schedules]]
name = "greedy"
workflow = "priced"
cron = "* * * * *"

[[schedules]]
name = "typo"
workflow = "pricd"
cron = "0 * * * *"
"#;

/// `priced` costs at most 0.02 a run: every minute (1,440 a day) is 28.80 over a budget of
/// 20.00 (E0515); a schedule of a workflow the project lacks is E0517. `check` reports both;
/// `serve` refuses to start.
#[test]
fn check_and_serve_refuse_a_schedule_over_the_budget() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).expect("mkdir");
    std::fs::write(dir.join("workflows/priced.hwf"), PRICED).expect("write");
    std::fs::write(dir.join("hensu.toml"), BUDGET).expect("write");
    let check = crate::hensuc()
        .args(["check", "--format", "json", "-d"])
        .arg(dir)
        .output()
        .expect("check");
    assert_eq!(check.status.code(), Some(1), "{}", crate::stderr(&check));
    let report: serde_json::Value =
        serde_json::from_str(&crate::stdout(&check)).expect("json report");
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["E0515", "E0517"], "{report}");
    let e0515 = &report["diagnostics"][0];
    assert!(
        e0515["message"]
            .as_str()
            .is_some_and(|m| m.contains("28.80")),
        "{e0515}"
    );
    assert!(
        e0515["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("hensu.toml"))
    );
    let serve = crate::hensuc()
        .args(["serve", "--listen", "127.0.0.1:0", "--stub", "-d"])
        .arg(dir)
        .output()
        .expect("serve");
    assert_eq!(serve.status.code(), Some(1));
    let err = crate::stderr(&serve);
    assert!(err.contains("E0515"), "{err}");
}

/// One problem of each kind a schedule can have, each at its place in hensu.toml: E0515,
/// E0516, E0517, E0518, E0913, E0914, W0602 (human and JSON).
#[test]
fn every_schedule_problem_points_into_the_file() {
    let dir = "tests/fixtures/cli/schedules";
    let human = crate::run_hensuc(&["check", "-d", dir, "--color", "never"]);
    assert_eq!(human.status.code(), Some(1));
    let json = crate::run_hensuc(&["check", "-d", dir, "--format", "json"]);
    insta::assert_snapshot!(format!(
        "===== hensu.toml\n{}----- human\n{}----- json\n{}",
        std::fs::read_to_string(crate::repo().join(dir).join("hensu.toml")).expect("read"),
        crate::stderr(&human),
        crate::stdout(&json)
    ));
}
