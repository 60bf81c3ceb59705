//! One access through the memory system: a core's private levels
//! (inclusive: an eviction from the last level back-invalidates the levels
//! above) and optional L1I; on a private miss the MESI directory (another
//! core's modified copy is a cache-to-cache transfer, a write invalidates
//! every other copy), the node's LLC, then memory through
//! [`Memory`](super::memory::Memory). Fills, evictions, write-backs and the
//! false-sharing bookkeeping live here too: this is the coherence miss path.

use traces::{Access, Kind};

use crate::directory::{Agents, NO_AGENT};

use super::Engine;
use super::cores::{NO_LINE, Served};

/// Straddling accesses touch at most this many lines.
const LINE_STRADDLE_MAX: usize = 2;

impl Engine<'_> {
    /// Applies one access at time `t`; returns (latency ps, where served).
    pub(super) fn access(
        &mut self,
        core: usize,
        a: &Access,
        t: u64,
        pc: Option<u64>,
    ) -> (u64, Served) {
        let vfirst = a.addr >> self.line_bits;
        let vlast = a.addr.saturating_add(a.size.max(1) as u64 - 1) >> self.line_bits;
        if let Some(lat) = self.shortcut(core, a) {
            // Its line's page is the core's last translated one.
            if a.kind != Kind::IFetch
                && let Some(first) = self.stats.counters.tlb.first_mut()
            {
                *first += 1;
            }
            self.shortcut_effect(core, a);
            return (lat, Served::Private(0));
        }
        // Translation comes first. The queues are charged at issue time, as
        // for every level's latency; a prefetch in flight is waited for
        // from when the translation ends (`access_lines`).
        let tlb_ps = if a.kind == Kind::IFetch {
            0
        } else {
            self.translate(core, a.addr)
        };
        // The caches, directory and memory see physical lines
        // (`crate::frames`); a straddle's second line is the next virtual
        // line's. Prefetchers see `a`'s virtual address (`prefetch.rs`).
        let (first, last, second) = (
            self.frames.line(vfirst, self.line_bits),
            self.frames.line(vlast, self.line_bits),
            self.frames.line(vfirst.wrapping_add(1), self.line_bits),
        );
        let mut result = self.access_lines(core, a, t, tlb_ps, pc, [first, second], last);
        result.0 += tlb_ps;
        // A load that waited for its translation holds a miss slot, as a
        // miss does (an L1 hit otherwise never does).
        if tlb_ps > 0 && result.1 == Served::Private(0) {
            self.waited = true;
        }
        let no_pf = self.pf.is_empty();
        let cs = &mut self.cores[core];
        if a.kind == Kind::IFetch && cs.l1i.is_some() {
            // A fetch through the L1I leaves the L1D alone, except for
            // back-invalidations from the L2, which clear `last_line`.
            cs.last_iline = if first == last && no_pf && cs.l1i_repeat_hit_free {
                first
            } else {
                NO_LINE
            };
            return result;
        }
        cs.last_line = if first == last
            && a.kind != Kind::IFetch
            && no_pf
            && cs.repeat_hit_free
            && !cs.levels.is_empty()
        {
            first
        } else {
            NO_LINE
        };
        // Every write leaves its line dirty in the L1D (write-allocate).
        cs.last_dirty = matches!(a.kind, Kind::Store | Kind::Modify);
        result
    }

    /// The physical line of virtual address `addr` (`crate::frames`).
    #[inline(always)]
    pub(super) fn phys_line(&self, addr: u64) -> u64 {
        self.frames.line(addr >> self.line_bits, self.line_bits)
    }

    /// The added latency (ps) of translating `addr` on `core` (0 without
    /// a TLB), counted by where the translation was found.
    #[inline(always)]
    fn translate(&mut self, core: usize, addr: u64) -> u64 {
        let Some(tlb) = self.cores[core].tlb.as_mut() else {
            return 0;
        };
        let found = tlb.lookup(addr);
        self.stats.counters.tlb[found] += 1;
        self.tlb_ps[found]
    }

    /// `a` is virtual; `pair`: the physical lines of its first virtual
    /// line and the next (a straddle touches both); `last`: its last
    /// byte's.
    /// `tlb_ps`: the access's translation delay, which a wait for a line
    /// still in flight overlaps (the returned latency excludes it).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn access_lines(
        &mut self,
        core: usize,
        a: &Access,
        t: u64,
        tlb_ps: u64,
        pc: Option<u64>,
        pair: [u64; LINE_STRADDLE_MAX],
        last: u64,
    ) -> (u64, Served) {
        let mut lat = 0;
        let mut served = Served::Private(0);
        let lines = if last == pair[0] {
            1
        } else {
            LINE_STRADDLE_MAX
        };
        for (k, &line) in pair.iter().enumerate().take(lines) {
            let byte_off = if k == 0 {
                a.addr & ((1 << self.line_bits) - 1)
            } else {
                0
            };
            let byte_end = if k == 0 && lines == 1 {
                byte_off + a.size as u64
            } else if k == 0 {
                1 << self.line_bits
            } else {
                (a.addr + a.size as u64) & ((1 << self.line_bits) - 1)
            };
            let (mut l, s) =
                self.access_line(core, a.kind, line, byte_off, byte_end.max(byte_off + 1), t);
            if a.kind != Kind::IFetch && !self.pf.is_empty() {
                let vline = (a.addr >> self.line_bits).wrapping_add(k as u64);
                l = self.prefetch_after(core, a, [line, vline], s, l, t, tlb_ps, pc);
            }
            if l >= lat {
                lat = l;
                served = s;
            }
        }
        (lat, served)
    }

    pub(super) fn access_line(
        &mut self,
        core: usize,
        kind: Kind,
        line: u64,
        off: u64,
        end: u64,
        t: u64,
    ) -> (u64, Served) {
        let write = matches!(kind, Kind::Store | Kind::Modify);
        let instr = kind == Kind::IFetch;
        let node = self.cores[core].node as usize;
        // 1. Private levels.
        let nlev = self.cores[core].levels.len();
        let first_is_l1i = instr && self.cores[core].l1i.is_some();
        let mut hit_level: Option<usize> = None;
        let mut was_dirty = false;
        // The line's directory entry, once looked up.
        let mut ent = None;
        {
            let cs = &mut self.cores[core];
            let start = if first_is_l1i { 1 } else { 0 };
            if first_is_l1i && cs.l1i.as_mut().expect("l1i present").probe(line, false) {
                hit_level = Some(0);
            }
            if hit_level.is_none() {
                for i in start..nlev {
                    if i >= 1 && ent.is_none() {
                        // Below the first level, the directory decides: a
                        // core holds a line in some private level exactly
                        // when it holds it in the last (inclusion), and then
                        // it is a sharer. Not a sharer: a miss everywhere,
                        // without the probes.
                        let e = self.dir.copied(line);
                        ent = Some(e);
                        if !e.sharers.contains(core) {
                            break;
                        }
                    }
                    // Mark dirty only in the first data level; lower levels
                    // learn of it on write-back.
                    if let Some(d) = cs.levels[i].probe_ex(line, write && i == 0) {
                        hit_level = Some(i);
                        was_dirty = d;
                        break;
                    }
                }
            }
        }
        if let Some(h) = hit_level {
            let mut lat = if first_is_l1i && h == 0 {
                self.cores[core].l1i_ps
            } else {
                self.cores[core].level_ps[h]
            };
            // Modified (dirty anywhere in the core's levels) means exclusive.
            let exclusive = write
                && (was_dirty
                    || self.cores[core].levels[1..]
                        .iter()
                        .any(|c| c.is_dirty(line)));
            if write && !exclusive {
                lat += self.upgrade(core, line, t);
            }
            if write {
                self.note_write(core, line, off, end);
            }
            // Fill the levels above the hit level.
            if h > 0 {
                self.fill_private(core, line, write, h, instr, t);
            }
            return (lat, Served::Private(h as u8));
        }
        // 2. Private miss: directory, then LLC, then memory.
        let home = self.mem.home_of(self.m, &mut self.stats, line, node);
        let ent = ent.unwrap_or_else(|| self.dir.copied(line));
        let me = core;
        let mut lat;
        let served;
        if ent.owner != NO_AGENT && ent.owner as usize != me {
            let o = ent.owner as usize;
            let onode = self.cores[o].node as usize;
            lat = self.c2c_ps + self.m.route_ps[node][onode];
            self.stats.counters.cache_to_cache += 1;
            served = Served::Remote;
            let e = self.dir.entry(line);
            if write {
                e.sharers = Agents::one(me);
                e.owner = me as u16;
                self.invalidate_agent(o, line, t);
                self.stats.count_invalidations(1, t);
            } else {
                e.sharers.insert(me);
                e.owner = NO_AGENT;
                // MESI: the owner's modified copy goes back to memory as it becomes shared.
                let owner = &mut self.cores[o];
                if owner.last_line == line {
                    owner.last_dirty = false;
                }
                let was_dirty = owner
                    .levels
                    .iter_mut()
                    .fold(false, |d, c| c.clean(line) | d);
                if was_dirty {
                    self.mem.write_back(self.m, &mut self.stats, onode, line, t);
                }
            }
        } else {
            let mut inv_lat = 0;
            if write {
                // Other cores' copies (from the directory) and other nodes'
                // LLC copies (by probing) are invalidated.
                let mut far = 0;
                let mut count = 0;
                // `ent` is a copy: iterating it while invalidating allocates nothing.
                for a in ent.sharers.iter().filter(|&a| a != me) {
                    far = far.max(self.m.route_ps[node][self.cores[a].node as usize]);
                    self.invalidate_agent(a, line, t);
                    count += 1;
                }
                for x in 0..self.llc.len() {
                    if x != node
                        && self.llc[x]
                            .as_mut()
                            .is_some_and(|c| c.invalidate(line).is_some())
                    {
                        far = far.max(self.m.route_ps[node][x]);
                        count += 1;
                    }
                }
                if count > 0 {
                    inv_lat = self.c2c_ps + far;
                    self.stats.count_invalidations(count, t);
                }
            }
            let llc_hit = self.llc[node]
                .as_mut()
                .is_some_and(|c| c.probe(line, false));
            if llc_hit {
                lat = self.llc_ps[node];
                served = Served::Llc;
                if write {
                    // The core takes the line modified; the LLC copy would be stale.
                    if let Some(c) = self.llc[node].as_mut() {
                        c.invalidate(line);
                    }
                }
            } else {
                lat = self
                    .mem
                    .memory_read(self.m, &mut self.stats, node, home, line, t);
                served = if home == node {
                    Served::LocalMem
                } else {
                    Served::RemoteMem
                };
                if !write {
                    self.fill_llc(node, line, false, t);
                }
            }
            lat = lat.max(inv_lat);
            let e = self.dir.entry(line);
            if write {
                e.sharers = Agents::one(me);
                e.owner = me as u16;
            } else {
                e.sharers.insert(me);
                if e.owner == me as u16 {
                    e.owner = NO_AGENT;
                }
            }
        }
        if write {
            self.note_write(core, line, off, end);
        }
        self.fill_private(core, line, write, nlev, instr, t);
        (lat, served)
    }

    /// A write to a clean private copy: invalidate every other copy.
    pub(super) fn upgrade(&mut self, core: usize, line: u64, t: u64) -> u64 {
        let node = self.cores[core].node as usize;
        let ent = self.dir.copied(line);
        let mut far = 0;
        let mut count = 0;
        for a in ent.sharers.iter().filter(|&a| a != core) {
            far = far.max(self.m.route_ps[node][self.cores[a].node as usize]);
            self.invalidate_agent(a, line, t);
            count += 1;
        }
        for x in 0..self.llc.len() {
            let Some(c) = self.llc[x].as_mut() else {
                continue;
            };
            // The own node's LLC copy goes stale silently; others are invalidations.
            if c.invalidate(line).is_some() && x != node {
                far = far.max(self.m.route_ps[node][x]);
                count += 1;
            }
        }
        let mut lat = 0;
        if count > 0 {
            lat = self.c2c_ps + far;
            self.stats.counters.upgrades += 1;
            self.stats.count_invalidations(count, t);
        }
        let e = self.dir.entry(line);
        e.sharers = Agents::one(core);
        e.owner = core as u16;
        lat
    }

    /// Tracks written bytes per line to detect false sharing: a write by a
    /// different core than the last writer, to bytes the last writer did not
    /// write, marks the line falsely shared.
    pub(super) fn note_write(&mut self, core: usize, line: u64, off: u64, end: u64) {
        let shift = self.mask_shift;
        let lo = off >> shift;
        let hi = ((end - 1) >> shift).min(63);
        let mask = if hi - lo == 63 {
            u64::MAX
        } else {
            ((1u64 << (hi - lo + 1)) - 1) << lo
        };
        let e = self.dir.entry(line);
        if e.last_writer == core as u16 {
            e.write_mask |= mask;
        } else {
            if e.last_writer != NO_AGENT && e.write_mask & mask == 0 {
                self.stats.counters.false_sharing_events += 1;
                self.false_shared.insert(line, ());
            }
            e.last_writer = core as u16;
            e.write_mask = mask;
        }
    }

    /// Removes `line` from a core's private levels. The directory entry is
    /// the caller's: every caller is a write that then makes the writer the
    /// line's only sharer and owner.
    pub(super) fn invalidate_agent(&mut self, agent: usize, line: u64, _t: u64) {
        let cs = &mut self.cores[agent];
        if cs.last_line == line {
            cs.last_line = NO_LINE;
        }
        if cs.last_iline == line {
            cs.last_iline = NO_LINE;
        }
        for c in cs.levels.iter_mut() {
            c.invalidate(line);
        }
        if let Some(c) = cs.l1i.as_mut().filter(|_| cs.l1i_filled) {
            c.invalidate(line);
        }
        for k in 0..self.pf.len() {
            self.prefetch_lost(k, agent, line);
        }
    }

    /// Drops a directory entry no core holds (unless it carries false-sharing history).
    pub(super) fn forget_if_unheld(&mut self, line: u64) {
        if let Some(e) = self.dir.get(line)
            && e.sharers.is_empty()
            && e.owner == NO_AGENT
            && (self.false_shared.is_empty() || !self.false_shared.contains_key(&line))
        {
            self.dir.remove(line);
        }
    }

    /// Fills `line` into the private levels above `below` (all levels for a
    /// miss), handling evictions. The caller has probed those levels and
    /// missed in each.
    pub(super) fn fill_private(
        &mut self,
        core: usize,
        line: u64,
        write: bool,
        below: usize,
        instr: bool,
        t: u64,
    ) {
        let nlev = self.cores[core].levels.len();
        // Lower levels first, so inclusion holds while upper levels fill.
        for i in (1..below.min(nlev)).rev() {
            let v = self.cores[core].levels[i].fill_absent(line, false);
            if let Some(v) = v {
                self.evicted_private(core, i, v.block, v.dirty, t);
            }
        }
        if instr && self.cores[core].l1i.is_some() {
            self.cores[core].l1i_filled = true;
            let c = self.cores[core].l1i.as_mut().expect("l1i present");
            c.fill(line, false);
            // An L1I victim is clean and still in the levels below: nothing to do.
            if nlev == 0 {
                self.dir.entry(line).sharers.insert(core);
            }
        } else if nlev > 0 && below > 0 {
            let v = self.cores[core].levels[0].fill_absent(line, write);
            if let Some(v) = v {
                self.evicted_private(core, 0, v.block, v.dirty, t);
            }
        } else if nlev > 0 && write {
            self.cores[core].levels[0].fill(line, true);
        }
        if nlev == 0 && self.cores[core].l1i.is_none() {
            // No private caches: the core holds nothing.
            let mut wrote = false;
            if let Some(e) = self.dir.get_mut(line) {
                e.sharers.remove(core);
                if e.owner as usize == core {
                    e.owner = NO_AGENT;
                    wrote = write;
                }
            }
            if wrote {
                let node = self.cores[core].node as usize;
                self.fill_llc_or_memory(node, line, true, t);
            }
            self.forget_if_unheld(line);
        }
    }

    /// A line left private level `i` of `core`.
    pub(super) fn evicted_private(
        &mut self,
        core: usize,
        i: usize,
        block: u64,
        dirty: bool,
        t: u64,
    ) {
        for k in 0..self.pf.len() {
            if self.pf[k].level == i {
                self.prefetch_evicted(k, core, block, t);
            }
        }
        let nlev = self.cores[core].levels.len();
        if i + 1 < nlev {
            // Not the last level: a dirty victim is written into the level below.
            if dirty {
                let v = self.cores[core].levels[i + 1].fill(block, true);
                if let Some(v) = v {
                    self.evicted_private(core, i + 1, v.block, v.dirty, t);
                }
            }
            return;
        }
        // Last private level: back-invalidate the levels above (inclusion).
        let mut dirty = dirty;
        {
            let cs = &mut self.cores[core];
            for c in cs.levels[..i].iter_mut() {
                if let Some(d) = c.invalidate(block) {
                    dirty |= d;
                }
            }
            if cs.last_line == block {
                cs.last_line = NO_LINE;
            }
            if let Some(c) = cs.l1i.as_mut().filter(|_| cs.l1i_filled) {
                c.invalidate(block);
            }
            if cs.last_iline == block {
                cs.last_iline = NO_LINE;
            }
        }
        let fs = &self.false_shared;
        self.dir
            .release(block, core, |l| !fs.is_empty() && fs.contains_key(&l));
        if dirty {
            let node = self.cores[core].node as usize;
            self.fill_llc_or_memory(node, block, true, t);
        }
    }

    pub(super) fn fill_llc_or_memory(&mut self, node: usize, line: u64, dirty: bool, t: u64) {
        if self.llc[node].is_some() {
            self.fill_llc(node, line, dirty, t);
        } else if dirty {
            self.mem.write_back(self.m, &mut self.stats, node, line, t);
        }
    }

    /// Puts a line into a node's LLC, handling the victim.
    pub(super) fn fill_llc(&mut self, node: usize, line: u64, dirty: bool, t: u64) {
        let Some(c) = self.llc[node].as_mut() else {
            return;
        };
        if let Some(v) = c.fill(line, dirty)
            && v.dirty
        {
            self.mem
                .write_back(self.m, &mut self.stats, node, v.block, t);
        }
    }
}
