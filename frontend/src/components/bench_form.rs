//! The load comparison form: URL, protocols, concurrency, duration,
//! connections, rate, cold, and where the server allows them network
//! conditions and a sweep; shown only when the server runs benches.

use crate::api;
use crate::components::ApiProblem;
use crate::components::NetworkPicker;
use crate::components::form::ProtocolToggles;
use crate::submit::Submission;
use h123_shared::Protocol;
use h123_shared::api::BenchBounds;
use h123_shared::bench::BenchOptions;
use h123_shared::input::check_url;
use h123_shared::network::NetworkProfile;
use h123_shared::sweep::Sweep;
use leptos::prelude::*;

/// Parses an optional whole number within `1..=max`; empty means "not set".
fn optional(text: &str, name: &str, max: u64) -> Result<Option<u64>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "{name} must be a whole number from 1 to {max}, or empty."
        )),
    }
}

/// Text with something in it, trimmed.
fn given(text: &str) -> Option<&str> {
    Some(text.trim()).filter(|t| !t.is_empty())
}

/// What the form's fields hold.
struct Fields {
    url: String,
    protocols: Vec<Protocol>,
    concurrency: u32,
    duration_s: u64,
    connections: String,
    rate: String,
    cold: bool,
    network: String,
    sweep: String,
}

impl Fields {
    /// The options the fields describe, or the first thing wrong with them.
    fn options(self, bounds: &BenchBounds) -> Result<BenchOptions, String> {
        let url = check_url(&self.url)?;
        if self.protocols.is_empty() {
            return Err("Pick at least one protocol.".into());
        }
        let connections = optional(
            &self.connections,
            "Connections",
            u64::from(bounds.max_connections.min(self.concurrency)),
        )?;
        let rate = optional(&self.rate, "Rate", u64::from(bounds.max_rate))?;
        let network = given(&self.network)
            .map(NetworkProfile::parse)
            .transpose()
            .map_err(|e| format!("Network: {e}."))?;
        let sweep = given(&self.sweep)
            .map(Sweep::parse)
            .transpose()
            .map_err(|e| format!("Sweep: {e}."))?;
        let runs = self.protocols.len() as u64 * sweep.as_ref().map_or(1, |s| s.steps.len() as u64);
        if self.duration_s * 1000 * runs > bounds.max_total_ms {
            return Err(format!(
                "This would run for {} s; this server allows {} s in all: fewer steps or seconds.",
                self.duration_s * runs,
                bounds.max_total_ms / 1000
            ));
        }
        Ok(BenchOptions {
            network,
            sweep,
            url,
            protocols: self.protocols,
            concurrency: self.concurrency,
            duration_ms: Some(self.duration_s * 1000),
            connections: connections.and_then(|c| u32::try_from(c).ok()),
            rate: rate.and_then(|r| u32::try_from(r).ok()),
            cold: self.cold,
            ..BenchOptions::default()
        })
    }
}

/// The form that starts a bench and opens its page.
#[component]
pub fn BenchForm(
    /// The server's bounds on bench options.
    bounds: BenchBounds,
    /// The addresses this server's benches may load (`address` or `address:port`).
    targets: Vec<String>,
) -> impl IntoView {
    let placeholder = targets
        .first()
        .map_or_else(|| "https://".to_owned(), |t| format!("https://{t}/"));
    let allowed = if targets.is_empty() {
        "This server loads only the targets its operator allows, one bench at a time.".to_owned()
    } else {
        format!(
            "This server loads only what its operator allows, one bench at a time: {}.",
            targets.join(", ")
        )
    };
    let max_secs = (bounds.max_duration_ms / 1000).max(1);
    let url = RwSignal::new(String::new());
    let protocols = RwSignal::new(Protocol::ALL.to_vec());
    let concurrency = RwSignal::new(16u32.min(bounds.max_concurrency).max(1));
    let duration_s = RwSignal::new(10u64.min(max_secs));
    let connections = RwSignal::new(String::new());
    let rate = RwSignal::new(String::new());
    let cold = RwSignal::new(false);
    let network = RwSignal::new(String::new());
    let sweep = RwSignal::new(String::new());
    // Whether the note's problem may show: once the URL was typed in and left, or on submit.
    let touched = RwSignal::new(false);
    let typed = RwSignal::new(false);
    let checked = Memo::new(move |_| {
        Fields {
            url: url.get(),
            protocols: protocols.get(),
            concurrency: concurrency.get(),
            duration_s: duration_s.get(),
            connections: connections.get(),
            rate: rate.get(),
            cold: cold.get(),
            network: network.get(),
            sweep: sweep.get(),
        }
        .options(&bounds)
    });
    let network_problem = Memo::new(move |_| {
        let text = network.get();
        given(&text).and_then(|t| NetworkProfile::parse(t).err())
    });
    let sweep_problem = Memo::new(move |_| {
        let text = sweep.get();
        given(&text).and_then(|t| Sweep::parse(t).err())
    });
    let connections_problem = Memo::new(move |_| {
        let most = bounds.max_connections.min(concurrency.get());
        optional(&connections.get(), "Connections", u64::from(most)).err()
    });
    let rate_problem =
        Memo::new(move |_| optional(&rate.get(), "Rate", u64::from(bounds.max_rate)).err());
    let create = Submission::default();
    let show = move || touched.get() || !url.with(String::is_empty);
    view! {
        <form
            class="bench-form"
            novalidate
            aria-labelledby="bench-title"
            on:submit=move |ev| {
                ev.prevent_default();
                touched.set(true);
                if let Ok(options) = checked.get_untracked() {
                    create.send(async move { api::create_bench(&options).await }, |created| {
                        crate::navigate::to(&created.links.permalink)
                    });
                }
            }
        >
            <p class="kind">"Many requests at once"</p>
            <h2 id="bench-title">"Load comparison"</h2>
            <p class="hint">
                "Send the same request over HTTP/1.1, HTTP/2 and HTTP/3 in turn, as fast as the target answers "
                "(or at a fixed rate), and compare throughput and latency. "
                {allowed}
            </p>
            <label for="bench-url">"Target URL"</label>
            <div class="url-row">
                <input
                    id="bench-url"
                    type="url"
                    inputmode="url"
                    spellcheck="false"
                    placeholder=placeholder
                    aria-describedby="bench-note"
                    aria-invalid=move || (show() && check_url(&url.get()).is_err()).to_string()
                    prop:value=move || url.get()
                    on:input=move |ev| {
                        typed.set(true);
                        url.set(event_target_value(&ev));
                    }
                    on:blur=move |_| touched.set(typed.get_untracked())
                />
                <button type="submit" class="primary" disabled=move || create.pending.get()>
                    {move || if create.pending.get() { "Starting…" } else { "Compare" }}
                </button>
            </div>
            <p id="bench-note" class="field-note" class:error=move || {
                (show() && checked.with(Result::is_err))
                    || connections_problem.with(Option::is_some)
                    || rate_problem.with(Option::is_some)
            }>
                {move || match checked.get() {
                    Err(reason) if show() => reason,
                    Ok(o) => format!(
                        "Ready: about {} s in all.",
                        duration_s.get()
                            * o.protocols.len() as u64
                            * o.sweep.as_ref().map_or(1, |s| s.steps.len() as u64)
                    ),
                    Err(_) => connections_problem
                        .get()
                        .or_else(|| rate_problem.get())
                        .unwrap_or_else(|| "http or https; HTTP/3 needs https.".into()),
                }}
            </p>
            <div class="options">
                <fieldset>
                    <legend>"Protocols"</legend>
                    <ProtocolToggles protocols name="bench-protocol" />
                </fieldset>
                <div class="field">
                    <label for="bench-concurrency">"In flight"</label>
                    <input
                        id="bench-concurrency"
                        type="number"
                        min="1"
                        max=bounds.max_concurrency
                        prop:value=move || concurrency.get().to_string()
                        on:input=move |ev| {
                            if let Ok(n) = event_target_value(&ev).parse::<u32>() {
                                concurrency.set(n.clamp(1, bounds.max_concurrency));
                            }
                        }
                    />
                </div>
                <div class="field">
                    <label for="bench-duration">"Seconds each"</label>
                    <input
                        id="bench-duration"
                        type="number"
                        min="1"
                        max=max_secs
                        prop:value=move || duration_s.get().to_string()
                        on:input=move |ev| {
                            if let Ok(n) = event_target_value(&ev).parse::<u64>() {
                                duration_s.set(n.clamp(1, max_secs));
                            }
                        }
                    />
                </div>
                <div class="field">
                    <label for="bench-connections">"Connections"</label>
                    <input
                        id="bench-connections"
                        type="number"
                        min="1"
                        placeholder="auto"
                        title="Empty: one per request in flight for HTTP/1.1, one in all for HTTP/2 and HTTP/3"
                        aria-describedby="bench-note"
                        aria-invalid=move || connections_problem.with(Option::is_some).to_string()
                        prop:value=move || connections.get()
                        on:input=move |ev| connections.set(event_target_value(&ev))
                    />
                </div>
                <div class="field">
                    <label for="bench-rate">"Rate /s"</label>
                    <input
                        id="bench-rate"
                        type="number"
                        min="1"
                        placeholder="max"
                        title="Empty: as fast as responses return; a number: a fixed arrival rate"
                        aria-describedby="bench-note"
                        aria-invalid=move || rate_problem.with(Option::is_some).to_string()
                        prop:value=move || rate.get()
                        on:input=move |ev| rate.set(event_target_value(&ev))
                    />
                </div>
                <label class="toggle">
                    <input type="checkbox" id="bench-cold" prop:checked=move || cold.get() on:change=move |ev| cold.set(event_target_checked(&ev)) />
                    "Cold (a new connection per request)"
                </label>
                {bounds.network.then(|| {
                    view! {
                        <NetworkPicker chosen=network problem=network_problem id="bench-network" />
                        <SweepField sweep problem=sweep_problem />
                    }
                    .into_any()
                })}
            </div>
        </form>
        {move || create.refused.get().map(|error| view! { <ApiProblem error bench=true /> })}
    }
}

/// The sweep field: a figure and its steps, checked as typed, with the two
/// usual sweeps suggested.
#[component]
fn SweepField(
    /// The sweep typed (empty: one bench).
    sweep: RwSignal<String>,
    /// Why it is refused, if it is.
    problem: Memo<Option<String>>,
) -> impl IntoView {
    view! {
        <div class="field sweep-field">
            <label for="bench-sweep">"Sweep"</label>
            <input
                id="bench-sweep"
                type="text"
                spellcheck="false"
                list="bench-sweeps"
                placeholder="rtt=0,25,50,100,200ms"
                aria-describedby="bench-sweep-note"
                aria-invalid=move || problem.with(Option::is_some).to_string()
                prop:value=move || sweep.get()
                on:input=move |ev| sweep.set(event_target_value(&ev))
            />
            <datalist id="bench-sweeps" inner_html="<option value=\"rtt=0,25,50,100,200ms\"></option><option value=\"loss=0,0.5,1,2,5%\"></option>"></datalist>
            <p id="bench-sweep-note" class="field-note" class:error=move || problem.with(Option::is_some)>
                {move || problem.get().unwrap_or_else(|| {
                    "Empty: one bench. rtt=… or loss=…: the whole bench at each step, on top of the network, drawn as a decay curve.".into()
                })}
            </p>
        </div>
    }
}
