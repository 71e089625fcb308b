//! `hensuc run -i` on a real terminal: tmux gives the run a pseudo-terminal and renders the
//! screen as a person sees it, so the test catches what a pipe cannot — the live status line
//! redrawing over the review prompt while the reviewer reads it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::repo;

/// One tmux server of the test's own (its own socket), killed when the test ends.
pub(crate) struct Tmux {
    socket: String,
}

impl Tmux {
    pub(crate) fn start(name: &str, command: &str) -> Tmux {
        let tmux = Tmux {
            socket: format!("hensu-test-{name}-{}", std::process::id()),
        };
        let status = tmux
            .cmd()
            .args([
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "120",
                "-y",
                "50",
                command,
            ])
            .status()
            .expect("tmux must be installed (.ci/run installs it)");
        assert!(status.success());
        tmux
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    /// The visible screen, trailing blank lines removed.
    pub(crate) fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    pub(crate) fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "`{text}` never appeared:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let status = self
            .cmd()
            .args(["send-keys", "-t", "t"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

#[test]
fn the_review_prompt_stays_on_screen_while_the_progress_line_ticks() {
    let hensuc = Path::new(env!("CARGO_BIN_EXE_hensuc"));
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hensuc-home");
    std::fs::create_dir_all(&home).unwrap();
    // The same cleared environment as every CLI test; `exec` keeps the pane open afterwards.
    let command = format!(
        "cd '{}' && env -i PATH=\"$PATH\" HOME='{}' NO_COLOR=1 TERM=xterm '{}' run examples/workflows/mini-review.hwf -d examples --no-store -i -c '{{\"topic\": \"x\"}}'; echo EXIT=$?; sleep 600",
        repo().display(),
        home.display(),
        hensuc.display()
    );
    let tmux = Tmux::start("review", &command);
    tmux.wait_for("[a] approve  [r] reject >");
    // The status line ticks every 200 ms: a second is five redraws.
    std::thread::sleep(Duration::from_secs(1));
    let screen = tmux.screen();
    let last = screen.lines().last().unwrap_or_default();
    assert_eq!(
        last, "[a] approve  [r] reject >",
        "the prompt was drawn over:\n{screen}"
    );
    assert!(
        !screen.contains("· step 2 ·"),
        "the status line shows during the review:\n{screen}"
    );

    // A wrong answer and its hint stay readable too, then approving ends the run.
    tmux.keys(&["b", "Enter"]);
    let screen = tmux.wait_for("unknown answer 'b'");
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        tmux.screen().ends_with("[a] approve  [r] reject >"),
        "{screen}"
    );
    tmux.keys(&["a", "Enter"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(
        screen.contains("workflow ended at `done`: SUCCESS"),
        "{screen}"
    );
    assert!(screen.contains("[a] approve  [r] reject > a"), "{screen}");
}
