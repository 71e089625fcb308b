//! One file per LSP method, each an `impl Engine` block taking and returning `lsp_types` values.

pub mod code_action;
pub mod completion;
mod completion_list;
pub mod definition;
pub mod diagnostics;
pub mod document_highlight;
pub mod document_symbol;
pub mod folding_range;
pub mod formatting;
pub mod hover;
pub mod inlay_hint;
pub mod prompt_file;
pub mod references;
pub mod rename;
pub mod selection_range;
pub mod semantic_tokens;
pub mod signature_help;
pub mod workspace_symbol;
