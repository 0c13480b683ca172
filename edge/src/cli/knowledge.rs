//! The knowledge commands: `decide`, `decisions`, `why`, `remember`, `memories`,
//! `questions`, `supersede`, `link` and `iteration start|complete|show`. Each
//! parses its flags into an operation's request and prints the result.

use solaria_edge::app::App;
use solaria_edge::ops::anchors::Requested;
use solaria_edge::ops::knowledge::{
    self as ops, DecisionRequest, Expiry, ListRequest, MemoryRequest, Replacement, Scope,
    WhyRequest,
};
use solaria_edge::ops::{OpError, input};
use solaria_edge::present::Reader;
use solaria_shared::knowledge::{Band, Confidence, Impact, IterationKind, LinkKind, MemoryType};
use solaria_shared::{KnowledgeKind, UnixMillis};
use std::io::{BufRead, IsTerminal, Write};

fn person() -> Reader {
    Reader::Person {
        now: UnixMillis::now(),
    }
}

/// Splits a list flag given once as `a; b; c` (or repeated) into items.
fn items(values: Vec<String>) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(';'))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// The decision's fields, as flags (all of them) or asked for on a terminal.
#[derive(Debug, Clone, clap::Args)]
pub struct DecisionFields {
    /// A short title: what was decided.
    #[arg(long)]
    title: Option<String>,
    /// The problem the decision answers.
    #[arg(long)]
    context: Option<String>,
    /// The option chosen.
    #[arg(long)]
    chosen: Option<String>,
    /// An option not taken (repeat, or separate with `;`).
    #[arg(long = "alternative", short = 'a')]
    alternatives: Vec<String>,
    /// Why this option.
    #[arg(long, short = 'r')]
    rationale: Option<String>,
    /// low, medium, high or critical.
    #[arg(long)]
    impact: Option<Impact>,
    /// The phase of the work it was taken in.
    #[arg(long)]
    phase: Option<String>,
    /// A tag (repeat, or separate with `;`).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// The iteration it belongs to (default: the active one, or the git branch's).
    #[arg(long)]
    iteration: Option<String>,
    /// The project (default: the current directory's).
    #[arg(long, short)]
    project: Option<String>,
    /// A file of the repository it speaks of (repeat): it is marked when the file
    /// changes. Paths its text names are found anyway.
    #[arg(long = "file")]
    files: Vec<String>,
    /// A function, type or other name in the code it speaks of (repeat).
    #[arg(long = "symbol")]
    symbols: Vec<String>,
}

impl DecisionFields {
    /// The request; on a terminal, asks for the required fields not given.
    fn request(self) -> anyhow::Result<DecisionRequest> {
        let mut f = self;
        let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        if interactive && (f.title.is_none() || f.chosen.is_none()) {
            let ask = |label: &str| -> anyhow::Result<String> {
                eprint!("{label}: ");
                std::io::stderr().flush()?;
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                Ok(line.trim().to_string())
            };
            if f.title.is_none() {
                f.title = Some(ask("Title (what was decided)")?);
            }
            if f.context.is_none() {
                f.context = Some(ask("Context (the problem)")?);
            }
            if f.chosen.is_none() {
                f.chosen = Some(ask("Chosen")?);
            }
            if f.alternatives.is_empty() {
                f.alternatives = vec![ask("Alternatives not taken (separated by ;)")?];
            }
            if f.rationale.is_none() {
                f.rationale = Some(ask("Rationale (why)")?);
            }
        }
        Ok(DecisionRequest {
            scope: Scope { project: f.project },
            title: f.title.unwrap_or_default(),
            context: f.context.unwrap_or_default(),
            chosen: f.chosen.unwrap_or_default(),
            alternatives: items(f.alternatives),
            rationale: f.rationale.unwrap_or_default(),
            impact: f.impact,
            phase: f.phase.unwrap_or_default(),
            tags: items(f.tags),
            iteration: f.iteration,
            anchors: Requested {
                files: f.files,
                symbols: f.symbols,
            },
        })
    }
}

/// `solaria decide`.
#[derive(Debug, clap::Args)]
pub struct DecideArgs {
    #[command(flatten)]
    fields: DecisionFields,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl DecideArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let written = ops::log_decision(app, &self.fields.request()?)?;
        let page = ops::page(app, written)?;
        super::print(self.json, &page, || page.text(person()))
    }
}

/// The memory's fields as flags.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryFields {
    /// What to remember.
    #[arg(required = true, num_args = 1..)]
    content: Vec<String>,
    /// fact, preference, relationship, principle, commitment, moment, skill or pattern.
    #[arg(long = "type", short = 't', default_value = "fact")]
    memory_type: MemoryType,
    /// 0.0–1.0: ≥ 0.95 stated, 0.80–0.94 strongly implied, 0.50–0.79 inferred;
    /// below 0.50 it is kept as an open question.
    #[arg(long, short = 'c')]
    confidence: Option<Confidence>,
    /// A tag (repeat, or separate with `;`).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// When it stops holding: 2026-12-31, a span from now (30d, 2w…) or `never`.
    /// Default: by type (a moment 30 days, a commitment 90, a fact 180; preferences,
    /// principles, relationships, skills and patterns never).
    #[arg(long)]
    expires: Option<String>,
    /// The project (default: the current directory's).
    #[arg(long, short)]
    project: Option<String>,
    /// A file of the repository it speaks of (repeat): it is marked when the file
    /// changes. Paths its text names are found anyway.
    #[arg(long = "file")]
    files: Vec<String>,
    /// A function, type or other name in the code it speaks of (repeat).
    #[arg(long = "symbol")]
    symbols: Vec<String>,
}

impl MemoryFields {
    fn request(self) -> Result<MemoryRequest, OpError> {
        let now = UnixMillis::now();
        // A span is forward from now here (an expiry is in the future).
        let expiry = match input::given(self.expires.clone()) {
            None => Expiry::ByType,
            Some(text) if text.trim().eq_ignore_ascii_case("never") => Expiry::Never,
            Some(text) if text.trim().ends_with(['d', 'h', 'w', 'm']) => {
                let back = input::when("expires", Some(text), now)?.unwrap_or(now);
                Expiry::At(UnixMillis(now.0 + (now.0 - back.0)))
            }
            other => input::when("expires", other, now)?.map_or(Expiry::ByType, Expiry::At),
        };
        Ok(MemoryRequest {
            scope: Scope {
                project: self.project,
            },
            memory_type: self.memory_type,
            content: self.content.join(" "),
            confidence: self.confidence,
            tags: items(self.tags),
            expiry,
            anchors: Requested {
                files: self.files,
                symbols: self.symbols,
            },
        })
    }
}

/// `solaria remember`.
#[derive(Debug, clap::Args)]
pub struct RememberArgs {
    #[command(flatten)]
    fields: MemoryFields,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl RememberArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let written = ops::remember(app, &self.fields.request()?)?;
        let page = ops::page(app, written)?;
        super::print(self.json, &page, || page.text(person()))
    }
}

/// The flags every listing shares.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only this project: its name, key, owner/repo or a path inside it.
    #[arg(long, short)]
    project: Option<String>,
    /// Superseded, retracted and expired ones too.
    #[arg(long)]
    all: bool,
    /// Most records listed.
    #[arg(long, short = 'n', default_value_t = 50)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl ListArgs {
    fn run(
        self,
        app: &App,
        what: &'static str,
        kinds: Vec<KnowledgeKind>,
        band: Option<Band>,
        memory_type: Option<MemoryType>,
    ) -> anyhow::Result<()> {
        let page = ops::listing(
            app,
            &ListRequest {
                project: self.project,
                kinds,
                all: self.all,
                band,
                memory_type,
                query: None,
                limit: self.limit,
            },
            what,
        )?;
        super::print(self.json, &page.machines.authored(&page.records), || {
            page.text(person())
        })
    }

    pub fn decisions(self, app: &App) -> anyhow::Result<()> {
        self.run(app, "decisions", vec![KnowledgeKind::Decision], None, None)
    }

    pub fn memories(
        self,
        app: &App,
        unconfirmed: bool,
        memory_type: Option<MemoryType>,
    ) -> anyhow::Result<()> {
        let band = unconfirmed.then_some(Band::Inferred);
        self.run(
            app,
            "memories",
            vec![KnowledgeKind::Memory],
            band,
            memory_type,
        )
    }

    pub fn questions(self, app: &App) -> anyhow::Result<()> {
        self.run(
            app,
            "open questions",
            vec![KnowledgeKind::Memory],
            Some(Band::OpenQuestion),
            None,
        )
    }
}

/// `solaria memories`.
#[derive(Debug, clap::Args)]
pub struct MemoriesArgs {
    #[command(flatten)]
    list: ListArgs,
    /// Only inferred memories (confidence 0.50–0.79), to confirm or drop.
    #[arg(long)]
    unconfirmed: bool,
    /// Only memories of this type: fact, preference, relationship, principle,
    /// commitment, moment, skill or pattern.
    #[arg(long = "type", short = 't')]
    memory_type: Option<MemoryType>,
}

impl MemoriesArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        self.list.memories(app, self.unconfirmed, self.memory_type)
    }
}

/// `solaria why QUERY`.
#[derive(Debug, clap::Args)]
pub struct WhyArgs {
    /// What the decision was about ("not use an ORM", "keyset pagination").
    #[arg(required = true, num_args = 1..)]
    query: Vec<String>,
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Most decisions and memories answered.
    #[arg(long, short = 'n', default_value_t = ops::WHY_DEFAULT)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl WhyArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let (answer, machines) = ops::why(
            app,
            &WhyRequest {
                query: self.query.join(" "),
                project: self.project,
                limit: self.limit,
            },
        )?;
        super::print(self.json, &answer, || answer.text(person(), &machines))
    }
}

/// `solaria supersede ID`: a new version of a decision or a memory.
#[derive(Debug, clap::Args)]
pub struct SupersedeArgs {
    /// The decision ([D#…]) or memory ([M#…]) replaced.
    id: String,
    /// A record already written that replaces it (one a write proposed beside
    /// it): nothing new is written.
    #[arg(long, conflicts_with_all = ["content", "confidence", "memory_type", "title", "chosen"])]
    by: Option<String>,
    /// The new memory's content (a memory is superseded by a memory).
    #[arg(long)]
    content: Option<String>,
    /// The new memory's confidence.
    #[arg(long)]
    confidence: Option<Confidence>,
    /// The new memory's type (default: the old one's).
    #[arg(long = "type")]
    memory_type: Option<MemoryType>,
    #[command(flatten)]
    fields: DecisionFields,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl SupersedeArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        if let Some(by) = &self.by {
            let written = ops::supersede_by(app, &self.id, by)?;
            let page = ops::page(app, written)?;
            return super::print(self.json, &page, || page.text(person()));
        }
        let replacement = match self.content {
            Some(content) => Replacement::Memory(MemoryRequest {
                scope: Scope::default(),
                memory_type: self.memory_type.unwrap_or_default(),
                content,
                confidence: self.confidence,
                tags: Vec::new(),
                expiry: Expiry::ByType,
                anchors: Requested {
                    files: self.fields.files,
                    symbols: self.fields.symbols,
                },
            }),
            None => Replacement::Decision(self.fields.request()?),
        };
        let written = ops::supersede(app, &self.id, &replacement)?;
        let page = ops::page(app, written)?;
        super::print(self.json, &page, || page.text(person()))
    }
}

/// `solaria confirm ID`: a memory (a summarizer's proposal, or one inferred) taken
/// as the user's word, or a decision whose code changed said to hold still.
#[derive(Debug, clap::Args)]
pub struct ConfirmArgs {
    /// The memory ([M#…]) or decision ([D#…]) confirmed.
    id: String,
    /// Its text as it should stand (default: as it is, without a proposal's mark).
    #[arg(long)]
    content: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl ConfirmArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let written = ops::confirm(app, &self.id, self.content)?;
        let page = ops::page(app, written)?;
        super::print(self.json, &page, || page.text(person()))
    }
}

/// `solaria keep-both A B`: two records a write proposed as a pair both hold.
#[derive(Debug, clap::Args)]
pub struct KeepBothArgs {
    /// One record of the pair ([D#…] or [M#…]).
    a: String,
    /// The other.
    b: String,
}

impl KeepBothArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let (a, b) = solaria_edge::ops::close_pairs::keep_both(app, &self.a, &self.b)?;
        println!(
            "Kept both {} and {}: the pair is settled, neither record changed.",
            a.citation(),
            b.citation()
        );
        Ok(())
    }
}

/// `solaria link FROM RELATION TO`.
#[derive(Debug, clap::Args)]
pub struct LinkArgs {
    /// The record the link starts from ([D#…], [M#…], [C#sha]…).
    from: String,
    /// implements, reverts, relates, supports, contradicts, depends_on, related or supersedes.
    relation: LinkKind,
    /// The record it points to.
    to: String,
    /// Why they are linked.
    #[arg(long, default_value = "")]
    note: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl LinkArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let written = ops::link(app, &self.from, self.relation, &self.to, &self.note)?;
        let page = ops::page(app, written)?;
        super::print(self.json, &page, || {
            format!("Linked {} {} {}\n", self.from, self.relation, self.to)
        })
    }
}

/// `solaria iteration …`.
#[derive(Debug, clap::Args)]
pub struct IterationArgs {
    #[command(subcommand)]
    action: IterationAction,
}

#[derive(Debug, clap::Subcommand)]
enum IterationAction {
    /// Start a unit of work (it becomes the project's active iteration).
    Start {
        /// What the work is.
        #[arg(required = true, num_args = 1..)]
        title: Vec<String>,
        /// feature, fix, spike, refactor, ship or audit.
        #[arg(long = "kind", short = 'k', default_value = "feature")]
        kind: IterationKind,
        #[arg(long, default_value = "")]
        description: String,
        #[arg(long, short)]
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Complete the active iteration (or the one named).
    Complete {
        id: Option<String>,
        /// It was abandoned, not completed.
        #[arg(long)]
        abandoned: bool,
        #[arg(long, default_value = "")]
        note: String,
        #[arg(long, short)]
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The active (or latest, or named) iteration with its decisions, commits and events.
    Show {
        id: Option<String>,
        #[arg(long, short)]
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

impl IterationArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        match self.action {
            IterationAction::Start {
                title,
                kind,
                description,
                project,
                json,
            } => {
                let w = ops::start_iteration(
                    app,
                    &Scope { project },
                    kind,
                    &title.join(" "),
                    &description,
                )?;
                let page = ops::page(app, w)?;
                super::print(json, &page, || page.text(person()))
            }
            IterationAction::Complete {
                id,
                abandoned,
                note,
                project,
                json,
            } => {
                let w = ops::complete_iteration(
                    app,
                    &Scope { project },
                    id.as_deref(),
                    abandoned,
                    &note,
                )?;
                let page = ops::page(app, w)?;
                super::print(json, &page, || page.text(person()))
            }
            IterationAction::Show { id, project, json } => {
                let page = ops::get_iteration(app, &Scope { project }, id.as_deref())?;
                super::print(json, &page, || page.text(person()))
            }
        }
    }
}
