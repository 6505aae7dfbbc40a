//! A WebSocket as the ACP server's transport: each text frame one JSON-RPC message, read and
//! written as the lines of `agent_client_protocol::Lines`; the close frame's code kept for the
//! dialler to read.

use std::io;
use std::sync::{Arc, Mutex};

use futures::{Sink, SinkExt, Stream, StreamExt, future};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

/// How the server closed the link: its close code and reason, once a close frame came.
pub(crate) type CloseSeen = Arc<Mutex<Option<(u16, String)>>>;

/// The link's frames as the outgoing and incoming lines of the ACP server. A binary frame is read
/// as text (a malformed one is answered with a parse error, as any malformed message is); pings
/// are answered by the WebSocket itself; a close frame ends the incoming lines and is kept in
/// `closed`.
pub(crate) fn lines<S>(
    ws: WebSocketStream<S>,
    closed: CloseSeen,
) -> (impl Sink<String, Error = io::Error> + Send + 'static, impl Stream<Item = io::Result<String>> + Send + 'static)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sink, stream) = ws.split();
    let outgoing =
        sink.sink_map_err(io::Error::other).with(|line: String| future::ready(Ok::<_, io::Error>(Message::text(line))));
    let incoming = stream.filter_map(move |frame| {
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
