//! Progress as a turn moves (`progress.md`): a new phase is said at once; a change of a phase's
//! data (the rate, tokens read) at most `pace_per_second` times a second.

use std::time::{Duration, Instant};

use lembas_progress::{Phase, Progress};
use lembas_spec::loop_spec;

use crate::{Event, now_ms};

pub(crate) struct Phases {
    current: Option<Progress>,
    last_sent: Instant,
    events: crate::sink::EventSink,
}

impl Phases {
    pub fn new(events: crate::sink::EventSink) -> Self {
        Phases { current: None, last_sent: Instant::now(), events }
    }

    pub fn set(&mut self, phase: Phase) {
        let pace = Duration::from_millis(1000 / u64::from(loop_spec().progress.pace_per_second.max(1)));
        match &mut self.current {
            Some(current) if current.phase.continues(&phase) => {
                if current.phase == phase {
                    return;
                }
                current.phase = phase;
                if self.last_sent.elapsed() < pace {
                    return;
                }
            }
            _ => self.current = Some(Progress::new(phase, now_ms())),
        }
        self.send();
    }

    /// The session does nothing now (a turn that finished normally ends with `null`).
    pub fn clear(&mut self) {
        if self.current.take().is_some() {
            self.send();
        }
    }

    fn send(&mut self) {
        self.last_sent = Instant::now();
        let _ = self.events.send(Event::Phase { progress: self.current.clone() });
    }
}
