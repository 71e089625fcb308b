//! The review page of a gated tool call (docs/mcp.md, *Tool approval*): the tool and the
//! arguments the model gave it, a form to approve them (optionally edited: a JSON object) or
//! to reject the call with feedback for the model. "Show changes" re-renders the page with the
//! diff of the edit before it is approved.

use hensu_runtime::ToolCallReview;
use maud::{Markup, html};
use serde_json::{Map, Value};

use crate::session::Viewer;

/// The edited arguments a form carries: `Ok(None)` when they are the model's unchanged, the
/// refusal's text when they are not a JSON object.
pub fn edited_arguments(
    call: &ToolCallReview,
    text: &str,
) -> Result<Option<Map<String, Value>>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) if Value::Object(m.clone()) == call.arguments => Ok(None),
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(_) => Err("The edited arguments must be a JSON object.".to_string()),
        Err(e) => Err(format!("The edited arguments are not valid JSON: {e}")),
    }
}

/// The tool call, its arguments (edited ones in the form when `edited` is given, with their
/// diff), and the decision forms.
pub fn section(
    viewer: &Viewer,
    run_id: &str,
    call: &ToolCallReview,
    correlation: &str,
    edited: Option<&Map<String, Value>>,
) -> Markup {
    let action = format!("/console/reviews/{run_id}");
    let shown = match edited {
        Some(e) => serde_json::to_string_pretty(e),
        None => serde_json::to_string_pretty(&call.arguments),
    }
    .unwrap_or_default();
    let hidden = html! {
        input type="hidden" name="_csrf" value=(viewer.csrf);
        input type="hidden" name="correlationId" value=(correlation);
    };
    html! {
        section aria-labelledby="tool-h" {
            h2 id="tool-h" { "Tool call" }
            p { "The agent asks to call tool " code { (call.tool) } " with these arguments:" }
            pre.output id="tool-arguments" { (serde_json::to_string_pretty(&call.arguments).unwrap_or_default()) }
        }
        @if let Some(e) = edited {
            (diff(call, e))
        }
        section.decisions aria-labelledby="decide-h" {
            h2 id="decide-h" { "Decision" }
            form.decision.stack method="post" action=(action) {
                (hidden)
                input type="hidden" name="decision" value="approve";
                label for="tool-edit" { "Arguments (edit before approving)" }
                p.hint id="tool-edit-hint" { "A JSON object; the call runs once with exactly these arguments." }
                textarea id="tool-edit" name="arguments" rows="10" aria-describedby="tool-edit-hint" spellcheck="false" { (shown) }
                button type="submit" name="step" value="preview" { "Show changes" }
                button.primary type="submit" name="step" value="approve" { "Approve the call" }
            }
            form.decision.stack method="post" action=(action) {
                (hidden)
                input type="hidden" name="decision" value="reject";
                label for="reject-reason" { "Why not (the model reads this)" }
                textarea id="reject-reason" name="reason" rows="3" required {}
                button.danger type="submit" { "Reject the call" }
            }
        }
    }
}

/// The arguments an edit changes: one row per argument, before and after.
fn diff(call: &ToolCallReview, edited: &Map<String, Value>) -> Markup {
    let changes = hensu_runtime::argument_changes(&call.arguments, edited);
    let cell = |v: &Option<Value>| match v {
        Some(v) => html! { code { (v.to_string()) } },
        None => html! { span.muted { "(absent)" } },
    };
    html! {
        section id="tool-diff" aria-labelledby="diff-h" {
            h2 id="diff-h" { "Your changes" }
            @if changes.is_empty() {
                p.muted { "The arguments are unchanged." }
            } @else {
                table {
                    thead { tr { th scope="col" { "Argument" } th scope="col" { "The model's" } th scope="col" { "Yours" } } }
                    tbody {
                        @for c in &changes {
                            tr { td { code { (c.key) } } td.removed { (cell(&c.before)) } td.added { (cell(&c.after)) } }
                        }
                    }
                }
            }
        }
    }
}
