//! `textDocument/formatting` with the canonical formatter (`hensu-fmt`, as `hensuc fmt` runs it):
//! one edit replacing the whole document, none when it is already formatted, and an error (the
//! document untouched) when it cannot be formatted (syntax errors).

use hensu_diagnostics::Span;
use lsp_types::{DocumentFormattingParams, TextEdit};

use crate::engine::Engine;

impl Engine {
    pub fn formatting(
        &self,
        params: DocumentFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>, String> {
        let Some(a) = self.analysis(&params.text_document.uri) else {
            return Ok(None);
        };
        let formatted = hensu_fmt::format(&a.text).map_err(|e| format!("not formatted: {e}"))?;
        if formatted == *a.text {
            return Ok(Some(Vec::new()));
        }
        let all = Span::new(0, u32::try_from(a.text.len()).unwrap_or(u32::MAX));
        Ok(Some(vec![TextEdit {
            range: a.range(all),
            new_text: formatted,
        }]))
    }
}
