//! A request's body as it goes to the server: written piece by piece from the messages' wire
//! forms while the connection takes it, never whole in memory.
//!
//! A long session's request is megabytes of history (10,000 messages: ~1.4 MB), sent every
//! step. Held whole, the C library's allocator kept the freed buffers of earlier steps in each
//! thread's own arena: the process held several megabytes more than it used. In pieces of at
//! most [`PIECE`] bytes, the body's memory is a few pieces at a time, reused from step to step.
//! Its length is known before the first byte, so it goes with a `Content-Length` as before.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use http_body::{Frame, SizeHint};

use crate::wire::WireMessage;

/// At most this much of the history in one piece (a message longer than it is one piece).
pub(crate) const PIECE: usize = 64 * 1024;

/// `head`, the messages separated by commas, then `tail`: `{"model": …, "messages": [` … `], …}`.
#[derive(Debug)]
pub(crate) struct RequestBody {
    head: Option<Vec<u8>>,
    messages: Arc<Vec<WireMessage>>,
    /// The next message to write.
    next: usize,
    tail: Option<Vec<u8>>,
    /// Bytes not yet given to the connection.
    left: u64,
}

impl RequestBody {
    pub(crate) fn new(head: Vec<u8>, messages: Arc<Vec<WireMessage>>, tail: Vec<u8>) -> RequestBody {
        let commas = messages.len().saturating_sub(1);
        let history: usize = messages.iter().map(|m| m.get().len()).sum();
        let left = (head.len() + history + commas + tail.len()) as u64;
        RequestBody { head: Some(head), messages, next: 0, tail: Some(tail), left }
    }

    /// The next piece: as much of the head, the messages (whole ones) and the tail, in that
    /// order, as fits in [`PIECE`] — a short session's body is one piece, as it was before.
    fn next_piece(&mut self) -> Option<Bytes> {
        if self.left == 0 {
            return None;
        }
        let mut piece = BytesMut::with_capacity(PIECE.min(self.left as usize));
        let fits = |piece: &BytesMut, more: usize| piece.is_empty() || piece.len() + more <= PIECE;
        if let Some(head) = self.head.take() {
            piece.extend_from_slice(&head);
        }
        while let Some(message) = self.messages.get(self.next) {
            let text = message.get().as_bytes();
            let comma = usize::from(self.next > 0);
            if !fits(&piece, comma + text.len()) {
                break;
            }
            if comma == 1 {
                piece.put_u8(b',');
            }
            piece.extend_from_slice(text);
            self.next += 1;
        }
        if self.next == self.messages.len() && self.tail.as_ref().is_some_and(|tail| fits(&piece, tail.len())) {
            piece.extend_from_slice(&self.tail.take().expect("the tail is there"));
        }
        self.left -= piece.len() as u64;
        Some(piece.freeze())
    }
}

impl http_body::Body for RequestBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().next_piece().map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    fn pieces(mut body: RequestBody) -> Vec<Bytes> {
        std::iter::from_fn(|| body.next_piece()).collect()
    }

    #[test]
    fn the_pieces_make_the_whole_body_as_long_as_it_said() {
        let long = Message::user("x".repeat(3 * PIECE)).to_wire(false);
        let mut messages: Vec<_> = (0..3_000).map(|n| Message::user(format!("message {n}")).to_wire(false)).collect();
        messages.insert(1_500, long);
        let tail = br#"],"stream":true}"#.to_vec();
        let body = RequestBody::new(br#"{"model":"m","messages":["#.to_vec(), Arc::new(messages), tail);
        let len = body.left;
        let pieces = pieces(body);
        let whole: Vec<u8> = pieces.concat();
        assert_eq!(whole.len() as u64, len);
        let read: serde_json::Value = serde_json::from_slice(&whole).unwrap();
        let said = read["messages"].as_array().unwrap();
        assert_eq!(said.len(), 3_001);
        assert_eq!(said[0]["content"], "message 0");
        assert_eq!(said[1_500]["content"].as_str().unwrap().len(), 3 * PIECE);
        assert_eq!(said[3_000]["content"], "message 2999");
        assert_eq!(read["stream"], true);
        // Only the message longer than a piece makes one longer than a piece.
        assert_eq!(pieces.iter().filter(|p| p.len() > PIECE).count(), 1);
        // What comes before the long message, the long message, what comes after it.
        assert_eq!(pieces.len(), 3);
    }

    #[test]
    fn a_short_body_is_one_piece() {
        let messages = (0..20).map(|n| Message::user(format!("message {n}")).to_wire(false)).collect();
        let body = RequestBody::new(br#"{"messages":["#.to_vec(), Arc::new(messages), b"]}".to_vec());
        let pieces = pieces(body);
        assert_eq!(pieces.len(), 1);
        let read: serde_json::Value = serde_json::from_slice(&pieces[0]).unwrap();
        assert_eq!(read["messages"][19]["content"], "message 19");
    }

    #[test]
    fn a_body_without_messages_is_its_head_and_tail() {
        let body = RequestBody::new(b"[".to_vec(), Arc::default(), b"]".to_vec());
        assert_eq!(body.left, 2);
        assert_eq!(pieces(body), [Bytes::from_static(b"[]")]);
    }
}
