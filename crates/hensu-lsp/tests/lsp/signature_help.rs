//! Signature help inside DSL calls, from the schema.

use lsp_types::*;

use crate::*;

fn signature(src: &str) -> String {
    let (engine, u, pos, _) = open(src);
    let Some(help) = engine.signature_help(SignatureHelpParams {
        context: None,
        text_document_position_params: tdp(&u, pos),
        work_done_progress_params: Default::default(),
    }) else {
        return "(none)".to_string();
    };
    let s = &help.signatures[0];
    let params: Vec<String> = s
        .parameters
        .iter()
        .flatten()
        .map(|p| match &p.label {
            ParameterLabel::Simple(l) => l.clone(),
            ParameterLabel::LabelOffsets(o) => format!("{o:?}"),
        })
        .collect();
    let Some(Documentation::MarkupContent(doc)) = &s.documentation else {
        panic!("documentation expected");
    };
    format!(
        "{} [active {}] params {:?} — {}",
        s.label,
        help.active_parameter.unwrap(),
        params,
        doc.value
    )
}

#[test]
fn signature_of_end_on_its_second_argument() {
    assert_eq!(
        signature(&DOC.replace(
            "end(\"failed\", ExitStatus.FAILURE)",
            "end(\"failed\", $0ExitStatus.FAILURE)"
        )),
        "end(id: String, status: ExitStatus = SUCCESS) [active 1] params [\"id: String\", \"status: ExitStatus = SUCCESS\"] — An end node (default ExitStatus.SUCCESS)."
    );
}

#[test]
fn signature_of_node_and_agent() {
    assert_eq!(
        signature(&DOC.replace("node(\"review\")", "node(\"rev$0iew\")")),
        "node(id: String) { … } [active 0] params [\"id: String\"] — A standard node: one agent call."
    );
    assert_eq!(
        signature(&DOC.replace("agent(\"reviewer\")", "agent($0\"reviewer\")")),
        "agent(id: String) { … } [active 0] params [\"id: String\"] — Define an agent."
    );
}

#[test]
fn signature_of_state_declarations_and_writes() {
    assert_eq!(
        signature(&DOC.replace(
            "variable(\"verdict\", VarType.STRING)",
            "variable(\"verdict\", VarType.STRING, $0)"
        )),
        "variable(name: String, type: VarType, description: String = null) [active 2] params [\"name: String\", \"type: VarType\", \"description: String = null\"] — Declare a state variable; the description guides the agent that writes it."
    );
    let writes = signature(&DOC.replace("writes(\"verdict\")", "writes(\"verdict\", $0)"));
    assert!(
        writes.starts_with("writes(vararg variable: String) [active 0]"),
        "{writes}"
    );
}

#[test]
fn no_signature_outside_a_call() {
    assert_eq!(signature(&DOC.replace("state {", "state $0{")), "(none)");
}
