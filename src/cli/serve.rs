//! `decide serve`: the policy as a local web app and an HTTP API (`crates/serve`), on the
//! loopback address unless told otherwise.

use std::net::SocketAddr;
use std::sync::Arc;

use clap::builder::TypedValueParser as _;
use decide_engine::error::{Error, ErrorKind, Result};

use super::{Config, Outcome, stdio};

/// Serve the memo as a local web page and an HTTP API, until Ctrl-C
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  decide serve                          (http://127.0.0.1:8080, the embedded policy)
  decide serve --rules my-rules --addr 127.0.0.1:9000
  DECIDE_TOKEN=s3cret decide serve --addr 0.0.0.0:8080   (other machines, with a token)
  decide serve --addr 0.0.0.0:8080 --token-file ~/.decide-token
  curl --data-binary @profile.yaml 'http://127.0.0.1:8080/api/decide?format=md'")]
#[command(mut_args(super::config::as_of_help(
    "The date prices are judged at where a request names none (YYYY-MM-DD); default the day of each request"
)))]
pub struct Args {
    #[command(flatten)]
    pub rules: super::RulesArgs,
    #[command(flatten)]
    pub as_of: super::AsOfArgs,
    /// The address to listen on; another than the loopback address is reachable from other
    /// machines, and a warning says so
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// A token every request must carry: scripts as `Authorization: Bearer TOKEN`, browsers by
    /// opening `/?token=TOKEN` once (the page then keeps it in a cookie). On the command line it
    /// is seen by every user of the machine (in the process list): prefer --token-file or
    /// `DECIDE_TOKEN`
    #[arg(long, conflicts_with = "token_file")]
    pub token: Option<String>,
    /// The most connections one client address may have open at once (a 503 beyond it), and
    /// a quarter of it the most requests it may have sending their bodies. Behind a reverse
    /// proxy every client has the proxy's address: raise it there
    #[arg(long, value_name = "N", default_value_t = decide_serve::Settings::default().max_connections_per_client, value_parser = clap::value_parser!(u32).range(1..=65_536).map(|n| n as usize))]
    pub connections_per_client: usize,
    /// A file whose text is the token (one line; its line break is not part of it): what
    /// --token is, unseen by the other users of the machine
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<std::path::PathBuf>,
}

/// The environment variable that holds the token, where neither --token nor --token-file does.
const TOKEN_VAR: &str = "DECIDE_TOKEN";

/// The token the server is started with, from --token-file, --token or `DECIDE_TOKEN` (in that
/// order), checked to be one a header can carry; none where none is set (an empty
/// `DECIDE_TOKEN` is none).
fn token(args: &Args) -> Result<Option<String>> {
    let (token, from) = if let Some(file) = &args.token_file {
        let text = std::fs::read_to_string(file).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot read the token file {}: {e}", file.display()),
            )
        })?;
        // One line: its line break is the file's, not the token's.
        let line = text
            .strip_suffix("\r\n")
            .or_else(|| text.strip_suffix('\n'))
            .unwrap_or(&text);
        (
            line.to_owned(),
            format!("the token file {}", file.display()),
        )
    } else if let Some(token) = &args.token {
        stdio::err(
            "warning: a token given with --token is seen by every user of this machine in the \
             process list; put it in a file for --token-file, or in DECIDE_TOKEN\n",
        );
        (token.clone(), "--token".to_owned())
    } else {
        match std::env::var(TOKEN_VAR) {
            Ok(token) if !token.is_empty() => (token, TOKEN_VAR.to_owned()),
            Ok(_) | Err(std::env::VarError::NotPresent) => return Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => (
                String::from_utf8_lossy(
                    std::env::var_os(TOKEN_VAR)
                        .unwrap_or_default()
                        .as_encoded_bytes(),
                )
                .into_owned(),
                TOKEN_VAR.to_owned(),
            ),
        }
    };
    decide_serve::check_token(&token).map_err(|why| {
        Error::new(ErrorKind::Usage, format!("{from}: {why}"))
            .help("choose a token of letters and digits, e.g. `openssl rand -hex 24`")
    })?;
    Ok(Some(token))
}

/// The page's PDF download: the memo printed by a browser on this machine, as `--format pdf`
/// does; none where no browser is found (the page then says why it offers no PDF).
fn printer() -> Option<decide_serve::Printer> {
    let printer = super::pdf::printer().ok()?;
    Some(Arc::new(move |html: &str, stop: &dyn Fn() -> bool| {
        // The server's stop is no signal of the command's: any will do to say so.
        let stopped = || stop().then(super::signals::Signal::terminate);
        match printer.print(html, &stopped) {
            Ok(super::pdf::Printed::Done(bytes)) => Ok(bytes),
            Ok(super::pdf::Printed::Stopped(_)) => {
                Err("stopped: the server is stopping, or the request went away".to_owned())
            }
            Err(e) => Err(e.render()),
        }
    }))
}

/// The variable that fixes glibc's mmap threshold ([`memory_given_back`]).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD_VAR: &str = "MALLOC_MMAP_THRESHOLD_";

/// On glibc, makes sure the server gives back to the system the memory a burst of large
/// requests took. glibc's malloc raises its mmap threshold each time it frees a block larger
/// than it, so once a 1 MiB upload was freed, the next ones come from the heap and their
/// memory stays with the process (26 MiB at rest, 68-92 MiB after 64 uploads of 900 KiB at
/// once, measured by tests/serve.rs). A fixed threshold (glibc's own default, 128 KiB) keeps
/// large blocks in mappings of their own, returned as they are freed (back to 30 MiB). glibc
/// reads the setting only when a process starts, so the server starts itself again with it
/// (the same process: `exec`), once; elsewhere, or when it cannot, it goes on as it is.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn memory_given_back() {
    use std::os::unix::process::CommandExt as _;
    if std::env::var_os(MMAP_THRESHOLD_VAR).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new(exe);
    if let Some(name) = args.next() {
        command.arg0(name);
    }
    // Returns only when the program could not be started again.
    let _ = command.args(args).env(MMAP_THRESHOLD_VAR, "131072").exec();
}

/// This machine's name, as other machines on its network usually reach it (`THIS-MACHINE` where
/// it cannot be read).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_graphic()))
        .unwrap_or_else(|| "THIS-MACHINE".to_owned())
}

/// Serves until SIGINT or SIGTERM; requests in flight finish first.
pub fn run(args: &Args) -> Result<Outcome> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    memory_given_back();
    let config = Config::newest(&args.rules);
    let policy = config.policy()?;
    let memo = config.memo()?;
    let token = token(args)?;
    // How a browser opens the first page (the token itself is not printed: the log may be
    // read by others).
    let with_token = if token.is_some() { "?token=TOKEN" } else { "" };
    let settings = decide_serve::Settings {
        // Without a token, a loopback server answers loopback names only (no DNS rebinding).
        local_only: args.addr.ip().is_loopback() && token.is_none(),
        token,
        log: Arc::new(|line| {
            stdio::err(&format!("{line}\n"));
        }),
        pdf: printer(),
        max_connections_per_client: args.connections_per_client,
        max_bodies_per_client: (args.connections_per_client / 4).max(1),
        ..decide_serve::Settings::default()
    };
    if !args.addr.ip().is_loopback() {
        stdio::err(&format!(
            "warning: {} is reachable from other machines{}\n",
            args.addr,
            if settings.token.is_some() {
                "; every request needs the token"
            } else {
                ", and anyone who reaches it can use it: set --token or DECIDE_TOKEN"
            }
        ));
    }
    let site = Arc::new(decide_serve::Site::new(
        policy,
        memo,
        args.as_of.as_of,
        settings,
    ));
    site.check()?;
    decide_serve::run(args.addr, site, |bound| {
        stdio::err(&format!(
            "decide serve: http://{bound}/{with_token} (the API: POST /api/decide); Ctrl-C stops it\n"
        ));
        // 0.0.0.0 is where the server listens, not an address a colleague can open.
        if bound.ip().is_unspecified() {
            stdio::err(&format!(
                "decide serve: colleagues open http://{}:{}/{with_token}\n",
                host_name(),
                bound.port()
            ));
        }
    })
    .map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot serve on {}: {e}", args.addr))
            .help("choose another address with --addr, e.g. --addr 127.0.0.1:8081")
    })?;
    Ok(Outcome::Clean)
}
