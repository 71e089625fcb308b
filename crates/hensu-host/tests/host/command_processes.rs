//! Nothing a command starts outlives it (docs/security.md, *Timeouts and cancellation*).
//!
//! No timing is asserted: each command opens a FIFO for writing and leaves a background job
//! holding it; the test reads the FIFO, and end of file means every process of the command is
//! gone. Had the group survived, the job would create the marker (after 30 s).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use hensu_host::{CommandSpec, run_command, run_command_with};
use hensu_runtime::{ActionResult, CancelToken, Context};
use serde_json::json;

use super::ctx;

struct Fixture {
    _dir: tempfile::TempDir,
    fifo: PathBuf,
    marker: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let marker = dir.path().join("marker");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    Fixture {
        _dir: dir,
        fifo,
        marker,
    }
}

/// Opens the FIFO for reading (returns once the command opened it: `opened` is sent), then
/// reads until every writer is gone.
fn watch(
    fifo: &Path,
) -> (
    tokio::sync::oneshot::Receiver<()>,
    tokio::task::JoinHandle<()>,
) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let fifo = fifo.to_path_buf();
    let handle = tokio::task::spawn_blocking(move || {
        let mut f = std::fs::File::open(&fifo).unwrap();
        let _ = tx.send(());
        let mut sink = Vec::new();
        let _ = f.read_to_end(&mut sink);
    });
    (rx, handle)
}

/// A command that holds the FIFO open from a background job which, left alive, would create
/// the marker; `then` runs in the foreground.
fn holding_command(fx: &Fixture, then: &str) -> String {
    format!(
        "exec 3>'{}'; (sleep 30; touch '{}') & {then}",
        fx.fifo.display(),
        fx.marker.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_whole_process_group() {
    let fx = fixture();
    let (_opened, gone) = watch(&fx.fifo);
    let spec = CommandSpec {
        timeout_ms: 2_000,
        ..CommandSpec::new(holding_command(&fx, "wait"))
    };
    let r = run_command(&spec, &Context::default(), None).await;
    assert_eq!(r, ActionResult::failure("Command timed out after 2000 ms"));
    gone.await.unwrap();
    assert!(!fx.marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_kills_the_whole_process_group() {
    let fx = fixture();
    let (opened, gone) = watch(&fx.fifo);
    let cancel = CancelToken::new();
    let spec = CommandSpec::new(holding_command(&fx, "wait"));
    let c = ctx(json!({}));
    let run = run_command_with(&spec, &c, None, Some(&cancel));
    let canceller = async {
        opened.await.unwrap();
        cancel.cancel();
    };
    let (r, ()) = tokio::join!(run, canceller);
    assert_eq!(r, ActionResult::failure("Command cancelled"));
    gone.await.unwrap();
    assert!(!fx.marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_running_command_kills_the_group() {
    let fx = fixture();
    let (opened, gone) = watch(&fx.fifo);
    let spec = CommandSpec::new(holding_command(&fx, "wait"));
    let c = Context::default();
    tokio::select! {
        _ = run_command(&spec, &c, None) => panic!("the command cannot end by itself"),
        r = opened => r.unwrap(),
    }
    gone.await.unwrap();
    assert!(!fx.marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_jobs_end_with_the_shell() {
    let fx = fixture();
    let (_opened, gone) = watch(&fx.fifo);
    let spec = CommandSpec::new(holding_command(&fx, "echo done"));
    let r = run_command(&spec, &Context::default(), None).await;
    assert_eq!(r, ActionResult::success("done"));
    gone.await.unwrap();
    assert!(!fx.marker.exists());
}

#[tokio::test]
async fn a_process_that_left_the_group_does_not_hold_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // `setsid` puts the sleeper in a new session, out of reach of the group kill; it keeps
    // the output pipe open. The command still ends (were it waited for, the test would hang).
    // The shell waits until the sleeper has left the group, then ends.
    let spec = CommandSpec::new(format!(
        "setsid sh -c 'echo $$ > \"$0\"; exec sleep 100000' '{p}' & \
         while [ ! -s '{p}' ]; do sleep 0.01; done; echo done",
        p = pidfile.display()
    ));
    let r = run_command(&spec, &Context::default(), None).await;
    assert_eq!(r, ActionResult::success("done"));
    // Clean up the escaped sleeper.
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = std::process::Command::new("kill")
        .arg("-KILL")
        .arg(pid.to_string())
        .status();
}
