//! Text cut into pieces for search, measured in tokens (`filesystem.md`, *Indexing, by tokens*).
//!
//! A piece is the longest stretch of at most `size` tokens; it is cut just after a paragraph
//! break, else a line break, else a sentence's `. `, looked for in the window's last third (by
//! characters), else at the end of the window's last token. The next piece begins at the start of
//! the token `overlap` tokens before the cut. CRLF is read as LF, the text and every piece are
//! trimmed, and pieces under 40 characters are dropped — except a text that fits in one piece,
//! which is kept whole (a small file is still worth finding; lembas' reading, see
//! docs/spec-decisions.md).
//!
//! ```
//! use lembas_chunking::{chunk, Words};
//! let pieces = chunk("A short note that fits in one piece.", 480, 64, &Words);
//! assert_eq!(pieces, ["A short note that fits in one piece."]);
//! ```

/// The smallest piece size: a smaller `size` is raised to it.
pub const MIN_SIZE: usize = 16;
/// Pieces shorter than this (in characters) are dropped.
pub const MIN_PIECE_CHARS: usize = 40;

/// Splits text into tokens, as character ranges `[start, end)` into the text's characters.
pub trait Tokenizer {
    fn tokens(&self, chars: &[char]) -> Vec<(usize, usize)>;
}

/// The stand-in tokenizer of the conformance cases: a token is a run of non-whitespace.
#[derive(Debug, Clone, Copy, Default)]
pub struct Words;

impl Tokenizer for Words {
    fn tokens(&self, chars: &[char]) -> Vec<(usize, usize)> {
        let mut tokens = Vec::new();
        let mut start = None;
        for (i, c) in chars.iter().enumerate() {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    tokens.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            tokens.push((s, chars.len()));
        }
        tokens
    }
}

/// The estimate used where the embedder does not say how it counts: `ceil(UTF-8 bytes / 2)`
/// tokens per run of non-whitespace, each run split evenly into that many tokens.
#[derive(Debug, Clone, Copy, Default)]
pub struct ByteEstimate;

impl Tokenizer for ByteEstimate {
    fn tokens(&self, chars: &[char]) -> Vec<(usize, usize)> {
        BytesPerToken(2.0).tokens(chars)
    }
}

/// Tokens of this many UTF-8 bytes each within each run of non-whitespace (the last of a run may
/// be shorter): the byte estimate's rule with another ratio — one a model's tokenizer was
/// measured at, say.
#[derive(Debug, Clone, Copy)]
pub struct BytesPerToken(pub f64);

impl Tokenizer for BytesPerToken {
    fn tokens(&self, chars: &[char]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (start, end) in Words.tokens(chars) {
            let mut pos = start;
            let mut bytes = 0usize;
            for (i, c) in chars.iter().enumerate().take(end).skip(start) {
                bytes += c.len_utf8();
                if bytes as f64 >= self.0 || i + 1 == end {
                    out.push((pos, i + 1));
                    pos = i + 1;
                    bytes = 0;
                }
            }
        }
        out
    }
}

fn trimmed(chars: &[char]) -> String {
    chars.iter().collect::<String>().trim().to_owned()
}

/// Where to cut the window `chars[from..to]`: just after the last paragraph break, else line
/// break, else `. ` in its last third; `None` when there is none.
fn natural_cut(chars: &[char], from: usize, to: usize) -> Option<usize> {
    let third_start = from + (to - from) * 2 / 3;
    let find_last = |pattern: &[char]| -> Option<usize> {
        (third_start..=to.saturating_sub(pattern.len()))
            .rev()
            .find(|&i| chars[i..i + pattern.len()] == *pattern)
            .map(|i| i + pattern.len())
    };
    find_last(&['\n', '\n']).or_else(|| find_last(&['\n'])).or_else(|| find_last(&['.', ' ']))
}

/// `text` cut into pieces of at most `size` tokens (at least [`MIN_SIZE`]), each repeating the
/// last `overlap` tokens (at most half the size) of the one before.
pub fn chunk(text: &str, size: usize, overlap: usize, tokenizer: &impl Tokenizer) -> Vec<String> {
    let size = size.max(MIN_SIZE);
    let overlap = overlap.min(size / 2);
    let normal = text.replace("\r\n", "\n");
    let chars: Vec<char> = normal.trim().chars().collect();
    let tokens = tokenizer.tokens(&chars);
    if tokens.is_empty() {
        return Vec::new();
    }
    if tokens.len() <= size {
        return vec![trimmed(&chars)];
    }

    let mut pieces = Vec::new();
    let mut first = 0;
    loop {
        let last = (first + size - 1).min(tokens.len() - 1);
        let from = tokens[first].0;
        if last == tokens.len() - 1 {
            pieces.push(trimmed(&chars[from..]));
            break;
        }
        let window_end = tokens[last].1;
        let cut = natural_cut(&chars, from, window_end).unwrap_or(window_end);
        pieces.push(trimmed(&chars[from..cut]));
        // The first token that starts at or after the cut; the next piece starts `overlap`
        // tokens before it, and always moves on.
        let after_cut = tokens.partition_point(|t| t.0 < cut);
        first = after_cut.saturating_sub(overlap).max(first + 1);
    }
    pieces.retain(|p| p.chars().count() >= MIN_PIECE_CHARS);
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_runs_of_non_whitespace() {
        let chars: Vec<char> = " ab  c\nd ".chars().collect();
        assert_eq!(Words.tokens(&chars), [(1, 3), (5, 6), (7, 8)]);
    }

    #[test]
    fn byte_estimate_is_half_the_bytes_rounded_up() {
        let chars: Vec<char> = "abcde é".chars().collect();
        // "abcde" is 5 bytes: 3 tokens; "é" is 2 bytes: 1 token.
        assert_eq!(ByteEstimate.tokens(&chars).len(), 4);
    }

    #[test]
    fn every_token_lands_in_some_piece_and_pieces_overlap() {
        let text: String = (0..500).map(|n| format!("w{n} ")).collect();
        let pieces = chunk(&text, 40, 8, &Words);
        assert!(pieces.len() > 10);
        for pair in pieces.windows(2) {
            let tail: Vec<&str> = pair[0].split_whitespace().rev().take(8).collect();
            assert!(pair[1].starts_with(tail.last().unwrap()));
        }
        assert!(pieces.last().unwrap().ends_with("w499"));
    }

    #[test]
    fn a_huge_overlap_still_moves_on() {
        let text = "xxxxx ".repeat(100);
        let pieces = chunk(&text, 16, 1000, &Words);
        assert!(!pieces.is_empty() && pieces.len() < 20);
    }
}
