//! `solaria-hook`: the small hook command (see `solaria_hook::client`).

fn main() -> std::process::ExitCode {
    solaria_hook::client::main()
}
