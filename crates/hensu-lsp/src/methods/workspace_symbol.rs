//! `workspace/symbol`: every workflow, node, agent and variable of the projects of the open
//! documents (open documents and the workflow files of their project folders), matched against
//! the query as a case-insensitive subsequence (`rvw` finds `review`), as editors expect.

use std::collections::BTreeSet;

use lsp_types::{
    Location, OneOf, SymbolKind, WorkspaceSymbol, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};

use crate::engine::Engine;
use crate::methods::completion::node_kind_name;

/// `query`'s characters appear in `name` in order (ignoring case).
fn matches(query: &str, name: &str) -> bool {
    let mut name = name.chars().flat_map(char::to_lowercase);
    query
        .chars()
        .flat_map(char::to_lowercase)
        .all(|q| name.any(|n| n == q))
}

impl Engine {
    pub fn workspace_symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Option<WorkspaceSymbolResponse> {
        let query = params.query.trim();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut out = Vec::new();
        for open in self.open_uris() {
            for m in self.project(&open) {
                if !seen.insert(m.uri.as_str().to_string()) {
                    continue;
                }
                let a = &m.analysis;
                let ix = &a.index;
                let container = ix.workflow.as_ref().map(|w| w.id.clone());
                let mut push = |name: &str, kind: SymbolKind, span, detail: Option<&str>| {
                    if !matches(query, name) {
                        return;
                    }
                    out.push(WorkspaceSymbol {
                        name: name.to_string(),
                        kind,
                        tags: None,
                        container_name: match (&container, detail) {
                            (Some(c), Some(d)) => Some(format!("{c} · {d}")),
                            (Some(c), None) => Some(c.clone()),
                            (None, d) => d.map(str::to_string),
                        },
                        location: OneOf::Left(Location::new(m.uri.clone(), a.range(span))),
                        data: None,
                    });
                };
                if let Some(w) = &ix.workflow {
                    push(&w.id, SymbolKind::MODULE, w.name_span, Some("workflow"));
                }
                for n in &ix.nodes {
                    push(
                        &n.id,
                        SymbolKind::FUNCTION,
                        n.id_span,
                        Some(node_kind_name(&n.call)),
                    );
                }
                for ag in &ix.agents {
                    push(&ag.id, SymbolKind::CLASS, ag.id_span, Some("agent"));
                }
                for v in &ix.variables {
                    let what = if v.input { "input" } else { "variable" };
                    push(&v.name, SymbolKind::VARIABLE, v.name_span, Some(what));
                }
            }
        }
        Some(WorkspaceSymbolResponse::Nested(out))
    }
}
