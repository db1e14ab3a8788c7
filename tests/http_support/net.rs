//! A real server on loopback and real hyper clients, HTTP/1.1 (keep-alive) and HTTP/2.

#![allow(dead_code)]

use axum::Router;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::net::SocketAddr;

pub type HttpClient = Client<HttpConnector, Empty<Bytes>>;

/// Serves `app` on `bind` (port 0: a free one) with the peer address recorded as axum's
/// `ConnectInfo`; the server lives as long as the test's runtime.
pub async fn serve(app: Router, bind: &str) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind(bind).await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    address
}

pub fn http1() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// HTTP/2 over cleartext with prior knowledge.
pub fn http2() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
    pub version: http::Version,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
}

pub async fn get(client: &HttpClient, address: SocketAddr, headers: &[(&str, &str)]) -> Reply {
    send(client, http::Method::GET, address, "/", headers).await
}

pub async fn send(
    client: &HttpClient,
    method: http::Method,
    address: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> Reply {
    let mut request = http::Request::builder()
        .method(method)
        .uri(format!("http://{address}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(Empty::new()).unwrap())
        .await
        .unwrap();
    let version = response.version();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
        version,
    }
}
