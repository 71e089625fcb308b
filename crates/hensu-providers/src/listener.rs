//! Event listeners that redact secrets before events leave the process.

use std::io::Write;
use std::sync::{Arc, Mutex};

use hensu_runtime::journal::{CallEvent, CallObserver};
use hensu_runtime::{Event, ExecutionListener};
use serde_json::Value;

use crate::redact::Redactor;

/// Hands every event, as redacted JSON, to a callback.
pub struct RedactingJsonListener<F: Fn(Value) + Send + Sync> {
    redactor: Arc<Redactor>,
    sink: F,
}

impl<F: Fn(Value) + Send + Sync> RedactingJsonListener<F> {
    pub fn new(redactor: Arc<Redactor>, sink: F) -> Self {
        RedactingJsonListener { redactor, sink }
    }
}

impl<F: Fn(Value) + Send + Sync> ExecutionListener for RedactingJsonListener<F> {
    fn on_event(&self, event: &Event<'_>) {
        let mut json = event.to_json();
        self.redactor.redact_json(&mut json);
        (self.sink)(json);
    }
}

/// The runtime's `JsonlListener`, redacting: one redacted JSON line per event, and one
/// `tool_call` line per start and end of a tool-loop call (its call observer).
pub struct RedactingJsonlListener<W: Write + Send + 'static> {
    lines: Arc<Lines<W>>,
}

/// The writer of a [`RedactingJsonlListener`], shared with its call observer.
struct Lines<W: Write + Send> {
    redactor: Arc<Redactor>,
    out: Mutex<W>,
}

impl<W: Write + Send> Lines<W> {
    fn write(&self, mut json: Value, flush: bool) {
        self.redactor.redact_json(&mut json);
        if let Ok(mut out) = self.out.lock() {
            if serde_json::to_writer(&mut *out, &json).is_ok() {
                let _ = out.write_all(b"\n");
            }
            if flush {
                let _ = out.flush();
            }
        }
    }
}

impl<W: Write + Send + 'static> RedactingJsonlListener<W> {
    pub fn new(redactor: Arc<Redactor>, out: W) -> Self {
        RedactingJsonlListener {
            lines: Arc::new(Lines {
                redactor,
                out: Mutex::new(out),
            }),
        }
    }

    /// The writer back (once the run, and with it the call observer, is gone).
    pub fn into_inner(self) -> Option<W> {
        let lines = Arc::try_unwrap(self.lines).ok()?;
        Some(lines.out.into_inner().unwrap_or_else(|p| p.into_inner()))
    }
}

impl<W: Write + Send + 'static> ExecutionListener for RedactingJsonlListener<W> {
    fn on_event(&self, event: &Event<'_>) {
        let flush = matches!(event, Event::RunFinished { .. });
        self.lines.write(event.to_json(), flush);
    }

    fn call_observer(&self) -> Option<Arc<dyn CallObserver>> {
        Some(self.lines.clone())
    }
}

impl<W: Write + Send + 'static> CallObserver for Lines<W> {
    fn on_call(&self, event: &CallEvent<'_>) {
        if let Some(json) = event.to_json() {
            self.write(json, false);
        }
    }
}
