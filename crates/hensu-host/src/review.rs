//! Review handlers beyond the engine's `AutoApprove` (docs/language.md, *Reviews*):
//!
//! * [`InteractiveReview`] asks a person in the terminal (`hensuc run --interactive`): approve,
//!   reject with a reason, backtrack to an earlier node, or edit context values in `$EDITOR`
//!   first. It reads answers from any `BufRead` and writes prompts to any `Write` (stdin and
//!   stderr in the CLI), so it is testable by piping input.
//! * [`DeferredReview`] answers `Pending`: the run pauses with its state in
//!   [`ExecutionPhase::Awaiting`](hensu_runtime::ExecutionPhase) and continues with
//!   [`Engine::resume`](hensu_runtime::Engine::resume) once a decision arrives out of band.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hensu_ir::ReviewMode;
use serde_json::Value;

use hensu_runtime::{Context, ReviewDecision, ReviewHandler, ReviewOutcome, ReviewRequest};

/// A review waiting for an out-of-band answer.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingReview {
    pub correlation_id: String,
    pub node_id: String,
    /// The node's output as text.
    pub output: Option<String>,
}

type PendingSink = Arc<dyn Fn(&PendingReview) + Send + Sync>;

/// Defers every review: the handler returns `Pending` with a fresh correlation id and the run
/// pauses. An optional sink is told about each pending review (to notify a reviewer).
#[derive(Clone, Default)]
pub struct DeferredReview {
    sink: Option<PendingSink>,
}

impl std::fmt::Debug for DeferredReview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredReview")
            .field("sink", &self.sink.is_some())
            .finish()
    }
}

impl DeferredReview {
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `sink` with every review that starts waiting.
    pub fn with_sink(sink: impl Fn(&PendingReview) + Send + Sync + 'static) -> Self {
        DeferredReview {
            sink: Some(Arc::new(sink)),
        }
    }
}

#[async_trait]
impl ReviewHandler for DeferredReview {
    async fn request_review(&self, request: ReviewRequest<'_>) -> ReviewOutcome {
        let correlation_id = format!("review-{}", uuid::Uuid::new_v4());
        if let Some(sink) = &self.sink {
            sink(&PendingReview {
                correlation_id: correlation_id.clone(),
                node_id: request.node_id.to_string(),
                output: request.result.output_text().map(|c| c.into_owned()),
            });
        }
        ReviewOutcome::Pending { correlation_id }
    }
}

struct ReviewIo {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
}

/// Asks a person in the terminal. Answers are read line by line:
///
/// * `a` approve (with any pending edits),
/// * `r` reject — then a reason line,
/// * `b` backtrack — then the node (number from the list or id) and a reason line,
/// * `e` edit the context as JSON in `$EDITOR` (then answer again).
///
/// `b` and `e` are offered only when the node's review allows them. End of input rejects the
/// node ("review aborted").
#[derive(Clone)]
pub struct InteractiveReview {
    io: Arc<Mutex<ReviewIo>>,
    editor: Option<String>,
    pause: Option<Arc<dyn TerminalPause>>,
}

/// Whatever else draws on the reviewer's terminal (the CLI's live progress line) and must stand
/// aside while the dialogue runs: it hides itself, runs `dialogue`, and draws again afterwards.
/// Without it, a status line redrawn every tick erases the choice line the reviewer is reading.
pub trait TerminalPause: Send + Sync {
    fn paused(&self, dialogue: &mut dyn FnMut());
}

impl std::fmt::Debug for InteractiveReview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteractiveReview")
            .field("editor", &self.editor)
            .finish()
    }
}

impl InteractiveReview {
    /// Reads from stdin, writes to stderr.
    pub fn stdio() -> Self {
        Self::new(std::io::BufReader::new(std::io::stdin()), std::io::stderr())
    }

    pub fn new(input: impl BufRead + Send + 'static, output: impl Write + Send + 'static) -> Self {
        InteractiveReview {
            io: Arc::new(Mutex::new(ReviewIo {
                input: Box::new(input),
                output: Box::new(output),
            })),
            editor: None,
            pause: None,
        }
    }

    /// Suspends `pause` (e.g. a progress line) for the whole of each review dialogue.
    pub fn with_pause(mut self, pause: Arc<dyn TerminalPause>) -> Self {
        self.pause = Some(pause);
        self
    }

    /// The editor command for context edits (default: `$EDITOR`, else `vi`). It is run through
    /// `sh -c` with the file path appended, so it may carry arguments.
    pub fn with_editor(mut self, command: impl Into<String>) -> Self {
        self.editor = Some(command.into());
        self
    }
}

/// What the blocking dialogue needs (owned: it runs on a blocking thread).
struct Dialogue {
    node_id: String,
    mode: ReviewMode,
    allow_backtrack: bool,
    allow_edit: bool,
    status: String,
    output: Option<String>,
    error: Option<String>,
    context: Context,
    /// Nodes a backtrack may go to: the history's nodes (first visit order), then this node.
    targets: Vec<String>,
    editor: String,
}

#[async_trait]
impl ReviewHandler for InteractiveReview {
    async fn request_review(&self, request: ReviewRequest<'_>) -> ReviewOutcome {
        let mut targets: Vec<String> = Vec::new();
        for h in request.history {
            if !targets.contains(&h.node_id) {
                targets.push(h.node_id.clone());
            }
        }
        if !targets.iter().any(|t| t == request.node_id) {
            targets.push(request.node_id.to_string());
        }
        let dialogue = Dialogue {
            node_id: request.node_id.to_string(),
            mode: request.config.mode,
            allow_backtrack: request.config.allow_backtrack,
            allow_edit: request.config.allow_edit,
            status: request.result.status.to_string(),
            output: request.result.output_text().map(|c| c.into_owned()),
            error: request.result.error.clone(),
            context: request.context.clone(),
            targets,
            editor: self
                .editor
                .clone()
                .or_else(|| {
                    std::env::var("EDITOR")
                        .ok()
                        .filter(|e| !e.trim().is_empty())
                })
                .unwrap_or_else(|| "vi".to_string()),
        };
        let io = self.io.clone();
        let pause = self.pause.clone();
        let decision = tokio::task::spawn_blocking(move || {
            let Ok(mut io) = io.lock() else {
                return ReviewDecision::Reject {
                    reason: "review aborted: the terminal is unavailable".into(),
                };
            };
            match pause {
                Some(pause) => {
                    let mut dialogue = Some(dialogue);
                    let mut decision = None;
                    pause.paused(&mut || {
                        if let Some(d) = dialogue.take() {
                            decision = Some(d.run(&mut io));
                        }
                    });
                    decision.unwrap_or_else(|| ReviewDecision::Reject {
                        reason: "review aborted: the terminal is unavailable".into(),
                    })
                }
                None => dialogue.run(&mut io),
            }
        })
        .await
        .unwrap_or_else(|e| ReviewDecision::Reject {
            reason: format!("review aborted: {e}"),
        });
        ReviewOutcome::Decided(decision)
    }
}

const ABORTED: &str = "review aborted: no reviewer input";

impl Dialogue {
    fn run(self, io: &mut ReviewIo) -> ReviewDecision {
        let out = &mut io.output;
        let _ = writeln!(
            out,
            "\n── review of node '{}' ({}) ──",
            self.node_id,
            self.mode.as_str()
        );
        let _ = writeln!(out, "status: {}", self.status);
        if let Some(e) = &self.error {
            let _ = writeln!(out, "error: {e}");
        }
        if let Some(o) = &self.output {
            let _ = writeln!(out, "output:");
            for line in o.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        let mut edits: Option<Context> = None;
        loop {
            let mut menu = String::from("[a] approve  [r] reject");
            if self.allow_backtrack {
                menu.push_str("  [b] backtrack");
            }
            if self.allow_edit {
                menu.push_str("  [e] edit context");
            }
            let Some(answer) = ask(io, &format!("{menu} > ")) else {
                return ReviewDecision::Reject {
                    reason: ABORTED.into(),
                };
            };
            match answer.to_ascii_lowercase().as_str() {
                "a" | "approve" | "y" | "yes" => return ReviewDecision::Approve { edits },
                "r" | "reject" | "n" | "no" => {
                    let Some(reason) = ask(io, "reason: ") else {
                        return ReviewDecision::Reject {
                            reason: ABORTED.into(),
                        };
                    };
                    let reason = if reason.is_empty() {
                        "rejected by the reviewer".to_string()
                    } else {
                        reason
                    };
                    return ReviewDecision::Reject { reason };
                }
                "b" | "backtrack" if self.allow_backtrack => {
                    for (i, t) in self.targets.iter().enumerate() {
                        let note = if *t == self.node_id {
                            " (this node)"
                        } else {
                            ""
                        };
                        let _ = writeln!(io.output, "  {}. {t}{note}", i + 1);
                    }
                    let Some(choice) = ask(io, "backtrack to (number or node id): ") else {
                        return ReviewDecision::Reject {
                            reason: ABORTED.into(),
                        };
                    };
                    let target = choice
                        .parse::<usize>()
                        .ok()
                        .and_then(|n| n.checked_sub(1))
                        .and_then(|i| self.targets.get(i).cloned())
                        .or_else(|| self.targets.iter().find(|t| **t == choice).cloned());
                    let Some(target) = target else {
                        let _ = writeln!(io.output, "no such node: {choice}");
                        continue;
                    };
                    let Some(reason) = ask(io, "reason: ") else {
                        return ReviewDecision::Reject {
                            reason: ABORTED.into(),
                        };
                    };
                    return ReviewDecision::Backtrack {
                        target,
                        edits,
                        reason,
                    };
                }
                "e" | "edit" if self.allow_edit => {
                    let mut current = self.context.clone();
                    if let Some(e) = &edits {
                        current.extend(e.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                    match edit_in_editor(&self.editor, &current) {
                        Ok(edited) => {
                            let changed: Context = edited
                                .into_iter()
                                .filter(|(k, v)| current.get(k) != Some(v))
                                .collect();
                            let _ = writeln!(
                                io.output,
                                "{} value{} changed{}",
                                changed.len(),
                                if changed.len() == 1 { "" } else { "s" },
                                if changed.is_empty() {
                                    String::new()
                                } else {
                                    format!(
                                        ": {}",
                                        changed.keys().cloned().collect::<Vec<_>>().join(", ")
                                    )
                                }
                            );
                            if !changed.is_empty() {
                                edits.get_or_insert_with(Context::default).extend(changed);
                            }
                        }
                        Err(e) => {
                            let _ = writeln!(io.output, "edit discarded: {e}");
                        }
                    }
                }
                other => {
                    let _ = writeln!(
                        io.output,
                        "unknown answer '{other}': answer with one of the letters in brackets"
                    );
                }
            }
        }
    }
}

/// Prompts and reads one trimmed line; `None` at end of input.
fn ask(io: &mut ReviewIo, prompt: &str) -> Option<String> {
    let _ = write!(io.output, "{prompt}");
    let _ = io.output.flush();
    let mut line = String::new();
    match io.input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_string()),
    }
}

/// Writes `ctx` as pretty JSON to a temporary file, runs the editor on it and reads it back.
///
/// The file is created whole before the editor sees it, exclusively (never opening a file or
/// link someone else placed there) and readable by the user only, since the context may hold
/// sensitive values; it is removed afterwards (docs/security.md, *What hensuc writes and how*).
fn edit_in_editor(editor: &str, ctx: &Context) -> Result<Context, String> {
    use std::io::Write as _;
    let text = serde_json::to_string_pretty(ctx).map_err(|e| e.to_string())?;
    let mut file = tempfile::Builder::new()
        .prefix("hensu-review-")
        .suffix(".json")
        .tempfile()
        .map_err(|e| format!("cannot create a temporary file: {e}"))?;
    let path = file.path().to_path_buf();
    file.write_all((text + "\n").as_bytes())
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("hensu-editor")
        .arg(&path)
        .status();
    let result = match status {
        Ok(s) if s.success() => std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {} back: {e}", path.display()))
            .and_then(|t| match serde_json::from_str::<Value>(&t) {
                Ok(Value::Object(m)) => Ok(m.into_iter().collect()),
                Ok(_) => Err("the edited context must stay a JSON object".to_string()),
                Err(e) => Err(format!("invalid JSON: {e}")),
            }),
        Ok(s) => Err(format!("the editor `{editor}` exited with {s}")),
        Err(e) => Err(format!("cannot run the editor `{editor}`: {e}")),
    };
    // Removes the file (or what the editor left at its path).
    drop(file);
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_edited_file_is_private_whole_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen");
        // The "editor" records the file's mode, path and text, then edits it.
        let editor = format!(
            "f() {{ stat -c '%a' \"$1\" > '{s}'; printf '%s\\n' \"$1\" >> '{s}'; cat \"$1\" >> '{s}'; \
             printf '{{\"plan\": \"new\"}}' > \"$1\"; }}; f",
            s = seen.display()
        );
        let ctx: Context = [("plan".to_string(), Value::from("old"))]
            .into_iter()
            .collect();
        let edited = edit_in_editor(&editor, &ctx).unwrap();
        assert_eq!(edited["plan"], Value::from("new"));
        let seen = std::fs::read_to_string(&seen).unwrap();
        let mut lines = seen.lines();
        assert_eq!(lines.next(), Some("600"), "readable by the user only");
        let path = lines.next().unwrap();
        assert_eq!(
            lines.collect::<Vec<_>>().join("\n"),
            "{\n  \"plan\": \"old\"\n}",
            "written whole before the editor runs"
        );
        assert!(!std::path::Path::new(path).exists(), "removed afterwards");
    }
}
