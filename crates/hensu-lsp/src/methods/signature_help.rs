//! `textDocument/signatureHelp` inside the parentheses of a DSL call (`node("id") { … }`,
//! `end("id", ExitStatus.FAILURE)`, `agent("id") { … }`, `input("name", VarType.STRING)`,
//! `writes(…)`, …): the signature, parameter names and types derived from the schema's syntax
//! of the statement in the current block, its documentation, and the active parameter.

use hensu_sema::schema::{self, StatementKind, StatementSpec};
use lsp_types::{
    Documentation, MarkupContent, MarkupKind, ParameterInformation, ParameterLabel, SignatureHelp,
    SignatureHelpParams, SignatureInformation,
};

use crate::context::{Scope, cursor_context_in, node_block_start};
use crate::engine::Engine;

impl Engine {
    pub fn signature_help(&self, params: SignatureHelpParams) -> Option<SignatureHelp> {
        let pos = params.text_document_position_params;
        let a = self.analysis(&pos.text_document.uri)?;
        let offset = a.offset(pos.position);
        let tokens = &a.lexed().tokens;
        let start = node_block_start(&a, tokens, offset);
        let cx = cursor_context_in(&a.text, tokens, offset, start);
        let paren = cx.paren?;
        let callee = paren.callee.as_deref()?;
        let spec = match cx.scope {
            Scope::Block(kind) => schema::lookup(kind, callee),
            _ => None,
        };
        let (label, parameters, variadic, doc) = match spec {
            Some(spec) => signature(spec)?,
            None if callee == "workflow" => (
                "workflow(name: String)".to_string(),
                vec!["name: String".to_string()],
                false,
                "The workflow; its id is derived from the name.".to_string(),
            ),
            None => return None,
        };
        let last = parameters.len().checked_sub(1)?;
        let active = if variadic {
            paren.arg.min(last)
        } else {
            paren.arg
        };
        if active > last {
            return None;
        }
        let parameters = parameters
            .into_iter()
            .map(|p| ParameterInformation {
                label: ParameterLabel::Simple(p),
                documentation: None,
            })
            .collect();
        Some(SignatureHelp {
            signatures: vec![SignatureInformation {
                label,
                documentation: Some(Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: doc,
                })),
                parameters: Some(parameters),
                active_parameter: u32::try_from(active).ok(),
            }],
            active_signature: Some(0),
            active_parameter: u32::try_from(active).ok(),
        })
    }
}

/// Label, parameter labels, variadic, documentation.
type Signature = (String, Vec<String>, bool, String);

/// The signature of a call statement from its schema syntax (`end("id"[, ExitStatus.FAILURE])`
/// → `end(id: String, status: ExitStatus = SUCCESS)`).
fn signature(spec: &StatementSpec) -> Option<Signature> {
    let (min, max) = match spec.kind {
        StatementKind::Call { min, max } => (min, max),
        StatementKind::CallBlock { min, max, .. } | StatementKind::CallOrBlock { min, max, .. } => {
            (min, Some(max))
        }
        _ => return None,
    };
    let syntax = spec.syntax;
    let open = syntax.find('(')?;
    let close = syntax[open..].rfind(')')? + open;
    let inner: String = syntax[open + 1..close]
        .chars()
        .filter(|c| !matches!(c, '[' | ']'))
        .collect();
    let written: Vec<&str> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "…" && *s != "...")
        .collect();
    let variadic = max.is_none();
    if variadic {
        // `writes("a", "b")`: any number of one kind of id.
        let what = match spec.name {
            "writes" | "yields" | "imports" | "exports" => "variable: String".to_string(),
            "targets" => "node: String".to_string(),
            "after" => "branch: String".to_string(),
            "await" => "fork: String".to_string(),
            _ => written
                .first()
                .map_or_else(|| "value".to_string(), |w| parameter(w)),
        };
        let param = format!("vararg {what}");
        let label = format!("{}({param})", spec.name);
        return Some((label, vec![param], true, spec.doc.to_string()));
    }
    let mut params: Vec<String> = Vec::new();
    for (i, w) in written.iter().enumerate() {
        let mut p = parameter(w);
        if i >= min {
            let default = w.rsplit('.').next().unwrap_or(w);
            if spec.name == "end" {
                p.push_str(" = SUCCESS");
            } else if !w.starts_with('"') && w.contains('.') {
                p.push_str(&format!(" = {default}"));
            } else {
                p.push_str(" = null");
            }
        }
        params.push(p);
    }
    if params.is_empty() {
        params.push("value".to_string());
    }
    let tail = if matches!(spec.kind, StatementKind::CallBlock { .. }) {
        " { … }"
    } else {
        ""
    };
    let label = format!("{}({}){tail}", spec.name, params.join(", "));
    Some((label, params, variadic, spec.doc.to_string()))
}

/// `"id"` → `id: String`; `VarType.STRING` → `type: VarType`; `ExitStatus.FAILURE` →
/// `status: ExitStatus`; anything else as written.
fn parameter(written: &str) -> String {
    if let Some(name) = written.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        let name = if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            "value"
        } else {
            name
        };
        return format!("{name}: String");
    }
    if let Some((ty, _)) = written.split_once('.')
        && ty.starts_with(|c: char| c.is_ascii_uppercase())
    {
        let name = match ty {
            "VarType" => "type".to_string(),
            "ExitStatus" => "status".to_string(),
            "ReviewMode" => "mode".to_string(),
            _ => {
                let mut c = ty.chars();
                c.next()
                    .map(|f| f.to_lowercase().chain(c).collect())
                    .unwrap_or_default()
            }
        };
        return format!("{name}: {ty}");
    }
    written.to_string()
}
