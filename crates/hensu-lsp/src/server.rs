//! The stdio transport (`lsp-server`, as rust-analyzer and gleam use it) and the filesystem
//! [`Host`]: requests are decoded into `lsp_types` params, answered by the [`Engine`], and
//! diagnostics are published after every open/change/close.

use std::path::{Path, PathBuf};

use hensu_sema::files::{FileError, ResourceDir};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest,
    PrepareRenameRequest, References, Rename, Request as _, SemanticTokensFullRequest,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    HoverProviderCapability, OneOf, PublishDiagnosticsParams, RenameOptions,
    SemanticTokensFullOptions, SemanticTokensOptions, SemanticTokensServerCapabilities,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::engine::{Engine, Formatter};
use crate::host::Host;

/// The filesystem host: prompts and rubrics jailed to `<root>/prompts/` and `<root>/rubrics/`
/// (absolute paths, `..` and symlinks out are refused), workflows listed from `<root>/workflows/`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FsHost;

impl Host for FsHost {
    fn read_resource(
        &self,
        root: &str,
        dir: ResourceDir,
        relative: &str,
    ) -> Result<String, FileError> {
        hensu_sema::files::check_relative_path(relative)?;
        let base = Path::new(root).join(dir.as_str());
        let resolved = match base.join(relative).canonicalize() {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FileError::NotFound),
            Err(e) => return Err(FileError::Io(e.to_string())),
        };
        let base = base.canonicalize().map_err(|_| FileError::NotFound)?;
        if !resolved.starts_with(&base) {
            return Err(FileError::Escapes);
        }
        // A FIFO or device named like a prompt would block the server or never end.
        if !std::fs::metadata(&resolved).is_ok_and(|m| m.is_file()) {
            return Err(FileError::Io("not a regular file".to_string()));
        }
        let bytes = std::fs::read(&resolved).map_err(|e| FileError::Io(e.to_string()))?;
        String::from_utf8(bytes)
            .map_err(|_| FileError::Io("the file is not valid UTF-8".to_string()))
    }

    fn workflow_files(&self, root: &str) -> Vec<(String, String)> {
        let dir = PathBuf::from(root).join("workflows");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .filter(|p| p.to_str().is_some_and(crate::host::is_workflow_path))
            .collect();
        paths.sort();
        paths
            .into_iter()
            // Spans are u32 offsets; skip anything absurdly large.
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < u64::from(u32::MAX)))
            .filter_map(|p| {
                let text = std::fs::read_to_string(&p).ok()?;
                Some((p.to_str()?.to_string(), text))
            })
            .collect()
    }
}

/// The capabilities `hensuc lsp` announces.
pub fn capabilities(formatting: bool) -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(
                ["\"", ".", "{", "(", ","]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            ),
            ..CompletionOptions::default()
        }),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: formatting.then_some(OneOf::Left(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: crate::methods::semantic_tokens::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                work_done_progress_options: Default::default(),
            },
        )),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

/// Runs the server on stdin/stdout until `shutdown` + `exit`.
pub fn run_stdio(formatter: Option<Formatter>) -> anyhow::Result<()> {
    let (connection, io_threads) = Connection::stdio();
    run(&connection, formatter)?;
    drop(connection);
    io_threads.join()?;
    Ok(())
}

/// Runs the server on a connection (stdio, or an in-memory one in tests).
pub fn run(connection: &Connection, formatter: Option<Formatter>) -> anyhow::Result<()> {
    let caps = serde_json::to_value(capabilities(formatter.is_some()))?;
    let init = serde_json::json!({
        "capabilities": caps,
        "serverInfo": { "name": "hensuc lsp", "version": env!("CARGO_PKG_VERSION") },
    });
    let (id, _params) = connection.initialize_start()?;
    connection.initialize_finish(id, init)?;
    let mut engine = Engine::new(FsHost);
    if let Some(f) = formatter {
        engine = engine.with_formatter(f);
    }
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) => {
                if connection.handle_shutdown(&req)? {
                    return Ok(());
                }
                let resp = handle_request(&engine, req);
                connection.sender.send(Message::Response(resp))?;
            }
            Message::Notification(n) => {
                for p in handle_notification(&mut engine, n) {
                    let note = Notification::new(PublishDiagnostics::METHOD.to_string(), p);
                    connection.sender.send(Message::Notification(note))?;
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn params<P: DeserializeOwned>(req: &Request) -> Result<P, Box<Response>> {
    serde_json::from_value(req.params.clone()).map_err(|e| {
        Box::new(Response::new_err(
            req.id.clone(),
            ErrorCode::InvalidParams as i32,
            e.to_string(),
        ))
    })
}

fn ok<R: Serialize>(req: &Request, r: R) -> Response {
    Response::new_ok(req.id.clone(), r)
}

fn failed(req: &Request, message: String) -> Response {
    Response::new_err(req.id.clone(), ErrorCode::RequestFailed as i32, message)
}

/// Answers one request.
pub fn handle_request(engine: &Engine, req: Request) -> Response {
    macro_rules! answer {
        ($e:expr) => {
            match params(&req) {
                Ok(p) => ok(&req, $e(p)),
                Err(resp) => *resp,
            }
        };
    }
    macro_rules! answer_result {
        ($e:expr) => {
            match params(&req) {
                Ok(p) => match $e(p) {
                    Ok(r) => ok(&req, r),
                    Err(msg) => failed(&req, msg),
                },
                Err(resp) => *resp,
            }
        };
    }
    match req.method.as_str() {
        HoverRequest::METHOD => answer!(|p| engine.hover(p)),
        Completion::METHOD => answer!(|p| engine.completion(p)),
        GotoDefinition::METHOD => answer!(|p| engine.definition(p)),
        References::METHOD => answer!(|p| engine.references(p)),
        PrepareRenameRequest::METHOD => answer_result!(|p| engine.prepare_rename(p)),
        Rename::METHOD => answer_result!(|p| engine.rename(p)),
        DocumentSymbolRequest::METHOD => answer!(|p| engine.document_symbol(p)),
        Formatting::METHOD => answer_result!(|p| engine.formatting(p)),
        SemanticTokensFullRequest::METHOD => answer!(|p| engine.semantic_tokens_full(p)),
        CodeActionRequest::METHOD => answer!(|p| engine.code_action(p)),
        _ => Response::new_err(
            req.id.clone(),
            ErrorCode::MethodNotFound as i32,
            format!("unsupported request `{}`", req.method),
        ),
    }
}

/// Applies one notification; returns the diagnostics to publish.
pub fn handle_notification(engine: &mut Engine, n: Notification) -> Vec<PublishDiagnosticsParams> {
    fn get<P: DeserializeOwned>(n: &Notification) -> Option<P> {
        serde_json::from_value(n.params.clone()).ok()
    }
    match n.method.as_str() {
        DidOpenTextDocument::METHOD => {
            let Some(p) = get::<lsp_types::DidOpenTextDocumentParams>(&n) else {
                return Vec::new();
            };
            let uri = p.text_document.uri.clone();
            engine.open(
                p.text_document.uri,
                p.text_document.version,
                p.text_document.text,
            );
            engine.publish_diagnostics(&uri)
        }
        DidChangeTextDocument::METHOD => {
            let Some(p) = get::<lsp_types::DidChangeTextDocumentParams>(&n) else {
                return Vec::new();
            };
            let uri = p.text_document.uri;
            engine.change(&uri, p.text_document.version, p.content_changes);
            engine.publish_diagnostics(&uri)
        }
        DidSaveTextDocument::METHOD => {
            // A saved file may change what its unopened siblings see.
            let Some(p) = get::<lsp_types::DidSaveTextDocumentParams>(&n) else {
                return Vec::new();
            };
            engine.publish_diagnostics(&p.text_document.uri)
        }
        DidCloseTextDocument::METHOD => {
            let Some(p) = get::<lsp_types::DidCloseTextDocumentParams>(&n) else {
                return Vec::new();
            };
            let uri: Uri = p.text_document.uri;
            let others: Vec<Uri> = engine.project_open_uris(&uri);
            engine.close(&uri);
            let mut out = vec![PublishDiagnosticsParams {
                uri,
                diagnostics: Vec::new(),
                version: None,
            }];
            if let Some(first) = others.first() {
                out.extend(engine.publish_diagnostics(first));
            }
            out
        }
        _ => Vec::new(),
    }
}
