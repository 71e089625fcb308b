//! One file per LSP method, each an `impl Engine` block taking and returning `lsp_types` values.

pub mod code_action;
pub mod completion;
pub mod definition;
pub mod diagnostics;
pub mod document_symbol;
pub mod formatting;
pub mod hover;
pub mod references;
pub mod rename;
pub mod semantic_tokens;
