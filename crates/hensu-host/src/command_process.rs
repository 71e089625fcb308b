//! Running `/bin/sh -c` for an action command so that nothing it starts outlives it
//! (docs/security.md, *Timeouts and cancellation*).
//!
//! The shell is the leader of a new process group. When it exits, times out or the run is
//! cancelled — and when the future running it is dropped — the whole group is killed, so a
//! `(sleep 15; touch X) &` cannot finish its work later. Output is read asynchronously from one
//! pipe (stdout and stderr merged, in order); a process that left the group (`setsid`) and still
//! holds the pipe is given a short grace period and then abandoned, never waited for.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hensu_runtime::{CancelToken, MAX_OUTPUT_BYTES};
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt as _;

/// How long output is still read after the process group is gone, for a process that escaped
/// the group and holds the pipe open.
const ESCAPED_WRITER_GRACE: Duration = Duration::from_millis(200);

/// How often the cancel token is polled (it has no waker).
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// What to run.
pub(crate) struct Launch<'a> {
    pub script: &'a str,
    /// The complete environment (the parent's is not inherited).
    pub env: Vec<(OsString, OsString)>,
    pub dir: Option<&'a Path>,
    pub timeout: Duration,
    pub cancel: Option<&'a CancelToken>,
}

/// How it ended.
pub(crate) enum Finish {
    Exited { code: Option<i32>, output: Vec<u8> },
    TimedOut,
    Cancelled,
    SpawnFailed(String),
}

/// Kills the process group when dropped (also when the future is dropped mid-run).
struct GroupKiller(Option<Pid>);

impl GroupKiller {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // ESRCH (the group is already gone) is the normal case after a clean exit.
            let _ = kill_process_group(pgid, Signal::KILL);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(crate) async fn run_in_group(launch: Launch<'_>) -> Finish {
    let (sender, mut receiver) = match tokio::net::unix::pipe::pipe() {
        Ok(p) => p,
        Err(e) => return Finish::SpawnFailed(format!("cannot create pipe: {e}")),
    };
    let spawned = (|| {
        let stdout = sender.into_blocking_fd()?;
        let stderr = stdout.try_clone()?;
        let mut cmd = tokio::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(launch.script)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::from(stderr))
            .process_group(0)
            .kill_on_drop(true);
        if let Some(d) = launch.dir {
            cmd.current_dir(d);
        }
        cmd.spawn()
        // `cmd`, holding the parent's copies of the write ends, is dropped here, so the pipe
        // reaches end of file when the command's processes are gone.
    })();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return Finish::SpawnFailed(e.to_string()),
    };
    // Declared after `child`, so it is dropped first: the group is killed while the shell is
    // not yet reaped and its id cannot have been reused.
    let mut group = GroupKiller(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw),
    );
    let output = Arc::new(Mutex::new(Vec::new()));
    let sink = output.clone();
    let mut reader = tokio::spawn(async move {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match receiver.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let Ok(mut buf) = sink.lock() else { break };
                    let room = (MAX_OUTPUT_BYTES + 1).saturating_sub(buf.len());
                    buf.extend_from_slice(&chunk[..n.min(room)]);
                    if buf.len() > MAX_OUTPUT_BYTES {
                        // Enough to report the overflow; closing the pipe stops the writer.
                        break;
                    }
                }
            }
        }
    });
    let cancelled = async {
        match launch.cancel {
            None => std::future::pending::<()>().await,
            Some(token) => {
                while !token.is_cancelled() {
                    tokio::time::sleep(CANCEL_POLL).await;
                }
            }
        }
    };
    let ended = tokio::select! {
        status = child.wait() => Ok(status),
        () = tokio::time::sleep(launch.timeout) => Err(Finish::TimedOut),
        () = cancelled => Err(Finish::Cancelled),
    };
    // Whatever happened, nothing the command started keeps running.
    group.kill();
    let status = match ended {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            reader.abort();
            return Finish::SpawnFailed(e.to_string());
        }
        Err(finish) => {
            reader.abort();
            let _ = child.wait().await;
            return finish;
        }
    };
    if tokio::time::timeout(ESCAPED_WRITER_GRACE, &mut reader)
        .await
        .is_err()
    {
        reader.abort();
    }
    let output = output.lock().map(|b| b.clone()).unwrap_or_default();
    Finish::Exited {
        code: status.code(),
        output,
    }
}
