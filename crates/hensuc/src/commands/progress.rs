//! Live progress of `hensuc run` / `resume` on stderr: an `indicatif` status line on a
//! terminal (node, step, elapsed seconds) with event lines printed above it, plain lines
//! otherwise; `-v` adds prompts, outputs and transition reasons; `-q` keeps only problems.

use std::io::Write;
use std::sync::{Arc, Once};
use std::time::Duration;

use hensu_runtime::{Event, ExecutionListener};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// How often the status line's clock is redrawn.
const TICK: Duration = Duration::from_millis(200);

pub(crate) struct Progress {
    terminal: bool,
    verbose: bool,
    /// `-q`: no status line, no per-step lines; failures, retries and warnings still print.
    quiet: bool,
    /// Provider keys never reach the terminal, even in `-v` prompts and outputs.
    redactor: Arc<hensu_providers::Redactor>,
    /// Hidden until the first node starts (and always when stderr is not a terminal).
    bar: ProgressBar,
    shown: Once,
    /// The text being written, when it is shown live (a terminal, not quiet).
    live: Option<Arc<dyn hensu_runtime::tokens::TokenSink>>,
}

impl Progress {
    pub(crate) fn new(
        terminal: bool,
        verbosity: crate::args::Verbosity,
        redactor: Arc<hensu_providers::Redactor>,
    ) -> Self {
        let style = ProgressStyle::with_template("⠿ {msg} · {seconds}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner())
            .with_key(
                "seconds",
                |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.1}s", state.elapsed().as_secs_f64());
                },
            );
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(style);
        let terminal = terminal && !verbosity.quiet;
        let live = terminal.then(|| {
            let shown = Arc::new(super::live_text::LiveText::new(bar.clone()));
            Arc::new(hensu_providers::RedactingTokenSink::new(
                redactor.clone(),
                shown,
            )) as Arc<dyn hensu_runtime::tokens::TokenSink>
        });
        Progress {
            // A quiet run never draws the status line.
            terminal,
            verbose: verbosity.verbose,
            quiet: verbosity.quiet,
            redactor,
            bar,
            shown: Once::new(),
            live,
        }
    }

    /// No live text (its terminal shows the run's JSON events: `--events -`).
    pub(crate) fn without_live_text(mut self) -> Self {
        self.live = None;
        self
    }

    /// Removes the status line (the run is over).
    pub(crate) fn clear(&self) {
        self.bar.finish_and_clear();
    }

    /// Shows `node · step N` on the status line (a terminal only).
    fn status(&self, node: &str, step: u64) {
        if !self.terminal {
            return;
        }
        self.bar.set_message(format!("{node} · step {step}"));
        self.shown.call_once(|| {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(TICK);
        });
    }

    /// A dependency DAG's branch that settled without running (docs/language.md, *Dependency
    /// DAGs*): a skip (not shown with `--quiet`) or a failed dependency.
    fn branch_not_run(&self, branch: &str, skipped: bool, reason: &str) {
        if !(skipped && self.quiet) {
            let mark = if skipped { "↷" } else { "✗" };
            self.say(&format!("  {mark} branch {branch} not run: {reason}"));
        }
    }

    /// A map item that settled (docs/language.md, *Map over a list*): shown with `--verbose`,
    /// and a failed one always.
    fn item_settled(&self, node: &str, index: u64, success: bool, error: Option<&str>) {
        match (success, error) {
            (false, e) => self.say(&format!(
                "  ✗ {node} item {index}: {}",
                e.unwrap_or("failed")
            )),
            (true, _) if self.verbose && !self.quiet => {
                self.say(&format!("  ✓ {node} item {index}"))
            }
            (true, _) => {}
        }
    }

    /// Prints a line (above the status line on a terminal).
    fn say(&self, text: &str) {
        let text = self.redactor.redact(text);
        let print = || {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{text}");
        };
        if self.terminal {
            self.bar.suspend(print);
        } else {
            print();
        }
    }
}

/// An interactive review suspends the status line while the reviewer reads and answers, so its
/// steady tick cannot redraw over the choice line (`run -i`).
impl hensu_host::TerminalPause for Progress {
    fn paused(&self, dialogue: &mut dyn FnMut()) {
        if self.terminal {
            self.bar.suspend(dialogue);
        } else {
            dialogue();
        }
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    │ {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl ExecutionListener for Progress {
    fn token_sink(&self) -> Option<Arc<dyn hensu_runtime::tokens::TokenSink>> {
        self.live.clone()
    }

    fn on_event(&self, event: &Event<'_>) {
        match event {
            Event::NodeStarted {
                node_id,
                kind,
                step,
            } => {
                self.status(node_id, *step);
                if (!self.terminal || self.verbose) && !self.quiet {
                    self.say(&format!(
                        "→ {node_id} ({}, step {step})",
                        kind.as_str().to_lowercase()
                    ));
                }
            }
            Event::AgentCall {
                agent_id,
                branch_id,
                prompt,
                response,
                error,
                duration_us,
                ..
            } => {
                if self.verbose {
                    let who = match branch_id {
                        Some(b) => format!("branch {b}, agent {agent_id}"),
                        None => format!("agent {agent_id}"),
                    };
                    self.say(&format!("  ┌ prompt ({who})\n{}", indent(prompt)));
                    match (response, error) {
                        (Some(r), _) => self.say(&format!(
                            "  └ response ({:.1} ms)\n{}",
                            *duration_us as f64 / 1000.0,
                            indent(r)
                        )),
                        (None, Some(e)) => self.say(&format!("  └ error: {e}")),
                        _ => {}
                    }
                }
            }
            Event::ProviderRetry {
                provider,
                model,
                attempt,
                delay_ms,
                error_kind,
                ..
            } => self.say(&format!(
                "  ↻ {provider} ({model}) attempt {attempt} failed ({error_kind}), retrying in {:.1}s",
                *delay_ms as f64 / 1000.0
            )),
            Event::StructuredOutputCorrection {
                node_id,
                agent_id,
                attempt,
                problem,
            } => self.say(&format!(
                "  ↻ {node_id}: {problem}; re-prompting {agent_id} (correction {attempt})"
            )),
            Event::BranchSkipped {
                branch_id,
                success,
                reason,
                ..
            } => self.branch_not_run(branch_id, *success, reason),
            Event::ItemSettled {
                node_id,
                index,
                success,
                error,
            } => self.item_settled(node_id, *index, *success, *error),
            Event::ActionExecuted {
                action,
                success,
                output,
                ..
            } => {
                if !(*success && self.quiet) {
                    let mark = if *success { "✓" } else { "✗" };
                    self.say(&format!("  {mark} {action}: {output}"));
                }
            }
            Event::NodeCompleted {
                node_id,
                status,
                error,
                ..
            } => {
                if let Some(e) = error {
                    self.say(&format!("  ✗ {node_id} {status}: {e}"));
                }
            }
            Event::RubricEvaluated {
                node_id,
                score,
                passed,
            } => {
                if self.verbose {
                    self.say(&format!(
                        "  rubric {node_id}: {} ({})",
                        hensu_ir::java_double_to_string(*score),
                        if *passed { "passed" } else { "failed" }
                    ));
                }
            }
            Event::UnknownInput { key, did_you_mean } => self.say(&match did_you_mean {
                Some(n) => format!("warning: input `{key}` is not declared; did you mean `{n}`?"),
                None => format!("warning: input `{key}` is not declared in the state schema"),
            }),
            Event::RubricScoreMissing { node_id } => self.say(&format!(
                "⚠ rubric · {node_id}: the output has no numeric `score`; evaluated as 0"
            )),
            Event::RubricBacktracksSpent { node_id, limit } => self.say(&format!(
                "⚠ rubric · {node_id}: {limit} automatic backtrack{} used; its transitions decide",
                if *limit == 1 { "" } else { "s" }
            )),
            Event::Backtrack {
                from,
                to,
                kind,
                reason,
            } => {
                self.say(&format!("  ↺ backtrack {from} → {to} ({kind:?}: {reason})"));
            }
            Event::TransitionTaken {
                from,
                to,
                cause,
                bounded,
                ..
            } => {
                if self.verbose || (bounded.is_some() && !self.quiet) {
                    let extra = bounded.map(|b| format!(", {b}")).unwrap_or_default();
                    self.say(&format!("  {from} → {to}: {cause}{extra}"));
                }
            }
            Event::TransitionWarning { node_id, message } => {
                self.say(&format!("⚠ transition warning · {node_id}\n  {message}"));
            }
            Event::CompensationStarted {
                node_id,
                compensation_id,
                visit_step,
            } => self.say(&format!(
                "↩ compensating {node_id} (step {visit_step}) with {compensation_id}"
            )),
            Event::CompensationFinished {
                compensation_id,
                output,
                ..
            } => {
                let text = output.map(hensu_runtime::render).unwrap_or_default();
                let text = text.lines().next().unwrap_or_default();
                self.say(&format!("  ✓ {compensation_id}: {text}"));
            }
            Event::CompensationFailed {
                compensation_id,
                error,
                ..
            } => self.say(&format!("  ✗ {compensation_id} failed: {error}")),
            Event::RunStarted { .. } | Event::RunFinished { .. } => {}
        }
    }
}
