//! `solaria mcp`: serve the memory to an agent over MCP (stdio), and
//! `solaria mcp remote-config`: how to connect an MCP client to the central service.

use solaria_edge::app::App;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Option<McpCommand>,
}

#[derive(Debug, clap::Subcommand)]
enum McpCommand {
    /// Print a ready `claude mcp add` line and `.mcp.json` entry for the central
    /// service's MCP endpoint, with a fresh token for this machine.
    RemoteConfig,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        match self.command {
            None => Ok(solaria_edge::mcp::serve(app.clone())?),
            Some(McpCommand::RemoteConfig) => remote_config(app),
        }
    }
}

fn remote_config(app: &App) -> anyhow::Result<()> {
    let creds = app
        .credentials()?
        .ok_or(solaria_edge::sync::SyncError::NotLoggedIn)?;
    let client = solaria_edge::sync::client::Client::new(&creds.server, creds.ca_cert.as_deref())?;
    let token = client.token(&creds)?;
    let url = format!("{}/mcp", creds.server);
    let entry = serde_json::json!({
        "mcpServers": {
            "solaria-remote": {
                "type": "http",
                "url": url,
                "headers": { "Authorization": format!("Bearer {token}") }
            }
        }
    });
    println!("# Claude Code, from any directory:");
    println!(
        "claude mcp add --transport http solaria-remote {url} --header \"Authorization: Bearer {token}\""
    );
    println!("\n# or this entry in a project's .mcp.json:");
    println!("{}", serde_json::to_string_pretty(&entry)?);
    eprintln!(
        "\nThe token is this machine's and expires like every machine token (15 minutes unless the \
         operator set jwt_ttl_secs): run `solaria mcp remote-config` again for a fresh one. \
         Keep it out of version control. Over stdio, `solaria mcp` needs no token at all."
    );
    Ok(())
}
