//! The `decide` program: a thin shell over the library's command line.

fn main() -> std::process::ExitCode {
    decide::cli::main()
}
