//! `solaria`: the edge agent's command line.

use clap::Parser;

fn main() -> std::process::ExitCode {
    solaria_edge::cli::Cli::parse().run()
}
