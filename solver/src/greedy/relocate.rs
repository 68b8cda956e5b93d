//! Relocation: a pod left over gets a node where it is feasible but lacks room by moving one
//! pod of another class (placed by this solve, or one of the problem's movable initial pods)
//! to that class's best other node that can take it.
//!
//! Input: the solver's state after the greedy pass. Output: the same state with more pods
//! placed; a moved pod stays placed, and both pods keep their classes' `ScheduleAnyway`
//! terms within `maxSkew`. The helpers of a move live here too and serve the later passes
//! (evening out, substitution, trading): which classes may move ([`State::movable`]), whether
//! pods fit once others leave ([`State::fits_after`]), and moving a placed pod
//! ([`State::move_placed`]).
//!
//! Upstream counterpart: none (kube-scheduler never moves a pod to make room; its
//! preemption evicts lower priorities instead).

use std::cmp::Reverse;
use std::collections::BTreeSet;

use super::{Placed, State};

/// Where [`State::destinations`] of a class stands: every node before `pos` in the class's
/// static ranking that can take a pod of it is in `takers`, apart from nodes changed since
/// entry `seen` of [`State::changes`].
#[derive(Clone)]
pub(super) struct DestScan {
    pos: usize,
    seen: usize,
    /// `(Reverse(static score), node)`: ranking order.
    takers: BTreeSet<(Reverse<i64>, usize)>,
}

/// The most `classes × nodes` entries of static rankings [`State`] keeps (beyond it a
/// relocation sorts the nodes afresh).
const RANKED_CELLS: usize = 1 << 24;

impl State<'_, '_> {
    /// One relocation for an unplaced pod of class `c`: on a node where it lacks room, move one
    /// pod of another class placed by this solve to a node that can take it, if that makes
    /// room. Targets are tried by static score (highest first); the moved pod goes to its
    /// class's best other node by static score. Both keep their classes' `ScheduleAnyway`
    /// terms within `maxSkew` (a pod the queue could not place is not worth a crowded zone).
    /// Returns whether a pod of `c` was placed.
    pub(super) fn relocate_one(&mut self, c: usize) -> bool {
        if self.topo.has_hard_rules(c) {
            return false;
        }
        let n_classes = self.problem.classes.len();
        let movable: Vec<bool> = (0..n_classes).map(|c2| c2 != c && self.movable(c2)).collect();
        // The two best destinations of each class by static score, for the moved pod, worked
        // out when first needed (nothing changes before the move that ends the call).
        let mut dest: Vec<Option<[Option<usize>; 2]>> = vec![None; n_classes];
        let ranked = self.ranked_nodes(c);
        let mut placed = false;
        'targets: for &n in &ranked {
            let cell = self.cell(c, n);
            if !self.problem.feasible[cell]
                || self.count[cell] >= self.limit(c)
                || self.is_blocked(c, n)
                || !self.topo.soft_spread_allows(c, n)
            {
                continue;
            }
            for c2 in 0..n_classes {
                if !movable[c2] || self.count[self.cell(c2, n)] == 0 {
                    continue;
                }
                let d = match dest[c2] {
                    Some(d) => d,
                    None => *dest[c2].insert(self.destinations(c2)),
                };
                let to = match d {
                    [Some(a), _] if a != n => a,
                    [_, Some(b)] if b != n => b,
                    _ => continue,
                };
                if !self.room_after(c, n, c2) || !self.move_keeps_soft_spread(c, n, c2, to) {
                    continue;
                }
                self.move_pod(c2, n, to);
                self.place(c, n);
                placed = true;
                break 'targets;
            }
        }
        self.keep_ranked(c, ranked);
        placed
    }

    /// Whether pods of class `c` placed by this solve may move (relocation, evening out): the
    /// class has no conflict and no hard inter-pod rule, and counts in no counter a hard rule
    /// reads, so no hard decision depends on where its pods are.
    pub(super) fn movable(&self, c: usize) -> bool {
        self.touching[c].is_empty()
            && !self.topo.has_hard_rules(c)
            && !self.topo.counted_by_hard_rule(c)
    }

    /// Whether a pod of class `c` fits on `node` once a pod of class `leaving` has left it
    /// (every resource `c` requests).
    pub(super) fn room_after(&self, c: usize, node: usize, leaving: usize) -> bool {
        self.fits_after(node, &[c], &[leaving])
    }

    /// Whether pods of the classes `coming` fit on `node` together once pods of the classes
    /// `leaving` have left it: every resource they request, summed, within the node's free
    /// amount plus what the leaving pods free.
    pub(super) fn fits_after(&self, node: usize, coming: &[usize], leaving: &[usize]) -> bool {
        let free = self.free_of(node);
        (0..self.problem.resources).all(|r| {
            let want: i64 = coming.iter().map(|&c| self.req(c)[r]).sum();
            let freed = leaving.iter().fold(free[r], |f, &l| f.saturating_add(self.req(l)[r]));
            want == 0 || want <= freed
        })
    }

    /// Whether moving a pod of class `c2` from `n` to `to` keeps `c2`'s `ScheduleAnyway` terms
    /// within `maxSkew` on `to`, and `c`'s on `n` once the move is done (the counts are moved
    /// for the check and moved back).
    fn move_keeps_soft_spread(&mut self, c: usize, n: usize, c2: usize, to: usize) -> bool {
        if !self.topo.has_soft_spread(c) && !self.topo.has_soft_spread(c2) {
            return true;
        }
        self.topo.update(c2, n, false);
        let mut ok = self.topo.soft_spread_allows(c2, to);
        self.topo.update(c2, to, true);
        ok = ok && self.topo.soft_spread_allows(c, n);
        self.topo.update(c2, to, false);
        self.topo.update(c2, n, true);
        ok
    }

    /// The first two nodes of class `c`'s static ranking that can take a pod of it now (a class
    /// without conflicts or hard inter-pod rules, whose verdict on a node changes only with that
    /// node). Kept across calls ([`DestScan`]): the ranking is walked once per solve, and
    /// only the nodes changed since the last call are looked at again.
    fn destinations(&mut self, c: usize) -> [Option<usize>; 2] {
        let ranked = self.ranked_nodes(c);
        if self.plain {
            let mut takers = ranked.iter().copied().filter(|&n| self.can_take(c, n));
            let d = [takers.next(), takers.next()];
            self.keep_ranked(c, ranked);
            return d;
        }
        let logged = self.changes.len();
        let mut scan = self.dest_scan[c].take().unwrap_or(DestScan {
            pos: 0,
            seen: logged,
            takers: BTreeSet::new(),
        });
        let key = |n: usize| (Reverse(i64::from(self.problem.score[self.cell(c, n)])), n);
        for &n in &self.changes[scan.seen..] {
            if ranked.get(scan.pos).is_some_and(|&p| key(n) >= key(p)) {
                continue; // Not walked yet.
            }
            if self.can_take(c, n) {
                scan.takers.insert(key(n));
            } else {
                scan.takers.remove(&key(n));
            }
        }
        scan.seen = logged;
        while scan.takers.len() < 2 && scan.pos < ranked.len() {
            let n = ranked[scan.pos];
            if self.can_take(c, n) {
                scan.takers.insert(key(n));
            }
            scan.pos += 1;
        }
        let mut first = scan.takers.iter().map(|&(_, n)| n);
        let d = [first.next(), first.next()];
        self.dest_scan[c] = Some(scan);
        self.keep_ranked(c, ranked);
        d
    }

    /// Every node by class `c`'s static score, best first, ties by lowest index: the cached
    /// ranking (taken out of the cache; give it back with [`State::keep_ranked`]) or a fresh
    /// sort.
    pub(super) fn ranked_nodes(&mut self, c: usize) -> Vec<usize> {
        if let Some(ranked) = self.ranked[c].take() {
            self.ranked_cells -= ranked.len();
            return ranked;
        }
        let mut ranked: Vec<usize> = (0..self.problem.nodes).collect();
        ranked.sort_by_key(|&n| (Reverse(self.problem.score[self.cell(c, n)]), n));
        ranked
    }

    /// Caches class `c`'s ranking from [`State::ranked_nodes`] while the cache has room.
    pub(super) fn keep_ranked(&mut self, c: usize, ranked: Vec<usize>) {
        if self.ranked[c].is_none() && self.ranked_cells + ranked.len() <= RANKED_CELLS {
            self.ranked_cells += ranked.len();
            self.ranked[c] = Some(ranked);
        }
    }

    /// Moves one pod of class `c` from `from` to `to`: the latest such placement of this
    /// solve, else an initial pod.
    fn move_pod(&mut self, c: usize, from: usize, to: usize) {
        let is_it = |p: &Placed| p.class == c && p.node == from;
        if let Some(i) = self.placements.iter().rposition(is_it) {
            self.move_placed(i, to);
            return;
        }
        self.adjust(c, from, false);
        self.adjust(c, to, true);
        if let Some(p) = self.initial.iter_mut().rev().find(|p| is_it(p)) {
            p.node = to;
        }
        if let Some(r) = self.rescore.as_mut() {
            r.removed(c, from);
            r.placed(c, to);
        }
    }

    /// Moves placement `i` of this solve to `to`.
    pub(super) fn move_placed(&mut self, i: usize, to: usize) {
        let Placed { class: c, node: from } = self.placements[i];
        self.adjust(c, from, false);
        self.adjust(c, to, true);
        self.placements[i].node = to;
        if let Some(r) = self.rescore.as_mut() {
            r.removed(c, from);
            r.placed(c, to);
        }
    }
}
