//! HTTP/2: many watches of one client share a few TCP connections (50 watches per connection,
//! below the 100 streams kube-apiserver allows, so other requests are never starved).

use std::collections::HashSet;
use std::time::Duration;

use futures_util::StreamExt as _;
use kclient_apimachinery::WatchEvent;
use kclient_testenv::{Identity, TestEnv};
use serde_json::Value;

use crate::{configmaps, create_cm};

/// Inodes of the TCP sockets this process holds ESTABLISHED to `port`.
fn established_to(port: u16) -> HashSet<u64> {
    let mut ours = HashSet::new();
    for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if let Ok(link) = std::fs::read_link(fd.path()) {
            let link = link.to_string_lossy().into_owned();
            if let Some(inode) = link
                .strip_prefix("socket:[")
                .and_then(|s| s.strip_suffix(']'))
            {
                ours.insert(inode.parse::<u64>().unwrap());
            }
        }
    }
    let mut found = HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let remote_port = cols[2]
                .rsplit(':')
                .next()
                .map(|p| u16::from_str_radix(p, 16).unwrap());
            let inode: u64 = cols[9].parse().unwrap();
            if cols[3] == "01" && remote_port == Some(port) && ours.contains(&inode) {
                found.insert(inode);
            }
        }
    }
    found
}

#[tokio::test]
async fn hundred_watches_share_two_connections() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let port = url::Url::parse(client.base_url()).unwrap().port().unwrap();
    let before = established_to(port);

    let mut watches = Vec::new();
    for _ in 0..100 {
        watches.push(
            configmaps(client.get(), ns.name())
                .watch::<Value>()
                .await
                .expect("open watch"),
        );
    }
    let after = established_to(port);
    let new: Vec<_> = after.difference(&before).collect();
    eprintln!(
        "100 concurrent watches use {} new TCP connection(s) (from /proc)",
        new.len()
    );
    // The same figure as `ss` reports it, for rest/README.md.
    if let Ok(out) = std::process::Command::new("ss")
        .args([
            "-Htnp",
            "state",
            "established",
            &format!("( dport = :{port} )"),
        ])
        .output()
    {
        let me = format!("pid={},", std::process::id());
        let ours = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains(&me))
            .count();
        eprintln!("ss: this test process holds {ours} ESTABLISHED connection(s) to :{port}");
    }
    // Two HTTP/2 connections (50 streams each). This binary runs this test alone, so nothing
    // else in the process opens connections to the apiserver meanwhile.
    assert_eq!(new.len(), 2, "{} connections", new.len());

    // Short requests still get through, and all 100 watches are live.
    create_cm(&client, ns.name(), "ping", "1").await;
    let events = futures_util::future::join_all(
        watches
            .iter_mut()
            .map(|w| async move { tokio::time::timeout(Duration::from_secs(30), w.next()).await }),
    )
    .await;
    for e in events {
        match e {
            Ok(Some(Ok(WatchEvent::Added(o)))) => assert_eq!(o["metadata"]["name"], "ping"),
            other => panic!("want ADDED ping, got {other:?}"),
        }
    }

    // Dropping a watch cancels its stream on the server too: 100 new watches fit on the same
    // two connections (a leaked stream would make them wait for a free slot).
    drop(watches);
    let mut again = Vec::new();
    for _ in 0..100 {
        let w = tokio::time::timeout(
            Duration::from_secs(10),
            configmaps(client.get(), ns.name()).watch::<Value>(),
        )
        .await
        .expect("a dropped watch freed its stream")
        .expect("open watch");
        again.push(w);
    }
    let total: Vec<_> = established_to(port).difference(&before).cloned().collect();
    assert_eq!(
        total.len(),
        2,
        "{} connections after reopening",
        total.len()
    );
}
