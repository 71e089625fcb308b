//! Start a run: a form generated from the workflow's state schema (one typed field per input:
//! text, number, yes/no, a list one item per line), checked by the browser before it is sent
//! (`required`, `type=number`) and again here with the engine's own input rules, then started
//! through the service's start (the API's rules).

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use hensu_ir::{StateVariable, VarType, Workflow};
use hensu_runtime::Context;
use hensu_server::AppState;
use hensu_server::service::executions::{self, StartExecution};
use maud::{Markup, html};
use serde_json::{Value, json};

use super::{api_error, workflows};
use crate::chrome::{self, Nav};
use crate::session::{Page, Viewer, check_post};

/// The name of an input's form field.
fn field(name: &str) -> String {
    format!("in.{name}")
}

/// The inputs a run of `wf` takes (declared inputs of its state schema).
fn inputs(wf: &Workflow) -> Vec<&StateVariable> {
    wf.state_schema
        .as_ref()
        .map(|s| s.variables.iter().filter(|v| v.is_input).collect())
        .unwrap_or_default()
}

/// `GET /console/workflows/{id}/start`.
pub async fn form(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
) -> Response {
    match workflows::load(&app, &viewer, &id).await {
        Ok(wf) => render(&viewer, &wf, &BTreeMap::new(), &[], StatusCode::OK),
        Err(e) => api_error(&viewer, Nav::Workflows, e),
    }
}

fn render(
    viewer: &Viewer,
    wf: &Workflow,
    values: &BTreeMap<String, String>,
    problems: &[(String, String)],
    status: StatusCode,
) -> Response {
    let value = |k: &str| values.get(k).map(String::as_str).unwrap_or("");
    let problem = |k: &str| {
        problems
            .iter()
            .find(|(f, _)| f == k)
            .map(|(_, m)| m.as_str())
    };
    let general: Vec<&str> = problems
        .iter()
        .filter(|(f, _)| f.is_empty())
        .map(|(_, m)| m.as_str())
        .collect();
    let fields = inputs(wf);
    let body = html! {
        h1 { "Start a run of " code { (wf.id) } }
        @if !problems.is_empty() {
            div.notice.error role="alert" {
                p { "The run was not started:" }
                ul { @for (_, m) in problems { li { (m) } } }
            }
        }
        form.stack.start-form method="post" action={ "/console/workflows/" (wf.id) "/start" } {
            input type="hidden" name="_csrf" value=(viewer.csrf);
            @if fields.is_empty() {
                p.muted { "This workflow declares no inputs." }
            }
            @for v in &fields { (input_field(v, value(&field(&v.name)), problem(&field(&v.name)))) }
            details id="extra-context" open[!value("context").is_empty() || problem("context").is_some()] {
                summary { "More context (JSON object, optional)" }
                label for="f-context" { "Context entries merged under the inputs above" }
                textarea id="f-context" name="context" rows="4" spellcheck="false"
                    aria-invalid=[problem("context").map(|_| "true")] { (value("context")) }
            }
            @for g in general { p.notice.error { (g) } }
            button.primary type="submit" { "Start" }
        }
    };
    (
        status,
        chrome::page(viewer, &format!("Start {}", wf.id), Nav::Workflows, body),
    )
        .into_response()
}

fn input_field(v: &StateVariable, value: &str, problem: Option<&str>) -> Markup {
    let name = field(&v.name);
    let id = format!("f-{}", v.name);
    let hint_id = format!("{id}-hint");
    let err_id = format!("{id}-error");
    let described = match problem {
        Some(_) => format!("{hint_id} {err_id}"),
        None => hint_id.clone(),
    };
    let kind = match v.var_type {
        VarType::String => "text",
        VarType::Number => "number",
        VarType::Boolean => "yes / no",
        VarType::ListString => "a list, one item per line",
    };
    html! {
        div.field {
            label for=(id) { (v.name) }
            p.hint id=(hint_id) {
                (kind)
                @if let Some(d) = &v.description { " — " (d) }
            }
            @match v.var_type {
                VarType::String => input id=(id) name=(name) type="text" value=(value) required
                    aria-describedby=(described) aria-invalid=[problem.map(|_| "true")];
                VarType::Number => input id=(id) name=(name) type="number" step="any" value=(value) required
                    aria-describedby=(described) aria-invalid=[problem.map(|_| "true")];
                VarType::Boolean => select id=(id) name=(name) required aria-describedby=(described)
                    aria-invalid=[problem.map(|_| "true")] {
                    option value="" { "choose" }
                    option value="true" selected[value == "true"] { "yes" }
                    option value="false" selected[value == "false"] { "no" }
                },
                VarType::ListString => textarea id=(id) name=(name) rows="3" required
                    aria-describedby=(described) aria-invalid=[problem.map(|_| "true")] { (value) },
            }
            @if let Some(p) = problem { p.field-error id=(err_id) { (p) } }
        }
    }
}

/// The context of a submitted form, or the problems (field name, message) with it.
pub fn context_of(
    wf: &Workflow,
    values: &BTreeMap<String, String>,
) -> Result<Context, Vec<(String, String)>> {
    let mut problems = Vec::new();
    let mut context = Context::default();
    if let Some(extra) = values
        .get("context")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        match serde_json::from_str::<Value>(extra) {
            Ok(Value::Object(m)) => context.extend(m),
            Ok(_) => problems.push((
                "context".into(),
                "More context must be a JSON object.".into(),
            )),
            Err(e) => problems.push(("context".into(), format!("More context is not JSON: {e}"))),
        }
    }
    for v in inputs(wf) {
        let key = field(&v.name);
        let raw = values.get(&key).map(|s| s.trim()).unwrap_or("");
        if raw.is_empty() {
            continue;
        }
        let parsed = match v.var_type {
            VarType::String => Ok(Value::String(raw.to_string())),
            VarType::Number => number(raw).ok_or_else(|| format!("`{}` must be a number.", v.name)),
            VarType::Boolean => match raw {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(format!("`{}` must be yes or no.", v.name)),
            },
            VarType::ListString => Ok(Value::Array(
                raw.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(|l| Value::String(l.to_string()))
                    .collect(),
            )),
        };
        match parsed {
            Ok(value) => {
                context.insert(v.name.clone(), value);
            }
            Err(m) => problems.push((key, m)),
        }
    }
    if let Some(schema) = &wf.state_schema {
        let (missing, mistyped) = hensu_runtime::inputs::input_problems(schema, &context);
        for m in missing {
            if !problems.iter().any(|(f, _)| *f == field(&m)) {
                problems.push((field(&m), format!("`{m}` is required.")));
            }
        }
        for m in mistyped {
            problems.push((String::new(), m));
        }
    }
    if problems.is_empty() {
        Ok(context)
    } else {
        Err(problems)
    }
}

fn number(raw: &str) -> Option<Value> {
    if let Ok(i) = raw.parse::<i64>() {
        return Some(json!(i));
    }
    raw.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

/// `POST /console/workflows/{id}/start`.
pub async fn submit(
    State(app): State<AppState>,
    Page(viewer): Page,
    Path(id): Path<String>,
    headers: HeaderMap,
    axum::Form(pairs): axum::Form<Vec<(String, String)>>,
) -> Response {
    let values: BTreeMap<String, String> = pairs.into_iter().collect();
    if let Err(r) = check_post(
        &headers,
        &viewer.csrf,
        values.get("_csrf").map(String::as_str),
    ) {
        return r.into_response();
    }
    let wf = match workflows::load(&app, &viewer, &id).await {
        Ok(w) => w,
        Err(e) => return api_error(&viewer, Nav::Workflows, e),
    };
    let context = match context_of(&wf, &values) {
        Ok(c) => c,
        Err(problems) => return render(&viewer, &wf, &values, &problems, StatusCode::BAD_REQUEST),
    };
    let request = StartExecution::new(wf.id.clone(), context);
    match executions::start(&app, &viewer.tenant, request).await {
        Ok(started) => Redirect::to(&format!(
            "/console/executions/{}?notice=started",
            started.execution_id
        ))
        .into_response(),
        Err(e) => {
            let problems = vec![(String::new(), e.message)];
            render(&viewer, &wf, &values, &problems, e.status)
        }
    }
}
