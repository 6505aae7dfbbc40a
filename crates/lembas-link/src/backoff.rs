//! How long to wait before dialling again: about a second at first, doubling to a minute,
//! jittered so that many devices a restarted server dropped do not all dial at once.

use std::time::Duration;

const FIRST: Duration = Duration::from_secs(1);
const LONGEST: Duration = Duration::from_secs(60);
/// A link that stayed up this long was a good one: the next drop starts from a second again.
pub(crate) const STEADY: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Backoff {
    pub(crate) fn new() -> Backoff {
        Backoff { next: FIRST }
    }

    /// The wait before the next dial, jittered by up to a fifth either way.
    pub(crate) fn wait(&mut self) -> Duration {
        let base = self.next;
        self.next = (base * 2).min(LONGEST);
        base.mul_f64(0.8 + 0.4 * fastrand::f64())
    }

    pub(crate) fn reset(&mut self) {
        self.next = FIRST;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_a_second_to_a_minute_jittered() {
        let mut backoff = Backoff::new();
        let waits: Vec<f64> = (0..9).map(|_| backoff.wait().as_secs_f64()).collect();
        let bases = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0];
        for (wait, base) in waits.iter().zip(bases) {
            assert!((base * 0.8..=base * 1.2).contains(wait), "{wait} for {base}");
        }
        backoff.reset();
        assert!(backoff.wait() <= Duration::from_millis(1200));
    }
}
