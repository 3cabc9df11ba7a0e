//! The flags that decide what probes may reach, shared by `h123 serve` and
//! `h123 agent` (both run probes strangers ask for).

use crate::probe::guard::{AllowedTarget, ConnectPolicy};
use clap::Args;

/// `--allow-private`, `--allow-target`, `--only-allowed-targets`, `--allow-port`.
#[derive(Debug, Args)]
pub struct SafetyArgs {
    /// Turn the guard off: probes reach every address, private, loopback and `localhost` names included (trusted networks only).
    #[arg(long)]
    pub allow_private: bool,
    /// Let probes reach this one address (and port): repeatable, e.g. 10.0.0.7:8443.
    #[arg(long = "allow-target", value_name = "ADDR[:PORT]")]
    pub allow_targets: Vec<AllowedTarget>,
    /// Connect only to --allow-target addresses, public ones included (tests, closed deployments).
    #[arg(long)]
    pub only_allowed_targets: bool,
    /// Ports probes may connect to (repeatable), checked on every dialled address: redirect hops and HTTP/3 endpoints too; any when not given.
    #[arg(long = "allow-port", value_name = "PORT")]
    pub allow_ports: Vec<u16>,
}

impl SafetyArgs {
    /// The connect policy these flags ask for: every address
    /// (`--allow-private`), only the listed targets (`--only-allowed-targets`),
    /// or public ones plus the listed; each with the `--allow-port` list.
    pub fn policy(&self) -> ConnectPolicy {
        if self.allow_private {
            ConnectPolicy::allow_all()
        } else if self.only_allowed_targets {
            ConnectPolicy::only(self.allow_targets.clone())
        } else {
            ConnectPolicy::public_only(self.allow_targets.clone())
        }
        .with_ports(self.allow_ports.clone())
    }
}
