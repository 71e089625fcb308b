//! The server: the stdio transport ([`transport`]), the filesystem host ([`FsHost`]), request
//! dispatch ([`dispatch`]) and the main loop.
//!
//! The main loop never analyses. An edit only updates the text; the analysis runs on a worker
//! thread once no edit has come for [`DEBOUNCE`] (so a burst of `didChange` is analysed once),
//! and its diagnostics are published when it lands on the latest version. Requests are answered
//! at once against the latest text: while an analysis is pending, from the previous one moved
//! through the edits since (`crate::shift`).

mod dispatch;
mod fs_host;
pub mod transport;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Exit, Initialized, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{Initialize, RegisterCapability, Request as _, Shutdown};
use lsp_types::{
    ClientCapabilities, DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher, GlobPattern,
    InitializeParams, PublishDiagnosticsParams, Registration, RegistrationParams, Uri,
};
use serde::de::DeserializeOwned;

pub use dispatch::{capabilities, handle_request};
pub use fs_host::FsHost;

use crate::engine::{AnalysisDone, AnalysisJob, Engine, Retired};
use crate::host::{Host, uri_to_path};

/// How long the server waits after an edit for the next one before analysing.
pub const DEBOUNCE: Duration = Duration::from_millis(2);

/// How long the server is idle (no analysis running or queued) before the analysis thread frees
/// the replaced analyses it kept for its next job and asks the allocator to return its free
/// pages ([`run_stdio_with_trim`]). While the user types, the next job reuses a replaced
/// analysis's parts or the pages freed by it; returned pages would have to be faulted in and
/// zeroed again (docs/performance.md, *Language server, round 3*, *Third step*, *Fourth step*).
pub const IDLE_TRIM: Duration = Duration::from_secs(1);

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// `shutdown` then `exit` (or the end of input after `shutdown`): exit code 0.
    AfterShutdown,
    /// `exit` or the end of input without `shutdown`: exit code 1, as the protocol says.
    WithoutShutdown,
}

/// The files whose changes affect diagnostics, watched by the client for the server.
pub const WATCHED_GLOBS: &[&str] = &[
    "**/prompts/**",
    "**/rubrics/**",
    "**/workflows/*.{hwf,kt}",
    "**/commands.yaml",
    "**/hensu.toml",
];

/// Runs the server on stdin/stdout until `exit`.
pub fn run_stdio() -> anyhow::Result<SessionEnd> {
    let (connection, threads) = transport::stdio();
    let end = run(&connection, FsHost)?;
    drop(connection);
    threads.join_writer()?;
    Ok(end)
}

/// [`run_stdio`], calling `trim` on the analysis thread once the server has been idle for
/// [`IDLE_TRIM`] after an analysis: the binary passes its allocator's "return free memory"
/// (`hensuc lsp`: mimalloc's `mi_collect`).
pub fn run_stdio_with_trim(trim: fn()) -> anyhow::Result<SessionEnd> {
    let (connection, threads) = transport::stdio();
    let end = run_with_trim(&connection, FsHost, Some(trim))?;
    drop(connection);
    threads.join_writer()?;
    Ok(end)
}

/// Runs the server on a connection (stdio, or an in-memory one in tests and benches).
pub fn run(connection: &Connection, host: impl Host + 'static) -> anyhow::Result<SessionEnd> {
    run_with_trim(connection, host, None)
}

/// [`run`] with the idle trim of [`run_stdio_with_trim`].
pub fn run_with_trim(
    connection: &Connection,
    host: impl Host + 'static,
    trim: Option<fn()>,
) -> anyhow::Result<SessionEnd> {
    let (jobs, job_rx) = crossbeam_channel::unbounded::<Work>();
    let (done_tx, done) = crossbeam_channel::unbounded::<AnalysisDone>();
    let worker = std::thread::Builder::new()
        .name("hensu-lsp-analysis".to_string())
        .spawn(move || {
            // Replaced analyses, kept for the next job: it frees them first, or reuses the one
            // its base was spliced from (`crate::reuse`).
            let mut spare = Retired::default();
            for work in job_rx {
                match work {
                    Work::Analyse(mut job) => {
                        job.free_first(std::mem::take(&mut spare));
                        if done_tx.send(job.run()).is_err() {
                            return;
                        }
                    }
                    Work::Free(retired) => spare.append(retired),
                    Work::Idle => {
                        drop(std::mem::take(&mut spare));
                        if let Some(trim) = trim {
                            trim();
                        }
                    }
                }
            }
        })?;
    let mut server = Server {
        connection,
        engine: Engine::new(host),
        jobs,
        busy: false,
        queue: VecDeque::new(),
        deadline: None,
        state: State::Uninitialized,
        client: ClientCapabilities::default(),
        next_id: 0,
        trim_at: None,
    };
    let end = server.main_loop(&done);
    drop(server);
    let _ = worker.join();
    end
}

/// What the analysis thread does: an analysis (answered on the `done` channel), or taking
/// replaced analyses to free where the next one will be built (see [`Retired`]; the next job
/// frees them, or reuses one: `crate::reuse`).
enum Work {
    Analyse(Box<AnalysisJob>),
    Free(Retired),
    /// The server was idle for [`IDLE_TRIM`]: free the replaced analyses kept for the next job
    /// and return the allocator's free pages (with a trim function).
    Idle,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Uninitialized,
    Running,
    ShutDown,
}

struct Server<'c> {
    connection: &'c Connection,
    engine: Engine,
    jobs: Sender<Work>,
    /// An analysis is on the worker.
    busy: bool,
    /// Documents waiting for an analysis, in the order they were edited.
    queue: VecDeque<Uri>,
    /// When the queue may start (the debounce after the last edit).
    deadline: Option<Instant>,
    state: State,
    client: ClientCapabilities,
    next_id: i32,
    /// When to send [`Work::Idle`], if the server stays idle until then (set after each
    /// analysis).
    trim_at: Option<Instant>,
}

impl Server<'_> {
    fn main_loop(&mut self, done: &Receiver<AnalysisDone>) -> anyhow::Result<SessionEnd> {
        loop {
            let wait = match (self.busy, self.deadline) {
                (false, Some(d)) if !self.queue.is_empty() => {
                    d.saturating_duration_since(Instant::now())
                }
                (false, _) if self.trim_at.is_some() => self.trim_at.map_or(Duration::ZERO, |t| {
                    t.saturating_duration_since(Instant::now())
                }),
                _ => Duration::from_secs(3600),
            };
            select! {
                recv(self.connection.receiver) -> msg => match msg {
                    Ok(msg) => {
                        if let Some(end) = self.message(msg)? {
                            return Ok(end);
                        }
                    }
                    Err(_) => {
                        return Ok(if self.state == State::ShutDown {
                            SessionEnd::AfterShutdown
                        } else {
                            SessionEnd::WithoutShutdown
                        });
                    }
                },
                recv(done) -> d => {
                    self.busy = false;
                    if let Ok(d) = d {
                        let uri = d.uri.clone();
                        if self.engine.install(d) {
                            let published = self.engine.publish_diagnostics(&uri);
                            self.publish(published)?;
                        } else if self.engine.is_dirty(&uri) {
                            self.schedule(uri, Duration::ZERO);
                        }
                        let retired = self.engine.take_retired();
                        if !retired.is_empty() {
                            self.jobs.send(Work::Free(retired))?;
                        }
                        self.trim_at = Some(Instant::now() + IDLE_TRIM);
                    }
                }
                recv(crossbeam_channel::after(wait)) -> _ => {}
            }
            self.start_analysis()?;
            self.trim_when_idle()?;
        }
    }

    /// Starts the next queued analysis when the worker is free, the debounce is over and no
    /// message waits (so queued edits are applied first).
    fn start_analysis(&mut self) -> anyhow::Result<()> {
        if self.busy || !self.connection.receiver.is_empty() {
            return Ok(());
        }
        if self.deadline.is_some_and(|d| Instant::now() < d) {
            return Ok(());
        }
        while let Some(uri) = self.queue.pop_front() {
            if let Some(job) = self.engine.job(&uri) {
                self.jobs.send(Work::Analyse(Box::new(job)))?;
                self.busy = true;
                return Ok(());
            }
        }
        self.deadline = None;
        Ok(())
    }

    /// Sends [`Work::Idle`] once [`IDLE_TRIM`] has passed since the last analysis with none
    /// running or queued since.
    fn trim_when_idle(&mut self) -> anyhow::Result<()> {
        if self.busy || !self.queue.is_empty() {
            return Ok(());
        }
        if self.trim_at.is_some_and(|t| t <= Instant::now()) {
            self.trim_at = None;
            self.jobs.send(Work::Idle)?;
        }
        Ok(())
    }

    fn schedule(&mut self, uri: Uri, debounce: Duration) {
        if !self.queue.contains(&uri) {
            self.queue.push_back(uri);
        }
        self.deadline = Some(Instant::now() + debounce);
    }

    fn send(&self, msg: Message) -> anyhow::Result<()> {
        self.connection.sender.send(msg)?;
        Ok(())
    }

    fn publish(&self, published: Vec<PublishDiagnosticsParams>) -> anyhow::Result<()> {
        for p in published {
            let note = Notification::new(PublishDiagnostics::METHOD.to_string(), p);
            self.send(Message::Notification(note))?;
        }
        Ok(())
    }

    fn error(&self, id: RequestId, code: ErrorCode, message: &str) -> anyhow::Result<()> {
        let resp = Response::new_err(id, code as i32, message.to_string());
        self.send(Message::Response(resp))
    }

    fn message(&mut self, msg: Message) -> anyhow::Result<Option<SessionEnd>> {
        match msg {
            Message::Request(req) => self.request(req).map(|()| None),
            Message::Notification(n) => self.notification(n),
            Message::Response(_) => Ok(None),
        }
    }

    fn request(&mut self, req: Request) -> anyhow::Result<()> {
        match (self.state, req.method.as_str()) {
            (State::Uninitialized, Initialize::METHOD) => {
                if let Ok(p) = serde_json::from_value::<InitializeParams>(req.params) {
                    self.client = p.capabilities;
                }
                let init = serde_json::json!({
                    "capabilities": capabilities(),
                    "serverInfo": { "name": "hensuc lsp", "version": env!("CARGO_PKG_VERSION") },
                });
                self.state = State::Running;
                self.send(Message::Response(Response::new_ok(req.id, init)))
            }
            (State::Uninitialized, _) => self.error(
                req.id,
                ErrorCode::ServerNotInitialized,
                "the server is not initialized",
            ),
            (State::ShutDown, _) => self.error(
                req.id,
                ErrorCode::InvalidRequest,
                "the server is shut down: only `exit` is accepted",
            ),
            (State::Running, Initialize::METHOD) => self.error(
                req.id,
                ErrorCode::InvalidRequest,
                "the server is already initialized",
            ),
            (State::Running, Shutdown::METHOD) => {
                self.state = State::ShutDown;
                self.send(Message::Response(Response::new_ok(req.id, ())))
            }
            (State::Running, _) => {
                let resp = handle_request(&self.engine, req);
                self.send(Message::Response(resp))
            }
        }
    }

    fn notification(&mut self, n: Notification) -> anyhow::Result<Option<SessionEnd>> {
        fn get<P: DeserializeOwned>(n: Notification) -> Option<P> {
            serde_json::from_value(n.params).ok()
        }
        if n.method == Exit::METHOD {
            return Ok(Some(if self.state == State::ShutDown {
                SessionEnd::AfterShutdown
            } else {
                SessionEnd::WithoutShutdown
            }));
        }
        if self.state != State::Running {
            return Ok(None);
        }
        match n.method.as_str() {
            Initialized::METHOD => self.register_watchers()?,
            DidOpenTextDocument::METHOD => {
                if let Some(p) = get::<lsp_types::DidOpenTextDocumentParams>(n) {
                    let doc = p.text_document;
                    self.engine
                        .open_pending(doc.uri.clone(), doc.version, doc.text);
                    self.schedule(doc.uri, Duration::ZERO);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Some(p) = get::<lsp_types::DidChangeTextDocumentParams>(n) {
                    let uri = p.text_document.uri;
                    self.engine
                        .edit(&uri, p.text_document.version, p.content_changes);
                    self.schedule(uri, DEBOUNCE);
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Some(p) = get::<lsp_types::DidSaveTextDocumentParams>(n) {
                    let uri = p.text_document.uri;
                    if !self.engine.is_dirty(&uri) {
                        let published = self.engine.publish_diagnostics(&uri);
                        self.publish(published)?;
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Some(p) = get::<lsp_types::DidCloseTextDocumentParams>(n) {
                    let uri = p.text_document.uri;
                    let others = self.engine.project_open_uris(&uri);
                    self.engine.close(&uri);
                    self.queue.retain(|u| *u != uri);
                    let mut out = vec![PublishDiagnosticsParams {
                        uri,
                        diagnostics: Vec::new(),
                        version: None,
                    }];
                    if let Some(first) = others.first() {
                        out.extend(self.engine.publish_diagnostics(first));
                    }
                    self.publish(out)?;
                }
            }
            DidChangeWatchedFiles::METHOD => {
                if let Some(p) = get::<lsp_types::DidChangeWatchedFilesParams>(n) {
                    let paths: Vec<String> = p
                        .changes
                        .iter()
                        .filter_map(|c| uri_to_path(&c.uri))
                        .collect();
                    for uri in self.engine.files_changed(&paths) {
                        self.schedule(uri, DEBOUNCE);
                    }
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// Asks the client to watch prompts, rubrics, workflows, `commands.yaml` and `hensu.toml`
    /// (when it supports dynamic registration; otherwise a client extension may still send
    /// `workspace/didChangeWatchedFiles` on its own).
    fn register_watchers(&mut self) -> anyhow::Result<()> {
        let dynamic = self
            .client
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        if !dynamic {
            return Ok(());
        }
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: WATCHED_GLOBS
                .iter()
                .map(|g| FileSystemWatcher {
                    glob_pattern: GlobPattern::String((*g).to_string()),
                    kind: None,
                })
                .collect(),
        };
        let params = RegistrationParams {
            registrations: vec![Registration {
                id: "hensu-watched-files".to_string(),
                method: DidChangeWatchedFiles::METHOD.to_string(),
                register_options: Some(serde_json::to_value(options)?),
            }],
        };
        self.next_id += 1;
        let id = RequestId::from(format!("hensu-{}", self.next_id));
        let req = Request::new(id, RegisterCapability::METHOD.to_string(), params);
        self.send(Message::Request(req))
    }
}
