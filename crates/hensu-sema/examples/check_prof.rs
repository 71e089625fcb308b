//! `check_prof FILE [REPS]`: lowers and checks one `.hwf` file REPS times (default 1), for
//! profiling the lowering and checks under callgrind. Generate input with `gen-workflow`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: check_prof FILE [REPS]");
        return ExitCode::from(2);
    };
    let reps = args
        .get(2)
        .and_then(|r| r.parse::<usize>().ok())
        .unwrap_or(1);
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let files = hensu_sema::files::NoFiles;
    let mut count = 0;
    for _ in 0..reps {
        let file = hensu_diagnostics::FileId::default();
        let lowered = hensu_sema::lower_source(&text, file, &files);
        count += lowered.diagnostics.len();
        if let Some(wf) = &lowered.workflow {
            count += hensu_sema::check::check_workflow(
                wf,
                &lowered.origins,
                hensu_sema::check::InputKind::Source,
            )
            .len();
        }
    }
    println!("{count} diagnostics");
    ExitCode::SUCCESS
}
