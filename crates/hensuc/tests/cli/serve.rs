//! `hensuc serve` as a process, driven by the client commands over HTTP on 127.0.0.1:
//! push (children first), workflows, pull, run --server (review pause), resume --server,
//! runs --server, runs diff --server, pause --server, cancel --server, delete, and the refusal to
//! listen openly without keys.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::{hensuc, stderr, stdout};

const LINEAR: &str = r#"fun linear() = workflow("Linear") {
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

const REVIEWED: &str = r#"fun reviewed() = workflow("Reviewed") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write about {topic}."
            review(ReviewMode.REQUIRED)
            onApproval goto "done"
            onRejection goto "rejected"
        }
        end("done")
        end("rejected", ExitStatus.FAILURE)
    }
}
"#;

const PARENT: &str = r#"fun parent() = workflow("Parent") {
    graph {
        start at "child"
        subWorkflow("child") {
            target = "linear"
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

/// A `hensuc serve` child process, killed when dropped.
pub(crate) struct ServeProcess {
    pub child: Child,
    pub url: String,
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `cmd` (a `hensuc serve …` command line) and waits for its "listening on URL" line; the
/// rest of its log keeps being drained so the server never blocks on a full pipe.
pub(crate) fn spawn_serve(cmd: &mut Command) -> ServeProcess {
    let mut child = cmd
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("serve exited before listening")
            .expect("line");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().expect("url").to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    ServeProcess { child, url }
}

fn serve(dir: &Path) -> ServeProcess {
    spawn_serve(
        hensuc()
            .args(["serve", "--listen", "127.0.0.1:0", "--stub", "-d"])
            .arg(dir),
    )
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("workflows")).expect("mkdir");
    std::fs::write(dir.path().join("workflows/linear.hwf"), LINEAR).expect("write");
    std::fs::write(dir.path().join("workflows/reviewed.hwf"), REVIEWED).expect("write");
    std::fs::write(dir.path().join("parent.hwf"), PARENT).expect("write");
    dir
}

fn json_out(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(o), stderr(o)))
}

#[test]
fn client_commands_against_a_real_server() {
    let dir = project();
    let server = serve(dir.path());
    let url = server.url.as_str();
    let push = hensuc()
        .args(["push"])
        .arg(dir.path())
        .args(["--server", url])
        .output()
        .expect("push");
    assert!(push.status.success(), "{}", stderr(&push));
    let out = stdout(&push);
    let at = |id: &str| {
        out.find(&format!(" {id} v"))
            .unwrap_or_else(|| panic!("{id} not pushed: {out}"))
    };
    assert!(at("linear") < at("parent"), "children first: {out}");

    let list = hensuc()
        .args(["workflows", "--server", url])
        .output()
        .expect("workflows");
    assert!(list.status.success());
    let listed = stdout(&list);
    let ids: Vec<&str> = listed
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(ids, ["linear", "parent", "reviewed"]);

    let pull = hensuc()
        .args(["pull", "linear"])
        .env("HENSU_SERVER", url)
        .output()
        .expect("pull");
    assert!(pull.status.success(), "{}", stderr(&pull));
    assert_eq!(json_out(&pull)["id"], "linear");

    // A review pauses the remote run; resume --approve finishes it.
    let run = hensuc()
        .args([
            "run",
            "reviewed",
            "--server",
            url,
            "-c",
            r#"{"topic": "x"}"#,
        ])
        .output()
        .expect("run");
    // Paused for a review: exit 3, as locally.
    assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
    let paused = json_out(&run);
    assert_eq!(paused["status"], "paused");
    assert!(
        stderr(&run).contains("paused at `draft`, waiting for review"),
        "{}",
        stderr(&run)
    );
    let id = paused["executionId"].as_str().expect("id").to_string();
    let resume = hensuc()
        .args(["resume", &id, "--approve", "--server", url])
        .output()
        .expect("resume");
    assert!(resume.status.success(), "{}", stderr(&resume));
    let done = json_out(&resume);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["currentNodeId"], "done");

    // A file runs too (pushed first), with its sub-workflow already on the server.
    let run = hensuc()
        .args(["run"])
        .arg(dir.path().join("parent.hwf"))
        .args(["-d"])
        .arg(dir.path())
        .args(["--server", url])
        .output()
        .expect("run file");
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(json_out(&run)["status"], "completed");

    let second = json_out(
        &hensuc()
            .args(["run", "reviewed", "--server", url])
            .output()
            .expect("run"),
    );
    let sid = second["executionId"].as_str().expect("id").to_string();
    // `pause --server` goes to the API (POST …/pause): the run waits for its review already.
    let pause = hensuc()
        .args(["pause", &sid, "--server", url])
        .output()
        .expect("pause");
    assert!(pause.status.success(), "{}", stderr(&pause));
    assert!(
        stderr(&pause).contains("already paused"),
        "{}",
        stderr(&pause)
    );
    let cancel = hensuc()
        .args(["cancel", &sid, "--server", url])
        .output()
        .expect("cancel");
    assert!(cancel.status.success(), "{}", stderr(&cancel));
    assert!(stdout(&cancel).contains("cancelled"));

    let runs = hensuc()
        .args(["runs", "--server", url, "--json"])
        .output()
        .expect("runs");
    let all = json_out(&runs);
    // The same shape as a local `runs --json` (docs/schemas/runs.schema.json).
    let schemas = super::json_schemas::Schemas::load();
    super::json_schemas::assert_valid(
        &schemas.validator("runs.schema.json"),
        "runs.schema.json",
        "runs --server --json",
        &all,
    );
    assert_eq!(all["runs"][0]["run_id"], sid.as_str(), "{all}");
    // `runs show ID --server`: that one run (same shape as locally), an unknown id exits 2 as locally.
    let shown = hensuc()
        .args(["runs", "--server", url, "--json", "show", &sid])
        .output()
        .expect("runs show");
    assert!(shown.status.success(), "{}", stderr(&shown));
    let shown = json_out(&shown);
    super::json_schemas::assert_valid(
        &schemas.validator("runs-show.schema.json"),
        "runs-show.schema.json",
        "runs show --server --json",
        &shown,
    );
    assert_eq!(shown["record"]["status"], "cancelled", "{shown}");
    let text = hensuc()
        .args(["runs", "show", &sid, "--server", url])
        .output()
        .expect("runs show");
    assert!(
        stdout(&text).contains("status      cancelled"),
        "{}",
        stdout(&text)
    );
    let unknown = hensuc()
        .args(["runs", "--server", url, "show", "no-such-run"])
        .output()
        .expect("runs show");
    // The same exit code as `runs show` of an unknown id in a local store.
    assert_eq!(unknown.status.code(), Some(2), "{}", stdout(&unknown));
    assert!(stdout(&unknown).is_empty(), "{}", stdout(&unknown));
    let statuses: Vec<&str> = all["runs"]
        .as_array()
        .expect("list")
        .iter()
        .map(|r| r["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(statuses, ["cancelled", "completed", "completed"], "{all}");

    // Rejected into `end("rejected", ExitStatus.FAILURE)`: exit 1, as locally.
    let third = hensuc()
        .args(["run", "reviewed", "--server", url])
        .output()
        .expect("run");
    assert_eq!(third.status.code(), Some(3), "{}", stderr(&third));
    let tid = json_out(&third)["executionId"]
        .as_str()
        .expect("id")
        .to_string();
    let reject = hensuc()
        .args(["resume", &tid, "--reject", "not yet", "--server", url])
        .output()
        .expect("resume");
    assert_eq!(reject.status.code(), Some(1), "{}", stderr(&reject));
    let ended = json_out(&reject);
    assert_eq!(ended["exitStatus"], "FAILURE", "{ended}");

    let del = hensuc()
        .args(["delete", "reviewed", "--server", url])
        .output()
        .expect("delete");
    assert!(del.status.success());
    let again = hensuc()
        .args(["delete", "reviewed", "--server", url])
        .output()
        .expect("delete");
    assert!(!again.status.success());
    assert!(stderr(&again).contains("404"), "{}", stderr(&again));
}

/// A run that fails on the server reads as it does locally: exit 1 and its reason on stderr
/// (here the server-mode refusal of a local command), the reason in `runs show --server`.
#[test]
fn a_failed_server_run_gives_its_reason_and_exit_code() {
    let dir = project();
    std::fs::write(
        dir.path().join("workflows/deploy.hwf"),
        super::action_outputs::DEPLOY,
    )
    .expect("write");
    std::fs::write(
        dir.path().join("commands.yaml"),
        "commands:\n  deploy:\n    command: \"true\"\n    timeout: 5000\n",
    )
    .expect("write");
    let server = serve(dir.path());
    let url = server.url.as_str();
    let run = hensuc()
        .args(["run"])
        .arg(dir.path().join("workflows/deploy.hwf"))
        .args(["-d"])
        .arg(dir.path())
        .args(["--server", url])
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let refusal = "Server mode does not support local command execution";
    assert!(
        stderr(&run).contains("✗ workflow failed at `deploy`: No valid transition from deploy")
    );
    assert!(stderr(&run).contains(refusal), "{}", stderr(&run));
    let ended = json_out(&run);
    assert_eq!(ended["status"], "failed", "{ended}");
    assert!(
        ended["error"].as_str().is_some_and(|e| e.contains(refusal)),
        "{ended}"
    );
    let id = ended["executionId"].as_str().expect("id");
    let shown = hensuc()
        .args(["runs", "show", id, "--server", url])
        .output()
        .expect("runs show");
    let line = stdout(&shown);
    assert!(
        line.lines()
            .any(|l| l.starts_with("error ") && l.contains(refusal)),
        "{line}"
    );
    // `redrive` and `fork --server`: a new execution from the failed one, followed to its end
    // (it fails again at `deploy`, the node the step names).
    for args in [vec!["redrive", id], vec!["fork", id, "--at", "1"]] {
        let again = hensuc()
            .args(&args)
            .args(["--server", url])
            .output()
            .expect("time travel");
        let e = stderr(&again);
        assert_eq!(again.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("new run ") && e.contains(id), "{e}");
        assert!(e.contains(refusal), "{e}");
    }
    let listed = hensuc()
        .args(["runs", "--server", url, "--json"])
        .output()
        .expect("runs");
    assert_eq!(json_out(&listed)["runs"].as_array().map(Vec::len), Some(3));
    // `replay --server`: the server replays the failed execution from its recorded outputs
    // (nothing new is written) and the CLI prints the report as for a local replay.
    let replayed = hensuc()
        .args(["replay", id, "--server", url, "--json"])
        .output()
        .expect("replay");
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    let report = json_out(&replayed);
    assert_eq!(report["format_version"], 1, "{report}");
    assert_eq!(report["run_id"], id);
    assert_eq!(report["identical"], true, "{report}");
    assert_eq!(report["recorded_status"], "failed");
    let human = hensuc()
        .args(["replay", id, "--server", url])
        .output()
        .expect("replay");
    assert!(stdout(&human).contains("identical"), "{}", stdout(&human));
    let refused = hensuc()
        .args(["replay", "--all", "--server", url])
        .output()
        .expect("replay --all");
    assert_ne!(refused.status.code(), Some(0));
    let listed = hensuc()
        .args(["runs", "--server", url, "--json"])
        .output()
        .expect("runs");
    assert_eq!(json_out(&listed)["runs"].as_array().map(Vec::len), Some(3));
}

#[test]
fn serve_refuses_an_open_address_without_keys() {
    let dir = project();
    let out = hensuc()
        .args(["serve", "--listen", "0.0.0.0:0", "-d"])
        .arg(dir.path())
        .output()
        .expect("serve");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("without a JWT key"),
        "{}",
        stderr(&out)
    );
}

/// Repro 09b: the refusal's advice can be followed (`jwt_public_key_file`, the environment for
/// secrets); a `jwt_secret` in the file is refused by name with the way to set it, and bad
/// `[server.limits]` values are refused before the server starts.
#[test]
fn serve_settings_are_checked_before_it_starts() {
    let dir = project();
    let out = hensuc()
        .args(["serve", "--listen", "0.0.0.0:0", "-d"])
        .arg(dir.path())
        .output()
        .expect("serve");
    let refusal = stderr(&out);
    assert!(refusal.contains("HENSU_JWT_SECRET") && refusal.contains("jwt_public_key_file"));
    assert!(!refusal.contains("jwt_secret /"), "{refusal}");
    for (toml, expect) in [
        (
            "[server]\njwt_secret = \"x\"\n",
            "secrets are never read from hensu.toml",
        ),
        (
            "[server.limits]\nmax_streams_per_tenant = 0\n",
            "max_streams_per_tenant must be greater than 0",
        ),
        (
            "[server.limits]\nheader_read_timeout = \"2h\"\n",
            "not a duration",
        ),
        ("[server.limits]\nmax_sockets = 3\n", "[E0907]"),
    ] {
        std::fs::write(dir.path().join("hensu.toml"), toml).expect("toml");
        let out = hensuc()
            .env_remove("HENSU_JWT_SECRET")
            .args(["serve", "--listen", "127.0.0.1:0", "-d"])
            .arg(dir.path())
            .output()
            .expect("serve");
        assert!(!out.status.success(), "{toml}");
        assert!(stderr(&out).contains(expect), "{toml}: {}", stderr(&out));
    }
}

/// The server runs executions under its project's hensu.toml (docs/server.md): an invalid one
/// stops `serve` at start-up, naming the file and position, before anything is written.
#[test]
fn serve_refuses_an_invalid_hensu_toml() {
    let dir = project();
    std::fs::write(
        dir.path().join("hensu.toml"),
        "[retry]\nmax_attempts = \"many\"\n",
    )
    .unwrap();
    let out = hensuc()
        .args(["serve", "--listen", "127.0.0.1:0", "-d"])
        .arg(dir.path())
        .output()
        .expect("serve");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("hensu.toml:2:16"), "{}", stderr(&out));
    assert!(!dir.path().join(".hensu").exists(), "nothing is written");
}

/// `hensuc health` (the container image's HEALTHCHECK, docs/deploy.md): 0 with the server's
/// `/health` and `/ready` answers, 1 when nothing listens (not the usage code 2).
#[test]
fn health_probes_a_running_server_and_fails_without_one() {
    let dir = project();
    let server = serve(dir.path());
    for (flag, body) in [(None, "\"UP\""), (Some("--ready"), "\"READY\"")] {
        let mut cmd = hensuc();
        cmd.args(["health", "--server", server.url.as_str()]);
        cmd.args(flag);
        let out = cmd.output().expect("health");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).contains(body), "{}", stdout(&out));
    }
    drop(server);
    // A port nobody listens on: bound, read, closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let out = hensuc()
        .args(["health", "--server", url.as_str()])
        .output()
        .expect("health");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("/health"), "{}", stderr(&out));
}

/// `run --server --detach --contexts FILE`: one queued execution per line through the batch
/// route, ids printed in order; the server's worker runs each with its own context.
#[test]
fn detached_server_runs_are_queued_in_one_batch() {
    let dir = project();
    let server = serve(dir.path());
    let url = server.url.as_str();
    let lines = "{\"topic\": \"one\"}\n\n{\"topic\": \"two\"}\n{\"topic\": \"three\"}\n";
    std::fs::write(dir.path().join("topics.jsonl"), lines).expect("write");
    let queued = hensuc()
        .args(["run"])
        .arg(dir.path().join("workflows/linear.hwf"))
        .args(["-d"])
        .arg(dir.path())
        .args(["--server", url, "--detach", "--contexts"])
        .arg(dir.path().join("topics.jsonl"))
        .output()
        .expect("run");
    assert!(queued.status.success(), "{}", stderr(&queued));
    assert!(
        stderr(&queued).contains("3 executions queued on the server"),
        "{}",
        stderr(&queued)
    );
    let ids: Vec<String> = stdout(&queued).lines().map(str::to_string).collect();
    assert_eq!(ids.len(), 3, "{}", stdout(&queued));
    // (The contexts' order is checked through the API in hensu-server's `batch` scenario.)
    assert!(ids[0] != ids[1] && ids[1] != ids[2], "{ids:?}");
    for id in &ids {
        let mut shown = serde_json::Value::Null;
        for _ in 0..200 {
            let show = hensuc()
                .args(["runs", "show", id, "--server", url, "--json"])
                .output()
                .expect("show");
            shown = json_out(&show);
            if shown["record"]["status"] == "completed" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert_eq!(shown["record"]["status"], "completed", "{shown}");
        assert_eq!(shown["record"]["workflow"], "linear", "{shown}");
    }
    // A bad line refuses the file before anything is sent.
    std::fs::write(dir.path().join("bad.jsonl"), "{\"topic\": 1}\n[2]\n").expect("write");
    let bad = hensuc()
        .args(["run", "linear", "--server", url, "--detach", "--contexts"])
        .arg(dir.path().join("bad.jsonl"))
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("bad.jsonl:2"), "{}", stderr(&bad));
}

/// `runs diff A B --server URL` asks the server's `GET …/{A}/diff/{B}` and prints exactly what
/// `runs diff` prints from the server's store: one comparison (`hensu_host::runs_diff`).
#[test]
fn runs_diff_over_the_server_prints_what_the_store_gives() {
    let dir = project();
    let server = serve(dir.path());
    let url = server.url.as_str();
    let push = hensuc()
        .args(["push"])
        .arg(dir.path())
        .args(["--server", url])
        .output()
        .expect("push");
    assert!(push.status.success(), "{}", stderr(&push));
    let run = |topic: &str| {
        let out = hensuc()
            .args(["run", "linear", "--server", url, "-c"])
            .arg(format!(r#"{{"topic": "{topic}"}}"#))
            .output()
            .expect("run");
        assert!(out.status.success(), "{}", stderr(&out));
        json_out(&out)["executionId"]
            .as_str()
            .expect("id")
            .to_string()
    };
    let (a, b) = (run("rivers"), run("lakes"));
    for json in [false, true] {
        let diff = |remote: bool| {
            let mut cmd = hensuc();
            cmd.arg("runs");
            if remote {
                cmd.args(["--server", url]);
            } else {
                cmd.arg("-d").arg(dir.path());
            }
            if json {
                cmd.arg("--json");
            }
            cmd.args(["diff", &a, &b]).output().expect("runs diff")
        };
        let (local, remote) = (diff(false), diff(true));
        assert_eq!(local.status.code(), Some(1), "{}", stderr(&local));
        assert_eq!(remote.status.code(), Some(1), "{}", stderr(&remote));
        assert_eq!(stdout(&remote), stdout(&local), "json: {json}");
        assert!(stdout(&local).contains("topic"), "{}", stdout(&local));
    }
    // An unknown run: exit 2, as from a store.
    let out = hensuc()
        .args(["runs", "--server", url, "diff", &a, "nope"])
        .output()
        .expect("runs diff");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("404"), "{}", stderr(&out));
}
