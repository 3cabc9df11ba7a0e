//! The most recent results, from the API's list: this browser's own probes and the public ones.

use super::summary::local_time;
use crate::api;
use h123_shared::api::ProbeSummary;
use leptos::prelude::*;

/// How many recent results the home page lists.
const RECENT: u32 = 10;

/// One recent result.
#[component]
fn RecentItem(item: ProbeSummary) -> impl IntoView {
    let protocols = item
        .protocols
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    view! {
        <li>
            <a href=format!("/r/{}", item.id)>{item.url}</a>
            <span class="meta">{format!("{protocols} · {} · {}", local_time(item.created_at_unix_ms), item.visibility.as_str())}</span>
        </li>
    }
}

/// The recent results list.
#[component]
pub fn RecentList() -> impl IntoView {
    let list = LocalResource::new(|| api::recent_probes(RECENT));
    view! {
        <section class="recent" aria-labelledby="recent-title">
            <h2 id="recent-title">"Recent results"</h2>
            <p class="hint">"Yours (remembered by this browser) and those their authors made public. Others are unlisted: only their link opens them."</p>
            <Transition fallback=|| view! { <p class="hint">"Loading…"</p> }>
                {move || {
                    list.get()
                        .map(|answer| match answer {
                            Ok(page) if page.items.is_empty() => {
                                view! { <p class="hint">"No results yet: yours will be the first."</p> }.into_any()
                            }
                            Ok(page) => {
                                view! {
                                    <ul class="recent-list">
                                        {page.items.into_iter().map(|item| view! { <RecentItem item /> }).collect_view()}
                                    </ul>
                                }
                                    .into_any()
                            }
                            Err(_) => {
                                view! { <p class="hint">"Recent results are not available right now."</p> }.into_any()
                            }
                        })
                }}
            </Transition>
        </section>
    }
}
