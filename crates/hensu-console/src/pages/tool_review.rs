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

#[cfg(test)]
mod tests {
    use hensu_runtime::ToolCallReview;
    use hensu_server::auth::Tenant;
    use serde_json::json;

    use super::{edited_arguments, section};
    use crate::session::Viewer;

    fn call() -> ToolCallReview {
        ToolCallReview {
            tool: "delete_file".into(),
            arguments: json!({"path": "/tmp/a", "force": true}),
        }
    }

    fn viewer() -> Viewer {
        Viewer {
            tenant: Tenant {
                tenant_id: "acme".into(),
                subject: "ann".into(),
                valid_until: None,
            },
            csrf: "tok".into(),
            dev: false,
        }
    }

    #[test]
    fn edited_arguments_must_be_an_object_and_unchanged_ones_are_none() {
        let c = call();
        assert_eq!(
            edited_arguments(&c, r#"{"force": true, "path": "/tmp/a"}"#),
            Ok(None)
        );
        let edited = edited_arguments(&c, r#"{"path": "/tmp/b"}"#)
            .expect("valid")
            .expect("edited");
        assert_eq!(json!(edited), json!({"path": "/tmp/b"}));
        assert!(
            edited_arguments(&c, "[1]")
                .expect_err("refused")
                .contains("JSON object")
        );
        assert!(
            edited_arguments(&c, "{")
                .expect_err("refused")
                .contains("not valid JSON")
        );
    }

    #[test]
    fn the_section_shows_the_arguments_and_after_an_edit_its_diff() {
        let c = call();
        let plain = section(&viewer(), "r1", &c, "tool-1", None).into_string();
        assert!(plain.contains("<code>delete_file</code>"), "{plain}");
        assert!(
            plain.contains("&quot;path&quot;: &quot;/tmp/a&quot;"),
            "{plain}"
        );
        assert!(
            plain.contains(r#"name="correlationId" value="tool-1""#),
            "{plain}"
        );
        assert!(!plain.contains("tool-diff"), "no diff before an edit");
        assert!(!plain.contains("backtrack"), "a tool call is not sent back");
        let edited = json!({"path": "/tmp/b", "dry_run": true});
        let edited = edited.as_object().expect("an object");
        let page = section(&viewer(), "r1", &c, "tool-1", Some(edited)).into_string();
        let diff = &page[page.find("tool-diff").expect("a diff")..];
        // Changed, removed and added arguments, each with the model's value and the edit's.
        assert!(diff.contains("<code>path</code></td><td class=\"removed\"><code>&quot;/tmp/a&quot;</code></td><td class=\"added\"><code>&quot;/tmp/b&quot;</code>"), "{diff}");
        assert!(diff.contains("<code>force</code></td><td class=\"removed\"><code>true</code></td><td class=\"added\"><span class=\"muted\">(absent)</span>"), "{diff}");
        assert!(diff.contains("<code>dry_run</code></td><td class=\"removed\"><span class=\"muted\">(absent)</span>"), "{diff}");
        // The form carries the edit.
        assert!(page.contains("&quot;dry_run&quot;: true"), "{page}");
    }
}
