//! Reading scraped metrics, for the metrics test binaries: a scrape over HTTP or from a
//! registry, the series with given labels, and a bounded wait. Each binary uses a part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Prometheus text: each sample line's series (name and labels) and value.
pub(crate) fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("a sample line");
            (series.to_owned(), value.parse().expect("a sample value"))
        })
        .collect()
}

/// `GET /metrics` from `address`, as its samples (asking the server to close the connection
/// after the response, which an HTTP/1.1 server keeps open otherwise).
pub(crate) async fn scrape(address: std::net::SocketAddr) -> BTreeMap<String, f64> {
    let mut conn = TcpStream::connect(address)
        .await
        .expect("connecting to /metrics");
    conn.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .expect("sending the scrape");
    let mut response = String::new();
    conn.read_to_string(&mut response)
        .await
        .expect("reading the scrape");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // prometheus-client writes OpenMetrics text (`# EOF`, counters typed without `_total`);
    // labelled as the Prometheus 0.0.4 text format, a scraper would read the `_total`
    // samples as untyped.
    let content_type = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim())
        })
        .expect("a Content-Type");
    assert_eq!(
        content_type, "application/openmetrics-text; version=1.0.0; charset=utf-8",
        "{head}"
    );
    assert!(
        body.ends_with("# EOF\n"),
        "OpenMetrics text ends with # EOF"
    );
    samples(body)
}

/// The registry's Prometheus text form, as its samples.
pub(crate) fn scrape_registry(registry: &kclient::metrics::Registry) -> BTreeMap<String, f64> {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).expect("encoding the registry");
    samples(&text)
}

/// The series named `name` whose labels include each of `labels`.
pub(crate) fn series<'a>(
    samples: &'a BTreeMap<String, f64>,
    name: &str,
    labels: &[&str],
) -> Vec<(&'a String, f64)> {
    samples
        .iter()
        .filter(|(series, _)| {
            series.split('{').next() == Some(name) && labels.iter().all(|l| series.contains(l))
        })
        .map(|(series, value)| (series, *value))
        .collect()
}

/// The value of the one series named `name` whose labels include each of `labels`.
pub(crate) fn value(samples: &BTreeMap<String, f64>, name: &str, labels: &[&str]) -> f64 {
    let found = series(samples, name, labels);
    assert_eq!(
        found.len(),
        1,
        "one series {name} with {labels:?}, found {found:?} among {:?}",
        samples
            .keys()
            .filter(|s| s.split('{').next() == Some(name))
            .collect::<Vec<_>>()
    );
    found[0].1
}

/// The value of the one series named `name` whose labels include each of `labels`, or `None`
/// while there is no such series (or more than one).
pub(crate) fn value_if_there(
    samples: &BTreeMap<String, f64>,
    name: &str,
    labels: &[&str],
) -> Option<f64> {
    let found = series(samples, name, labels);
    (found.len() == 1).then(|| found[0].1)
}

/// Scrapes `address` until `done` holds of the samples, for at most 30 s, and returns the last
/// scrape. A worker records its metrics just after the work they count, so a scrape can fall in
/// between; on time-out the caller's assertions on the returned samples name what is off.
pub(crate) async fn scrape_until(
    address: std::net::SocketAddr,
    mut done: impl FnMut(&BTreeMap<String, f64>) -> bool,
) -> BTreeMap<String, f64> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let samples = scrape(address).await;
        if done(&samples) || Instant::now() >= deadline {
            return samples;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits, at most 60 s, until `done` holds.
pub(crate) async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out after 60 s: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
