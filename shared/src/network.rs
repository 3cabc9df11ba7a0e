//! Network conditions: the delay, jitter, loss and rate limits a probe's
//! connections go through, named profiles of them, and the text form
//! (`rtt=100ms,jitter=10ms,loss=2%,down=10mbit,up=2mbit`) the CLI and the
//! API take.
//!
//! The profile is what was asked for; [`EmulatedPath`] (one per protocol
//! run) says how it was applied and what the emulated link did.

use crate::json::ReadJson;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Conditions applied to every packet of a probe's connections, in both
/// directions: half the round trip each way, jitter, random loss and a rate
/// limit per direction (the default adds nothing).
///
/// The API takes it as an object of these fields, or as text: a name
/// (`"3g"`) or figures (`"rtt=100ms,loss=2%"`). Figures are integers, so
/// the web UI carries no floating-point parsing or formatting.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NetworkProfile {
    /// The named profile these figures come from, if any (`3g`, `4g`,
    /// `cable`, `lossy-mobile`, `satellite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Round-trip time added, in milliseconds (half on each direction).
    pub rtt_ms: u32,
    /// Each packet's one-way delay varies by up to this much either way, in
    /// milliseconds; packets keep their order.
    #[serde(default)]
    pub jitter_ms: u32,
    /// Share of packets dropped at random in each direction, in basis
    /// points (hundredths of a percent: 250 is 2.5%).
    #[serde(default)]
    pub loss_basis_points: u32,
    /// Rate limit from the server to the client, in kbit/s (none: unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_kbit: Option<u64>,
    /// Rate limit from the client to the server, in kbit/s (none: unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_kbit: Option<u64>,
}

/// A named profile: its figures and where they come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedProfile {
    /// The name `--network` and the API take.
    pub name: &'static str,
    /// Round-trip time, ms.
    pub rtt_ms: u32,
    /// Jitter, ms.
    pub jitter_ms: u32,
    /// Loss, in basis points (hundredths of a percent).
    pub loss_basis_points: u32,
    /// Down rate, kbit/s.
    pub down_kbit: u64,
    /// Up rate, kbit/s.
    pub up_kbit: u64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The named profiles, in the order the UI offers them.
pub const NAMED_PROFILES: &[NamedProfile] = &[
    NamedProfile {
        name: "3g",
        rtt_ms: 300,
        jitter_ms: 0,
        loss_basis_points: 0,
        down_kbit: 1_600,
        up_kbit: 768,
        source: "WebPageTest's \"3G\" connectivity (1.6 Mbps/768 Kbps, 300 ms RTT)",
    },
    NamedProfile {
        name: "4g",
        rtt_ms: 170,
        jitter_ms: 0,
        loss_basis_points: 0,
        down_kbit: 9_000,
        up_kbit: 9_000,
        source: "WebPageTest's \"4G\" connectivity (9 Mbps, 170 ms RTT)",
    },
    NamedProfile {
        name: "cable",
        rtt_ms: 28,
        jitter_ms: 0,
        loss_basis_points: 0,
        down_kbit: 5_000,
        up_kbit: 1_000,
        source: "WebPageTest's \"Cable\" connectivity (5/1 Mbps, 28 ms RTT)",
    },
    NamedProfile {
        name: "lossy-mobile",
        rtt_ms: 190,
        jitter_ms: 20,
        loss_basis_points: 100,
        down_kbit: 900,
        up_kbit: 200,
        source: "BrowserStack's \"3.5g-hspa-lossy\" (900/200 Kbps, 190 ms, 1% loss), with 20 ms jitter",
    },
    NamedProfile {
        name: "satellite",
        rtt_ms: 600,
        jitter_ms: 10,
        loss_basis_points: 50,
        down_kbit: 10_000,
        up_kbit: 2_000,
        source: "a geostationary link: about 600 ms RTT (four legs of 35,786 km at the speed of light plus ground), 10/2 Mbps, 0.5% loss",
    },
];

/// Longest round trip a profile may add, in milliseconds.
pub const MAX_RTT_MS: u32 = 5_000;
/// Highest loss a profile may set, in basis points (50%).
pub const MAX_LOSS_BASIS_POINTS: u32 = 5_000;
/// Slowest rate a profile may set, in kbit/s.
pub const MIN_RATE_KBIT: u64 = 16;
/// Fastest rate a profile may set, in kbit/s (10 Gbit/s).
pub const MAX_RATE_KBIT: u64 = 10_000_000;

impl NamedProfile {
    /// This profile's figures as a [`NetworkProfile`].
    pub fn profile(&self) -> NetworkProfile {
        NetworkProfile {
            name: Some(self.name.to_owned()),
            rtt_ms: self.rtt_ms,
            jitter_ms: self.jitter_ms,
            loss_basis_points: self.loss_basis_points,
            down_kbit: Some(self.down_kbit),
            up_kbit: Some(self.up_kbit),
        }
    }
}

impl NetworkProfile {
    /// The named profile called `name`, if there is one.
    pub fn named(name: &str) -> Option<NetworkProfile> {
        NAMED_PROFILES
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .map(NamedProfile::profile)
    }

    /// Parses a profile name (`3g`) or figures
    /// (`rtt=100ms,jitter=10ms,loss=2%,down=10mbit,up=2mbit`; any subset).
    ///
    /// # Errors
    /// A readable sentence naming what is wrong.
    pub fn parse(text: &str) -> Result<NetworkProfile, String> {
        let text = text.trim();
        if !text.contains('=') {
            return NetworkProfile::named(text).ok_or_else(|| {
                format!(
                    "unknown network profile `{}`: use one of {} or figures like rtt=100ms,loss=2%,down=10mbit",
                    shorten(text),
                    NAMED_PROFILES
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        }
        let mut profile = NetworkProfile::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{}` is not key=value", shorten(part)))?;
            let value = value.trim();
            match key.trim().to_ascii_lowercase().as_str() {
                "rtt" => profile.rtt_ms = millis(value)?,
                "jitter" => profile.jitter_ms = millis(value)?,
                "loss" => profile.loss_basis_points = basis_points(value)?,
                "down" => profile.down_kbit = Some(kbits(value)?),
                "up" => profile.up_kbit = Some(kbits(value)?),
                other => {
                    return Err(format!(
                        "unknown network figure `{}`: use rtt, jitter, loss, down or up",
                        shorten(other)
                    ));
                }
            }
        }
        profile.check()?;
        Ok(profile)
    }

    /// Checks the figures are within what can be emulated.
    ///
    /// # Errors
    /// A readable sentence naming the figure out of range.
    pub fn check(&self) -> Result<(), String> {
        if self.rtt_ms > MAX_RTT_MS {
            return Err(format!(
                "rtt must be at most {MAX_RTT_MS} ms (got {})",
                self.rtt_ms
            ));
        }
        if self.jitter_ms > self.rtt_ms / 2 {
            return Err(format!(
                "jitter must be at most half the rtt, the one-way delay (got {} ms with rtt {} ms)",
                self.jitter_ms, self.rtt_ms
            ));
        }
        if self.loss_basis_points > MAX_LOSS_BASIS_POINTS {
            return Err(format!(
                "loss must be between 0% and 50% (got {}%)",
                percent_text(self.loss_basis_points)
            ));
        }
        for (what, rate) in [("down", self.down_kbit), ("up", self.up_kbit)] {
            if let Some(rate) = rate
                && !(MIN_RATE_KBIT..=MAX_RATE_KBIT).contains(&rate)
            {
                return Err(format!(
                    "{what} must be between {MIN_RATE_KBIT} kbit/s and 10 gbit/s (got {rate} kbit/s)"
                ));
            }
        }
        if let Some(name) = &self.name
            && NetworkProfile::named(name).as_ref() != Some(self)
        {
            return Err(format!(
                "`{}` is not a named profile with these figures: give a name alone, or figures alone",
                shorten(name)
            ));
        }
        Ok(())
    }

    /// The figures in the text form [`NetworkProfile::parse`] reads.
    pub fn figures(&self) -> String {
        let mut parts = vec![format!("rtt={}ms", self.rtt_ms)];
        if self.jitter_ms > 0 {
            parts.push(format!("jitter={}ms", self.jitter_ms));
        }
        if self.loss_basis_points > 0 {
            parts.push(format!("loss={}%", percent_text(self.loss_basis_points)));
        }
        if let Some(down) = self.down_kbit {
            parts.push(format!("down={}", rate_text(down)));
        }
        if let Some(up) = self.up_kbit {
            parts.push(format!("up={}", rate_text(up)));
        }
        parts.join(",")
    }
}

impl fmt::Display for NetworkProfile {
    /// `3g (rtt=300ms,down=1600kbit,up=768kbit)`, or the figures alone.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{name} ({})", self.figures()),
            None => f.write_str(&self.figures()),
        }
    }
}

/// A profile's fields as the API may send them (all optional).
#[derive(Deserialize, ReadJson)]
#[serde(deny_unknown_fields)]
struct ProfileFields {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    rtt_ms: u32,
    #[serde(default)]
    jitter_ms: u32,
    #[serde(default)]
    loss_basis_points: u32,
    #[serde(default)]
    down_kbit: Option<u64>,
    #[serde(default)]
    up_kbit: Option<u64>,
}

impl ProfileFields {
    /// The profile: a name alone stands for its figures.
    fn profile(self) -> Result<NetworkProfile, String> {
        let figures_given = self.rtt_ms > 0
            || self.jitter_ms > 0
            || self.loss_basis_points > 0
            || self.down_kbit.is_some()
            || self.up_kbit.is_some();
        if let Some(name) = self.name.as_deref().filter(|_| !figures_given) {
            return NetworkProfile::parse(name);
        }
        let profile = NetworkProfile {
            name: self.name,
            rtt_ms: self.rtt_ms,
            jitter_ms: self.jitter_ms,
            loss_basis_points: self.loss_basis_points,
            down_kbit: self.down_kbit,
            up_kbit: self.up_kbit,
        };
        profile.check()?;
        Ok(profile)
    }
}

impl<'de> Deserialize<'de> for NetworkProfile {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Text or fields, without buffering the input.
        struct Input;

        impl<'de> serde::de::Visitor<'de> for Input {
            type Value = NetworkProfile;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a network profile: a name, figures such as \"rtt=100ms,loss=2%\", or an object")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<NetworkProfile, E> {
                NetworkProfile::parse(text).map_err(E::custom)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<NetworkProfile, A::Error> {
                ProfileFields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?
                    .profile()
                    .map_err(serde::de::Error::custom)
            }
        }

        deserializer.deserialize_any(Input)
    }
}

impl ReadJson for NetworkProfile {
    /// A name or figures as text, or the fields, as [`Deserialize`] reads them.
    fn read_in(&mut self, value: &crate::json::Json<'_>) -> Result<(), crate::json::JsonError> {
        *self = match value {
            crate::json::Json::String(text) => NetworkProfile::parse(text),
            _ => ProfileFields::read_json(value)?.profile(),
        }
        .map_err(crate::json::JsonError::custom)?;
        Ok(())
    }

    fn placeholder() -> Self {
        NetworkProfile::default()
    }
}

/// How a protocol run's packets went through the emulated network.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Emulation {
    /// Every QUIC datagram delayed, dropped and paced on its own, both ways.
    Datagrams,
    /// Every TCP segment delayed, dropped and paced on its own, both ways,
    /// through a TUN device: the kernel's TCP recovers from real loss.
    Packets,
    /// The TCP byte stream delayed and paced in segment-sized chunks, both
    /// ways, and the handshake held for a round trip; no loss (the kernel's
    /// TCP below the relay never loses a segment, so loss cannot be
    /// emulated without packet access).
    Stream,
}

impl Emulation {
    /// A plain sentence on how this emulation works and what it cannot do.
    pub fn describe(&self) -> &'static str {
        match self {
            Emulation::Datagrams => "every datagram delayed, paced and dropped on its own",
            Emulation::Packets => {
                "every TCP segment delayed, paced and dropped on its own (through a TUN device)"
            }
            Emulation::Stream => {
                "a stream relay: the byte stream delayed and paced, no loss (TCP loss needs packet access)"
            }
        }
    }
}

/// What one direction of the emulated link did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LinkCounts {
    /// Packets (datagrams or stream segments) delivered.
    pub delivered: u64,
    /// Packets dropped by the random loss.
    pub lost: u64,
    /// Packets dropped because the link's queue was full.
    pub queue_drops: u64,
    /// Bytes delivered.
    pub bytes: u64,
}

impl LinkCounts {
    /// Packets offered to the link: delivered or dropped.
    pub fn offered(&self) -> u64 {
        self.delivered + self.lost + self.queue_drops
    }
}

/// How one protocol run went through the emulated network.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EmulatedPath {
    /// How the conditions were applied to this protocol's packets.
    pub emulation: Emulation,
    /// Client to server.
    pub up: LinkCounts,
    /// Server to client.
    pub down: LinkCounts,
}

/// What the result says beside its waterfalls about the network it was
/// measured through: the profile, then per protocol how it was emulated and
/// what the link dropped. Empty for a result on the real path alone.
pub fn lines(result: &crate::ProbeResult) -> Vec<String> {
    describe(
        result.options.network.as_ref(),
        result
            .runs
            .iter()
            .map(|r| (r.protocol, r.emulated.as_ref())),
    )
}

/// [`lines`] for any measurement: `profile`, then each protocol's path.
pub fn describe<'a>(
    profile: Option<&NetworkProfile>,
    paths: impl IntoIterator<Item = (crate::Protocol, Option<&'a EmulatedPath>)>,
) -> Vec<String> {
    let Some(profile) = profile else {
        return Vec::new();
    };
    let mut lines = vec![format!("Emulated network: {profile}")];
    for (protocol, path) in paths {
        if let Some(path) = path {
            lines.push(format!(
                "{}: {}; {}",
                protocol.http_version(),
                path.emulation.describe(),
                path.drops()
            ));
        }
    }
    lines
}

impl EmulatedPath {
    /// `dropped 12 of 640 down, 3 of 410 up` (packets), or `nothing dropped`.
    pub fn drops(&self) -> String {
        let dropped = |c: &LinkCounts| c.lost + c.queue_drops;
        if dropped(&self.down) + dropped(&self.up) == 0 {
            return format!(
                "nothing dropped ({} packets down, {} up)",
                self.down.delivered, self.up.delivered
            );
        }
        let side = |c: &LinkCounts, way: &str| {
            let queue = if c.queue_drops > 0 {
                format!(" ({} at a full queue)", c.queue_drops)
            } else {
                String::new()
            };
            format!("{} of {} {way}{queue}", dropped(c), c.offered())
        };
        format!(
            "dropped {}, {}",
            side(&self.down, "down"),
            side(&self.up, "up")
        )
    }
}

fn millis(value: &str) -> Result<u32, String> {
    let lower = value.to_ascii_lowercase();
    let ms = match lower.strip_suffix("ms") {
        Some(n) => fixed(n, 0),
        None => match lower.strip_suffix('s') {
            Some(n) => fixed(n, 3),
            None => fixed(&lower, 0),
        },
    };
    ms.and_then(|ms| u32::try_from(ms).ok())
        .ok_or_else(|| format!("`{}` is not a duration like 100ms or 0.25s", shorten(value)))
}

fn basis_points(value: &str) -> Result<u32, String> {
    fixed(value.trim_end_matches('%'), 2)
        .and_then(|bp| u32::try_from(bp).ok())
        .ok_or_else(|| format!("`{}` is not a percentage like 2% or 0.25%", shorten(value)))
}

fn kbits(value: &str) -> Result<u64, String> {
    let lower = value.to_ascii_lowercase();
    let lower = lower
        .trim_end_matches("/s")
        .trim_end_matches("ps")
        .trim_end_matches("bit")
        .trim_end_matches('b');
    let parsed = if let Some(n) = lower.strip_suffix('g') {
        fixed(n, 6)
    } else if let Some(n) = lower.strip_suffix('m') {
        fixed(n, 3)
    } else {
        fixed(lower.strip_suffix('k').unwrap_or(lower), 0)
    };
    parsed
        .filter(|k| *k > 0)
        .ok_or_else(|| format!("`{}` is not a rate like 10mbit or 512kbit", shorten(value)))
}

/// `text`, a decimal with at most `decimals` digits after the point, times
/// 10^`decimals`: `fixed("2.5", 2)` is 250.
fn fixed(text: &str, decimals: u32) -> Option<u64> {
    let text = text.trim();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty()
        || !digits(whole)
        || !digits(fraction)
        || fraction.len() > decimals as usize
        || whole.len() > 12
    {
        return None;
    }
    let scale = 10u64.pow(decimals);
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let fraction: u64 = if fraction.is_empty() {
        0
    } else {
        fraction.parse::<u64>().ok()? * 10u64.pow(decimals - fraction.len() as u32)
    };
    whole.checked_mul(scale)?.checked_add(fraction)
}

/// Basis points as a percentage's digits: 250 is `2.5`, 25 is `0.25`.
/// Basis points as a percentage without trailing zeros: `2`, `0.5`, `0.25`.
pub(crate) fn percent_text(basis_points: u32) -> String {
    let (whole, hundredths) = (basis_points / 100, basis_points % 100);
    match hundredths {
        0 => whole.to_string(),
        h if h.is_multiple_of(10) => format!("{whole}.{}", h / 10),
        h => format!("{whole}.{h:02}"),
    }
}

fn rate_text(kbit: u64) -> String {
    if kbit.is_multiple_of(1_000_000) {
        format!("{}gbit", kbit / 1_000_000)
    } else if kbit.is_multiple_of(1_000) {
        format!("{}mbit", kbit / 1_000)
    } else {
        format!("{kbit}kbit")
    }
}

fn shorten(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests;
