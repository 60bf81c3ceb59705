//! First-come-first-served servers: memory channels and links.
//!
//! A request arriving at `t` that needs `service` ps starts at
//! `max(t, busy_until)`; its wait is the difference. Arrivals are presented in
//! non-decreasing time order by the engine, so this is exact FCFS (Lindley's
//! recursion), and with deterministic service it is an M/D/1 or G/D/1 queue.
//!
//! Besides per-request sums, each queue integrates its occupancy N(t) over
//! time independently (a FIFO of departure times), so Little's law
//! (time-average N = arrival rate × mean time in system) can be checked
//! between two bookkeeping paths.

use std::collections::VecDeque;

/// One FCFS server with statistics.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Queue {
    busy_until: u64,
    /// Requests served.
    pub requests: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Time spent serving (ps).
    pub busy_ps: u64,
    /// Total wait before service (ps).
    pub wait_ps: u64,
    /// Total time in system, wait + service (ps).
    pub sojourn_ps: u64,
    /// ∫ N(t) dt (ps · requests), integrated over departure events.
    occupancy_area: u128,
    departures: VecDeque<u64>,
    last_event: u64,
    /// Time of the last departure so far.
    pub last_departure: u64,
}

impl Queue {
    /// When the server is next free.
    pub fn busy_until(&self) -> u64 {
        self.busy_until
    }

    /// Serves a request arriving at `t`; returns its wait (ps).
    #[inline]
    pub fn serve(&mut self, t: u64, service: u64, bytes: u64) -> u64 {
        self.integrate_to(t);
        let start = t.max(self.busy_until);
        let wait = start - t;
        // Saturating: inputs are bounded by validation; a clock at its end
        // stays there rather than wrapping.
        let done = start.saturating_add(service);
        self.busy_until = done;
        self.requests += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        self.busy_ps = self.busy_ps.saturating_add(service);
        self.wait_ps = self.wait_ps.saturating_add(wait);
        self.sojourn_ps = self.sojourn_ps.saturating_add(done - t);
        self.departures.push_back(done);
        self.last_departure = self.last_departure.max(done);
        wait
    }

    /// Advances the occupancy integral to time `t`.
    fn integrate_to(&mut self, t: u64) {
        let t = t.max(self.last_event);
        while let Some(&d) = self.departures.front() {
            if d > t {
                break;
            }
            self.occupancy_area += self.departures.len() as u128 * (d - self.last_event) as u128;
            self.last_event = d;
            self.departures.pop_front();
        }
        self.occupancy_area += self.departures.len() as u128 * (t - self.last_event) as u128;
        self.last_event = t;
    }

    /// ∫ N(t) dt up to the last departure (ps · requests).
    pub fn occupancy_area(&self) -> u128 {
        let mut q = self.clone();
        q.integrate_to(self.last_departure);
        q.occupancy_area
    }

    /// Zeroes the statistics, keeping the server's state (busy until).
    pub fn clear_stats(&mut self) {
        let busy_until = self.busy_until;
        *self = Queue {
            busy_until,
            last_event: self.last_event,
            ..Queue::default()
        };
    }

    /// Mean wait before service (ps).
    pub fn mean_wait_ps(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.wait_ps as f64 / self.requests as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lindley_hand_case() {
        let mut q = Queue::default();
        // S = 10: arrivals 0, 5, 30, 32 → waits 0, 5, 0, 8.
        assert_eq!(q.serve(0, 10, 64), 0);
        assert_eq!(q.serve(5, 10, 64), 5);
        assert_eq!(q.serve(30, 10, 64), 0);
        assert_eq!(q.serve(32, 10, 64), 8);
        assert_eq!(q.busy_ps, 40);
        assert_eq!(q.wait_ps, 13);
        // N(t): [0,5) 1, [5,10) 2, [10,20) 1, [20,30) 0, [30,32) 1, [32,40) 2, [40,50) 1.
        // Areas per interval: 1·5 + 2·5 + 1·10 + 0 + 1·2 + 2·8 + 1·10.
        assert_eq!(q.occupancy_area(), 53);
        assert_eq!(
            q.occupancy_area(),
            q.sojourn_ps as u128,
            "Little: area = Σ sojourn"
        );
    }
}
