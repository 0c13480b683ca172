//! The command line: one file per subcommand, each with its arguments and `run`.

mod commits;
mod conflicts;
mod context;
mod doctor;
mod embed;
mod export;
mod forget;
mod hook;
mod import;
mod install;
mod knowledge;
mod login;
mod mcp;
mod model;
mod model_offer;
mod prune;
mod recall;
mod review;
mod search;
mod serve;
mod show;
mod slash;
mod stats;
mod status;
mod sync;
mod timeline;
mod ui;

use clap::{Parser, Subcommand};
use serde::Serialize;
use solaria_edge::app::App;
use solaria_edge::config::Env;
use std::process::ExitCode;

/// SOLARIA Memory: a persistent, searchable memory for coding agents.
#[derive(Debug, Parser)]
#[command(name = "solaria", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Capture an agent's hook event: Claude Code's (`hook <event>`), OpenCode's,
    /// Codex CLI's or Gemini CLI's (`hook opencode|codex|gemini <event>`); JSON on
    /// stdin. Always exits 0.
    Hook(hook::Args),
    /// Search the memory: a compact index of matching records.
    Search(search::Args),
    /// What happened around a record: its session's events before and after it.
    Timeline(timeline::Args),
    /// Full records by id.
    Show(show::Args),
    /// The context SessionStart would inject for a project.
    Context(context::Args),
    /// Counts and facts about the local memory.
    Stats(stats::Args),
    /// Forget a record, a session or a project (tombstones that sync everywhere).
    Forget(forget::Args),
    /// Apply the retention policy now (this machine only).
    Prune(prune::Args),
    /// Wire SOLARIA into an agent (Claude Code, OpenCode, Codex CLI or Gemini CLI).
    Install(install::InstallArgs),
    /// Remove exactly what `install` added.
    Uninstall(install::UninstallArgs),
    /// Check the installs (Claude Code, OpenCode, Codex CLI, Gemini CLI), the daemon
    /// and the last capture of each agent; one line per check with the command that
    /// fixes it.
    Doctor(doctor::Args),
    /// Connect this machine to a central service with an enrollment token.
    Login(login::LoginArgs),
    /// Disconnect this machine from its central service (local memory is kept).
    Logout(login::LogoutArgs),
    /// Push this machine's changes and pull the other machines', now.
    Sync(sync::Args),
    /// Run in the background: scheduled sync (hourly by default) and weekly prune.
    Serve(serve::Args),
    /// Open the viewer: the memory as web pages served by the daemon (a one-time
    /// login link, printed and opened in your browser).
    Ui(ui::Args),
    /// Fill this machine with the account's whole memory from the central service.
    Restore(sync::RestoreArgs),
    /// Sync state: server, last sync, pending changes, conflicts.
    Status(status::Args),
    /// Local changes that lost to newer versions from other machines.
    Conflicts(conflicts::Args),
    /// Serve the memory to an agent over MCP (stdio): search, timeline, records, context.
    Mcp(mcp::Args),
    /// The embedding model behind semantic search: install it, see its status.
    Model(model::Args),
    /// Make the vectors records wait for, now (the daemon does it in the background).
    Embed(embed::Args),
    /// Record a decision: what was chosen, the alternatives, and why.
    Decide(knowledge::DecideArgs),
    /// The decisions that stand (with --all, superseded and retracted ones too).
    Decisions(knowledge::ListArgs),
    /// Why something is the way it is: decisions and memories first, with their rationale and commits.
    Why(knowledge::WhyArgs),
    /// Remember a fact, a preference, a principle… (below 0.5 confidence: an open question).
    Remember(knowledge::RememberArgs),
    /// Curated memories that stand.
    Memories(knowledge::MemoriesArgs),
    /// Open questions: memories too unsure to hold (confidence below 0.5).
    Questions(knowledge::ListArgs),
    /// Replace a decision or a memory with a new version (the old one stays readable).
    Supersede(knowledge::SupersedeArgs),
    /// Take a memory (a summarizer's proposal, an inferred one) as your word: full
    /// confidence; or say a decision whose code changed still holds.
    Confirm(knowledge::ConfirmArgs),
    /// Decisions and memories whose code changed since (confirm, supersede or forget
    /// each), and new ones close to a standing one (supersede, keep both or link).
    Review(review::Args),
    /// Two records a write proposed as a pair both hold: settle the pair.
    KeepBoth(knowledge::KeepBothArgs),
    /// Link two knowledge records (implements, supports, contradicts, depends_on…).
    Link(knowledge::LinkArgs),
    /// Units of work: start, complete, show (with their decisions, commits and events).
    Iteration(knowledge::IterationArgs),
    /// The project's commits (captured as the agent commits); `import` the history.
    Commits(commits::Args),
    /// Write the memory out: a JSON document `import solaria` reads back, or
    /// Markdown pages for people.
    Export(export::Args),
    /// Bring memory in: a SOLARIA export, claude-mem's database, Claude Code's
    /// memory files, or engram's export.
    Import(import::Args),
    /// What a prompt would bring back from the memory (the scores, and what would be added).
    Recall(recall::Args),
    /// Entry point of the `/memory` slash command in Claude Code.
    #[command(hide = true)]
    Slash(slash::Args),
}

impl Cli {
    /// Runs the command; errors are printed with what to do next.
    pub fn run(self) -> ExitCode {
        let env = Env::from_process();
        if let Command::Hook(args) = self.command {
            // Hooks take no chances: they never fail, whatever happens.
            args.run(&env);
            return ExitCode::SUCCESS;
        }
        match self.dispatch(&env) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("solaria: {e:#}");
                ExitCode::FAILURE
            }
        }
    }

    fn dispatch(self, env: &Env) -> anyhow::Result<()> {
        let app = App::load(env)?;
        match self.command {
            Command::Hook(_) => Ok(()),
            Command::Search(a) => a.run(&app),
            Command::Timeline(a) => a.run(&app),
            Command::Show(a) => a.run(&app),
            Command::Context(a) => a.run(&app),
            Command::Stats(a) => a.run(&app),
            Command::Forget(a) => a.run(&app),
            Command::Prune(a) => a.run(&app),
            Command::Install(a) => a.run(env),
            Command::Uninstall(a) => a.run(env),
            Command::Doctor(a) => a.run(env, &app),
            Command::Slash(a) => a.run(&app),
            Command::Login(a) => a.run(&app),
            Command::Logout(a) => a.run(&app),
            Command::Sync(a) => a.run(&app),
            Command::Status(a) => a.run(&app),
            Command::Restore(a) => a.run(&app),
            Command::Serve(a) => a.run(&app),
            Command::Ui(a) => a.run(&app),
            Command::Conflicts(a) => a.run(&app),
            Command::Mcp(a) => a.run(&app),
            Command::Model(a) => a.run(&app),
            Command::Embed(a) => a.run(&app),
            Command::Recall(a) => a.run(&app),
            Command::Decide(a) => a.run(&app),
            Command::Decisions(a) => a.decisions(&app),
            Command::Why(a) => a.run(&app),
            Command::Remember(a) => a.run(&app),
            Command::Memories(a) => a.run(&app),
            Command::Questions(a) => a.questions(&app),
            Command::Supersede(a) => a.run(&app),
            Command::Confirm(a) => a.run(&app),
            Command::Review(a) => a.run(&app),
            Command::KeepBoth(a) => a.run(&app),
            Command::Link(a) => a.run(&app),
            Command::Iteration(a) => a.run(&app),
            Command::Commits(a) => a.run(&app),
            Command::Export(a) => a.run(&app),
            Command::Import(a) => a.run(&app),
        }
    }
}

/// Prints `value` as JSON, or the text `text` makes of it.
fn print<T: Serialize + ?Sized>(
    json: bool,
    value: &T,
    text: impl FnOnce() -> String,
) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(value)?);
    } else {
        let text = text();
        print!("{text}");
        if !text.ends_with('\n') {
            println!();
        }
    }
    Ok(())
}
