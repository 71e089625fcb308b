//! `gen-workflow OUT BYTES [SEED]`: write a generated workflow of at least BYTES bytes to OUT.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(out), Some(bytes)) = (
        args.get(1),
        args.get(2).and_then(|b| b.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: gen-workflow OUT BYTES [SEED]");
        return ExitCode::from(2);
    };
    let seed = match args.get(3).map(|s| s.parse::<u64>()) {
        None => 7,
        Some(Ok(s)) => s,
        Some(Err(_)) => {
            eprintln!("usage: gen-workflow OUT BYTES [SEED] (SEED is an integer)");
            return ExitCode::from(2);
        }
    };
    let text = hensu_workload::generate(bytes, seed);
    if let Err(e) = std::fs::write(out, &text) {
        eprintln!("error: cannot write {out}: {e}");
        return ExitCode::from(2);
    }
    let nodes = text.matches("node(\"n").count() + text.matches("parallel(\"n").count();
    println!("{out}: {nodes} nodes, {} bytes", text.len());
    ExitCode::SUCCESS
}
