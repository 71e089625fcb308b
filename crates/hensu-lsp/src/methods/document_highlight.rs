//! `textDocument/documentHighlight`: every occurrence in the document of the node, agent,
//! variable or workflow id under the cursor (`{name}` placeholders included). Declarations and
//! writes (`writes`, `yields`) are `WRITE`, other uses `READ`.

use lsp_types::{DocumentHighlight, DocumentHighlightKind, DocumentHighlightParams};

use crate::engine::Engine;
use crate::index::Role;

impl Engine {
    pub fn document_highlight(
        &self,
        params: DocumentHighlightParams,
    ) -> Option<Vec<DocumentHighlight>> {
        let pos = params.text_document_position_params;
        let a = self.analysis(&pos.text_document.uri)?;
        let occ = a.index.occ_at(a.offset(pos.position))?;
        Some(
            a.index
                .occs_of(occ.kind, &occ.name)
                .map(|o| DocumentHighlight {
                    range: a.range(o.span),
                    kind: Some(if o.role == Role::Def || o.role.writes() {
                        DocumentHighlightKind::WRITE
                    } else {
                        DocumentHighlightKind::READ
                    }),
                })
                .collect(),
        )
    }
}
