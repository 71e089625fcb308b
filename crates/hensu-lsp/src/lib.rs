//! The hensu language server (`hensuc lsp`).
//!
//! * [`Engine`] holds the open documents in memory and answers one LSP request per method (one
//!   file per method under `methods/`), taking and returning `lsp_types` values so it is tested
//!   without JSON-RPC. It does no I/O: prompt/rubric files and the workflow files of a project
//!   folder come through the [`Host`] trait.
//! * [`server`] is the stdio transport (`lsp-server`) and the filesystem [`Host`].
//!
//! Every method is total: a half-typed document is the normal case, nothing panics.

// `WorkspaceEdit::changes` is keyed by `lsp_types::Uri`, whose parsed form clippy considers
// interiorly mutable; it is never mutated.
#![allow(clippy::mutable_key_type)]

pub mod analysis;
pub mod context;
pub mod engine;
pub mod host;
pub mod index;
pub mod line_index;
pub mod methods;
pub mod server;

pub use engine::{Engine, Formatter, hensu_formatter};
pub use host::{Host, MemoryHost};
pub use methods::semantic_tokens::legend as semantic_tokens_legend;
