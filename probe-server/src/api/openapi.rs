//! The OpenAPI 3 document, generated from the handlers' annotations and the
//! wire types' derives, so it cannot drift from the code.

use axum::Json;
use h123_shared::api::ApiError as ErrorBody;
use serde_json::Value;
use std::sync::OnceLock;
use utoipa::OpenApi;

/// The API description.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "h123",
        description = "Where does an HTTP request spend its time? Start a probe, follow its progress as Server-Sent Events, read the result as JSON, as the result page's HTML (also live, as Server-Sent Events), HAR, curl figures or an SVG waterfall. Servers started with `--enable-bench` also run benches (load comparisons per protocol), one at a time and only against the targets their operator listed. Every error is `{\"error\":{\"code\",\"message\"}}` with a stable code.",
        license(name = "MIT OR Apache-2.0")
    ),
    paths(
        super::probes::probes_create,
        super::probes::probes_list,
        super::probes::probes_get,
        super::browser::browser_post,
        super::probes::probes_events,
        super::view::probes_view,
        super::view::probes_view_events,
        super::probes::probes_har,
        super::probes::probes_curl,
        super::probes::probes_svg,
        super::preview::probes_preview_png,
        super::compare::compare_get,
        super::compare::compare_view,
        super::monitors::monitors_create,
        super::monitors::monitors_list,
        super::monitors::monitors_get,
        super::monitors::monitors_delete,
        super::monitors::monitors_pause,
        super::monitors::monitors_resume,
        super::monitors::monitors_series,
        super::monitors::monitors_status,
        super::monitors::monitors_deliveries,
        super::monitors::monitors_badge,
        super::benches::benches_create,
        super::benches::benches_list,
        super::benches::benches_get,
        super::benches::benches_view,
        super::benches::benches_decay_svg,
        super::config::config_get,
        super::config::config_view,
        super::vantages::vantages_get,
        super::agent::agent_claim,
        super::agent::agent_events,
        super::agent::agent_result,
        super::health::health_get,
        super::metrics::metrics_get,
        super::scrape::probe_scrape,
        openapi_get,
    ),
    components(schemas(h123_shared::api::ProbeEvent)),
    tags(
        (name = "probes", description = "Start probes and read their results"),
        (name = "exports", description = "A probe or a sweep in other formats"),
        (name = "benches", description = "Load comparisons per protocol (servers started with `--enable-bench` only)"),
        (name = "monitors", description = "Probes repeated on a schedule, and their history"),
        (name = "agents", description = "Where `h123 agent`s claim probe jobs and report back (a token per agent)"),
        (name = "operations", description = "Health, metrics and this document"),
    )
)]
pub struct ApiDoc;

/// This document.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "operations",
    responses(
        (status = 200, description = "The OpenAPI document", body = Object),
        (status = 429, description = "Too many light requests from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub async fn openapi_get() -> Json<Value> {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    Json(DOCUMENT.get_or_init(document).clone())
}

/// The document as JSON.
///
/// utoipa 5.5 writes link objects' `operationId` / `operationRef` in snake
/// case; they are renamed here so clients (and Schemathesis) can follow the links.
pub fn document() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or(Value::Null);
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for operation in paths.values_mut().filter_map(Value::as_object_mut) {
            for op in operation.values_mut() {
                let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                    continue;
                };
                for response in responses.values_mut() {
                    let Some(links) = response.get_mut("links").and_then(Value::as_object_mut)
                    else {
                        continue;
                    };
                    for link in links.values_mut().filter_map(Value::as_object_mut) {
                        for (from, to) in [
                            ("operation_id", "operationId"),
                            ("operation_ref", "operationRef"),
                        ] {
                            if let Some(v) = link.remove(from) {
                                link.insert(to.to_owned(), v);
                            }
                        }
                    }
                }
            }
        }
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_use_camel_case_and_name_real_operations() {
        let doc = document();
        let links = &doc["paths"]["/api/v1/probes"]["post"]["responses"]["202"]["links"];
        assert_eq!(links["record"]["operationId"], "probes_get");
        assert_eq!(
            doc["paths"]["/api/v1/probes/{id}"]["get"]["operationId"],
            "probes_get"
        );
        assert!(links["record"].get("operation_id").is_none());
    }
}
