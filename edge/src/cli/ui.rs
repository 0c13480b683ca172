//! `solaria ui`: the viewer's address with a one-time login code, from the running
//! daemon; printed, and opened in the browser when there is a desktop to open it on.

use solaria_edge::app::App;
use solaria_edge::http::ui::login::CODE_LIFETIME;
use solaria_edge::ops::status;
use std::process::{Command, Stdio};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only print the address; do not open a browser.
    #[arg(long)]
    no_open: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let url = status::viewer_login(app)?;
        println!("{url}");
        eprintln!(
            "This link logs one browser into the viewer, once, within {} s (run `solaria ui` \
             again for another). Keep it to yourself: it shows your memory.",
            CODE_LIFETIME.as_secs()
        );
        if !self.no_open && !open(&url) {
            eprintln!("Open it in your browser.");
        }
        Ok(())
    }
}

/// Hands `url` to the desktop's opener; whether it started. Without a desktop (an
/// SSH session, a container) nothing is tried: the address is printed already.
fn open(url: &str) -> bool {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        let desktop = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()));
        if !desktop {
            return false;
        }
        "xdg-open"
    };
    Command::new(opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .is_ok()
}
