//! The catalogue of diagnostic codes: for each code its severity, a short title and the
//! explanation shown by `hensuc explain CODE` (like `rustc --explain`).
//!
//! Codes are stable (language.md §5): never reuse or renumber one; add new ones at the end of
//! their range. Every code a phase emits must be here ([`is_known`]).

use crate::Severity;

/// One catalogue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    /// `E0201`, `W0303`, …
    pub code: &'static str,
    pub severity: Severity,
    /// Short lowercase title, e.g. `duplicate node id`.
    pub title: &'static str,
    /// One paragraph: when the diagnostic is reported and why.
    pub explanation: &'static str,
    /// A small erroneous example (may be empty for driver errors that have no source example).
    pub example: &'static str,
    /// How to fix it: a corrected example or instructions.
    pub fix: &'static str,
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

fn indent(text: &str) -> String {
    let mut out = String::new();
    for line in text.trim_matches('\n').lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Split into words, keeping a `code span` that contains spaces together.
fn words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut open = false;
    for word in text.split_whitespace() {
        match words.last_mut() {
            Some(last) if open => {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_owned()),
        }
        if word.matches('`').count() % 2 == 1 {
            open = !open;
        }
    }
    words
}

/// Greedy word wrap at `width` columns (a longer word gets a line of its own; a backtick code
/// span is never split); ends with a newline.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for word in words(text) {
        let word = word.as_str();
        let len = word.chars().count();
        if line_len > 0 && line_len + 1 + len > width {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += len;
    }
    out.push('\n');
    out
}

/// Width the prose of an explanation is wrapped to.
const WRAP: usize = 80;

/// The `hensuc explain` text: a heading, the explanation (wrapped at 80 columns), the erroneous
/// example and the fix, code blocks indented by four spaces. Plain text with markdown-ish
/// structure; ends with a newline.
pub fn render_explanation(info: &CodeInfo) -> String {
    let severity = match info.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = format!("{} ({severity}): {}\n\n", info.code, info.title);
    out.push_str(&wrap(info.explanation, WRAP));
    if !info.example.trim().is_empty() {
        out.push_str("\nErroneous example:\n\n");
        out.push_str(&indent(info.example));
    }
    if !info.fix.trim().is_empty() {
        if info.fix.contains('\n') {
            out.push_str("\nFix:\n\n");
            out.push_str(&indent(info.fix));
        } else {
            out.push('\n');
            out.push_str(&wrap(&format!("Fix: {}", info.fix), WRAP));
        }
    }
    out
}

const fn e(
    code: &'static str,
    title: &'static str,
    explanation: &'static str,
    example: &'static str,
    fix: &'static str,
) -> CodeInfo {
    CodeInfo {
        code,
        severity: Severity::Error,
        title,
        explanation,
        example,
        fix,
    }
}

const fn w(
    code: &'static str,
    title: &'static str,
    explanation: &'static str,
    example: &'static str,
    fix: &'static str,
) -> CodeInfo {
    CodeInfo {
        code,
        severity: Severity::Warning,
        title,
        explanation,
        example,
        fix,
    }
}

static CODES: &[CodeInfo] = &[
    // ---------------------------------------------------------------- lexical and parse: E00xx
    e(
        "E0001",
        "unexpected character",
        "The lexer found a character that cannot start any token of the language, such as `#`, `@` \
         or `?` outside a string or comment. Outside strings and comments a `.hwf` file contains \
         only identifiers (Kotlin-style, or in backticks), string and number literals, the \
         punctuation the DSL uses and whitespace.",
        r#"
workflow("demo") {
    version = "1.0.0"  # first release
}
"#,
        r#"
workflow("demo") {
    version = "1.0.0"  // first release
}
"#,
    ),
    e(
        "E0002",
        "unterminated string",
        "A string literal has no closing quote. A `\"…\"` string must end on the line it starts \
         on (write `\\n` for a line break); a raw string `\"\"\"…\"\"\"` may span lines but must \
         be closed by `\"\"\"` before the end of the file. The label points at the opening quote.",
        r#"
prompt = "Summarize the article
"#,
        r#"
prompt = "Summarize the article"

// or, for several lines:
prompt = """
    Summarize the article.
    Keep it short.
""".trimIndent()
"#,
    ),
    e(
        "E0003",
        "invalid escape sequence",
        "Inside a `\"…\"` string a backslash starts an escape, and only Kotlin's escapes exist: \
         `\\t`, `\\b`, `\\n`, `\\r`, `\\'`, `\\\"`, `\\\\`, `\\$` and `\\uXXXX` (exactly four hex \
         digits). Anything else after a backslash is an error. Raw strings `\"\"\"…\"\"\"` have no \
         escapes at all, so a backslash in them is just a backslash.",
        r#"
instructions = "Answer with a number matching \d+"
"#,
        r#"
instructions = "Answer with a number matching \\d+"
// or
instructions = """Answer with a number matching \d+"""
"#,
    ),
    e(
        "E0004",
        "unterminated block comment",
        "A `/* … */` or KDoc `/** … */` comment is not closed before the end of the file. As in \
         Kotlin, block comments nest: every `/*` inside a comment opens a new level that needs \
         its own `*/`, so commenting out text that already contains `/*` needs one more `*/`.",
        r#"
/* Review flow
   /* draft, then review */
workflow("review") {
"#,
        r#"
/* Review flow
   /* draft, then review */
*/
workflow("review") {
"#,
    ),
    e(
        "E0005",
        "string template in a string",
        "`$name` and `${…}` inside a string are Kotlin string templates. hensu has no Kotlin \
         variables to substitute, so they are rejected rather than kept as surprising literal \
         text. Prompts refer to state variables with `{name}` placeholders, which the engine fills \
         in at run time. A `$` followed by anything other than an identifier or `{` is literal \
         (the regex `\"^[a-z]+$\"` is fine); write `\\$` for a literal `$name`.",
        r#"
prompt = "Summarize $topic for ${audience}"
"#,
        r#"
prompt = "Summarize {topic} for {audience}"
"#,
    ),
    e(
        "E0006",
        "malformed number",
        "A number literal is malformed or does not fit its type. Numbers are written as in \
         Kotlin: an Int (`3`, `60_000`, 32-bit), a Long with an `L` suffix (`60000L`, 64-bit) or \
         a Double (`0.7`, `1e-3`); underscores may only separate digits, and no integer may \
         exceed the 64-bit range.",
        r#"
maxTokens = 4_096_
timeout = 99999999999999999999
"#,
        r#"
maxTokens = 4_096
timeout = 90
"#,
    ),
    e(
        "E0010",
        "unexpected token",
        "The parser expected something else at this point. The message says what was expected \
         and what was found, and names the construct being parsed. Frequent causes: a missing \
         `goto`, `otherwise` or comma; Kotlin that is not part of the language (`val`, loops, \
         lambdas with parameters); and an infix chain split across lines — a chain such as \
         `onFailure retry 3 otherwise \"fallback\"` must stay on one line, as in Kotlin.",
        r#"
node("draft") {
    onSuccess "review"
}
"#,
        r#"
node("draft") {
    onSuccess goto "review"
}
"#,
    ),
    e(
        "E0011",
        "unclosed delimiter",
        "A `(` or `{` has no matching closing delimiter before the end of the file or before a \
         closing delimiter of the other kind. The label points at the opening delimiter, which is \
         often a block opened many lines earlier than where the parser noticed.",
        r#"
workflow("demo") {
    graph {
        start at "done"
        end("done")
}
"#,
        r#"
workflow("demo") {
    graph {
        start at "done"
        end("done")
    }
}
"#,
    ),
    e(
        "E0012",
        "incomplete transition chain",
        "Some transitions are chains of infix words that only mean something when complete: \
         `onFailure retry N otherwise \"x\"`, and `revise \"p\" retry N otherwise \"x\"` after \
         `onRejection`, `onNoConsensus`, a `whenScore` or `whenValue` arm, or an `otherwise` arm. \
         Upstream Hensu silently drops an incomplete chain, so the transition would be missing at \
         run time; hensu reports it instead.",
        r#"
onFailure retry 3
onRejection revise "draft"
"#,
        r#"
onFailure retry 3 otherwise "give_up"
onRejection revise "draft" retry 2 otherwise "escalate"
"#,
    ),
    e(
        "E0013",
        "`withFeedback` cannot apply here",
        "`withFeedback` makes a transition pass the node's output on to its target as feedback. \
         It may follow any `goto \"x\"` and the escalation `otherwise \"x\"` of a revise chain \
         (after `revise \"p\"` it is accepted and has no effect). Failure transitions \
         (`onFailure goto …`, `onFailure retry … otherwise …`) carry no feedback, so \
         `withFeedback` after them is an error.",
        r#"
onFailure goto "fallback" withFeedback
"#,
        r#"
onFailure goto "fallback"
"#,
    ),
    e(
        "E0014",
        "no workflow, or more than one",
        "A file declares exactly one `workflow(\"name\") { … }`, either directly or wrapped in \
         `fun name() = workflow(…) { … }` or `fun name() { return workflow(…) { … } }`. A file \
         without one has nothing to compile; in a file with two, upstream Hensu silently keeps \
         only the last. Put each workflow in its own file and compile the files together (a \
         workflow can then use another one as a sub-workflow).",
        r#"
workflow("draft") { /* … */ }
workflow("review") { /* … */ }
"#,
        r#"
// draft.hwf
workflow("draft") { /* … */ }

// review.hwf
workflow("review") { /* … */ }
"#,
    ),
    e(
        "E0015",
        "removed construct",
        "`planning { }`, `plan { }` and `loop(…)` loop nodes were removed from Hensu. Planning is \
         an agent role, not a kind of node: use an ordinary node whose agent produces the plan. \
         Iteration is a bounded transition on an ordinary node: use `revise \"p\" retry N \
         otherwise \"x\"` (re-run `p` at most N times, then continue at `x`), and route on the \
         agent's output with `onCondition` or `onScore`.",
        r#"
node("write") {
    agent = "writer"
    planning { }
}
"#,
        r#"
node("write") {
    agent = "writer"
    prompt = "Write the article. Set done to true when it is complete."
    writes("done")
    onCondition("done") {
        whenValue equalTo true goto "publish"
        otherwise revise "write" retry 3 otherwise "escalate"
    }
}
"#,
    ),
    e(
        "E0016",
        "nesting too deep",
        "Blocks, parentheses, calls and string expressions may nest only up to a fixed depth. The \
         limit keeps the compiler's stack bounded on generated or hostile input; hand-written \
         workflows never come near it, since the DSL itself nests only a few levels \
         (`workflow { graph { node { onScore { … } } } }`). Hitting it usually means generated \
         or corrupted input.",
        r#"
send("webhook", mapOf("a" to mapOf("a" to mapOf("a" to mapOf(/* …hundreds of levels… */)))))
"#,
        "Flatten the structure, e.g. pass one level of `mapOf` and let the receiver build the \
         nesting, or fix the generator that produced the file.",
    ),
    // ---------------------------------------------------------------------- structure: E01xx
    e(
        "E0101",
        "unknown property or statement",
        "This name is not a property, block or statement of the enclosing construct. Each block \
         accepts a fixed set of members — for example an agent accepts `role`, `model`, \
         `temperature`, `maxTokens`, `tools`, `maintainContext`, `instructions`, `topP`, \
         `frequencyPenalty`, `presencePenalty`, `timeout` and `maxToolCalls` — and the help \
         suggests the closest valid one. Arbitrary Kotlin (`val`, loops, function calls) is not \
         part of the language.",
        r#"
agent("writer") {
    role = "Technical writer"
    model = "gpt-4o"
    temprature = 0.2
}
"#,
        r#"
agent("writer") {
    role = "Technical writer"
    model = "gpt-4o"
    temperature = 0.2
}
"#,
    ),
    e(
        "E0102",
        "not allowed on this node kind",
        "The statement exists, but not on this kind of node. Transitions differ by kind: \
         `onScore` is for standard and generic nodes; `onCondition`, `onApproval`, \
         `onRejection` and `review` for standard nodes; `onConsensus`, `onNoConsensus`, \
         `branch` and `consensus` for parallel nodes; a fork leaves only through `onComplete`; \
         `onFailure retry` is not available on parallel and sub-workflow nodes. The message \
         lists what this node kind accepts.",
        r#"
fork("fan_out") {
    targets("research", "outline")
    onSuccess goto "merge"
}
"#,
        r#"
fork("fan_out") {
    targets("research", "outline")
    onComplete goto "merge"
}
"#,
    ),
    e(
        "E0103",
        "wrong value type",
        "The value has the wrong type for this property or argument, e.g. a string where a \
         number is expected or a number where a Boolean is expected. The only conversion is \
         widening: an Int is accepted where a Long or a Double is expected (`temperature = 1`, \
         `whenScore lessThan 70 goto …`).",
        r#"
maxTokens = "4096"
maintainContext = "yes"
"#,
        r#"
maxTokens = 4096
maintainContext = true
"#,
    ),
    e(
        "E0104",
        "given twice",
        "A property, block or list statement (such as `writes(…)`) is given twice in the same \
         place. Upstream Hensu silently keeps the last one, which usually hides a copy-paste \
         mistake, so hensu rejects it; the secondary label shows the first occurrence. The \
         exception is `agents { }`, which may appear several times: its agents accumulate (their \
         ids must still be unique, see E0202).",
        r#"
node("draft") {
    prompt = "Write a first draft."
    agent = "writer"
    prompt = "Write a short first draft."
}
"#,
        r#"
node("draft") {
    agent = "writer"
    prompt = "Write a short first draft."
}
"#,
    ),
    e(
        "E0105",
        "missing required property",
        "A required property is missing or blank: an agent needs a `role` and a `model`, a \
         parallel branch needs an `agent`, a generic node needs an `executorType`, and a \
         sub-workflow node needs a `target`.",
        r#"
agents {
    agent("writer") {
        role = "Technical writer"
    }
}
"#,
        r#"
agents {
    agent("writer") {
        role = "Technical writer"
        model = Models.GPT_4O
    }
}
"#,
    ),
    e(
        "E0106",
        "missing graph or start node",
        "A workflow needs a `graph { }` block, and the graph needs a `start at \"node\"` \
         statement naming the node the run begins with.",
        r#"
graph {
    node("draft") {
        agent = "writer"
        onSuccess goto "done"
    }
    end("done")
}
"#,
        r#"
graph {
    start at "draft"
    node("draft") {
        agent = "writer"
        onSuccess goto "done"
    }
    end("done")
}
"#,
    ),
    e(
        "E0107",
        "value out of range",
        "The value is outside the range this property allows: a `retry` count must be at least \
         0; an agent's `temperature` in [0, 2] and `topP` in [0, 1]; a consensus `threshold` in \
         (0, 1]; a branch `weight` greater than 0; a rubric's `pass_threshold` in [0, 100]; \
         `maxSteps` at least 1; timeouts not negative.",
        r#"
agent("writer") {
    role = "Technical writer"
    model = "gpt-4o"
    temperature = 3.5
}
"#,
        r#"
agent("writer") {
    role = "Technical writer"
    model = "gpt-4o"
    temperature = 0.7
}
"#,
    ),
    e(
        "E0108",
        "unknown constant",
        "The enum constant or `Models.*` name does not exist; the help suggests the closest one. \
         Valid values: VarType STRING, NUMBER, BOOLEAN, LIST_STRING; ReviewMode REQUIRED, \
         OPTIONAL, DISABLED; ConsensusStrategy MAJORITY_VOTE, UNANIMOUS, WEIGHTED_VOTE, \
         JUDGE_DECIDES; MergeStrategy COLLECT_ALL, FIRST_SUCCESSFUL, CONCATENATE, MERGE_MAPS; \
         ExitStatus SUCCESS, FAILURE, CANCEL; LogLevel TRACE, DEBUG, INFO, WARN, ERROR. A model \
         need not be a `Models.*` constant: any string is a valid model id.",
        r#"
review(ReviewMode.ALWAYS)
model = Models.GPT4O
"#,
        r#"
review(ReviewMode.REQUIRED)
model = Models.GPT_4O   // or model = "gpt-4o"
"#,
    ),
    e(
        "E0109",
        "required list is empty",
        "At least one entry is required here: a parallel node needs a `branch`, a fork needs \
         `targets(…)`, a join needs `await(…)` and `writes(…)`, and an action node needs an \
         `execute(…)` or `send(…)` action.",
        r#"
action("notify") {
    onSuccess goto "done"
}
"#,
        r#"
action("notify") {
    send("slack", mapOf("text" to "Review finished: {summary}"))
    onSuccess goto "done"
}
"#,
    ),
    // ------------------------------------------------------------ names and references: E02xx
    e(
        "E0201",
        "duplicate node id",
        "Two nodes of the graph have the same id (end nodes included). Upstream Hensu silently \
         replaces the first node with the second, so transitions written for the first one \
         would reach the second. The secondary label shows the first definition.",
        r#"
node("draft") {
    agent = "writer"
    onSuccess goto "review"
}
node("draft") {
    agent = "editor"
    onSuccess goto "done"
}
"#,
        r#"
node("draft") {
    agent = "writer"
    onSuccess goto "review"
}
node("review") {
    agent = "editor"
    onSuccess goto "done"
}
"#,
    ),
    e(
        "E0202",
        "duplicate agent id",
        "Two agents have the same id, possibly in different `agents { }` blocks. Upstream Hensu \
         silently keeps the last definition. The secondary label shows the first one.",
        r#"
agents {
    agent("writer") { role = "Writer"; model = "gpt-4o" }
    agent("writer") { role = "Editor"; model = "gpt-4o" }
}
"#,
        r#"
agents {
    agent("writer") { role = "Writer"; model = "gpt-4o" }
    agent("editor") { role = "Editor"; model = "gpt-4o" }
}
"#,
    ),
    e(
        "E0203",
        "duplicate state variable",
        "`state { }` declares the same variable twice (as `input` or `variable`). Each variable \
         is declared once, with one type.",
        r#"
state {
    input("topic", VarType.STRING)
    variable("topic", VarType.STRING, "the refined topic")
}
"#,
        r#"
state {
    input("topic", VarType.STRING)
    variable("refined_topic", VarType.STRING, "the refined topic")
}
"#,
    ),
    e(
        "E0204",
        "unknown node",
        "A referenced node id does not exist in the graph. Node ids are referenced by transition \
         targets, `start at`, fork `targets`, join `await`, `revise` targets and escalation \
         (`otherwise`) targets. Upstream Hensu checks only the transitions of standard nodes at \
         build time; the others fail at run time with `Node not found`. The help suggests the \
         closest existing id.",
        r#"
node("draft") {
    agent = "writer"
    onSuccess goto "reveiw"
}
node("review") { /* … */ }
"#,
        r#"
node("draft") {
    agent = "writer"
    onSuccess goto "review"
}
node("review") { /* … */ }
"#,
    ),
    e(
        "E0205",
        "unknown agent",
        "A node's or branch's `agent`, or a consensus `judge`, names an agent that is not \
         declared in `agents { }`. Upstream Hensu never checks this, and the run fails when the \
         node executes. The help suggests the closest declared agent.",
        r#"
agents {
    agent("writer") { role = "Writer"; model = "gpt-4o" }
}
graph {
    node("draft") {
        agent = "wrtier"
        onSuccess goto "done"
    }
}
"#,
        r#"
node("draft") {
    agent = "writer"
    onSuccess goto "done"
}
"#,
    ),
    e(
        "E0206",
        "duplicate branch id",
        "Two branches of one parallel node have the same id. Branch results are keyed by branch \
         id, so one branch's result would hide the other's.",
        r#"
parallel("vote") {
    branch("critic") { agent = "critic_a" }
    branch("critic") { agent = "critic_b" }
    onConsensus goto "publish"
}
"#,
        r#"
parallel("vote") {
    branch("critic_a") { agent = "critic_a" }
    branch("critic_b") { agent = "critic_b" }
    onConsensus goto "publish"
}
"#,
    ),
    e(
        "E0207",
        "invalid identifier",
        "Node, agent, variable and workflow ids must start with an ASCII letter or digit, \
         continue with letters, digits, `.`, `_` or `-`, and be at most 255 characters long \
         (`[A-Za-z0-9][A-Za-z0-9._-]*`). The Hensu server rejects other ids, so hensu rejects \
         them when compiling. A workflow id is derived from its name (spaces become `_`, other \
         characters outside `[A-Za-z0-9_-]` are dropped, then lowercased), so a name like \
         `\"!!!\"` gives an empty, invalid id.",
        r#"
node("review step") { /* … */ }
"#,
        r#"
node("review_step") { /* … */ }
"#,
    ),
    e(
        "E0208",
        "prompt or rubric file not found",
        "A `prompt` or `rubric` value ending in `.md` names a file, looked up in the `prompts/` \
         or `rubrics/` directory of the working directory (subdirectories allowed), and that \
         file does not exist. Note that any inline text ending in `.md` is taken as a file name.",
        r#"
node("summarize") {
    agent = "writer"
    prompt = "sumarize.md"
    onSuccess goto "done"
}
"#,
        "Fix the file name (`prompt = \"summarize.md\"` for `prompts/summarize.md`) or create \
         the file.",
    ),
    e(
        "E0209",
        "prompt or rubric path escapes its directory",
        "A prompt or rubric file must lie inside `prompts/` or `rubrics/`. Absolute paths, `..` \
         components and symbolic links that lead outside the directory are rejected, so that \
         compiling a workflow cannot read arbitrary files.",
        r#"
prompt = "../../notes/summarize.md"
"#,
        "Move the file into `prompts/` (or `rubrics/`) and refer to it relative to that \
         directory, e.g. `prompt = \"summarize.md\"`.",
    ),
    // ------------------------------------------------------------ graph and transitions: E03xx
    e(
        "E0301",
        "overlapping score arms",
        "Two arms of an `onScore` block match some common score. Arms are tried in order and the \
         first match wins, so the later arm would silently never see those scores. \
         `greaterThan`/`lessThan` exclude their bound, the `…OrEqual` forms include it, and \
         `` `in` a..b `` includes both ends. The `otherwise` arm is not part of this check.",
        r#"
onScore {
    whenScore greaterThanOrEqual 80.0 goto "publish"
    whenScore `in` 70.0..85.0 goto "polish"
}
"#,
        r#"
onScore {
    whenScore greaterThanOrEqual 80.0 goto "publish"
    whenScore lessThan 70.0 goto "rewrite"
    otherwise goto "polish"
}
"#,
    ),
    e(
        "E0302",
        "overlapping condition arms",
        "Two arms of an `onCondition` block can match the same value, so the later arm would \
         silently never fire for it. Examples: `equalTo 5` and `greaterThan 3`; two \
         `notEqualTo` arms; `equalTo \"a\"` and `notEqualTo \"b\"`; two comparisons whose \
         intervals intersect. Numbers are compared by value (`5` and `5.0` are equal). The \
         `otherwise` arm is not part of this check.",
        r#"
onCondition("severity") {
    whenValue greaterThan 5 goto "escalate"
    whenValue greaterThanOrEqual 3 goto "review"
}
"#,
        r#"
onCondition("severity") {
    whenValue greaterThan 5 goto "escalate"
    whenValue lessThanOrEqual 5 goto "review"
}
"#,
    ),
    e(
        "E0303",
        "arm after `otherwise`",
        "`otherwise` is the catch-all arm of an `onScore` or `onCondition` block: it must come \
         last, and there can be only one. (Upstream Hensu quietly moves `onScore` arms written \
         after `otherwise` before it; hensu asks you to write them in the order they run.)",
        r#"
onScore {
    otherwise goto "rewrite"
    whenScore greaterThanOrEqual 80.0 goto "publish"
}
"#,
        r#"
onScore {
    whenScore greaterThanOrEqual 80.0 goto "publish"
    otherwise goto "rewrite"
}
"#,
    ),
    e(
        "E0304",
        "bounded rules share a retry counter",
        "Every bounded transition (`revise … retry N otherwise …`, `onFailure retry N otherwise \
         …`) counts its retries in a per-node counter of its trigger kind: failure, approval, \
         consensus, score or condition. Two bounded rules of the same kind on one node would \
         share a counter and use up each other's budget, so a node may have at most one per \
         kind — e.g. not two `revise` arms in one `onScore`, nor a score `revise` arm and an \
         `otherwise revise`.",
        r#"
onScore {
    whenScore lessThan 50.0 revise "outline" retry 2 otherwise "reject"
    otherwise revise "draft" retry 3 otherwise "publish"
}
"#,
        r#"
onScore {
    whenScore lessThan 50.0 revise "outline" retry 2 otherwise "reject"
    otherwise goto "publish"
}
"#,
    ),
    e(
        "E0305",
        "review verdict has nowhere to go",
        "The node is under human `review` and declares an `onApproval` arm but no \
         `onRejection` (or the reverse), and no later unconditional rule catches the other \
         verdict. When the reviewer gives that verdict the run would stop with no valid \
         transition. Declare both arms (a node with neither is fine). If an `onSuccess` or \
         `otherwise` rule after the arm catches the other verdict, this is only warning W0305.",
        r#"
node("draft") {
    agent = "writer"
    review(ReviewMode.REQUIRED)
    onApproval goto "publish"
}
"#,
        r#"
node("draft") {
    agent = "writer"
    review(ReviewMode.REQUIRED)
    onApproval goto "publish"
    onRejection revise "draft" retry 2 otherwise "abandon"
}
"#,
    ),
    e(
        "E0306",
        "fork and join do not match",
        "A fork runs its targets concurrently and hands their results to a join: its \
         `onComplete goto` must name a `join` node, and that join's `await(…)` must list the \
         fork. Otherwise the run fails when the fork completes.",
        r#"
fork("fan_out") {
    targets("research", "outline")
    onComplete goto "merge"
}
join("merge") {
    await("fan_in")
    writes("notes")
    onSuccess goto "write"
}
"#,
        r#"
join("merge") {
    await("fan_out")
    writes("notes")
    onSuccess goto "write"
}
"#,
    ),
    e(
        "E0307",
        "empty score range",
        "The range of `` whenScore `in` a..b `` starts above its end, so it contains no score \
         and the arm can never match.",
        r#"
whenScore `in` 90.0..70.0 goto "polish"
"#,
        r#"
whenScore `in` 70.0..90.0 goto "polish"
"#,
    ),
    e(
        "E0308",
        "`JUDGE_DECIDES` without a judge",
        "With `strategy = ConsensusStrategy.JUDGE_DECIDES` a judge agent makes the final \
         decision, so the `consensus { }` block must name it with `judge = \"agentId\"`.",
        r#"
consensus {
    strategy = ConsensusStrategy.JUDGE_DECIDES
}
"#,
        r#"
consensus {
    strategy = ConsensusStrategy.JUDGE_DECIDES
    judge = "arbiter"
}
"#,
    ),
    e(
        "E0309",
        "join `writes` does not fit the merge strategy",
        "A join stores its merged result in its `writes(…)` variables. `MERGE_MAPS` merges the \
         branch outputs key by key into one or more variables; `COLLECT_ALL` (the default), \
         `FIRST_SUCCESSFUL` and `CONCATENATE` produce a single value and need exactly one \
         variable.",
        r#"
join("merge") {
    await("fan_out")
    mergeStrategy = MergeStrategy.CONCATENATE
    writes("research", "outline")
    onSuccess goto "write"
}
"#,
        r#"
join("merge") {
    await("fan_out")
    mergeStrategy = MergeStrategy.CONCATENATE
    writes("notes")
    onSuccess goto "write"
}
"#,
    ),
    e(
        "E0310",
        "node has no transition",
        "Every node except an `end` node needs at least one transition. A run that reaches this \
         node could never leave it (upstream Hensu fails there at run time with `No valid \
         transition`).",
        r#"
node("draft") {
    agent = "writer"
}
"#,
        r#"
node("draft") {
    agent = "writer"
    onSuccess goto "done"
}
"#,
    ),
    // ----------------------------------------------------- state, schema and types: E04xx
    e(
        "E0401",
        "engine variable used as a variable",
        "`score`, `approved` and `recommendation` are engine variables: the engine sets them \
         from rubric evaluation, human review and consensus. They cannot be listed in a node's \
         `writes`, a branch's `yields`, a sub-workflow's `imports` or `writes`, nor routed on \
         with `onCondition`. Route on them with `onScore` and `onApproval`/`onRejection`, and \
         store the agent's own value under another name (e.g. `review_score`).",
        r#"
node("grade") {
    agent = "grader"
    writes("score")
    onCondition("score") {
        whenValue greaterThan 80 goto "publish"
        otherwise goto "rewrite"
    }
}
"#,
        r#"
node("grade") {
    agent = "grader"
    writes("review_score")
    onCondition("review_score") {
        whenValue greaterThan 80 goto "publish"
        otherwise goto "rewrite"
    }
}
"#,
    ),
    e(
        "E0402",
        "`writes` names an undeclared variable",
        "The workflow declares `state { }`, so every variable a standard or join node lists in \
         `writes(…)` must be declared there, as an `input` or a `variable`.",
        r#"
state {
    input("article", VarType.STRING)
}
// …
node("summarize") {
    writes("summary")
    onSuccess goto "done"
}
"#,
        r#"
state {
    input("article", VarType.STRING)
    variable("summary", VarType.STRING, "a three-sentence summary")
}
"#,
    ),
    e(
        "E0403",
        "placeholder names an undeclared variable",
        "The workflow declares `state { }`, so every `{name}` placeholder in a node prompt, a \
         branch prompt or an action payload must name a declared variable or an engine variable \
         (`score`, `approved`, `recommendation`); otherwise the agent would receive the \
         placeholder unresolved. Only `{identifier}` is a placeholder: `{a-b}` and JSON such as \
         `{\"k\": 1}` are left alone.",
        r#"
state {
    input("article", VarType.STRING)
}
// …
prompt = "Summarize {artcle}"
"#,
        r#"
prompt = "Summarize {article}"
"#,
    ),
    e(
        "E0404",
        "condition variable not in `writes`",
        "`onCondition(\"v\")` routes on a value the node's agent produces, so `v` must be listed \
         in the same node's `writes(…)`: that is what instructs the agent to produce it.",
        r#"
node("triage") {
    agent = "triager"
    onCondition("severity") {
        whenValue greaterThan 5 goto "escalate"
        otherwise goto "queue"
    }
}
"#,
        r#"
node("triage") {
    agent = "triager"
    writes("severity")
    onCondition("severity") {
        whenValue greaterThan 5 goto "escalate"
        otherwise goto "queue"
    }
}
"#,
    ),
    e(
        "E0405",
        "condition operand does not fit the variable's type",
        "The workflow declares the variable's type in `state { }`, and the operand does not fit \
         it: `greaterThan`, `greaterThanOrEqual`, `lessThan` and `lessThanOrEqual` need a NUMBER \
         variable; `equalTo`/`notEqualTo` need a string for a STRING variable, a number for a \
         NUMBER variable and `true`/`false` for a BOOLEAN variable.",
        r#"
state {
    variable("verdict", VarType.STRING)
}
// …
onCondition("verdict") {
    whenValue greaterThan 3 goto "publish"
    otherwise goto "rewrite"
}
"#,
        r#"
onCondition("verdict") {
    whenValue equalTo "accept" goto "publish"
    otherwise goto "rewrite"
}
"#,
    ),
    e(
        "E0406",
        "invalid sub-workflow variable mapping",
        "A sub-workflow node's `imports(…)` copies parent variables into the child and its \
         `writes(…)` copies child variables back into the parent, under the same names. With a \
         parent `state { }`, each name must be declared there; in any case a name may appear \
         only once per list, and not in both lists.",
        r#"
subWorkflow("research") {
    target = "research_flow"
    imports("topic", "topic")
    writes("topic")
    onSuccess goto "write"
}
"#,
        r#"
subWorkflow("research") {
    target = "research_flow"
    imports("topic")
    writes("findings")
    onSuccess goto "write"
}
"#,
    ),
    // ----------------------------------------------------- sub-workflows and projects: E05xx
    e(
        "E0501",
        "unknown sub-workflow",
        "A sub-workflow node's `target` names a workflow id that is not among the workflows \
         compiled together. Compile the child's file together with the parent. The id is \
         derived from the child's name: spaces become `_`, other characters outside \
         `[A-Za-z0-9_-]` are dropped, and the result is lowercased (`\"Research Flow\"` → \
         `research_flow`). The help suggests the closest known id.",
        r#"
subWorkflow("research") {
    target = "Research Flow"
    onSuccess goto "write"
}
"#,
        r#"
subWorkflow("research") {
    target = "research_flow"
    onSuccess goto "write"
}
"#,
    ),
    e(
        "E0502",
        "sub-workflow cycle",
        "Workflows reference each other through sub-workflow nodes in a cycle; the message \
         shows it, e.g. `draft → review → draft`. Running any of them would recurse until the \
         engine's sub-workflow depth limit (16) stops the run.",
        r#"
// draft.hwf
subWorkflow("check") { target = "review"; onSuccess goto "done" }
// review.hwf
subWorkflow("redo") { target = "draft"; onSuccess goto "done" }
"#,
        "Break the cycle: repeat work inside one workflow with a bounded `revise \"p\" retry N \
         otherwise \"x\"` transition instead of calling back into the parent.",
    ),
    e(
        "E0503",
        "child does not provide a mapped variable",
        "The child workflow declares `state { }`, but a variable the parent imports into it or \
         expects back from it is not declared there, or a variable the parent expects back is \
         not written by any standard or join node of the child, so the parent would receive \
         nothing.",
        r#"
// parent
subWorkflow("research") {
    target = "research_flow"
    writes("findings")
    onSuccess goto "write"
}
// child research_flow declares state { input("topic", …) } but no "findings"
"#,
        "Declare the variable in the child's `state { }` and list it in the `writes(…)` of the \
         child node that produces it, or stop expecting it in the parent.",
    ),
    e(
        "E0504",
        "sub-workflow version mismatch",
        "A sub-workflow node pins `targetVersion`, and the child workflow compiled together with \
         it declares a different `version`. Versions are compared as exact strings.",
        r#"
subWorkflow("research") {
    target = "research_flow"
    targetVersion = "1.0.0"
    onSuccess goto "write"
}
// research_flow declares version = "2.0.0"
"#,
        "Update `targetVersion` to the child's version, compile against the intended version of \
         the child, or drop `targetVersion` to accept any version.",
    ),
    e(
        "E0505",
        "duplicate workflow id",
        "Two files compiled together declare the same workflow id, so sub-workflow targets \
         would be ambiguous. Different names can derive the same id: `\"Review Flow\"` and \
         `\"review flow!\"` both give `review_flow`.",
        r#"
// a.hwf
workflow("Review Flow") { /* … */ }
// b.hwf
workflow("review flow!") { /* … */ }
"#,
        "Rename one of the workflows so that their ids differ.",
    ),
    // ---------------------------------------------------------------- driver/loader: E09xx
    e(
        "E0901",
        "cannot read file",
        "hensuc could not read an input file: it does not exist, is a directory, is not \
         readable, or is not valid UTF-8 text.",
        "",
        "Check the path and the file's permissions and encoding (`.hwf` files are UTF-8).",
    ),
    e(
        "E0902",
        "invalid JSON workflow",
        "A `.json` workflow — the compiled wire format, as written by `hensuc build` or by \
         upstream `hensu build` — could not be read as a workflow: it is not valid JSON, a field \
         is missing or has the wrong type, or a discriminator has an unknown value (a node's \
         `nodeType`, a rule's or action's `type`, a condition operator). The label points into \
         the JSON.",
        r#"
"nodes": {
    "check": { "nodeType": "LOOP", "id": "check" }
}
"#,
        "Use a known value — `nodeType` is one of STANDARD, PARALLEL, SUB_WORKFLOW, END, \
         GENERIC, FORK, JOIN, ACTION — or rebuild the JSON from its source workflow.",
    ),
    e(
        "E0903",
        "file too large",
        "The input file is larger than hensuc accepts for one file, so it is refused before \
         lexing (source positions are 32-bit byte offsets, and no workflow needs to be that \
         large).",
        "",
        "Check that the right file was passed; split generated content such as long prompts \
         into `prompts/*.md` files.",
    ),
    // --------------------------------------------------------------------------- warnings
    w(
        "W0001",
        "`package`/`import` ignored",
        "`package` and `import` lines are accepted so that Kotlin `.kt` workflow files compile \
         unchanged, and ignored: everything the DSL needs is always in scope. (Upstream Hensu \
         discards imports too.)",
        r#"
import io.hensu.dsl.builders.*

fun workflow() = workflow("demo") { /* … */ }
"#,
        "Remove the `package` and `import` lines.",
    ),
    w(
        "W0301",
        "unreachable node",
        "No chain of transitions or fork targets leads from the start node to this node, so it \
         can never run — often a typo in a transition target or a forgotten edge.",
        r#"
start at "draft"
node("draft") { agent = "writer"; onSuccess goto "done" }
node("polish") { agent = "editor"; onSuccess goto "done" }
end("done")
"#,
        "Route to the node (`onSuccess goto \"polish\"` in `draft`) or remove it.",
    ),
    w(
        "W0302",
        "no path to an end node",
        "From the start node no chain of transitions reaches any `end(…)` node, so a run can \
         only stop by failing: on a node with no valid transition, or at the `maxSteps` limit.",
        r#"
start at "draft"
node("draft") { agent = "writer"; onSuccess goto "review" }
node("review") { agent = "editor"; onSuccess goto "draft" }
end("done")
"#,
        r#"
node("review") { agent = "editor"; onSuccess goto "done" }
"#,
    ),
    w(
        "W0303",
        "unbounded cycle",
        "The graph has a cycle (shown in the message) that no bounded transition limits: a run \
         can go round it indefinitely, and only the workflow's `maxSteps` (default 1000) stops \
         it — as a failure. Bound the loop with `revise \"p\" retry N otherwise \"x\"`, which \
         re-runs `p` at most N times and then continues at `x`.",
        r#"
node("draft") { agent = "writer"; onSuccess goto "check" }
node("check") {
    agent = "critic"
    writes("ok")
    onCondition("ok") {
        whenValue equalTo true goto "done"
        otherwise goto "draft"
    }
}
"#,
        r#"
node("check") {
    agent = "critic"
    writes("ok")
    onCondition("ok") {
        whenValue equalTo true goto "done"
        otherwise revise "draft" retry 3 otherwise "editor"
    }
}
"#,
    ),
    w(
        "W0304",
        "later rules can never match",
        "Transitions are tried in order and the first match wins. `onSuccess goto` and an \
         `otherwise` arm match every successful result, so success rules after them (another \
         `onSuccess`, `onScore` or `onCondition` arms) can never fire. `onFailure` \
         rules after them are not affected: they still match failures.",
        r#"
node("draft") {
    agent = "writer"
    onSuccess goto "publish"
    onScore {
        whenScore lessThan 70.0 goto "rewrite"
    }
}
"#,
        r#"
node("draft") {
    agent = "writer"
    onScore {
        whenScore lessThan 70.0 goto "rewrite"
    }
    onSuccess goto "publish"
}
"#,
    ),
    w(
        "W0305",
        "review verdict falls through to a catch-all",
        "The node is under human `review` and declares only one of `onApproval`/`onRejection`; \
         the other verdict is caught by the unconditional rule (`onSuccess`, `otherwise`) that \
         follows. That works, but is often unintended — a rejected draft would proceed like an \
         approved one. Declare the missing arm to make the routing explicit.",
        r#"
node("draft") {
    agent = "writer"
    review(ReviewMode.REQUIRED)
    onRejection goto "rewrite"
    onSuccess goto "publish"
}
"#,
        r#"
node("draft") {
    agent = "writer"
    review(ReviewMode.REQUIRED)
    onApproval goto "publish"
    onRejection goto "rewrite"
}
"#,
    ),
    w(
        "W0306",
        "exit arm shadowed by a bounded arm",
        "Rules are tried in order. This arm leaves the node, but an earlier bounded arm \
         (`revise … retry N otherwise …`) matches some of the same results; for those, the \
         bounded arm always wins — it re-runs its target and, once the budget is used up, \
         escalates to its `otherwise` target — so this arm never fires for them. Declare the \
         exit arm first unless retrying first is intended.",
        r#"
node("draft") {
    agent = "writer"
    writes("quality", "blocked")
    onCondition("quality") {
        whenValue lessThan 7 revise "draft" retry 3 otherwise "editor"
    }
    onCondition("blocked") {
        whenValue equalTo true goto "abort"
    }
}
"#,
        r#"
node("draft") {
    agent = "writer"
    writes("quality", "blocked")
    onCondition("blocked") {
        whenValue equalTo true goto "abort"
    }
    onCondition("quality") {
        whenValue lessThan 7 revise "draft" retry 3 otherwise "editor"
    }
}
"#,
    ),
    w(
        "W0307",
        "consensus branch yields nothing",
        "In a parallel node with `consensus { }`, this branch declares no `yields(…)`: it casts \
         its vote but contributes no data to the workflow state after consensus. That is right \
         for a pure vote; otherwise list the variables the branch produces.",
        r#"
parallel("vote") {
    branch("critic") { agent = "critic" }
    consensus { strategy = ConsensusStrategy.MAJORITY_VOTE }
    onConsensus goto "publish"
}
"#,
        r#"
parallel("vote") {
    branch("critic") {
        agent = "critic"
        yields("critique")
    }
    consensus { strategy = ConsensusStrategy.MAJORITY_VOTE }
    onConsensus goto "publish"
}
"#,
    ),
    w(
        "W0308",
        "unused state variable",
        "A declared `variable` is never written by any node, branch or sub-workflow (and is not \
         an input), so it is always empty; or an `input` is never read by a prompt, a condition \
         or a sub-workflow import, so it is passed in for nothing.",
        r#"
state {
    input("article", VarType.STRING)
    variable("summary", VarType.STRING)
}
// no node writes("summary")
"#,
        "Use the variable (e.g. `writes(\"summary\")` on the node that produces it) or remove \
         its declaration.",
    ),
    w(
        "W0309",
        "score threshold outside 0..100",
        "Scores are on a 0 to 100 scale, so a threshold outside it makes the arm match always \
         or never.",
        r#"
whenScore greaterThan 150.0 goto "publish"
"#,
        r#"
whenScore greaterThan 90.0 goto "publish"
"#,
    ),
    w(
        "W0310",
        "engine variable in `writes` (JSON)",
        "A `.json` workflow lists an engine variable (`score`, `approved`, `recommendation`) in \
         a standard node's `writes`. The engine infers these from the node's transitions, so \
         the entry is redundant. It is accepted in JSON, because the upstream engine accepts \
         such files, but rejected in `.hwf` sources (E0401).",
        r#"
"writes": ["summary", "score"]
"#,
        r#"
"writes": ["summary"]
"#,
    ),
];
