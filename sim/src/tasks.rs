//! The task engine: recorded tasks (requests) dispatched by a scheduler to
//! workers pinned on cores, each task's accesses run through the timing
//! engine's memory system — private caches, the MESI directory, LLCs,
//! channels, links, page placement.
//!
//! **What runs.** A worker is a thread pinned to a core with a FIFO queue.
//! At each task's arrival the [`Scheduler`] (the request model's trait and
//! registry) picks a worker from what a real dispatcher could see then:
//! queue lengths, averaged busy time, the memory time of the worker's
//! completed tasks, and where a key's data lives as learned from its
//! completed tasks — never a task's own future accesses. A worker runs its
//! tasks in order; a task's accesses issue closed loop on the worker's core
//! (its compute gap, at least one cycle apart, and at most `mlp` misses in
//! flight, as in a trace replay), and it ends when its last access
//! completes. Service time is whatever the memory model makes it: cold
//! caches after a move to another worker, remote memory, invalidations by
//! other workers, channel queues.
//!
//! **Batching** ([`TaskEngine::set_batching`]; by default a batch is one
//! task and costs nothing fixed). As in the request model, an idle worker
//! takes up to `size` queued tasks as one batch. The batch pays its fixed
//! cost once, before its first access. Then its tasks' accesses run in
//! queue order, each task's gaps included, closed loop through one MLP
//! window. Every task of the batch ends when the batch's last access
//! completes.
//!
//! **Background jobs** ([`TaskEngine::set_jobs`]): accesses issued closed
//! loop from a given time on a core that is not a worker's — a periodic
//! sweep beside the service. No scheduler sees them and no record reports
//! them; their reads load the channels and their writes invalidate the
//! workers' copies, as any core's would. Jobs on one core run one after
//! another.
//!
//! **Preload** ([`TaskEngine::set_preload`], [`TaskPreload`]): the
//! request model's preload at line level — at dispatch a policy decides,
//! a preload fires its window before the batch is expected to start and
//! reads the task's lines into the worker node's LLC, and the batch waits
//! for it to land.
//!
//! **Shard moves** ([`TaskEngine::set_moves`], [`Moves`]): at a move a
//! key switches to another worker and a new copy of its data, its state
//! fetched from an object store, before the switch with a warm-up or by
//! the first batch that needs it without one.
//!
//! **Warm-up.** A trace's warm-up records (what the recorded program did
//! before its first task) run untimed on the first worker's core before
//! anything else ([`Engine::warm`]): the tasks meet the caches, directory
//! and pages the program's start-up left. (A move's warm-up is the
//! caller's choice of [`Moves`]' `warm`.) Engines of one machine and
//! policies share a warm-up: [`TaskEngine::warm_state`] runs it once and
//! [`TaskEngine::start_warmed`] gives its state to another engine.
//!
//! **Time.** Picoseconds. Events — a worker's next access, a task's end, an
//! arrival — run in time order; at one time, worker events (in (time,
//! order of scheduling)) come before background jobs' starts, and those
//! before arrivals, so a worker freed at t can take a task arriving at t. Deterministic: no clock, no randomness
//! beyond the scheduler's seed.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use traces::horizon::{HORIZON_NS, HORIZON_PS};
use traces::tasks::{Task, TaskTrace};

use crate::checkpoint::CheckpointError;
use crate::policy::{RequestView, Scheduler, WorkerView};
use crate::signals::Signals;
use crate::timing::Engine;

mod moves;
mod preload;
mod sampled;
mod state;
pub use moves::{Moves, ObjectStore, TaskMove};
pub use preload::{PreloadError, PreloadStats, TaskPreload};
use state::TaskSampling;

/// One finished task (times in ps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskRecord {
    pub task: u32,
    pub key: u32,
    pub worker: u32,
    pub core: u32,
    pub node: u32,
    pub arrival_ps: u64,
    pub start_ps: u64,
    pub end_ps: u64,
    pub accesses: u64,
    /// Of its accesses, those not served by the L1.
    pub misses: u64,
    /// Sum of its compute gaps (ps); a batch's first task also carries
    /// the batch's fixed cost.
    pub compute_ps: u64,
    /// Of its accesses, those memory served (local or remote).
    pub memory_lines: u64,
}

impl TaskRecord {
    pub fn queue_ps(&self) -> u64 {
        self.start_ps - self.arrival_ps
    }
    pub fn service_ps(&self) -> u64 {
        self.end_ps - self.start_ps
    }
    pub fn latency_ps(&self) -> u64 {
        self.end_ps - self.arrival_ps
    }
    /// Whether it missed as the request model counts a request's miss: at
    /// least `share` of its accesses came from memory (what an oracle
    /// preload is told, from a run without preload).
    pub fn missed(&self, share: f64) -> bool {
        missed(self.accesses, self.memory_lines, share)
    }
}

/// Whether a task of `accesses` accesses, `memory_lines` of them served
/// by memory, missed: at least `share` of them (and it has one).
pub fn missed(accesses: u64, memory_lines: u64, share: f64) -> bool {
    accesses > 0 && memory_lines as f64 >= share * accesses as f64
}

/// A task engine that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("no workers: give at least one core")]
    NoWorkers,
    #[error("worker {0}: core {1} does not exist ({2} cores)")]
    NoSuchCore(usize, usize, usize),
    #[error("core {0} is given to two workers")]
    SharedCore(usize),
    #[error("background job {0}: core {1} does not exist ({2} cores)")]
    NoSuchJobCore(usize, usize, usize),
    #[error("background job {0}: core {1} is a worker's")]
    JobOnWorker(usize, usize),
    #[error("shard move {0}: worker {1} does not exist ({2} workers)")]
    NoSuchMoveWorker(usize, usize, usize),
    #[error("the scheduler {0} picked worker {1}, but there are {2}")]
    BadPick(String, usize, usize),
    #[error("task {task}: {field} {ns} ns is past {h}", h = traces::horizon::describe())]
    TimePastHorizon {
        task: u32,
        field: &'static str,
        ns: u64,
    },
    #[error(
        "task {task}: an access would issue or complete at {ns} ns, past {h}",
        ns = ps / 1000,
        h = traces::horizon::describe()
    )]
    ClockPastHorizon { task: u32, ps: u64 },
    #[error(
        "sample {unit}:{period}:{warm}: a unit is at least one task, and unit and warm-up fit in the period (the first unit at task {offset}, below the period)"
    )]
    SampleShape {
        unit: u64,
        period: u64,
        warm: u64,
        offset: u64,
    },
    #[error(
        "sample: bounded warming ({0} functional tasks before each warm-up) is for trace replays; give UNIT:PERIOD[:WARM]"
    )]
    SampleBounded(u64),
    #[error(
        "sample: a sampled task replay runs no background jobs, preload or shard moves (their timing spans the phases warming does not time)"
    )]
    SampleBeside,
    #[error(
        "sample: the trace's tasks hold {units} unit(s), the first at task {offset}; an interval needs at least 2 (shorten the period)"
    )]
    TooFewUnits { units: u64, offset: u64 },
}

impl TaskError {
    /// `--` before an error about the sample, whose message starts with
    /// `sample` (so the command line's flag is named); else empty.
    pub fn flag_prefix(&self) -> &'static str {
        match self {
            TaskError::SampleShape { .. }
            | TaskError::SampleBounded(_)
            | TaskError::SampleBeside
            | TaskError::TooFewUnits { .. } => "--",
            _ => "",
        }
    }
}

/// One task of a running batch (or a background job).
struct Member {
    /// Index into the trace's tasks, or into the jobs on a job core.
    task: usize,
    misses: u64,
    memory_lines: u64,
    compute_ps: u64,
    /// Added to its addresses: its key's move, if it had switched when
    /// the batch started.
    shift: u64,
}

struct Running {
    /// The batch, in queue order.
    batch: Vec<Member>,
    /// The member whose accesses issue now.
    cur: usize,
    /// Its next access.
    next: usize,
    start_ps: u64,
    last_issue_ps: u64,
    started: bool,
    inflight: BinaryHeap<Reverse<u64>>,
    last_done_ps: u64,
    /// The batch's fixed cost (ps), not yet paid.
    fixed_ps: u64,
}

struct Worker {
    core: usize,
    node: u32,
    queue: VecDeque<usize>,
    running: Option<Running>,
    /// What a scheduler sees of it (`crate::signals`, shared with the
    /// request model; one slot per task of a batch).
    signals: Signals,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The worker's task ends (its last access completed).
    Done(usize),
    /// The worker's running task issues its next access.
    Issue(usize),
    /// A preload fires for (worker, trace task).
    Preload(usize, usize),
    /// Shard move i is due.
    Move(usize),
    /// Shard move i's warm-up has landed: traffic switches.
    Switch(usize),
}

/// Runs a task trace on workers through a timing engine.
pub struct TaskEngine<'m> {
    pub engine: Engine<'m>,
    sched: Box<dyn Scheduler>,
    workers: Vec<Worker>,
    /// Per key, the node its last completed task's first data access found
    /// its page on.
    key_node: HashMap<u32, u32>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    /// Tasks a worker takes at once, and a batch's fixed cost (ps).
    batch: usize,
    batch_fixed_ps: u64,
    /// Workers `0..served` take tasks; those after run background jobs.
    served: usize,
    /// Background jobs by start time, with the job worker of each.
    jobs: Vec<Task>,
    job_worker: Vec<usize>,
    preload: Option<TaskPreload>,
    moves: Option<Moves>,
    /// Keys whose home worker a move changed.
    home_of: HashMap<u32, usize>,
    /// The warm-up has run ([`TaskEngine::warm_state`], [`TaskEngine::start_warmed`]).
    warmed: bool,
    /// A sampled run's shape and units (`sampled.rs`).
    sampling: Option<Box<TaskSampling>>,
    /// Time of the last event run (ps).
    clock_ps: u64,
}

/// The task a member runs: a trace's, or (on a job worker) a job.
fn task_of<'a>(trace: &'a TaskTrace, jobs: &'a [Task], job: bool, m: &Member) -> &'a Task {
    if job {
        &jobs[m.task]
    } else {
        &trace.tasks[m.task]
    }
}

impl<'m> TaskEngine<'m> {
    /// Workers on the given cores, in order.
    pub fn new(
        engine: Engine<'m>,
        m: &crate::Machine,
        cores: &[usize],
        sched: Box<dyn Scheduler>,
    ) -> Result<TaskEngine<'m>, TaskError> {
        if cores.is_empty() {
            return Err(TaskError::NoWorkers);
        }
        let n = m.core_node.len();
        let mut used = vec![false; n];
        let mut workers = Vec::new();
        for (i, &c) in cores.iter().enumerate() {
            if c >= n {
                return Err(TaskError::NoSuchCore(i, c, n));
            }
            if std::mem::replace(&mut used[c], true) {
                return Err(TaskError::SharedCore(c));
            }
            workers.push(Worker {
                core: c,
                node: m.core_node[c],
                queue: VecDeque::new(),
                running: None,
                signals: Signals::new(m.core_node[c]),
            });
        }
        Ok(TaskEngine {
            engine,
            sched,
            workers,
            key_node: HashMap::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            batch: 1,
            batch_fixed_ps: 0,
            served: cores.len(),
            jobs: Vec::new(),
            job_worker: Vec::new(),
            preload: None,
            moves: None,
            home_of: HashMap::new(),
            warmed: false,
            sampling: None,
            clock_ps: 0,
        })
    }

    /// Runs `trace`'s warm-up now, as [`TaskEngine::run`] would first, and
    /// returns the engine's state after it ([`Engine::save_state`]).
    pub fn warm_state(&mut self, trace: &TaskTrace) -> Vec<u8> {
        self.engine.warm(self.workers[0].core, &trace.warmup);
        self.warmed = true;
        self.engine.save_state()
    }

    /// Starts from a state [`TaskEngine::warm_state`] returned on an engine
    /// of the same machine, policies, configuration and first worker:
    /// [`TaskEngine::run`] then runs no warm-up, and its results are those
    /// of running it.
    pub fn start_warmed(&mut self, state: &[u8]) -> Result<(), CheckpointError> {
        self.engine.load_state(state)?;
        self.warmed = true;
        Ok(())
    }

    /// Background jobs: `(core, job)` pairs, each job's accesses issued
    /// closed loop on its core from its `arrival_ns`. A job core must exist
    /// and not be a worker's.
    pub fn set_jobs(
        &mut self,
        m: &crate::Machine,
        jobs: Vec<(usize, Task)>,
    ) -> Result<(), TaskError> {
        let n = m.core_node.len();
        // In start order; an error names the job as the caller numbered it.
        let mut jobs: Vec<(usize, (usize, Task))> = jobs.into_iter().enumerate().collect();
        jobs.sort_by_key(|(i, (_, j))| (j.arrival_ns, *i));
        self.workers.truncate(self.served);
        let (mut list, mut at) = (Vec::new(), Vec::new());
        for (i, (core, job)) in jobs {
            if core >= n {
                return Err(TaskError::NoSuchJobCore(i, core, n));
            }
            let w = match self.workers.iter().position(|w| w.core == core) {
                Some(w) if w < self.served => return Err(TaskError::JobOnWorker(i, core)),
                Some(w) => w,
                None => {
                    self.workers.push(Worker {
                        core,
                        node: m.core_node[core],
                        queue: VecDeque::new(),
                        running: None,
                        signals: Signals::new(m.core_node[core]),
                    });
                    self.workers.len() - 1
                }
            };
            list.push(job);
            at.push(w);
        }
        (self.jobs, self.job_worker) = (list, at);
        Ok(())
    }

    /// Workers take up to `size` queued tasks at once (at least one); each
    /// batch costs `fixed_ps` before its first access.
    pub fn set_batching(&mut self, size: usize, fixed_ps: u64) {
        self.batch = size.max(1);
        self.batch_fixed_ps = fixed_ps;
    }

    /// Preload tasks' data as `p` decides (see [`TaskPreload`]).
    pub fn set_preload(&mut self, p: TaskPreload) {
        self.preload = Some(p);
    }

    /// Shard moves (see [`Moves`]); each move's worker must exist.
    pub fn set_moves(&mut self, moves: Moves) -> Result<(), TaskError> {
        for (i, mv) in moves.list.iter().enumerate() {
            if mv.to_worker >= self.served {
                return Err(TaskError::NoSuchMoveWorker(i, mv.to_worker, self.served));
            }
        }
        for i in 0..moves.list.len() {
            self.push(moves.list[i].at_ps, Ev::Move(i));
        }
        self.moves = Some(moves);
        Ok(())
    }

    /// State fetches the moves made, if moves are set.
    pub fn move_fetches(&self) -> Option<u64> {
        self.moves.as_ref().map(|m| m.fetches)
    }

    /// The preload's counts, if one is set.
    pub fn preload_stats(&self) -> Option<PreloadStats> {
        self.preload.as_ref().map(|p| p.stats)
    }

    fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ev)));
    }

    /// Runs every task; `sink` gets each finished task in completion order.
    pub fn run(
        &mut self,
        trace: &TaskTrace,
        mut sink: impl FnMut(&TaskRecord),
    ) -> Result<(), TaskError> {
        self.check_sample(trace)?;
        if !trace.warmup.is_empty() && !self.warmed {
            self.engine.warm(self.workers[0].core, &trace.warmup);
        }
        let (mut next, mut next_job) = (0usize, 0usize);
        loop {
            if let Some(j) = self.jobs.get(next_job) {
                if j.arrival_ns > HORIZON_NS {
                    let (task, ns) = (j.id, j.arrival_ns);
                    let field = "arrival_ns";
                    return Err(TaskError::TimePastHorizon { task, field, ns });
                }
                // Within the horizon: before any u64::MAX below.
                let at = j.arrival_ns * 1000;
                let first = trace
                    .tasks
                    .get(next)
                    .map_or(u64::MAX, |t| t.arrival_ns.saturating_mul(1000));
                let ev = self.heap.peek().map_or(u64::MAX, |Reverse((t, _, _))| *t);
                if at <= first && at < ev {
                    let w = self.job_worker[next_job];
                    self.workers[w].queue.push_back(next_job);
                    next_job += 1;
                    if self.workers[w].running.is_none() {
                        self.start(trace, w, at)?;
                    }
                    continue;
                }
            }
            let arrival = match trace.tasks.get(next) {
                Some(t) if t.arrival_ns > HORIZON_NS => {
                    return Err(TaskError::TimePastHorizon {
                        task: t.id,
                        field: "arrival_ns",
                        ns: t.arrival_ns,
                    });
                }
                Some(t) => Some(t.arrival_ns * 1000),
                None => None,
            };
            let ev = self.heap.peek().map(|Reverse((t, _, _))| *t);
            match (arrival, ev) {
                (Some(a), Some(e)) if e <= a => self.event(trace, &mut sink)?,
                (Some(a), _) => {
                    if !self.sample_warm(trace, next, a, &mut sink)? {
                        // After warming, a detailed stretch starts no
                        // earlier than the drained clock (`sampled.rs`);
                        // otherwise the clock is never past an arrival.
                        self.dispatch(trace, next, a.max(self.clock_ps))?;
                    }
                    next += 1;
                }
                (None, Some(_)) => self.event(trace, &mut sink)?,
                (None, None) => {
                    self.finish_sample();
                    return Ok(());
                }
            }
        }
    }

    fn dispatch(&mut self, trace: &TaskTrace, i: usize, t_ps: u64) -> Result<(), TaskError> {
        let task = &trace.tasks[i];
        let (w, data_node) = self.pick(task, i, t_ps)?;
        let fire_at = self.decide_preload(task, i, w, data_node, t_ps);
        self.workers[w].queue.push_back(i);
        match fire_at {
            Some(at) if at <= t_ps => self.fire_preload(trace, w, i, t_ps),
            Some(at) => self.push(at, Ev::Preload(w, i)),
            None => {}
        }
        if self.workers[w].running.is_none() {
            self.start(trace, w, t_ps)?;
        }
        Ok(())
    }

    /// The worker the scheduler picks for task `i` at `t_ps`, and the node
    /// it believes the task's data lives on.
    /// While a sampled run warms, the queues a dispatcher sees are
    /// warming's (`sampled.rs`).
    fn pick(&mut self, task: &Task, i: usize, t_ps: u64) -> Result<(usize, u32), TaskError> {
        let warming = self.warming_queues(t_ps);
        let views: Vec<WorkerView> = (0..self.served)
            .map(|w| {
                let wk = &self.workers[w];
                let (queued, running) = match &warming {
                    Some(q) => q[w],
                    None => (
                        wk.queue.len(),
                        wk.running.as_ref().map_or(0, |r| r.batch.len()),
                    ),
                };
                let slots = self.batch as u32;
                let mut v = wk.signals.view(w, queued, running, slots, t_ps);
                // While warming, busy is warming's too.
                v.busy |= warming.is_some() && running > 0;
                v
            })
            .collect();
        let home = self
            .home_of
            .get(&task.key)
            .copied()
            .unwrap_or(task.key as usize % self.served);
        let rv = RequestView {
            id: i as u64,
            key: task.key,
            data_node: self
                .key_node
                .get(&task.key)
                .copied()
                .unwrap_or(self.workers[home].node),
            home_worker: home,
            now_ns: t_ps / 1000,
        };
        let w = self.sched.pick(&rv, &views);
        if w >= self.served {
            return Err(TaskError::BadPick(self.sched.name(), w, self.served));
        }
        Ok((w, rv.data_node))
    }

    /// Where `task`'s first data access (moved by `shift`) lives, if placed.
    fn data_node(&self, task: &Task, shift: u64) -> Option<u32> {
        let (a, _) = task.accesses.iter().find(|(a, _)| a.kind.is_data())?;
        self.engine.page_node(a.addr.wrapping_add(shift))
    }

    /// Move `i`'s key switches to its new worker and copy (its state
    /// landed at `landed`, or still to be fetched).
    fn switch(&mut self, i: usize, landed: Option<u64>) {
        let Some(mv) = self.moves.as_mut() else {
            return;
        };
        mv.switch(i, landed);
        let m = mv.list[i];
        self.home_of.insert(m.key, m.to_worker);
        self.key_node.insert(m.key, self.workers[m.to_worker].node);
    }

    /// Whether to preload task `i` joining worker `w` at `t_ps`, and when
    /// to fire: a lead window before its batch is expected to start, not
    /// before now.
    fn decide_preload(
        &mut self,
        task: &Task,
        i: usize,
        w: usize,
        data_node: u32,
        t_ps: u64,
    ) -> Option<u64> {
        let p = self.preload.as_mut()?;
        let wk = &self.workers[w];
        let running = wk.running.as_ref().map(|r| (r.start_ps, r.batch.len()));
        let outstanding = wk.queue.len() + running.map_or(0, |r| r.1);
        let shift = self.moves.as_ref().map_or(0, |m| m.shift_of(task.key));
        let f = p.features(
            &self.engine,
            task,
            (w, wk.node, outstanding),
            (data_node, shift),
        );
        let window = p.decide(i, w, &f)?;
        let start = p.start_estimate(w, t_ps, running.map(|r| r.0), wk.queue.len(), self.batch);
        Some(start.saturating_sub(window).max(t_ps))
    }

    /// Fires task `i`'s preload at `t_ps` if it still waits in worker
    /// `w`'s queue: its lines into the worker node's LLC.
    fn fire_preload(&mut self, trace: &TaskTrace, w: usize, i: usize, t_ps: u64) {
        if !self.workers[w].queue.contains(&i) {
            return;
        }
        let node = self.workers[w].node as usize;
        let shift = self
            .moves
            .as_ref()
            .map_or(0, |m| m.shift_of(trace.tasks[i].key));
        let (mut ready, mut lines) = (t_ps, 0u64);
        for (a, _) in trace.tasks[i]
            .accesses
            .iter()
            .filter(|(a, _)| a.kind.is_data())
        {
            let addr = a.addr.wrapping_add(shift);
            let (at, read) = self.engine.preload_llc(node, addr, t_ps);
            ready = ready.max(at);
            lines += read as u64;
        }
        if let Some(p) = self.preload.as_mut() {
            p.fired(i, ready, lines);
        }
    }

    /// Starts worker `w`'s next batch of queued tasks at `t_ps`.
    fn start(&mut self, trace: &TaskTrace, w: usize, t_ps: u64) -> Result<(), TaskError> {
        let job = w >= self.served;
        let size = if job { 1 } else { self.batch };
        let n = size.min(self.workers[w].queue.len());
        if n == 0 {
            return Ok(());
        }
        let batch = self.workers[w]
            .queue
            .drain(..n)
            .map(|task| Member {
                task,
                misses: 0,
                memory_lines: 0,
                compute_ps: 0,
                shift: 0,
            })
            .collect::<Vec<_>>();
        // Its first access waits for its preloads and decision costs.
        let mut batch = batch;
        let mut ready = match self.preload.as_mut() {
            Some(p) if !job => {
                let members: Vec<usize> = batch.iter().map(|m| m.task).collect();
                p.batch_ready(w, &members, t_ps)
            }
            _ => t_ps,
        };
        // And for a moved key's state (a cold one's fetch starts now).
        if let Some(mv) = self.moves.as_mut().filter(|_| !job) {
            for m in &mut batch {
                let (shift, at) = mv.at_start(trace.tasks[m.task].key, t_ps);
                m.shift = shift;
                ready = ready.max(at);
            }
        }
        self.workers[w].signals.set_busy(true, t_ps);
        self.workers[w].running = Some(Running {
            batch,
            cur: 0,
            next: 0,
            start_ps: t_ps,
            last_issue_ps: ready,
            started: false,
            inflight: BinaryHeap::new(),
            last_done_ps: ready,
            fixed_ps: if job { 0 } else { self.batch_fixed_ps },
        });
        self.schedule_next(trace, w)
    }

    /// Pushes the running task's next access (or its end).
    fn schedule_next(&mut self, trace: &TaskTrace, w: usize) -> Result<(), TaskError> {
        let (cycle, mlp) = (self.engine.cycle_ps(), self.engine.mlp());
        let job = w >= self.served;
        let jobs = &self.jobs;
        let Some(r) = self.workers[w].running.as_mut() else {
            return Ok(());
        };
        // Past the current member's last access: the next member's first.
        while r.next >= task_of(trace, jobs, job, &r.batch[r.cur]).accesses.len()
            && r.cur + 1 < r.batch.len()
        {
            r.cur += 1;
            r.next = 0;
        }
        let m = &mut r.batch[r.cur];
        let t = task_of(trace, jobs, job, m);
        let task = t.id;
        let next = match t.accesses.get(r.next) {
            None => {
                // A batch with no access at all still pays its fixed cost.
                let fixed = std::mem::take(&mut r.fixed_ps);
                m.compute_ps = m.compute_ps.saturating_add(fixed);
                let at = r.last_done_ps.saturating_add(fixed);
                if at > HORIZON_PS {
                    return Err(TaskError::ClockPastHorizon { task, ps: at });
                }
                (at, Ev::Done(w))
            }
            Some(&(_, gap_ns)) => {
                if gap_ns > HORIZON_NS {
                    let (field, ns) = ("gap_ns", gap_ns);
                    return Err(TaskError::TimePastHorizon { task, field, ns });
                }
                // Issue times, completions and gaps are within the
                // horizon; a batch's fixed cost may not be (saturating).
                // The batch's fixed cost rides on its first gap.
                let gap = (gap_ns * 1000).saturating_add(std::mem::take(&mut r.fixed_ps));
                m.compute_ps = m.compute_ps.saturating_add(gap);
                let mut at = if r.started {
                    r.last_issue_ps.saturating_add(gap.max(cycle))
                } else {
                    r.last_issue_ps.saturating_add(gap)
                };
                while r.inflight.peek().is_some_and(|&Reverse(d)| d <= at) {
                    r.inflight.pop();
                }
                if r.inflight.len() >= mlp
                    && let Some(Reverse(d)) = r.inflight.pop()
                {
                    at = at.max(d);
                }
                if at > HORIZON_PS {
                    return Err(TaskError::ClockPastHorizon { task, ps: at });
                }
                (at, Ev::Issue(w))
            }
        };
        self.push(next.0, next.1);
        Ok(())
    }

    fn event(
        &mut self,
        trace: &TaskTrace,
        sink: &mut impl FnMut(&TaskRecord),
    ) -> Result<(), TaskError> {
        let Some(Reverse((t, _, ev))) = self.heap.pop() else {
            return Ok(());
        };
        self.clock_ps = self.clock_ps.max(t);
        match ev {
            Ev::Issue(w) => {
                let core = self.workers[w].core;
                let Some(r) = self.workers[w].running.as_mut() else {
                    return Ok(());
                };
                let tk = task_of(trace, &self.jobs, w >= self.served, &r.batch[r.cur]);
                let task = tk.id;
                let (mut a, _) = tk.accesses[r.next];
                a.addr = a.addr.wrapping_add(r.batch[r.cur].shift);
                r.next += 1;
                r.started = true;
                r.last_issue_ps = t;
                let issued = self.engine.issue_on(core, &a, t, None);
                let done = t.saturating_add(issued.latency_ps);
                if done > HORIZON_PS {
                    return Err(TaskError::ClockPastHorizon { task, ps: done });
                }
                let r = self.workers[w].running.as_mut().expect("running");
                r.last_done_ps = r.last_done_ps.max(done);
                if !issued.l1_hit {
                    r.inflight.push(Reverse(done));
                    r.batch[r.cur].misses += 1;
                }
                r.batch[r.cur].memory_lines += issued.from_memory as u64;
                self.schedule_next(trace, w)
            }
            Ev::Done(w) => {
                self.workers[w].signals.set_busy(false, t);
                let Some(r) = self.workers[w].running.take() else {
                    return Ok(());
                };
                if w >= self.served {
                    // A background job: nothing to report.
                    return self.start(trace, w, t);
                }
                let (core, node) = (self.workers[w].core as u32, self.workers[w].node);
                let mut compute = 0u64;
                for m in &r.batch {
                    let task = &trace.tasks[m.task];
                    compute = compute.saturating_add(m.compute_ps);
                    let rec = TaskRecord {
                        task: task.id,
                        key: task.key,
                        worker: w as u32,
                        core,
                        node,
                        arrival_ps: task.arrival_ns * 1000,
                        start_ps: r.start_ps,
                        end_ps: t,
                        accesses: task.accesses.len() as u64,
                        misses: m.misses,
                        compute_ps: m.compute_ps,
                        memory_lines: m.memory_lines,
                    };
                    if self.measured(m.task, &rec) {
                        sink(&rec);
                    }
                    // Where its key's data lives, now that it has ended
                    // (unless its key has switched to a new copy since).
                    let current = self.moves.as_ref().map_or(0, |mv| mv.shift_of(task.key));
                    if m.shift == current
                        && let Some(node) = self.data_node(task, m.shift)
                    {
                        self.key_node.insert(task.key, node);
                    }
                }
                // What the batch tells a dispatcher, known from its end on:
                // its memory time.
                let mem_ms = (t - r.start_ps).saturating_sub(compute) as f64 / 1e9;
                self.workers[w].signals.stall_known_at(t, mem_ms);
                if let Some(p) = self.preload.as_mut() {
                    let (mut lines, mut memory, mut offsets) = (0u64, 0u64, 0f64);
                    for m in &r.batch {
                        let data = trace.tasks[m.task].accesses.iter();
                        for (a, _) in data.filter(|(a, _)| a.kind.is_data()) {
                            lines += 1;
                            offsets += p.offset(a.addr) as f64;
                        }
                        memory += m.memory_lines;
                    }
                    let mean = if lines == 0 {
                        0.0
                    } else {
                        offsets / lines as f64
                    };
                    p.batch_ended(w, (lines, memory, mean), t - r.start_ps);
                }
                self.start(trace, w, t)
            }
            Ev::Preload(w, i) => {
                self.fire_preload(trace, w, i, t);
                Ok(())
            }
            Ev::Move(i) => {
                let Some(mv) = self.moves.as_mut() else {
                    return Ok(());
                };
                if mv.warm {
                    // The old deployment serves until the state has landed.
                    let done = mv.fetch(t);
                    self.push(done, Ev::Switch(i));
                } else {
                    self.switch(i, None);
                }
                Ok(())
            }
            Ev::Switch(i) => {
                self.switch(i, Some(t));
                Ok(())
            }
        }
    }
}
