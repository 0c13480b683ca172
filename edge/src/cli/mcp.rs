//! `solaria mcp`: serve the memory to an agent over MCP (stdio).

use super::App;

#[derive(Debug, clap::Args)]
pub struct Args {}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        crate::mcp::serve(App {
            config: app.config.clone(),
            paths: app.paths.clone(),
        })
    }
}
