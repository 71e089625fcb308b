//! The hensu language server (`hensuc lsp`).
//!
//! * [`Engine`] holds the open documents in memory and answers one LSP request per method (one
//!   file per method under `methods/`), taking and returning `lsp_types` values so it is tested
//!   without JSON-RPC. It does no I/O: prompt/rubric files and the workflow files of a project
//!   folder come through the [`Host`] trait.
//! * [`run_stdio`] / [`run`] are the transport (`lsp-server`): they decode requests into
//!   `lsp_types` params ([`handle_request`], [`handle_notification`]) and answer with the engine
//!   over the filesystem host [`FsHost`].
//!
//! Every method is total: a half-typed document is the normal case, nothing panics.

// `WorkspaceEdit::changes` is keyed by `lsp_types::Uri`, whose parsed form clippy considers
// interiorly mutable; it is never mutated.
#![allow(clippy::mutable_key_type)]

mod analysis;
mod context;
mod engine;
mod host;
mod index;
mod line_index;
mod methods;
mod server;

pub use analysis::Analysis;
pub use engine::Engine;
pub use host::{Host, MemoryHost};
pub use methods::semantic_tokens::{
    legend as semantic_tokens_legend, type_name as semantic_token_type_name,
};
pub use server::{FsHost, capabilities, handle_notification, handle_request, run, run_stdio};

/// The syntax-tree symbol index, public only for the profiling example (`examples/prof.rs`).
#[doc(hidden)]
pub use index::Index;
