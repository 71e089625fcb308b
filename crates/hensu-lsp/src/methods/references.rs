//! `textDocument/references`: every occurrence of the node id, agent id, variable or workflow id
//! under the cursor (workflow ids across the project; a variable's `{name}` placeholders in the
//! document's `.md` prompt files too).

use lsp_types::{Location, ReferenceParams};

use crate::engine::Engine;
use crate::index::Role;

impl Engine {
    pub fn references(&self, params: ReferenceParams) -> Option<Vec<Location>> {
        let uri = &params.text_document_position.text_document.uri;
        if self.prompts.contains_key(uri) {
            let pos = params.text_document_position.position;
            return self.prompt_references(uri, pos, params.context.include_declaration);
        }
        let a = self.analysis(uri)?;
        let offset = a.offset(params.text_document_position.position);
        let occ = a.index.occ_at(offset)?.clone();
        let with_decl = params.context.include_declaration;
        let locations: Vec<Location> = self
            .occurrences(uri, occ.kind, &occ.name)
            .into_iter()
            .filter(|f| with_decl || f.occ.role != Role::Def)
            .map(|f| Location::new(f.uri, f.range))
            .collect();
        Some(locations)
    }
}
