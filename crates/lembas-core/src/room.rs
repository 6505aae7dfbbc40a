//! Room in the window (issue #55): every request fits the window it is sent to and leaves room
//! for what must follow it. A step's reply is limited (`max_tokens`) so that the conversation
//! with that reply can still be compacted — the compaction's ask and its summary fit after it —
//! and a request that would leave less than [`LEAST_REPLY`] is not sent as it is: the
//! conversation is compacted first.
//!
//! Tokens are counted as the server counts them where it has said. A request that carries what
//! the server last counted (the same tools, the history grown or trimmed since) is reckoned from
//! that count ([`crate::counted::Counted`]): only the bytes that changed are estimated, so whatever the server's
//! chat template adds or leaves out — a tool list it never renders — is in the figure exactly.
//! A request with nothing counted behind it (the first, or the first after a compaction) is
//! estimated whole: the bytes of a request against the `prompt_tokens` its server reported,
//! measured on every answer; before the first answer, the login's measure (llama.cpp's
//! `/tokenize`, or an earlier session's measure), else the estimate of
//! `lembas_models::ESTIMATED_BYTES_PER_TOKEN`.

use crate::counted::Size;
use crate::session::{Session, SessionConfig};

/// The ledger a new session starts with: its output cap and read window fitted to a small
/// window, so that no one result fills it.
pub(crate) fn ledger_for(cfg: &SessionConfig) -> lembas_context::Ledger {
    match cfg.model.context.or(cfg.context_window) {
        Some(window) => lembas_context::Ledger::for_window((window as f64 * cfg.model.bytes_per_token()) as usize),
        None => lembas_context::Ledger::default(),
    }
}

/// The fewest tokens a reply is given: a request with less room than this is not sent as it is.
const LEAST_REPLY: u64 = 256;

/// A measure of bytes per token from a server's count is believed within these bounds: a chat
/// template that leaves the tool list out counts far fewer tokens than the bytes sent, and one
/// answer's count may be of a cut prompt.
const BELIEVED: std::ops::RangeInclusive<f64> = 1.5..=6.0;

/// What a request is for, which says what must still fit after its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// A step of a turn: a compaction may follow it.
    Step,
    /// A turn's last words: nothing follows in this window.
    Last,
    /// A compaction's summary: nothing follows it in this window, and it is given at most
    /// [`Session::summary_room`] — the history starts afresh from it, so a summary that ran
    /// on would leave the next step no room.
    Summary,
}

/// What the window leaves a request's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Room {
    /// The reply may take this many tokens, and what must follow it still fits: the request's
    /// `max_tokens` (`None`: no limit is sent — the window is unknown, or was only learnt from
    /// a refusal and the model's own output limit is not known).
    Reply(Option<u64>),
    /// The reply has room, but a compaction after it would not fit.
    Tight(Option<u64>),
    /// Not even [`LEAST_REPLY`] is left, by the estimate.
    None { window: u64, prompt: u64 },
}

impl Session {
    /// How many bytes of a request one token holds on this session's server: as measured on
    /// its answers, else as the login measured it, else the estimate.
    pub(crate) fn bytes_per_token(&self) -> f64 {
        self.state.bytes_per_token.filter(|r| BELIEVED.contains(r)).unwrap_or_else(|| self.cfg.model.bytes_per_token())
    }

    /// About how many tokens `bytes` of a request make on this session's server.
    pub(crate) fn tokens_of(&self, bytes: usize) -> u64 {
        (bytes as f64 / self.bytes_per_token()).ceil() as u64
    }

    /// About how many tokens a request of `size` makes on this session's server: reckoned from
    /// the last request it counted where that had the same tools (only what changed since is
    /// estimated), else estimated whole.
    pub(crate) fn request_tokens(&self, size: Size) -> u64 {
        match self.state.counted {
            Some(counted) if counted.tools == size.tools => {
                let changed = (size.messages as f64 - counted.messages as f64) / self.bytes_per_token();
                (counted.tokens as f64 + changed).max(0.0).ceil() as u64
            }
            _ => self.tokens_of(size.total()),
        }
    }

    /// The server counted `tokens` for a request of `bytes`: the session's measure from now on.
    /// The first measure of a model the login has none for is kept with the login
    /// (`SessionConfig::measured`), so the next session fits its first request by it.
    pub(crate) fn measured(&mut self, bytes: usize, tokens: u64) {
        if tokens == 0 || bytes == 0 {
            return;
        }
        let per_token = bytes as f64 / tokens as f64;
        if !BELIEVED.contains(&per_token) {
            return;
        }
        let first = self.state.bytes_per_token.is_none();
        self.state.bytes_per_token = Some(per_token);
        if first
            && self.cfg.model.bytes_per_token.is_none()
            && let Some(keep) = &self.cfg.measured
        {
            keep(&self.cfg.model.id, per_token);
        }
    }

    /// Tokens a compaction's summary is given: an eighth of the window, from 512 to 4,096 (the
    /// summary asks for under 600 words).
    pub(crate) fn summary_room(window: u64) -> u64 {
        (window / 8).clamp(512, 4096)
    }

    /// Tokens the compaction's ask adds to a request.
    fn compaction_ask_tokens(&self) -> u64 {
        // Its text and the message's wire form around it.
        self.tokens_of(crate::prompt::compaction_ask().len() + 64)
    }

    /// What the window leaves the reply of a request of `prompt` tokens made for `ask`.
    pub(crate) fn room(&self, prompt: u64, ask: Ask) -> Room {
        let max_output = self.cfg.model.max_output;
        let Some(window) = self.window() else { return Room::Reply(max_output) };
        // A window the server or the person stated bounds what the model may write; one learnt
        // from a refusal says nothing of the model's own output limit, which a larger
        // `max_tokens` than it allows would break.
        let stated = self.cfg.model.context.or(self.cfg.context_window).is_some();
        let limit = |left: u64| match (ask, max_output) {
            (Ask::Summary, max) => Some(Self::summary_room(window).min(left).min(max.unwrap_or(u64::MAX))),
            (_, Some(max)) => Some(max.min(left)),
            (_, None) if stated => Some(left),
            (_, None) => None,
        };
        let after = match ask {
            Ask::Step => self.compaction_ask_tokens() + Self::summary_room(window),
            Ask::Last | Ask::Summary => 0,
        };
        // A margin for what the server's chat template adds and the estimate misses.
        let left = window.saturating_sub(prompt).saturating_sub(16 + window / 100);
        if left.saturating_sub(after) >= LEAST_REPLY {
            Room::Reply(limit(left - after))
        } else if left >= LEAST_REPLY {
            Room::Tight(limit(left))
        } else {
            Room::None { window, prompt }
        }
    }

    /// What the person is told when a request has no room in the window.
    pub(crate) fn no_room(&self, window: u64, prompt: u64) -> String {
        format!(
            "The conversation no longer fits {}'s context window ({window} tokens): the request would take about {prompt} tokens and leave no room for a reply, even after compaction. Nothing was sent. Start the server with a larger window ({}), or start a new session.",
            self.cfg.model.display_name(),
            crate::session::larger_window(window * 2)
        )
    }

    /// What the window leaves the next step's request — the history as it stands.
    pub(crate) fn next_step_room(&self) -> Room {
        let messages = self.request_messages();
        self.room(self.request_tokens(Size::of(&messages, &self.tools)), Ask::Step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_given_an_eighth_of_the_window_within_bounds() {
        assert_eq!(Session::summary_room(4096), 512);
        assert_eq!(Session::summary_room(8192), 1024);
        assert_eq!(Session::summary_room(32768), 4096);
        assert_eq!(Session::summary_room(1_000_000), 4096);
    }
}
