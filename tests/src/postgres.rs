//! A throwaway PostgreSQL cluster for tests: Debian's server binaries in a
//! temporary folder, on a free loopback port, as the `postgres` user when the
//! tests run as root (the server refuses root), trusting local connections as
//! user `h123`. Stopped (`pg_ctl -m fast`) when dropped; [`PgCluster::shared`]
//! starts one per test binary, stopped by a watchdog once the binary exits.

use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The environment variable that makes PostgreSQL tests required (CI sets it):
/// then a missing or broken PostgreSQL fails the tests instead of skipping them.
pub const REQUIRED_VAR: &str = "H123_POSTGRES_TESTS";

/// A running PostgreSQL cluster.
pub struct PgCluster {
    dir: PathBuf,
    /// Removes the folder on drop (absent for the shared cluster, whose watchdog removes it).
    _temp: Option<tempfile::TempDir>,
    bin: PathBuf,
    port: u16,
    fsync: bool,
    next_db: AtomicUsize,
}

impl PgCluster {
    /// Whether PostgreSQL tests must run (`H123_POSTGRES_TESTS=1`).
    pub fn required() -> bool {
        std::env::var(REQUIRED_VAR).is_ok_and(|v| v == "1")
    }

    /// The folder of `initdb` and `pg_ctl`: `$H123_PG_BIN`, else the newest
    /// `/usr/lib/postgresql/*/bin` (Debian's layout).
    pub fn bin_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("H123_PG_BIN") {
            return Some(PathBuf::from(dir));
        }
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let version = entry.file_name().to_str()?.parse().ok()?;
                let bin = entry.path().join("bin");
                bin.join("pg_ctl").is_file().then_some((version, bin))
            })
            .collect();
        versions.sort();
        versions.pop().map(|(_, bin)| bin)
    }

    /// The cluster this test binary shares, started on first use; `None`
    /// (said on stderr) when PostgreSQL is not installed and not required.
    ///
    /// # Panics
    /// When PostgreSQL is required but cannot start.
    pub fn shared() -> Option<&'static PgCluster> {
        static SHARED: OnceLock<Option<PgCluster>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let cluster = Self::start_if_available()?;
                cluster.stop_after_exit();
                Some(cluster)
            })
            .as_ref()
    }

    /// Starts a cluster of its own; `None` (said on stderr) when PostgreSQL is
    /// not installed and not required.
    ///
    /// # Panics
    /// When PostgreSQL is required but cannot start, or is installed but fails.
    pub fn start_if_available() -> Option<PgCluster> {
        if Self::bin_dir().is_none() && !Self::required() {
            eprintln!("PostgreSQL is not installed: skipped (set {REQUIRED_VAR}=1 to require it)");
            return None;
        }
        Some(Self::start().unwrap_or_else(|e| panic!("PostgreSQL test cluster: {e:#}")))
    }

    /// Initialises and starts a cluster in a new temporary folder, with
    /// `fsync=off` (a test cluster's data need not survive a power cut).
    ///
    /// # Errors
    /// When the binaries are missing or `initdb`/`pg_ctl` fail.
    pub fn start() -> anyhow::Result<PgCluster> {
        Self::start_with(false)
    }

    /// Like [`PgCluster::start`], but durable as a production server
    /// (`fsync=on`), for figures to compare with SQLite's `synchronous=FULL`.
    ///
    /// # Errors
    /// When the binaries are missing or `initdb`/`pg_ctl` fail.
    pub fn start_durable() -> anyhow::Result<PgCluster> {
        Self::start_with(true)
    }

    fn start_with(fsync: bool) -> anyhow::Result<PgCluster> {
        let bin = Self::bin_dir()
            .context("no PostgreSQL server binaries (apt-get install postgresql)")?;
        let temp = tempfile::Builder::new().prefix("h123-pg").tempdir()?;
        let dir = temp.path().to_path_buf();
        if as_root() {
            run(Command::new("chown").arg("postgres:").arg(&dir))?;
        }
        run(server_command(&bin, "initdb")
            .arg("-D")
            .arg(dir.join("data"))
            .args(["-A", "trust", "-U", "h123", "--no-sync", "-E", "UTF8"]))?;
        let cluster = PgCluster {
            dir,
            _temp: Some(temp),
            bin,
            port: free_port()?,
            fsync,
            next_db: AtomicUsize::new(0),
        };
        cluster.start_again()?;
        Ok(cluster)
    }

    /// Starts the server again after [`PgCluster::stop`], on the same port
    /// with the same data (as a restart of the database service).
    ///
    /// # Errors
    /// When `pg_ctl` fails (its log is in the error).
    pub fn start_again(&self) -> anyhow::Result<()> {
        let dir = &self.dir;
        run(server_command(&self.bin, "pg_ctl")
            .arg("-D")
            .arg(dir.join("data"))
            .arg("-o")
            .arg(format!(
                "-k {} -p {} -c listen_addresses=127.0.0.1 -c fsync={}",
                dir.display(),
                self.port,
                if self.fsync { "on" } else { "off" }
            ))
            .arg("-l")
            .arg(dir.join("log"))
            .args(["-w", "start"]))
        .with_context(|| {
            let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
            format!("server log:\n{log}")
        })
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` on this cluster.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://h123@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates a new empty database and returns its URL.
    ///
    /// # Errors
    /// When `createdb` fails.
    pub fn create_database(&self) -> anyhow::Result<String> {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            self.next_db.fetch_add(1, Ordering::Relaxed)
        );
        run(Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-U", "h123", "-p"])
            .arg(self.port.to_string())
            .arg(&name))?;
        Ok(self.url(&name))
    }

    /// Stops the server now (`-m fast`: sessions are ended, nothing is lost).
    pub fn stop(&self) {
        let _ = run(server_command(&self.bin, "pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "fast", "-w", "stop"]));
    }

    /// Leaves a watchdog that stops the server and removes its folder once
    /// this process has exited (a static is never dropped).
    fn stop_after_exit(&self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let stop = if as_root() {
            format!("runuser -u postgres -- {}", pg_ctl.display())
        } else {
            pg_ctl.display().to_string()
        };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.2; done; \
             {stop} -D {dir}/data -m immediate stop; rm -rf {dir}",
            pid = std::process::id(),
            dir = self.dir.display()
        );
        let _ = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

fn as_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    *ROOT.get_or_init(|| {
        Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|out| out.stdout.trim_ascii() == b"0")
    })
}

/// A server binary, run as `postgres` when we are root.
fn server_command(bin: &Path, name: &str) -> Command {
    if as_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(bin.join(name));
        command
    } else {
        Command::new(bin.join(name))
    }
}

/// Runs `command` to its end with no terminal attached, failing with its output.
fn run(command: &mut Command) -> anyhow::Result<()> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !out.status.success() {
        bail!(
            "{command:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
