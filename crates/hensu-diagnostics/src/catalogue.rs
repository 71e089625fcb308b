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

/// One entry: its code, severity and title; the text is `docs/diagnostics/CODE.md`.
macro_rules! entry {
    ($code:literal, $severity:expr, $title:expr) => {
        CodeInfo {
            code: $code,
            severity: $severity,
            title: $title,
            text: include_str!(concat!("../../../docs/diagnostics/", $code, ".md")),
        }
    };
}

macro_rules! e {
    ($code:literal, $title:expr) => {
        entry!($code, Severity::Error, $title)
    };
}

macro_rules! w {
    ($code:literal, $title:expr) => {
        entry!($code, Severity::Warning, $title)
    };
}

static CODES: &[CodeInfo] = &[
    // lexical and parse: E00xx
    e!("E0001", "unexpected character"),
    e!("E0002", "unterminated string"),
    e!("E0003", "invalid escape sequence"),
    e!("E0004", "unterminated block comment"),
    e!("E0005", "string template in a string"),
    e!("E0006", "malformed number"),
    e!("E0010", "unexpected token"),
    e!("E0011", "unclosed delimiter"),
    e!("E0012", "incomplete transition chain"),
    e!("E0013", "`withFeedback` cannot apply here"),
    e!("E0014", "no workflow, or more than one"),
    e!("E0015", "removed construct"),
    e!("E0016", "nesting too deep"),
    // structure: E01xx
    e!("E0101", "unknown property or statement"),
    e!("E0102", "not allowed on this node kind"),
    e!("E0103", "wrong value type"),
    e!("E0104", "given twice"),
    e!("E0105", "missing required property"),
    e!("E0106", "missing graph or start node"),
    e!("E0107", "value out of range"),
    e!("E0108", "unknown constant"),
    e!("E0109", "required list is empty"),
    e!("E0110", "statement not allowed in a compensation"),
    e!("E0111", "compensation names a compensation"),
    e!("E0112", "backoff without a retry"),
    e!("E0113", "duration is not positive"),
    e!("E0114", "dependencies in a consensus parallel node"),
    e!(
        "E0115",
        "wait node needs exactly one of `duration` and `until`"
    ),
    e!("E0116", "durable wait in a run without a store"),
    e!("E0120", "map node without a list"),
    e!("E0121", "map node without a body"),
    e!("E0122", "map limit below 1"),
    e!("E0123", "map node with two bodies"),
    e!("E0124", "review timeout without a deadline"),
    // names and references: E02xx
    e!("E0201", "duplicate node id"),
    e!("E0202", "duplicate agent id"),
    e!("E0203", "duplicate state variable"),
    e!("E0204", "unknown node"),
    e!("E0205", "unknown agent"),
    e!("E0206", "duplicate branch id"),
    e!("E0207", "invalid identifier"),
    e!("E0208", "prompt or rubric file not found"),
    e!("E0209", "prompt or rubric path escapes its directory"),
    e!("E0210", "unknown command or action handler"),
    e!("E0211", "command placeholder cannot receive a value safely"),
    e!("E0212", "unknown compensation"),
    e!("E0213", "`send(\"mcp\")` payload names no tool"),
    // graph and transitions: E03xx
    e!("E0301", "overlapping score arms"),
    e!("E0302", "overlapping condition arms"),
    e!("E0303", "arm after `otherwise`"),
    e!("E0304", "bounded rules share a retry counter"),
    e!("E0305", "review verdict has nowhere to go"),
    e!("E0306", "fork and join do not match"),
    e!("E0307", "empty score range"),
    e!("E0308", "`JUDGE_DECIDES` without a judge"),
    e!("E0309", "join `writes` does not fit the merge strategy"),
    e!("E0310", "node has no transition"),
    e!("E0311", "transition target is a compensation"),
    e!("E0312", "unknown branch dependency"),
    e!("E0313", "branch dependency cycle"),
    // state, schema and types: E04xx
    e!("E0401", "engine variable used as a variable"),
    e!("E0402", "`writes` names an undeclared variable"),
    e!("E0403", "placeholder names an undeclared variable"),
    e!("E0404", "condition variable not in `writes`"),
    e!(
        "E0405",
        "condition operand does not fit the variable's type"
    ),
    e!("E0406", "invalid sub-workflow variable mapping"),
    e!("E0407", "action writes that no action produces"),
    e!("E0408", "`runIf` names no Boolean variable"),
    e!("E0412", "map `over` names no list variable"),
    e!("E0413", "map `writes` names no list variable"),
    e!("E0414", "map body workflow lacks `item` or `result`"),
    // sub-workflows and projects: E05xx
    e!("E0501", "unknown sub-workflow"),
    e!("E0502", "sub-workflow cycle"),
    e!("E0503", "child does not provide a mapped variable"),
    e!("E0504", "sub-workflow version mismatch"),
    e!("E0505", "duplicate workflow id"),
    e!("E0506", "unknown base workflow"),
    e!("E0507", "extends cycle"),
    e!("E0508", "declaration collides with the base"),
    e!("E0509", "routes of an unknown node"),
    e!("E0510", "invalid `commands.yaml`"),
    e!("E0511", "interrupted unsafe call"),
    e!("E0512", "call journal does not match the node"),
    e!("E0515", "schedule over the daily budget"),
    e!("E0516", "schedule cost has no bound under a budget"),
    e!("E0517", "schedule names an unknown workflow"),
    e!("E0518", "duplicate schedule name"),
    // driver and loader: E09xx
    e!("E0520", "gated tool call where the run cannot pause"),
    e!("E0521", "gated tool in a run without a store"),
    e!("E0901", "cannot read file"),
    e!("E0902", "invalid JSON workflow"),
    e!("E0903", "file too large"),
    e!("E0904", "invalid test file"),
    e!("E0905", "test names an unknown workflow or node"),
    e!("E0906", "invalid `hensu.toml`"),
    e!("E0907", "unknown key in `hensu.toml`"),
    e!("E0908", "the fork's node is not in the workflow"),
    e!("E0909", "the fork's state does not fit the node"),
    e!("E0913", "invalid cron expression"),
    e!("E0914", "unknown time zone"),
    e!("E0915", "invalid `[retention]`"),
    e!("E0916", "the replay diverges from the recorded run"),
    e!("E0917", "a replayed call has no recorded answer"),
    // warnings: W00xx
    w!("W0001", "`package`/`import` ignored"),
    // warnings: W02xx
    w!("W0201", "compensation never used"),
    // warnings: W03xx
    w!("W0301", "unreachable node"),
    w!("W0302", "no path to an end node"),
    w!("W0303", "unbounded cycle"),
    w!("W0304", "later rules can never match"),
    w!("W0305", "review verdict falls through to a catch-all"),
    w!("W0306", "exit arm shadowed by a bounded arm"),
    w!("W0307", "consensus branch yields nothing"),
    w!("W0308", "unused state variable"),
    w!("W0309", "score threshold outside 0..100"),
    w!("W0310", "engine variable in `writes` (JSON)"),
    w!("W0311", "score arms leave a gap"),
    w!("W0312", "action node without `onFailure`"),
    w!("W0313", "agent never used"),
    w!("W0314", "rubric criteria weigh nothing"),
    w!("W0315", "unknown code or level in `[lints]`"),
    w!("W0316", "variable read before any node writes it"),
    w!("W0317", "`@Suppress` names no warning"),
    w!("W0318", "variable read after routing consumed it"),
    w!("W0319", "join `writes` names an undeclared variable (JSON)"),
    w!(
        "W0320",
        "sub-workflow mapping names an undeclared parent variable (JSON)"
    ),
    w!(
        "W0321",
        "sub-workflow mapping names a variable the child does not declare (JSON)"
    ),
    w!(
        "W0322",
        "`commands.yaml` entry without `command` or with an unknown key"
    ),
    w!("W0323", "command placeholder names no variable"),
    w!("W0324", "saga compensations can never run"),
    w!("W0325", "unknown top-level key in `commands.yaml`"),
    w!("W0326", "node timeout exceeds the run limit"),
    w!(
        "W0327",
        "signal wait without a timeout under a run deadline"
    ),
    w!("W0332", "tool without a declared call policy"),
    w!("W0336", "map node without `maxItems`"),
    // tools: W06xx (need the configured MCP servers; `hensuc check` without `--offline`)
    w!("W0340", "approval pattern matches no agent's tool"),
    w!("W0601", "tool not offered by any MCP server"),
    w!("W0602", "schedule not checked against the budget"),
    // warnings of the driver: W09xx
    w!("W0901", "artifact needs hensu's engine"),
    w!("W0902", "test file not named `*.test.toml`"),
    w!("W0903", "unknown section in `hensu.toml`"),
    w!("W0904", "`allow_hosts` entry is not a host"),
    w!("W0905", "price for a model no agent uses"),
];
