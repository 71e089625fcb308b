//! The symbol index of one document, built from its syntax tree (not from the IR, so it exists
//! for half-typed files too): every declaration and every reference of a node id, agent id,
//! state variable and sub-workflow target, with the exact span to jump to or rewrite, plus the
//! facts hover and the outline show. The walk follows the lowering schema
//! ([`hensu_sema::schema`]) to know which block each statement is in.

use std::collections::HashSet;
use std::sync::Arc;

use hensu_diagnostics::Span;
use hensu_sema::schema::{self, BlockKind, StatementKind};
use hensu_syntax::ast::{
    Block, Call, Comment, CommentKind, Expr, ExprKind, FunBody, SourceFile, Stmt, StmtKind,
};

/// What a name denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymKind {
    Node,
    Agent,
    Variable,
    /// A workflow id (`workflow("name")` declares it, sub-workflow `target = "id"` refers to it).
    Workflow,
    /// A compensation id (`compensation("id") { … }` declares it, a node's
    /// `compensation = "id"` refers to it; docs/language.md, *Saga compensation*).
    Compensation,
}

impl SymKind {
    pub fn describe(self) -> &'static str {
        match self {
            SymKind::Node => "node",
            SymKind::Agent => "agent",
            SymKind::Variable => "variable",
            SymKind::Workflow => "workflow",
            SymKind::Compensation => "compensation",
        }
    }
}

/// How an occurrence uses its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    Def,
    Start,
    Goto,
    Revise,
    Otherwise,
    ForkTarget,
    Await,
    NodeAgent,
    BranchAgent,
    Judge,
    Writes,
    Yields,
    Imports,
    Exports,
    Condition,
    Placeholder,
    Target,
    /// `extends("base")`: the base workflow.
    Extends,
    /// `routes("node")`: an inherited node of the base.
    Routes,
    /// A node's `compensation = "id"`.
    Compensates,
}

impl Role {
    /// Whether a variable occurrence with this role writes the variable.
    pub fn writes(self) -> bool {
        matches!(self, Role::Writes | Role::Yields)
    }
}

/// One occurrence of a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occ {
    pub kind: SymKind,
    /// Shared by the occurrences of the same name (interned while the index is built), so
    /// copying the index for a re-analysed node copies no name.
    pub name: Arc<str>,
    /// What a rename rewrites: the text between the quotes (or the whole string expression when
    /// `quoted`, e.g. a string with escapes), or the name inside `{…}`.
    pub span: Span,
    /// The span includes the quotes: a rename writes `"new"`.
    pub quoted: bool,
    pub role: Role,
    /// The node (index into [`Index::nodes`]) the occurrence is in.
    pub node: Option<usize>,
    /// The statement (or `onScore`/`onCondition` arm) it is part of.
    pub stmt: Span,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeDecl {
    pub id: String,
    /// The declaring call: `node`, `parallel`, `fork`, `join`, `generic`, `action`,
    /// `subWorkflow`, `end`.
    pub call: String,
    pub id_span: Span,
    pub decl: Span,
    pub agent: Option<String>,
    /// The prompt string as written (a `.md` name or the text).
    pub prompt: Option<String>,
    /// `end("id", ExitStatus.X)`: the status as written.
    pub status: Option<String>,
    pub target: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentDecl {
    pub id: String,
    pub id_span: Span,
    pub decl: Span,
    /// Property values as written (`role` → `Editor`, `model` → `Models.GPT_4O`, …).
    pub props: Vec<(String, String)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct VarDecl {
    pub name: String,
    pub name_span: Span,
    pub decl: Span,
    pub ty: Option<String>,
    pub input: bool,
    pub description: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkflowDecl {
    pub name: String,
    pub id: String,
    pub name_span: Span,
    pub decl: Span,
}

/// A statement name (`node`, `onSuccess`, `role`, …) and the block it is in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Keyword {
    pub span: Span,
    pub block: BlockKind,
    pub name: &'static str,
    /// The spec of the statement in its block, when it is valid there.
    pub spec: Option<&'static schema::StatementSpec>,
}

/// A top-level section of the workflow body (`state`, `agents`, `config`, `graph`).
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: String,
    pub span: Span,
    pub name_span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Index {
    pub workflow: Option<WorkflowDecl>,
    pub nodes: Vec<NodeDecl>,
    pub agents: Vec<AgentDecl>,
    pub variables: Vec<VarDecl>,
    /// Every occurrence, in source order.
    pub occs: Vec<Occ>,
    pub keywords: Vec<Keyword>,
    pub sections: Vec<Section>,
    pub comments: Vec<Comment>,
    /// `prompt = "x.md"` / `rubric = "x.md"` values: the string content span, the directory and
    /// the relative path.
    pub resources: Vec<(Span, hensu_sema::files::ResourceDir, String)>,
}

impl Index {
    pub fn build(src: &str, file: &SourceFile<'_>) -> Index {
        let mut w = Walker {
            src,
            index: Index {
                comments: file.comments.clone(),
                ..Index::default()
            },
            node: None,
            names: HashSet::new(),
        };
        for item in &file.items {
            match &item.kind {
                StmtKind::Fun { body, .. } => match body {
                    FunBody::Expr(e) => w.top_expr(e),
                    FunBody::Block(b) => {
                        for s in &b.stmts {
                            match &s.kind {
                                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => w.top_expr(e),
                                _ => {}
                            }
                        }
                    }
                },
                StmtKind::Expr(e) => w.top_expr(e),
                _ => {}
            }
        }
        let mut index = w.index;
        index.occs.sort_by_key(|o| (o.span.start, o.span.end));
        index.keywords.sort_by_key(|k| k.span.start);
        index
    }

    /// The entries of one statement of a `graph { }` block, as [`Index::build`] makes them in
    /// the whole file, with `node` as the index of its first node (`crate::incremental`).
    pub(crate) fn build_graph_stmt(src: &str, stmt: &Stmt<'_>, node: usize) -> Index {
        let mut w = Walker {
            src,
            index: Index::default(),
            node: None,
            names: HashSet::new(),
        };
        w.stmt(BlockKind::Graph, stmt);
        let mut index = w.index;
        for o in &mut index.occs {
            o.node = o.node.map(|n| n + node);
        }
        index.occs.sort_by_key(|o| (o.span.start, o.span.end));
        index.keywords.sort_by_key(|k| k.span.start);
        index
    }

    /// The occurrence whose span contains `offset` (ends inclusive, so a cursor right after a
    /// name still finds it).
    pub fn occ_at(&self, offset: u32) -> Option<&Occ> {
        let i = self.occs.partition_point(|o| o.span.end < offset);
        self.occs[i..]
            .iter()
            .take_while(|o| o.span.start <= offset)
            .find(|o| o.span.start <= offset && offset <= o.span.end)
    }

    pub fn keyword_at(&self, offset: u32) -> Option<&Keyword> {
        let i = self.keywords.partition_point(|k| k.span.end < offset);
        self.keywords
            .get(i)
            .filter(|k| k.span.start <= offset && offset <= k.span.end)
    }

    /// Every occurrence of `(kind, name)`, declarations included.
    pub fn occs_of<'a>(&'a self, kind: SymKind, name: &'a str) -> impl Iterator<Item = &'a Occ> {
        self.occs
            .iter()
            .filter(move |o| o.kind == kind && *o.name == *name)
    }

    pub fn def_of(&self, kind: SymKind, name: &str) -> Option<&Occ> {
        self.occs
            .iter()
            .find(|o| o.kind == kind && *o.name == *name && o.role == Role::Def)
    }

    pub fn node(&self, id: &str) -> Option<&NodeDecl> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn agent(&self, id: &str) -> Option<&AgentDecl> {
        self.agents.iter().find(|a| a.id == id)
    }

    pub fn variable(&self, name: &str) -> Option<&VarDecl> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// The KDoc comment (`/** … */`) directly before `decl` (only whitespace between), as text
    /// without the comment markers.
    pub fn doc_before(&self, src: &str, decl: Span) -> Option<String> {
        let i = self.comments.partition_point(|c| c.span.end <= decl.start);
        let c = self.comments.get(i.checked_sub(1)?)?;
        if c.kind != CommentKind::Doc {
            return None;
        }
        let between = src.get(c.span.end as usize..decl.start as usize)?;
        if !between.trim().is_empty() {
            return None;
        }
        Some(kdoc_text(src.get(c.span.range())?))
    }
}

/// `/** a\n * b */` → `a\nb`.
pub fn kdoc_text(raw: &str) -> String {
    let inner = raw
        .strip_prefix("/**")
        .unwrap_or(raw)
        .strip_suffix("*/")
        .unwrap_or(raw);
    let lines: Vec<&str> = inner
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix('*').unwrap_or(t);
            t.strip_prefix(' ').unwrap_or(t).trim_end()
        })
        .collect();
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |i| i + 1);
    lines.get(start..end).unwrap_or(&[]).join("\n")
}

/// The `{name}` placeholders of a text: `(name, byte range of the name without braces)`.
pub fn placeholders(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let start = i + 1;
            let mut j = start;
            while j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_')
                && !(j == start && bytes[j].is_ascii_digit())
            {
                j += 1;
            }
            if j > start && bytes.get(j) == Some(&b'}') {
                out.push((text[start..j].to_string(), start..j));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// A string expression's value and the span a rename rewrites.
fn string_of(e: &Expr<'_>) -> Option<(String, Span, bool)> {
    match &e.kind {
        ExprKind::Str(s) => match s.parts.as_slice() {
            [one] if s.verbatim => Some((s.value.to_string(), one.content, false)),
            _ => Some((s.value.to_string(), e.span, true)),
        },
        _ => None,
    }
}

/// How a value is written (`"x"` → `x`, `Models.GPT_4O`, `0.3`).
fn written(src: &str, e: &Expr<'_>) -> String {
    match &e.kind {
        ExprKind::Str(s) => s.value.to_string(),
        _ => src.get(e.span.range()).unwrap_or("").to_string(),
    }
}

/// The statement names interned: keywords borrow `'static` names from the schema.
fn static_name(kind: BlockKind, name: &str) -> Option<&'static str> {
    schema::lookup(kind, name).map(|s| s.name)
}

struct Walker<'a> {
    src: &'a str,
    index: Index,
    node: Option<usize>,
    /// The names of the occurrences so far, each held once.
    names: HashSet<Arc<str>>,
}

impl Walker<'_> {
    /// `name`, shared with the earlier occurrences of the same name.
    fn name(&mut self, name: &str) -> Arc<str> {
        if let Some(n) = self.names.get(name) {
            return Arc::clone(n);
        }
        let n: Arc<str> = Arc::from(name);
        self.names.insert(Arc::clone(&n));
        n
    }

    fn occ(&mut self, kind: SymKind, e: &Expr<'_>, role: Role, stmt: Span) {
        if let Some((name, span, quoted)) = string_of(e) {
            let name = self.name(&name);
            self.index.occs.push(Occ {
                kind,
                name,
                span,
                quoted,
                role,
                node: self.node,
                stmt,
            });
        }
    }

    fn placeholders_in(&mut self, e: &Expr<'_>, stmt: Span) {
        let ExprKind::Str(s) = &e.kind else { return };
        for part in &s.parts {
            let Some(text) = self.src.get(part.content.range()) else {
                continue;
            };
            for (name, r) in placeholders(text) {
                let start = part.content.start as usize + r.start;
                let end = part.content.start as usize + r.end;
                let name = self.name(&name);
                self.index.occs.push(Occ {
                    kind: SymKind::Variable,
                    name,
                    span: Span::from_range(start..end),
                    quoted: false,
                    role: Role::Placeholder,
                    node: self.node,
                    stmt,
                });
            }
        }
    }

    /// Placeholders in the string values of a `send` payload (`mapOf("k" to "…{x}…")`).
    fn payload(&mut self, e: &Expr<'_>, stmt: Span) {
        match &e.kind {
            ExprKind::Str(_) => self.placeholders_in(e, stmt),
            ExprKind::Call(c) => {
                for a in c.args.iter().flat_map(|a| &a.items) {
                    self.payload(&a.value, stmt);
                }
            }
            ExprKind::Chain { links, .. } => {
                for l in links {
                    if let Some(arg) = &l.arg {
                        self.payload(arg, stmt);
                    }
                }
            }
            _ => {}
        }
    }

    fn keyword(&mut self, block: BlockKind, ident: hensu_syntax::ast::Ident<'_>) {
        if let Some(name) = static_name(block, ident.name) {
            self.index.keywords.push(Keyword {
                span: ident.span,
                block,
                name,
                spec: schema::lookup(block, ident.name),
            });
        }
    }

    fn top_expr(&mut self, e: &Expr<'_>) {
        let ExprKind::Call(c) = &e.kind else { return };
        if c.callee.name != "workflow" {
            return;
        }
        if let Some(arg) = c.args.as_ref().and_then(|a| a.items.first())
            && let Some((name, span, _)) = string_of(&arg.value)
        {
            let id = hensu_ir::workflow_id_from_name(&name);
            let occ_name = self.name(&id);
            self.index.occs.push(Occ {
                kind: SymKind::Workflow,
                name: occ_name,
                span,
                quoted: false,
                role: Role::Def,
                node: None,
                stmt: e.span,
            });
            self.index.workflow = Some(WorkflowDecl {
                name,
                id,
                name_span: span,
                decl: e.span,
            });
        }
        if let Some(b) = &c.block {
            self.block(BlockKind::Workflow, b);
        }
    }

    fn block(&mut self, kind: BlockKind, b: &Block<'_>) {
        for s in &b.stmts {
            self.stmt(kind, s);
        }
    }

    fn stmt(&mut self, kind: BlockKind, s: &Stmt<'_>) {
        match &s.kind {
            StmtKind::Assign { target, value } => {
                self.keyword(kind, *target);
                self.assign(kind, target.name, value, s.span);
            }
            StmtKind::Expr(e) => match &e.kind {
                ExprKind::Call(c) => {
                    self.keyword(kind, c.callee);
                    self.call(kind, c, s.span);
                }
                ExprKind::Chain { head, links } => {
                    if let ExprKind::Name(h) = &head.kind {
                        self.keyword(kind, *h);
                    }
                    for l in links {
                        let role = match l.word.name {
                            "goto" => Role::Goto,
                            "revise" => Role::Revise,
                            "otherwise" => Role::Otherwise,
                            "at" => Role::Start,
                            _ => continue,
                        };
                        if let Some(arg) = &l.arg {
                            self.occ(SymKind::Node, arg, role, s.span);
                        }
                    }
                }
                ExprKind::Name(n) => self.keyword(kind, *n),
                _ => {}
            },
            _ => {}
        }
    }

    fn assign(&mut self, kind: BlockKind, name: &str, value: &Expr<'_>, stmt: Span) {
        if matches!(name, "prompt" | "rubric")
            && let Some((v, span, _)) = string_of(value)
            && v.to_ascii_lowercase().ends_with(".md")
        {
            let dir = if name == "prompt" {
                hensu_sema::files::ResourceDir::Prompts
            } else {
                hensu_sema::files::ResourceDir::Rubrics
            };
            self.index.resources.push((span, dir, v));
        }
        match (kind, name) {
            (BlockKind::StandardNode, "agent") => {
                self.occ(SymKind::Agent, value, Role::NodeAgent, stmt);
                if let Some(n) = self.node.and_then(|i| self.index.nodes.get_mut(i)) {
                    n.agent = value.as_str().map(str::to_string);
                }
            }
            (BlockKind::Branch, "agent") => {
                self.occ(SymKind::Agent, value, Role::BranchAgent, stmt);
            }
            // A map node (docs/language.md, *Map over a list*): its agent, the list it reads
            // (a read, like an onCondition variable) and its per-item prompt.
            (BlockKind::MapNode, "agent") => {
                self.occ(SymKind::Agent, value, Role::NodeAgent, stmt);
            }
            (BlockKind::MapNode, "over") => {
                self.occ(SymKind::Variable, value, Role::Condition, stmt);
            }
            (BlockKind::MapNode, "prompt") => {
                // `{item}` and `{index}` are the item's own, no state variable.
                let from = self.index.occs.len();
                self.placeholders_in(value, stmt);
                let mut i = from;
                while i < self.index.occs.len() {
                    if matches!(&*self.index.occs[i].name, "item" | "index") {
                        self.index.occs.remove(i);
                    } else {
                        i += 1;
                    }
                }
            }
            (BlockKind::Compensation, "agent") => {
                self.occ(SymKind::Agent, value, Role::NodeAgent, stmt);
            }
            (
                BlockKind::StandardNode
                | BlockKind::ActionNode
                | BlockKind::GenericNode
                | BlockKind::SubWorkflowNode,
                "compensation",
            ) => self.occ(SymKind::Compensation, value, Role::Compensates, stmt),
            (BlockKind::Consensus, "judge") => self.occ(SymKind::Agent, value, Role::Judge, stmt),
            (BlockKind::SubWorkflowNode | BlockKind::MapNode, "target") => {
                if let Some((v, span, quoted)) = string_of(value) {
                    let name = self.name(&v);
                    self.index.occs.push(Occ {
                        kind: SymKind::Workflow,
                        name,
                        span,
                        quoted,
                        role: Role::Target,
                        node: self.node,
                        stmt,
                    });
                    if let Some(n) = self.node.and_then(|i| self.index.nodes.get_mut(i)) {
                        n.target = Some(v);
                    }
                }
            }
            (BlockKind::StandardNode | BlockKind::Branch, "prompt") => {
                self.placeholders_in(value, stmt);
                if kind == BlockKind::StandardNode
                    && let Some(n) = self.node.and_then(|i| self.index.nodes.get_mut(i))
                {
                    n.prompt = value.as_str().map(str::to_string);
                }
            }
            (BlockKind::Agent, prop) => {
                let v = written(self.src, value);
                if let Some(a) = self.index.agents.last_mut() {
                    a.props.push((prop.to_string(), v));
                }
            }
            _ => {}
        }
    }

    fn args<'c, 's>(c: &'c Call<'s>) -> impl Iterator<Item = &'c Expr<'s>> {
        c.args.iter().flat_map(|a| &a.items).map(|a| &a.value)
    }

    fn call(&mut self, kind: BlockKind, c: &Call<'_>, stmt: Span) {
        let name = c.callee.name;
        let first = Self::args(c).next();
        match (kind, name) {
            (BlockKind::State, "input" | "variable") => {
                let Some((v, span, quoted)) = first.and_then(string_of) else {
                    return;
                };
                let mut args = Self::args(c).skip(1);
                let ty = args.next().map(|e| written(self.src, e));
                let description = args.next().and_then(|e| e.as_str().map(str::to_string));
                let occ_name = self.name(&v);
                self.index.occs.push(Occ {
                    kind: SymKind::Variable,
                    name: occ_name,
                    span,
                    quoted,
                    role: Role::Def,
                    node: None,
                    stmt,
                });
                self.index.variables.push(VarDecl {
                    name: v,
                    name_span: span,
                    decl: stmt,
                    ty,
                    input: name == "input",
                    description,
                });
                return;
            }
            (BlockKind::Agents, "agent") => {
                if let Some((v, span, quoted)) = first.and_then(string_of) {
                    let name = self.name(&v);
                    self.index.occs.push(Occ {
                        kind: SymKind::Agent,
                        name,
                        span,
                        quoted,
                        role: Role::Def,
                        node: None,
                        stmt,
                    });
                    self.index.agents.push(AgentDecl {
                        id: v,
                        id_span: span,
                        decl: stmt,
                        props: Vec::new(),
                    });
                }
                if let Some(b) = &c.block {
                    self.block(BlockKind::Agent, b);
                }
                return;
            }
            (BlockKind::Graph, _) if name == "end" || schema::lookup(kind, name).is_some_and(|s| matches!(s.kind, StatementKind::CallBlock { block, .. } if block.is_node())) => {
                let child = match schema::lookup(kind, name).map(|s| s.kind) {
                    Some(StatementKind::CallBlock { block, .. }) => block,
                    _ => BlockKind::EndNode,
                };
                let Some((id, span, quoted)) = first.and_then(string_of) else {
                    return;
                };
                let status = Self::args(c).nth(1).map(|e| written(self.src, e));
                self.index.nodes.push(NodeDecl {
                    id: id.clone(),
                    call: name.to_string(),
                    id_span: span,
                    decl: stmt,
                    status,
                    ..NodeDecl::default()
                });
                let idx = self.index.nodes.len() - 1;
                self.node = Some(idx);
                let name = self.name(&id);
                self.index.occs.push(Occ {
                    kind: SymKind::Node,
                    name,
                    span,
                    quoted,
                    role: Role::Def,
                    node: Some(idx),
                    stmt,
                });
                if let Some(b) = &c.block {
                    self.block(child, b);
                }
                self.node = None;
                return;
            }
            (
                BlockKind::StandardNode
                | BlockKind::ActionNode
                | BlockKind::JoinNode
                | BlockKind::SubWorkflowNode
                | BlockKind::MapNode,
                "writes",
            ) => self.list(c, SymKind::Variable, Role::Writes, stmt),
            (BlockKind::Branch, "yields") => self.list(c, SymKind::Variable, Role::Yields, stmt),
            // A dependency DAG's flag (docs/language.md, *Dependency DAGs*): a read, like an
            // onCondition variable.
            (BlockKind::Branch, "runIf") => self.list(c, SymKind::Variable, Role::Condition, stmt),
            (BlockKind::SubWorkflowNode, "imports") => {
                self.list(c, SymKind::Variable, Role::Imports, stmt)
            }
            (BlockKind::JoinNode, "exports") => {
                self.list(c, SymKind::Variable, Role::Exports, stmt)
            }
            (BlockKind::ForkNode, "targets") => {
                self.list(c, SymKind::Node, Role::ForkTarget, stmt)
            }
            (BlockKind::JoinNode, "await") => self.list(c, SymKind::Node, Role::Await, stmt),
            (BlockKind::Workflow, "extends") => {
                if let Some((v, span, quoted)) = first.and_then(string_of) {
                    let name = self.name(&v);
                    self.index.occs.push(Occ {
                        kind: SymKind::Workflow,
                        name,
                        span,
                        quoted,
                        role: Role::Extends,
                        node: None,
                        stmt,
                    });
                }
            }
            (BlockKind::Graph, "routes") => {
                if let Some(e) = first {
                    self.occ(SymKind::Node, e, Role::Routes, stmt);
                }
            }
            (BlockKind::StandardNode | BlockKind::Routes, "onCondition") => {
                if let Some(e) = first {
                    self.occ(SymKind::Variable, e, Role::Condition, stmt);
                }
            }
            (BlockKind::ActionNode, "send") => {
                for e in Self::args(c).skip(1) {
                    self.payload(e, stmt);
                }
            }
            (BlockKind::Graph, "compensation") => {
                if let Some(e) = first {
                    self.occ(SymKind::Compensation, e, Role::Def, stmt);
                }
            }
            (BlockKind::Workflow, "state" | "agents" | "config" | "graph") => {
                self.index.sections.push(Section {
                    name: name.to_string(),
                    span: stmt,
                    name_span: c.callee.span,
                });
            }
            _ => {}
        }
        if let Some(b) = &c.block
            && let Some(spec) = schema::lookup(kind, name)
        {
            let child = match spec.kind {
                StatementKind::Block(k) => Some(k),
                StatementKind::CallBlock { block, .. }
                | StatementKind::CallOrBlock { block, .. } => Some(block),
                _ => None,
            };
            if let Some(child) = child {
                self.block(child, b);
            }
        }
    }

    /// `writes("a", "b")`, `targets(listOf("a"))`, …
    fn list(&mut self, c: &Call<'_>, kind: SymKind, role: Role, stmt: Span) {
        for e in Self::args(c) {
            match &e.kind {
                ExprKind::Call(inner) if inner.callee.name == "listOf" => {
                    for e in Self::args(inner) {
                        self.occ(kind, e, role, stmt);
                    }
                }
                _ => self.occ(kind, e, role, stmt),
            }
        }
    }
}
