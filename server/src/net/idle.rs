//! A gRPC connection that sends nothing for too long is closed. A live peer always sends
//! something within the keep-alive interval (the answers to the server's pings), so only
//! peers that never finish the HTTP/2 handshake, or went silent without closing, hit this.
//! It also holds the connection's [`Slot`], so the slot comes back when hyper drops it.

use super::Slot;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// A TCP connection whose reads fail with `TimedOut` once nothing has arrived for `limit`.
#[derive(Debug)]
pub struct Idle {
    io: TcpStream,
    limit: Duration,
    /// When the last byte arrived; read on every read, the timer re-armed only when it
    /// fires (so a busy connection never touches the timer wheel).
    last_read: Instant,
    deadline: Pin<Box<Sleep>>,
    _slot: Slot,
}

impl Idle {
    /// `io`, closed after `limit` without a byte from the peer, holding `slot`.
    pub fn new(io: TcpStream, limit: Duration, slot: Slot) -> Idle {
        let now = Instant::now();
        Idle {
            io,
            limit,
            last_read: now,
            deadline: Box::pin(tokio::time::sleep_until(now + limit)),
            _slot: slot,
        }
    }

    /// Whether the peer has been silent for the whole limit (re-arming the timer if not).
    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            if self.deadline.as_mut().poll(cx).is_pending() {
                return false;
            }
            let due = self.last_read + self.limit;
            if Instant::now() >= due {
                return true;
            }
            self.deadline.as_mut().reset(due);
        }
    }
}

impl AsyncRead for Idle {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.last_read = Instant::now();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending if self.timed_out(cx) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer sent nothing within the idle timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncWrite for Idle {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl Connected for Idle {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.io.connect_info()
    }
}
