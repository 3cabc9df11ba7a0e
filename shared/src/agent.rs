//! The agent protocol's wire types: what `h123 agent` sends to the server's
//! `/api/v1/agent/...` endpoints and gets back, and the event stream's
//! events tagged with the vantage they come from.

use crate::api::ProbeEvent;
use crate::json::ReadJson;
use crate::schema::{ProbeOptions, ProbeResult};
use serde::{Deserialize, Serialize};

/// The request header that carries the agent's h123 version.
pub const VERSION_HEADER: &str = "h123-agent-version";

/// `POST /api/v1/agent/claim`: who asks for a job (the token says which
/// agent it is; the name must match it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentClaim {
    /// The agent's vantage name, as configured on the server with its token.
    pub name: String,
    /// What people read for this vantage, e.g. "Frankfurt, DE".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Tags of this vantage, e.g. `eu`, `datacenter`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A job handed to an agent: run this probe from your vantage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentJob {
    /// The job's id, for its `events` and `result` endpoints.
    pub job_id: String,
    /// The probe it belongs to.
    pub probe_id: String,
    /// The probe's options as its creator sent them (credentials included:
    /// the probe sends them; the server redacts what comes back).
    pub options: ProbeOptions,
    /// How long the job stays the agent's without a word from it, in
    /// milliseconds: every post of events (an empty batch too) renews it.
    pub lease_ms: u64,
    /// What the server lets this job reach: the agent checks every address
    /// it dials (redirect hops, HTTP/3 endpoints, other addresses) against
    /// these rules as well as its own. Missing (an older server): public
    /// addresses only.
    #[serde(default)]
    pub rules: TargetRules,
}

/// The server's own rules for what a probe may reach (`h123 serve`'s
/// `--allow-private`, `--allow-target`, `--only-allowed-targets` and
/// `--allow-port`), carried in each job so an agent keeps them too. The
/// default is the strictest: public addresses only, any port.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct TargetRules {
    /// Every address may be reached, private and loopback ones included.
    pub allow_private: bool,
    /// Addresses reachable besides public ones, as `ADDR` or `ADDR:PORT`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_targets: Vec<String>,
    /// Only `allow_targets` may be reached, public addresses included.
    pub only_allowed_targets: bool,
    /// The ports every dialled address must use (any when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_ports: Vec<u16>,
}

/// `POST /api/v1/agent/jobs/{id}/result`: how the job ended at the agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentReport {
    /// The finished result (the server redacts it, stamps the vantage and analyzes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ProbeResult>,
    /// Why the agent did not run the probe (its own safety policy refused
    /// the target, or its limits the options), when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A probe event as the event stream sends it: tagged with the vantage it
/// comes from when the probe runs at several (untagged otherwise, as before).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
pub struct VantageEvent {
    /// The vantage's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vantage: Option<String>,
    /// The event.
    #[serde(flatten)]
    pub event: ProbeEvent,
}

/// The `major.minor` of a version string (`0.4.2` -> `0.4`); the whole
/// string when it has no second dot.
pub fn major_minor(version: &str) -> &str {
    let mut dots = version.match_indices('.').map(|(i, _)| i);
    match (dots.next(), dots.next()) {
        (Some(_), Some(second)) => &version[..second],
        _ => version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Protocol;

    #[test]
    fn tagged_events_read_as_plain_ones_and_back() {
        let event = ProbeEvent::Skipped {
            protocol: Protocol::H3,
            reason: "no".into(),
        };
        let tagged = VantageEvent {
            vantage: Some("fra1".into()),
            event: event.clone(),
        };
        let json = serde_json::to_string(&tagged).unwrap();
        assert!(json.contains(r#""vantage":"fra1""#), "{json}");
        assert!(json.contains(r#""type":"skipped""#), "{json}");
        let back: VantageEvent = serde_json::from_str(&json).unwrap();
        assert_eq!(back, tagged);
        // Old readers ignore the tag; an untagged event reads without one.
        let plain: ProbeEvent = serde_json::from_str(&json).unwrap();
        assert_eq!(plain, event);
        let untagged: VantageEvent =
            serde_json::from_str(&serde_json::to_string(&event).unwrap()).unwrap();
        assert_eq!(untagged.vantage, None);
    }

    #[test]
    fn versions_compare_by_major_and_minor() {
        assert_eq!(major_minor("0.4.2"), "0.4");
        assert_eq!(major_minor("1.12.0-rc.1"), "1.12");
        assert_eq!(major_minor("3"), "3");
        assert_eq!(major_minor("3.1"), "3.1");
    }
}
