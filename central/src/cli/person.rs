//! `solaria-central person add|list|remove`: the people of an account, each
//! machine belonging to one of them.

use solaria_central::storage::{Role, Storage};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Add a person to an account.
    Add {
        /// The account's name or id.
        account: String,
        /// Their email: how they are named from now on.
        email: String,
        /// admin (manages people, machines and sharing) or member.
        #[arg(long, default_value = "member")]
        role: String,
    },
    /// List the people of an account, removed ones too.
    List { account: String },
    /// Remove a person: their machines are refused from their next request on.
    Remove {
        account: String,
        email: String,
        /// Also erase what they wrote (tombstones, which reach every machine of the
        /// account at its next sync).
        #[arg(long)]
        erase: bool,
    },
}

impl Command {
    /// `actor`: who runs it, as the audit log names them.
    pub async fn run(self, storage: &Storage, actor: &str) -> anyhow::Result<()> {
        match self {
            Command::Add {
                account,
                email,
                role,
            } => {
                let role: Role = role.parse().map_err(anyhow::Error::msg)?;
                let account = storage.find_account(&account).await?;
                storage.add_person(account, &email, role, actor).await?;
                println!(
                    "added {} as {}; `enroll-token ACCOUNT --person {}` enrolls a machine of theirs",
                    email.trim(),
                    role.as_str(),
                    email.trim()
                );
            }
            Command::List { account } => {
                let account = storage.find_account(&account).await?;
                for p in storage.list_people(account).await? {
                    let status = match p.removed_at {
                        Some(t) => format!("removed {t}"),
                        None => format!("{} active machine(s)", p.active_machines),
                    };
                    println!("{:<32} {:<7} {status}", p.email, p.role.as_str());
                }
            }
            Command::Remove {
                account,
                email,
                erase,
            } => remove(storage, &account, &email, erase, actor).await?,
        }
        Ok(())
    }
}

async fn remove(
    storage: &Storage,
    account: &str,
    email: &str,
    erase: bool,
    actor: &str,
) -> anyhow::Result<()> {
    let account = storage.find_account(account).await?;
    let done = storage.remove_person(account, email, erase, actor).await?;
    if done.already_removed {
        println!(
            "{} had been removed already: {} record(s) erased",
            email.trim(),
            done.records_erased
        );
        return Ok(());
    }
    println!(
        "removed {}: {} machine(s) revoked, {} unused enrollment token(s) spent{}",
        email.trim(),
        done.machines_revoked,
        done.tokens_spent,
        if erase {
            format!(", {} record(s) erased", done.records_erased)
        } else {
            String::new()
        }
    );
    Ok(())
}
