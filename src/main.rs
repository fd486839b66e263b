//! The `decide` program: the command line (`src/cli/`) over the libraries
//! (`crates/engine/`, `crates/tools/`, `crates/serve/`).

// `println!` and `eprintln!` panic when the reader of a pipe goes away: writes go through
// `cli::stdio`, which ends quietly instead.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod cli;

fn main() -> std::process::ExitCode {
    match cli::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(code) => std::process::ExitCode::from(code),
    }
}
