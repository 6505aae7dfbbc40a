//! Server-sent events, decoded from a byte stream.
//!
//! Written here rather than taken from a crate because model servers bend the format in ways a
//! strict decoder drops: llama.cpp may end a stream with an error object on an unterminated last
//! line (`quirks.json` `error-in-200-stream`), which must still be read. Everything else is the
//! standard framing: `data:` lines joined by newlines, a blank line ends an event, `:` starts a
//! comment, CRLF and LF both end a line.

/// One event's `data` (and its `event` name, when the server gave one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Decodes events from chunks of bytes, however the chunks cut the lines.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    data: Option<String>,
    event: Option<String>,
}

impl SseDecoder {
    /// Feeds a chunk; pushes every event it completes onto `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        for &byte in chunk {
            if byte == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.line_done(&line, out);
            } else {
                self.line.push(byte);
            }
        }
    }

    /// The stream ended: an unterminated last line, and an event without its blank line, still
    /// count.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, out);
        }
        self.dispatch(out);
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            // A bare JSON line without a field name: some servers' error bodies.
            _ if text.starts_with('{') => self.data = Some(text.into_owned()),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if let Some(data) = self.data.take() {
            out.push(SseEvent { event: self.event.take(), data });
        }
        self.event = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::default();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out);
        }
        d.finish(&mut out);
        out
    }

    #[test]
    fn events_split_across_chunks_and_crlf() {
        let out = decode(&[b"data: {\"a\"", b":1}\r\n\r\nda", b"ta: two\n", b"data: lines\n\n"]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].data, "{\"a\":1}");
        assert_eq!(out[1].data, "two\nlines");
    }

    #[test]
    fn comments_are_skipped_and_event_names_kept() {
        let out = decode(&[b": keep-alive\n\nevent: error\ndata: x\n\n"]);
        assert_eq!(out, [SseEvent { event: Some("error".into()), data: "x".into() }]);
    }

    #[test]
    fn an_unterminated_last_line_still_counts() {
        let out = decode(&[b"data: {\"ok\":1}\n\ndata: {\"error\":{\"code\":500}}"]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].data, "{\"error\":{\"code\":500}}");
    }
}
