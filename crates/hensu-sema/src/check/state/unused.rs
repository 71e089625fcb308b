//! W0308: the state's variables no node writes and the inputs no node reads.

use hensu_diagnostics::{Diagnostic, codes};

use super::super::Ctx;
use super::{Marks, Schema};

/// W0308: a declared variable never written (and not an input), or an input never read.
pub(super) fn unused_variables(
    cx: &mut Ctx<'_>,
    schema: &Schema<'_>,
    marks: &Marks,
    opaque_reader: bool,
) {
    for (i, var) in schema.variables.iter().enumerate() {
        let name = var.name.as_str();
        let span = || {
            cx.origins
                .variables
                .get(name)
                .map(|v| v.name)
                .or(cx.origins.state)
                .unwrap_or_else(|| cx.fallback())
        };
        let is = |set: &Vec<bool>| set.get(i).copied().unwrap_or(true);
        if var.is_input {
            if !opaque_reader && !is(&marks.read) {
                let d = Diagnostic::new(
                    codes::W0308,
                    format!("input `{name}` is never read"),
                    span(),
                    "no prompt, payload, condition or sub-workflow import uses it",
                )
                .with_help(format!("use `{{{name}}}` in a prompt, or remove the input"));
                cx.emit(d);
            }
        } else if !is(&marks.written) {
            let d = Diagnostic::new(
                codes::W0308,
                format!("variable `{name}` is never written"),
                span(),
                "no node writes, yields or exports it",
            )
            .with_help(format!(
                "add `writes(\"{name}\")` to the node that produces it, make it an `input`, or remove it"
            ));
            cx.emit(d);
        }
    }
}
