//! `textDocument/hover`: a node (kind, agent, prompt preview, transitions out and in), an agent
//! (role, model, the nodes that use it), a variable (type, description, writers and readers), a
//! sub-workflow target; the KDoc comment before the declaration; the schema's docs for
//! statement keywords, chain words and enum constants.

use std::fmt::Write as _;

use hensu_diagnostics::Span;
use hensu_sema::schema::{self, EnumType};
use hensu_syntax::TokenKind;
use lsp_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use crate::analysis::Analysis;
use crate::engine::Engine;
use crate::index::{Occ, Role, SymKind};
use crate::methods::completion::node_kind_name;

const PREVIEW_CHARS: usize = 400;

/// Docs of the words inside transition chains.
const CHAIN_WORDS: &[(&str, &str)] = &[
    ("goto", "`goto \"node\"` — the node the transition goes to."),
    (
        "revise",
        "`revise \"node\" retry N otherwise \"node\"` — send the flow back to a node for revision, at most N times, then escalate to the `otherwise` node.",
    ),
    (
        "retry",
        "`retry N` — the budget of a bounded transition (revise or self-retry).",
    ),
    (
        "backoff",
        "`backoff 2.seconds` — after `onFailure retry N`: the wait before the first retry, doubled for each further one (at most 5 minutes, less a small deterministic jitter).",
    ),
    (
        "otherwise",
        "`otherwise \"node\"` — the escalation target once the retry budget is spent; as the first word of an arm, the else-arm.",
    ),
    (
        "withFeedback",
        "`withFeedback` — the target node receives the previous result as feedback.",
    ),
    ("at", "`start at \"node\"` — the entry node."),
    ("greaterThan", "Score/value is greater than the operand."),
    (
        "greaterThanOrEqual",
        "Score/value is greater than or equal to the operand.",
    ),
    ("lessThan", "Score/value is less than the operand."),
    (
        "lessThanOrEqual",
        "Score/value is less than or equal to the operand.",
    ),
    (
        "in",
        "``whenScore `in` a..b`` — the score is in the closed range.",
    ),
    ("equalTo", "The variable equals the operand."),
    ("notEqualTo", "The variable differs from the operand."),
];

fn one_line(s: &str) -> String {
    let mut out = String::new();
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.chars().count() > 120 {
        let cut: String = out.chars().take(117).collect();
        return format!("{cut}…");
    }
    out
}

fn preview(s: &str) -> String {
    if s.chars().count() <= PREVIEW_CHARS {
        return s.to_string();
    }
    let cut: String = s.chars().take(PREVIEW_CHARS).collect();
    format!("{cut}…")
}

impl Engine {
    pub fn hover(&self, params: HoverParams) -> Option<Hover> {
        let uri = &params.text_document_position_params.text_document.uri;
        let a = self.analysis(uri)?;
        let offset = a.offset(params.text_document_position_params.position);
        let (value, span) = if let Some(occ) = a.index.occ_at(offset) {
            (self.hover_symbol(uri, &a, occ)?, occ.span)
        } else if let Some(k) = a.index.keyword_at(offset) {
            let spec = k.spec?;
            (
                format!(
                    "```hwf\n{}\n```\n{}\n\n*{}*",
                    spec.syntax,
                    spec.doc,
                    k.block.describe()
                ),
                k.span,
            )
        } else {
            hover_word(&a, offset)?
        };
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value,
            }),
            range: Some(a.range(span)),
        })
    }

    fn hover_symbol(&self, uri: &lsp_types::Uri, a: &Analysis, occ: &Occ) -> Option<String> {
        let mut s = String::new();
        let text = &a.text;
        let stmt_text = |o: &Occ| one_line(a.slice(o.stmt));
        match occ.kind {
            SymKind::Node => {
                let Some((ni, n)) = a
                    .index
                    .nodes
                    .iter()
                    .enumerate()
                    .find(|(_, n)| *n.id == *occ.name)
                else {
                    let members = self.project(uri);
                    let inherited = members.first().and_then(|own| {
                        crate::extends::MemberBases(&members).declaring(own, &occ.name)
                    });
                    return Some(match inherited {
                        Some(base) => inherited_node(base, &occ.name),
                        None => format!("unknown node `{}`", occ.name),
                    });
                };
                let _ = writeln!(s, "**{}** `{}`", node_kind_name(&n.call), n.id);
                if let Some(status) = &n.status {
                    let _ = writeln!(s, "\nexit status: `{status}`");
                }
                if let Some(agent) = &n.agent {
                    let _ = write!(s, "\nagent: `{agent}`");
                    if let Some(ag) = a.index.agent(agent) {
                        let role = ag
                            .props
                            .iter()
                            .find(|(k, _)| k == "role")
                            .map(|(_, v)| v.as_str());
                        let model = ag
                            .props
                            .iter()
                            .find(|(k, _)| k == "model")
                            .map(|(_, v)| model_id(v));
                        match (role, model) {
                            (Some(r), Some(m)) => {
                                let _ = write!(s, " — {r} ({m})");
                            }
                            (Some(r), None) => {
                                let _ = write!(s, " — {r}");
                            }
                            (None, Some(m)) => {
                                let _ = write!(s, " ({m})");
                            }
                            (None, None) => {}
                        }
                    }
                    s.push('\n');
                }
                if let Some(target) = &n.target {
                    let _ = writeln!(s, "\ntarget workflow: `{target}`");
                }
                let resolved = a
                    .workflow
                    .as_ref()
                    .and_then(|w| w.nodes.get(&n.id))
                    .and_then(|node| match node {
                        hensu_ir::Node::Standard(sn) => sn.prompt.clone(),
                        _ => None,
                    });
                if let Some(p) = &n.prompt {
                    if p.to_ascii_lowercase().ends_with(".md") {
                        let _ = writeln!(s, "\nprompt: `prompts/{p}`");
                    } else {
                        s.push_str("\nprompt:\n");
                    }
                    if let Some(body) = resolved
                        .as_deref()
                        .or(Some(p.as_str()))
                        .filter(|b| !b.ends_with(".md") || resolved.is_some())
                    {
                        let _ = writeln!(s, "```text\n{}\n```", preview(body));
                    }
                }
                let outs: Vec<&Occ> = a
                    .index
                    .occs
                    .iter()
                    .filter(|o| {
                        o.kind == SymKind::Node && o.node == Some(ni) && o.role != Role::Def
                    })
                    .collect();
                if !outs.is_empty() {
                    s.push_str("\n**transitions out**\n");
                    let mut seen: Vec<Span> = Vec::new();
                    for o in outs {
                        if seen.contains(&o.stmt) {
                            continue;
                        }
                        seen.push(o.stmt);
                        let _ = writeln!(s, "- `{}`", stmt_text(o));
                    }
                }
                let ins: Vec<&Occ> = a
                    .index
                    .occs_of(SymKind::Node, &n.id)
                    .filter(|o| o.role != Role::Def)
                    .collect();
                if !ins.is_empty() {
                    s.push_str("\n**transitions in**\n");
                    let mut seen: Vec<Span> = Vec::new();
                    for o in ins {
                        if seen.contains(&o.stmt) {
                            continue;
                        }
                        seen.push(o.stmt);
                        match o.node.and_then(|i| a.index.nodes.get(i)) {
                            Some(from) => {
                                let _ = writeln!(s, "- from `{}`: `{}`", from.id, stmt_text(o));
                            }
                            None => {
                                let _ = writeln!(s, "- `{}`", stmt_text(o));
                            }
                        }
                    }
                }
                if let Some(doc) = a.index.doc_before(text, n.decl) {
                    let _ = write!(s, "\n---\n{doc}\n");
                }
            }
            SymKind::Agent => {
                let Some(ag) = a.index.agent(&occ.name) else {
                    return Some(format!("unknown agent `{}`", occ.name));
                };
                let _ = writeln!(s, "**agent** `{}`\n", ag.id);
                for (k, v) in &ag.props {
                    let v = if k == "model" { model_id(v) } else { v.clone() };
                    let _ = writeln!(s, "- {k}: {}", one_line(&v));
                }
                let users: Vec<String> = a
                    .index
                    .occs_of(SymKind::Agent, &ag.id)
                    .filter(|o| o.role != Role::Def)
                    .filter_map(|o| o.node.and_then(|i| a.index.nodes.get(i)))
                    .map(|n| format!("`{}`", n.id))
                    .collect();
                if !users.is_empty() {
                    let _ = writeln!(s, "\nused by: {}", dedup(users).join(", "));
                }
                if let Some(doc) = a.index.doc_before(text, ag.decl) {
                    let _ = write!(s, "\n---\n{doc}\n");
                }
            }
            SymKind::Variable => {
                let engine = hensu_ir::is_engine_variable(&occ.name);
                match a.index.variable(&occ.name) {
                    Some(v) => {
                        let _ = write!(
                            s,
                            "**{}** `{}`",
                            if v.input { "input" } else { "variable" },
                            v.name
                        );
                        if let Some(t) = &v.ty {
                            let _ = write!(s, ": `{t}`");
                        }
                        s.push('\n');
                        if let Some(d) = &v.description {
                            let _ = writeln!(s, "\n{d}");
                        }
                    }
                    None if engine => {
                        let _ = writeln!(s, "**engine variable** `{}`", occ.name);
                    }
                    None => {
                        let _ = writeln!(s, "undeclared variable `{}`", occ.name);
                    }
                }
                let mut writers = Vec::new();
                let mut readers = Vec::new();
                for o in a.index.occs_of(SymKind::Variable, &occ.name) {
                    if o.role == Role::Def {
                        continue;
                    }
                    let node = o
                        .node
                        .and_then(|i| a.index.nodes.get(i))
                        .map(|n| format!("`{}`", n.id));
                    let Some(node) = node else { continue };
                    if o.role.writes() || (o.role == Role::Exports) {
                        writers.push(node);
                    } else {
                        readers.push(node);
                    }
                }
                if !writers.is_empty() {
                    let _ = writeln!(s, "\nwritten by: {}", dedup(writers).join(", "));
                }
                if !readers.is_empty() {
                    let _ = writeln!(s, "\nread by: {}", dedup(readers).join(", "));
                }
                if let Some(v) = a.index.variable(&occ.name)
                    && let Some(doc) = a.index.doc_before(text, v.decl)
                {
                    let _ = write!(s, "\n---\n{doc}\n");
                }
            }
            SymKind::Compensation => {
                let Some(def) = a.index.def_of(SymKind::Compensation, &occ.name) else {
                    return Some(format!("unknown compensation `{}`", occ.name));
                };
                let _ = writeln!(s, "**compensation** `{}`", occ.name);
                let _ = writeln!(
                    s,
                    "\nruns, newest first, for each completed visit of the nodes naming it when the run ends unsuccessfully"
                );
                let undoes: Vec<String> = a
                    .index
                    .occs_of(SymKind::Compensation, &occ.name)
                    .filter(|o| o.role == Role::Compensates)
                    .filter_map(|o| o.node.and_then(|i| a.index.nodes.get(i)))
                    .map(|n| format!("`{}`", n.id))
                    .collect();
                if undoes.is_empty() {
                    let _ = writeln!(s, "\nno node names it (W0201)");
                } else {
                    let _ = writeln!(s, "\nundoes {}", undoes.join(", "));
                }
                let _ = writeln!(s, "\n```kotlin\n{}\n```", stmt_text(def));
            }
            SymKind::Workflow => {
                let found = self.project(uri).into_iter().find(|m| {
                    m.analysis
                        .index
                        .workflow
                        .as_ref()
                        .is_some_and(|w| *w.id == *occ.name)
                });
                match found {
                    Some(m) => {
                        let w = m.analysis.index.workflow.as_ref()?;
                        let _ = writeln!(s, "**workflow** `{}`", w.id);
                        if let Some(wf) = &m.analysis.workflow {
                            if let Some(d) = &wf.metadata.description {
                                let _ = writeln!(s, "\n{d}");
                            }
                            let _ =
                                writeln!(s, "\nversion `{}`, {} nodes", wf.version, wf.nodes.len());
                        }
                        let name = m.uri.as_str().rsplit('/').next().unwrap_or("");
                        let _ = writeln!(s, "\nin `{name}`");
                        if let Some(doc) = m.analysis.index.doc_before(&m.analysis.text, w.decl) {
                            let _ = write!(s, "\n---\n{doc}\n");
                        }
                    }
                    None => {
                        let _ = writeln!(s, "unknown workflow `{}`", occ.name);
                    }
                }
            }
        }
        Some(s.trim_end().to_string())
    }
}

fn dedup(v: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// `Models.GPT_4O` → `gpt-4o`; anything else as written.
fn model_id(v: &str) -> String {
    v.strip_prefix("Models.")
        .and_then(schema::model_id)
        .map_or_else(|| v.to_string(), str::to_string)
}

/// Chain words and enum constants (by token).
fn hover_word(a: &Analysis, offset: u32) -> Option<(String, Span)> {
    let tokens = &a.lexed().tokens;
    let i = tokens.partition_point(|t| t.span.end < offset);
    let t = tokens
        .get(i)
        .filter(|t| t.span.start <= offset && offset <= t.span.end)?;
    if !matches!(
        t.kind,
        TokenKind::Ident | TokenKind::BacktickIdent | TokenKind::KwIn
    ) {
        return None;
    }
    let word = a.slice(t.span).trim_matches('`');
    let qualifier = i
        .checked_sub(2)
        .and_then(|j| {
            let dot = tokens.get(j + 1)?;
            (dot.kind == TokenKind::Dot).then_some(tokens.get(j)?)
        })
        .map(|q| a.slice(q.span));
    if let Some(q) = qualifier {
        if q == "Models" {
            let id = schema::model_id(word)?;
            return Some((format!("`Models.{word}` = `\"{id}\"`"), t.span));
        }
        let e = EnumType::ALL.iter().find(|e| e.name() == q)?;
        if e.constants().contains(&word) {
            return Some((
                format!(
                    "`{}.{word}`\n\none of {}",
                    e.name(),
                    e.constants().join(", ")
                ),
                t.span,
            ));
        }
        return None;
    }
    if let Some((_, doc)) = CHAIN_WORDS.iter().find(|(w, _)| *w == word) {
        return Some(((*doc).to_string(), t.span));
    }
    // A bare enum constant.
    let e = EnumType::ALL
        .iter()
        .find(|e| e.constants().contains(&word))?;
    Some((format!("`{}.{word}`", e.name()), t.span))
}

/// The hover of a node an extending workflow inherits: where it is declared, and its kind.
fn inherited_node(base: &crate::engine::Member, id: &str) -> String {
    let b = &base.analysis;
    let workflow = b.index.workflow.as_ref().map_or("?", |w| w.id.as_str());
    let path = crate::host::uri_to_path(&base.uri).unwrap_or_default();
    let kind = b.index.node(id).map_or("node", |n| node_kind_name(&n.call));
    format!("**{kind}** `{id}`\n\ninherited from `{workflow}` ({path})")
}
