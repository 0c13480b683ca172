//! `solaria-central enroll-token`: a single-use enrollment token for a machine of
//! one person. The token alone goes to standard output (for a script to take); how
//! to use it goes to standard error.

use anyhow::Context;
use solaria_central::storage::Storage;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The account's name or id.
    account: String,
    /// Whose machine it will be (their email); may be left out when the
    /// account has one person.
    #[arg(long)]
    person: Option<String>,
    /// How long the token stays valid: 30m, 12h, 7d.
    #[arg(long, default_value = "24h")]
    ttl: String,
}

impl Args {
    pub async fn run(self, storage: &Storage) -> anyhow::Result<()> {
        let ttl = parse_duration(&self.ttl)?;
        let account = storage.find_account(&self.account).await?;
        let person = match &self.person {
            Some(email) => storage.find_person(account, email).await?,
            None => storage.sole_person(account).await?,
        };
        let token = storage.enrollment_token_for(account, person, ttl).await?;
        println!("{token}");
        eprintln!(
            "single use, valid for {}s: on the machine, run `solaria login SERVER --token {token}`",
            ttl.as_secs()
        );
        Ok(())
    }
}

/// A duration as typed: a number and a unit (s, m, h or d; hours when none).
fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = num
        .parse()
        .with_context(|| format!("`{t}` is not a duration like 30m, 12h or 7d"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" | "" => 3600,
        "d" => 86_400,
        _ => anyhow::bail!("`{t}` is not a duration like 30m, 12h or 7d"),
    };
    Ok(Duration::from_secs(n * secs))
}
