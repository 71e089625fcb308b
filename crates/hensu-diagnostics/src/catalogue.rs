//! The catalogue of diagnostic codes: for each code its severity, a short title and the
//! explanation shown by `hensuc explain CODE` (like `rustc --explain`).
//!
//! The explanations live in `docs/diagnostics/CODE.md` (rustc's `error_codes/` layout), one file
//! per code, included at compile time; this file is only the table. A file is exactly the text
//! `hensuc explain` prints: a heading line `CODE (severity): title`, the explanation paragraph
//! wrapped at 80 columns, then `Erroneous example:` and `Fix:` with code blocks indented by four
//! spaces (which markdown renders as code). `docs/diagnostics/README.md` indexes them.
//!
//! Codes are stable: never reuse or renumber one; add new ones at the end of their range. Every
//! code a phase emits must be here ([`is_known`]). CONTRIBUTING.md, *Adding a diagnostic code*,
//! lists the steps.

use crate::Severity;

/// One catalogue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    /// `E0201`, `W0303`, …
    pub code: &'static str,
    pub severity: Severity,
    /// Short lowercase title, e.g. `duplicate node id`.
    pub title: &'static str,
    /// The whole `hensuc explain` text, from `docs/diagnostics/CODE.md`.
    pub text: &'static str,
}

impl CodeInfo {
    /// The explanation paragraph (when the diagnostic is reported and why) as one line: the
    /// first paragraph after the heading, unwrapped. SARIF's `fullDescription` uses it.
    pub fn explanation(&self) -> String {
        let body = self.text.split_once("\n\n").map_or("", |(_, body)| body);
        let paragraph = body.split("\n\n").next().unwrap_or("");
        paragraph.lines().collect::<Vec<_>>().join(" ")
    }

    /// Whether the text has a `Fix:` part (every catalogued code does).
    pub fn has_fix(&self) -> bool {
        self.text.contains("\nFix:")
    }
}

/// Find a code (exact match, e.g. `"E0201"`; lowercase `e0201` is accepted too).
pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    CODES.iter().find(|c| c.code.eq_ignore_ascii_case(code))
}

/// Every code, sorted: errors by number, then warnings by number.
pub fn all() -> &'static [CodeInfo] {
    CODES
}

/// Whether a code is in the catalogue (exact match).
pub fn is_known(code: &str) -> bool {
    CODES.iter().any(|c| c.code == code)
}

/// The `hensuc explain` text: the heading, the explanation (wrapped at 80 columns), the erroneous
/// example and the fix, code blocks indented by four spaces. Plain text with markdown structure;
/// ends with a newline. It is the content of `docs/diagnostics/CODE.md`.
pub fn render_explanation(info: &CodeInfo) -> String {
    info.text.to_owned()
}

const fn e(code: &'static str, title: &'static str, text: &'static str) -> CodeInfo {
    CodeInfo {
        code,
        severity: Severity::Error,
        title,
        text,
    }
}

const fn w(code: &'static str, title: &'static str, text: &'static str) -> CodeInfo {
    CodeInfo {
        code,
        severity: Severity::Warning,
        title,
        text,
    }
}

static CODES: &[CodeInfo] = &[
    // lexical and parse: E00xx
    e(
        "E0001",
        "unexpected character",
        include_str!("../../../docs/diagnostics/E0001.md"),
    ),
    e(
        "E0002",
        "unterminated string",
        include_str!("../../../docs/diagnostics/E0002.md"),
    ),
    e(
        "E0003",
        "invalid escape sequence",
        include_str!("../../../docs/diagnostics/E0003.md"),
    ),
    e(
        "E0004",
        "unterminated block comment",
        include_str!("../../../docs/diagnostics/E0004.md"),
    ),
    e(
        "E0005",
        "string template in a string",
        include_str!("../../../docs/diagnostics/E0005.md"),
    ),
    e(
        "E0006",
        "malformed number",
        include_str!("../../../docs/diagnostics/E0006.md"),
    ),
    e(
        "E0010",
        "unexpected token",
        include_str!("../../../docs/diagnostics/E0010.md"),
    ),
    e(
        "E0011",
        "unclosed delimiter",
        include_str!("../../../docs/diagnostics/E0011.md"),
    ),
    e(
        "E0012",
        "incomplete transition chain",
        include_str!("../../../docs/diagnostics/E0012.md"),
    ),
    e(
        "E0013",
        "`withFeedback` cannot apply here",
        include_str!("../../../docs/diagnostics/E0013.md"),
    ),
    e(
        "E0014",
        "no workflow, or more than one",
        include_str!("../../../docs/diagnostics/E0014.md"),
    ),
    e(
        "E0015",
        "removed construct",
        include_str!("../../../docs/diagnostics/E0015.md"),
    ),
    e(
        "E0016",
        "nesting too deep",
        include_str!("../../../docs/diagnostics/E0016.md"),
    ),
    // structure: E01xx
    e(
        "E0101",
        "unknown property or statement",
        include_str!("../../../docs/diagnostics/E0101.md"),
    ),
    e(
        "E0102",
        "not allowed on this node kind",
        include_str!("../../../docs/diagnostics/E0102.md"),
    ),
    e(
        "E0103",
        "wrong value type",
        include_str!("../../../docs/diagnostics/E0103.md"),
    ),
    e(
        "E0104",
        "given twice",
        include_str!("../../../docs/diagnostics/E0104.md"),
    ),
    e(
        "E0105",
        "missing required property",
        include_str!("../../../docs/diagnostics/E0105.md"),
    ),
    e(
        "E0106",
        "missing graph or start node",
        include_str!("../../../docs/diagnostics/E0106.md"),
    ),
    e(
        "E0107",
        "value out of range",
        include_str!("../../../docs/diagnostics/E0107.md"),
    ),
    e(
        "E0108",
        "unknown constant",
        include_str!("../../../docs/diagnostics/E0108.md"),
    ),
    e(
        "E0109",
        "required list is empty",
        include_str!("../../../docs/diagnostics/E0109.md"),
    ),
    e(
        "E0110",
        "statement not allowed in a compensation",
        include_str!("../../../docs/diagnostics/E0110.md"),
    ),
    e(
        "E0111",
        "compensation names a compensation",
        include_str!("../../../docs/diagnostics/E0111.md"),
    ),
    e(
        "E0112",
        "backoff without a retry",
        include_str!("../../../docs/diagnostics/E0112.md"),
    ),
    e(
        "E0113",
        "duration is not positive",
        include_str!("../../../docs/diagnostics/E0113.md"),
    ),
    e(
        "E0114",
        "dependencies in a consensus parallel node",
        include_str!("../../../docs/diagnostics/E0114.md"),
    ),
    e(
        "E0115",
        "wait node needs exactly one of `duration` and `until`",
        include_str!("../../../docs/diagnostics/E0115.md"),
    ),
    e(
        "E0116",
        "durable wait in a run without a store",
        include_str!("../../../docs/diagnostics/E0116.md"),
    ),
    e(
        "E0120",
        "map node without a list",
        include_str!("../../../docs/diagnostics/E0120.md"),
    ),
    e(
        "E0121",
        "map node without a body",
        include_str!("../../../docs/diagnostics/E0121.md"),
    ),
    e(
        "E0122",
        "map limit below 1",
        include_str!("../../../docs/diagnostics/E0122.md"),
    ),
    e(
        "E0123",
        "map node with two bodies",
        include_str!("../../../docs/diagnostics/E0123.md"),
    ),
    e(
        "E0124",
        "review timeout without a deadline",
        include_str!("../../../docs/diagnostics/E0124.md"),
    ),
    // names and references: E02xx
    e(
        "E0201",
        "duplicate node id",
        include_str!("../../../docs/diagnostics/E0201.md"),
    ),
    e(
        "E0202",
        "duplicate agent id",
        include_str!("../../../docs/diagnostics/E0202.md"),
    ),
    e(
        "E0203",
        "duplicate state variable",
        include_str!("../../../docs/diagnostics/E0203.md"),
    ),
    e(
        "E0204",
        "unknown node",
        include_str!("../../../docs/diagnostics/E0204.md"),
    ),
    e(
        "E0205",
        "unknown agent",
        include_str!("../../../docs/diagnostics/E0205.md"),
    ),
    e(
        "E0206",
        "duplicate branch id",
        include_str!("../../../docs/diagnostics/E0206.md"),
    ),
    e(
        "E0207",
        "invalid identifier",
        include_str!("../../../docs/diagnostics/E0207.md"),
    ),
    e(
        "E0208",
        "prompt or rubric file not found",
        include_str!("../../../docs/diagnostics/E0208.md"),
    ),
    e(
        "E0209",
        "prompt or rubric path escapes its directory",
        include_str!("../../../docs/diagnostics/E0209.md"),
    ),
    e(
        "E0210",
        "unknown command or action handler",
        include_str!("../../../docs/diagnostics/E0210.md"),
    ),
    e(
        "E0211",
        "command placeholder cannot receive a value safely",
        include_str!("../../../docs/diagnostics/E0211.md"),
    ),
    e(
        "E0212",
        "unknown compensation",
        include_str!("../../../docs/diagnostics/E0212.md"),
    ),
    e(
        "E0213",
        "`send(\"mcp\")` payload names no tool",
        include_str!("../../../docs/diagnostics/E0213.md"),
    ),
    // graph and transitions: E03xx
    e(
        "E0301",
        "overlapping score arms",
        include_str!("../../../docs/diagnostics/E0301.md"),
    ),
    e(
        "E0302",
        "overlapping condition arms",
        include_str!("../../../docs/diagnostics/E0302.md"),
    ),
    e(
        "E0303",
        "arm after `otherwise`",
        include_str!("../../../docs/diagnostics/E0303.md"),
    ),
    e(
        "E0304",
        "bounded rules share a retry counter",
        include_str!("../../../docs/diagnostics/E0304.md"),
    ),
    e(
        "E0305",
        "review verdict has nowhere to go",
        include_str!("../../../docs/diagnostics/E0305.md"),
    ),
    e(
        "E0306",
        "fork and join do not match",
        include_str!("../../../docs/diagnostics/E0306.md"),
    ),
    e(
        "E0307",
        "empty score range",
        include_str!("../../../docs/diagnostics/E0307.md"),
    ),
    e(
        "E0308",
        "`JUDGE_DECIDES` without a judge",
        include_str!("../../../docs/diagnostics/E0308.md"),
    ),
    e(
        "E0309",
        "join `writes` does not fit the merge strategy",
        include_str!("../../../docs/diagnostics/E0309.md"),
    ),
    e(
        "E0310",
        "node has no transition",
        include_str!("../../../docs/diagnostics/E0310.md"),
    ),
    e(
        "E0311",
        "transition target is a compensation",
        include_str!("../../../docs/diagnostics/E0311.md"),
    ),
    e(
        "E0312",
        "unknown branch dependency",
        include_str!("../../../docs/diagnostics/E0312.md"),
    ),
    e(
        "E0313",
        "branch dependency cycle",
        include_str!("../../../docs/diagnostics/E0313.md"),
    ),
    // state, schema and types: E04xx
    e(
        "E0401",
        "engine variable used as a variable",
        include_str!("../../../docs/diagnostics/E0401.md"),
    ),
    e(
        "E0402",
        "`writes` names an undeclared variable",
        include_str!("../../../docs/diagnostics/E0402.md"),
    ),
    e(
        "E0403",
        "placeholder names an undeclared variable",
        include_str!("../../../docs/diagnostics/E0403.md"),
    ),
    e(
        "E0404",
        "condition variable not in `writes`",
        include_str!("../../../docs/diagnostics/E0404.md"),
    ),
    e(
        "E0405",
        "condition operand does not fit the variable's type",
        include_str!("../../../docs/diagnostics/E0405.md"),
    ),
    e(
        "E0406",
        "invalid sub-workflow variable mapping",
        include_str!("../../../docs/diagnostics/E0406.md"),
    ),
    e(
        "E0407",
        "action writes that no action produces",
        include_str!("../../../docs/diagnostics/E0407.md"),
    ),
    e(
        "E0408",
        "`runIf` names no Boolean variable",
        include_str!("../../../docs/diagnostics/E0408.md"),
    ),
    e(
        "E0412",
        "map `over` names no list variable",
        include_str!("../../../docs/diagnostics/E0412.md"),
    ),
    e(
        "E0413",
        "map `writes` names no list variable",
        include_str!("../../../docs/diagnostics/E0413.md"),
    ),
    e(
        "E0414",
        "map body workflow lacks `item` or `result`",
        include_str!("../../../docs/diagnostics/E0414.md"),
    ),
    // sub-workflows and projects: E05xx
    e(
        "E0501",
        "unknown sub-workflow",
        include_str!("../../../docs/diagnostics/E0501.md"),
    ),
    e(
        "E0502",
        "sub-workflow cycle",
        include_str!("../../../docs/diagnostics/E0502.md"),
    ),
    e(
        "E0503",
        "child does not provide a mapped variable",
        include_str!("../../../docs/diagnostics/E0503.md"),
    ),
    e(
        "E0504",
        "sub-workflow version mismatch",
        include_str!("../../../docs/diagnostics/E0504.md"),
    ),
    e(
        "E0505",
        "duplicate workflow id",
        include_str!("../../../docs/diagnostics/E0505.md"),
    ),
    e(
        "E0506",
        "unknown base workflow",
        include_str!("../../../docs/diagnostics/E0506.md"),
    ),
    e(
        "E0507",
        "extends cycle",
        include_str!("../../../docs/diagnostics/E0507.md"),
    ),
    e(
        "E0508",
        "declaration collides with the base",
        include_str!("../../../docs/diagnostics/E0508.md"),
    ),
    e(
        "E0509",
        "routes of an unknown node",
        include_str!("../../../docs/diagnostics/E0509.md"),
    ),
    e(
        "E0510",
        "invalid `commands.yaml`",
        include_str!("../../../docs/diagnostics/E0510.md"),
    ),
    e(
        "E0511",
        "interrupted unsafe call",
        include_str!("../../../docs/diagnostics/E0511.md"),
    ),
    e(
        "E0512",
        "call journal does not match the node",
        include_str!("../../../docs/diagnostics/E0512.md"),
    ),
    e(
        "E0515",
        "schedule over the daily budget",
        include_str!("../../../docs/diagnostics/E0515.md"),
    ),
    e(
        "E0516",
        "schedule cost has no bound under a budget",
        include_str!("../../../docs/diagnostics/E0516.md"),
    ),
    e(
        "E0517",
        "schedule names an unknown workflow",
        include_str!("../../../docs/diagnostics/E0517.md"),
    ),
    e(
        "E0518",
        "duplicate schedule name",
        include_str!("../../../docs/diagnostics/E0518.md"),
    ),
    // driver and loader: E09xx
    e(
        "E0520",
        "gated tool call where the run cannot pause",
        include_str!("../../../docs/diagnostics/E0520.md"),
    ),
    e(
        "E0521",
        "gated tool in a run without a store",
        include_str!("../../../docs/diagnostics/E0521.md"),
    ),
    e(
        "E0901",
        "cannot read file",
        include_str!("../../../docs/diagnostics/E0901.md"),
    ),
    e(
        "E0902",
        "invalid JSON workflow",
        include_str!("../../../docs/diagnostics/E0902.md"),
    ),
    e(
        "E0903",
        "file too large",
        include_str!("../../../docs/diagnostics/E0903.md"),
    ),
    e(
        "E0904",
        "invalid test file",
        include_str!("../../../docs/diagnostics/E0904.md"),
    ),
    e(
        "E0905",
        "test names an unknown workflow or node",
        include_str!("../../../docs/diagnostics/E0905.md"),
    ),
    e(
        "E0906",
        "invalid `hensu.toml`",
        include_str!("../../../docs/diagnostics/E0906.md"),
    ),
    e(
        "E0907",
        "unknown key in `hensu.toml`",
        include_str!("../../../docs/diagnostics/E0907.md"),
    ),
    e(
        "E0908",
        "the fork's node is not in the workflow",
        include_str!("../../../docs/diagnostics/E0908.md"),
    ),
    e(
        "E0909",
        "the fork's state does not fit the node",
        include_str!("../../../docs/diagnostics/E0909.md"),
    ),
    e(
        "E0913",
        "invalid cron expression",
        include_str!("../../../docs/diagnostics/E0913.md"),
    ),
    e(
        "E0914",
        "unknown time zone",
        include_str!("../../../docs/diagnostics/E0914.md"),
    ),
    e(
        "E0915",
        "invalid `[retention]`",
        include_str!("../../../docs/diagnostics/E0915.md"),
    ),
    e(
        "E0916",
        "the replay diverges from the recorded run",
        include_str!("../../../docs/diagnostics/E0916.md"),
    ),
    e(
        "E0917",
        "a replayed call has no recorded answer",
        include_str!("../../../docs/diagnostics/E0917.md"),
    ),
    // warnings: W00xx
    w(
        "W0001",
        "`package`/`import` ignored",
        include_str!("../../../docs/diagnostics/W0001.md"),
    ),
    // warnings: W02xx
    w(
        "W0201",
        "compensation never used",
        include_str!("../../../docs/diagnostics/W0201.md"),
    ),
    // warnings: W03xx
    w(
        "W0301",
        "unreachable node",
        include_str!("../../../docs/diagnostics/W0301.md"),
    ),
    w(
        "W0302",
        "no path to an end node",
        include_str!("../../../docs/diagnostics/W0302.md"),
    ),
    w(
        "W0303",
        "unbounded cycle",
        include_str!("../../../docs/diagnostics/W0303.md"),
    ),
    w(
        "W0304",
        "later rules can never match",
        include_str!("../../../docs/diagnostics/W0304.md"),
    ),
    w(
        "W0305",
        "review verdict falls through to a catch-all",
        include_str!("../../../docs/diagnostics/W0305.md"),
    ),
    w(
        "W0306",
        "exit arm shadowed by a bounded arm",
        include_str!("../../../docs/diagnostics/W0306.md"),
    ),
    w(
        "W0307",
        "consensus branch yields nothing",
        include_str!("../../../docs/diagnostics/W0307.md"),
    ),
    w(
        "W0308",
        "unused state variable",
        include_str!("../../../docs/diagnostics/W0308.md"),
    ),
    w(
        "W0309",
        "score threshold outside 0..100",
        include_str!("../../../docs/diagnostics/W0309.md"),
    ),
    w(
        "W0310",
        "engine variable in `writes` (JSON)",
        include_str!("../../../docs/diagnostics/W0310.md"),
    ),
    w(
        "W0311",
        "score arms leave a gap",
        include_str!("../../../docs/diagnostics/W0311.md"),
    ),
    w(
        "W0312",
        "action node without `onFailure`",
        include_str!("../../../docs/diagnostics/W0312.md"),
    ),
    w(
        "W0313",
        "agent never used",
        include_str!("../../../docs/diagnostics/W0313.md"),
    ),
    w(
        "W0314",
        "rubric criteria weigh nothing",
        include_str!("../../../docs/diagnostics/W0314.md"),
    ),
    w(
        "W0315",
        "unknown code or level in `[lints]`",
        include_str!("../../../docs/diagnostics/W0315.md"),
    ),
    w(
        "W0316",
        "variable read before any node writes it",
        include_str!("../../../docs/diagnostics/W0316.md"),
    ),
    w(
        "W0317",
        "`@Suppress` names no warning",
        include_str!("../../../docs/diagnostics/W0317.md"),
    ),
    w(
        "W0318",
        "variable read after routing consumed it",
        include_str!("../../../docs/diagnostics/W0318.md"),
    ),
    w(
        "W0319",
        "join `writes` names an undeclared variable (JSON)",
        include_str!("../../../docs/diagnostics/W0319.md"),
    ),
    w(
        "W0320",
        "sub-workflow mapping names an undeclared parent variable (JSON)",
        include_str!("../../../docs/diagnostics/W0320.md"),
    ),
    w(
        "W0321",
        "sub-workflow mapping names a variable the child does not declare (JSON)",
        include_str!("../../../docs/diagnostics/W0321.md"),
    ),
    w(
        "W0322",
        "`commands.yaml` entry without `command` or with an unknown key",
        include_str!("../../../docs/diagnostics/W0322.md"),
    ),
    w(
        "W0323",
        "command placeholder names no variable",
        include_str!("../../../docs/diagnostics/W0323.md"),
    ),
    w(
        "W0324",
        "saga compensations can never run",
        include_str!("../../../docs/diagnostics/W0324.md"),
    ),
    w(
        "W0325",
        "unknown top-level key in `commands.yaml`",
        include_str!("../../../docs/diagnostics/W0325.md"),
    ),
    w(
        "W0326",
        "node timeout exceeds the run limit",
        include_str!("../../../docs/diagnostics/W0326.md"),
    ),
    w(
        "W0327",
        "signal wait without a timeout under a run deadline",
        include_str!("../../../docs/diagnostics/W0327.md"),
    ),
    w(
        "W0332",
        "tool without a declared call policy",
        include_str!("../../../docs/diagnostics/W0332.md"),
    ),
    w(
        "W0336",
        "map node without `maxItems`",
        include_str!("../../../docs/diagnostics/W0336.md"),
    ),
    // tools: W06xx (need the configured MCP servers; `hensuc check` without `--offline`)
    w(
        "W0340",
        "approval pattern matches no agent's tool",
        include_str!("../../../docs/diagnostics/W0340.md"),
    ),
    w(
        "W0601",
        "tool not offered by any MCP server",
        include_str!("../../../docs/diagnostics/W0601.md"),
    ),
    w(
        "W0602",
        "schedule not checked against the budget",
        include_str!("../../../docs/diagnostics/W0602.md"),
    ),
    // warnings of the driver: W09xx
    w(
        "W0901",
        "artifact needs hensu's engine",
        include_str!("../../../docs/diagnostics/W0901.md"),
    ),
    w(
        "W0902",
        "test file not named `*.test.toml`",
        include_str!("../../../docs/diagnostics/W0902.md"),
    ),
    w(
        "W0903",
        "unknown section in `hensu.toml`",
        include_str!("../../../docs/diagnostics/W0903.md"),
    ),
    w(
        "W0904",
        "`allow_hosts` entry is not a host",
        include_str!("../../../docs/diagnostics/W0904.md"),
    ),
    w(
        "W0905",
        "price for a model no agent uses",
        include_str!("../../../docs/diagnostics/W0905.md"),
    ),
];
