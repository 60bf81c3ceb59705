//! Shard moves in the task engine: the request model's moves at line
//! level. At a move's time a key is redeployed on another worker: a new
//! copy of its data (its tasks' addresses shifted into a fresh region the
//! caller homes on the new worker's node), its state loaded afresh from an
//! object store outside the machine. The warm-up decides the order: with a
//! warm-up the old deployment keeps serving while the new one loads its
//! state, and traffic switches when it has landed; without one traffic
//! switches at once, and the first batch that needs the key on its new
//! deployment fetches the state, every batch needing it waiting until it
//! lands (a cold start). The mapping and its differences from the request
//! model: `docs/fidelity.md`.

use std::collections::HashMap;

/// One move, as the task engine runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskMove {
    pub at_ps: u64,
    pub key: u32,
    /// The worker (an index into the engine's workers) serving it after.
    pub to_worker: usize,
    /// Added (wrapping) to the addresses of the key's tasks once switched:
    /// the new copy's region minus the old.
    pub shift: u64,
}

/// The object store a redeployed key's state comes from: first byte
/// after `latency_ps`, bytes served one request after another at
/// `bytes_per_ps` (the request model's far tier, an FCFS byte server).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectStore {
    pub latency_ps: u64,
    pub bytes_per_ps: f64,
    /// A key's state (bytes).
    pub state_bytes: u64,
}

/// Moves, the store, and what has switched.
pub struct Moves {
    pub(super) list: Vec<TaskMove>,
    store: ObjectStore,
    /// When the store is next free (ps).
    free_ps: u64,
    /// Per switched key: its shift, and when its state lands (`None`: not
    /// fetched yet).
    switched: HashMap<u32, (u64, Option<u64>)>,
    /// State fetches started.
    pub fetches: u64,
    /// Whether traffic waits for a warm-up before switching.
    pub(super) warm: bool,
}

impl Moves {
    /// `list` in any order (run in time order; errors name a move by its
    /// place in `list`); `warm`: traffic switches once the new
    /// deployment's state has landed.
    pub fn new(list: Vec<TaskMove>, store: ObjectStore, warm: bool) -> Moves {
        Moves {
            list,
            store,
            free_ps: 0,
            switched: HashMap::new(),
            fetches: 0,
            warm,
        }
    }

    /// Reads a key's state from the store from `t`; returns when it lands.
    pub(super) fn fetch(&mut self, t: u64) -> u64 {
        self.fetches += 1;
        let svc = (self.store.state_bytes as f64 / self.store.bytes_per_ps.max(f64::MIN_POSITIVE))
            .min(u64::MAX as f64) as u64;
        let done = self.free_ps.max(t).saturating_add(svc);
        self.free_ps = done;
        done.saturating_add(self.store.latency_ps)
    }

    /// Move `i` switches now; its state landed at `landed` (a warm-up's)
    /// or is still to be fetched.
    pub(super) fn switch(&mut self, i: usize, landed: Option<u64>) {
        let m = self.list[i];
        self.switched.insert(m.key, (m.shift, landed));
    }

    /// The shift of `key`'s addresses now (0: not moved).
    pub(super) fn shift_of(&self, key: u32) -> u64 {
        self.switched.get(&key).map_or(0, |s| s.0)
    }

    /// For a batch starting at `t` with a task of `key`: the shift of its
    /// addresses and when its state is ready (a cold key's fetch starts
    /// now).
    pub(super) fn at_start(&mut self, key: u32, t: u64) -> (u64, u64) {
        let Some(&(shift, landed)) = self.switched.get(&key) else {
            return (0, t);
        };
        let ready = match landed {
            Some(at) => at,
            None => {
                let at = self.fetch(t);
                self.switched.insert(key, (shift, Some(at)));
                at
            }
        };
        (shift, ready)
    }
}
