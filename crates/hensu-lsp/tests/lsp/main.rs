//! Engine tests, gleam style: the cursor is marked `$0` in the source, the engine answers the
//! request directly (no JSON-RPC) and the answer is rendered as text and snapshotted. One module
//! per LSP method; the shared documents and helpers are here.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::mutable_key_type)] // `WorkspaceEdit::changes` is keyed by `Uri`

mod code_action;
mod completion;
mod definition;
mod diagnostics;
mod document_highlight;
mod document_symbol;
mod extends;
mod folding_range;
mod formatting;
mod hover;
mod idle_trim;
mod incremental;
mod inlay_hint;
mod pending;
mod references;
mod rename;
mod robustness;
mod saga;
mod selection_range;
mod semantic_tokens;
mod signature_help;
mod workspace_symbol;

use std::str::FromStr;

use hensu_lsp::{Engine, MemoryHost};
use lsp_types::*;

const MAIN: &str = "/p/workflows/main.hwf";

/// A workflow using every kind of reference.
const DOC: &str = r#"/**
 * Draft, score and review an article.
 */
fun pipeline() = workflow("Content Pipeline") {
    description = "Write, self-score, revise and review an article"

    state {
        input("topic", VarType.STRING)
        /** The article text in markdown. */
        variable("article", VarType.STRING, "the article text")
        variable("verdict", VarType.STRING)
        variable("summary", VarType.STRING)
    }

    agents {
        /** Writes every draft. */
        agent("writer") { role = "Content Writer"; model = Models.CLAUDE_SONNET_4_5 }
        agent("reviewer") { role = "Editor"; model = Models.GPT_4O; temperature = 0.2 }
    }

    graph {
        start at "write"

        /** The first draft. */
        node("write") {
            agent = "writer"
            prompt = "Write an article about {topic}."
            writes("article")
            onScore {
                whenScore greaterThanOrEqual 70.0 goto "review"
                whenScore lessThan 70.0 revise "write" withFeedback retry 3 otherwise "failed"
            }
        }

        node("review") {
            agent = "reviewer"
            prompt = "Review this article about {topic}:\n\n{article}"
            writes("verdict")
            onCondition("verdict") {
                whenValue equalTo "ok" goto "summarize"
                otherwise goto "failed"
            }
        }

        subWorkflow("summarize") {
            target = "summarizer"
            imports("article")
            writes("summary")
            onSuccess goto "done"
        }

        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

const SUMMARIZER: &str = r#"fun summarizer() = workflow("summarizer") {
    state {
        input("article", VarType.STRING)
        variable("summary", VarType.STRING)
    }
    agents {
        agent("w") { role = "Summarizer"; model = "stub" }
    }
    graph {
        start at "sum"
        node("sum") {
            agent = "w"
            prompt = "Summarize {article}"
            writes("summary")
            onSuccess goto "end"
        }
        end("end")
    }
}
"#;

fn uri(path: &str) -> Uri {
    Uri::from_str(&format!("file://{path}")).unwrap()
}

fn host() -> MemoryHost {
    MemoryHost::new()
        .with("/p/workflows/summarizer.hwf", SUMMARIZER)
        .with("/p/prompts/write.md", "Write about {topic}.\n")
}

/// Removes the `$0` marker; returns the text and the marker's position.
fn split_marker(src: &str) -> (String, Position) {
    let at = src.find("$0").expect("a $0 marker");
    let text = format!("{}{}", &src[..at], &src[at + 2..]);
    let before = &src[..at];
    let line = before.matches('\n').count() as u32;
    let col = before
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .chars()
        .map(char::len_utf16)
        .sum::<usize>() as u32;
    (text, Position::new(line, col))
}

fn open(src: &str) -> (Engine, Uri, Position, String) {
    let (text, pos) = if src.contains("$0") {
        split_marker(src)
    } else {
        (src.to_string(), Position::new(0, 0))
    };
    let mut engine = Engine::new(host());
    let u = uri(MAIN);
    engine.open(u.clone(), 1, text.clone());
    (engine, u, pos, text)
}

fn tdp(u: &Uri, pos: Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams {
        text_document: TextDocumentIdentifier { uri: u.clone() },
        position: pos,
    }
}

/// Byte offset of an LSP position (UTF-16 columns) in `text`.
fn offset(text: &str, pos: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let mut units = 0;
    for (i, c) in text[line_start..].char_indices() {
        if units >= pos.character as usize || c == '\n' {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// `line:col` and the line with the range marked `[…]`.
fn show_range(text: &str, r: Range) -> String {
    let a = offset(text, r.start);
    let b = offset(text, r.end);
    let ls = text[..a].rfind('\n').map_or(0, |i| i + 1);
    let le = text[b..].find('\n').map_or(text.len(), |i| b + i);
    format!(
        "{}:{} {}[{}]{}",
        r.start.line + 1,
        r.start.character + 1,
        text[ls..a].trim_start(),
        &text[a..b],
        &text[b..le]
    )
}

fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut edits: Vec<&TextEdit> = edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(offset(text, e.range.start)));
    let mut out = text.to_string();
    for e in edits {
        let a = offset(text, e.range.start);
        let b = offset(text, e.range.end);
        out.replace_range(a..b, &e.new_text);
    }
    out
}
