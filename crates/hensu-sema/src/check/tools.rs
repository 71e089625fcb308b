//! W0601: an agent names a tool that no configured MCP server offers (docs/mcp.md). Needs the
//! offered tool names, which only a caller that listed the servers knows, so it is not part of
//! [`super::check_workflow`]; `hensuc check` runs it when the servers can be listed.

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::Workflow;

use crate::origins::Origins;
use crate::suggest::help_and_fix;

/// W0601 for each tool an agent declares that is not in `offered` (the MCP servers' tools plus
/// the `send` handler ids, which agents may call too).
pub fn check_offered_tools(
    wf: &Workflow,
    origins: &Origins,
    offered: &[String],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (id, agent) in &wf.agents {
        let origin = origins.agents.get(id);
        for (i, tool) in agent.tools.iter().enumerate() {
            if offered.iter().any(|o| o == tool) {
                continue;
            }
            let span = origin
                .and_then(|o| {
                    o.tools
                        .get(i)
                        .copied()
                        .or_else(|| o.props.get("tools").copied())
                })
                .or(origin.map(|o| o.decl))
                .unwrap_or(origins.fallback);
            let d = Diagnostic::new(
                codes::W0601,
                format!("agent `{id}` names tool `{tool}`, which no configured MCP server offers"),
                span,
                "not offered by any MCP server",
            );
            let (mut d, suggested) =
                help_and_fix(d, tool, span, offered.iter().map(String::as_str));
            if !suggested {
                d = d.with_help(if offered.is_empty() {
                    "no tools are offered; check `[mcp.servers]` in hensu.toml".to_string()
                } else {
                    format!("the offered tools are: {}", offered.join(", "))
                });
            }
            out.push(origins.place(d.in_file(origins.file)));
        }
    }
    hensu_diagnostics::sort_diagnostics(&mut out);
    out
}
