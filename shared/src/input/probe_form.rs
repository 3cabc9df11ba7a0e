//! The probe form's fields, checked as they are typed: the options they describe (none while
//! something is wrong) and the note under the URL (the server checks again).

use crate::input::{check_url, parse_headers};
use crate::migration::Migrate;
use crate::network::NetworkProfile;
use crate::{ConnectionMode, Method, ProbeOptions, Protocol, Visibility};

/// Requests at once the form's option sends per protocol (within any server's bound).
pub const STREAMS_AT_ONCE: u32 = 8;

/// Most attempts per protocol, and most rounds, the form offers.
pub const MAX_REPEAT: u32 = 10;

/// What the probe form's fields hold, as typed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeFields {
    /// The URL.
    pub url: String,
    /// The protocols ticked, in protocol order.
    pub protocols: Vec<Protocol>,
    /// Attempts per round (already clamped to `1..=MAX_REPEAT`).
    pub repeat: u32,
    /// Rounds (already clamped to `1..=MAX_REPEAT`).
    pub rounds: u32,
    /// Warm, cold or resumed connections.
    pub mode: ConnectionMode,
    /// GET or HEAD.
    pub method: Method,
    /// Request headers, one per line.
    pub headers: String,
    /// Skip certificate verification.
    pub insecure: bool,
    /// Follow redirects.
    pub follow: bool,
    /// Try HTTP/3 directly.
    pub h3_direct: bool,
    /// Move each HTTP/3 connection to a new port (only with HTTP/3 ticked).
    pub migrate: bool,
    /// Then send [`STREAMS_AT_ONCE`] requests at once.
    pub at_once: bool,
    /// List the result publicly.
    pub public: bool,
    /// Network conditions' text (empty: none; ignored when the server takes none).
    pub network: String,
    /// The vantages ticked, in the server's order.
    pub vantages: Vec<String>,
    /// Whether the server offers a choice of vantages (then at least one must be ticked).
    pub vantages_offered: bool,
}

impl ProbeFields {
    /// Why the network figures are refused, if they are (only when the server takes them).
    pub fn network_problem(&self, network_enabled: bool) -> Option<String> {
        self.network(network_enabled).err()
    }

    /// The network conditions asked for, if any.
    fn network(&self, network_enabled: bool) -> Result<Option<NetworkProfile>, String> {
        let text = self.network.trim();
        (network_enabled && !text.is_empty())
            .then(|| NetworkProfile::parse(text))
            .transpose()
    }

    /// The options the fields describe, or `None` while something is wrong (each problem is
    /// shown beside its field).
    pub fn options(&self, network_enabled: bool) -> Option<ProbeOptions> {
        let url = check_url(&self.url).ok()?;
        let headers = parse_headers(&self.headers).ok()?;
        let network = self.network(network_enabled).ok()?;
        if self.protocols.is_empty() || (self.vantages_offered && self.vantages.is_empty()) {
            return None;
        }
        let migrate =
            (self.migrate && self.protocols.contains(&Protocol::H3)).then_some(Migrate::Port);
        Some(ProbeOptions {
            url,
            protocols: self.protocols.clone(),
            method: self.method,
            repeat: self.repeat,
            rounds: self.rounds,
            mode: self.mode,
            headers,
            insecure: self.insecure,
            follow_redirects: self.follow,
            h3_direct: self.h3_direct,
            migrate,
            streams: self.at_once.then_some(STREAMS_AT_ONCE),
            visibility: if self.public {
                Visibility::Public
            } else {
                Visibility::Unlisted
            },
            vantages: self.vantages.clone(),
            network,
            ..ProbeOptions::default()
        })
    }
}

/// The note under the URL field and whether it is an error: the URL's problem once `show`
/// (typed in and left, a submit, or anything in the field), "Ready to measure." when it holds,
/// else the rule (saying so when the server measures public addresses only).
pub fn url_note(url: &str, show: bool, public_only: bool) -> (String, bool) {
    match check_url(url) {
        Ok(_) => ("Ready to measure.".into(), false),
        Err(reason) if show => (reason, true),
        Err(_) if public_only => (
            "http or https; this server only measures public addresses.".into(),
            false,
        ),
        Err(_) => ("An http or https URL.".into(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> ProbeFields {
        ProbeFields {
            url: " https://example.com/ ".into(),
            protocols: Protocol::ALL.to_vec(),
            repeat: 2,
            rounds: 4,
            ..ProbeFields::default()
        }
    }

    #[test]
    fn the_fields_make_the_options() {
        let o = ProbeFields {
            headers: "Accept: text/html".into(),
            migrate: true,
            at_once: true,
            public: true,
            network: "rtt=60ms".into(),
            method: Method::Head,
            mode: ConnectionMode::Cold,
            ..fields()
        }
        .options(true)
        .unwrap();
        assert_eq!(o.url, "https://example.com/");
        assert_eq!(o.headers.len(), 1);
        assert_eq!(o.migrate, Some(Migrate::Port));
        assert_eq!(o.streams, Some(STREAMS_AT_ONCE));
        assert_eq!(o.visibility, Visibility::Public);
        assert!(o.network.is_some());
        assert_eq!((o.method, o.mode), (Method::Head, ConnectionMode::Cold));
        let plain = fields().options(false).unwrap();
        assert_eq!(plain.visibility, Visibility::Unlisted);
        assert_eq!(
            (plain.migrate, plain.streams, plain.network),
            (None, None, None)
        );
    }

    #[test]
    fn migration_needs_http3_and_problems_start_nothing() {
        let without_h3 = ProbeFields {
            protocols: vec![Protocol::H1, Protocol::H2],
            migrate: true,
            ..fields()
        };
        assert_eq!(without_h3.options(false).unwrap().migrate, None);
        let refused = [
            ProbeFields {
                url: "ftp://x".into(),
                ..fields()
            },
            ProbeFields {
                protocols: Vec::new(),
                ..fields()
            },
            ProbeFields {
                headers: "no colon".into(),
                ..fields()
            },
            ProbeFields {
                vantages_offered: true,
                ..fields()
            },
        ];
        for f in refused {
            assert_eq!(f.options(false), None, "{f:?}");
        }
        let figures = ProbeFields {
            network: "rtt=fast".into(),
            ..fields()
        };
        assert!(figures.network_problem(true).is_some());
        assert_eq!(figures.options(true), None);
        assert_eq!(
            figures.network_problem(false),
            None,
            "ignored without the offer"
        );
        assert!(figures.options(false).is_some());
    }

    #[test]
    fn the_url_note_waits_for_the_visitor() {
        assert_eq!(
            url_note("", false, false),
            ("An http or https URL.".into(), false)
        );
        assert!(
            url_note("", false, true)
                .0
                .contains("only measures public addresses")
        );
        let (reason, error) = url_note("", true, false);
        assert!(reason.starts_with("Enter the URL") && error);
        assert_eq!(
            url_note("https://example.com/", false, false),
            ("Ready to measure.".into(), false)
        );
    }
}
