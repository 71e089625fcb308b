//! What an action command can see of hensuc's environment (docs/security.md, *Environment of
//! a command*): the base variables, what its entry sets or passes by name, its values — never a
//! provider key.

use std::ffi::OsString;

use hensu_host::command_script::rewrite;
use hensu_host::{CommandRegistry, CommandSpec, command_env, run_command};
use hensu_runtime::{CommandRunner as _, Context};
use serde_json::json;

use super::{ctx, ok_output};

fn host_env() -> Vec<(OsString, OsString)> {
    [
        ("PATH", "/opt/bin:/usr/bin:/bin"),
        ("HOME", "/home/ada"),
        ("LANG", "C.UTF-8"),
        ("LC_TIME", "en_GB.UTF-8"),
        ("TMPDIR", "/var/tmp"),
        ("OPENAI_API_KEY", "sk-proj-secret"),
        ("ANTHROPIC_API_KEY", "sk-ant-secret"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
        ("GITHUB_TOKEN", "ghp_secret"),
        ("DATABASE_URL", "postgres://u:p@h/db"),
        ("DEPLOY_TARGET", "staging"),
    ]
    .into_iter()
    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    .collect()
}

fn names(env: &[(OsString, OsString)]) -> Vec<String> {
    env.iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn only_the_base_variables_entry_variables_and_values_are_passed() {
    let mut spec = CommandSpec::new("deploy {target}");
    spec.env.insert("CI".into(), "true".into());
    spec.pass_env.push("DEPLOY_TARGET".into());
    spec.pass_env.push("NOT_SET_ANYWHERE".into());
    let script = rewrite(&spec.command).unwrap();
    let env = command_env(&spec, &script, &ctx(json!({"target": "eu"})), host_env()).unwrap();
    assert_eq!(
        names(&env),
        [
            "PATH",
            "HOME",
            "LANG",
            "TMPDIR",
            "LC_TIME",
            "DEPLOY_TARGET",
            "CI",
            "HENSU_VALUE_target"
        ]
    );
    // No PATH at all: a usual search path, so `sh` still finds the tools.
    let env = command_env(&spec, &script, &Context::default(), Vec::new()).unwrap();
    assert_eq!(
        env[0],
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())
    );
}

#[tokio::test]
async fn a_command_cannot_read_a_provider_key() {
    // Whatever this test process has in its environment, the command sees only the base
    // variables (hensuc's own test sets a key: `hensuc/tests` *security*).
    let spec = CommandSpec::new("env | sort");
    let r = run_command(&spec, &Context::default(), None).await;
    let out = ok_output(&r);
    for line in out.lines() {
        let name = line.split('=').next().unwrap();
        assert!(
            hensu_host::BASE_ENV.contains(&name)
                || name.starts_with("LC_")
                || ["PWD", "SHLVL", "_", "OLDPWD"].contains(&name),
            "unexpected variable {name} in a command's environment"
        );
    }
}

#[tokio::test]
async fn pass_env_and_env_are_read_from_commands_yaml() {
    let reg = CommandRegistry::parse(
        "commands:\n  show:\n    command: printf '%s|%s' \"$GREETING\" \"$HOME\"\n    env:\n      GREETING: hello\n    pass_env: [HOME]\n",
    )
    .unwrap();
    let spec = reg.get("show").unwrap();
    assert_eq!(spec.pass_env, ["HOME"]);
    let r = reg.execute("show", &Context::default()).await;
    let home = std::env::var("HOME").unwrap_or_default();
    assert_eq!(ok_output(&r), format!("hello|{home}"));
    for (yaml, needle) in [
        ("pass_env: OPENAI_API_KEY", "list of variable names"),
        ("pass_env: [1]", "list of variable names"),
        ("pass_env: [\"A-B\"]", "not a variable name"),
        ("pass_env: [HENSU_VALUE_x]", "reserved"),
        ("env: {HENSU_VALUE_x: 1}", "reserved"),
    ] {
        let text = format!("commands:\n  c:\n    command: true\n    {yaml}\n");
        let e = CommandRegistry::parse(&text).unwrap_err();
        assert!(e.contains(needle), "{yaml}: {e}");
    }
}
