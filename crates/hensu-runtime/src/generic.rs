//! Generic nodes: handlers keyed by executor type (upstream `GenericNodeHandler`; docs/language.md, *Generic node*), with
//! the stock `validator` and `data-transformer` handlers and an `api-caller` that makes a real
//! HTTP request (upstream returns a canned reply).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use hensu_ir::GenericNode;
use indexmap::IndexMap;
use serde_json::Value;

use crate::state::NodeResult;
use crate::value::{Context, as_bool, as_number, java_to_string, render_number};

/// Runs a generic node of one executor type. The handler may read and write the context.
#[async_trait]
pub trait GenericNodeHandler: Send + Sync {
    /// The `executorType` this handler serves.
    fn executor_type(&self) -> &str;
    /// Executes the node; failures are returned as FAILURE results with a clear message.
    async fn handle(&self, node: &GenericNode, ctx: &mut Context) -> NodeResult;
}

/// Handlers by executor type.
#[derive(Clone, Default)]
pub struct GenericHandlerRegistry {
    handlers: HashMap<String, Arc<dyn GenericNodeHandler>>,
}

impl std::fmt::Debug for GenericHandlerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut keys: Vec<_> = self.handlers.keys().collect();
        keys.sort();
        f.debug_struct("GenericHandlerRegistry")
            .field("types", &keys)
            .finish()
    }
}

impl GenericHandlerRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The handlers that need no I/O: `validator` and `data-transformer` (the host adds
    /// `api-caller`).
    pub fn with_defaults() -> Self {
        let mut r = Self::new();
        r.register(Arc::new(ValidatorHandler));
        r.register(Arc::new(DataTransformerHandler));
        r
    }

    /// Registers (or replaces) a handler under its executor type.
    pub fn register(&mut self, handler: Arc<dyn GenericNodeHandler>) {
        self.handlers
            .insert(handler.executor_type().to_string(), handler);
    }

    /// Looks a handler up.
    pub fn get(&self, executor_type: &str) -> Option<&Arc<dyn GenericNodeHandler>> {
        self.handlers.get(executor_type)
    }
}

/// A string config value (non-strings rendered as Java would), or `default`.
pub fn cfg_str<'a>(cfg: &'a IndexMap<String, Value>, key: &str, default: &'a str) -> String {
    match cfg.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => default.to_string(),
        Some(v) => java_to_string(v),
    }
}

/// A numeric config value and its text as written.
pub fn cfg_num(cfg: &IndexMap<String, Value>, key: &str) -> Option<(f64, String)> {
    let v = cfg.get(key)?;
    let n = as_number(v)?;
    let shown = match v {
        Value::Number(num) => render_number(num).into_owned(),
        other => java_to_string(other),
    };
    Some((n, shown))
}

/// `validator`: `field` ("input"), `required`, `minLength`, `maxLength`, `pattern` (≤ 256 chars,
/// full match, input ≤ 10 000 chars), `errorMessage` ("Invalid format").
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidatorHandler;

/// The longest accepted `pattern`.
pub const MAX_PATTERN_LENGTH: usize = 256;
/// The longest input a `pattern` is matched against.
pub const MAX_PATTERN_INPUT: usize = 10_000;

#[async_trait]
impl GenericNodeHandler for ValidatorHandler {
    fn executor_type(&self) -> &str {
        "validator"
    }

    async fn handle(&self, node: &GenericNode, ctx: &mut Context) -> NodeResult {
        let cfg = &node.config;
        let field = cfg_str(cfg, "field", "input");
        let required = cfg.get("required").and_then(as_bool).unwrap_or(false);
        let value = match ctx.get(&field) {
            None | Some(Value::Null) => None,
            Some(v) => Some(java_to_string(v)),
        };
        let mut errors: Vec<String> = Vec::new();
        match value {
            None => {
                if required {
                    errors.push(format!("{field} is required"));
                }
            }
            Some(text) if required && text.trim().is_empty() => {
                errors.push(format!("{field} is required"));
            }
            Some(text) => {
                let len = text.chars().count();
                if let Some((min, shown)) = cfg_num(cfg, "minLength")
                    && (len as f64) < min
                {
                    errors.push(format!("{field} must be at least {shown} characters"));
                }
                if let Some((max, shown)) = cfg_num(cfg, "maxLength")
                    && (len as f64) > max
                {
                    errors.push(format!("{field} must be at most {shown} characters"));
                }
                if let Some(Value::String(pattern)) = cfg.get("pattern") {
                    let message = cfg_str(cfg, "errorMessage", "Invalid format");
                    if pattern.chars().count() > MAX_PATTERN_LENGTH {
                        errors.push(format!(
                            "{field} pattern is longer than {MAX_PATTERN_LENGTH} characters"
                        ));
                    } else if len > MAX_PATTERN_INPUT {
                        errors.push(format!(
                            "{field} is longer than {MAX_PATTERN_INPUT} characters and cannot be matched"
                        ));
                    } else {
                        match regex::Regex::new(&format!("^(?:{pattern})$")) {
                            Ok(re) => {
                                if !re.is_match(&text) {
                                    errors.push(message);
                                }
                            }
                            Err(e) => errors.push(format!("{field} has an invalid pattern: {e}")),
                        }
                    }
                }
            }
        }
        if errors.is_empty() {
            NodeResult::success(format!("Validation passed for {field}"))
                .with_meta("validated_field", Value::String(field))
        } else {
            NodeResult::failure(errors.join("; "))
        }
    }
}

/// `data-transformer`: `inputField` ("input"), `outputField` ("output"), `operations` — a list
/// of `trim`, `lowercase`, `uppercase`, `normalize` (collapse whitespace), applied in order.
#[derive(Clone, Copy, Debug, Default)]
pub struct DataTransformerHandler;

#[async_trait]
impl GenericNodeHandler for DataTransformerHandler {
    fn executor_type(&self) -> &str {
        "data-transformer"
    }

    async fn handle(&self, node: &GenericNode, ctx: &mut Context) -> NodeResult {
        let cfg = &node.config;
        let input_field = cfg_str(cfg, "inputField", "input");
        let output_field = cfg_str(cfg, "outputField", "output");
        let mut text = match ctx.get(&input_field) {
            None | Some(Value::Null) => {
                return NodeResult::failure(format!("Input field '{input_field}' not found"));
            }
            Some(v) => java_to_string(v),
        };
        let ops: Vec<String> = match cfg.get("operations") {
            Some(Value::Array(items)) => items.iter().map(java_to_string).collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        };
        for op in &ops {
            text = match op.to_ascii_lowercase().as_str() {
                "trim" => text.trim().to_string(),
                "lowercase" => text.to_lowercase(),
                "uppercase" => text.to_uppercase(),
                "normalize" => text.split_whitespace().collect::<Vec<_>>().join(" "),
                other => {
                    return NodeResult::failure(format!(
                        "Unknown operation '{other}' (expected trim, lowercase, uppercase or normalize)"
                    ));
                }
            };
        }
        ctx.insert(output_field.clone(), Value::String(text.clone()));
        NodeResult::success(text).with_meta("output_field", Value::String(output_field))
    }
}
