//! `solaria-central`: run and administer the central service. The command line is
//! declared here and nowhere else (`cli/`, one file per subcommand), so no module of
//! the library can reach it.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    cli::Cli::parse().run()
}
