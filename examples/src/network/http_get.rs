//! [`http_get`]: one plain HTTP/1.1 `GET`, enough to read what a manager's probe and metrics
//! endpoints answer (the demo prints `/readyz`; the tests read both).

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// What an HTTP server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAnswer {
    /// The status code (`200`).
    pub status: u16,
    /// The body, as text.
    pub body: String,
}

/// `GET path` on `address` with `Connection: close`, read to the end.
pub async fn http_get(address: SocketAddr, path: &str) -> std::io::Result<HttpAnswer> {
    let mut tcp = TcpStream::connect(address).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    tcp.read_to_end(&mut response).await?;
    let response = String::from_utf8_lossy(&response);
    let invalid = |why: &str| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("GET {path} on {address}: {why}"),
        )
    };
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| invalid("no end of the headers in the answer"))?;
    let status = head
        .lines()
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid("no status line in the answer"))?;
    let chunked = head.lines().any(|line| {
        line.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let body = if chunked {
        dechunk(body).ok_or_else(|| invalid("a malformed chunked body"))?
    } else {
        body.to_owned()
    };
    Ok(HttpAnswer { status, body })
}

/// A chunked body's data.
fn dechunk(mut body: &str) -> Option<String> {
    let mut data = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n")?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            return Some(data);
        }
        data.push_str(rest.get(..size)?);
        body = rest.get(size..)?.strip_prefix("\r\n")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n").as_deref(),
            Some("hello world")
        );
        assert_eq!(dechunk("5\r\nhel"), None);
    }
}
