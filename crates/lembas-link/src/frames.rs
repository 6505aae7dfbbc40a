//! A WebSocket as the ACP server's transport: each text frame one JSON-RPC message, read and
//! written as the lines of `agent_client_protocol::Lines`; the close frame's code kept for the
//! dialler to read. The device pings the server now and then, and a link that has said nothing —
//! not even a pong — for too long counts as dropped (a laptop that slept, a network that changed
//! under a connection that still looks open), so it is dialled again.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::channel::mpsc;
use futures::{Sink, SinkExt, Stream, StreamExt, future};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// How the server closed the link: its close code and reason, once a close frame came.
pub(crate) type CloseSeen = Arc<Mutex<Option<(u16, String)>>>;

/// How often the device pings, and how long the server may say nothing before the link counts
/// as dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Keepalive {
    pub every: Duration,
    pub silence: Duration,
}

impl Default for Keepalive {
    fn default() -> Self {
        Keepalive { every: Duration::from_secs(30), silence: Duration::from_secs(75) }
    }
}

/// What the link's two halves say of it once it ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ending {
    pub closed: CloseSeen,
    /// The server said nothing for longer than the keepalive allows.
    pub silent: Arc<AtomicBool>,
}

/// The link's frames as the outgoing and incoming lines of the ACP server. A binary frame is read
/// as text (a malformed one is answered with a parse error, as any malformed message is); pings
/// are answered by the WebSocket itself; a close frame ends the incoming lines and is kept in
/// `ending`, as is a silence past the keepalive's.
pub(crate) fn lines<S>(
    ws: WebSocketStream<S>,
    ending: Ending,
    keepalive: Keepalive,
) -> (impl Sink<String, Error = io::Error> + Send + 'static, impl Stream<Item = io::Result<String>> + Send + 'static)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sink, stream) = ws.split();
    let heard = Arc::new(Mutex::new(Instant::now()));
    let gone_silent = CancellationToken::new();
    let (outgoing, queued) = mpsc::channel::<Message>(64);
    tokio::spawn(write(sink, queued, keepalive, heard.clone(), gone_silent.clone(), ending.silent.clone()));
    let outgoing = outgoing
        .sink_map_err(io::Error::other)
        .with(|line: String| future::ready(Ok::<_, io::Error>(Message::text(line))));
    let closed = ending.closed;
    let incoming = stream.take_until(Box::pin(gone_silent.cancelled_owned())).filter_map(move |frame| {
        *heard.lock().expect("heard") = Instant::now();
        let line = match frame {
            Ok(Message::Text(text)) => Some(Ok(text.as_str().to_owned())),
            Ok(Message::Binary(bytes)) => Some(Ok(String::from_utf8_lossy(&bytes).into_owned())),
            Ok(Message::Close(frame)) => {
                let said = frame.map_or((1005, String::new()), |f| (u16::from(f.code), f.reason.as_str().to_owned()));
                *closed.lock().expect("close seen") = Some(said);
                None
            }
            Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => None,
            Err(e) => Some(Err(io::Error::other(e))),
        };
        future::ready(line)
    });
    (outgoing, incoming)
}

/// Writes what the ACP server sends, and a ping every so often; ends the incoming side when the
/// server has been silent too long, and itself when the ACP server lets its sink go.
async fn write<W>(
    mut sink: W,
    mut queued: mpsc::Receiver<Message>,
    keepalive: Keepalive,
    heard: Arc<Mutex<Instant>>,
    gone_silent: CancellationToken,
    silent: Arc<AtomicBool>,
) where
    W: Sink<Message> + Unpin,
{
    let mut ticks = tokio::time::interval(keepalive.every);
    ticks.tick().await;
    loop {
        tokio::select! {
            message = queued.next() => match message {
                Some(message) => if sink.send(message).await.is_err() { break },
                None => break,
            },
            _ = ticks.tick() => {
                if heard.lock().expect("heard").elapsed() > keepalive.silence {
                    silent.store(true, Ordering::SeqCst);
                    gone_silent.cancel();
                    break;
                }
                if sink.send(Message::Ping(Vec::new().into())).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = sink.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_tungstenite::tungstenite::protocol::Role;

    #[tokio::test]
    async fn a_server_that_goes_silent_ends_the_link_and_one_that_answers_pings_keeps_it() {
        let keepalive = Keepalive { every: Duration::from_millis(100), silence: Duration::from_millis(450) };
        // A server that reads (and so answers pings) keeps the link up.
        let (device, server) = tokio::io::duplex(1 << 16);
        let ws = WebSocketStream::from_raw_socket(device, Role::Client, None).await;
        let answering = WebSocketStream::from_raw_socket(server, Role::Server, None).await;
        let reader = tokio::spawn(answering.for_each(|_| future::ready(())));
        let ending = Ending::default();
        let (_out, mut incoming) = lines(ws, ending.clone(), keepalive);
        let waited = tokio::time::timeout(Duration::from_millis(1200), incoming.next()).await;
        assert!(waited.is_err(), "still open after more than twice the silence allowed");
        assert!(!ending.silent.load(Ordering::SeqCst));
        reader.abort();

        // A server that reads nothing answers no ping: the link ends within the silence allowed.
        let (device, server) = tokio::io::duplex(1 << 16);
        let ws = WebSocketStream::from_raw_socket(device, Role::Client, None).await;
        let _deaf = server;
        let ending = Ending::default();
        let (_out, mut incoming) = lines(ws, ending.clone(), keepalive);
        let ended = tokio::time::timeout(Duration::from_secs(5), incoming.next()).await.expect("the link ended");
        assert!(ended.is_none());
        assert!(ending.silent.load(Ordering::SeqCst));
    }
}
