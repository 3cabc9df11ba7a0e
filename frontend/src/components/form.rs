//! The probe form: URL checked as you type, vantages (when the server has agents), protocols, repeat,
//! cold or warm, network conditions (when the server takes them), method, advanced options
//! (a connection migration among them).

use crate::api;
use crate::components::vantage_picker::VantagePicker;
use crate::components::{ApiProblem, NetworkPicker};
use crate::submit::Submission;
use h123_shared::input::{check_url, parse_headers};
use h123_shared::migration::Migrate;
use h123_shared::network::NetworkProfile;
use h123_shared::{ConnectionMode, Method, ProbeOptions, Protocol, Visibility};
use leptos::prelude::*;

/// Requests at once the form's option sends per protocol (within any server's bound).
const STREAMS_AT_ONCE: u32 = 8;

/// Most attempts per protocol the form offers.
const MAX_REPEAT: u32 = 10;

/// The form that starts a probe and opens its result page.
#[component]
pub fn ProbeForm(
    /// Whether the server takes network conditions (its operator's choice).
    #[prop(into)]
    network_enabled: Signal<bool>,
    /// Whether the server measures public addresses only (then the URL's hint says so).
    #[prop(into)]
    public_only: Signal<bool>,
) -> impl IntoView {
    let url = RwSignal::new(String::new());
    // Whether the URL's problem may show: once typed in and left, or on submit; never for the
    // empty field the page focused, left untouched.
    let touched = RwSignal::new(false);
    let typed = RwSignal::new(false);
    let protocols = RwSignal::new(Protocol::ALL.to_vec());
    let repeat = RwSignal::new(ProbeOptions::default().repeat);
    let rounds = RwSignal::new(ProbeOptions::default().rounds);
    let mode = RwSignal::new(ConnectionMode::Warm);
    let method = RwSignal::new(Method::Get);
    let headers = RwSignal::new(String::new());
    let insecure = RwSignal::new(false);
    let follow = RwSignal::new(false);
    let h3_direct = RwSignal::new(false);
    let migrate = RwSignal::new(false);
    let at_once = RwSignal::new(false);
    let public = RwSignal::new(false);
    let browser_too = RwSignal::new(false);
    let vantages = RwSignal::new(Vec::<String>::new());
    let offered = RwSignal::new(false);
    let network = RwSignal::new(String::new());

    let url_check = Memo::new(move |_| url.with(|u| check_url(u)));
    let header_check = Memo::new(move |_| headers.with(|h| parse_headers(h)));
    let network_check = Memo::new(move |_| {
        network.with(|text| {
            (network_enabled.get() && !text.trim().is_empty())
                .then(|| NetworkProfile::parse(text))
                .transpose()
        })
    });
    let network_problem = Memo::new(move |_| network_check.get().err());
    let options = Memo::new(move |_| {
        let url = url_check.get().ok()?;
        let headers = header_check.get().ok()?;
        let network = network_check.get().ok()?;
        let protocols = protocols.get();
        let vantages = vantages.get();
        let migrate = (migrate.get() && protocols.contains(&Protocol::H3)).then_some(Migrate::Port);
        if offered.get() && vantages.is_empty() {
            return None;
        }
        (!protocols.is_empty()).then(|| ProbeOptions {
            url,
            protocols,
            method: method.get(),
            repeat: repeat.get(),
            rounds: rounds.get(),
            mode: mode.get(),
            headers,
            insecure: insecure.get(),
            follow_redirects: follow.get(),
            h3_direct: h3_direct.get(),
            migrate,
            streams: at_once.get().then_some(STREAMS_AT_ONCE),
            visibility: if public.get() {
                Visibility::Public
            } else {
                Visibility::Unlisted
            },
            vantages,
            network,
            ..ProbeOptions::default()
        })
    });

    let create = Submission::default();
    // Once accepted: the result's page, or (to measure from this browser too) the measuring page,
    // a full load, since only that page may fetch the target.
    let open = move |created: h123_shared::api::ProbeCreated| {
        if browser_too.get_untracked() {
            crate::browser_measure::open_to_measure(&created.id);
        } else {
            crate::navigate::to(&created.links.permalink);
        }
    };
    let show_reason = move || touched.get() || !url.with(String::is_empty);
    // The page is for measuring: the URL field takes the keyboard at once, unless the visitor
    // is already in another field (of the form the server drew, taken over).
    request_animation_frame(|| {
        let elsewhere = document()
            .active_element()
            .is_some_and(|e| e.tag_name() != "BODY");
        if elsewhere {
            return;
        }
        if let Some(Ok(field)) = document()
            .get_element_by_id("url")
            .map(wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>)
        {
            let _ = field.focus();
        }
    });

    view! {
        <form
            class="probe-form"
            novalidate
            aria-labelledby="probe-title"
            on:submit=move |ev| {
                ev.prevent_default();
                touched.set(true);
                if let Some(options) = options.get_untracked() {
                    create.send(async move { api::create_probe(&options).await }, open);
                }
            }
        >
            <p class="kind">"One request at a time"</p>
            <h2 id="probe-title">"Timing waterfalls"</h2>
            <p class="hint">
                "A few requests per protocol, each split into its phases: where one request spends its time."
            </p>
            <label for="url">"URL to measure"</label>
            <div class="url-row">
                <input
                    id="url"
                    name="url"
                    type="url"
                    inputmode="url"
                    autocomplete="url"
                    spellcheck="false"
                    placeholder="https://example.com/"
                    aria-describedby="url-reason"
                    aria-invalid=move || (show_reason() && url_check.with(Result::is_err)).to_string()
                    prop:value=move || url.get()
                    on:input=move |ev| {
                        typed.set(true);
                        url.set(event_target_value(&ev));
                    }
                    on:paste=move |ev| keep_inner_whitespace(&ev, url)
                    on:blur=move |_| touched.set(typed.get_untracked())
                />
                <button type="submit" class="primary" disabled=move || create.pending.get()>
                    {move || if create.pending.get() { "Starting…" } else { "Measure" }}
                </button>
            </div>
            <p id="url-reason" class="field-note" class:error=move || show_reason() && url_check.with(Result::is_err)>
                {move || match url_check.get() {
                    Err(reason) if show_reason() => reason,
                    Ok(_) => "Ready to measure.".into(),
                    Err(_) if public_only.get() => "http or https; this server only measures public addresses.".into(),
                    Err(_) => "An http or https URL.".into(),
                }}
            </p>
            <VantagePicker chosen=vantages offered />
            <div class="options">
                <fieldset aria-describedby="protocols-problem">
                    <legend>"Protocols"</legend>
                    <ProtocolToggles protocols name="protocol" />
                    <Show when=move || protocols.with(Vec::is_empty)>
                        <p id="protocols-problem" class="field-note error">"Pick at least one protocol."</p>
                    </Show>
                </fieldset>
                <fieldset>
                    <legend>"Connections"</legend>
                    {[
                        (ConnectionMode::Warm, "warm (reuse)"),
                        (ConnectionMode::Cold, "cold (new each time)"),
                        (ConnectionMode::Resumed, "resumed (new, TLS resumption)"),
                    ]
                        .into_iter()
                        .map(|(m, label)| {
                            view! {
                                <label class="toggle">
                                    <input
                                        type="radio"
                                        name="mode"
                                        prop:checked=move || mode.get() == m
                                        on:change=move |_| mode.set(m)
                                    />
                                    {label}
                                </label>
                            }
                        })
                        .collect_view()}
                </fieldset>
                <div class="field">
                    <label for="rounds">"Rounds, each on a new connection"</label>
                    <input
                        id="rounds"
                        type="number"
                        min="1"
                        max=MAX_REPEAT
                        title="Rounds, each from a new connection: a verdict on new connections needs 4 or more"
                        prop:value=move || rounds.get().to_string()
                        on:input=move |ev| {
                            if let Ok(n) = event_target_value(&ev).parse::<u32>() {
                                rounds.set(n.clamp(1, MAX_REPEAT));
                            }
                        }
                    />
                </div>
                <div class="field">
                    <label for="repeat">"Attempts per round"</label>
                    <input
                        id="repeat"
                        type="number"
                        min="1"
                        max=MAX_REPEAT
                        prop:value=move || repeat.get().to_string()
                        on:input=move |ev| {
                            if let Ok(n) = event_target_value(&ev).parse::<u32>() {
                                repeat.set(n.clamp(1, MAX_REPEAT));
                            }
                        }
                    />
                </div>
                {move || {
                    network_enabled
                        .get()
                        .then(|| view! { <NetworkPicker chosen=network problem=network_problem /> })
                }}
                <div class="field">
                    <label for="method">"Method"</label>
                    <select
                        id="method"
                        on:change=move |ev| {
                            method.set(if event_target_value(&ev) == "HEAD" { Method::Head } else { Method::Get })
                        }
                    >
                        <option value="GET" selected=move || method.get() == Method::Get>"GET"</option>
                        <option value="HEAD" selected=move || method.get() == Method::Head>"HEAD"</option>
                    </select>
                </div>
            </div>
            <details class="advanced">
                <summary>"Advanced"</summary>
                <div class="field">
                    <label for="headers">"Request headers, one per line"</label>
                    <textarea
                        id="headers"
                        rows="3"
                        spellcheck="false"
                        placeholder="Accept: text/html"
                        aria-describedby="headers-note"
                        aria-invalid=move || header_check.with(Result::is_err).to_string()
                        prop:value=move || headers.get()
                        on:input=move |ev| headers.set(event_target_value(&ev))
                    ></textarea>
                    <p id="headers-note" class="field-note" class:error=move || header_check.with(Result::is_err)>
                        {move || header_check.get().err().unwrap_or_else(|| "Name: value".into())}
                    </p>
                </div>
                <label class="toggle">
                    <input type="checkbox" id="follow" prop:checked=move || follow.get() on:change=move |ev| follow.set(event_target_checked(&ev)) />
                    "Follow redirects (the hops end to end on one row)"
                </label>
                <label class="toggle">
                    <input type="checkbox" id="h3-direct" prop:checked=move || h3_direct.get() on:change=move |ev| h3_direct.set(event_target_checked(&ev)) />
                    "Try HTTP/3 directly (even when nothing advertises it)"
                </label>
                <label class="toggle">
                    <input type="checkbox" id="migrate" prop:checked=move || migrate.get() on:change=move |ev| migrate.set(event_target_checked(&ev)) />
                    "Move each HTTP/3 connection to a new port mid-response (does it survive a change of network?)"
                </label>
                <label class="toggle">
                    <input type="checkbox" id="streams" prop:checked=move || at_once.get() on:change=move |ev| at_once.set(event_target_checked(&ev)) />
                    "Then send 8 requests at once per protocol (streams over one connection: does one lost packet hold them all?)"
                </label>
                <label class="toggle">
                    <input type="checkbox" id="insecure" prop:checked=move || insecure.get() on:change=move |ev| insecure.set(event_target_checked(&ev)) />
                    "Skip certificate verification (like curl -k)"
                </label>
                <label class="toggle">
                    <input type="checkbox" id="public" prop:checked=move || public.get() on:change=move |ev| public.set(event_target_checked(&ev)) />
                    "List the result publicly (otherwise only its link and your own list show it)"
                </label>
                <label class="toggle">
                    <input type="checkbox" id="browser-too" prop:checked=move || browser_too.get() on:change=move |ev| browser_too.set(event_target_checked(&ev)) />
                    "Also measure from this browser once the probe has finished (its timings and user agent, not your address, are stored with the result)"
                </label>
                <p class="field-note">
                    "Authorization and Cookie headers, Set-Cookie answers, URL passwords and credential-looking headers and query parameters (api_key, token, X-Api-Key, ...) are sent but never stored: the result shows [redacted]."
                </p>
                <p class="field-note">
                    "Certificates are verified against the system's public roots (and the CA its operator gave "
                    <code>"h123 serve --cacert"</code>
                    "). For a private CA, use the CLI's "
                    <code>"--cacert FILE"</code>
                    ", or skip verification above to test."
                </p>
            </details>
        </form>
        {move || create.refused.get().map(|error| view! { <ApiProblem error /> })}
    }
}

/// A pasted URL with whitespace inside (a link wrapped over two lines, say) is kept as pasted,
/// so the check names the problem: the field itself would drop line breaks without a word.
fn keep_inner_whitespace(ev: &leptos::ev::ClipboardEvent, url: RwSignal<String>) {
    let Some(text) = ev.clipboard_data().and_then(|d| d.get_data("text").ok()) else {
        return;
    };
    if text.trim().contains(char::is_whitespace) {
        ev.prevent_default();
        url.set(text.trim().to_owned());
    }
}

/// One checkbox per protocol, editing `protocols` (kept in protocol order);
/// `name` is the inputs' form name.
#[component]
pub fn ProtocolToggles(
    /// The protocols ticked.
    protocols: RwSignal<Vec<Protocol>>,
    /// The checkboxes' `name`.
    name: &'static str,
) -> impl IntoView {
    Protocol::ALL
        .into_iter()
        .map(|p| {
            view! {
                <label class="toggle">
                    <input
                        type="checkbox"
                        name=name
                        value=p.as_str()
                        prop:checked=move || protocols.with(|ps| ps.contains(&p))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            // In protocol order, with `p` ticked or not.
                            protocols.update(|ps| {
                                *ps = Protocol::ALL
                                    .into_iter()
                                    .filter(|x| if *x == p { on } else { ps.contains(x) })
                                    .collect();
                            });
                        }
                    />
                    {p.http_version()}
                </label>
            }
        })
        .collect_view()
}
