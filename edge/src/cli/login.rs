//! `solaria login SERVER --token TOKEN` and `solaria logout`.

use anyhow::Context;
use solaria_edge::app::App;
use solaria_edge::sync::client::Client;
use solaria_edge::sync::credentials::{self, Credentials};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct LoginArgs {
    /// The central service, e.g. https://memory.example.com
    server: String,
    /// The enrollment token the operator gave you (`solaria-central enroll-token`).
    #[arg(long)]
    token: String,
    /// This machine's name as other machines will see it (default: the config's or the host name).
    #[arg(long)]
    name: Option<String>,
    /// A CA certificate (PEM) to trust, for a self-hosted server with its own CA.
    #[arg(long)]
    ca_cert: Option<PathBuf>,
}

impl LoginArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        solaria_edge::sync::client::check_server(&self.server)?;
        let store = app.store()?;
        let name = self.name.unwrap_or_else(|| app.config.machine_name());
        let ca = match &self.ca_cert {
            Some(path) => {
                // Keep our own copy: the file given may move; the data dir stays.
                let kept = app.paths.data_dir.join("server-ca.pem");
                std::fs::copy(path, &kept)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                Some(kept)
            }
            None => None,
        };
        let client = Client::new(&self.server, ca.as_deref())?;
        let enrolled = client.enroll(self.token.trim(), &name, store.machine_id())?;
        let creds = Credentials {
            server: self.server.trim_end_matches('/').to_string(),
            machine_id: enrolled.machine_id,
            account_id: enrolled.account_id,
            credential: enrolled.credential,
            ca_cert: ca,
        };
        credentials::save(&app.paths.data_dir, &creds).with_context(|| {
            format!(
                "cannot save the credentials in {}",
                app.paths.data_dir.display()
            )
        })?;
        println!(
            "Logged in to {} as machine {name} ({}). Run `solaria sync` to push this machine's memory and pull the others'.",
            creds.server, creds.machine_id
        );
        Ok(())
    }
}

#[derive(Debug, clap::Args)]
pub struct LogoutArgs {}

impl LogoutArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        if credentials::remove(&app.paths.data_dir)? {
            println!("Logged out: this machine no longer syncs. Its local memory is kept.");
        } else {
            println!("This machine was not logged in to any server.");
        }
        Ok(())
    }
}
