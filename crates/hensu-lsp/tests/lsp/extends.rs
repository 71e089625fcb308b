//! An extending workflow in the editor: its diagnostics are those of the merged workflow,
//! definitions and hovers of inherited nodes lead into the base, `extends("…")` completes the
//! project's workflow ids.

use lsp_types::*;

use crate::*;

const BASE: &str = r#"workflow("greeting") {
    state {
        input("name", VarType.STRING)
        variable("greeting", VarType.STRING)
    }
    agents {
        agent("greeter") { role = "Greeter"; model = "stub" }
    }
    graph {
        start at "greet"
        node("greet") {
            agent = "greeter"
            prompt = "Greet {name}."
            writes("greeting")
            onSuccess goto "polish"
        }
        node("polish") {
            agent = "greeter"
            prompt = "Polish {greeting}."
            writes("greeting")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const DERIVED: &str = r#"workflow("greeting-audited") {
    extends("greeting")
    graph {
        routes("greet") { onSuccess goto "audit" }
        action("audit") {
            send("log", mapOf("message" to "{greeting}"))
            onSuccess goto "polish"
            onFailure goto "done"
        }
    }
}
"#;

fn engine_with(src: &str) -> (Engine, Uri, Position, String) {
    let (text, pos) = split_marker(src);
    let mut engine = Engine::new(host().with("/p/workflows/greeting.hwf", BASE));
    let u = uri(MAIN);
    engine.open(u.clone(), 1, text.clone());
    (engine, u, pos, text)
}

fn definition(src: &str) -> String {
    let (engine, u, pos, _) = engine_with(src);
    let resp = engine.definition(GotoDefinitionParams {
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    match resp {
        Some(GotoDefinitionResponse::Scalar(l)) => format!(
            "{} {}:{}",
            l.uri.as_str(),
            l.range.start.line + 1,
            l.range.start.character + 1
        ),
        other => format!("{other:?}"),
    }
}

#[test]
fn definition_of_routes_and_extends_leads_into_the_base() {
    assert_eq!(
        definition(&DERIVED.replace("routes(\"greet\")", "routes(\"gr$0eet\")")),
        "file:///p/workflows/greeting.hwf 11:15"
    );
    assert_eq!(
        definition(&DERIVED.replace("goto \"polish\"", "goto \"pol$0ish\"")),
        "file:///p/workflows/greeting.hwf 17:15"
    );
    assert_eq!(
        definition(&DERIVED.replace("extends(\"greeting\")", "extends(\"gree$0ting\")")),
        "file:///p/workflows/greeting.hwf 1:11"
    );
}

#[test]
fn hover_on_an_inherited_node_names_its_base() {
    let (engine, u, pos, _) =
        engine_with(&DERIVED.replace("routes(\"greet\")", "routes(\"gre$0et\")"));
    let h = engine
        .hover(HoverParams {
            text_document_position_params: tdp(&u, pos),
            work_done_progress_params: Default::default(),
        })
        .unwrap();
    let HoverContents::Markup(m) = h.contents else {
        panic!("markdown hover")
    };
    assert!(
        m.value
            .contains("inherited from `greeting` (/p/workflows/greeting.hwf)"),
        "{}",
        m.value
    );
    assert!(m.value.contains("`greet`"), "{}", m.value);
}

#[test]
fn diagnostics_are_those_of_the_merged_workflow() {
    // Clean: the inherited nodes are known (no E0204 for `polish` or `done`).
    let (engine, u, _, _) = engine_with(&format!("$0{DERIVED}"));
    assert_eq!(engine.diagnostics(&u), Vec::new());
    // A routes change that leaves an inherited node unreachable: reported in the base, shown
    // on `extends("…")` of the open document.
    let src = DERIVED.replace("onSuccess goto \"polish\"", "onSuccess goto \"done\"");
    let (engine, u, _, text) = engine_with(&format!("$0{src}"));
    let diags = engine.diagnostics(&u);
    let w = diags
        .iter()
        .find(|d| d.code == Some(NumberOrString::String("W0301".into())))
        .expect("W0301 of the base");
    assert_eq!(show_range(&text, w.range), "2:13 extends([\"greeting\"])");
    assert!(
        w.message
            .starts_with("in the base (/p/workflows/greeting.hwf): node `polish` is unreachable"),
        "{}",
        w.message
    );
    // An unknown base.
    let src = DERIVED.replace("extends(\"greeting\")", "extends(\"greting\")");
    let (engine, u, _, _) = engine_with(&format!("$0{src}"));
    let codes: Vec<_> = engine
        .diagnostics(&u)
        .into_iter()
        .filter_map(|d| d.code)
        .collect();
    assert_eq!(codes, vec![NumberOrString::String("E0506".into())]);
}

#[test]
fn extends_completes_workflow_ids() {
    let (engine, u, pos, _) =
        engine_with(&DERIVED.replace("extends(\"greeting\")", "extends(\"$0\")"));
    let Some(CompletionResponse::Array(items)) = engine.completion(CompletionParams {
        text_document_position: tdp(&u, pos),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    }) else {
        panic!("completions")
    };
    let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
    assert!(labels.contains(&"greeting"), "{labels:?}");
    assert!(labels.contains(&"summarizer"), "{labels:?}");
}
