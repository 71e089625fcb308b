//! `textDocument/definition`: from a node id, agent id, variable (in a string or a `{name}`
//! placeholder) or sub-workflow target to its declaration — across files for sub-workflow
//! targets and `extends("…")` (open documents and the workflow files of the project folder),
//! and from an inherited node of an extending workflow into the base that declares it.

use lsp_types::{GotoDefinitionParams, GotoDefinitionResponse, Location, Uri};

use crate::engine::Engine;
use crate::index::{Occ, Role, SymKind};

impl Engine {
    pub fn definition(&self, params: GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
        let uri = &params.text_document_position_params.text_document.uri;
        if self.prompts.contains_key(uri) {
            let pos = params.text_document_position_params.position;
            return match self.prompt_definition(uri, pos)?.as_slice() {
                [] => None,
                [one] => Some(GotoDefinitionResponse::Scalar(one.clone())),
                many => Some(GotoDefinitionResponse::Array(many.to_vec())),
            };
        }
        let a = self.analysis(uri)?;
        let offset = a.offset(params.text_document_position_params.position);
        // A prompt or rubric file name: the file itself.
        if let Some((_, dir, rel)) = a
            .index
            .resources
            .iter()
            .find(|(s, _, _)| s.start <= offset && offset <= s.end)
        {
            let root = self.root_of(uri)?;
            self.host().read_resource(&root, *dir, rel).ok()?;
            let rel = rel.trim_start_matches("./");
            let target = crate::host::path_to_uri(&format!("{root}/{}/{rel}", dir.as_str()))?;
            return Some(GotoDefinitionResponse::Scalar(Location::new(
                target,
                lsp_types::Range::default(),
            )));
        }
        let occ = a.index.occ_at(offset)?.clone();
        let loc = self.definition_of(uri, &occ)?;
        Some(GotoDefinitionResponse::Scalar(loc))
    }

    /// Where the symbol of `occ` (found in `uri`) is declared.
    pub(crate) fn definition_of(&self, uri: &Uri, occ: &Occ) -> Option<Location> {
        if occ.kind == SymKind::Workflow {
            for m in self.project(uri) {
                if let Some(w) = &m.analysis.index.workflow
                    && *w.id == *occ.name
                {
                    return Some(Location::new(m.uri.clone(), m.analysis.range(w.name_span)));
                }
            }
            return None;
        }
        let a = self.analysis(uri)?;
        let Some(def) = a.index.def_of(occ.kind, &occ.name) else {
            // An inherited node of an extending workflow: in the base that declares it.
            if occ.kind != SymKind::Node {
                return None;
            }
            let members = self.project(uri);
            let own = members.first()?;
            let base = crate::extends::MemberBases(&members).declaring(own, &occ.name)?;
            let decl = base.analysis.index.node(&occ.name)?;
            return Some(Location::new(
                base.uri.clone(),
                base.analysis.range(decl.id_span),
            ));
        };
        debug_assert!(def.role == Role::Def);
        Some(Location::new(uri.clone(), a.range(def.span)))
    }
}
