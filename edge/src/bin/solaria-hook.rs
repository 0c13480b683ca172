//! `solaria-hook`: the small hook command (see `solaria_edge::relay::client`).

fn main() -> std::process::ExitCode {
    solaria_edge::relay::client::main()
}
