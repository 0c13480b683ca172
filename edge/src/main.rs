//! `solaria`: the edge agent's command line. The CLI is declared here and nowhere
//! else, so no module of the library can reach it: the surfaces sit on top.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    quiet_on_closed_stdout();
    cli::Cli::parse().run()
}

/// `solaria search … | head` closes our stdout early; Rust's `println!` then panics
/// ("failed printing to stdout"). A reader that stopped reading is not an error:
/// end quietly instead of printing a panic at the user.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") {
            std::process::exit(0);
        }
        default(info);
    }));
}
