//! The command line (DESIGN.md §5): `serve`, `migrate`, `carriers`, `terminals`,
//! `api-keys`, `sandbox-carrier`.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};
use tidemark_domain::{ApiKeyId, ApiKeyScope};
use tokio_util::sync::CancellationToken;

pub mod carriers;
pub mod terminals;

use crate::app::App;
use crate::config::Config;
use crate::serve::open_store;
use crate::telemetry;
use crate::use_cases::accounts;

#[derive(Debug, Parser)]
#[command(
    name = "tidemark",
    version,
    about = "Self-hosted container shipment tracking"
)]
pub struct Cli {
    /// A TOML file with settings (see defaults.toml); TIDEMARK_* variables override it.
    #[arg(long, global = true, env = "TIDEMARK_CONFIG")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service; migrates the database first.
    Serve {
        /// `all` runs the API and the workers in this process.
        #[arg(long, value_enum, default_value_t = Role::All)]
        role: Role,
    },
    /// Apply database migrations and exit.
    Migrate,
    /// Validate the settings (defaults, file, TIDEMARK_* variables) and print the real
    /// carriers configured, one a line: SCAC, base URL, authentication kind.
    #[command(name = "check-config")]
    CheckConfig,
    /// Real carriers: their profiles, configuration and health, and a live check.
    #[command(subcommand)]
    Carriers(CarriersCommand),
    /// Container terminals: their profiles and configuration, and a live lookup.
    #[command(subcommand)]
    Terminals(TerminalsCommand),
    /// Manage API keys.
    #[command(name = "api-keys", subcommand)]
    ApiKeys(ApiKeysCommand),
    /// Replay a file of AIS NMEA sentences (`!AIVDM`/`!AIVDO`, one per line) into the
    /// database, then print what was decoded and stored.
    #[command(name = "ais-replay")]
    AisReplay { file: std::path::PathBuf },
    /// Run the sandbox carrier (SCAC TEST) on its own, as a DCSA Track & Trace 2.2 and 3.0 server.
    #[command(name = "sandbox-carrier")]
    SandboxCarrier {
        #[arg(long, default_value = "127.0.0.1:8081")]
        listen: std::net::SocketAddr,
    },
    /// Internal: reads one document from stdin under the given limits and answers its
    /// text and type on stdout, or a file of tracking numbers (CSV, XLSX) and answers its
    /// rows (the server runs this as a child process).
    #[command(name = "extract-document", hide = true)]
    ExtractDocument(crate::parts::documents::isolate::ChildArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Role {
    All,
    Api,
    Worker,
}

#[derive(Debug, Subcommand)]
pub enum CarriersCommand {
    /// Every carrier profile and configured line: configured?, protocol, auth kind, budget,
    /// and health (last success, last error, credentials refused, circuit open).
    List,
    /// One real call to the line with the configured credentials; says in words what went
    /// wrong (DNS, TLS, refused credentials, unknown number, rate limited) and exits
    /// non-zero on failure.
    Check {
        /// The line's SCAC, e.g. HLCU.
        scac: String,
        /// A number to look up; without one, a made-up number checks the credentials.
        /// With one, prints what a poll would make of the answer (nothing is stored).
        number: Option<String>,
        /// Ask the number only as this: bill_of_lading, booking_number or container
        /// (default: what it looks like, then the other types the line supports).
        #[arg(long = "type", value_parser = parse_request_type)]
        request_type: Option<tidemark_domain::RequestType>,
    },
}

#[derive(Debug, Subcommand)]
pub enum TerminalsCommand {
    /// Every terminal profile: ports reached, configured?, protocol and auth, budget, batch
    /// size, the base URL and how sure it is, and the settings still to give.
    List,
    /// One real lookup with the configured settings, printed as a report: the facts in
    /// force, the answer and how it was read (availability, last free day, holds, fees).
    /// Exits non-zero when the lookup fails or the container is not found.
    Check {
        /// The terminal's profile id, e.g. port_of_virginia (see `terminals list`).
        profile: String,
        /// A container to look up; without one, a made-up container checks that the
        /// terminal answers and accepts the credentials.
        container: Option<String>,
        /// The container's bill of lading (the Port of Virginia needs it).
        bill_of_lading: Option<String>,
        /// The sandbox only: when the container was discharged (RFC 3339; default two
        /// days ago).
        #[arg(long)]
        discharged_at: Option<chrono::DateTime<chrono::Utc>>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ApiKeysCommand {
    /// Create a key (and the account, if new); prints the key alone on stdout.
    Create {
        #[arg(long)]
        account: String,
        #[arg(long)]
        read_only: bool,
    },
    /// List an account's keys (prefix, scope, state); never the secrets.
    List {
        #[arg(long)]
        account: String,
    },
    /// Revoke a key by its id.
    Revoke {
        #[arg(long)]
        account: String,
        #[arg(long)]
        id: uuid::Uuid,
    },
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::load(cli.config.as_deref())?;
    telemetry::init_logging(&config);
    match cli.command {
        Command::Serve { role } => serve(config, role).await,
        Command::Migrate => {
            open_store(&config).await?;
            eprintln!("migrations applied");
            Ok(())
        }
        Command::CheckConfig => {
            for carrier in &config.carriers {
                let auth = carrier.auth.kind();
                println!("{}\t{}\t{auth}", carrier.scac, carrier.base_url);
            }
            if let Some(imap) = &config.email.imap {
                eprintln!(
                    "email submissions from the IMAP mailbox {}",
                    imap.mailbox_url()
                );
            }
            for mailbox in &config.edi.sftp {
                eprintln!(
                    "EDI from the SFTP mailbox {} (host key {:?})",
                    mailbox.url(),
                    mailbox.host_key
                );
            }
            eprintln!("configuration is valid");
            Ok(())
        }
        Command::Carriers(CarriersCommand::List) => carriers::list(config).await,
        Command::Carriers(CarriersCommand::Check {
            scac,
            number,
            request_type,
        }) => carriers::check(config, &scac, number.as_deref(), request_type).await,
        Command::Terminals(TerminalsCommand::List) => {
            terminals::list(&config).await;
            Ok(())
        }
        Command::Terminals(TerminalsCommand::Check {
            profile,
            container,
            bill_of_lading,
            discharged_at,
        }) => {
            terminals::check(
                config,
                &profile,
                container.as_deref(),
                bill_of_lading.as_deref(),
                discharged_at,
            )
            .await
        }
        Command::ApiKeys(command) => api_keys(config, command).await,
        Command::SandboxCarrier { listen } => sandbox_carrier(listen).await,
        Command::AisReplay { file } => ais_replay(config, &file).await,
        // `main` runs the child before any runtime or configuration (see there).
        Command::ExtractDocument(_) => bail!("extract-document runs only as the server's child"),
    }
}

async fn serve(config: Config, role: Role) -> anyhow::Result<()> {
    let app = Arc::new(App::from_config(config).await?);
    if let Some(issued) = accounts::bootstrap(&app).await? {
        // The newcomer's first key: printed once, on stdout, and never stored in clear.
        println!("{}", issued.secret.expose());
        tracing::info!(
            prefix = %issued.key.prefix,
            "created account \"default\" with the read-write API key printed above"
        );
    }
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));

    let workers = matches!(role, Role::All | Role::Worker)
        .then(|| tokio::spawn(Arc::clone(&app).run_workers(shutdown.clone())));
    if matches!(role, Role::All | Role::Api)
        && let Some(smtp) = app.config.email.smtp_listen
    {
        let listener = tokio::net::TcpListener::bind(smtp)
            .await
            .with_context(|| format!("binding TIDEMARK_EMAIL__SMTP_LISTEN {smtp}"))?;
        tracing::info!(listen = %smtp, account = %app.config.email.account, "receiving documents by SMTP");
        tokio::spawn(crate::use_cases::email::smtp::serve(
            app.mailroom(),
            listener,
            shutdown.clone(),
        ));
    }
    if matches!(role, Role::All | Role::Worker)
        && let Some(imap) = app.config.email.imap.clone()
    {
        tracing::info!(mailbox = %imap.mailbox_url(), account = %app.config.email.account, "receiving documents from an IMAP mailbox");
        tokio::spawn(crate::use_cases::email::imap::run(
            app.mailroom(),
            imap,
            shutdown.clone(),
        ));
    }
    if matches!(role, Role::All | Role::Api) {
        crate::connections::raise_open_file_limit(app.config.limits.connections.max_connections);
        let listener = tokio::net::TcpListener::bind(app.config.listen)
            .await
            .with_context(|| format!("binding TIDEMARK_LISTEN {}", app.config.listen))?;
        tracing::info!(listen = %app.config.listen, public_url = %app.config.public_url, "serving the API");
        Arc::clone(&app).serve(listener, shutdown.clone()).await?;
        shutdown.cancel();
    }
    if let Some(workers) = workers {
        workers.await.context("worker task")?;
    }
    tracing::info!("stopped");
    Ok(())
}

async fn sandbox_carrier(listen: std::net::SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding --listen {listen}"))?;
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    tracing::info!(%listen, "sandbox carrier serving DCSA T&T 2.2 at /v2/events and 3.0 at /v3/events");
    crate::parts::carriers::serve_sandbox(
        listener,
        crate::parts::carriers::sandbox(tidemark_geo::reference::ReferenceData::embedded()),
        std::sync::Arc::new(tidemark_domain::SystemClock),
        shutdown,
    )
    .await?;
    Ok(())
}

async fn cancel_on_signal(shutdown: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for SIGTERM");
                    let _ = ctrl_c.await;
                    shutdown.cancel();
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutting down: finishing requests and jobs in flight");
    shutdown.cancel();
}

async fn api_keys(config: Config, command: ApiKeysCommand) -> anyhow::Result<()> {
    let app = App::from_config(config).await?;
    match command {
        ApiKeysCommand::Create { account, read_only } => {
            let account = accounts::find_or_create_account(&app, &account).await?;
            let scope = if read_only {
                ApiKeyScope::ReadOnly
            } else {
                ApiKeyScope::ReadWrite
            };
            let issued = accounts::issue_key(&app, account.id, scope).await?;
            println!("{}", issued.secret.expose());
        }
        ApiKeysCommand::List { account } => {
            let Some(account) = app.store.account_by_name(&account).await? else {
                bail!("no account named {account:?}");
            };
            for key in app.store.list_api_keys(account.id).await? {
                let state = key
                    .revoked_at
                    .map_or_else(|| "active".to_owned(), |at| format!("revoked {at}"));
                println!(
                    "{}\t{}\t{}\t{}",
                    key.id,
                    key.prefix,
                    key.scope.as_str(),
                    state
                );
            }
        }
        ApiKeysCommand::Revoke { account, id } => {
            let Some(account) = app.store.account_by_name(&account).await? else {
                bail!("no account named {account:?}");
            };
            accounts::revoke_key(&app, &app.auth, account.id, ApiKeyId(id))
                .await
                .with_context(|| format!("revoking key {id}"))?;
            eprintln!("revoked {id}");
        }
    }
    Ok(())
}

async fn ais_replay(config: Config, file: &std::path::Path) -> anyhow::Result<()> {
    let store = open_store(&config).await?;
    let app = App::new(
        config,
        store,
        Arc::new(tidemark_domain::SystemClock),
        Arc::new(tidemark_domain::UuidV7Ids),
    );
    let report = crate::use_cases::vessels::ais::replay_file(&app, &app.config.ais, file)
        .await
        .with_context(|| format!("replaying {}", file.display()))?;
    let d = report.decode;
    println!(
        "lines {} decoded {} positions {} stored {} static {} bad_checksum {} malformed {} \
         unsupported_type {} no_position {} not_ais {} fragments_dropped {}",
        d.lines,
        d.decoded,
        report.positions,
        report.stored,
        report.statics,
        d.bad_checksum,
        d.malformed,
        d.unsupported_type,
        d.no_position,
        d.not_ais,
        d.fragments_dropped
    );
    Ok(())
}

/// `--type` of `carriers check`: a request type as the API names it.
fn parse_request_type(text: &str) -> Result<tidemark_domain::RequestType, String> {
    tidemark_domain::RequestType::parse(text.trim())
        .ok_or_else(|| format!("{text:?} is not bill_of_lading, booking_number or container"))
}

/// The program: parse the command line, start the runtime, run the command.
///
/// It lives in the library rather than in `main.rs` because a future is compiled where it is
/// polled: with `block_on(run(cli))` in the binary, the whole server's async code (everything
/// `run` awaits) was compiled a second time, in the binary's own crate, after the library and
/// on its own (cargo build --timings: 28 s of a 6 min 53 s cold build). Polled here, it is
/// compiled once, with the library's other code.
pub fn main() -> std::process::ExitCode {
    use std::process::ExitCode;

    let cli = Cli::parse();
    // The document-extraction child limits itself and reads one document: no runtime, no
    // settings, no logging, nothing it does not need under its memory limit.
    if let Command::ExtractDocument(args) = &cli.command {
        return crate::parts::documents::isolate::child_main(args);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tidemark: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tidemark: {error:#}");
            ExitCode::FAILURE
        }
    }
}
