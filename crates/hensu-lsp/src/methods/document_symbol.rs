//! `textDocument/documentSymbol`: the outline — the workflow, its `state` (variables), `agents`
//! (agents with their role), `config` and `graph` (nodes with their kind).

use hensu_diagnostics::Span;
use lsp_types::{DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, SymbolKind};

use crate::analysis::Analysis;
use crate::engine::Engine;
use crate::methods::completion::node_kind_name;

fn contains(outer: Span, inner: Span) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be set; it is `None`.
fn symbol(
    a: &Analysis,
    name: &str,
    detail: Option<String>,
    kind: SymbolKind,
    range: Span,
    selection: Span,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    let range = range.to(selection);
    DocumentSymbol {
        name: if name.is_empty() {
            " ".to_string()
        } else {
            name.to_string()
        },
        detail,
        kind,
        tags: None,
        deprecated: None,
        range: a.range(range),
        selection_range: a.range(selection),
        children: if children.is_empty() {
            None
        } else {
            Some(children)
        },
    }
}

impl Engine {
    pub fn document_symbol(&self, params: DocumentSymbolParams) -> Option<DocumentSymbolResponse> {
        let a = self.analysis(&params.text_document.uri)?;
        let ix = &a.index;
        let vars = |within: Option<Span>| -> Vec<DocumentSymbol> {
            ix.variables
                .iter()
                .filter(|v| within.is_none_or(|s| contains(s, v.decl)))
                .map(|v| {
                    let detail =
                        v.ty.clone()
                            .map(|t| if v.input { format!("input {t}") } else { t });
                    symbol(
                        &a,
                        &v.name,
                        detail,
                        SymbolKind::VARIABLE,
                        v.decl,
                        v.name_span,
                        Vec::new(),
                    )
                })
                .collect()
        };
        let agents = |within: Option<Span>| -> Vec<DocumentSymbol> {
            ix.agents
                .iter()
                .filter(|g| within.is_none_or(|s| contains(s, g.decl)))
                .map(|g| {
                    let role = g
                        .props
                        .iter()
                        .find(|(k, _)| k == "role")
                        .map(|(_, v)| v.clone());
                    symbol(
                        &a,
                        &g.id,
                        role,
                        SymbolKind::CLASS,
                        g.decl,
                        g.id_span,
                        Vec::new(),
                    )
                })
                .collect()
        };
        let nodes = |within: Option<Span>| -> Vec<DocumentSymbol> {
            ix.nodes
                .iter()
                .filter(|n| within.is_none_or(|s| contains(s, n.decl)))
                .map(|n| {
                    let kind = if n.call == "end" {
                        SymbolKind::EVENT
                    } else {
                        SymbolKind::FUNCTION
                    };
                    symbol(
                        &a,
                        &n.id,
                        Some(node_kind_name(&n.call).to_string()),
                        kind,
                        n.decl,
                        n.id_span,
                        Vec::new(),
                    )
                })
                .collect()
        };
        let Some(w) = &ix.workflow else {
            let mut flat = vars(None);
            flat.extend(agents(None));
            flat.extend(nodes(None));
            return Some(DocumentSymbolResponse::Nested(flat));
        };
        let mut children = Vec::new();
        for s in &ix.sections {
            let (kind, kids) = match s.name.as_str() {
                "state" => (SymbolKind::STRUCT, vars(Some(s.span))),
                "agents" => (SymbolKind::NAMESPACE, agents(Some(s.span))),
                "graph" => (SymbolKind::NAMESPACE, nodes(Some(s.span))),
                _ => (SymbolKind::OBJECT, Vec::new()),
            };
            children.push(symbol(&a, &s.name, None, kind, s.span, s.name_span, kids));
        }
        let root = symbol(
            &a,
            &w.name,
            Some(w.id.clone()),
            SymbolKind::MODULE,
            w.decl,
            w.name_span,
            children,
        );
        Some(DocumentSymbolResponse::Nested(vec![root]))
    }
}
