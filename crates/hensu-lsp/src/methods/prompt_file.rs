//! Definition, references and rename from a `{placeholder}` inside an open `.md` prompt file
//! (`<root>/prompts/write.md`): the variable is the one of the workflows of that project that
//! name the file as a prompt (open documents and the files of `workflows/`). Its declaration,
//! its uses in those workflows and the placeholders of their prompt files are the occurrences.

use std::collections::HashMap;

use lsp_types::{Location, TextEdit, Uri, WorkspaceEdit};

use crate::engine::{Engine, Found, Member, placeholders_in_prompts};
use crate::index::{Role, SymKind};

impl Engine {
    /// The placeholder name under `pos` in an open prompt file, and the workflows using the
    /// file.
    fn prompt_symbol(
        &self,
        uri: &Uri,
        pos: lsp_types::Position,
    ) -> Option<(String, Vec<Member>, String)> {
        let p = self.prompts.get(uri)?;
        let offset = p.lines.offset(&p.text, pos) as usize;
        let (name, _) = crate::index::placeholders(&p.text)
            .into_iter()
            .find(|(_, r)| r.start <= offset && offset <= r.end)?;
        let relative = p.relative.trim_start_matches("./");
        let users: Vec<Member> = self
            .root_members(&p.root)
            .into_iter()
            .filter(|m| {
                m.analysis
                    .prompt_files
                    .iter()
                    .any(|f| f.relative.trim_start_matches("./") == relative)
            })
            .collect();
        Some((name, users, p.root.clone()))
    }

    /// Every occurrence of the placeholder's variable: in the workflows using the file and in
    /// their prompt files (this one included), without duplicates.
    fn prompt_occurrences(
        &self,
        uri: &Uri,
        pos: lsp_types::Position,
    ) -> Option<(String, Vec<Found>)> {
        let (name, users, root) = self.prompt_symbol(uri, pos)?;
        let mut out: Vec<Found> = Vec::new();
        for m in &users {
            for o in m.analysis.index.occs_of(SymKind::Variable, &name) {
                out.push(Found {
                    uri: m.uri.clone(),
                    range: m.analysis.range(o.span),
                    occ: o.clone(),
                });
            }
            placeholders_in_prompts(&root, &m.analysis, &name, &mut out);
        }
        let mut seen = Vec::new();
        out.retain(|f| {
            let key = (f.uri.clone(), f.range);
            let new = !seen.contains(&key);
            seen.push(key);
            new
        });
        Some((name, out))
    }

    pub(crate) fn prompt_definition(
        &self,
        uri: &Uri,
        pos: lsp_types::Position,
    ) -> Option<Vec<Location>> {
        let (name, users, _) = self.prompt_symbol(uri, pos)?;
        Some(
            users
                .iter()
                .filter_map(|m| {
                    let def = m.analysis.index.def_of(SymKind::Variable, &name)?;
                    Some(Location::new(m.uri.clone(), m.analysis.range(def.span)))
                })
                .collect(),
        )
    }

    pub(crate) fn prompt_references(
        &self,
        uri: &Uri,
        pos: lsp_types::Position,
        with_decl: bool,
    ) -> Option<Vec<Location>> {
        let (_, found) = self.prompt_occurrences(uri, pos)?;
        Some(
            found
                .into_iter()
                .filter(|f| with_decl || f.occ.role != Role::Def)
                .map(|f| Location::new(f.uri, f.range))
                .collect(),
        )
    }

    pub(crate) fn prompt_rename(
        &self,
        uri: &Uri,
        pos: lsp_types::Position,
        new: &str,
    ) -> Result<Option<WorkspaceEdit>, String> {
        let Some((_, found)) = self.prompt_occurrences(uri, pos) else {
            return Ok(None);
        };
        if !crate::methods::rename::is_placeholder_name(new)
            || !hensu_sema::is_valid_identifier(new)
        {
            return Err(format!(
                "`{new}` cannot be used in a `{{name}}` placeholder: use letters, digits and `_`"
            ));
        }
        let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
        for f in found {
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
