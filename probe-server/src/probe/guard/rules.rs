//! A connect policy as a job carries it to an agent ([`TargetRules`]), so
//! the agent can keep its server's rules as well as its own.

use super::{AllowedTarget, ConnectPolicy};
use h123_shared::agent::TargetRules;

impl ConnectPolicy {
    /// This policy as rules an agent can apply (without any policy joined
    /// to it by [`ConnectPolicy::and`]: a server's own policy has none).
    pub fn rules(&self) -> TargetRules {
        TargetRules {
            allow_private: self.allow_private,
            allow_targets: self.allowed.iter().map(AllowedTarget::to_string).collect(),
            only_allowed_targets: self.only_listed,
            allow_ports: self.ports.clone(),
        }
    }

    /// The policy `rules` describe. An entry of `allow_targets` that does
    /// not read as an address is left out, which only makes it stricter.
    pub fn from_rules(rules: &TargetRules) -> Self {
        let allowed: Vec<AllowedTarget> = rules
            .allow_targets
            .iter()
            .filter_map(|t| t.parse().ok())
            .collect();
        if rules.allow_private {
            ConnectPolicy::allow_all()
        } else if rules.only_allowed_targets {
            ConnectPolicy::only(allowed)
        } else {
            ConnectPolicy::public_only(allowed)
        }
        .with_ports(rules.allow_ports.clone())
    }
}

impl std::fmt::Display for AllowedTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}", std::net::SocketAddr::new(self.ip, port)),
            None => write!(f, "{}", self.ip),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(list: &[&str]) -> Vec<AllowedTarget> {
        list.iter().map(|t| t.parse().unwrap()).collect()
    }

    #[test]
    fn rules_carry_a_policy_whole() {
        for policy in [
            ConnectPolicy::allow_all(),
            ConnectPolicy::public_only(targets(&["10.0.0.7:8443", "::1"])),
            ConnectPolicy::only(targets(&["[::1]:443"])).with_ports(vec![443, 8443]),
        ] {
            let rules = policy.rules();
            let json = serde_json::to_string(&rules).unwrap();
            let back: TargetRules = serde_json::from_str(&json).unwrap();
            assert_eq!(ConnectPolicy::from_rules(&back).rules(), rules, "{json}");
        }
        assert_eq!(
            ConnectPolicy::public_only(targets(&["10.0.0.7:8443", "::1"]))
                .rules()
                .allow_targets,
            ["10.0.0.7:8443", "::1"]
        );
        // No rules at all (an older server's job) is the strictest reading.
        let none: TargetRules = serde_json::from_str("{}").unwrap();
        assert!(
            ConnectPolicy::from_rules(&none)
                .check("127.0.0.1:80".parse().unwrap())
                .is_err()
        );
        assert!(
            ConnectPolicy::from_rules(&none)
                .check("93.184.215.14:80".parse().unwrap())
                .is_ok()
        );
    }

    #[test]
    fn an_agent_open_to_its_network_keeps_its_server_s_rules() {
        let server = ConnectPolicy::only(targets(&["127.0.0.1:8443"]));
        let agent = ConnectPolicy::allow_all().and(ConnectPolicy::from_rules(&server.rules()));
        assert!(!agent.allows_private());
        assert!(agent.check("127.0.0.1:8443".parse().unwrap()).is_ok());
        let refused = agent.check("127.0.0.1:9000".parse().unwrap()).unwrap_err();
        assert!(
            refused.contains("127.0.0.1 is a loopback address"),
            "{refused}"
        );
        // The agent's own rules hold too: a server open to everything does not open it.
        let own = ConnectPolicy::public_only(Vec::new()).with_ports(vec![443]);
        let agent = own.and(ConnectPolicy::allow_all());
        assert!(agent.check("10.0.0.1:443".parse().unwrap()).is_err());
        assert!(agent.check("93.184.215.14:80".parse().unwrap()).is_err());
        assert!(agent.check("93.184.215.14:443".parse().unwrap()).is_ok());
        // Both open: everything, as before.
        let open = ConnectPolicy::allow_all().and(ConnectPolicy::allow_all());
        assert!(open.allows_private());
        // The server's port list binds the agent's dials.
        let agent =
            ConnectPolicy::allow_all().and(ConnectPolicy::allow_all().with_ports(vec![8443]));
        assert!(agent.check_port(22).is_err());
        assert!(agent.check("10.0.0.1:8443".parse().unwrap()).is_ok());
    }
}
