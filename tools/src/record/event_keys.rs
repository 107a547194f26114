//! The keys the event correlator groups events by (client-go's `getEventKey`, `getSpamKey`
//! and `EventAggregatorByReasonFunc`).
//!
//! client-go concatenates the fields with no separator, so `("ab", "c")` and `("a", "bc")`
//! collide; these keys put a `\u{1f}` (unit separator) between fields instead.

use kclient_api::core::v1::Event;

const SEP: char = '\u{1f}';

fn join(fields: &[&str]) -> String {
    let mut key = String::with_capacity(fields.iter().map(|f| f.len() + 1).sum());
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            key.push(SEP);
        }
        key.push_str(field);
    }
    key
}

fn source(event: &Event) -> (&str, &str) {
    match &event.source {
        Some(s) => (
            s.component.as_deref().unwrap_or(""),
            s.host.as_deref().unwrap_or(""),
        ),
        None => ("", ""),
    }
}

/// The identity of one exact event: source, involved object, type, reason and message.
/// Repeats of it are counted on one Event object.
pub(crate) fn event_key(event: &Event) -> String {
    let (component, host) = source(event);
    let o = &event.involved_object;
    join(&[
        component,
        host,
        o.kind.as_deref().unwrap_or(""),
        o.namespace.as_deref().unwrap_or(""),
        o.name.as_deref().unwrap_or(""),
        o.field_path.as_deref().unwrap_or(""),
        o.uid.as_deref().unwrap_or(""),
        o.api_version.as_deref().unwrap_or(""),
        event.type_.as_deref().unwrap_or(""),
        event.reason.as_deref().unwrap_or(""),
        event.message.as_deref().unwrap_or(""),
    ])
}

/// The spam filter's key: source, involved object and event type (client-go added the type in
/// Kubernetes 1.31, so Normal events about an object do not use up the tokens of its Warnings).
pub(crate) fn spam_key(event: &Event) -> String {
    let (component, host) = source(event);
    let o = &event.involved_object;
    join(&[
        component,
        host,
        o.kind.as_deref().unwrap_or(""),
        o.namespace.as_deref().unwrap_or(""),
        o.name.as_deref().unwrap_or(""),
        o.uid.as_deref().unwrap_or(""),
        o.api_version.as_deref().unwrap_or(""),
        event.type_.as_deref().unwrap_or(""),
    ])
}

/// The aggregation key (everything but the message) and the local key (the message).
pub(crate) fn aggregate_keys(event: &Event) -> (String, String) {
    let (component, host) = source(event);
    let o = &event.involved_object;
    let aggregate = join(&[
        component,
        host,
        o.kind.as_deref().unwrap_or(""),
        o.namespace.as_deref().unwrap_or(""),
        o.name.as_deref().unwrap_or(""),
        o.uid.as_deref().unwrap_or(""),
        o.api_version.as_deref().unwrap_or(""),
        event.type_.as_deref().unwrap_or(""),
        event.reason.as_deref().unwrap_or(""),
        event.reporting_component.as_deref().unwrap_or(""),
        event.reporting_instance.as_deref().unwrap_or(""),
    ]);
    (
        aggregate,
        event.message.as_deref().unwrap_or("").to_string(),
    )
}
