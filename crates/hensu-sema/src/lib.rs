//! Semantic analysis of hensu workflows: the schema-driven lowering of the syntax tree to the
//! typed IR, and every check of the language specification. No I/O: prompt and rubric files come
//! in through the [`files::FileProvider`] trait so the CLI and the LSP share this crate.
//!
//! * [`schema`]: which statements each block accepts (also used by the LSP for completion).
//! * [`lower()`] / [`lower_source`]: syntax tree → [`hensu_ir::Workflow`] + [`origins::Origins`].
//! * [`files`]: the file trait, path jail check and an in-memory provider.
//! * [`extend`]: `extends("base")`, the project-level merge of a workflow with its base.

pub mod bounds;
mod cascade;
pub mod check;
pub mod extend;
pub mod files;
pub mod json_origins;
pub mod lower;
pub mod origins;
pub mod schema;
pub mod suggest;
pub mod suppress;

use hensu_diagnostics::FileId;
use hensu_syntax::ast::SourceFile;

pub use json_origins::origins_from_json;
pub use lower::{Lowered, LoweredNode, is_valid_identifier, lower_graph_node};
pub use suggest::did_you_mean;

/// Lowers a parsed file to the IR and its span side table. The IR is produced whenever the
/// file is structurally usable (a workflow with a graph), even when there are errors.
pub fn lower(file: &SourceFile<'_>, file_id: FileId, files: &dyn files::FileProvider) -> Lowered {
    lower::lower(file, file_id, files)
}

/// Parses `src` and lowers it: the parser's diagnostics (lexical and syntax) come first in
/// [`Lowered::diagnostics`], followed by the lowering's.
pub fn lower_source(src: &str, file_id: FileId, files: &dyn files::FileProvider) -> Lowered {
    lower_decoded(src, Vec::new(), file_id, files)
}

/// [`lower_source`] for text from [`hensu_syntax::decode_source`]: its invalid-UTF-8 diagnostics
/// replace the lexer's "unexpected character" for the same replacement characters.
pub fn lower_decoded(
    src: &str,
    decode_diagnostics: Vec<hensu_diagnostics::Diagnostic>,
    file_id: FileId,
    files: &dyn files::FileProvider,
) -> Lowered {
    // The graph is parsed one statement at a time as it is lowered (docs/performance.md,
    // *Round 3, fourth sitting: the front end's heap*); should that fail, the whole tree.
    let (parsed, deferred) =
        hensu_syntax::parse_decoded_deferring_graphs(src, decode_diagnostics.clone());
    let (parse_diagnostics, mut lowered) = if deferred.is_empty() {
        let lowered = lower::lower_owned(parsed.file, file_id, files);
        (parsed.diagnostics, lowered)
    } else {
        match lower::lower_deferred(parsed.file, src, deferred, file_id, files) {
            Some(lowered) => (parsed.diagnostics, lowered),
            None => {
                let parsed = hensu_syntax::parse_decoded(src, decode_diagnostics);
                let lowered = lower::lower_owned(parsed.file, file_id, files);
                (parsed.diagnostics, lowered)
            }
        }
    };
    let mut diagnostics: Vec<_> = parse_diagnostics
        .into_iter()
        .map(|d| d.in_file(file_id))
        .collect();
    let syntax_errors = diagnostics.iter().any(|d| d.is_error());
    let lowering = std::mem::take(&mut lowered.diagnostics);
    diagnostics.extend(cascade::settle_lowering(&diagnostics, lowering));
    lowered.origins.damage = if syntax_errors {
        origins::Damage::Syntax
    } else if diagnostics.iter().any(|d| d.is_error()) {
        origins::Damage::Lowering
    } else {
        origins::Damage::None
    };
    lowered.origins.error_spans = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.primary.span)
        .collect();
    lowered.diagnostics = diagnostics;
    lowered
}
