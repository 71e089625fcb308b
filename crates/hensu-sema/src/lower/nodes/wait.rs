//! `wait("id") { … }` and `awaitSignal("id") { … }`: durable timers and signal waits
//! (docs/language.md, *Timers and signals*).

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{Node, WaitFor, WaitNode};
use hensu_syntax::ast::Stmt;

use crate::lower::transitions::RuleSink;
use crate::lower::values::Quoted;
use crate::lower::{Lowerer, Shape};
use crate::origins::NodeOrigin;
use crate::schema::BlockKind;

impl Lowerer<'_> {
    pub(super) fn wait(
        &mut self,
        kind: BlockKind,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut duration: Option<u64> = None;
        let mut until: Option<String> = None;
        let mut signal: Option<String> = None;
        let mut timeout: Option<u64> = None;
        let mut writes = Vec::new();
        self.node_body(kind, body, sink, |this, spec, shape, _| {
            match (spec.name, shape) {
                ("duration", Shape::Assign { value, .. }) => {
                    o.props.insert("duration", value.span);
                    if let Some(ms) = this.duration(value, &"`duration`") {
                        duration = this.positive_duration(ms, value.span, "duration");
                    }
                }
                ("timeout", Shape::Assign { value, .. }) => {
                    o.props.insert("timeout", value.span);
                    if let Some(ms) = this.duration(value, &"`timeout`") {
                        timeout = this.positive_duration(ms, value.span, "timeout");
                    }
                }
                ("until", Shape::Assign { value, .. }) => {
                    o.props.insert("until", value.span);
                    o.placeholders.extend(Self::string_placeholders(value));
                    until = this.string(value, &Quoted("until"));
                }
                ("signal", Shape::Assign { value, .. }) => {
                    o.props.insert("signal", value.span);
                    signal = this.string(value, &Quoted("signal"));
                }
                ("writes", Shape::Call(c)) => {
                    let names = this.names(c, spec, false);
                    o.writes = names.iter().map(|(_, s)| *s).collect();
                    writes = names.into_iter().map(|(s, _)| s).collect();
                }
                _ => {}
            }
        });
        let wait = if kind == BlockKind::SignalNode {
            WaitFor::Signal {
                name: signal
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or_else(|| id.to_string()),
                timeout_ms: timeout,
            }
        } else {
            match (
                duration,
                until,
                o.props.contains_key("duration"),
                o.props.contains_key("until"),
            ) {
                (Some(ms), None, _, false) => WaitFor::Duration { ms },
                (None, Some(template), false, _) => WaitFor::Until { template },
                // The duration was refused already (E0103, E0113): no second diagnostic.
                (None, None, true, false) => WaitFor::Duration { ms: 1 },
                (_, _, has_duration, has_until) => {
                    let (label_span, what) = match (has_duration, has_until) {
                        (true, true) => (
                            o.props.get("until").copied().unwrap_or(o.id),
                            format!("wait node `{id}` has both `duration` and `until`"),
                        ),
                        _ => (
                            o.id,
                            format!("wait node `{id}` has neither `duration` nor `until`"),
                        ),
                    };
                    let d = Diagnostic::new(codes::E0115, what, label_span, "here").with_help(
                        "give exactly one: `duration = 30.minutes` or `until = \"{deadline}\"`",
                    );
                    self.emit(d);
                    WaitFor::Duration { ms: 1 }
                }
            }
        };
        Node::Wait(WaitNode {
            id: id.to_string(),
            wait,
            writes,
            transition_rules: Vec::new(),
        })
    }
}
