//! State, schema and type checks: E0401–E0406, W0307, W0308, W0310. The schema checks (E0402,
//! E0403, E0405, the schema part of E0406, W0308) apply only when `state { }` is declared.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{
    Action, COMPENSATING, COMPENSATING_OUTPUT, CompensationBody, ConditionPredicate, Node,
    StateSchema, StateVariable, TransitionRule, VarType, is_engine_variable,
};

use super::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use super::intervals::parse_number;
use super::text::{json_strings, placeholders};
use super::{Ctx, InputKind};
use crate::origins::NodeOrigin;
use crate::suggest::help_and_fix;

mod unused;

/// The state schema with a by-name index (checks look names up once per use, so a large
/// schema stays linear).
struct Schema<'a> {
    variables: &'a [StateVariable],
    by_name: HashMap<&'a str, usize>,
}

impl<'a> Schema<'a> {
    fn new(schema: &'a StateSchema) -> Self {
        let mut by_name =
            HashMap::with_capacity_and_hasher(schema.variables.len(), Default::default());
        for (i, v) in schema.variables.iter().enumerate() {
            by_name.entry(v.name.as_str()).or_insert(i);
        }
        Schema {
            variables: &schema.variables,
            by_name,
        }
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    fn variable(&self, name: &str) -> Option<&'a StateVariable> {
        self.index(name).and_then(|i| self.variables.get(i))
    }

    fn names(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.variables.iter().map(|v| v.name.as_str())
    }
}

/// Which declared variables are read and which are written (indexed like the schema): one
/// hash look-up per name occurrence.
struct Marks {
    read: Vec<bool>,
    written: Vec<bool>,
}

impl Marks {
    fn new(schema: Option<&Schema<'_>>) -> Self {
        let n = schema.map_or(0, |s| s.variables.len());
        Marks {
            read: vec![false; n],
            written: vec![false; n],
        }
    }

    /// Marks `name` read: `None` without a schema, else whether the schema declares it.
    fn read(&mut self, schema: Option<&Schema<'_>>, name: &str) -> Option<bool> {
        let i = schema?.index(name);
        if let Some(r) = i.and_then(|i| self.read.get_mut(i)) {
            *r = true;
        }
        Some(i.is_some())
    }

    /// Marks `name` written: `None` without a schema, else whether the schema declares it.
    fn write(&mut self, schema: Option<&Schema<'_>>, name: &str) -> Option<bool> {
        let i = schema?.index(name);
        if let Some(w) = i.and_then(|i| self.written.get_mut(i)) {
            *w = true;
        }
        Some(i.is_some())
    }
}

/// One place whose `{name}` placeholders are checked and read.
struct PromptSite<'a> {
    text: &'a str,
    /// Precise spans of placeholders by name, when the lowering knows them.
    spans: &'a [(String, Span)],
    /// `spans`, when not empty, is every placeholder of `text` in order (the lowering scanned
    /// this very text), so the text need not be scanned again.
    exact: bool,
    /// The span of the whole prompt / payload (`None`: the `prompt` property of `node`, looked up
    /// only when a diagnostic needs it).
    whole: Option<Span>,
    node: &'a str,
    what: &'static str,
    /// A compensation's text: `{compensating}` and `{compensating_output}` are the engine's.
    compensation: bool,
    /// A DAG branch's prompt: the ids of the branches that finish before it, whose outputs are
    /// in its context (docs/language.md, *Dependency DAGs*).
    dependencies: Vec<&'a str>,
}

pub(super) fn check(cx: &mut Ctx<'_>) {
    let wf = cx.wf;
    let schema_index = wf.state_schema.as_ref().map(Schema::new);
    let schema = schema_index.as_ref();
    let mut marks = Marks::new(schema);
    let mut opaque_reader = false;
    let mut sites: Vec<PromptSite<'_>> = Vec::new();

    for (id, node) in &wf.nodes {
        let origin = cx.node_origin(id);
        sites.clear();
        match node {
            Node::Standard(n) => {
                writes(cx, schema, &mut marks, id, &n.writes);
                if let Some(prompt) = &n.prompt {
                    sites.push(PromptSite {
                        text: prompt,
                        spans: origin.map(|o| o.placeholders.as_slice()).unwrap_or(&[]),
                        exact: true,
                        whole: None,
                        node: id,
                        what: "prompt",
                        compensation: false,
                        dependencies: Vec::new(),
                    });
                }
                conditions(
                    cx,
                    schema,
                    id,
                    n.writes.as_slice(),
                    node.transition_rules(),
                    &mut marks,
                );
            }
            Node::Join(j) => {
                for (i, name) in j.writes.iter().enumerate() {
                    let declared = marks.write(schema, name);
                    if is_engine_variable(name) {
                        let span = cx.list_span(id, |o| &o.writes, i);
                        engine_variable(cx, name, span, "join writes", None);
                    } else if let (Some(schema), Some(false)) = (schema, declared) {
                        let span = cx.list_span(id, |o| &o.writes, i);
                        if cx.input == InputKind::Json {
                            undeclared_join_write_json(cx, schema, id, name, span);
                        } else {
                            undeclared_write(cx, schema, name, span);
                        }
                    }
                }
                for name in &j.exports {
                    marks.write(schema, name);
                }
            }
            Node::Parallel(p) => {
                for (b, branch) in p.branches.iter().enumerate() {
                    let bo = origin.and_then(|o| o.branches.get(b));
                    if let Some(flag) = &branch.run_if {
                        marks.read(schema, flag);
                    }
                    for (i, name) in branch.yields.iter().enumerate() {
                        marks.write(schema, name);
                        if is_engine_variable(name) {
                            let span = bo
                                .and_then(|o| o.yields.get(i).copied())
                                .or(bo.map(|o| o.id))
                                .unwrap_or_else(|| cx.node_span(id));
                            engine_variable(cx, name, span, "branch yields", None);
                        }
                    }
                    if p.consensus_config.is_some() && branch.yields.is_empty() {
                        let span = bo.map(|o| o.id).unwrap_or_else(|| cx.node_span(id));
                        let d = Diagnostic::new(
                            codes::W0307,
                            format!("consensus branch `{}` declares no yields", branch.id),
                            span,
                            "this branch only votes; it adds no data to the state",
                        )
                        .with_help("add `yields(\"…\")` unless a pure vote is intended");
                        cx.emit(d);
                    }
                    if let Some(prompt) = &branch.prompt {
                        sites.push(PromptSite {
                            text: prompt,
                            spans: bo.map(|o| o.placeholders.as_slice()).unwrap_or(&[]),
                            exact: true,
                            node: id,
                            whole: bo
                                .map(|o| o.props.get("prompt").copied().unwrap_or(o.id))
                                .or_else(|| Some(cx.node_span(id))),
                            what: "branch prompt",
                            compensation: false,
                            dependencies: super::dag::ancestors(p, b),
                        });
                    }
                }
            }
            Node::Action(a) => {
                writes(cx, schema, &mut marks, id, &a.writes);
                // The result is stored under the node id (docs/language.md, *Action node*).
                if a.actions.iter().any(super::actions::produces_result) {
                    marks.write(schema, id);
                }
                for (k, action) in a.actions.iter().enumerate() {
                    match action {
                        Action::Send { payload, .. } => {
                            let mut strings = Vec::new();
                            for v in payload.values() {
                                json_strings(v, &mut strings);
                            }
                            let whole = cx.list_span(id, |o| &o.actions, k);
                            for text in strings {
                                sites.push(PromptSite {
                                    text,
                                    spans: origin.map(|o| o.placeholders.as_slice()).unwrap_or(&[]),
                                    exact: false,
                                    whole: Some(whole),
                                    node: id,
                                    what: "payload",
                                    compensation: false,
                                    dependencies: Vec::new(),
                                });
                            }
                        }
                        Action::Execute { .. } => opaque_reader = true,
                    }
                }
            }
            Node::Generic(g) => {
                // A generic handler may read any variable (W0308 then keeps quiet about inputs).
                opaque_reader = true;
                let mut strings = Vec::new();
                for v in g.config.values() {
                    json_strings(v, &mut strings);
                }
                for text in strings {
                    for (name, _) in placeholders(text) {
                        marks.read(schema, name);
                    }
                    // A config value naming a variable (`"outputField" to "clean_text"`) is how
                    // stock handlers read and write state: count it as both.
                    if marks.read(schema, text) == Some(true) {
                        marks.write(schema, text);
                    }
                }
            }
            Node::SubWorkflow(s) => sub_workflow(cx, schema, id, origin, s, &mut marks),
            Node::Wait(w) => {
                writes(cx, schema, &mut marks, id, &w.writes);
                if let hensu_ir::WaitFor::Until { template } = &w.wait {
                    sites.push(PromptSite {
                        text: template,
                        spans: origin.map(|o| o.placeholders.as_slice()).unwrap_or(&[]),
                        exact: true,
                        whole: origin.and_then(|o| o.props.get("until").copied()),
                        node: id,
                        what: "until",
                        compensation: false,
                        dependencies: Vec::new(),
                    });
                }
            }
            Node::Map(m) => {
                // docs/language.md, *Map over a list*: `{item}` and `{index}` are the item's.
                writes(cx, schema, &mut marks, id, &m.writes);
                marks.read(schema, &m.over);
                sites.extend(m.prompt.as_deref().map(|text| PromptSite {
                    text,
                    spans: origin.map(|o| o.placeholders.as_slice()).unwrap_or(&[]),
                    exact: true,
                    whole: None,
                    node: id,
                    what: "prompt",
                    compensation: false,
                    dependencies: vec!["item", "index"],
                }));
            }
            Node::Fork(_) | Node::End(_) => {}
        }
        for site in &sites {
            prompt_site(cx, schema, site, &mut marks);
        }
    }

    // Compensation prompts and payloads (docs/language.md, *Saga compensation*).
    for (id, c) in &wf.saga.compensations {
        let origin = cx.origins.compensations.get(id.as_str());
        let spans = origin.map(|o| o.placeholders.as_slice()).unwrap_or(&[]);
        let whole = origin.map_or(cx.fallback(), |o| o.id);
        sites.clear();
        match &c.body {
            CompensationBody::Agent { prompt, .. } => sites.push(PromptSite {
                text: prompt,
                spans,
                exact: true,
                whole: Some(
                    origin
                        .and_then(|o| o.props.get("prompt").copied())
                        .unwrap_or(whole),
                ),
                node: id,
                what: "compensation prompt",
                compensation: true,
                dependencies: Vec::new(),
            }),
            CompensationBody::Actions(actions) => {
                for action in actions {
                    match action {
                        Action::Send { payload, .. } => {
                            let mut strings = Vec::new();
                            for v in payload.values() {
                                json_strings(v, &mut strings);
                            }
                            for text in strings {
                                sites.push(PromptSite {
                                    text,
                                    spans,
                                    exact: false,
                                    whole: Some(whole),
                                    node: id,
                                    what: "payload",
                                    compensation: true,
                                    dependencies: Vec::new(),
                                });
                            }
                        }
                        Action::Execute { .. } => opaque_reader = true,
                    }
                }
            }
        }
        for site in &sites {
            prompt_site(cx, schema, site, &mut marks);
        }
    }

    if let Some(schema) = schema {
        unused::unused_variables(cx, schema, &marks, opaque_reader);
    }
}

/// The `writes` of a standard or action node: marked written (W0308), E0401 / W0310 for an
/// engine variable, E0402 for an undeclared one.
fn writes(
    cx: &mut Ctx<'_>,
    schema: Option<&Schema<'_>>,
    marks: &mut Marks,
    id: &str,
    names: &[String],
) {
    for (i, name) in names.iter().enumerate() {
        let declared = marks.write(schema, name);
        if is_engine_variable(name) {
            let span = cx.list_span(id, |o| &o.writes, i);
            engine_in_writes(cx, id, name, span);
        } else if let (Some(schema), Some(false)) = (schema, declared) {
            let span = cx.list_span(id, |o| &o.writes, i);
            undeclared_write(cx, schema, name, span);
        }
    }
}

/// E0401 / W0310 for an engine variable in a standard or action node's `writes`.
fn engine_in_writes(cx: &mut Ctx<'_>, id: &str, name: &str, span: Span) {
    if cx.input == InputKind::Json {
        let d = Diagnostic::new(
            codes::W0310,
            format!("engine variable `{name}` in the writes of `{id}` is redundant"),
            span,
            "the engine sets this variable itself",
        )
        .with_help(format!("remove `{name}` from `writes`"));
        cx.emit(d);
    } else {
        engine_variable(cx, name, span, "writes", None);
    }
}

/// E0401: an engine variable where only workflow variables may be named.
fn engine_variable(cx: &mut Ctx<'_>, name: &str, span: Span, place: &str, help: Option<&str>) {
    let help = help.map(str::to_string).unwrap_or_else(|| {
        format!("the engine sets `{name}` itself; use another name, e.g. `review_{name}`")
    });
    let d = Diagnostic::new(
        codes::E0401,
        format!("engine variable `{name}` in {place}"),
        span,
        "`score`, `approved` and `recommendation` are reserved for the engine",
    )
    .with_help(help);
    cx.emit(d);
}

/// E0402: a written variable that the schema does not declare.
fn undeclared_write(cx: &mut Ctx<'_>, schema: &Schema<'_>, name: &str, span: Span) {
    let d = Diagnostic::new(
        codes::E0402,
        format!("`{name}` is written but not declared in the state schema"),
        span,
        "not declared in `state { }`",
    );
    let (mut d, suggested) = help_and_fix(d, name, span, schema.names());
    if !suggested {
        d = d.with_help(format!(
            "declare it in `state {{ }}`: `variable(\"{name}\", VarType.STRING)`"
        ));
    }
    cx.emit(d);
}

/// W0319: in a `.json` workflow, a join's `writes` entry the schema does not declare. Upstream
/// validates the writes of standard nodes only and runs such a file, so it loads with a
/// warning; in `.hwf`/`.kt` it is E0402.
fn undeclared_join_write_json(
    cx: &mut Ctx<'_>,
    schema: &Schema<'_>,
    id: &str,
    name: &str,
    span: Span,
) {
    let d = Diagnostic::new(
        codes::W0319,
        format!("join `{id}` writes `{name}`, which the state schema does not declare"),
        span,
        "not declared in `stateSchema`",
    )
    .with_note(
        "the upstream engine accepts this in a JSON workflow; a `.hwf` source is rejected (E0402)",
    );
    let (mut d, suggested) = help_and_fix(d, name, span, schema.names());
    if !suggested {
        d = d.with_help(format!("declare `{name}` in `stateSchema.variables`"));
    }
    cx.emit(d);
}

/// E0403 for one prompt / payload text, and the placeholder reads for W0308.
fn prompt_site(
    cx: &mut Ctx<'_>,
    schema: Option<&Schema<'_>>,
    site: &PromptSite<'_>,
    marks: &mut Marks,
) {
    let mut reported: HashSet<&str> = HashSet::default();
    if site.exact && !site.spans.is_empty() {
        for (name, _) in site.spans {
            prompt_placeholder(cx, schema, site, marks, &mut reported, name);
        }
    } else {
        for (name, _) in placeholders(site.text) {
            prompt_placeholder(cx, schema, site, marks, &mut reported, name);
        }
    }
}

/// E0403 for one placeholder `name` of a prompt site (once per name), and its read for W0308.
fn prompt_placeholder<'a>(
    cx: &mut Ctx<'_>,
    schema: Option<&Schema<'_>>,
    site: &PromptSite<'a>,
    marks: &mut Marks,
    reported: &mut HashSet<&'a str>,
    name: &'a str,
) {
    if site.compensation && matches!(name, COMPENSATING | COMPENSATING_OUTPUT) {
        return;
    }
    if site.dependencies.contains(&name) {
        return;
    }
    let declared = marks.read(schema, name);
    let Some(schema) = schema else { return };
    if declared == Some(true) || is_engine_variable(name) || !reported.insert(name) {
        return;
    }
    let span = site
        .spans
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| *s)
        .or(site.whole)
        .unwrap_or_else(|| cx.prop_span(site.node, "prompt"));
    let d = Diagnostic::new(
        codes::E0403,
        format!(
            "placeholder `{{{name}}}` in a {} names no declared variable",
            site.what
        ),
        span,
        "not declared in `state { }`",
    );
    let (mut d, suggested) = help_and_fix(d, name, span, schema.names());
    if !suggested {
        d = d.with_help(format!(
            "declare it in `state {{ }}`, e.g. `variable(\"{name}\", VarType.STRING)`"
        ));
    }
    cx.emit(d);
}

/// E0401 (engine variable), E0404 (not in writes) and E0405 (operand type) for the
/// `onCondition` arms of a standard node.
fn conditions(
    cx: &mut Ctx<'_>,
    schema: Option<&Schema<'_>>,
    id: &str,
    writes: &[String],
    rules: &[TransitionRule],
    marks: &mut Marks,
) {
    let mut reported: Vec<&str> = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        let TransitionRule::Condition {
            variable,
            predicate,
            ..
        } = rule.trigger_rule()
        else {
            continue;
        };
        marks.read(schema, variable);
        let first = !reported.contains(&variable.as_str());
        if first {
            reported.push(variable);
        }
        if is_engine_variable(variable) {
            if first {
                engine_variable(
                    cx,
                    variable,
                    cx.variable_span(id, r),
                    "onCondition",
                    Some("use onApproval/onRejection for `approved` and onScore for `score`"),
                );
            }
            continue;
        }
        if first && !writes.iter().any(|w| w == variable) {
            let span = cx.variable_span(id, r);
            let d = Diagnostic::new(
                codes::E0404,
                format!("node `{id}` routes on `{variable}` but does not write it"),
                span,
                "not in this node's `writes`",
            );
            // A misspelling of a variable the node writes (or the schema declares) is the
            // likelier mistake than a missing `writes`.
            let candidates = writes
                .iter()
                .map(String::as_str)
                .chain(schema.into_iter().flat_map(Schema::names));
            let (mut d, suggested) = help_and_fix(d, variable, span, candidates);
            if !suggested {
                d = d.with_help(format!(
                    "add `writes(\"{variable}\")` so the agent is asked to produce it"
                ));
            }
            cx.emit(d);
        }
        let declared = schema
            .and_then(|s| s.variable(variable))
            .map(|v| v.var_type);
        if let Some(ty) = declared {
            operand_type(cx, id, r, variable, ty, predicate);
        }
    }
}

/// E0405: the operand of a condition arm does not fit the variable's declared type.
fn operand_type(
    cx: &mut Ctx<'_>,
    id: &str,
    r: usize,
    variable: &str,
    ty: VarType,
    predicate: &ConditionPredicate,
) {
    let problem = match (predicate, ty) {
        (p, VarType::String | VarType::Boolean | VarType::ListString)
            if p.numeric_operand().is_some() =>
        {
            Some((
                format!("numeric comparison on {ty} variable `{variable}`"),
                "`greaterThan`/`lessThan`… need a NUMBER variable".to_string(),
            ))
        }
        (ConditionPredicate::Eq(v) | ConditionPredicate::Neq(v), VarType::Number)
            if parse_number(v).is_none() =>
        {
            Some((
                format!("NUMBER variable `{variable}` compared with \"{v}\""),
                "compare with a number, e.g. `equalTo 3`".to_string(),
            ))
        }
        (ConditionPredicate::Eq(v) | ConditionPredicate::Neq(v), VarType::Boolean)
            if v != "true" && v != "false" =>
        {
            Some((
                format!("BOOLEAN variable `{variable}` compared with \"{v}\""),
                "compare with `true` or `false`".to_string(),
            ))
        }
        _ => None,
    };
    if let Some((message, help)) = problem {
        let mut d = Diagnostic::new(
            codes::E0405,
            message,
            cx.operand_span(id, r),
            format!("does not fit the declared type {ty}"),
        )
        .with_help(help);
        if let Some(vt) = cx.origins.variables.get(variable).and_then(|v| v.var_type) {
            d = d.with_label(vt, "declared type");
        }
        cx.emit(d);
    }
}

/// E0401 / E0406 for a sub-workflow node's imports and writes.
fn sub_workflow(
    cx: &mut Ctx<'_>,
    schema: Option<&Schema<'_>>,
    id: &str,
    origin: Option<&NodeOrigin>,
    s: &hensu_ir::SubWorkflowNode,
    marks: &mut Marks,
) {
    let spans = |list: Option<&Vec<Span>>, n: usize| -> Vec<Span> {
        (0..n)
            .map(|i| {
                list.and_then(|l| l.get(i).copied())
                    .unwrap_or_else(|| cx.node_span(id))
            })
            .collect()
    };
    let import_spans = spans(origin.map(|o| &o.imports), s.input_mapping.len());
    let write_spans = spans(origin.map(|o| &o.writes), s.output_mapping.len());
    let import_span = |i: usize| import_spans.get(i).copied().unwrap_or_default();
    let write_span = |i: usize| write_spans.get(i).copied().unwrap_or_default();
    // Names written twice in one `imports(…)`/`writes(…)` call (the IR mapping keeps one).
    for (kind, name, span) in origin.map(|o| o.repeated_names.as_slice()).unwrap_or(&[]) {
        let first = match kind.as_str() {
            "imports" => s.input_mapping.get_index_of(name).map(import_span),
            _ => s.output_mapping.get_index_of(name).map(write_span),
        };
        let mut d = Diagnostic::new(
            codes::E0406,
            format!("`{name}` is listed twice in `{kind}`"),
            *span,
            "listed again here",
        )
        .with_help("remove the duplicate");
        if let Some(first) = first {
            d = d.with_label(first, "first listed here");
        }
        cx.emit(d);
    }
    // Parent-side names: imports read `input_mapping` values, writes set `output_mapping` keys.
    let mut imported: HashMap<&str, usize> = HashMap::default();
    for (i, (child, parent)) in s.input_mapping.iter().enumerate() {
        let declared = marks.read(schema, parent);
        let span = import_span(i);
        let engine = [parent.as_str(), child.as_str()]
            .into_iter()
            .find(|n| is_engine_variable(n));
        if let Some(name) = engine {
            engine_variable(cx, name, span, "sub-workflow imports", None);
            continue;
        }
        if let Some(&first) = imported.get(parent.as_str()) {
            let d = Diagnostic::new(
                codes::E0406,
                format!("`{parent}` is imported twice"),
                span,
                "imported again here",
            )
            .with_label(import_span(first), "first imported here")
            .with_help("remove the duplicate");
            cx.emit(d);
            continue;
        }
        imported.insert(parent, i);
        if let (Some(schema), Some(false)) = (schema, declared) {
            not_in_parent(cx, schema, parent, span, "imports");
        }
    }
    let mut children: HashMap<&str, usize> = HashMap::default();
    for (i, (parent, child)) in s.output_mapping.iter().enumerate() {
        let declared = marks.write(schema, parent);
        let span = write_span(i);
        let engine = [parent.as_str(), child.as_str()]
            .into_iter()
            .find(|n| is_engine_variable(n));
        if let Some(name) = engine {
            engine_variable(cx, name, span, "sub-workflow writes", None);
            continue;
        }
        if let Some(&first) = children.get(child.as_str()) {
            let d = Diagnostic::new(
                codes::E0406,
                format!("`{child}` is written back twice"),
                span,
                "written again here",
            )
            .with_label(write_span(first), "first written here")
            .with_help("remove the duplicate");
            cx.emit(d);
            continue;
        }
        children.insert(child, i);
        if let Some(&imp) = imported.get(parent.as_str()) {
            let d = Diagnostic::new(
                codes::E0406,
                format!("`{parent}` is both imported and written by sub-workflow `{id}`"),
                span,
                "written here",
            )
            .with_label(import_span(imp), "imported here")
            .with_help("imports and writes must not overlap; keep one of them");
            cx.emit(d);
            continue;
        }
        if let (Some(schema), Some(false)) = (schema, declared) {
            not_in_parent(cx, schema, parent, span, "writes");
        }
    }
}

/// E0406 (W0320 in a `.json` workflow, which upstream runs) for a parent-side mapping name the
/// state schema does not declare.
fn not_in_parent(cx: &mut Ctx<'_>, schema: &Schema<'_>, name: &str, span: Span, what: &str) {
    let json = cx.input == InputKind::Json;
    let d = if json {
        let field = if what == "imports" {
            "inputMapping"
        } else {
            "outputMapping"
        };
        Diagnostic::new(
            codes::W0320,
            format!("sub-workflow `{field}` names parent variable `{name}`, which the state schema does not declare"),
            span,
            "not declared in `stateSchema`",
        )
        .with_note("the upstream engine accepts this in a JSON workflow; a `.hwf` source is rejected (E0406)")
    } else {
        Diagnostic::new(
            codes::E0406,
            format!("sub-workflow {what} `{name}`, which the state schema does not declare"),
            span,
            "not declared in `state { }`",
        )
    };
    let (mut d, suggested) = help_and_fix(d, name, span, schema.names());
    if !suggested {
        d = d.with_help(if json {
            format!("declare `{name}` in `stateSchema.variables`")
        } else {
            format!("declare it in `state {{ }}`: `variable(\"{name}\", VarType.STRING)`")
        });
    }
    cx.emit(d);
}
