//! `textDocument/prepareRename` and `textDocument/rename` of nodes, agents and variables: every
//! occurrence in the document, `{name}` placeholders included (also in the `.md` prompt files
//! the document names). The new name must be a valid
//! identifier (`[A-Za-z0-9][A-Za-z0-9._-]*`, as E0207 checks); a variable used in a placeholder
//! must also stay a placeholder name (`[A-Za-z_][A-Za-z0-9_]*`). A name already taken by another
//! symbol of the same kind is refused (the rename would merge them).

use std::collections::HashMap;

use lsp_types::{
    PrepareRenameResponse, RenameParams, TextDocumentPositionParams, TextEdit, WorkspaceEdit,
};

use crate::engine::Engine;
use crate::index::{Role, SymKind};

pub(crate) fn is_placeholder_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Engine {
    pub fn prepare_rename(
        &self,
        params: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>, String> {
        if let Some(p) = self.prompts.get(&params.text_document.uri) {
            let offset = p.lines.offset(&p.text, params.position) as usize;
            return Ok(crate::index::placeholders(&p.text)
                .into_iter()
                .find(|(_, r)| r.start <= offset && offset <= r.end)
                .map(|(name, r)| PrepareRenameResponse::RangeWithPlaceholder {
                    range: p
                        .lines
                        .range(&p.text, hensu_diagnostics::Span::from_range(r)),
                    placeholder: name,
                }));
        }
        let Some(a) = self.analysis(&params.text_document.uri) else {
            return Ok(None);
        };
        let offset = a.offset(params.position);
        let Some(occ) = a.index.occ_at(offset) else {
            return Ok(None);
        };
        if occ.kind == SymKind::Workflow {
            return Err(
                "workflow ids cannot be renamed here: change the workflow name".to_string(),
            );
        }
        Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
            range: a.range(occ.span),
            placeholder: occ.name.to_string(),
        }))
    }

    /// Renames the symbol under the cursor; an invalid new name is an error (shown to the user).
    pub fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>, String> {
        let uri = &params.text_document_position.text_document.uri;
        if self.prompts.contains_key(uri) {
            let pos = params.text_document_position.position;
            return self.prompt_rename(uri, pos, &params.new_name);
        }
        let Some(a) = self.analysis(uri) else {
            return Ok(None);
        };
        let offset = a.offset(params.text_document_position.position);
        let Some(occ) = a.index.occ_at(offset).cloned() else {
            return Ok(None);
        };
        let new = params.new_name.as_str();
        if occ.kind == SymKind::Workflow {
            return Err(
                "workflow ids cannot be renamed here: change the workflow name".to_string(),
            );
        }
        if !hensu_sema::is_valid_identifier(new) {
            return Err(format!(
                "`{new}` is not a valid {} id: use letters, digits, `.`, `_` and `-`, starting with an ASCII letter or digit",
                occ.kind.describe()
            ));
        }
        let taken = match occ.kind {
            SymKind::Node => a.index.node(new).is_some(),
            SymKind::Agent => a.index.agent(new).is_some(),
            SymKind::Variable => a.index.variable(new).is_some(),
            SymKind::Workflow => false,
            // Node and compensation ids share one namespace (E0201).
            SymKind::Compensation => {
                a.index.def_of(SymKind::Compensation, new).is_some() || a.index.node(new).is_some()
            }
        };
        if taken && *new != *occ.name {
            return Err(format!(
                "{article} {kind} `{new}` already exists: renaming `{old}` to it would merge the two (rename or remove the other {kind} first)",
                article = if occ.kind == SymKind::Agent {
                    "an"
                } else {
                    "a"
                },
                kind = occ.kind.describe(),
                old = occ.name,
            ));
        }
        let occs = self.occurrences(uri, occ.kind, &occ.name);
        if occ.kind == SymKind::Variable
            && !is_placeholder_name(new)
            && occs.iter().any(|f| f.occ.role == Role::Placeholder)
        {
            return Err(format!(
                "`{new}` cannot be used in a `{{name}}` placeholder: use letters, digits and `_`"
            ));
        }
        let mut changes: HashMap<lsp_types::Uri, Vec<TextEdit>> = HashMap::new();
        for f in occs {
            let new_text = if f.occ.quoted {
                format!("\"{new}\"")
            } else {
                new.to_string()
            };
            changes.entry(f.uri).or_default().push(TextEdit {
                range: f.range,
                new_text,
            });
        }
        Ok(Some(WorkspaceEdit {
            changes: Some(changes),
            ..WorkspaceEdit::default()
        }))
    }
}
