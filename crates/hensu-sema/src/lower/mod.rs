//! The schema-driven lowering of the syntax tree to the typed IR plus [`Origins`].
//!
//! Every statement is checked against [`crate::schema::block_schema`] of its block first
//! (unknown → E0101 with a did-you-mean, valid in another block → E0102, wrong shape → E0101,
//! given twice → E0104), then lowered by the handler of its block. Values are typed by the
//! helpers in `values.rs`; node bodies by `nodes/` (one file per kind); transition chains by
//! `transitions/` (one file per family). The lowering never panics and
//! produces an IR whenever the file has a `workflow(…) { … }` with a `graph { }`.

mod compensation;
#[cfg(test)]
mod deferred_tests;
mod nodes;
mod resources;
mod routes;
mod transitions;
mod values;
mod workflow;

use hensu_diagnostics::{Diagnostic, FileId, Span, codes};
use hensu_ir::Workflow;
use hensu_syntax::ast::{Call, Expr, ExprKind, FunBody, Ident, Link, SourceFile, Stmt, StmtKind};

use crate::extend::Extension;
use crate::files::FileProvider;
use crate::origins::Origins;
use crate::schema::{self, BlockKind, StatementKind, StatementSpec};
use crate::suggest::{did_you_mean, replace_with};
use crate::suppress::Suppression;

/// The result of [`crate::lower()`].
#[derive(Clone, Debug, Default)]
pub struct Lowered {
    /// The IR; present whenever the file is structurally usable (a workflow with a graph), even
    /// when there are errors, so checks and the LSP still run.
    pub workflow: Option<Workflow>,
    pub origins: Origins,
    pub diagnostics: Vec<Diagnostic>,
    /// What an extending workflow adds to its base beyond the IR (`extends("id")` and its
    /// `routes` blocks); `None` when the file neither extends nor routes. Such a workflow is
    /// checked only after [`crate::extend::resolve`] merged it with its base.
    pub extension: Option<Extension>,
}

pub(crate) struct Lowerer<'f> {
    pub files: &'f dyn FileProvider,
    pub diags: Vec<Diagnostic>,
    pub origins: Origins,
    /// Scratch for the transition rules of the node being lowered.
    pub(crate) rule_sink: transitions::RuleSink,
    /// `extends(…)` and the `routes(…)` blocks, resolved later by [`crate::extend`].
    pub(crate) extension: Extension,
    /// The `compensation = "…"` of the node being lowered (name, value span).
    pub(crate) pending_compensation: Option<(String, Span)>,
    /// The `timeout = …` and `onFailure retry … backoff …` of the node being lowered
    /// (docs/language.md, *Timeouts and backoff*), moved into the graph's timing with it.
    pub(crate) pending_timing: hensu_ir::NodeTiming,
    /// The `onTimeout` arm of the node's `review { … }` block, appended to the node's rules
    /// after its body (docs/language.md, *Review*).
    pub(crate) pending_review_rules: transitions::RuleSink,
    /// The spans of those two values, for the node's origins.
    /// The spans of the node's `timeout`, `backoff` and review `deadline`.
    pub(crate) pending_timing_spans: (Option<Span>, Option<Span>, Option<Span>),
    /// A deferred graph statement did not parse alone ([`lower_deferred`]).
    pub(crate) deferred_failed: bool,
}

/// The shape of a statement, independent of its meaning.
#[derive(Clone, Copy)]
pub(crate) enum Shape<'t, 's> {
    /// `name = value`
    Assign {
        target: Ident<'s>,
        value: &'t Expr<'s>,
    },
    /// `name(…)`, `name { … }`, `name(…) { … }`
    Call(&'t Call<'s>),
    /// `name word arg …`
    Chain {
        head: Ident<'s>,
        links: &'t [Link<'s>],
    },
    /// A bare `name`.
    Name(Ident<'s>),
    /// A chain whose head is not a simple name (`"key" to value`).
    Entry {
        key: &'t Expr<'s>,
        links: &'t [Link<'s>],
    },
    /// Anything else (a literal, a nested `fun`, …).
    Other,
    /// A recovered error (already reported by the parser).
    Error,
}

impl<'t, 's> Shape<'t, 's> {
    pub fn of(stmt: &'t Stmt<'s>) -> Self {
        match &stmt.kind {
            StmtKind::Assign { target, value } => Shape::Assign {
                target: *target,
                value,
            },
            StmtKind::Expr(e) => match &e.kind {
                ExprKind::Call(c) => Shape::Call(c),
                ExprKind::Chain { head, links } => match &head.kind {
                    ExprKind::Name(id) => Shape::Chain { head: *id, links },
                    ExprKind::Error => Shape::Error,
                    _ => Shape::Entry { key: head, links },
                },
                ExprKind::Name(id) => Shape::Name(*id),
                ExprKind::Error => Shape::Error,
                _ => Shape::Other,
            },
            StmtKind::Error => Shape::Error,
            _ => Shape::Other,
        }
    }

    /// The statement's leading name.
    pub fn name(&self) -> Option<Ident<'s>> {
        match self {
            Shape::Assign { target, .. } => Some(*target),
            Shape::Call(c) => Some(c.callee),
            Shape::Chain { head, .. } | Shape::Name(head) => Some(*head),
            Shape::Entry { .. } | Shape::Other | Shape::Error => None,
        }
    }
}

/// First spans of statements that may be given once per block (E0104). A block names at most
/// the statements of its schema, so a linear list beats hashing (and allocates nothing until the
/// first entry).
#[derive(Default)]
pub(crate) struct Seen(Vec<(&'static str, Span)>);

impl Seen {
    pub(crate) fn new() -> Self {
        Seen(Vec::new())
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Span> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, s)| s)
    }

    pub(crate) fn insert(&mut self, name: &'static str, span: Span) {
        self.0.push((name, span));
    }
}

/// Whether `s` is a valid node / agent / variable / workflow id (E0207): the one id rule,
/// [`hensu_ir::is_valid_id`].
pub use hensu_ir::is_valid_id as is_valid_identifier;

/// `a, b, c` of the names accepted in `kind`.
pub(crate) fn accepted_list(kind: BlockKind) -> String {
    let mut names: Vec<&str> = Vec::new();
    for spec in schema::block_schema(kind) {
        if !names.contains(&spec.name) {
            names.push(spec.name);
        }
    }
    if names.is_empty() {
        return "nothing".to_string();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl<'f> Lowerer<'f> {
    pub fn new(files: &'f dyn FileProvider, file_id: FileId) -> Self {
        Lowerer {
            files,
            diags: Vec::new(),
            origins: Origins {
                file: file_id,
                ..Origins::default()
            },
            rule_sink: transitions::RuleSink::default(),
            extension: Extension::default(),
            pending_compensation: None,
            pending_timing: hensu_ir::NodeTiming::default(),
            pending_review_rules: transitions::RuleSink::default(),
            pending_timing_spans: (None, None, None),
            deferred_failed: false,
        }
    }

    pub fn emit(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Checks a statement against the schema of `kind`. Returns its spec and shape when the
    /// statement is accepted there (possibly after an E0104, which keeps the statement), else
    /// reports why not and returns `None`.
    pub fn accept<'t, 's>(
        &mut self,
        kind: BlockKind,
        stmt: &'t Stmt<'s>,
        seen: &mut Seen,
    ) -> Option<(&'static StatementSpec, Shape<'t, 's>)> {
        let shape = Shape::of(stmt);
        if matches!(shape, Shape::Error) {
            return None;
        }
        let Some(name) = shape.name() else {
            self.not_a_statement(kind, stmt, &shape);
            return None;
        };
        // A removed construct's name is in no block's schema (a schema test), so it is looked
        // for only among the names no schema knows.
        let Some(spec) = schema::lookup(kind, name.name) else {
            if !self.removed(name, stmt.span) {
                self.unknown_statement(kind, name, stmt.span);
            }
            return None;
        };
        if !self.shape_fits(spec, &shape, name, stmt.span) {
            return None;
        }
        if spec.repeat == schema::Repeat::Once {
            if let Some(first) = seen.get(spec.name) {
                let d = Diagnostic::new(
                    codes::E0104,
                    format!("`{}` is given twice in {}", spec.name, kind.describe()),
                    name.span,
                    "given again here",
                )
                .with_label(*first, "first given here")
                .with_help(format!(
                    "upstream Hensu silently keeps the last `{}`; remove one of them",
                    spec.name
                ));
                self.emit(d);
            } else {
                seen.insert(spec.name, name.span);
            }
        }
        Some((spec, shape))
    }

    /// E0015 for removed upstream constructs; true when `name` is one.
    pub fn removed(&mut self, name: Ident<'_>, stmt: Span) -> bool {
        let Some((_, help)) = schema::REMOVED.iter().find(|(n, _)| *n == name.name) else {
            return false;
        };
        let d = Diagnostic::new(
            codes::E0015,
            format!("`{}` was removed from the language", name.name),
            name.span,
            "removed construct",
        )
        .with_label(stmt, "this statement is ignored")
        .with_help(*help)
        .with_note("planning, static plans and loop nodes were replaced by ordinary nodes with bounded `revise` transitions and `onCondition` routing");
        self.emit(d);
        true
    }

    fn not_a_statement(&mut self, kind: BlockKind, stmt: &Stmt<'_>, shape: &Shape<'_, '_>) {
        let (msg, help) = match (&stmt.kind, shape) {
            (StmtKind::Package(_) | StmtKind::Import { .. }, _) => (
                "`package` and `import` are only allowed at the top of the file".to_string(),
                "move it before the workflow".to_string(),
            ),
            (StmtKind::Fun { .. }, _) => (
                "functions cannot be declared inside a workflow".to_string(),
                "hensu workflows are declarative; write the statements directly".to_string(),
            ),
            (_, Shape::Entry { .. }) => (
                format!("`… to …` entries are not accepted in {}", kind.describe()),
                "`\"key\" to value` entries belong in a generic node's `config { }`".to_string(),
            ),
            _ => (
                format!("expected a statement of {}", kind.describe()),
                format!("{} accepts {}", kind.describe(), accepted_list(kind)),
            ),
        };
        let d =
            Diagnostic::new(codes::E0101, msg, stmt.span, "not a statement here").with_help(help);
        self.emit(d);
    }

    /// E0101 / E0102 for a name that `kind` does not accept.
    pub fn unknown_statement(&mut self, kind: BlockKind, name: Ident<'_>, stmt: Span) {
        let elsewhere: Vec<BlockKind> = schema::blocks_accepting(name.name)
            .into_iter()
            .filter(|k| *k != kind)
            .collect();
        if !elsewhere.is_empty() {
            let places = elsewhere
                .iter()
                .map(|k| k.describe())
                .collect::<Vec<_>>()
                .join(", ");
            let d = Diagnostic::new(
                codes::E0102,
                format!("`{}` is not accepted in {}", name.name, kind.describe()),
                name.span,
                format!("not valid in {}", kind.describe()),
            )
            .with_label(stmt, "this statement is ignored")
            .with_note(format!("`{}` is valid in {places}", name.name))
            .with_help(format!(
                "{} accepts {}",
                kind.describe(),
                accepted_list(kind)
            ));
            self.emit(d);
            return;
        }
        let candidates = schema::block_schema(kind).iter().map(|s| s.name);
        let mut d = Diagnostic::new(
            codes::E0101,
            format!("unknown statement `{}` in {}", name.name, kind.describe()),
            name.span,
            "unknown here",
        );
        match did_you_mean(name.name, candidates) {
            _ if hensu_syntax::KOTLIN_MODIFIERS.contains(&name.name) => {
                d = d.with_help(hensu_syntax::modifier_help(name.name))
            }
            Some(s) => d = replace_with(d.with_help(format!("did you mean `{s}`?")), name.span, s),
            None => {
                d = d.with_help(format!(
                    "{} accepts {}",
                    kind.describe(),
                    accepted_list(kind)
                ))
            }
        }
        if matches!(
            name.name,
            "val" | "var" | "for" | "while" | "if" | "when" | "fun" | "return"
        ) {
            d = d.with_note("only the declarative workflow DSL is supported; Kotlin code (variables, loops, functions, conditionals) is not part of the language");
        }
        self.emit(d);
    }

    /// Whether the statement's syntactic shape is the one its spec expects; E0101 if not.
    fn shape_fits(
        &mut self,
        spec: &StatementSpec,
        shape: &Shape<'_, '_>,
        name: Ident<'_>,
        stmt: Span,
    ) -> bool {
        let expected: Option<&str> = match (spec.kind, shape) {
            (StatementKind::Property { .. }, Shape::Assign { .. }) => None,
            (StatementKind::Property { .. }, _) => Some("a property"),
            (StatementKind::Call { .. }, Shape::Call(c))
                if c.block.is_none() && c.args.is_some() =>
            {
                None
            }
            (StatementKind::Call { .. }, _) => Some("a call"),
            (StatementKind::Block(_), Shape::Call(c))
                if c.block.is_some() && c.args.as_ref().is_none_or(|a| a.items.is_empty()) =>
            {
                None
            }
            (StatementKind::Block(_), _) => Some("a block"),
            (StatementKind::CallBlock { .. }, Shape::Call(c)) if c.args.is_some() => None,
            (StatementKind::CallBlock { .. }, _) => Some("a declaration"),
            (StatementKind::CallOrBlock { .. }, Shape::Call(_)) => None,
            (StatementKind::CallOrBlock { .. }, _) => Some("a call or a block"),
            (
                StatementKind::Transition(_) | StatementKind::StartAt | StatementKind::Arm(_),
                Shape::Chain { .. } | Shape::Name(_),
            ) => None,
            (StatementKind::Transition(_) | StatementKind::StartAt | StatementKind::Arm(_), _) => {
                Some("an infix chain")
            }
            (StatementKind::Entry, Shape::Entry { .. }) => None,
            (StatementKind::Entry, _) => Some("an entry"),
        };
        let Some(expected) = expected else {
            return true;
        };
        // A declaration of another block written here (a `compensation("x") { … }` inside its
        // node): say where it belongs rather than how the same word is written here.
        if let Shape::Call(_) = shape
            && let Some(home) = declared_in(name.name)
        {
            let d = Diagnostic::new(
                codes::E0102,
                format!("`{}(\"…\")` is declared in `{home}`, not here", name.name),
                stmt,
                format!("a `{}` declaration inside another block", name.name),
            )
            .with_help(format!(
                "move it into `{home}`; here the word is written `{}`",
                spec.syntax
            ));
            self.emit(d);
            return false;
        }
        let d = Diagnostic::new(
            codes::E0101,
            format!("`{}` is {expected} here, not written like this", name.name),
            stmt,
            format!("expected `{}`", spec.syntax),
        )
        .with_help(format!("write `{}`", spec.syntax));
        self.emit(d);
        false
    }
}

/// The block a declaration call belongs to, for the words that are something else inside a
/// node (docs/language.md: compensations in `graph { }`, agents in `agents { }`).
fn declared_in(word: &str) -> Option<&'static str> {
    match word {
        "compensation" => Some("graph { }"),
        "agent" => Some("agents { }"),
        _ => None,
    }
}

/// One node statement of a `graph { }` block lowered alone ([`lower_graph_node`]): what the
/// lowering of the whole file adds to the IR and its origins for it, and the diagnostics it
/// reports while lowering it.
#[derive(Clone, Debug)]
pub struct LoweredNode {
    pub id: String,
    pub node: hensu_ir::Node,
    pub origin: crate::origins::NodeOrigin,
    /// Its entry of the IR's `saga.node_compensations` (`compensation = "…"`).
    pub compensation: Option<String>,
    /// Its entry of the IR's `timing.nodes` (`timeout`, `backoff`, a review deadline).
    pub timing: Option<hensu_ir::NodeTiming>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lowers one statement of a workflow's `graph { }` block on its own: a node declaration
/// (`node("id") { … }`, `end(…)`, `fork(…) { … }`, …) without annotations. `fallback` is the
/// span the whole file's lowering uses when nothing more precise is known (the `workflow` call's
/// name). A node's lowering reads nothing of the rest of the file except whether its id is
/// already taken, which the caller knows (the language server re-lowers an edited node whose id
/// did not change: docs/performance.md, *Language server, round 3*). `None` when the statement
/// is not a node the lowering accepts (a `start at`, `routes`, `compensation`, or a node the
/// lowering rejects): lower the whole file then.
pub fn lower_graph_node(
    stmt: &Stmt<'_>,
    file_id: FileId,
    fallback: Span,
    files: &dyn FileProvider,
) -> Option<LoweredNode> {
    if !stmt.annotations.is_empty() {
        return None;
    }
    let mut l = Lowerer::new(files, file_id);
    l.origins.fallback = fallback;
    let mut graph = nodes::Graph::default();
    l.graph_stmt(&mut graph, &mut Seen::new(), stmt);
    if graph.nodes.len() != 1
        || graph.start.is_some()
        || !graph.saga.compensations.is_empty()
        || !l.origins.compensations.is_empty()
        || l.extension.base.is_some()
        || !l.extension.routes.is_empty()
    {
        return None;
    }
    let (id, node) = graph.nodes.pop()?;
    let (_, origin) = l.origins.nodes.pop()?;
    Some(LoweredNode {
        compensation: graph.saga.node_compensations.swap_remove(&id),
        timing: graph.timing.nodes.swap_remove(&id),
        diagnostics: l.diags.into_iter().map(|d| d.in_file(file_id)).collect(),
        id,
        node,
        origin,
    })
}

/// The statements of a graph or state block outside the tree.
pub(crate) enum BlockStmts<'s> {
    /// Taken out of the tree by [`lower_owned`].
    Owned(Vec<Stmt<'s>>),
    /// Left unparsed by [`hensu_syntax::parse_deferring_graphs`]: each is parsed when it is
    /// lowered.
    Deferred {
        src: &'s str,
        graph: hensu_syntax::DeferredGraph,
    },
}

/// Graph and state blocks taken out of the tree by [`lower_owned`] or deferred by the parser, by
/// the span of the block.
pub(crate) type Detached<'s> = Vec<(Span, BlockStmts<'s>)>;

/// The statements of the block spanning `span` if [`lower_owned`] took them out of the tree or
/// the parser deferred them.
pub(crate) fn take_detached<'s>(detached: &mut Detached<'s>, span: Span) -> Option<BlockStmts<'s>> {
    let i = detached.iter().position(|(s, _)| *s == span)?;
    Some(detached.swap_remove(i).1)
}

impl Lowerer<'_> {
    /// Each statement of a block [`hensu_syntax::parse_deferring_graphs`] deferred, parsed from
    /// the tokens the file's lexing kept for it and handed to `lower`: only one statement's tree
    /// is alive, and each statement's tokens are freed once it is parsed. A statement that does
    /// not parse alone stops it and marks the lowering incomplete ([`lower_deferred`]).
    pub(crate) fn each_deferred<'s>(
        &mut self,
        src: &'s str,
        deferred: hensu_syntax::DeferredGraph,
        mut lower: impl FnMut(&mut Self, &Stmt<'s>),
    ) {
        let depth = deferred.depth;
        if deferred.tokens.len() != deferred.stmts.len() {
            self.deferred_failed = true;
            return;
        }
        let mut parser = hensu_syntax::StatementParser::new(src);
        for (span, tokens) in deferred.stmts.into_iter().zip(deferred.tokens) {
            let parsed = parser.parse(span, &tokens, depth);
            drop(tokens);
            let Some(stmt) = parsed else {
                self.deferred_failed = true;
                break;
            };
            lower(self, &stmt);
        }
    }
}

/// Lowers a parsed file.
pub fn lower(file: &SourceFile<'_>, file_id: FileId, files: &dyn FileProvider) -> Lowered {
    let annotations = crate::suppress::collect(file);
    lower_with(file, &mut Vec::new(), annotations, file_id, files).0
}

/// Lowers a parsed file it owns: the same result as [`lower`], but the statements of each
/// `graph { }` and `state { }` block are freed one by one as they are lowered, so the tree (the
/// bulk of it is the graph) does not stay alive beside the whole IR.
pub fn lower_owned(mut file: SourceFile<'_>, file_id: FileId, files: &dyn FileProvider) -> Lowered {
    // Before the graphs are detached: annotations may sit on nodes.
    let annotations = crate::suppress::collect(&file);
    let mut detached = Vec::new();
    detach_blocks(&mut file, &mut detached);
    lower_with(&file, &mut detached, annotations, file_id, files).0
}

/// [`lower_owned`] for a tree from [`hensu_syntax::parse_deferring_graphs`] (`src` is its
/// text): each deferred graph statement is parsed, lowered and dropped in turn, so neither the
/// graph's tree nor the file's tokens are alive beside the IR (docs/performance.md, *Round 3,
/// fourth sitting: the front end's heap*). The same result as [`lower_owned`] of the whole tree;
/// `None` when a deferred block is not where the lowering takes graphs from, or a statement
/// does not parse alone as it did in the file (neither happens for what the parser defers:
/// lower the whole tree then).
pub(crate) fn lower_deferred<'s>(
    mut file: SourceFile<'s>,
    src: &'s str,
    deferred: Vec<hensu_syntax::DeferredGraph>,
    file_id: FileId,
    files: &dyn FileProvider,
) -> Option<Lowered> {
    // The parser defers no graph with an annotation in it.
    let annotations = crate::suppress::collect(&file);
    let mut detached = Vec::new();
    detach_blocks(&mut file, &mut detached);
    for graph in deferred {
        let (_, stmts) = detached.iter_mut().find(|(span, stmts)| {
            *span == graph.block && matches!(stmts, BlockStmts::Owned(s) if s.is_empty())
        })?;
        *stmts = BlockStmts::Deferred { src, graph };
    }
    let (lowered, complete) = lower_with(&file, &mut detached, annotations, file_id, files);
    complete.then_some(lowered)
}

fn lower_with<'s>(
    file: &SourceFile<'s>,
    detached: &mut Detached<'s>,
    (suppressions, mut annotation_diags): (Vec<Suppression>, Vec<Diagnostic>),
    file_id: FileId,
    files: &dyn FileProvider,
) -> (Lowered, bool) {
    let mut l = Lowerer::new(files, file_id);
    l.origins.fallback = file.span;
    let workflow = l.file(file, detached);
    let Lowerer {
        mut diags,
        mut origins,
        extension,
        deferred_failed,
        ..
    } = l;
    diags.append(&mut annotation_diags);
    let diagnostics = diags.into_iter().map(|d| d.in_file(file_id)).collect();
    let diagnostics = crate::suppress::apply(&suppressions, file_id, diagnostics);
    origins.suppressions = suppressions;
    let extension = (extension.base.is_some() || !extension.routes.is_empty()).then_some(extension);
    let lowered = Lowered {
        workflow,
        origins,
        diagnostics,
        extension,
    };
    (lowered, !deferred_failed)
}

/// Takes the statements of every `graph { … }` and `state { … }` block directly inside a
/// `workflow(…) { … }` call out of the tree (the block keeps its span; the lowering finds the
/// statements by it).
fn detach_blocks<'s>(file: &mut SourceFile<'s>, detached: &mut Detached<'s>) {
    fn workflow_call<'s>(e: &mut Expr<'s>, detached: &mut Detached<'s>) {
        let ExprKind::Call(c) = &mut e.kind else {
            return;
        };
        if c.callee.name != "workflow" {
            return;
        }
        let Some(body) = c.block.as_deref_mut() else {
            return;
        };
        for stmt in &mut body.stmts {
            if let StmtKind::Expr(e) = &mut stmt.kind
                && let ExprKind::Call(g) = &mut e.kind
                && matches!(g.callee.name, "graph" | "state")
                && let Some(block) = g.block.as_deref_mut()
            {
                let stmts = std::mem::take(&mut block.stmts);
                detached.push((block.span, BlockStmts::Owned(stmts)));
            }
        }
    }
    for item in &mut file.items {
        match &mut item.kind {
            StmtKind::Fun { body, .. } => match body {
                FunBody::Expr(e) => workflow_call(e, detached),
                FunBody::Block(b) => {
                    for s in &mut b.stmts {
                        if let StmtKind::Expr(e) | StmtKind::Return(Some(e)) = &mut s.kind {
                            workflow_call(e, detached);
                        }
                    }
                }
            },
            StmtKind::Expr(e) => workflow_call(e, detached),
            _ => {}
        }
    }
}
