//! `textDocument/completion`, by context: the statements valid in the current block (from the
//! lowering schema), node ids after `goto`/`revise`/`otherwise`/`start at` and in fork `targets`
//! / join `await`, agent ids after `agent =` / `judge =`, workflow ids after `target =`,
//! variables after `{` in strings and inside `writes(`/`yields(`/`imports(`/`exports(`/
//! `onCondition(`, enum constants after `VarType.` (etc.) and bare where the expected type is
//! known, `Models.*`, `true`/`false`, and the next word of a transition chain.

use hensu_diagnostics::Span;
use hensu_sema::schema::{self, BlockKind, EnumType, StatementKind, ValueType};
use hensu_syntax::{Token, TokenKind};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse, CompletionTextEdit,
    Documentation, MarkupContent, MarkupKind, TextEdit,
};

use crate::analysis::Analysis;
use crate::context::{CursorContext, Scope, cursor_context_in, node_block_start};
use crate::engine::Engine;
use crate::index::{Role, SymKind};
use crate::methods::completion_list::Bounded;

/// What to insert for a name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    /// Inside a string already: the bare name replaces the string content.
    Inside,
    /// Outside a string: insert `"name"`.
    Add,
}

struct Builder<'a> {
    analysis: &'a Analysis,
    /// The cursor.
    offset: u32,
    /// The range the items replace.
    replace: Span,
    /// `replace` and its LSP range, computed once per replace span.
    range: Option<(Span, lsp_types::Range)>,
    items: Bounded,
    labels: std::collections::HashSet<String>,
}

impl<'a> Builder<'a> {
    fn push(
        &mut self,
        label: &str,
        insert: String,
        kind: CompletionItemKind,
        detail: Option<String>,
        doc: Option<String>,
    ) {
        let typed = self.typed();
        let Some(m) = self.items.wants(label, typed) else {
            return;
        };
        if !self.labels.insert(label.to_string()) {
            return;
        }
        let range = match self.range {
            Some((span, range)) if span == self.replace => range,
            _ => {
                let range = self.analysis.range(self.replace);
                self.range = Some((self.replace, range));
                range
            }
        };
        let item = CompletionItem {
            label: label.to_string(),
            kind: Some(kind),
            detail,
            documentation: doc.map(|d| {
                Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: d,
                })
            }),
            filter_text: Some(insert.clone()),
            sort_text: Some(format!("{:04}", self.items.len())),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                range,
                new_text: insert,
            })),
            ..CompletionItem::default()
        };
        self.items.add(item, m);
    }

    /// What is typed of the name: from the start of the replaced range to the cursor.
    fn typed(&self) -> &'a str {
        let a = self.analysis;
        let typed_end = self.offset.min(self.replace.end).max(self.replace.start);
        a.text
            .get(self.replace.start as usize..typed_end as usize)
            .unwrap_or("")
            .trim_start_matches('"')
    }

    /// Whether an item labelled `label` would be kept (so the caller can skip building it).
    fn admits(&mut self, label: &str) -> bool {
        let typed = self.typed();
        self.items.wants(label, typed).is_some() && !self.labels.contains(label)
    }

    fn name(&mut self, name: &str, quote: Quote, kind: CompletionItemKind, detail: Option<String>) {
        let insert = match quote {
            Quote::Inside => name.to_string(),
            Quote::Add => format!("\"{name}\""),
        };
        self.push(name, insert, kind, detail, None);
    }

    fn nodes(&mut self, quote: Quote) {
        let a = self.analysis;
        for n in &a.index.nodes {
            if !self.admits(&n.id) {
                continue;
            }
            self.name(
                &n.id,
                quote,
                CompletionItemKind::REFERENCE,
                Some(node_kind_name(&n.call).to_string()),
            );
        }
    }

    /// The compensation ids of the file (docs/language.md, *Saga compensation*).
    fn compensations(&mut self, quote: Quote) {
        let a = self.analysis;
        for o in a
            .index
            .occs
            .iter()
            .filter(|o| o.kind == SymKind::Compensation && o.role == Role::Def)
        {
            self.name(
                &o.name,
                quote,
                CompletionItemKind::REFERENCE,
                Some("compensation".to_string()),
            );
        }
    }

    fn agents(&mut self, quote: Quote) {
        let a = self.analysis;
        for ag in &a.index.agents {
            let role = ag
                .props
                .iter()
                .find(|(k, _)| k == "role")
                .map(|(_, v)| v.clone());
            self.name(&ag.id, quote, CompletionItemKind::CLASS, role);
        }
    }

    fn variables(&mut self, quote: Quote, engine_vars: bool) {
        let a = self.analysis;
        for v in &a.index.variables {
            let detail = match (&v.ty, &v.description) {
                (Some(t), Some(d)) => format!("{t} — {d}"),
                (Some(t), None) => t.clone(),
                (None, Some(d)) => d.clone(),
                (None, None) => String::new(),
            };
            self.name(&v.name, quote, CompletionItemKind::VARIABLE, Some(detail));
        }
        if engine_vars {
            for v in ["score", "approved", "recommendation"] {
                self.name(
                    v,
                    quote,
                    CompletionItemKind::VARIABLE,
                    Some("engine variable".to_string()),
                );
            }
        }
    }

    fn enum_constants(&mut self, e: EnumType, qualified: bool) {
        for c in e.constants() {
            let insert = if qualified {
                format!("{}.{c}", e.name())
            } else {
                c.to_string()
            };
            self.push(
                &insert.clone(),
                insert,
                CompletionItemKind::ENUM_MEMBER,
                Some(e.name().to_string()),
                None,
            );
        }
    }

    fn models(&mut self, qualified: bool) {
        for (c, id) in schema::MODELS {
            let insert = if qualified {
                format!("Models.{c}")
            } else {
                (*c).to_string()
            };
            self.push(
                &insert.clone(),
                insert,
                CompletionItemKind::CONSTANT,
                Some((*id).to_string()),
                None,
            );
        }
    }

    fn words(&mut self, words: &[&str]) {
        for w in words {
            self.push(w, (*w).to_string(), CompletionItemKind::KEYWORD, None, None);
        }
    }

    fn statements(&mut self, scope: Scope) {
        match scope {
            Scope::File => {
                self.push(
                    "workflow",
                    "workflow".to_string(),
                    CompletionItemKind::KEYWORD,
                    Some("workflow(\"name\") { … }".to_string()),
                    Some("The workflow of this file.".to_string()),
                );
                self.push(
                    "fun",
                    "fun".to_string(),
                    CompletionItemKind::KEYWORD,
                    Some("fun name() = workflow(\"name\") { … }".to_string()),
                    None,
                );
            }
            Scope::Block(kind) => {
                for spec in schema::block_schema(kind) {
                    if spec.kind == StatementKind::Entry {
                        continue;
                    }
                    let kind = match spec.kind {
                        StatementKind::Property { .. } => CompletionItemKind::PROPERTY,
                        StatementKind::Transition(_)
                        | StatementKind::Arm(_)
                        | StatementKind::StartAt => CompletionItemKind::KEYWORD,
                        StatementKind::CallBlock { block, .. } if block.is_node() => {
                            CompletionItemKind::FUNCTION
                        }
                        _ if spec.name == "end" => CompletionItemKind::FUNCTION,
                        _ if spec.name.starts_with("on") => CompletionItemKind::KEYWORD,
                        _ => CompletionItemKind::METHOD,
                    };
                    self.push(
                        spec.name,
                        spec.name.to_string(),
                        kind,
                        Some(spec.syntax.to_string()),
                        Some(spec.doc.to_string()),
                    );
                }
            }
            Scope::Unknown => {}
        }
    }
}

/// `node` → `standard node`, …
pub(crate) fn node_kind_name(call: &str) -> &'static str {
    match call {
        "node" => "standard node",
        "parallel" => "parallel node",
        "fork" => "fork node",
        "join" => "join node",
        "generic" => "generic node",
        "action" => "action node",
        "subWorkflow" => "sub-workflow node",
        "end" => "end node",
        _ => "node",
    }
}

fn enum_by_name(name: &str) -> Option<EnumType> {
    EnumType::ALL.iter().copied().find(|e| e.name() == name)
}

impl Engine {
    pub fn completion(&self, params: CompletionParams) -> Option<CompletionResponse> {
        let uri = &params.text_document_position.text_document.uri;
        let a = self.analysis(uri)?;
        let offset = a.offset(params.text_document_position.position);
        // Nothing inside comments.
        let comments = &a.lexed().comments;
        let ci = comments.partition_point(|c| c.span.end < offset);
        if comments
            .get(ci)
            .is_some_and(|c| c.span.start < offset && offset <= c.span.end)
        {
            return None;
        }
        let tokens = &a.lexed().tokens;
        let start = node_block_start(&a, tokens, offset);
        let cx = cursor_context_in(&a.text, tokens, offset, start);
        let mut b = Builder {
            analysis: &a,
            offset,
            replace: Span::new(offset, offset),
            range: None,
            items: Bounded::default(),
            labels: std::collections::HashSet::new(),
        };
        self.complete(&mut b, &cx, offset, uri);
        b.items.finish()
    }

    fn complete(&self, b: &mut Builder<'_>, cx: &CursorContext, offset: u32, uri: &lsp_types::Uri) {
        let a = b.analysis;
        let text = |t: &Token| a.text.get(t.span.range()).unwrap_or("");
        let last = cx.before.last();
        let prev_word = last.filter(|t| t.kind == TokenKind::Ident).map(text);
        let block = match cx.scope {
            Scope::Block(k) => Some(k),
            _ => None,
        };

        // Inside a string.
        if let Some(cur) = cx.current.filter(|t| t.kind.is_string()) {
            let open = if matches!(cur.kind, TokenKind::RawStr | TokenKind::UnterminatedRawStr) {
                3
            } else {
                1
            };
            let content_start = (cur.span.start + open).min(offset);
            let typed = a
                .text
                .get(content_start as usize..offset as usize)
                .unwrap_or("");
            // `{name` in a prompt or payload.
            if let Some(brace) = typed.rfind('{') {
                let after = &typed[brace + 1..];
                if after.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    let start = content_start + u32::try_from(brace + 1).unwrap_or(0);
                    b.replace = Span::new(start, offset);
                    b.variables(Quote::Inside, true);
                    return;
                }
            }
            let content_end = match cur.kind {
                TokenKind::Str => cur.span.end.saturating_sub(1).max(offset),
                TokenKind::RawStr => cur.span.end.saturating_sub(3).max(offset),
                _ => offset,
            };
            b.replace = Span::new(content_start, content_end);
            self.complete_value(b, cx, prev_word, last, block, Quote::Inside, uri);
            return;
        }

        // An identifier being typed: replace it.
        let typed_word = cx
            .current
            .map(|t| Span::new(t.span.start, offset.max(t.span.start)));
        if let Some(w) = typed_word {
            b.replace = Span::new(w.start, cx.current.map_or(offset, |t| t.span.end));
        }

        // `VarType.` / `Models.`
        if let Some(dot) = last.filter(|t| t.kind == TokenKind::Dot) {
            let n = cx.before.len();
            let qualifier = n
                .checked_sub(2)
                .and_then(|i| cx.before.get(i))
                .filter(|t| t.kind == TokenKind::Ident)
                .map(text);
            let _ = dot;
            match qualifier {
                Some("Models") => b.models(false),
                Some(q) => {
                    if let Some(e) = enum_by_name(q) {
                        b.enum_constants(e, false);
                    }
                }
                None => {}
            }
            return;
        }

        // The first word of a statement.
        if cx.before.is_empty() {
            if cx.paren.is_none() {
                b.statements(cx.scope);
            } else {
                self.complete_value(b, cx, None, None, block, Quote::Add, uri);
            }
            return;
        }

        // The next word of a chain.
        let first = cx.before.first().map(text);
        if cx.before.len() == 1
            && cx.paren.is_none()
            && let (Some(k), Some(w)) = (block, first)
        {
            {
                match schema::lookup(k, w).map(|s| s.kind) {
                    Some(StatementKind::Transition(f)) | Some(StatementKind::Arm(f)) => {
                        match w {
                            "whenScore" => b.words(schema::SCORE_OPERATORS),
                            "whenValue" => b.words(schema::CONDITION_OPERATORS),
                            _ => {
                                let mut words = Vec::new();
                                if f.goto {
                                    words.push("goto");
                                }
                                if f.revise {
                                    words.push("revise");
                                }
                                if f.retry {
                                    words.push("retry");
                                }
                                b.words(&words);
                            }
                        }
                        return;
                    }
                    Some(StatementKind::StartAt) => {
                        b.words(&["at"]);
                        return;
                    }
                    _ => {}
                }
            }
        }
        // After a chain argument: `goto "x" |`, `revise "p" |`, `retry 3 |`, `whenScore lessThan 70.0 |`.
        if cx.paren.is_none() && cx.before.len() >= 2 {
            let n = cx.before.len();
            let word_before = cx
                .before
                .get(n - 2)
                .filter(|t| t.kind == TokenKind::Ident)
                .map(text);
            let arg_kind = last.map(|t| t.kind);
            let is_arg = arg_kind.is_some_and(|k| {
                k.is_string() || matches!(k, TokenKind::Int | TokenKind::Long | TokenKind::Double)
            });
            if is_arg {
                match word_before {
                    Some("goto") => return b.words(&["withFeedback"]),
                    Some("revise") => return b.words(&["retry", "withFeedback"]),
                    // Only an `onFailure retry` waits between attempts (`backoff 2.seconds`).
                    Some("retry") if cx.before.iter().any(|t| text(t) == "revise") => {
                        return b.words(&["otherwise"]);
                    }
                    Some("retry") => return b.words(&["backoff", "otherwise"]),
                    Some("otherwise") => return b.words(&["withFeedback"]),
                    Some(w)
                        if schema::SCORE_OPERATORS.contains(&w)
                            || schema::CONDITION_OPERATORS.contains(&w) =>
                    {
                        return b.words(&["goto", "revise"]);
                    }
                    _ => {}
                }
            }
            if prev_word == Some("withFeedback") && word_before.is_some_and(|w| w != "revise") {
                // `revise "p" withFeedback |`
                if cx.before.iter().any(|t| text(t) == "revise")
                    && !cx.before.iter().any(|t| text(t) == "retry")
                {
                    return b.words(&["retry"]);
                }
            }
        }
        self.complete_value(b, cx, prev_word, last, block, Quote::Add, uri);
    }

    /// A value position: after a word, after `=`, or an argument of a call.
    #[allow(clippy::too_many_arguments)]
    fn complete_value(
        &self,
        b: &mut Builder<'_>,
        cx: &CursorContext,
        prev_word: Option<&str>,
        last: Option<&Token>,
        block: Option<BlockKind>,
        quote: Quote,
        uri: &lsp_types::Uri,
    ) {
        let a = b.analysis;
        let text = |t: &Token| a.text.get(t.span.range()).unwrap_or("");
        // After a transition word.
        match prev_word {
            Some("goto" | "revise" | "at") => return b.nodes(quote),
            Some("otherwise") if cx.before.len() > 1 => return b.nodes(quote),
            _ => {}
        }
        // After `name =`.
        if last.is_some_and(|t| t.kind == TokenKind::Eq) && cx.paren.is_none() {
            let prop = cx
                .before
                .len()
                .checked_sub(2)
                .and_then(|i| cx.before.get(i))
                .filter(|t| t.kind == TokenKind::Ident)
                .map(text);
            let (Some(prop), Some(kind)) = (prop, block) else {
                return;
            };
            match (kind, prop) {
                (
                    BlockKind::StandardNode
                    | BlockKind::Branch
                    | BlockKind::Compensation
                    | BlockKind::MapNode,
                    "agent",
                )
                | (BlockKind::Consensus, "judge") => {
                    return b.agents(quote);
                }
                (BlockKind::MapNode, "over") => return b.variables(quote, false),
                (
                    BlockKind::StandardNode
                    | BlockKind::ActionNode
                    | BlockKind::GenericNode
                    | BlockKind::SubWorkflowNode,
                    "compensation",
                ) => return b.compensations(quote),
                (BlockKind::SubWorkflowNode | BlockKind::MapNode, "target") => {
                    return self.workflow_ids(b, quote, uri);
                }
                _ => {}
            }
            if quote == Quote::Inside {
                return;
            }
            if let Some(StatementKind::Property { ty, .. }) =
                schema::lookup(kind, prop).map(|s| s.kind)
            {
                match ty {
                    ValueType::Enum(e) => {
                        b.enum_constants(e, true);
                        b.enum_constants(e, false);
                    }
                    ValueType::Boolean => b.words(&["true", "false"]),
                    ValueType::Model => b.models(true),
                    _ => {}
                }
            }
            return;
        }
        // Call arguments.
        if let Some(p) = &cx.paren {
            match (p.callee.as_deref(), p.arg) {
                (Some("writes" | "yields" | "imports" | "exports"), _)
                | (Some("onCondition" | "runIf"), 0) => b.variables(quote, false),
                (Some("targets" | "await"), _) => b.nodes(quote),
                (Some("extends"), 0) => self.workflow_ids(b, quote, uri),
                (Some("routes"), 0) => b.nodes(quote),
                (Some("input" | "variable"), 1) if quote == Quote::Add => {
                    b.enum_constants(EnumType::VarType, true);
                    b.enum_constants(EnumType::VarType, false);
                }
                (Some("end"), 1) if quote == Quote::Add => {
                    b.enum_constants(EnumType::ExitStatus, true);
                    b.enum_constants(EnumType::ExitStatus, false);
                }
                (Some("review"), 0) if quote == Quote::Add => {
                    b.enum_constants(EnumType::ReviewMode, true);
                    b.enum_constants(EnumType::ReviewMode, false);
                }
                _ => {}
            }
        }
    }
}

impl Engine {
    /// The ids of the project's other workflows (sub-workflow `target = "…"`, `extends("…")`).
    fn workflow_ids(&self, b: &mut Builder<'_>, quote: Quote, uri: &lsp_types::Uri) {
        let own = b.analysis.file;
        for m in self.project(uri) {
            if let Some(w) = &m.analysis.index.workflow
                && m.analysis.file != own
            {
                b.name(
                    &w.id,
                    quote,
                    CompletionItemKind::MODULE,
                    Some(w.name.clone()),
                );
            }
        }
    }
}
