//! The test file format, `tests/<name>.test.toml` (docs/testing.md), and its validation against
//! the project: an unknown workflow or node is a diagnostic with a span in the test file.

use std::collections::BTreeMap;

use hensu_diagnostics::{Applicability, Diagnostic, FileId, Span, codes};
use hensu_ir::Workflow;
use serde::Deserialize;
use toml::Spanned;

/// One test file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    /// Workflow id (`workflow("id")`) or file name (`content-pipeline.hwf`) under `workflows/`.
    pub workflow: Spanned<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Stub scenario (`stubs/<scenario>/`); `default` when absent.
    #[serde(default)]
    pub scenario: Option<String>,
    /// The initial context (`-c`).
    #[serde(default)]
    pub context: BTreeMap<String, serde_json::Value>,
    /// Inline stub outputs by node or agent id; found before the stub files.
    #[serde(default)]
    pub stubs: BTreeMap<Spanned<String>, String>,
    /// Scripted review decisions; a review with no matching entry is approved.
    #[serde(default)]
    pub reviews: Vec<ReviewScript>,
    /// The instant the test's virtual clock starts at (RFC 3339; default
    /// `2026-01-01T00:00:00Z`): `wait` and `awaitSignal` nodes move it, nothing sleeps
    /// (docs/testing.md, *Waits and signals*).
    #[serde(default)]
    pub start: Option<String>,
    /// Signals sent to the run on the virtual clock.
    #[serde(default)]
    pub signals: Vec<SignalScript>,
    /// Tools the stub agent of a node (or agent) calls before it answers, in order.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallScript>,
    /// What the tool calls return, by tool name and call order.
    #[serde(default)]
    pub tool_results: Vec<ToolResultScript>,
    #[serde(default)]
    pub expect: Expect,
    /// Compare the trace with `tests/snapshots/<name>.trace` (written by `--update`).
    #[serde(default = "yes")]
    pub snapshot: bool,
}

fn yes() -> bool {
    true
}

/// `[[reviews]]`: the decision for the `visit`-th review of `node` (every visit when absent),
/// in fork branch `branch` (any when absent).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewScript {
    pub node: Spanned<String>,
    /// Only the review in the branch of this fork target (docs/testing.md).
    #[serde(default)]
    pub branch: Option<Spanned<String>>,
    #[serde(default)]
    pub visit: Option<Spanned<u32>>,
    pub decision: Decision,
    /// The reason of a rejection or backtrack (it becomes `recommendation`).
    #[serde(default)]
    pub feedback: Option<String>,
    /// The node a backtrack goes to.
    #[serde(default)]
    pub target: Option<Spanned<String>>,
    /// Context values an approval or backtrack merges in.
    #[serde(default)]
    pub edits: Option<BTreeMap<String, serde_json::Value>>,
    /// The decision is on the calls of this gated tool by the node's agent (docs/mcp.md,
    /// *Tool approval*): `approve` or `reject`.
    #[serde(default)]
    pub tool: Option<Spanned<String>>,
    /// A tool approval's edited arguments (the call runs with them).
    #[serde(default)]
    pub arguments: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `[[signals]]`: signal `name` with `payload`, sent `after` the clock's start (`90s`, `10m`,
/// `2h`, `1d`, `500ms`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalScript {
    pub name: Spanned<String>,
    #[serde(default)]
    pub after: Option<String>,
    #[serde(default)]
    pub payload: serde_json::Value,
}

/// `500ms`, `90s`, `10m`, `2h`, `1d` (a bare number is seconds) in milliseconds.
pub fn virtual_duration_ms(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 90s, 10m, 2h)"))?;
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (ms, s, m, h or d)")),
    };
    Ok(n.saturating_mul(unit_ms))
}

/// `[[tool_calls]]`: the stub agent of `node` (a node or agent id) calls `tool` (in file
/// order, before it answers).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallScript {
    pub node: Spanned<String>,
    pub tool: String,
    /// The call's arguments (a table; `{}` when absent), what an approval shows.
    #[serde(default)]
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

/// `[[tool_results]]`: what the `call`-th call of `tool` in the run returns (every call when
/// absent); `error = true` makes it a tool error with `result` as its message.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResultScript {
    pub tool: String,
    #[serde(default)]
    pub call: Option<Spanned<u32>>,
    pub result: String,
    #[serde(default)]
    pub error: bool,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Approve,
    Reject,
    Backtrack,
}

/// `[expect]`: every present key must hold.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The end node reached.
    #[serde(default)]
    pub end: Option<Spanned<String>>,
    /// `SUCCESS`, `FAILURE`, `CANCEL` (end node status), `REJECTED`, `FAILED` or `PAUSED`.
    #[serde(default)]
    pub status: Option<Spanned<String>>,
    /// The exact path (executed nodes, then the end node).
    #[serde(default)]
    pub path: Option<Vec<Spanned<String>>>,
    /// Nodes that appear in this order in the path, others in between allowed.
    #[serde(default)]
    pub path_contains: Option<Vec<Spanned<String>>>,
    /// Executions per node.
    #[serde(default)]
    pub visits: BTreeMap<Spanned<String>, u64>,
    #[serde(default)]
    pub steps: Option<u64>,
    /// How far the virtual clock moved (`2h`, `90s`): the time the run's waits took.
    #[serde(default)]
    pub elapsed: Option<String>,
    /// Context values at the end: `key = { equals = …, contains = "…", matches = "regex" }`.
    #[serde(default)]
    pub outputs: BTreeMap<String, OutputExpect>,
    /// Events that occur in this order (others in between allowed); each field given must equal
    /// the event's JSON field.
    #[serde(default)]
    pub events: Vec<BTreeMap<String, serde_json::Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputExpect {
    #[serde(default)]
    pub equals: Option<serde_json::Value>,
    #[serde(default)]
    pub contains: Option<String>,
    #[serde(default)]
    pub matches: Option<Spanned<String>>,
    /// `false`: the key must be absent.
    #[serde(default)]
    pub present: Option<bool>,
}

pub const STATUSES: [&str; 6] = [
    "SUCCESS", "FAILURE", "CANCEL", "REJECTED", "FAILED", "PAUSED",
];

/// E0905 for a `[[signals]]` entry no `awaitSignal` of the workflow (or of a workflow it runs as
/// a child) waits for: the test would pass without it ever being delivered.
fn unwaited_signals(
    spec: &TestSpec,
    wf: &Workflow,
    workflows: &[(String, Workflow)],
    file: FileId,
) -> Vec<Diagnostic> {
    if spec.signals.is_empty() {
        return Vec::new();
    }
    let mut names = std::collections::BTreeSet::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec![wf];
    while let Some(w) = todo.pop() {
        if !seen.insert(w.id.as_str()) {
            continue;
        }
        for node in w.nodes.values() {
            if let hensu_ir::Node::Wait(n) = node
                && let Some(name) = n.signal()
            {
                names.insert(name);
            }
            if let Some(child) = node.called_workflow()
                && let Some((_, c)) = workflows.iter().find(|(_, c)| c.id == child)
            {
                todo.push(c);
            }
        }
    }
    let mut out = Vec::new();
    for s in &spec.signals {
        let name = s.name.get_ref();
        if names.contains(name.as_str()) {
            continue;
        }
        let mut d = Diagnostic::new(
            codes::E0905,
            format!("no node of workflow `{}` waits for signal `{name}`", wf.id),
            span_of(&s.name),
            "never delivered",
        )
        .in_file(file);
        if let Some(n) = hensu_sema::did_you_mean(name, names.iter().copied()) {
            d = suggest(d, span_of(&s.name), n);
        } else if names.is_empty() {
            d = d.with_help("the workflow has no `awaitSignal` node; remove the entry");
        }
        out.push(d);
    }
    out
}

/// E0905 for a `[[reviews]] tool = "…"` no agent of the workflow declares and no
/// `[[tool_calls]]` entry calls: the decision would never be asked for.
fn unused_tool_decisions(spec: &TestSpec, wf: &Workflow, file: FileId) -> Vec<Diagnostic> {
    let mut tools: std::collections::BTreeSet<&str> =
        spec.tool_calls.iter().map(|c| c.tool.as_str()).collect();
    for agent in wf.agents.values() {
        tools.extend(agent.tools.iter().map(String::as_str));
    }
    let mut out = Vec::new();
    for tool in spec.reviews.iter().filter_map(|r| r.tool.as_ref()) {
        let name = tool.get_ref();
        if tools.contains(name.as_str()) {
            continue;
        }
        let mut d = Diagnostic::new(
            codes::E0905,
            format!("no agent of workflow `{}` calls tool `{name}`", wf.id),
            span_of(tool),
            "never asked for",
        )
        .in_file(file);
        if let Some(n) = hensu_sema::did_you_mean(name, tools.iter().copied()) {
            d = suggest(d, span_of(tool), n);
        }
        out.push(d);
    }
    out
}

/// The did-you-mean help plus the structured fix (the span covers the quoted string).
fn suggest(d: Diagnostic, span: Span, name: &str) -> Diagnostic {
    d.with_help(format!("did you mean `{name}`?"))
        .with_suggestion(
            span,
            format!("\"{name}\""),
            format!("replace with `{name}`"),
            Applicability::MaybeIncorrect,
        )
}

fn span_of<T>(s: &Spanned<T>) -> Span {
    Span::from_range(s.span())
}

/// Parses a test file; a syntax or shape error is E0904 at its span.
pub fn parse(text: &str, file: FileId) -> Result<TestSpec, Box<Diagnostic>> {
    toml::from_str::<TestSpec>(text).map_err(|e| {
        let span = e.span().map_or(Span::new(0, 0), Span::from_range);
        Box::new(
            Diagnostic::new(codes::E0904, "invalid test file", span, e.message().trim())
                .in_file(file)
                .with_help("see docs/testing.md for the test file format"),
        )
    })
}

/// The workflow a test names, found by id or by file name.
pub fn find_workflow<'a>(
    spec: &TestSpec,
    workflows: &'a [(String, Workflow)],
) -> Option<&'a Workflow> {
    let name = spec.workflow.get_ref();
    workflows
        .iter()
        .find(|(file, wf)| wf.id == *name || file == name || file_stem(file) == name)
        .map(|(_, wf)| wf)
}

fn file_stem(file: &str) -> &str {
    file.rsplit_once('.').map_or(file, |(stem, _)| stem)
}

/// E0905 for each workflow, node or agent name the test uses that does not exist, and E0904
/// for a bad status or regex.
pub fn validate(
    spec: &TestSpec,
    workflows: &[(String, Workflow)],
    file: FileId,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(wf) = find_workflow(spec, workflows) else {
        let name = spec.workflow.get_ref();
        let mut d = Diagnostic::new(
            codes::E0905,
            format!("unknown workflow `{name}`"),
            span_of(&spec.workflow),
            "no workflow of the project has this id or file name",
        )
        .in_file(file);
        let candidates = workflows.iter().map(|(_, w)| w.id.as_str());
        if let Some(s) = hensu_sema::did_you_mean(name, candidates) {
            d = suggest(d, span_of(&spec.workflow), s);
        }
        out.push(d);
        return out;
    };
    let unknown_node = |name: &Spanned<String>, what: &str, allow_agents: bool| {
        let n = name.get_ref();
        if wf.nodes.contains_key(n)
            || (allow_agents && (wf.agents.contains_key(n) || is_branch_or_item(wf, n)))
        {
            return None;
        }
        let mut d = Diagnostic::new(
            codes::E0905,
            format!("unknown {what} `{n}` in workflow `{}`", wf.id),
            span_of(name),
            format!("`{}` has no such {what}", wf.id),
        )
        .in_file(file);
        let mut candidates: Vec<&str> = wf.nodes.keys().map(String::as_str).collect();
        if allow_agents {
            candidates.extend(wf.agents.keys().map(String::as_str));
        }
        if let Some(s) = hensu_sema::did_you_mean(n, candidates) {
            d = suggest(d, span_of(name), s);
        }
        Some(d)
    };
    for id in spec.stubs.keys() {
        out.extend(unknown_node(id, "node, branch or agent", true));
    }
    for c in &spec.tool_calls {
        out.extend(unknown_node(&c.node, "node or agent", true));
    }
    out.extend(unwaited_signals(spec, wf, workflows, file));
    out.extend(unused_tool_decisions(spec, wf, file));
    for r in &spec.tool_results {
        if let Some(c) = r.call.as_ref().filter(|c| *c.get_ref() == 0) {
            out.push(
                Diagnostic::new(
                    codes::E0904,
                    "invalid test file",
                    span_of(c),
                    "calls count from 1; `call = 0` never matches",
                )
                .with_help("the first call of the tool is `call = 1`")
                .in_file(file),
            );
        }
    }
    for r in &spec.reviews {
        out.extend(unknown_node(&r.node, "node", false));
        if let Some(b) = &r.branch {
            out.extend(unknown_node(b, "branch", false));
        }
        if let Some(t) = &r.target {
            out.extend(unknown_node(t, "node", false));
        }
        if let Some(v) = &r.visit
            && *v.get_ref() == 0
        {
            out.push(
                Diagnostic::new(
                    codes::E0904,
                    "invalid test file",
                    span_of(v),
                    "visits count from 1; `visit = 0` never matches",
                )
                .with_help("the first review of the node is `visit = 1`")
                .in_file(file),
            );
        }
        if let Some(t) = &r.tool
            && r.decision == Decision::Backtrack
        {
            out.push(
                Diagnostic::new(
                    codes::E0904,
                    "invalid test file",
                    span_of(t),
                    "a tool call is approved or rejected, never sent back",
                )
                .with_help("use `decision = \"approve\"` or `decision = \"reject\"`")
                .in_file(file),
            );
        }
        if r.arguments.is_some() && r.tool.is_none() {
            out.push(
                Diagnostic::new(
                    codes::E0904,
                    "invalid test file",
                    span_of(&r.node),
                    "`arguments` edit a gated tool call, and this entry names no `tool`",
                )
                .with_help("add `tool = \"NAME\"`, or use `edits` for context values")
                .in_file(file),
            );
        }
        if r.decision == Decision::Backtrack && r.target.is_none() {
            out.push(
                Diagnostic::new(
                    codes::E0904,
                    "invalid test file",
                    span_of(&r.node),
                    "a backtrack decision needs `target`",
                )
                .in_file(file),
            );
        }
    }
    let e = &spec.expect;
    for n in e
        .end
        .iter()
        .chain(e.path.iter().flatten())
        .chain(e.path_contains.iter().flatten())
    {
        out.extend(unknown_node(n, "node", false));
    }
    for n in e.visits.keys() {
        out.extend(unknown_node(n, "node", false));
    }
    if let Some(s) = &e.status
        && !STATUSES.contains(&s.get_ref().as_str())
    {
        out.push(
            Diagnostic::new(
                codes::E0904,
                "invalid test file",
                span_of(s),
                format!("unknown status; expected one of {}", STATUSES.join(", ")),
            )
            .in_file(file),
        );
    }
    for o in e.outputs.values() {
        if let Some(re) = &o.matches
            && let Err(err) = regex::Regex::new(re.get_ref())
        {
            out.push(
                Diagnostic::new(
                    codes::E0904,
                    "invalid test file",
                    span_of(re),
                    format!("invalid regex: {err}"),
                )
                .in_file(file),
            );
        }
    }
    out
}

/// Whether `name` is a branch id of a parallel node or `<map node>[<index>]` (a map item),
/// which `[stubs]` may name too (docs/testing.md, *Stubs*).
fn is_branch_or_item(wf: &Workflow, name: &str) -> bool {
    let item = name
        .strip_suffix(']')
        .and_then(|n| n.split_once('['))
        .filter(|(_, i)| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()));
    wf.nodes.values().any(|node| match (node, item) {
        (hensu_ir::Node::Parallel(p), _) => p.branches.iter().any(|b| b.id == name),
        (hensu_ir::Node::Map(m), Some((id, _))) => m.id == id,
        _ => false,
    })
}
