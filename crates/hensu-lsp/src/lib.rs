//! The hensu language server (`hensuc lsp`).
//!
//! * [`Engine`] holds the open documents in memory and answers one LSP request per method (one
//!   file per method under `methods/`), taking and returning `lsp_types` values so it is tested
//!   without JSON-RPC. It does no I/O: prompt/rubric files and the workflow files of a project
//!   folder come through the [`Host`] trait.
//! * [`run_stdio`] / [`run`] are the server: a tolerant stdio transport, a main loop that applies
//!   edits at once and analyses on a worker thread (debounced), and request dispatch
//!   ([`handle_request`]) over the filesystem host [`FsHost`].
//!
//! Every method is total: a half-typed document is the normal case, nothing panics.

// `WorkspaceEdit::changes` is keyed by `lsp_types::Uri`, whose parsed form clippy considers
// interiorly mutable; it is never mutated.
#![allow(clippy::mutable_key_type)]

mod analysis;
mod context;
mod engine;
mod extends;
mod host;
mod incremental;
mod index;
mod index_moves;
mod line_index;
mod methods;
mod relex;
mod reuse;
mod server;
mod shift;

pub use analysis::Analysis;
pub use engine::{AnalysisDone, AnalysisJob, Engine, Retired};
pub use host::{Host, MemoryHost};
pub use methods::semantic_tokens::{
    legend as semantic_tokens_legend, type_name as semantic_token_type_name,
};
pub use server::{
    DEBOUNCE, FsHost, IDLE_TRIM, SessionEnd, WATCHED_GLOBS, capabilities, handle_request, run,
    run_stdio, run_stdio_with_trim, run_with_trim,
};

/// The syntax-tree symbol index, public only for the profiling example (`examples/prof.rs`).
#[doc(hidden)]
pub use index::Index;
