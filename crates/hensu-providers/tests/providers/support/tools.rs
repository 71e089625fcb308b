//! A fake tool executor and agents that declare tools.

use super::*;

#[derive(Default)]
pub struct FakeTools {
    pub calls: Mutex<Vec<(String, Value)>>,
    /// What `get_weather` answers.
    pub answer: String,
}

#[async_trait]
impl ToolExecutor for FakeTools {
    fn has_tool(&self, name: &str) -> bool {
        matches!(name, "get_weather" | "search")
    }

    fn available(&self) -> Vec<String> {
        vec!["get_weather".into(), "search".into()]
    }

    fn spec(&self, name: &str) -> ToolSpec {
        if name == "get_weather" {
            ToolSpec {
                name: name.into(),
                description: "Current weather for a city".into(),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            }
        } else {
            ToolSpec::generic(name)
        }
    }

    async fn call(&self, name: &str, args: Value) -> Result<String, String> {
        self.calls
            .lock()
            .expect("lock")
            .push((name.to_string(), args.clone()));
        match name {
            "get_weather" => Ok(self.answer.clone()),
            _ => Err("search backend unavailable".into()),
        }
    }
}

pub fn tool_agent(model: &str, tools: &[&str], max: Option<i64>) -> AgentConfig {
    let mut c = agent_config(model);
    c.tools = tools.iter().map(|t| t.to_string()).collect();
    c.max_tool_calls = max;
    c
}
