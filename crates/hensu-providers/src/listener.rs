//! Event listeners that redact secrets before events leave the process.

use std::io::Write;
use std::sync::{Arc, Mutex};

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

/// The runtime's `JsonlListener`, redacting: one redacted JSON line per event.
pub struct RedactingJsonlListener<W: Write + Send> {
    redactor: Arc<Redactor>,
    out: Mutex<W>,
}

impl<W: Write + Send> RedactingJsonlListener<W> {
    pub fn new(redactor: Arc<Redactor>, out: W) -> Self {
        RedactingJsonlListener {
            redactor,
            out: Mutex::new(out),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

impl<W: Write + Send> ExecutionListener for RedactingJsonlListener<W> {
    fn on_event(&self, event: &Event<'_>) {
        let mut json = event.to_json();
        self.redactor.redact_json(&mut json);
        if let Ok(mut out) = self.out.lock() {
            if serde_json::to_writer(&mut *out, &json).is_ok() {
                let _ = out.write_all(b"\n");
            }
            if matches!(event, Event::RunFinished { .. }) {
                let _ = out.flush();
            }
        }
    }
}
