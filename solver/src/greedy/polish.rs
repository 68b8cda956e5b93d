//! Evening out `ScheduleAnyway` spread after the greedy: the last step of a solve.
//!
//! Input: the solver's state after the greedy pass and relocation. Output: the same pods on
//! the same number of nodes per class, some of them moved, so that the counters only
//! `ScheduleAnyway` terms read (a workload's replicas per zone and per node, kube-scheduler's
//! default spreading among them) are more even.
//!
//! The greedy, like kube-scheduler, scores each placement once, as the pod comes; with the
//! whole plan in hand the solver can do better. A step moves a pod of the most skewed counter
//! from one of its fullest domains to a domain holding at least two fewer, onto a node that
//! can take it; where such a node lacks room, a pod of another workload first leaves that
//! node, for the node the first pod leaves (a swap) or another node with room for it, or, where
//! one pod leaving is not enough, two pods leave it the same way (one pod traded for two). A step
//! is taken only if no counter's skew grows and the counters' summed skew, or else their
//! summed squared counts, falls; or if their summed skew beyond their `maxSkew` falls and each
//! counter whose skew grows stays within its own `maxSkew` and [`SHARED_SKEW`] (a workload
//! piled into the zone with surplus room passes some of it to workloads spread evenly). So the
//! pass ends. Only pods placed by this solve move, and
//! only those whose classes have no hard inter-pod rule or conflict and count in no counter
//! a hard rule reads (as relocation's): no hard decision depends on where they are. The pods
//! placed do not change, and every move keeps feasibility, capacity and per-node limits.
//!
//! Counters only weight-0 terms read (tie-breaks: a workload whose own constraints do not
//! spread it over nodes, spread over them all the same) are left out of every pass but the
//! solve's last, which evens out only them, with a smaller budget; its steps follow the same
//! rule, checked against every counter. Room its moves join is offered to the pods left over
//! where no spread counter's maximum rises, the others are evened out again, and room still
//! free goes to them anywhere before a last evening out (see `greedy.rs`).
//!
//! Upstream counterpart: none (PodTopologySpread's score steers each pod of kube-scheduler's
//! queue as it comes; it never revisits a placement).

use std::cmp::Reverse;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::State;

/// The most elementary checks (a pod against a node, or against a pod to swap with) one pass
/// may spend; past it the spread stays as even as the pass got it.
const POLISH_WORK: u64 = 1 << 24;

/// The work the tie-break counters ([`crate::topology::TopologyState::is_tie_break`]) get once
/// the others are even: they come last, with a quarter of a pass.
const TIE_BREAK_WORK: u64 = POLISH_WORK / 4;

/// What one check of a step's effect on the counters costs against [`POLISH_WORK`] (it moves
/// the counts there and back).
const EVEN_CHECK: u64 = 16;

/// How many nodes besides the one the first pod leaves each pod of a two-pod exchange tries
/// ([`State::make_room_for_two`]).
const PAIR_TAKERS: usize = 3;

/// The skew up to which a step may raise a counter's to bring another's down towards its
/// `maxSkew` (and never past the raised counter's own `maxSkew`): one pod more than an even
/// split in one domain and one fewer in another.
pub(crate) const SHARED_SKEW: u64 = 2;

/// One pod's move in a step: `(class, from, to)`.
type Move = (usize, usize, usize);

/// The pass's working data.
struct Polish {
    /// The counters evened out, the movable classes, their placements per node, and the
    /// nodes per domain (the placements per node kept up to date as pods move).
    index: SpreadIndex,
    /// Checks left.
    work: u64,
    /// Per class, the nodes that can take one of its pods now, best static score first
    /// (worked out when first needed after the last step).
    takers: BTreeMap<usize, Rc<Vec<usize>>>,
    /// `(class, from, class, node)`: the pod of the second class on the node was tried as
    /// the one to move on, for a pod of the first class on `from`, since the last step.
    pushed: BTreeSet<(usize, usize, usize, usize)>,
}

/// What the spread passes (evening out, substituting) read: which counters they even out,
/// which classes may move, each node's placements of those classes, and each topology's nodes
/// per domain.
pub(super) struct SpreadIndex {
    /// Per counter: whether the pass evens it out.
    pub(super) soft: Vec<bool>,
    /// Per class: whether its placed pods may move ([`State::movable`]).
    pub(super) movable: Vec<bool>,
    /// Per node: indices into the state's placements of its movable pods.
    pub(super) on_node: Vec<Vec<usize>>,
    /// Per topology of a counter: per domain id, its nodes.
    pub(super) in_domain: BTreeMap<usize, Vec<Vec<usize>>>,
}

impl State<'_, '_> {
    /// The [`SpreadIndex`] of the present state for the `ScheduleAnyway` counters `counters`.
    pub(super) fn spread_index(&self, counters: &[usize]) -> SpreadIndex {
        let nodes = self.problem.nodes;
        let mut soft = vec![false; self.problem.inter_pod.counters.len()];
        for &k in counters {
            soft[k] = true;
        }
        let movable: Vec<bool> = (0..self.problem.classes.len()).map(|c| self.movable(c)).collect();
        let mut on_node = vec![Vec::new(); nodes];
        for (i, p) in self.placements.iter().enumerate() {
            if movable[p.class] {
                on_node[p.node].push(i);
            }
        }
        let mut in_domain: BTreeMap<usize, Vec<Vec<usize>>> = BTreeMap::new();
        for &k in counters {
            let t = self.topo.topology_of(k);
            in_domain.entry(t).or_insert_with(|| {
                let mut by = vec![Vec::new(); nodes];
                for n in 0..nodes {
                    if let Some(list) = by.get_mut(self.topo.domain_of(t, n) as usize) {
                        list.push(n);
                    }
                }
                by
            });
        }
        SpreadIndex { soft, movable, on_node, in_domain }
    }

    /// Evens out the `ScheduleAnyway` counters (see the module doc): the tie-breaks alone with
    /// `tie_break_phase` (the solve's last evening out), else all the others. Returns whether
    /// a pod moved.
    pub(super) fn even_spread(&mut self, tie_break_phase: bool) -> bool {
        let counters = self.topo.soft_spread_counters();
        if counters.is_empty()
            || self.placements.is_empty()
            || (tie_break_phase && !counters.iter().any(|&k| self.topo.is_tie_break(k)))
        {
            return false;
        }
        let mut pass = Polish {
            index: self.spread_index(&counters),
            work: POLISH_WORK,
            takers: BTreeMap::new(),
            pushed: BTreeSet::new(),
        };
        let (tie_breaks, others): (Vec<usize>, Vec<usize>) =
            counters.iter().partition(|&&k| self.topo.is_tie_break(k));
        if tie_break_phase {
            // Every step is checked against all the counters.
            pass.work = TIE_BREAK_WORK;
            self.even_counters(&tie_breaks, &mut pass)
        } else {
            // As if the tie-breaks were not there.
            for &k in &tie_breaks {
                pass.index.soft[k] = false;
            }
            self.even_counters(&others, &mut pass)
        }
    }

    /// Steps on the most skewed of `counters` first, round after round, until no step is
    /// left or the pass's work is spent. Every step is checked against all the pass's counters.
    fn even_counters(&mut self, counters: &[usize], pass: &mut Polish) -> bool {
        let mut moved = false;
        loop {
            let mut skewed: Vec<(u64, usize)> = counters
                .iter()
                .map(|&k| (self.topo.imbalance(k).0, k))
                .filter(|&(skew, _)| skew >= 2)
                .collect();
            skewed.sort_unstable_by_key(|&(skew, k)| (Reverse(skew), k));
            let mut stepped = false;
            for (_, k) in skewed {
                while pass.work > 0 && self.even_step(k, pass) {
                    stepped = true;
                }
            }
            moved |= stepped;
            if !stepped || pass.work == 0 {
                return moved;
            }
        }
    }

    /// One step for counter `k`: one of its pods moves from a fullest domain to a domain
    /// holding at least two fewer (room made first where needed). Returns whether it moved.
    fn even_step(&mut self, k: usize, pass: &mut Polish) -> bool {
        let t = self.topo.topology_of(k);
        let domains = self.topo.eligible_counts(k);
        let Some(max) = domains.iter().map(|&(_, v)| v).max() else { return false };
        let mut emptier: Vec<(u32, u32)> =
            domains.iter().filter(|&&(_, v)| v + 2 <= max).map(|&(d, v)| (v, d)).collect();
        if emptier.is_empty() {
            return false;
        }
        emptier.sort_unstable();
        let Some(in_domain) = pass.index.in_domain.get(&t) else { return false };
        let fullest: Vec<usize> = domains
            .iter()
            .filter(|&&(_, v)| v == max)
            .flat_map(|&(d, _)| in_domain[d as usize].iter().copied())
            .filter(|&n| self.topo.counts_on(k, n))
            .collect();
        let targets: Vec<usize> =
            emptier.iter().flat_map(|&(_, d)| in_domain[d as usize].iter().copied()).collect();
        for from in fullest {
            // Pods of one class on one node fare alike: each class is tried once per node.
            let mut tried: Vec<usize> = Vec::new();
            for slot in 0..pass.index.on_node[from].len() {
                let i = pass.index.on_node[from][slot];
                let c = self.placements[i].class;
                if !self.topo.counters_of(c).contains(&k) || tried.contains(&c) {
                    continue;
                }
                tried.push(c);
                if let Some(to) = self.move_target(c, from, &targets, pass) {
                    self.move_placement(i, to, pass);
                    return true;
                }
                if let Some((j, next)) = self.make_room(c, from, &targets, pass) {
                    let to = self.placements[j].node;
                    self.move_placement(j, next, pass);
                    self.move_placement(i, to, pass);
                    return true;
                }
                if let Some(partners) = self.make_room_for_two(c, from, &targets, pass) {
                    let to = self.placements[partners[0].0].node;
                    for (j, next) in partners {
                        self.move_placement(j, next, pass);
                    }
                    self.move_placement(i, to, pass);
                    return true;
                }
                if pass.work == 0 {
                    return false;
                }
            }
        }
        false
    }

    /// The best node by static score among `targets` that can take a pod of class `c` now and
    /// to which moving it from `from` evens the spread out.
    fn move_target(
        &mut self,
        c: usize,
        from: usize,
        targets: &[usize],
        pass: &mut Polish,
    ) -> Option<usize> {
        let mut takers: Vec<usize> = Vec::new();
        for &to in targets {
            pass.work = pass.work.saturating_sub(1);
            if to != from && self.can_take(c, to) {
                takers.push(to);
            }
        }
        takers.sort_by_key(|&n| (Reverse(self.problem.score[self.cell(c, n)]), n));
        takers.into_iter().find(|&to| {
            pass.work = pass.work.saturating_sub(EVEN_CHECK);
            self.evens_out(&[(c, from, to)], &pass.index.soft)
        })
    }

    /// A movable pod of another class on one of `targets` that makes room there for a pod of
    /// class `c` on `from` so that the spread evens out: it trades nodes with that pod (each
    /// fits where the other leaves), or it moves on to another node that can take it (best
    /// static score first). Returns the pod and where it goes.
    fn make_room(
        &mut self,
        c: usize,
        from: usize,
        targets: &[usize],
        pass: &mut Polish,
    ) -> Option<(usize, usize)> {
        for &to in targets {
            if to == from
                || !self.problem.feasible[self.cell(c, to)]
                || self.count[self.cell(c, to)] >= self.limit(c)
            {
                continue;
            }
            for slot in 0..pass.index.on_node[to].len() {
                pass.work = pass.work.saturating_sub(1);
                let j = pass.index.on_node[to][slot];
                let c2 = self.placements[j].class;
                if c2 == c || !pass.index.movable[c2] || !self.room_after(c, to, c2) {
                    continue;
                }
                pass.work = pass.work.saturating_sub(EVEN_CHECK);
                if self.problem.feasible[self.cell(c2, from)]
                    && self.count[self.cell(c2, from)] < self.limit(c2)
                    && self.room_after(c2, from, c)
                    && self.evens_out(&[(c2, to, from), (c, from, to)], &pass.index.soft)
                {
                    return Some((j, from));
                }
                if !pass.pushed.insert((c, from, c2, to)) {
                    continue; // Another pod of the class on this node fared no better.
                }
                let takers = self.takers(c2, pass);
                for &next in takers.iter() {
                    pass.work = pass.work.saturating_sub(1);
                    if next == to
                        || next == from
                        || !self.topo.counters_of(c2).iter().all(|&k2| {
                            !pass.index.soft[k2] || self.topo.move_within_extremes(k2, to, next)
                        })
                    {
                        continue;
                    }
                    pass.work = pass.work.saturating_sub(EVEN_CHECK);
                    if self.evens_out(&[(c2, to, next), (c, from, to)], &pass.index.soft) {
                        return Some((j, next));
                    }
                }
            }
            if pass.work == 0 {
                return None;
            }
        }
        None
    }

    /// Room on one of `targets` for a pod of class `c` from `from`, made by two movable pods
    /// of other classes leaving it where neither alone would do (one large pod traded for two
    /// smaller ones, say): each goes to `from` or to one of the first [`PAIR_TAKERS`] other
    /// nodes that can take it, and the spread must even out. Returns the two pods and where
    /// each goes.
    fn make_room_for_two(
        &mut self,
        c: usize,
        from: usize,
        targets: &[usize],
        pass: &mut Polish,
    ) -> Option<[(usize, usize); 2]> {
        for &to in targets {
            if to == from
                || !self.problem.feasible[self.cell(c, to)]
                || self.count[self.cell(c, to)] >= self.limit(c)
            {
                continue;
            }
            // Pods of one class on one node fare alike: two per class are enough.
            let mut partners: Vec<(usize, usize)> = Vec::new();
            for &j in &pass.index.on_node[to] {
                let c2 = self.placements[j].class;
                if c2 != c
                    && pass.index.movable[c2]
                    && partners.iter().filter(|&&(_, x)| x == c2).count() < 2
                {
                    partners.push((j, c2));
                }
            }
            let mut tried: Vec<(usize, usize)> = Vec::new();
            let mut dests: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            for a in 0..partners.len() {
                for &(j3, c3) in &partners[a + 1..] {
                    pass.work = pass.work.saturating_sub(1);
                    let (j2, c2) = partners[a];
                    let pair = (c2.min(c3), c2.max(c3));
                    if tried.contains(&pair)
                        || self.room_after(c, to, c2)
                        || self.room_after(c, to, c3)
                        || !self.fits_after(to, &[c], &[c2, c3])
                    {
                        continue;
                    }
                    tried.push(pair);
                    for cx in [c2, c3] {
                        if let Entry::Vacant(slot) = dests.entry(cx) {
                            slot.insert(self.pair_destinations(cx, from, to, pass));
                        }
                    }
                    for &n2 in &dests[&c2] {
                        for &n3 in &dests[&c3] {
                            if !self.pair_fits(c, from, [(c2, n2), (c3, n3)]) {
                                continue;
                            }
                            pass.work = pass.work.saturating_sub(EVEN_CHECK);
                            let moves = [(c2, to, n2), (c3, to, n3), (c, from, to)];
                            if self.evens_out(&moves, &pass.index.soft) {
                                return Some([(j2, n2), (j3, n3)]);
                            }
                        }
                    }
                }
            }
            if pass.work == 0 {
                return None;
            }
        }
        None
    }

    /// Where a pod of class `c2` leaving `to` may go in a two-pod exchange: `from`, then the
    /// first [`PAIR_TAKERS`] other nodes that can take it now and to which the move keeps
    /// each of its counters within their extremes.
    fn pair_destinations(
        &mut self,
        c2: usize,
        from: usize,
        to: usize,
        pass: &mut Polish,
    ) -> Vec<usize> {
        let mut dests = Vec::new();
        if self.problem.feasible[self.cell(c2, from)] {
            dests.push(from);
        }
        let takers = self.takers(c2, pass);
        let mut taken = 0;
        for &next in takers.iter() {
            if taken == PAIR_TAKERS {
                break;
            }
            pass.work = pass.work.saturating_sub(1);
            if next != to
                && next != from
                && self
                    .topo
                    .counters_of(c2)
                    .iter()
                    .all(|&k2| !pass.index.soft[k2] || self.topo.move_within_extremes(k2, to, next))
            {
                dests.push(next);
                taken += 1;
            }
        }
        dests
    }

    /// Whether two pods, each moving to its node (`from` once a pod of class `c` has left it,
    /// or a node that could take it alone), fit there together: room and per-node limits.
    fn pair_fits(&self, c: usize, from: usize, moves: [(usize, usize); 2]) -> bool {
        let [(_, n2), (_, n3)] = moves;
        let nodes: &[usize] = if n2 == n3 { &[n2] } else { &[n2, n3] };
        nodes.iter().all(|&node| {
            let coming: Vec<usize> =
                moves.iter().filter(|&&(_, n)| n == node).map(|&(cx, _)| cx).collect();
            let leaving: &[usize] = if node == from { &[c] } else { &[] };
            self.fits_after(node, &coming, leaving)
                && coming.iter().all(|&cx| {
                    let same = coming.iter().filter(|&&x| x == cx).count() as u32;
                    self.count[self.cell(cx, node)] + same <= self.limit(cx)
                })
        })
    }

    /// Whether the moves, made together, even the spread out: they leave no counter of the
    /// pass more skewed and lower the summed skew of the counters they touch, or else their
    /// summed squared counts; or they lower the touched counters' summed skew beyond their
    /// `maxSkew` (their excess), and each counter whose skew grows ends at most at
    /// [`SHARED_SKEW`] and within its own `maxSkew` (a tie-break's may not grow). The counts
    /// are moved for the check and moved back.
    fn evens_out(&mut self, moves: &[Move], soft: &[bool]) -> bool {
        let mut touched: Vec<usize> = moves
            .iter()
            .flat_map(|&(c, _, _)| self.topo.counters_of(c).iter().copied())
            .filter(|&k| soft[k])
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let before: Vec<(u64, u64)> = touched.iter().map(|&k| self.topo.imbalance(k)).collect();
        for &(c, from, to) in moves {
            self.topo.update(c, from, false);
            self.topo.update(c, to, true);
        }
        let after: Vec<(u64, u64)> = touched.iter().map(|&k| self.topo.imbalance(k)).collect();
        for &(c, from, to) in moves.iter().rev() {
            self.topo.update(c, to, false);
            self.topo.update(c, from, true);
        }
        let sum = |v: &[(u64, u64)]| {
            v.iter().fold((0u64, 0u64), |(s, q), &(a, b)| (s + a, q.saturating_add(b)))
        };
        if before.iter().zip(&after).all(|(b, a)| a.0 <= b.0) && sum(&after) < sum(&before) {
            return true;
        }
        let caps: Vec<Option<u64>> =
            touched.iter().map(|&k| self.topo.soft_max_skew(k).map(u64::from)).collect();
        let excess = |v: &[(u64, u64)]| -> u64 {
            v.iter()
                .zip(&caps)
                .map(|(&(skew, _), cap)| cap.map_or(0, |m| skew.saturating_sub(m)))
                .sum()
        };
        before
            .iter()
            .zip(&after)
            .zip(&caps)
            .all(|((b, a), cap)| a.0 <= b.0 || cap.is_some_and(|m| a.0 <= m.min(SHARED_SKEW)))
            && excess(&after) < excess(&before)
    }

    /// Moves placement `i` to node `to` (usage, counts, the callback and the pass's index).
    fn move_placement(&mut self, i: usize, to: usize, pass: &mut Polish) {
        let from = self.placements[i].node;
        self.move_placed(i, to);
        pass.index.on_node[from].retain(|&j| j != i);
        pass.index.on_node[to].push(i);
        pass.takers.clear();
        pass.pushed.clear();
    }

    /// The nodes that can take a pod of class `c` now, best static score first (the class's
    /// static ranking, [`State::ranked_nodes`], filtered).
    fn takers(&mut self, c: usize, pass: &mut Polish) -> Rc<Vec<usize>> {
        if let Some(t) = pass.takers.get(&c) {
            return Rc::clone(t);
        }
        pass.work = pass.work.saturating_sub(self.problem.nodes as u64);
        let ranked = self.ranked_nodes(c);
        let nodes: Vec<usize> = ranked.iter().copied().filter(|&n| self.can_take(c, n)).collect();
        self.keep_ranked(c, ranked);
        let nodes = Rc::new(nodes);
        pass.takers.insert(c, Rc::clone(&nodes));
        nodes
    }
}
