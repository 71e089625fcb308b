//! The text of the node in flight on the terminal as the model writes it (`hensuc run` on a
//! terminal, not with `--quiet` nor with `--events -`; docs/cli.md, *Live output*). Whole
//! lines are printed above the status line as they complete, the line being written is shown
//! on the status line, and the rest of a call's text is printed when the call ends. The
//! tokens come redacted (hensu-providers' `RedactingTokenSink`, docs/security.md, *Streaming
//! redaction*).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

use hensu_runtime::tokens::{Token, TokenSink};
use indicatif::ProgressBar;

/// How much of the line being written the status line shows.
const TAIL_CHARS: usize = 60;

pub(crate) struct LiveText {
    bar: ProgressBar,
    /// Per node and branch: the line being written.
    lines: Mutex<HashMap<(String, Option<String>), String>>,
}

impl LiveText {
    pub(crate) fn new(bar: ProgressBar) -> LiveText {
        LiveText {
            bar,
            lines: Mutex::new(HashMap::new()),
        }
    }

    fn print(&self, who: &str, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        self.bar.suspend(|| {
            let mut err = std::io::stderr().lock();
            for l in lines {
                let _ = writeln!(err, "    {who}│ {l}");
            }
        });
    }
}

fn who(branch: Option<&str>) -> String {
    branch.map(|b| format!("{b} ")).unwrap_or_default()
}

impl TokenSink for LiveText {
    fn on_token(&self, t: &Token<'_>) {
        let (done, tail) = {
            let Ok(mut lines) = self.lines.lock() else {
                return;
            };
            let line = lines
                .entry((t.node_id.to_string(), t.branch_id.map(str::to_string)))
                .or_default();
            line.push_str(t.text);
            let mut done = Vec::new();
            while let Some(i) = line.find('\n') {
                let rest = line.split_off(i + 1);
                done.push(line.trim_end_matches(['\n', '\r']).to_string());
                *line = rest;
            }
            let skip = line.chars().count().saturating_sub(TAIL_CHARS);
            (done, line.chars().skip(skip).collect::<String>())
        };
        self.print(&who(t.branch_id), &done);
        self.bar.set_message(format!("{} · {tail}", t.node_id));
    }

    fn on_end(&self, node_id: &str, branch_id: Option<&str>) {
        let rest = self
            .lines
            .lock()
            .ok()
            .and_then(|mut l| l.remove(&(node_id.to_string(), branch_id.map(str::to_string))));
        if let Some(rest) = rest.filter(|r| !r.is_empty()) {
            self.print(&who(branch_id), &[rest]);
        }
    }
}
