//! Turning a `tools/call` result into the text an agent or action node gets, with the checks
//! agent output gets (docs/language.md, *Agents*): size cap, control and Unicode manipulation
//! characters.

use std::time::Duration;

use serde_json::Value;

/// Why a tool call produced no result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolFailure {
    #[error("unknown tool '{tool}'; the MCP servers offer: {}", list(available))]
    UnknownTool {
        tool: String,
        available: Vec<String>,
    },
    #[error("the tool arguments must be a JSON object")]
    BadArguments,
    #[error("no result within {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("{0}")]
    Transport(String),
    /// The tool ran and reported an error (`isError: true`, or a JSON-RPC error).
    #[error("the tool reported an error: {0}")]
    Tool(String),
    #[error("the result is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("the result {0}")]
    Invalid(hensu_runtime::OutputViolation),
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

/// The text of a `tools/call` result object: its `structuredContent` as compact JSON when
/// present, else its text content blocks joined by newlines (other block kinds are named,
/// e.g. `[image]`); `null` or `{}` gives `{}`. `isError: true` is a failure carrying that text.
pub fn render_result(result: Value, max_bytes: usize) -> Result<String, ToolFailure> {
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let text = match result.get("structuredContent") {
        Some(v) if !v.is_null() && !is_error => v.to_string(),
        _ => {
            let blocks: Vec<String> = result
                .get("content")
                .and_then(Value::as_array)
                .map(|blocks| {
                    blocks
                        .iter()
                        .map(|b| match b.get("text").and_then(Value::as_str) {
                            Some(t) => t.to_string(),
                            None => format!(
                                "[{}]",
                                b.get("type").and_then(Value::as_str).unwrap_or("content")
                            ),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if blocks.is_empty() {
                "{}".to_string()
            } else {
                blocks.join("\n")
            }
        }
    };
    // Size first: a huge result is refused without scanning it.
    if text.len() > max_bytes {
        return Err(ToolFailure::TooLarge {
            size: text.len(),
            limit: max_bytes,
        });
    }
    hensu_runtime::validate_output(&text).map_err(ToolFailure::Invalid)?;
    if is_error {
        return Err(ToolFailure::Tool(text));
    }
    Ok(text)
}
