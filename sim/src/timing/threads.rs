//! Trace threads: which core each runs on (pinned at first sight), the
//! records queued for it, and when its next access may issue (closed loop
//! with the core's MLP, or open loop at the trace's times).
//!
//! Thread ids are only names: any `u32` is a valid id. The index of a known
//! id comes from a table for ids below [`TABLE_MAX`] and a hash map above;
//! the last id looked up is remembered as a `u64`, so no `u32` value can be
//! mistaken for "none yet".

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::ops::{Index, IndexMut};

use traces::horizon::{HORIZON_NS, HORIZON_PS};
use traces::{Access, Timing};

use crate::directory::U64Map;
use crate::machine::Machine;

use super::config::{EngineError, Pin};

/// Thread ids below this are looked up in a table, not a hash map.
const TABLE_MAX: u32 = 1 << 16;

/// No thread looked up yet (above every `u32`).
const NO_ID: u64 = u64::MAX;

/// A record waiting on its thread: access, time column, record index, PC.
pub(super) type Queued = (Access, u64, u64, Option<u64>);

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct ThreadState {
    pub id: u32,
    pub core: usize,
    pub queue: VecDeque<Queued>,
    /// Address of the thread's last instruction fetch (the PC of a lackey data access).
    pub last_ifetch: Option<u64>,
    /// Issue time of the previous access.
    pub last_issue: u64,
    pub started: bool,
    /// Completion times of misses in flight (at most `mlp`).
    pub inflight: BinaryHeap<Reverse<u64>>,
    /// Time of the next access, when it has been computed and pushed on the heap.
    pub scheduled: bool,
    pub accesses: u64,
    pub latency_ps: u128,
    pub last_done: u64,
}

impl ThreadState {
    /// The issue time of `a` (time column `time`, trace record `record`) as
    /// this thread's next access: retires the misses it finds completed and,
    /// when all `mlp` slots are busy, the one it waits for.
    #[inline(always)]
    pub fn issue_of(
        &mut self,
        a: &Access,
        time: u64,
        record: u64,
        mlp: usize,
        cycle_ps: u64,
    ) -> Result<u64, EngineError> {
        let timing = if a.flags & traces::record::FLAG_GAP != 0 {
            Timing::Gap(time)
        } else if a.flags & traces::record::FLAG_TIME != 0 {
            Timing::At(time)
        } else {
            Timing::None
        };
        let issue = match timing {
            Timing::At(ns) => {
                let ps = in_horizon(ns, "time_ns", record)?;
                if self.started && ps < self.last_issue {
                    return Err(EngineError::TimeBackwards {
                        record,
                        thread: self.id,
                        time_ns: ns,
                        prev_ns: self.last_issue / 1000,
                    });
                }
                // Nothing waits on an open-loop thread's misses, but a later
                // closed-loop record of the thread would (and would retire
                // these first, at a time ≥ this one): retire them now, so the
                // heap holds only what is really in flight, not every miss.
                while self
                    .inflight
                    .peek()
                    .is_some_and(|&Reverse(done)| done <= ps)
                {
                    self.inflight.pop();
                }
                ps
            }
            other => {
                let gap = match other {
                    Timing::Gap(ns) => in_horizon(ns, "gap_ns", record)?,
                    _ => 0,
                };
                let mut at = if self.started {
                    self.last_issue + gap.max(cycle_ps)
                } else {
                    self.last_issue + gap
                };
                // Retire misses that completed; block on the earliest if all slots are busy.
                while let Some(&Reverse(done)) = self.inflight.peek() {
                    if done <= at {
                        self.inflight.pop();
                    } else {
                        break;
                    }
                }
                if self.inflight.len() >= mlp
                    && let Some(Reverse(done)) = self.inflight.pop()
                {
                    at = at.max(done);
                }
                // Issue times and completions stay within the horizon, so
                // this sum of two cannot wrap; past it the run stops.
                if at > HORIZON_PS {
                    return Err(EngineError::ClockPastHorizon {
                        record,
                        thread: self.id,
                        ps: at,
                    });
                }
                at
            }
        };
        Ok(issue)
    }
}

/// A trace's time or gap `ns` (from `field` of record `record`) in ps,
/// if it is within the horizon (a reader has checked it, but the engine
/// also runs on batches made in code).
#[inline(always)]
fn in_horizon(ns: u64, field: &'static str, record: u64) -> Result<u64, EngineError> {
    if ns > HORIZON_NS {
        return Err(EngineError::TimePastHorizon { record, field, ns });
    }
    Ok(ns * 1000)
}

/// Every thread seen so far, in order of first appearance.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Threads {
    list: Vec<ThreadState>,
    index: U64Map<usize>,
    /// Thread index + 1 by trace thread id, for ids below [`TABLE_MAX`]
    /// (0: not seen); larger ids use `index`.
    table: Vec<u32>,
    /// The last (thread id, index) looked up: traces often run one thread
    /// long. The id is [`NO_ID`] before the first.
    last: (u64, usize),
    /// Per core: a thread runs there.
    core_taken: Vec<bool>,
}

impl Threads {
    pub fn new(cores: usize) -> Threads {
        Threads {
            list: Vec::new(),
            index: U64Map::default(),
            table: Vec::new(),
            last: (NO_ID, 0),
            core_taken: vec![false; cores],
        }
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn first(&self) -> Option<&ThreadState> {
        self.list.first()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, ThreadState> {
        self.list.iter()
    }

    /// Whether `id` is the thread looked up last.
    #[inline(always)]
    pub fn is_last(&self, id: u32) -> bool {
        self.last.0 == id as u64
    }

    /// The index of thread `id`, if it was seen; remembered as the last.
    #[inline(always)]
    /// Restored threads (a checkpoint's) name only real threads and cores.
    pub fn well_formed(&self, cores: usize) -> bool {
        let n = self.list.len();
        self.core_taken.len() == cores
            && self.list.iter().all(|t| t.core < cores)
            && self.index.values().all(|&i| i < n)
            && self.table.iter().all(|&k| (k as usize) <= n)
            && (self.last.0 == NO_ID || self.last.1 < n)
    }

    pub fn find(&mut self, id: u32) -> Option<usize> {
        if self.last.0 == id as u64 {
            return Some(self.last.1);
        }
        let known = match self.table.get(id as usize) {
            Some(&k) if k > 0 => Some(k as usize - 1),
            Some(_) => None,
            None if id < TABLE_MAX => None,
            None => self.index.get(&(id as u64)).copied(),
        };
        if let Some(t) = known {
            self.last = (id as u64, t);
        }
        known
    }

    /// Pins a new thread `id` (first seen at trace record `record`) to its
    /// core; it starts at `now_ps`. Returns its index.
    pub fn pin(
        &mut self,
        m: &Machine,
        pin: &Pin,
        id: u32,
        record: u64,
        now_ps: u64,
    ) -> Result<usize, EngineError> {
        let k = self.list.len();
        let cores = self.core_taken.len();
        let core = match pin {
            Pin::Compact => k,
            Pin::Spread => {
                let nodes = m.cpu_nodes();
                let node = nodes[k % nodes.len()] as usize;
                let within = k / nodes.len();
                if within >= m.spec.nodes[node].cores as usize {
                    cores // too many: reported below
                } else {
                    m.first_core[node] as usize + within
                }
            }
            Pin::Explicit(pairs) => match pairs.iter().find(|(t, _)| *t == id) {
                Some((_, c)) => {
                    if *c as usize >= cores {
                        return Err(EngineError::NoSuchCore { core: *c, cores });
                    }
                    *c as usize
                }
                None => return Err(EngineError::Unpinned { record, thread: id }),
            },
        };
        if core >= cores {
            return Err(EngineError::TooManyThreads {
                record,
                thread: id,
                cores,
            });
        }
        if self.core_taken[core] {
            return Err(EngineError::CoreTaken { core: core as u32 });
        }
        self.core_taken[core] = true;
        self.list.push(ThreadState {
            id,
            core,
            queue: VecDeque::new(),
            last_ifetch: None,
            // A thread first seen mid-run starts now, not at time zero
            // (`feed` has simulated what the records before it allow).
            last_issue: now_ps,
            started: false,
            inflight: BinaryHeap::new(),
            scheduled: false,
            accesses: 0,
            latency_ps: 0,
            last_done: 0,
        });
        self.index.insert(id as u64, k);
        if id < TABLE_MAX {
            if self.table.len() <= id as usize {
                self.table.resize(id as usize + 1, 0);
            }
            self.table[id as usize] = k as u32 + 1;
        }
        self.last = (id as u64, k);
        Ok(k)
    }

    /// The earliest time a thread with no buffered record could still issue.
    pub fn blocked_bound(&self) -> u64 {
        self.list
            .iter()
            .filter(|th| th.queue.is_empty())
            .map(|th| th.last_issue)
            .min()
            .unwrap_or(u64::MAX)
    }
}

impl Index<usize> for Threads {
    type Output = ThreadState;
    #[inline(always)]
    fn index(&self, i: usize) -> &ThreadState {
        &self.list[i]
    }
}

impl IndexMut<usize> for Threads {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut ThreadState {
        &mut self.list[i]
    }
}
