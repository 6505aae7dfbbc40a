//! How fast a streamed reply is decoded and assembled: SSE framing, JSON chunks, the think-tag
//! splitter and tool-call assembly, with no network. Prints tokens (chunks) per second.
//!
//! `cargo bench -p lembas-model --bench sse_throughput`

use std::time::Instant;

use lembas_model::sse::SseDecoder;
use lembas_model::{Assembler, StreamEvent};

fn main() {
    let tokens = 200_000;
    let mut body = Vec::new();
    body.extend_from_slice(b"data: {\"choices\":[{\"delta\":{\"content\":\"<think>\"}}]}\n\n");
    for n in 0..tokens {
        // The first quarter is inline reasoning, closed by a tag; the rest is the answer.
        let word = if n == tokens / 4 { "</think>".to_owned() } else { format!(" word{n}") };
        body.extend_from_slice(
            format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{word}\"}}}}]}}\n\n").as_bytes(),
        );
    }
    body.extend_from_slice(b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");

    let runs = 5;
    let mut best = f64::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        let mut decoder = SseDecoder::default();
        let mut assembler = Assembler::default();
        let mut events = Vec::new();
        let mut out: Vec<StreamEvent> = Vec::new();
        // Feed in network-sized pieces that cut through lines.
        for piece in body.chunks(1400) {
            decoder.feed(piece, &mut events);
            for e in events.drain(..) {
                if e.data != "[DONE]" {
                    let value: serde_json::Value = serde_json::from_str(&e.data).unwrap();
                    assembler.chunk(&value, &mut out).unwrap();
                    out.clear();
                }
            }
        }
        let reply = assembler.finish(&mut out);
        assert!(!reply.text.is_empty() && !reply.reasoning.is_empty());
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "sse_throughput: {tokens} chunks in {:.1} ms (best of {runs}): {:.0} tokens/s",
        best * 1000.0,
        tokens as f64 / best
    );
}
