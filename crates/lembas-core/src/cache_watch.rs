//! Cache misses explained (issue #55). lembas keeps what it sends as a growing prefix, so a
//! server's prompt cache should hold all of the previous request but its reply. When a request's
//! cached tokens fall well short of what it shares with the previous one, the person is told how
//! many tokens were read again and where the prefix changed — with the reason, where lembas
//! itself changed it (a compaction, an undo, another model) — or that nothing lembas sent changed
//! and the server let the prefix go. Locally one such miss costs minutes of prompt reading.

use std::sync::Arc;

use lembas_model::{ToolSchema, WireMessage};

use crate::session::Session;
use crate::session::sent::Shared;

/// A shared prefix smaller than this is not worth a word when missed.
const WORTH_SAYING: u64 = 1024;

impl Session {
    /// Before a request: how it compares with the previous one.
    pub(crate) fn compared_with_last(&self, messages: &[WireMessage], tools: &Arc<Vec<ToolSchema>>) -> Option<Shared> {
        self.sent.compare(messages, tools, &self.cfg.model.id)
    }

    /// A request is out: what it sent (its own lists) is kept for the next to be compared with.
    pub(crate) fn sending(&mut self, messages: &Arc<Vec<WireMessage>>, tools: &Arc<Vec<ToolSchema>>) {
        self.sent.remember(messages.clone(), tools.clone(), &self.cfg.model.id);
    }

    /// After a request the server answered with `cached` tokens from its cache: a miss worth
    /// saying is said, and kept for `/context`.
    pub(crate) fn explain_miss(&mut self, shared: Option<Shared>, cached: Option<u64>) {
        let Some(cached) = cached else { return };
        if cached > 0 {
            self.sent.caches = true;
        }
        let Some(shared) = shared.filter(|_| self.sent.caches) else { return };
        // What this request shares lies within the previous one, which the server counted: a
        // guess from bytes past that count (a template that renders no tool list) is no miss.
        let guessed = self.tokens_of(shared.bytes);
        let expected = self.state.counted.map_or(guessed, |last| guessed.min(last.tokens));
        // Servers cache in blocks and count their template's tokens: a fifth is slack.
        if cached as f64 >= expected as f64 * 0.8 {
            self.sent.unexplained_told = false;
            return;
        }
        if expected < WORTH_SAYING {
            return;
        }
        // A server that keeps little misses at every step: said once, until it caches well again.
        if shared.unexplained() && std::mem::replace(&mut self.sent.unexplained_told, true) {
            return;
        }
        let message = format!(
            "The server read about {} tokens again that it should have had cached ({cached} cached of about {expected}): {}.",
            expected - cached,
            shared.said()
        );
        self.state.cache_miss = Some(message.clone());
        self.emit(crate::Event::Notice { message });
    }
}
