//! Reading node payloads, branches, actions, transition rules and conditions.

use serde_json::Value;

use super::{JsonErrorKind, Obj, R, Reader, names};
use crate::model::*;
use crate::number::canonical_number;
use crate::wire::source_map::{child_path, index_path};

impl Reader<'_> {
    pub(super) fn node(&self, v: &Value, path: &str, key: &str) -> R<Node> {
        let m = self.obj(v, path)?;
        let id = self.check_id(m, path, key)?;
        let tp = child_path(path, "nodeType");
        let node_type = match Self::field(m, "nodeType") {
            None => return Err(self.missing(&tp)),
            Some(Value::String(s)) => s.as_str(),
            Some(other) => return Err(self.wrong_type(&tp, "a string", other)),
        };
        let Some(kind) = NodeKind::parse(node_type) else {
            return Err(self.unknown(
                JsonErrorKind::UnknownNodeType,
                &tp,
                "nodeType",
                node_type,
                &names(NodeKind::ALL),
            ));
        };
        let node = match kind {
            NodeKind::Standard => {
                let review_config = match Self::field(m, "reviewConfig") {
                    None => None,
                    Some(rv) => {
                        let rp = child_path(path, "reviewConfig");
                        let r = self.obj(rv, &rp)?;
                        Some(ReviewConfig {
                            mode: self.enum_value(
                                r,
                                &rp,
                                "mode",
                                None,
                                ReviewMode::parse,
                                &names(ReviewMode::ALL),
                            )?,
                            allow_backtrack: self.req_bool(r, &rp, "allowBacktrack")?,
                            allow_edit: self.req_bool(r, &rp, "allowEdit")?,
                        })
                    }
                };
                Node::Standard(StandardNode {
                    agent_id: self.opt_str(m, path, "agentId")?,
                    prompt: self.opt_str(m, path, "prompt")?,
                    rubric: self.rubric(m, path, &id)?,
                    review_config,
                    transition_rules: self.rules(m, path)?,
                    writes: self.str_list(m, path, "writes")?,
                    id,
                })
            }
            NodeKind::End => Node::End(EndNode {
                status: self.enum_value(
                    m,
                    path,
                    "status",
                    Some(ExitStatus::Success),
                    ExitStatus::parse,
                    &names(ExitStatus::ALL),
                )?,
                id,
            }),
            NodeKind::Action => {
                let ap = child_path(path, "actions");
                let actions = match Self::field(m, "actions") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, a)| self.action(a, &index_path(&ap, i)))
                        .collect::<R<Vec<_>>>()?,
                    Some(other) => return Err(self.wrong_type(&ap, "an array", other)),
                };
                Node::Action(ActionNode {
                    actions,
                    transition_rules: self.rules(m, path)?,
                    writes: self.str_list(m, path, "writes")?,
                    id,
                })
            }
            NodeKind::Generic => Node::Generic(GenericNode {
                executor_type: self.req_str(m, path, "executorType")?,
                config: self.value_map(m, path, "config")?,
                transition_rules: self.rules(m, path)?,
                rubric: self.rubric(m, path, &id)?,
                id,
            }),
            NodeKind::Parallel => {
                let bp = child_path(path, "branches");
                let branches = match Self::field(m, "branches") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, b)| self.branch(b, &index_path(&bp, i)))
                        .collect::<R<Vec<_>>>()?,
                    Some(other) => return Err(self.wrong_type(&bp, "an array", other)),
                };
                let consensus_config = match Self::field(m, "consensusConfig") {
                    None => None,
                    Some(cv) => {
                        let cp = child_path(path, "consensusConfig");
                        let c = self.obj(cv, &cp)?;
                        Some(ConsensusConfig {
                            judge_agent_id: self.opt_str(c, &cp, "judgeAgentId")?,
                            strategy: self.enum_value(
                                c,
                                &cp,
                                "strategy",
                                Some(ConsensusStrategy::MajorityVote),
                                ConsensusStrategy::parse,
                                &names(ConsensusStrategy::ALL),
                            )?,
                            threshold: self.opt_f64(c, &cp, "threshold")?,
                        })
                    }
                };
                Node::Parallel(ParallelNode {
                    branches,
                    consensus_config,
                    transition_rules: self.rules(m, path)?,
                    id,
                })
            }
            NodeKind::Fork => Node::Fork(ForkNode {
                targets: self.str_list(m, path, "targets")?,
                target_configs: self.value_map(m, path, "targetConfigs")?,
                transition_rules: self.rules(m, path)?,
                wait_for_all: self.bool_or(m, path, "waitForAll", false)?,
                id,
            }),
            NodeKind::Join => Node::Join(JoinNode {
                await_targets: self.str_list(m, path, "awaitTargets")?,
                merge_strategy: self.enum_value(
                    m,
                    path,
                    "mergeStrategy",
                    Some(MergeStrategy::CollectAll),
                    MergeStrategy::parse,
                    &names(MergeStrategy::ALL),
                )?,
                writes: self.str_list(m, path, "writes")?,
                exports: self.str_list(m, path, "exports")?,
                timeout_ms: self.i64_or(m, path, "timeoutMs", 0)?,
                fail_on_any_error: self.bool_or(m, path, "failOnAnyError", true)?,
                transition_rules: self.rules(m, path)?,
                id,
            }),
            NodeKind::SubWorkflow => Node::SubWorkflow(SubWorkflowNode {
                workflow_id: self.req_str(m, path, "workflowId")?,
                target_version: self.opt_str(m, path, "targetVersion")?,
                input_mapping: self.string_map(m, path, "inputMapping")?,
                output_mapping: self.string_map(m, path, "outputMapping")?,
                transition_rules: self.rules(m, path)?,
                id,
            }),
            NodeKind::Wait => Node::Wait(WaitNode {
                wait: self.wait_for(m, path)?,
                writes: self.str_list(m, path, "writes")?,
                transition_rules: self.rules(m, path)?,
                id,
            }),
            NodeKind::Map => Node::Map(MapNode {
                over: self.req_str(m, path, "over")?,
                agent_id: self.opt_str(m, path, "agentId")?,
                prompt: self.opt_str(m, path, "prompt")?,
                target: self.opt_str(m, path, "workflowId")?,
                result: self.opt_str(m, path, "result")?,
                max_parallel: self.i64_or(m, path, "maxParallel", 1)?,
                max_items: self.opt_i64(m, path, "maxItems")?,
                on_item_failure: self.enum_value(
                    m,
                    path,
                    "onItemFailure",
                    Some(ItemFailure::Fail),
                    ItemFailure::parse,
                    &names(ItemFailure::ALL),
                )?,
                writes: self.str_list(m, path, "writes")?,
                transition_rules: self.rules(m, path)?,
                id,
            }),
        };
        Ok(node)
    }

    /// What a `WAIT` node waits for (docs/language.md, *Timers and signals*): exactly one of
    /// `durationMs` (positive), `until` and `signal` (with an optional positive `timeoutMs`).
    fn wait_for(&self, m: &Obj, path: &str) -> R<WaitFor> {
        let positive = |key: &str| -> R<Option<u64>> {
            match self.opt_i64(m, path, key)? {
                None => Ok(None),
                Some(n) if n > 0 => Ok(u64::try_from(n).ok()),
                Some(_) => Err(self.wrong_type(
                    &child_path(path, key),
                    "a positive number of milliseconds",
                    Self::field(m, key).unwrap_or(&Value::Null),
                )),
            }
        };
        let duration = positive("durationMs")?;
        let until = self.opt_str(m, path, "until")?;
        let signal = self.opt_str(m, path, "signal")?;
        let timeout_ms = positive("timeoutMs")?;
        match (duration, until, signal) {
            (Some(ms), None, None) => Ok(WaitFor::Duration { ms }),
            (None, Some(template), None) => Ok(WaitFor::Until { template }),
            (None, None, Some(name)) => Ok(WaitFor::Signal { name, timeout_ms }),
            _ => Err(self.missing(&child_path(path, "durationMs"))),
        }
    }

    fn branch(&self, v: &Value, path: &str) -> R<Branch> {
        let m = self.obj(v, path)?;
        let id = self.req_str(m, path, "id")?;
        Ok(Branch {
            agent_id: self.req_str(m, path, "agentId")?,
            prompt: self.opt_str(m, path, "prompt")?,
            rubric: self.rubric(m, path, &id)?,
            weight: self.f64_or(m, path, "weight", 1.0)?,
            yields: self.str_list(m, path, "yields")?,
            after: self.str_list(m, path, "dependsOn")?,
            run_if: self.opt_str(m, path, "runIf")?,
            id,
        })
    }

    pub(super) fn action(&self, v: &Value, path: &str) -> R<Action> {
        let m = self.obj(v, path)?;
        let tp = child_path(path, "type");
        match self.req_str(m, path, "type")?.as_str() {
            "send" => Ok(Action::Send {
                handler_id: self.req_str(m, path, "handlerId")?,
                payload: self.value_map(m, path, "payload")?,
                raw_payload: self.bool_or(m, path, "rawPayload", false)?,
            }),
            "execute" => Ok(Action::Execute {
                command_id: self.req_str(m, path, "commandId")?,
            }),
            other => Err(self.unknown(
                JsonErrorKind::UnknownActionType,
                &tp,
                "action type",
                other,
                &["send", "execute"],
            )),
        }
    }

    pub(super) fn rule(&self, v: &Value, path: &str) -> R<TransitionRule> {
        let m = self.obj(v, path)?;
        let tp = child_path(path, "type");
        let ty = self.req_str(m, path, "type")?;
        let Some(kind) = RuleKind::parse(&ty) else {
            return Err(self.unknown(
                JsonErrorKind::UnknownRuleType,
                &tp,
                "transition rule type",
                &ty,
                &names(RuleKind::ALL),
            ));
        };
        let fb = |r: &Self| r.bool_or(m, path, "withFeedback", false);
        Ok(match kind {
            RuleKind::Success => TransitionRule::Success {
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Failure => TransitionRule::Failure {
                target_node: self.opt_str(m, path, "targetNode")?,
            },
            RuleKind::NoConsensus => TransitionRule::NoConsensus {
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Approval => TransitionRule::Approval {
                expected: self.req_bool(m, path, "expected")?,
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Always => TransitionRule::Always {
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Score => {
                let cp = child_path(path, "conditions");
                let conditions = match Self::field(m, "conditions") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, c)| self.score_condition(c, &index_path(&cp, i)))
                        .collect::<R<Vec<_>>>()?,
                    Some(other) => return Err(self.wrong_type(&cp, "an array", other)),
                };
                TransitionRule::Score {
                    conditions,
                    with_feedback: fb(self)?,
                }
            }
            RuleKind::Condition => TransitionRule::Condition {
                variable: self.req_str(m, path, "variable")?,
                predicate: self.predicate(m, path)?,
                target_node: self.req_str(m, path, "targetNode")?,
                with_feedback: fb(self)?,
            },
            RuleKind::Bounded => {
                let ip = child_path(path, "inner");
                let inner = match Self::field(m, "inner") {
                    None => return Err(self.missing(&ip)),
                    Some(iv) => self.rule(iv, &ip)?,
                };
                TransitionRule::Bounded {
                    namespace: self.enum_value(
                        m,
                        path,
                        "namespace",
                        None,
                        Namespace::parse,
                        &names(Namespace::ALL),
                    )?,
                    budget: match self.opt_i64(m, path, "budget")? {
                        Some(b) => b,
                        None => return Err(self.missing(&child_path(path, "budget"))),
                    },
                    otherwise: self.req_str(m, path, "otherwise")?,
                    escalation_with_feedback: self.bool_or(
                        m,
                        path,
                        "escalationWithFeedback",
                        false,
                    )?,
                    inner: Box::new(inner),
                }
            }
            RuleKind::RubricFail => TransitionRule::RubricFail,
            RuleKind::ReviewTimeout => TransitionRule::ReviewTimeout {
                target_node: self.req_str(m, path, "targetNode")?,
            },
        })
    }

    fn score_condition(&self, v: &Value, path: &str) -> R<ScoreCondition> {
        let m = self.obj(v, path)?;
        let op = self.req_str(m, path, "operator")?;
        let Some(operator) = ComparisonOperator::parse(&op) else {
            return Err(self.unknown(
                JsonErrorKind::UnknownOperator,
                &child_path(path, "operator"),
                "score operator",
                &op,
                &names(ComparisonOperator::ALL),
            ));
        };
        let range = match Self::field(m, "range") {
            None => None,
            Some(rv) => {
                let rp = child_path(path, "range");
                let r = self.obj(rv, &rp)?;
                let start = self.opt_f64(r, &rp, "start")?;
                let end = self.opt_f64(r, &rp, "end")?;
                match (start, end) {
                    (Some(start), Some(end)) => Some(ScoreRange { start, end }),
                    (None, _) => return Err(self.missing(&child_path(&rp, "start"))),
                    (_, None) => return Err(self.missing(&child_path(&rp, "end"))),
                }
            }
        };
        Ok(ScoreCondition {
            operator,
            value: self.opt_f64(m, path, "value")?,
            range,
            target_node: self.req_str(m, path, "targetNode")?,
        })
    }

    fn predicate(&self, m: &Obj, path: &str) -> R<ConditionPredicate> {
        let op = self.req_str(m, path, "operator")?;
        let ep = child_path(path, "expected");
        let expected = Self::field(m, "expected");
        let as_text = || -> R<String> {
            match expected {
                None => Err(self.missing(&ep)),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(Value::Bool(b)) => Ok(b.to_string()),
                Some(Value::Number(n)) => Ok(match n.as_i64() {
                    Some(i) => i.to_string(),
                    None => canonical_number(n.as_f64().unwrap_or(0.0)),
                }),
                Some(v) => Err(self.wrong_type(&ep, "a string, number or boolean", v)),
            }
        };
        let as_num = || -> R<f64> {
            match expected {
                None => Err(self.missing(&ep)),
                Some(Value::Number(n)) => n
                    .as_f64()
                    .ok_or_else(|| self.err(JsonErrorKind::WrongType, &ep, "number out of range")),
                Some(Value::String(s)) => s
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| {
                        self.err(
                            JsonErrorKind::WrongType,
                            &ep,
                            format!("expected a number, found string '{s}'"),
                        )
                    }),
                Some(v) => Err(self.wrong_type(&ep, "a number", v)),
            }
        };
        Ok(match op.as_str() {
            "EQ" => ConditionPredicate::Eq(as_text()?),
            "NEQ" => ConditionPredicate::Neq(as_text()?),
            "GT" => ConditionPredicate::Gt(as_num()?),
            "GTE" => ConditionPredicate::Gte(as_num()?),
            "LT" => ConditionPredicate::Lt(as_num()?),
            "LTE" => ConditionPredicate::Lte(as_num()?),
            other => {
                return Err(self.unknown(
                    JsonErrorKind::UnknownOperator,
                    &child_path(path, "operator"),
                    "condition operator",
                    other,
                    &["EQ", "NEQ", "GT", "GTE", "LT", "LTE"],
                ));
            }
        })
    }
}
