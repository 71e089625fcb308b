//! Structured output: when a node expects a JSON object (writes, engine variables, yields)
//! and the answer has none, or misses a required key, the agent gets a bounded number of
//! corrective re-prompts naming what was missing before the node fails.

use hensu_runtime::{Agent, AgentError, AgentRequest, AgentResponse, Usage};
use hensu_runtime::{extract_object, first_balanced_object};
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::error::{ErrorKind, truncate};

/// What was wrong with an answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum StructuredProblem {
    /// No `{…}` in the answer, or it does not parse.
    NoJson,
    /// The object lacks these keys.
    MissingKeys { keys: Vec<String> },
}

impl std::fmt::Display for StructuredProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StructuredProblem::NoJson => f.write_str("the answer contains no parsable JSON object"),
            StructuredProblem::MissingKeys { keys } => {
                write!(
                    f,
                    "the JSON object is missing the required key(s) {}",
                    quoted(keys)
                )
            }
        }
    }
}

fn quoted(keys: &[String]) -> String {
    keys.iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One corrective re-prompt (for events: "structured_output_correction").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Correction {
    /// 1-based.
    pub attempt: u32,
    pub agent_id: String,
    pub node_id: String,
    #[serde(flatten)]
    pub problem: StructuredProblem,
}

/// A successful structured answer.
#[derive(Clone, Debug, PartialEq)]
pub struct StructuredOutcome {
    /// The last answer (usage summed over every attempt; metadata
    /// `structured_corrections` = number of re-prompts).
    pub response: AgentResponse,
    /// Its JSON object (numbers as doubles, like the runtime's extraction).
    pub object: IndexMap<String, Value>,
    pub corrections: Vec<Correction>,
}

/// A failed structured call.
#[derive(Clone, Debug, PartialEq)]
pub struct StructuredError {
    /// `kind` = `structured_output` when the answers never had the JSON, otherwise the agent's
    /// own error.
    pub error: AgentError,
    pub corrections: Vec<Correction>,
    /// The last answer, when there was one.
    pub last_response: Option<AgentResponse>,
}

/// Checks an answer: its first JSON object, which must contain every `required` key.
pub fn check_structured(
    text: &str,
    required: &[&str],
) -> Result<IndexMap<String, Value>, StructuredProblem> {
    let Some(object) = extract_object(text) else {
        return Err(StructuredProblem::NoJson);
    };
    let missing: Vec<String> = required
        .iter()
        .filter(|k| !object.contains_key(**k))
        .map(|k| k.to_string())
        .collect();
    if missing.is_empty() {
        Ok(object)
    } else {
        Err(StructuredProblem::MissingKeys { keys: missing })
    }
}

/// The corrective prompt: the original task, the previous answer and what was wrong.
pub fn correction_prompt(
    original: &str,
    previous_answer: &str,
    problem: &StructuredProblem,
    required: &[&str],
) -> String {
    let previous = first_balanced_object(previous_answer).unwrap_or(previous_answer);
    let keys: Vec<String> = required.iter().map(|k| k.to_string()).collect();
    let want = if keys.is_empty() {
        "a single JSON object".to_string()
    } else {
        format!(
            "a single JSON object containing every required key: {}",
            quoted(&keys)
        )
    };
    format!(
        "{original}\n\n---\nYour previous answer was:\n{}\n\nIt could not be used: {problem}. Answer the task again, and include {want}.",
        truncate(previous.trim(), 4000)
    )
}

/// Calls `agent` and checks the answer for a JSON object with `required_keys` (an empty list
/// still requires an object); on a problem, re-prompts at most `max_corrections` times.
/// Stub answers (metadata `stub` = true) are returned unchecked (their object, or an empty
/// map, in [`StructuredOutcome::object`]).
pub async fn with_structured_output(
    agent: &dyn Agent,
    request: AgentRequest<'_>,
    required_keys: &[&str],
    max_corrections: u32,
) -> Result<StructuredOutcome, StructuredError> {
    with_structured_output_observed(agent, request, required_keys, max_corrections, &|_| {}).await
}

/// [`with_structured_output`] calling `observer` before each re-prompt (to emit an event).
pub async fn with_structured_output_observed(
    agent: &dyn Agent,
    request: AgentRequest<'_>,
    required_keys: &[&str],
    max_corrections: u32,
    observer: &(dyn Fn(&Correction) + Sync),
) -> Result<StructuredOutcome, StructuredError> {
    let mut corrections: Vec<Correction> = Vec::new();
    let mut usage: Option<Usage> = None;
    let mut prompt_owned: Option<String> = None;
    loop {
        let prompt = prompt_owned.as_deref().unwrap_or(request.prompt);
        let call = AgentRequest {
            node_id: request.node_id,
            prompt,
            system_prompt: request.system_prompt,
            context: request.context,
        };
        let mut response = match agent.execute(call).await {
            Ok(r) => r,
            Err(error) => {
                return Err(StructuredError {
                    error,
                    corrections,
                    last_response: None,
                });
            }
        };
        if let Some(u) = response.usage {
            let total = usage.get_or_insert_with(Usage::default);
            total.input_tokens += u.input_tokens;
            total.output_tokens += u.output_tokens;
        }
        response.usage = usage;
        let n = u32::try_from(corrections.len()).unwrap_or(u32::MAX);
        if n > 0 {
            response
                .metadata
                .insert("structured_corrections".to_string(), Value::from(n));
        }
        // Stub answers are scripted: re-prompting cannot change them, and upstream-faithful
        // stub runs must see exactly the scripted text.
        if response.metadata.get("stub") == Some(&Value::Bool(true)) {
            let object = extract_object(&response.text).unwrap_or_default();
            return Ok(StructuredOutcome {
                response,
                object,
                corrections,
            });
        }
        match check_structured(&response.text, required_keys) {
            Ok(object) => {
                return Ok(StructuredOutcome {
                    response,
                    object,
                    corrections,
                });
            }
            Err(problem) if n < max_corrections => {
                let correction = Correction {
                    attempt: n + 1,
                    agent_id: agent.id().to_string(),
                    node_id: request.node_id.to_string(),
                    problem: problem.clone(),
                };
                observer(&correction);
                corrections.push(correction);
                prompt_owned = Some(correction_prompt(
                    request.prompt,
                    &response.text,
                    &problem,
                    required_keys,
                ));
            }
            Err(problem) => {
                let after = match n {
                    0 => String::new(),
                    1 => " (after 1 corrective re-prompt)".to_string(),
                    n => format!(" (after {n} corrective re-prompts)"),
                };
                return Err(StructuredError {
                    error: AgentError::new(
                        ErrorKind::StructuredOutput.as_str(),
                        format!("Agent '{}': {problem}{after}", agent.id()),
                    ),
                    corrections,
                    last_response: Some(response),
                });
            }
        }
    }
}

/// The runtime's structured-output hook: a bounded number of corrective re-prompts for answers
/// that miss required JSON keys, each reported as a `structured_output_correction` event.
#[derive(Clone, Copy, Debug)]
pub struct StructuredOutput {
    pub max_corrections: u32,
}

#[async_trait::async_trait]
impl hensu_runtime::StructuredCaller for StructuredOutput {
    async fn call(
        &self,
        agent: &dyn Agent,
        request: AgentRequest<'_>,
        required_keys: &[&str],
        listener: &dyn hensu_runtime::ExecutionListener,
    ) -> Result<AgentResponse, AgentError> {
        let observer = |c: &Correction| {
            let problem = c.problem.to_string();
            listener.on_event(&hensu_runtime::Event::StructuredOutputCorrection {
                node_id: &c.node_id,
                agent_id: &c.agent_id,
                attempt: c.attempt,
                problem: &problem,
            });
        };
        with_structured_output_observed(
            agent,
            request,
            required_keys,
            self.max_corrections,
            &observer,
        )
        .await
        .map(|o| o.response)
        .map_err(|e| e.error)
    }
}
