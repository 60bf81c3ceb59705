//! The engine's event queue: (time, thread) keys, earliest first, with a
//! replace-top operation.
//!
//! The engine's loop takes the earliest thread, runs its access and puts
//! the same thread back with its next issue time. With `std`'s
//! `BinaryHeap` that is a pop (sift to the bottom and back up) and a push
//! (sift up); here the thread stays first while it runs and
//! [`Events::replace_top`] sifts the new key down once (no step at all
//! when that thread is still first).
//! A key is one `u128` (time in the high half, thread in the low), so a
//! comparison is one integer compare and the order is exactly
//! lexicographic (time, thread), as before. Keys are unique (a thread is
//! on the heap at most once), so the order of events does not depend on
//! the heap's shape.

/// A (time ps, thread index) event.
#[inline(always)]
fn key(t: u64, idx: usize) -> u128 {
    (t as u128) << 64 | idx as u128
}

#[inline(always)]
fn unkey(k: u128) -> (u64, usize) {
    ((k >> 64) as u64, k as u64 as usize)
}

/// Min-heap of (time, thread) events.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Events {
    h: Vec<u128>,
}

impl Events {
    /// Every event names a thread below `threads` (a restored heap's check;
    /// its order is checked by the caller's results, not here).
    pub fn threads_below(&self, threads: usize) -> bool {
        self.h.iter().all(|&k| unkey(k).1 < threads)
    }

    /// The earliest event.
    #[inline(always)]
    pub fn peek(&self) -> Option<(u64, usize)> {
        self.h.first().map(|&k| unkey(k))
    }

    /// The earliest event other than the top (the smaller child of the root).
    #[inline(always)]
    pub fn second(&self) -> Option<(u64, usize)> {
        match self.h.len() {
            0 | 1 => None,
            2 => Some(unkey(self.h[1])),
            _ => Some(unkey(self.h[1].min(self.h[2]))),
        }
    }

    pub fn push(&mut self, t: u64, idx: usize) {
        let k = key(t, idx);
        let mut i = self.h.len();
        self.h.push(k);
        while i > 0 {
            let p = (i - 1) / 2;
            if self.h[p] <= k {
                break;
            }
            self.h[i] = self.h[p];
            i = p;
        }
        self.h[i] = k;
    }

    /// Removes the earliest event.
    pub fn pop(&mut self) -> Option<(u64, usize)> {
        let last = self.h.pop()?;
        if self.h.is_empty() {
            return Some(unkey(last));
        }
        let top = self.h[0];
        self.sift_down(last);
        Some(unkey(top))
    }

    /// Replaces the earliest event by (t, idx). The heap must not be empty.
    #[inline]
    pub fn replace_top(&mut self, t: u64, idx: usize) {
        debug_assert!(!self.h.is_empty());
        self.sift_down(key(t, idx));
    }

    /// Places `k` at the root and sifts it down to its place.
    #[inline(always)]
    fn sift_down(&mut self, k: u128) {
        let h = &mut self.h[..];
        let n = h.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && h[l + 1] < h[l] {
                l + 1
            } else {
                l
            };
            if k <= h[c] {
                break;
            }
            h[i] = h[c];
            i = c;
        }
        h[i] = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Against `std`'s heap: random pushes, pops and replace-tops over
    /// colliding times give the same earliest and second events at every
    /// step, with 2, 16 and 64 threads.
    #[test]
    fn same_order_as_std_binary_heap() {
        for threads in [2, 16, 64] {
            check_against_std(threads);
        }
    }

    fn check_against_std(threads: u64) {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut ours = Events::default();
        let mut std = BinaryHeap::new();
        let mut on = vec![false; threads as usize];
        for step in 0..200_000 {
            let r = rnd();
            let t = rnd() % 50 + step / 100;
            match r % 4 {
                0 | 1 => {
                    let idx = (rnd() % threads) as usize;
                    if !on[idx] {
                        on[idx] = true;
                        ours.push(t, idx);
                        std.push(Reverse((t, idx)));
                    }
                }
                2 => {
                    let a = ours.pop();
                    let b = std.pop().map(|Reverse(e)| e);
                    assert_eq!(a, b, "pop at step {step}");
                    if let Some((_, i)) = a {
                        on[i] = false;
                    }
                }
                _ => {
                    if let Some((_, i)) = ours.peek() {
                        std.pop();
                        ours.replace_top(t, i);
                        std.push(Reverse((t, i)));
                    }
                }
            }
            assert_eq!(
                ours.peek(),
                std.peek().map(|&Reverse(e)| e),
                "top at step {step}"
            );
            let mut rest = std.clone();
            rest.pop();
            assert_eq!(
                ours.second(),
                rest.peek().map(|&Reverse(e)| e),
                "second at step {step}"
            );
        }
    }
}
