//! What the printer needs to know from the syntax tree: where the blocks are, which bare enum
//! constants get qualified and which `(` open call arguments. The walk is iterative, so deep
//! expressions cannot overflow the stack.

use std::collections::{HashMap, HashSet};

use hensu_syntax::ast::{Block, Expr, ExprKind, FunBody, SourceFile, Stmt, StmtKind};

/// The enums whose constants may be written bare, with their constants (the Kotlin DSL
/// imports them, so bare `ALWAYS` means `ReviewMode.ALWAYS`).
pub const ENUMS: &[(&str, &[&str])] = &[
    ("VarType", &["STRING", "NUMBER", "BOOLEAN", "LIST_STRING"]),
    ("ReviewMode", &["REQUIRED", "OPTIONAL", "DISABLED"]),
    (
        "ConsensusStrategy",
        &[
            "MAJORITY_VOTE",
            "UNANIMOUS",
            "WEIGHTED_VOTE",
            "JUDGE_DECIDES",
        ],
    ),
    (
        "MergeStrategy",
        &[
            "COLLECT_ALL",
            "FIRST_SUCCESSFUL",
            "CONCATENATE",
            "MERGE_MAPS",
        ],
    ),
    ("ExitStatus", &["SUCCESS", "FAILURE", "CANCEL"]),
    ("LogLevel", &["TRACE", "DEBUG", "INFO", "WARN", "ERROR"]),
    ("ItemFailure", &["FAIL", "SKIP", "COLLECT"]),
];

pub(crate) struct Info<'a, 's> {
    /// Every block by the offset of its `{`.
    pub blocks: HashMap<u32, &'a Block<'s>>,
    /// Bare enum constants to qualify: name offset → enum name.
    pub qualify: HashMap<u32, &'static str>,
    /// Offsets of the `(` of call argument lists (`f(…)`; method calls are recognised by the
    /// printer from the preceding `.name`).
    pub call_parens: HashSet<u32>,
    /// End offsets of the annotations (`@Suppress("W0307")`): what follows one starts a line
    /// of its own, or stays on the annotation's line, as written.
    pub annotation_ends: HashSet<u32>,
}

/// The enum expected by an assignment `target = …` directly inside a `parent { }` block.
fn assign_enum(parent: Option<&str>, target: &str) -> Option<&'static str> {
    match (parent?, target) {
        ("review", "mode") => Some("ReviewMode"),
        ("consensus", "strategy") => Some("ConsensusStrategy"),
        ("join", "mergeStrategy") => Some("MergeStrategy"),
        ("observability", "logLevel") => Some("LogLevel"),
        ("map", "onItemFailure") => Some("ItemFailure"),
        _ => None,
    }
}

/// The enum expected by positional argument `index` of a call to `callee`.
fn call_arg_enum(callee: &str, index: usize) -> Option<&'static str> {
    match (callee, index) {
        ("input" | "variable", 1) => Some("VarType"),
        ("end", 1) => Some("ExitStatus"),
        ("review", 0) => Some("ReviewMode"),
        _ => None,
    }
}

fn is_constant(ty: &str, name: &str) -> bool {
    ENUMS
        .iter()
        .any(|(t, constants)| *t == ty && constants.contains(&name))
}

enum Work<'a, 's> {
    Stmt(&'a Stmt<'s>, Option<&'s str>),
    Expr(&'a Expr<'s>),
}

pub(crate) fn collect<'a, 's>(file: &'a SourceFile<'s>) -> Info<'a, 's> {
    let mut info = Info {
        blocks: HashMap::new(),
        qualify: HashMap::new(),
        call_parens: HashSet::new(),
        annotation_ends: HashSet::new(),
    };
    let qualify_if = |info: &mut Info<'a, 's>, e: Option<&Expr<'s>>, ty: &'static str| {
        if let Some(Expr {
            kind: ExprKind::Name(id),
            ..
        }) = e
            && !id.backticked()
            && is_constant(ty, id.name)
        {
            info.qualify.insert(id.span.start, ty);
        }
    };
    let mut stack: Vec<Work<'a, 's>> = file.items.iter().map(|s| Work::Stmt(s, None)).collect();
    while let Some(work) = stack.pop() {
        match work {
            Work::Stmt(stmt, parent) => {
                for a in &stmt.annotations {
                    info.annotation_ends.insert(a.span.end);
                    if let Some(args) = &a.args {
                        info.call_parens.insert(args.span.start);
                        stack.extend(args.items.iter().map(|a| Work::Expr(&a.value)));
                    }
                }
                match &stmt.kind {
                    StmtKind::Assign { target, value } => {
                        if !target.backticked()
                            && let Some(ty) = assign_enum(parent, target.name)
                        {
                            qualify_if(&mut info, Some(value), ty);
                        }
                        stack.push(Work::Expr(value));
                    }
                    StmtKind::Expr(e) | StmtKind::Return(Some(e)) => stack.push(Work::Expr(e)),
                    StmtKind::Fun { body, .. } => match body {
                        FunBody::Expr(e) => stack.push(Work::Expr(e)),
                        FunBody::Block(b) => {
                            info.blocks.insert(b.span.start, b);
                            stack.extend(b.stmts.iter().map(|s| Work::Stmt(s, None)));
                        }
                    },
                    StmtKind::Package(_)
                    | StmtKind::Import { .. }
                    | StmtKind::Return(None)
                    | StmtKind::Error => {}
                }
            }
            Work::Expr(e) => match &e.kind {
                ExprKind::Call(call) => {
                    if let Some(args) = &call.args {
                        info.call_parens.insert(args.span.start);
                        if !call.callee.backticked() && args.items.iter().all(|a| a.name.is_none())
                        {
                            for (i, arg) in args.items.iter().enumerate() {
                                if let Some(ty) = call_arg_enum(call.callee.name, i) {
                                    qualify_if(&mut info, Some(&arg.value), ty);
                                }
                            }
                        }
                        stack.extend(args.items.iter().map(|a| Work::Expr(&a.value)));
                    }
                    if let Some(b) = &call.block {
                        info.blocks.insert(b.span.start, b);
                        let parent = (!call.callee.backticked()).then_some(call.callee.name);
                        stack.extend(b.stmts.iter().map(|s| Work::Stmt(s, parent)));
                    }
                }
                ExprKind::MethodCall(m) => {
                    stack.push(Work::Expr(&m.receiver));
                    stack.extend(m.args.iter().map(|a| Work::Expr(&a.value)));
                }
                ExprKind::Chain { head, links } => {
                    stack.push(Work::Expr(head));
                    stack.extend(links.iter().filter_map(|l| l.arg.as_ref().map(Work::Expr)));
                }
                ExprKind::Range { start: a, end: b } | ExprKind::Add { lhs: a, rhs: b } => {
                    stack.push(Work::Expr(a));
                    stack.push(Work::Expr(b));
                }
                ExprKind::Name(_)
                | ExprKind::Path(_)
                | ExprKind::Str(_)
                | ExprKind::Int(_)
                | ExprKind::Long(_)
                | ExprKind::Duration(_)
                | ExprKind::Double(_)
                | ExprKind::Bool(_)
                | ExprKind::Null
                | ExprKind::Error => {}
            },
        }
    }
    info
}
