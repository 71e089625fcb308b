//! The capabilities and request dispatch: a request's params are decoded into `lsp_types` and
//! answered by the [`Engine`] method of the same name (one file per method under `methods/`).

use lsp_server::{ErrorCode, Request, Response};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentHighlightRequest, DocumentSymbolRequest,
    FoldingRangeRequest, Formatting, GotoDefinition, HoverRequest, InlayHintRequest,
    PrepareRenameRequest, References, Rename, Request as _, SelectionRangeRequest,
    SemanticTokensFullRequest, SignatureHelpRequest, WorkspaceSymbolRequest,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    FoldingRangeProviderCapability, HoverProviderCapability, InlayHintServerCapabilities, OneOf,
    RenameOptions, SelectionRangeProviderCapability, SemanticTokensFullOptions,
    SemanticTokensOptions, SemanticTokensServerCapabilities, ServerCapabilities,
    SignatureHelpOptions, TextDocumentSyncCapability, TextDocumentSyncKind,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::engine::Engine;

/// The capabilities `hensuc lsp` announces.
pub fn capabilities() -> ServerCapabilities {
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
        document_formatting_provider: Some(OneOf::Left(true)),
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
        workspace_symbol_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        selection_range_provider: Some(SelectionRangeProviderCapability::Simple(true)),
        inlay_hint_provider: Some(OneOf::Right(InlayHintServerCapabilities::Options(
            lsp_types::InlayHintOptions::default(),
        ))),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(vec!["(".to_string(), ",".to_string()]),
            retrigger_characters: None,
            work_done_progress_options: Default::default(),
        }),
        ..ServerCapabilities::default()
    }
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
        WorkspaceSymbolRequest::METHOD => answer!(|p| engine.workspace_symbol(p)),
        FoldingRangeRequest::METHOD => answer!(|p| engine.folding_range(p)),
        DocumentHighlightRequest::METHOD => answer!(|p| engine.document_highlight(p)),
        SelectionRangeRequest::METHOD => answer!(|p| engine.selection_range(p)),
        InlayHintRequest::METHOD => answer!(|p| engine.inlay_hint(p)),
        SignatureHelpRequest::METHOD => answer!(|p| engine.signature_help(p)),
        _ => Response::new_err(
            req.id.clone(),
            ErrorCode::MethodNotFound as i32,
            format!("unsupported request `{}`", req.method),
        ),
    }
}
