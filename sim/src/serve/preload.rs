//! Preloading a request's data ahead of its batch, and the decision
//! features a preload policy (or a dataset) sees at dispatch: the request's
//! items, what of them the worker node's cache holds, the worker's past
//! batches as known at that moment.

use traces::workload::Arrival;

use super::{ServeEngine, judge, window};

impl ServeEngine<'_> {
    /// The item blocks a request looks up (its own seed, so it is the same
    /// whoever asks).
    pub(super) fn items_of(&self, a: &Arrival) -> Vec<(u32, u64)> {
        let shards = self.spec.shards.count as u64;
        let mut out = Vec::with_capacity(self.spec.lookups_of(a) as usize);
        self.spec.request_items(a, &self.item_cdf, |item| {
            out.push((item, item as u64 * shards + a.shard as u64 + 1))
        });
        out
    }

    /// Brings queued request `pos` of worker `w`'s data into its node's cache now.
    pub(super) fn fire_preload(&mut self, w: usize, pos: usize, t: u64) {
        let node = self.workers[w].node as usize;
        let a = self.workers[w].queue[pos].a;
        let home = self.shard_node[a.shard as usize] as usize;
        let f = &self.spec.request.features;
        let (item_bytes, resident) = (f.item_kb * 1024.0, f.resident);
        let mut from_home = 0.0;
        let mut far = 0.0;
        let mut brought = Vec::new();
        let mut missing = 0usize;
        let items = self.items_of(&a);
        for &(item, block) in &items {
            let cached = self.caches[node].contains(block);
            if cached && !f.preload_whole {
                continue;
            }
            if item < resident {
                from_home += item_bytes
            } else {
                far += item_bytes
            }
            if cached {
                // Fetched with the request's object; the node had it.
                continue;
            }
            missing += 1;
            self.caches[node].fill(block);
            brought.push(block);
        }
        let mut ready = t;
        if from_home > 0.0 {
            ready = ready.max(self.mem_read(home, node, from_home, t));
        }
        if far > 0.0 {
            ready = ready.max(self.far_read(far, t));
        }
        self.totals.preloads += 1;
        self.totals.preload_bytes = self
            .totals
            .preload_bytes
            .saturating_add((from_home + far) as u64);
        self.totals.preload_items += brought.len() as u64;
        window(&mut self.totals.windows, t).preload_items += brought.len() as u64;
        // The truth of "would miss": checked now, before the preload filled the cache.
        if let Some(pred) = self.workers[w].queue[pos].predicted.take() {
            let share = self.spec.request.features.miss_share;
            judge(
                &mut self.totals,
                t,
                pred,
                missing as f64 >= share * items.len() as f64
                    && (!items.is_empty() || self.spec.request.features.lookups == 0),
            );
        }
        let q = &mut self.workers[w].queue[pos];
        q.preload_ready = ready;
        q.preloaded = brought;
    }

    /// The decision features of a request about to join worker `w` at `t`
    /// (the running batch's entry only once its data has arrived).
    pub(super) fn features(&self, w: usize, a: &Arrival, t: u64) -> Vec<f64> {
        let wk = &self.workers[w];
        let fs = &self.fset;
        let mut v = Vec::with_capacity(3 + 3 * fs.history);
        v.push((self.shard_node[a.shard as usize] != wk.node) as u8 as f64);
        v.push((wk.queue.len() + wk.running.len()) as f64);
        if fs.cached {
            let node = wk.node as usize;
            let items = self.items_of(a);
            let cached = items
                .iter()
                .filter(|&&(_, b)| self.caches[node].contains(b))
                .count();
            v.push(if items.is_empty() {
                1.0
            } else {
                cached as f64 / items.len() as f64
            });
        }
        let known = wk.pending.filter(|p| p.data_at <= t).map(|p| p.history);
        let mut past = known.into_iter().chain(wk.history.iter().copied());
        for _ in 0..fs.history {
            let (h, mb, d) = past.next().unwrap_or((1.0, 0.0, 0.0));
            for (x, on) in [h, mb, d].into_iter().zip(fs.groups) {
                if on {
                    v.push(x);
                }
            }
        }
        v
    }
}
