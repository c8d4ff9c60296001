//! Optional export of the requests' spans over OTLP/HTTP (protobuf), to an
//! OpenTelemetry collector (`--otlp-endpoint http://collector:4318`). Each
//! request is one server span named `METHOD /route/{template}`, in the
//! trace its `traceparent` continues (or a new one), with the HTTP semantic
//! conventions' attributes; the trace id in the logs is the exported one.
//! Spans leave in batches from a thread of their own, and what is left is
//! sent at shutdown.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use opentelemetry::trace::{
    SpanContext, SpanId, Status, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::trace_context::{self, TraceContext};

/// Whether spans are exported (so that, without, a request pays nothing).
static ON: AtomicBool = AtomicBool::new(false);

pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The exporting tracer's provider (flushed and stopped by
/// [`super::Telemetry::shutdown`]), and the layer that turns tracing's spans
/// into OpenTelemetry's.
pub(crate) fn start<S>(
    endpoint: &str,
) -> anyhow::Result<(
    SdkTracerProvider,
    tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>,
)>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    // The exporter's HTTP client uses rustls with the process's provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let endpoint = endpoint.trim_end_matches('/');
    let endpoint = if endpoint.ends_with("/v1/traces") {
        endpoint.to_owned()
    } else {
        format!("{endpoint}/v1/traces")
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(endpoint.clone())
        .build()
        .with_context(|| format!("cannot export spans to {endpoint}"))?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name("petstore-portfolio")
                .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
                .build(),
        )
        .build();
    // Without the source file, thread and idle time of every span: the
    // HTTP attributes say what an operator needs.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("petstore-portfolio"))
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false);
    ON.store(true, Ordering::Relaxed);
    Ok((provider, layer))
}

/// Makes `span` (a request's, not yet entered) a child of the caller's span
/// when `trace` continues the caller's.
pub(crate) fn continue_trace(span: &tracing::Span, trace: &TraceContext) {
    if let Some(parent) = trace.parent_id {
        let remote = SpanContext::new(
            TraceId::from_bytes(trace.trace_id.0.to_be_bytes()),
            SpanId::from_bytes(parent.0.to_be_bytes()),
            if trace.sampled {
                TraceFlags::SAMPLED
            } else {
                TraceFlags::default()
            },
            true,
            TraceState::default(),
        );
        let _ = span.set_parent(Context::new().with_remote_span_context(remote));
    }
}

/// Gives `trace` the ids of `span`, the request's exported span, so that
/// the logs and the calls the request makes name the span that is
/// exported.
pub(crate) fn adopt_ids(span: &tracing::Span, trace: &mut TraceContext) {
    let context = span.context();
    let exported = context.span().span_context().clone();
    if exported.is_valid() {
        trace.trace_id =
            trace_context::TraceId(u128::from_be_bytes(exported.trace_id().to_bytes()));
        trace.span_id = trace_context::SpanId(u64::from_be_bytes(exported.span_id().to_bytes()));
    }
}

/// The attributes a request's span gets once it is answered, and its
/// name, `METHOD route`.
pub(crate) fn answered(span: &tracing::Span, method: &'static str, route: &str, status: u16) {
    span.context()
        .span()
        .update_name(format!("{method} {route}"));
    span.set_attribute("http.request.method", method);
    span.set_attribute("http.route", route.to_owned());
    span.set_attribute("http.response.status_code", i64::from(status));
    if status >= 500 {
        span.set_status(Status::error(format!("{status}")));
    }
}
