//! Values reach a command as data (docs/security.md, *How values reach a command*): 72 hostile
//! payloads in every place a placeholder can stand never create the marker file, and arrive
//! byte for byte where the shell construct keeps bytes.

use std::path::Path;

use hensu_host::{CommandRegistry, CommandSpec, MAX_VALUE_BYTES, run_command};
use serde_json::json;

use super::{ctx, ok_output};

/// 72 payloads that each try to create `marker` (or to break out of the place they stand in).
fn payloads(marker: &Path) -> Vec<String> {
    let m = marker.display().to_string();
    let touch = format!("touch {m}");
    let mut p = vec![
        // Command substitution and backquotes, bare and inside every kind of quote.
        format!("$({touch})"),
        format!("`{touch}`"),
        format!("'$({touch})'"),
        format!("\"$({touch})\""),
        format!("'`{touch}`'"),
        format!("\"`{touch}`\""),
        format!("'\"$({touch})\"'"),
        format!("\"'$({touch})'\""),
        format!("$( {touch} )"),
        format!("$(({touch}))"),
        format!("$(echo; {touch})"),
        format!("${{x:-$({touch})}}"),
        format!("${{x:=`{touch}`}}"),
        format!("$({touch})$({touch})"),
        format!("a$({touch})b"),
        format!("\\$({touch})"),
        format!("\\`{touch}\\`"),
        // Command separators and operators.
        format!("; {touch}"),
        format!("';{touch};'"),
        format!("\";{touch};\""),
        format!("&& {touch}"),
        format!("|| {touch}"),
        format!("| {touch}"),
        format!("& {touch} &"),
        format!("'; {touch} #"),
        format!("\"; {touch} #"),
        format!("'\"; {touch}; echo \"'"),
        format!("x' || {touch} || '"),
        format!("x\" || {touch} || \""),
        format!(") ; {touch} ; ("),
        format!("}} ; {touch} ; {{"),
        format!("> {m}"),
        format!("'> {m}'"),
        format!("\"> {m}\""),
        format!(">{m}"),
        // Newlines and carriage returns.
        format!("\n{touch}\n"),
        format!("a\n{touch}"),
        format!("'\n{touch}\n'"),
        format!("\"\n{touch}\n\""),
        format!("\r\n{touch}\r\n"),
        format!("x\\\n{touch}"),
        // Heredoc delimiters and bodies.
        format!("EOF\n{touch}\nEOF"),
        format!("\nEOF\n{touch}\n"),
        format!("EOF\n{touch}"),
        format!("\tEOF\n{touch}\n\tEOF"),
        format!("'EOF'\n{touch}"),
        format!("<<EOF\n{touch}\nEOF"),
        format!("$(cat <<EOF\n$({touch})\nEOF\n)"),
        // Quotes of every kind and escapes.
        "'".to_string(),
        "\"".to_string(),
        "`".to_string(),
        "''''\"\"\"\"``".to_string(),
        "\\".to_string(),
        "\\'".to_string(),
        "\\\"".to_string(),
        "it's \"quoted\" and `ticked`".to_string(),
        format!("$'\\x27; {touch}; \\x27'"),
        format!("\u{2018}{touch}\u{2019} \u{201c}{touch}\u{201d}"),
        // Expansions that must stay text.
        "$HOME ${PATH} $0 $1 $@ $* $$ $? $!".to_string(),
        "${HENSU_VALUE_x} $HENSU_VALUE_x".to_string(),
        "* ? [a-z] ~ ~root {a,b} !!".to_string(),
        "$((1+1)) $[1+1]".to_string(),
        format!("{{x}} {{y}} {{{touch}}}"),
        // Unicode, controls, blanks.
        "héllo wörld ✓ 🦀".to_string(),
        "\u{7}\u{8}\t\u{b}\u{c}\u{1b}[31mred\u{1b}[0m".to_string(),
        "   leading and trailing   ".to_string(),
        String::new(),
        " ".to_string(),
        "-n".to_string(),
        // Long values.
        format!("$({touch})").repeat(2_000),
        "x".repeat(100_000),
    ];
    p.push(format!("{}$({touch})", "'\"`".repeat(10_000)));
    p
}

/// Each place a placeholder can stand: the command, and the output it prints for `value`
/// (`None` when the construct itself changes bytes, e.g. `echo` interpreting backslashes).
type Expect = fn(&str) -> Option<String>;

fn positions() -> Vec<(&'static str, Expect)> {
    vec![
        ("printf '%s' {x}", |v| Some(v.to_string())),
        ("printf '%s' x{x}y", |v| Some(format!("x{v}y"))),
        ("printf '%s' 'pre {x} post'", |v| {
            Some(format!("pre {v} post"))
        }),
        ("printf '%s' 'a'{x}'b'", |v| Some(format!("a{v}b"))),
        ("printf '%s' \"pre {x} post\"", |v| {
            Some(format!("pre {v} post"))
        }),
        ("printf '%s' \"'{x}'\"", |v| Some(format!("'{v}'"))),
        ("printf '%s' '\"{x}\"'", |v| Some(format!("\"{v}\""))),
        ("cat <<EOF\npre {x} post\nEOF", |v| {
            Some(format!("pre {v} post"))
        }),
        ("cat <<-EOF\n\tpre {x} post\n\tEOF", |v| {
            Some(format!("pre {v} post"))
        }),
        ("cat <<EOF | cat\n'{x}' \"{x}\"\nEOF", |v| {
            Some(format!("'{v}' \"{v}\""))
        }),
        ("v={x}; printf '%s' \"$v\"", |v| Some(v.to_string())),
        ("f() { printf '%s' {x}; }; f", |v| Some(v.to_string())),
        ("printf '%s' {x} | cat", |v| Some(v.to_string())),
        ("printf '%s' \"$(printf '%s' {x})\"", |v| {
            Some(v.trim_end_matches('\n').to_string())
        }),
        ("case {x} in *) printf '%s' ok;; esac", |_| {
            Some("ok".into())
        }),
        ("test -n {x} || printf '%s' empty", |v| {
            Some(if v.is_empty() {
                "empty".into()
            } else {
                String::new()
            })
        }),
        // The entry upstream ships; `echo` may interpret backslashes, so only safety counts.
        ("echo 'Workflow result: {x}'", |_| None),
        ("echo Workflow result: {x}", |_| None),
    ]
}

#[tokio::test]
async fn no_payload_executes_in_any_position() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let payloads = payloads(&marker);
    assert_eq!(payloads.len(), 72);
    let mut runs = 0;
    for (command, expect) in positions() {
        let spec = CommandSpec::new(command);
        for p in &payloads {
            let r = run_command(&spec, &ctx(json!({ "x": p })), Some(dir.path())).await;
            runs += 1;
            assert!(
                !marker.exists(),
                "payload {p:?} executed in `{command}`: {r:?}"
            );
            let out = ok_output(&r);
            if let Some(want) = expect(p) {
                assert_eq!(
                    out,
                    want.trim_end_matches(['\n', '\r']),
                    "payload {p:?} in `{command}`"
                );
            }
        }
    }
    assert_eq!(runs, 72 * positions().len());
}

#[tokio::test]
async fn values_of_every_type_and_null() {
    let spec = CommandSpec::new("printf '[%s]' {s} {n} {b} {o} {a} {nil} {missing}");
    let r = run_command(
        &spec,
        &ctx(json!({"s": "$(id)", "n": 42, "b": true, "o": {"k": "`id`"}, "a": [1, "x y"], "nil": null})),
        None,
    )
    .await;
    // Null and absent values are no word at all unquoted (upstream drops them) …
    assert_eq!(
        ok_output(&r),
        r#"[$(id)][42][true][{"k":"`id`"}][[1,"x y"]]"#
    );
    // … and empty text inside quotes.
    let spec = CommandSpec::new("printf '%s' \"<{nil}>\" '<{missing}>'");
    let r = run_command(&spec, &ctx(json!({"nil": null})), None).await;
    assert_eq!(ok_output(&r), "<><>");
}

#[tokio::test]
async fn values_too_long_or_with_nul_fail_clearly() {
    let spec = CommandSpec::new("printf '%s' {x}");
    let long = "$(id)".repeat(MAX_VALUE_BYTES / 5 + 1);
    let r = run_command(&spec, &ctx(json!({ "x": long })), None).await;
    assert!(!r.success);
    assert!(
        r.output.contains("the value of {x} is") && r.output.contains("at most"),
        "{}",
        r.output
    );
    let r = run_command(&spec, &ctx(json!({ "x": "a\u{0}b" })), None).await;
    assert!(!r.success);
    assert!(r.output.contains("NUL"), "{}", r.output);
}

#[test]
fn unsafe_placements_are_refused_when_commands_yaml_loads() {
    for (command, needle) in [
        ("cat <<'EOF'\\n{x}\\nEOF", "quoted delimiter"),
        ("echo $(( {n} + 1 ))", "arithmetic"),
        ("echo `echo {x}`", "backquotes"),
        ("echo ${a:-{x}}", "${"),
    ] {
        let yaml = format!("commands:\n  bad:\n    command: \"{command}\"\n");
        let e = CommandRegistry::parse(&yaml).unwrap_err();
        assert!(e.contains("command 'bad'") && e.contains(needle), "{e}");
    }
    // The shipped examples load.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    assert!(CommandRegistry::load(&examples).is_ok());
}
