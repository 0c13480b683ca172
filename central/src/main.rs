//! `solaria-central`: the central service. Not implemented yet (see the central-service issue).

fn main() -> std::process::ExitCode {
    eprintln!(
        "solaria-central {}: the central service is not implemented yet; \
         the edge agent (`solaria`) works fully offline meanwhile.",
        env!("CARGO_PKG_VERSION")
    );
    std::process::ExitCode::from(2)
}
