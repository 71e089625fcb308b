//! The file wrapper (`fun x() = workflow(…) { … }`, `package`, `import`), the workflow body and
//! its `state`, `agents` and `config` blocks.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{
    AgentConfig, DEFAULT_VERSION, LogLevel, Metadata, StateSchema, StateVariable, VarType,
    Workflow, WorkflowConfig, workflow_id_from_name,
};
use hensu_syntax::ast::{Block, Call, Expr, ExprKind, FunBody, SourceFile, Stmt, StmtKind};
use indexmap::IndexMap;

use super::values::Quoted;
use super::{BlockStmts, Lowerer, Seen, Shape};
use crate::origins::{AgentOrigin, VariableOrigin};
use crate::schema::{BlockKind, EnumType, StatementKind};

impl Lowerer<'_> {
    /// The whole file: finds the one `workflow(…)` call (E0014) and lowers it.
    pub(crate) fn file<'s>(
        &mut self,
        file: &SourceFile<'s>,
        detached: &mut super::Detached<'s>,
    ) -> Option<Workflow> {
        let mut calls: Vec<(&Call<'_>, Span)> = Vec::new();
        for item in &file.items {
            match &item.kind {
                StmtKind::Package(_) => {
                    let d =
                        Diagnostic::new(codes::W0001, "`package` is ignored", item.span, "ignored")
                            .with_help(
                                "hensu workflow files have no packages; the line can be removed",
                            );
                    self.emit(d);
                }
                StmtKind::Import { .. } => {
                    let d =
                        Diagnostic::new(codes::W0001, "`import` is ignored", item.span, "ignored")
                            .with_help(
                                "the workflow DSL is always in scope; the line can be removed",
                            );
                    self.emit(d);
                }
                StmtKind::Fun { body, .. } => match body {
                    FunBody::Expr(e) => self.collect_workflow(e, &mut calls),
                    FunBody::Block(b) => {
                        for s in &b.stmts {
                            match &s.kind {
                                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => {
                                    self.collect_workflow(e, &mut calls)
                                }
                                StmtKind::Error => {}
                                _ => {
                                    let d = Diagnostic::new(
                                        codes::E0101,
                                        "only `workflow(…) { … }` is allowed in the wrapper function",
                                        s.span,
                                        "not supported here",
                                    )
                                    .with_help("write `fun name() = workflow(\"name\") { … }`");
                                    self.emit(d);
                                }
                            }
                        }
                    }
                },
                StmtKind::Expr(e) => self.collect_workflow(e, &mut calls),
                StmtKind::Error => {}
                StmtKind::Assign { .. } | StmtKind::Return(_) => {
                    let d = Diagnostic::new(
                        codes::E0101,
                        "only `workflow(…) { … }` is allowed at the top level",
                        item.span,
                        "not supported here",
                    )
                    .with_help("a file holds one `workflow(\"name\") { … }` (optionally wrapped in `fun name() = …`)");
                    self.emit(d);
                }
            }
        }
        let Some(&(first, _)) = calls.first() else {
            let span = Span::new(file.span.start, file.span.start);
            let d = Diagnostic::new(
                codes::E0014,
                "no `workflow(…)` in this file",
                span,
                "expected a workflow",
            )
            .with_help("a workflow file contains `workflow(\"name\") { graph { … } }`");
            self.emit(d);
            return None;
        };
        let first_span = calls[0].1;
        for &(call, _) in &calls[1..] {
            let d = Diagnostic::new(
                codes::E0014,
                "more than one `workflow(…)` in this file",
                call.callee.span,
                "another workflow",
            )
            .with_label(
                first.callee.span,
                "the first workflow, the only one compiled",
            )
            .with_help("put each workflow in its own file; sub-workflows are referenced by id");
            self.emit(d);
        }
        self.workflow(first, first_span, detached)
    }

    fn collect_workflow<'t, 's>(&mut self, e: &'t Expr<'s>, calls: &mut Vec<(&'t Call<'s>, Span)>) {
        match &e.kind {
            ExprKind::Call(c) if c.callee.name == "workflow" => calls.push((c, e.span)),
            ExprKind::Error => {}
            _ => {
                let d = Diagnostic::new(codes::E0101, "expected `workflow(…) { … }`", e.span, "not a workflow")
                    .with_help("a file holds one `workflow(\"name\") { … }` (optionally wrapped in `fun name() = …`)");
                self.emit(d);
            }
        }
    }

    fn workflow<'s>(
        &mut self,
        call: &Call<'s>,
        span: Span,
        detached: &mut super::Detached<'s>,
    ) -> Option<Workflow> {
        self.origins.fallback = call.callee.span;
        let mut name = String::new();
        if let Some(args) = self.call_args(call, 1, Some(1), "workflow(\"name\") { … }")
            && let Some(e) = args.first()
        {
            if let Some(n) = self.string(e, &"`workflow`") {
                let id = workflow_id_from_name(&n);
                if !super::is_valid_identifier(&id) {
                    self.check_identifier(&id, e.span, &"workflow id");
                    if let Some(d) = self.diags.last_mut() {
                        d.notes.push(format!(
                                "the id is derived from the name `{n}`: spaces become `_`, characters outside `[A-Za-z0-9_-]` are dropped, letters are lowercased"
                            ));
                    }
                }
                name = n;
            }
            self.origins.workflow = Some(e.span);
        }
        let Some(body) = &call.block else {
            let d = Diagnostic::new(
                codes::E0106,
                "the workflow has no body",
                span,
                "missing `{ graph { … } }`",
            )
            .with_help("write `workflow(\"name\") { graph { start at \"a\"; … } }`");
            self.emit(d);
            return None;
        };
        let mut description: Option<String> = None;
        let mut version = DEFAULT_VERSION.to_string();
        let mut state: Option<StateSchema> = None;
        let mut agents: IndexMap<String, AgentConfig> = IndexMap::new();
        let mut config: Option<WorkflowConfig> = None;
        let mut graph: Option<super::nodes::Graph> = None;
        let mut graph_kw: Option<Span> = None;
        let mut seen = Seen::new();
        // An extending workflow may leave the graph and its `start at` to the base.
        let mut extends_given = false;
        for stmt in &body.stmts {
            let Some((spec, shape)) = self.accept(BlockKind::Workflow, stmt, &mut seen) else {
                continue;
            };
            match (spec.name, shape) {
                ("extends", Shape::Call(c)) => {
                    if let Some(args) =
                        self.call_args(c, 1, Some(1), "extends(\"base-workflow-id\")")
                        && let Some(e) = args.first()
                        && let Some(base) = self.string(e, &"`extends`")
                    {
                        self.extension.base = Some((base, e.span));
                    }
                    extends_given = true;
                }
                ("description", Shape::Assign { value, .. }) => {
                    if let Ok(v) = self.opt_string(value, &"`description`") {
                        description = v;
                    }
                }
                ("version", Shape::Assign { value, .. }) => {
                    if let Some(v) = self.string(value, &"`version`") {
                        version = v;
                        self.origins.version = Some(value.span);
                    }
                }
                ("state", Shape::Call(c)) => {
                    self.origins.state = Some(stmt.span);
                    self.origins.variables.clear();
                    state = Some(self.state(c.block.as_deref(), detached));
                }
                ("agents", Shape::Call(c)) => {
                    if let Some(b) = &c.block {
                        self.agents(b, &mut agents);
                    }
                }
                ("config", Shape::Call(c)) => {
                    self.origins.config.clear();
                    config = Some(self.config(c.block.as_deref()));
                }
                ("graph", Shape::Call(c)) => {
                    self.origins.graph = Some(stmt.span);
                    graph_kw = Some(c.callee.span);
                    self.origins.nodes.clear();
                    self.origins.compensations.clear();
                    self.origins.start = None;
                    graph = Some(self.graph(c.block.as_deref(), detached));
                }
                _ => {}
            }
        }
        if !extends_given {
            self.routes_without_extends();
        }
        let graph = match graph {
            None if extends_given => Some(super::nodes::Graph::default()),
            graph => graph,
        };
        let Some(graph) = graph else {
            let d = Diagnostic::new(
                codes::E0106,
                "the workflow has no `graph { }`",
                call.callee.span,
                "this workflow has no graph",
            )
            .with_help("add `graph { start at \"first\"; node(\"first\") { … } }`");
            self.emit(d);
            return None;
        };
        let start_node = match graph.start {
            Some(s) => s,
            None if extends_given => String::new(),
            None => {
                let span = graph_kw.unwrap_or(call.callee.span);
                let d = Diagnostic::new(
                    codes::E0106,
                    "the graph has no `start at`",
                    span,
                    "no start node",
                )
                .with_help("add `start at \"node\"` to the graph");
                self.emit(d);
                String::new()
            }
        };
        Some(Workflow {
            id: workflow_id_from_name(&name),
            version,
            metadata: Metadata {
                name,
                description,
                author: None,
                created: None,
                tags: Vec::new(),
            },
            agents,
            nodes: graph.nodes,
            start_node,
            config,
            state_schema: state,
            saga: graph.saga,
            timing: graph.timing,
        })
    }

    fn state<'s>(
        &mut self,
        block: Option<&Block<'s>>,
        detached: &mut super::Detached<'s>,
    ) -> StateSchema {
        let mut schema = StateSchema::default();
        let Some(block) = block else { return schema };
        // Taken out of the tree by `lower_owned`: each statement is dropped once lowered, so a
        // large state block's tree is gone before the graph's IR grows.
        // Deferred by the parser: parsed one statement at a time from the file's tokens.
        let owned = super::take_detached(detached, block.span);
        let count = match &owned {
            Some(BlockStmts::Owned(stmts)) => stmts.len(),
            Some(BlockStmts::Deferred { graph, .. }) => graph.stmts.len(),
            None => block.stmts.len(),
        };
        schema.variables.reserve_exact(count);
        self.origins.variables.reserve_exact(count);
        let mut seen = Seen::new();
        match owned {
            Some(BlockStmts::Owned(stmts)) => {
                for stmt in stmts {
                    self.state_stmt(&mut schema, &mut seen, &stmt);
                }
            }
            Some(BlockStmts::Deferred { src, graph }) => {
                self.each_deferred(src, graph, |l, stmt| {
                    l.state_stmt(&mut schema, &mut seen, stmt);
                });
            }
            None => {
                for stmt in &block.stmts {
                    self.state_stmt(&mut schema, &mut seen, stmt);
                }
            }
        }
        schema
    }

    fn state_stmt(&mut self, schema: &mut StateSchema, seen: &mut Seen, stmt: &Stmt<'_>) {
        let Some((spec, Shape::Call(c))) = self.accept(BlockKind::State, stmt, seen) else {
            return;
        };
        let StatementKind::Call { min, max } = spec.kind else {
            return;
        };
        let Some(args) = self.call_args(c, min, max, spec.syntax) else {
            return;
        };
        let (Some(name_e), Some(type_e)) = (args.first(), args.get(1)) else {
            return;
        };
        let Some((name, name_span)) = self.id_arg(name_e, &"variable name") else {
            return;
        };
        let var_type = self
            .enum_constant(type_e, EnumType::VarType, &"the variable type")
            .and_then(VarType::parse)
            .unwrap_or(VarType::String);
        let description = match args.get(2) {
            Some(e) => self
                .opt_string(e, &"the variable description")
                .ok()
                .flatten(),
            None => None,
        };
        if let Some(first) = self.origins.variables.get(&name) {
            let d = Diagnostic::new(
                codes::E0203,
                format!("state variable `{name}` is declared twice"),
                name_span,
                "declared again here",
            )
            .with_label(first.name, "first declared here")
            .with_help("remove or rename one declaration; the first one is kept");
            self.emit(d);
            return;
        }
        self.origins.variables.insert(
            name.clone(),
            VariableOrigin {
                name: name_span,
                decl: stmt.span,
                var_type: Some(type_e.span),
            },
        );
        schema.variables.push(StateVariable {
            name,
            var_type,
            is_input: spec.name == "input",
            description,
        });
    }

    fn agents(&mut self, block: &Block<'_>, agents: &mut IndexMap<String, AgentConfig>) {
        let mut seen = Seen::new();
        for stmt in &block.stmts {
            let Some((spec, Shape::Call(c))) = self.accept(BlockKind::Agents, stmt, &mut seen)
            else {
                continue;
            };
            let Some(args) = self.call_args(c, 1, Some(1), spec.syntax) else {
                continue;
            };
            let Some(id_e) = args.first() else { continue };
            let Some((id, id_span)) = self.id_arg(id_e, &"agent id") else {
                continue;
            };
            let (agent, origin) = self.agent(&id, id_span, stmt.span, c.block.as_deref());
            if let Some(first) = self.origins.agents.get(&id) {
                let d = Diagnostic::new(
                    codes::E0202,
                    format!("agent `{id}` is defined twice"),
                    id_span,
                    "defined again here",
                )
                .with_label(first.id, "first defined here")
                .with_help("rename one of them; hensu keeps the first definition (upstream silently replaced it with the last)");
                self.emit(d);
                continue;
            }
            self.origins.agents.insert(id.clone(), origin);
            agents.insert(id, agent);
        }
    }

    fn agent(
        &mut self,
        id: &str,
        id_span: Span,
        decl: Span,
        block: Option<&Block<'_>>,
    ) -> (AgentConfig, AgentOrigin) {
        let mut agent = AgentConfig::new(id, "", "");
        let mut origin = AgentOrigin {
            id: id_span,
            decl,
            props: IndexMap::new(),
            tools: Vec::new(),
        };
        let mut seen = Seen::new();
        let mut invalid: Vec<&str> = Vec::new();
        for stmt in block.map(|b| b.stmts.as_slice()).unwrap_or(&[]) {
            let Some((spec, Shape::Assign { value, .. })) =
                self.accept(BlockKind::Agent, stmt, &mut seen)
            else {
                continue;
            };
            let what = Quoted(spec.name);
            let null = matches!(value.kind, ExprKind::Null);
            origin.props.insert(spec.name, value.span);
            match spec.name {
                "role" => match self.string(value, &what) {
                    Some(v) => agent.role = v,
                    None => invalid.push("role"),
                },
                "model" => match self.model(value, &what) {
                    Some(v) => agent.model = v,
                    None => invalid.push("model"),
                },
                "temperature" => {
                    if let Some(v) = self.double(value, &what) {
                        if !(0.0..=2.0).contains(&v) {
                            self.out_of_range(
                                value.span,
                                format!(
                                    "temperature {} is out of range",
                                    hensu_ir::java_double_to_string(v)
                                ),
                                "must be between 0 and 2",
                            );
                        }
                        agent.temperature = v;
                    }
                }
                "maxTokens" if null => agent.max_tokens = None,
                "maxTokens" => agent.max_tokens = self.int(value, &what).or(agent.max_tokens),
                "tools" => {
                    if let Some(v) = self.string_list(value, &what) {
                        origin.tools = v.iter().map(|(_, span)| *span).collect();
                        agent.tools = v.into_iter().map(|(s, _)| s).collect();
                    }
                }
                "maintainContext" => {
                    if let Some(v) = self.boolean(value, &what) {
                        agent.maintain_context = v;
                    }
                }
                "instructions" => {
                    if let Ok(v) = self.opt_string(value, &what) {
                        agent.instructions = v;
                    }
                }
                "topP" if null => agent.top_p = None,
                "topP" => {
                    if let Some(v) = self.double(value, &what) {
                        if !(0.0..=1.0).contains(&v) {
                            self.out_of_range(
                                value.span,
                                format!(
                                    "topP {} is out of range",
                                    hensu_ir::java_double_to_string(v)
                                ),
                                "must be between 0 and 1",
                            );
                        }
                        agent.top_p = Some(v);
                    }
                }
                "frequencyPenalty" if null => agent.frequency_penalty = None,
                "frequencyPenalty" => {
                    agent.frequency_penalty = self.double(value, &what).or(agent.frequency_penalty)
                }
                "presencePenalty" if null => agent.presence_penalty = None,
                "presencePenalty" => {
                    agent.presence_penalty = self.double(value, &what).or(agent.presence_penalty)
                }
                "timeout" if null => agent.timeout = None,
                "timeout" => {
                    if let Some(v) = self.long(value, &what) {
                        if v < 0 {
                            self.out_of_range(
                                value.span,
                                format!("timeout {v} is negative"),
                                "must be 0 or more",
                            );
                        }
                        agent.timeout = Some(v);
                    }
                }
                "maxToolCalls" if null => agent.max_tool_calls = None,
                "maxToolCalls" => {
                    agent.max_tool_calls = self.int(value, &what).or(agent.max_tool_calls)
                }
                _ => {}
            }
        }
        for (prop, filled) in [
            ("role", !agent.role.trim().is_empty()),
            ("model", !agent.model.trim().is_empty()),
        ] {
            if filled || invalid.contains(&prop) {
                continue;
            }
            let given = origin.props.get(prop).copied();
            let (msg, span, label) = match given {
                Some(s) => (format!("agent `{id}` has a blank `{prop}`"), s, "blank"),
                None => (
                    format!("agent `{id}` has no `{prop}`"),
                    id_span,
                    "declared here",
                ),
            };
            let help = if prop == "role" {
                "add `role = \"…\"` (the agent's system role)"
            } else {
                "add `model = Models.GPT_4O` or any model id string"
            };
            self.emit(Diagnostic::new(codes::E0105, msg, span, label).with_help(help));
        }
        (agent, origin)
    }

    fn config(&mut self, block: Option<&Block<'_>>) -> WorkflowConfig {
        let mut config = WorkflowConfig::default();
        let Some(block) = block else { return config };
        let mut seen = Seen::new();
        for stmt in &block.stmts {
            let Some((spec, shape)) = self.accept(BlockKind::Config, stmt, &mut seen) else {
                continue;
            };
            match (spec.name, shape) {
                ("maxSteps", Shape::Assign { value, .. }) => {
                    self.origins
                        .config
                        .insert("maxSteps".to_string(), value.span);
                    if let Some(v) = self.int(value, &"`maxSteps`") {
                        if v < 1 {
                            self.out_of_range(
                                value.span,
                                format!("maxSteps {v} is out of range"),
                                "must be 1 or more",
                            );
                        }
                        config.max_steps = v;
                    }
                }
                ("maxExecutionTime", Shape::Assign { value, .. }) => {
                    self.origins
                        .config
                        .insert("maxExecutionTime".to_string(), value.span);
                    if let Some(v) = self.long(value, &"`maxExecutionTime`") {
                        if v < 0 {
                            self.out_of_range(
                                value.span,
                                format!("maxExecutionTime {v} is negative"),
                                "must be 0 or more milliseconds",
                            );
                        }
                        config.max_execution_time = v;
                    }
                }
                ("checkpoints", Shape::Assign { value, .. }) => {
                    self.origins
                        .config
                        .insert("checkpoints".to_string(), value.span);
                    if let Some(v) = self.boolean(value, &"`checkpoints`") {
                        config.checkpoints = v;
                    }
                }
                ("observability", Shape::Call(c)) => {
                    self.origins
                        .config
                        .insert("observability".to_string(), stmt.span);
                    let mut seen = Seen::new();
                    for s in c
                        .block
                        .as_deref()
                        .map(|b| b.stmts.as_slice())
                        .unwrap_or(&[])
                    {
                        let Some((spec, Shape::Assign { value, .. })) =
                            self.accept(BlockKind::Observability, s, &mut seen)
                        else {
                            continue;
                        };
                        self.origins
                            .config
                            .insert(spec.name.to_string(), value.span);
                        match spec.name {
                            "logLevel" => {
                                if let Some(l) = self
                                    .enum_constant(value, EnumType::LogLevel, &"`logLevel`")
                                    .and_then(LogLevel::parse)
                                {
                                    config.observability.log_level = l;
                                }
                            }
                            "exportMetrics" => {
                                if let Some(v) = self.boolean(value, &"`exportMetrics`") {
                                    config.observability.export_metrics = v;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        config
    }
}
